//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestExistingCluster runs the whole loop through Metacontroller itself, on a cluster where
// Metacontroller runs and this project is installed (`make deploy`). Metacontroller is not served
// by the module proxy, so this mode needs such a cluster: set E2E_EXISTING_CLUSTER=1 and KUBECONFIG.
// It uses kubectl, as a user of that cluster would.
func TestExistingCluster(t *testing.T) {
	if os.Getenv("E2E_EXISTING_CLUSTER") == "" {
		t.Skip("no existing cluster: set E2E_EXISTING_CLUSTER=1 and KUBECONFIG to a cluster running Metacontroller with `make deploy` applied")
	}
	kubectl := func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("kubectl", args...)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	ns := "webapp-e2e-" + randomHex(3)
	kubectl("", "create", "namespace", ns)
	t.Cleanup(func() { exec.Command("kubectl", "delete", "namespace", ns, "--wait=false").Run() })

	kubectl(`apiVersion: example.com/v1
kind: WebApp
metadata:
  name: hello
spec:
  image: nginx:1.27
  replicas: 2
  port: 80
`, "apply", "-n", ns, "-f", "-")
	kubectl("", "wait", "-n", ns, "webapp/hello", "--for=jsonpath={.status.phase}=Ready", "--timeout=300s")
	for _, kind := range []string{"deployment", "service"} {
		if owner := kubectl("", "get", "-n", ns, kind, "hello", "-o", "jsonpath={.metadata.ownerReferences[0].kind}"); owner != "WebApp" {
			t.Errorf("%s owner = %q; want WebApp", kind, owner)
		}
	}
	if url := kubectl("", "get", "-n", ns, "webapp", "hello", "-o", "jsonpath={.status.url}"); url != "http://hello."+ns+".svc" {
		t.Errorf("status.url = %q", url)
	}

	kubectl("", "patch", "-n", ns, "webapp", "hello", "--type=merge", "-p", `{"spec":{"image":"nginx:1.28"}}`)
	kubectl("", "wait", "-n", ns, "webapp/hello", "--for=jsonpath={.status.observedGeneration}=2", "--timeout=120s")
	kubectl("", "wait", "-n", ns, "webapp/hello", "--for=jsonpath={.status.phase}=Ready", "--timeout=300s")
	if image := kubectl("", "get", "-n", ns, "deployment", "hello", "-o", "jsonpath={.spec.template.spec.containers[0].image}"); image != "nginx:1.28" {
		t.Errorf("Deployment image = %q; want nginx:1.28", image)
	}

	kubectl("", "delete", "-n", ns, "webapp", "hello", "--timeout=300s")
	if left := kubectl("", "get", "-n", ns, "deployments,services", "-o", "name"); left != "" {
		t.Errorf("children left after the WebApp was deleted: %s", left)
	}
}

//go:build e2e

package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// kubectl runs kubectl, built into bin/ with the control plane, against the test apiserver, as a
// user would, and returns its output.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(cluster.kubeconfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(cluster.bin, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// replicasOf is a Deployment's spec.replicas as the apiserver stores it.
func replicasOf(t *testing.T, ns, name string) any {
	t.Helper()
	d, err := client.get("apps/v1", "Deployment", ns, name)
	if err != nil || d == nil {
		t.Fatalf("get Deployment %s/%s: %v", ns, name, err)
	}
	return field(d, "spec", "replicas")
}

// TestAutoscaling runs the hook with the real HorizontalPodAutoscaler controller (which finds no
// metrics API here, and says so) and the real scale subresources: a count the autoscaler sets
// through the Deployment's /scale stays, turning autoscaling off hands the count back to
// spec.replicas, and `kubectl scale webapp` works through the WebApp's own /scale.
func TestAutoscaling(t *testing.T) {
	requireCluster(t)
	ns := client.namespace(t, "autoscaling")
	spec := obj{"image": "nginx:1.27", "replicas": 3, "port": 8080, "resources": obj{"requests": obj{"cpu": "100m"}},
		"autoscaling": obj{"minReplicas": 2, "maxReplicas": 5}}
	if _, err := client.create(webApp(ns, "hello", spec)); err != nil {
		t.Fatal(err)
	}
	reconcile(t, "/sync", ns, "hello")
	if got := replicasOf(t, ns, "hello"); got != float64(2) {
		t.Fatalf("Deployment replicas = %v; want minReplicas, 2, not spec.replicas", got)
	}

	// The autoscaler scales the Deployment through its scale subresource, as the HPA does.
	p, _ := client.path("apps/v1", "Deployment", ns, "hello")
	if _, err := client.do("PATCH", p+"/scale", "application/merge-patch+json", obj{"spec": obj{"replicas": 4}}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		reconcile(t, "/sync", ns, "hello")
		if got := replicasOf(t, ns, "hello"); got != float64(4) {
			t.Fatalf("Deployment replicas = %v after a sync; want the autoscaler's 4, kept", got)
		}
	}

	// The real HPA controller reports that it has no metrics; the WebApp says so.
	var last webappv1.WebAppStatus
	waitFor(t, "the HorizontalPodAutoscaler's report in the WebApp's status", 60*time.Second, func() (bool, error) {
		last = reconcile(t, "/sync", ns, "hello").Status
		for _, c := range last.Conditions {
			if c.Type == webappv1.ConditionAutoscaling && c.Reason != webappv1.ReasonAutoscalerMissing && c.Reason != webappv1.ReasonAutoscalerPending {
				return true, nil
			}
		}
		return false, nil
	})
	t.Logf("with no metrics API: %s", last.Message)
	for _, c := range last.Conditions {
		if c.Type == webappv1.ConditionAutoscaling && (c.Status != "False" || !strings.Contains(last.Message, "cannot scale")) {
			t.Errorf("Autoscaling condition %+v, message %q; want False, saying why it cannot scale", c, last.Message)
		}
	}
	if got := replicasOf(t, ns, "hello"); got != float64(4) {
		t.Errorf("Deployment replicas = %v; want 4, which nobody changed", got)
	}

	// Off: spec.replicas takes over, and the HorizontalPodAutoscaler goes.
	wp, _ := client.path("example.com/v1", "WebApp", ns, "hello")
	if _, err := client.do("PATCH", wp, "application/merge-patch+json", obj{"spec": obj{"autoscaling": nil}}); err != nil {
		t.Fatal(err)
	}
	reconcile(t, "/sync", ns, "hello")
	if got := replicasOf(t, ns, "hello"); got != float64(3) {
		t.Errorf("Deployment replicas = %v after autoscaling was turned off; want spec.replicas, 3", got)
	}
	if hpa, err := client.get("autoscaling/v2", "HorizontalPodAutoscaler", ns, "hello"); err != nil || hpa != nil {
		t.Errorf("HorizontalPodAutoscaler = %v, %v; want it deleted", hpa != nil, err)
	}

	// kubectl scale goes through the WebApp's scale subresource to spec.replicas.
	kubectl(t, "scale", "-n", ns, "webapp/hello", "--replicas=5")
	waitFor(t, "5 replicas through the WebApp's scale subresource", 60*time.Second, func() (bool, error) {
		st := reconcile(t, "/sync", ns, "hello").Status
		return replicasOf(t, ns, "hello") == float64(5) && st.Replicas == 5, nil
	})
	var scale struct {
		Spec   struct{ Replicas int32 }
		Status struct {
			Replicas int32
			Selector string
		}
	}
	raw := kubectl(t, "get", "--raw", "/apis/example.com/v1/namespaces/"+ns+"/webapps/hello/scale")
	if err := json.Unmarshal([]byte(raw), &scale); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if want := "app.kubernetes.io/instance=hello,app.kubernetes.io/managed-by=webapp-hook,app.kubernetes.io/name=webapp"; scale.Spec.Replicas != 5 || scale.Status.Replicas != 5 || scale.Status.Selector != want {
		t.Errorf("WebApp /scale = %+v; want spec and status replicas 5 and the selector %q", scale, want)
	}
}

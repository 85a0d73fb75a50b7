//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// chartDir is the Helm chart, relative to this package.
const chartDir = "../charts/webapp-operator"

// chartOnlyLabels are the labels Helm's conventions add to the chart's objects and the kustomize
// install does not: the only labels by which the two may differ.
var chartOnlyLabels = []string{"app.kubernetes.io/managed-by", "app.kubernetes.io/instance", "app.kubernetes.io/version", "helm.sh/chart"}

// helm runs bin/helm (hack/helm.sh) against the suite's apiserver, with its configuration,
// cache and data in the suite's folder, never the user's, and returns its combined output.
func helm(args ...string) (string, error) {
	dir := filepath.Join(cluster.dir, "helm")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if _, err := os.Stat(kubeconfig); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(kubeconfig, []byte(cluster.kubeconfig()), 0o600); err != nil {
			return "", err
		}
	}
	cmd := exec.Command(filepath.Join(cluster.bin, "helm"), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig,
		"HELM_CONFIG_HOME="+filepath.Join(dir, "config"), "HELM_CACHE_HOME="+filepath.Join(dir, "cache"),
		"HELM_DATA_HOME="+filepath.Join(dir, "data"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// requireHelm skips nothing: make e2e builds bin/helm (hack/kube-binaries.sh runs hack/helm.sh),
// so a missing one is a failure that says how to build it.
func requireHelm(t *testing.T) {
	t.Helper()
	requireCluster(t)
	if _, err := os.Stat(filepath.Join(cluster.bin, "helm")); err != nil {
		t.Fatalf("no helm in %s: run hack/helm.sh (make e2e does): %v", cluster.bin, err)
	}
}

// setArgs turns "key=value" pairs into helm's --set flags.
func setArgs(set []string) []string {
	var args []string
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return args
}

// helmTemplate renders the chart as a release in namespace ns with the given --set values.
func helmTemplate(t *testing.T, ns string, set ...string) []obj {
	t.Helper()
	out, err := helm(append([]string{"template", "webapp-operator", chartDir, "--namespace", ns}, setArgs(set)...)...)
	if err != nil {
		t.Fatal(err)
	}
	docs, err := yamlDocs([]byte(out))
	if err != nil {
		t.Fatalf("helm template output: %v", err)
	}
	return docs
}

// key names an object by what identifies it in a cluster.
func key(o obj) string {
	apiVersion, kind, ns, name := identity(o)
	return fmt.Sprintf("%s %s %s/%s", apiVersion, kind, ns, name)
}

// comparable returns the objects by key, each with the labels only the chart adds removed, and
// the CRD's helm.sh/resource-policy, so that what is left is what both installs must agree on.
func comparable(t *testing.T, docs []obj) map[string]obj {
	t.Helper()
	out := map[string]obj{}
	for _, d := range docs {
		var c obj
		if err := roundTrip(d, &c); err != nil {
			t.Fatal(err)
		}
		meta, _ := c["metadata"].(map[string]any)
		if labels, ok := meta["labels"].(map[string]any); ok {
			for _, l := range chartOnlyLabels {
				delete(labels, l)
			}
			if len(labels) == 0 {
				delete(meta, "labels")
			}
		}
		if annotations, ok := meta["annotations"].(map[string]any); ok {
			delete(annotations, "helm.sh/resource-policy")
			if len(annotations) == 0 {
				delete(meta, "annotations")
			}
		}
		k := key(c)
		if _, dup := out[k]; dup {
			t.Fatalf("%s rendered twice", k)
		}
		out[k] = c
	}
	return out
}

// diffObjects reports, object by object, how the chart's render differs from kustomize's.
func diffObjects(t *testing.T, chart, kustomize map[string]obj) {
	t.Helper()
	for _, k := range sortedKeys(kustomize) {
		c, ok := chart[k]
		if !ok {
			t.Errorf("%s: in the kustomize install, not in the chart", k)
			continue
		}
		if !reflect.DeepEqual(c, kustomize[k]) {
			cy, _ := yaml.Marshal(c)
			ky, _ := yaml.Marshal(kustomize[k])
			t.Errorf("%s differs (- kustomize, + chart):\n%s", k, lineDiff(string(ky), string(cy)))
		}
	}
	for _, k := range sortedKeys(chart) {
		if _, ok := kustomize[k]; !ok {
			t.Errorf("%s: in the chart, not in the kustomize install", k)
		}
	}
}

func sortedKeys(m map[string]obj) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// lineDiff lists the lines of a missing from b (-) and of b missing from a (+), in order: enough
// to see which field differs in two YAML renders of one object.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range al {
		if !slices.Contains(bl, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range bl {
		if !slices.Contains(al, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// TestChartEqualsKustomize holds the chart and the kustomize install equal: `helm template` with
// the default values against `kubectl kustomize metacontroller/`, and each option against its
// component or overlay, object by object. The chart reads the CRD, the policy and the roles from
// the kustomize install's own files (charts/webapp-operator/files links to them); this test holds
// the rest, which the chart templates, to the same objects. The one difference by design: the
// chart installs into the release's namespace, which Helm makes (--create-namespace) or finds, so
// it renders no Namespace.
func TestChartEqualsKustomize(t *testing.T) {
	requireHelm(t)
	only := func(kinds ...string) func(obj) bool {
		return func(o obj) bool { _, kind, _, _ := identity(o); return slices.Contains(kinds, kind) }
	}
	for _, tc := range []struct {
		name      string
		set       []string
		kustomize string
		// leave drops objects of the kustomize render that the option leaves out.
		leave func(obj) bool
	}{
		{name: "default values", kustomize: "../metacontroller"},
		{name: "podDiagnosis", set: []string{"podDiagnosis.enabled=true"}, kustomize: "testdata/pod-diagnosis"},
		{name: "gatewayAPI", set: []string{"gatewayAPI.enabled=true"}, kustomize: "testdata/gateway-api"},
		{name: "TLS from a Secret", set: []string{"tls.enabled=true", "tls.source=secret", "token.generate=false"}, kustomize: "../metacontroller/secure"},
		{name: "TLS from cert-manager", set: []string{"tls.enabled=true", "tls.source=certManager", "token.generate=false"}, kustomize: "../metacontroller/cert-manager"},
		{name: "policy off", set: []string{"policy.enabled=false"}, kustomize: "../metacontroller", leave: only("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")},
		{name: "roles off", set: []string{"roles.enabled=false"}, kustomize: "../metacontroller", leave: only("ClusterRole")},
		{name: "crds.install off", set: []string{"crds.install=false"}, kustomize: "../metacontroller", leave: only("CustomResourceDefinition")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []obj
			for _, d := range renderKustomize(t, tc.kustomize) {
				if _, kind, _, _ := identity(d); kind == "Namespace" || (tc.leave != nil && tc.leave(d)) {
					continue
				}
				want = append(want, d)
			}
			got := helmTemplate(t, "webapp-system", tc.set...)
			for _, d := range got {
				if _, kind, _, _ := identity(d); kind == "Namespace" {
					t.Errorf("the chart renders Namespace %v; want none: Helm makes the release's namespace", field(d, "metadata", "name"))
				}
			}
			diffObjects(t, comparable(t, got), comparable(t, want))
		})
	}
}

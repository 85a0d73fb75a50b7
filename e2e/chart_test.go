//go:build e2e

package e2e

import (
	"encoding/base64"
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
// cache and data in the suite's folder, never the user's, and returns its standard output; an
// error holds both outputs. (Helm logs on standard error, e.g. that files/ holds links.)
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
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
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
		if _, kind, _, _ := identity(c); kind == "ValidatingAdmissionPolicy" {
			c["spec"] = collapseSpace(c["spec"])
		}
		k := key(c)
		if _, dup := out[k]; dup {
			t.Fatalf("%s rendered twice", k)
		}
		out[k] = c
	}
	return out
}

// collapseSpace replaces every run of white space in the strings of v with one space. kubectl's
// kustomize (kyaml, on yaml.v3) reads a folded scalar (>-) with a more-indented line as having two
// line breaks before that line where YAML, Helm and the apiserver's own decoder read one, so the
// policy's CEL expressions, written folded, differ in blank lines only between the two renders;
// white space means nothing in CEL, and every other string is compared as it is.
func collapseSpace(v any) any {
	switch v := v.(type) {
	case string:
		return strings.Join(strings.Fields(v), " ")
	case map[string]any:
		for k, e := range v {
			v[k] = collapseSpace(e)
		}
	case []any:
		for i, e := range v {
			v[i] = collapseSpace(e)
		}
	}
	return v
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
		{name: "analysis", set: []string{"analysis.enabled=true"}, kustomize: "testdata/analysis"},
		{name: "notifications", set: []string{"notifications.enabled=true"}, kustomize: "testdata/notifications"},
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

// chartOptions are value sets, one per option of the chart beyond the defaults, that helm lint
// and helm template must take cleanly.
var chartOptions = map[string][]string{
	"default values":        nil,
	"image digest":          {"image.digest=sha256:" + strings.Repeat("ab", 32), "image.pullPolicy=Always"},
	"image tag":             {"image.tag=v1.2.3"},
	"hook flags":            {"hook.logLevel=debug", "hook.cacheBytes=0", "hook.maxBodyBytes=8388608", "hook.maxInflightBodyBytes=-1", "hook.inflightWait=3s", "hook.bodyTimeout=6s", "hook.maxConnections=64", "hook.defaultSecurityProfile=restricted", "hook.defaultGateway=infra/public/https"},
	"scheduling":            {"replicas=3", "nodeSelector.kubernetes\\.io/os=linux", "tolerations[0].key=dedicated", "tolerations[0].operator=Exists", "priorityClassName=system-cluster-critical", "resources.limits.memory=256Mi", "goMemLimit=192MiB"},
	"podDiagnosis":          {"podDiagnosis.enabled=true"},
	"gatewayAPI":            {"gatewayAPI.enabled=true"},
	"analysis":              {"analysis.enabled=true", "analysis.tokenSecret=prometheus-token", "analysis.caConfigMap=prometheus-ca", "analysis.gateway=istio", "analysis.queryTimeout=1500ms", "analysis.maxConcurrentQueries=4", "analysis.templates[0].name=error-budget", "analysis.templates[0].query=sum(rate(x{service=\"{{.Service}}\"}[{{.Window}}]))"},
	"notifications":         {"notifications.enabled=true", "notifications.replicas=1", "notifications.image.tag=v1.2.3", "notifications.config.service\\.slack=token: $slack-token"},
	"notifier image digest": {"notifications.enabled=true", "notifications.image.digest=sha256:" + strings.Repeat("cd", 32)},
	"policy and roles off":  {"policy.enabled=false", "roles.enabled=false"},
	"crds not kept":         {"crds.keep=false"},
	"crds not installed":    {"crds.install=false"},
	"TLS, cert-manager":     {"tls.enabled=true"},
	"TLS, named issuer":     {"tls.enabled=true", "tls.certManager.issuerRef.name=corp-ca", "tls.certManager.issuerRef.kind=ClusterIssuer"},
	"TLS, existing Secrets": {"tls.enabled=true", "tls.source=secret", "tls.secretName=my-tls", "token.generate=false", "token.secretName=my-token", "token.acceptedSecretName=my-tokens"},
	"no NetworkPolicy, PDB": {"networkPolicy.enabled=false", "podDisruptionBudget.enabled=false"},
	"resync":                {"compositeController.resyncPeriodSeconds=5"},
}

// byKind returns the rendered objects of one kind, by name.
func byKind(docs []obj, kind string) map[string]obj {
	out := map[string]obj{}
	for _, d := range docs {
		if _, k, _, name := identity(d); k == kind {
			out[name] = d
		}
	}
	return out
}

// TestChartOptions lints and renders the chart with each option, checks what each option is for,
// and checks that values.schema.json refuses a wrong type, an unknown key and a bad value, naming
// the field.
func TestChartOptions(t *testing.T) {
	requireHelm(t)
	for name, set := range chartOptions {
		t.Run("lint/"+name, func(t *testing.T) {
			if out, err := helm(append([]string{"lint", "--strict", chartDir}, setArgs(set)...)...); err != nil {
				t.Error(err)
			} else if !strings.Contains(out, "0 chart(s) failed") {
				t.Errorf("helm lint:\n%s", out)
			}
			helmTemplate(t, "webapp-system", set...)
		})
	}
	container := func(docs []obj) obj {
		return field(byKind(docs, "Deployment")["webapp-hook"], "spec", "template", "spec", "containers", 0).(map[string]any)
	}
	t.Run("a digest wins over the tag", func(t *testing.T) {
		c := container(helmTemplate(t, "webapp-system", chartOptions["image digest"]...))
		if want := "ghcr.io/example/webapp-hook@sha256:" + strings.Repeat("ab", 32); c["image"] != want || c["imagePullPolicy"] != "Always" {
			t.Errorf("image %v, pull policy %v; want %s, Always", c["image"], c["imagePullPolicy"], want)
		}
		if c := container(helmTemplate(t, "webapp-system", chartOptions["image tag"]...)); c["image"] != "ghcr.io/example/webapp-hook:v1.2.3" {
			t.Errorf("image %v; want the tag", c["image"])
		}
		if c := container(helmTemplate(t, "webapp-system", "image.tag=")); c["image"] != "ghcr.io/example/webapp-hook:dev" {
			t.Errorf("image %v with no tag; want the chart's appVersion, dev", c["image"])
		}
	})
	t.Run("the notifier's digest wins over its tag", func(t *testing.T) {
		notifier := func(docs []obj) any {
			return field(byKind(docs, "Deployment")["webapp-notifier"], "spec", "template", "spec", "containers", 0, "image")
		}
		if got, want := notifier(helmTemplate(t, "webapp-system", chartOptions["notifier image digest"]...)), "ghcr.io/example/webapp-notifier@sha256:"+strings.Repeat("cd", 32); got != want {
			t.Errorf("the notifier's image %v; want %s", got, want)
		}
		if got := notifier(helmTemplate(t, "webapp-system", chartOptions["notifications"]...)); got != "ghcr.io/example/webapp-notifier:v1.2.3" {
			t.Errorf("the notifier's image %v; want the tag", got)
		}
	})
	t.Run("hook flags", func(t *testing.T) {
		args := fmt.Sprint(container(helmTemplate(t, "webapp-system", chartOptions["hook flags"]...))["args"])
		for _, want := range []string{"--log-level=debug", "--cache-bytes=0", "--max-body-bytes=8388608", "--max-inflight-body-bytes=-1", "--inflight-wait=3s", "--body-timeout=6s", "--max-connections=64", "--default-security-profile=restricted", "--default-gateway=infra/public/https"} {
			if !strings.Contains(args, want) {
				t.Errorf("args %s; want %s", args, want)
			}
		}
	})
	t.Run("scheduling", func(t *testing.T) {
		docs := helmTemplate(t, "webapp-system", chartOptions["scheduling"]...)
		spec := field(byKind(docs, "Deployment")["webapp-hook"], "spec")
		pod := field(spec, "template", "spec")
		if field(spec, "replicas") != float64(3) || field(pod, "nodeSelector", "kubernetes.io/os") != "linux" ||
			field(pod, "tolerations", 0, "key") != "dedicated" || field(pod, "priorityClassName") != "system-cluster-critical" ||
			field(pod, "containers", 0, "resources", "limits", "memory") != "256Mi" || field(pod, "containers", 0, "env", 0, "value") != "192MiB" {
			t.Errorf("Deployment spec %v; want the scheduling values", spec)
		}
	})
	t.Run("crds.keep", func(t *testing.T) {
		if got := field(byKind(helmTemplate(t, "webapp-system"), "CustomResourceDefinition")["webapps.example.com"], "metadata", "annotations", "helm.sh/resource-policy"); got != "keep" {
			t.Errorf("CRD resource policy %v by default; want keep", got)
		}
		if got := field(byKind(helmTemplate(t, "webapp-system", "crds.keep=false"), "CustomResourceDefinition")["webapps.example.com"], "metadata", "annotations", "helm.sh/resource-policy"); got != nil {
			t.Errorf("CRD resource policy %v with crds.keep=false; want none", got)
		}
	})
	t.Run("a generated token", func(t *testing.T) {
		secrets := byKind(helmTemplate(t, "webapp-system", "tls.enabled=true"), "Secret")
		token, _ := field(secrets["webapp-hook-token"], "data", "token").(string)
		tokens, _ := field(secrets["webapp-hook-tokens"], "data", "tokens").(string)
		sent, err1 := base64.StdEncoding.DecodeString(token)
		accepted, err2 := base64.StdEncoding.DecodeString(tokens)
		if err1 != nil || err2 != nil || len(sent) < 32 || string(accepted) != string(sent)+"\n" {
			t.Errorf("token Secrets %v; want a token of 32 characters or more, sent and accepted", secrets)
		}
		other := byKind(helmTemplate(t, "webapp-system", "tls.enabled=true"), "Secret")
		if field(other["webapp-hook-token"], "data", "token") == token {
			t.Error("two renders with no Secret to look up made the same token")
		}
		if s := byKind(helmTemplate(t, "webapp-system", chartOptions["TLS, existing Secrets"]...), "Secret"); len(s) != 0 {
			t.Errorf("token.generate=false renders Secrets %v; want none", s)
		}
	})
	t.Run("TLS from a named issuer", func(t *testing.T) {
		docs := helmTemplate(t, "webapp-system", chartOptions["TLS, named issuer"]...)
		certs := byKind(docs, "Certificate")
		if len(byKind(docs, "Issuer")) != 0 || len(certs) != 1 || field(certs["webapp-hook-tls"], "spec", "issuerRef", "name") != "corp-ca" ||
			field(certs["webapp-hook-tls"], "spec", "issuerRef", "kind") != "ClusterIssuer" {
			t.Errorf("Issuers %v, Certificates %v; want only the serving certificate, from ClusterIssuer corp-ca", byKind(docs, "Issuer"), certs)
		}
	})
	t.Run("TLS from existing Secrets", func(t *testing.T) {
		docs := helmTemplate(t, "webapp-system", chartOptions["TLS, existing Secrets"]...)
		cc := byKind(docs, "CompositeController")["webapp-controller"]
		sync := field(cc, "spec", "hooks", "sync", "webhook")
		vols := fmt.Sprint(field(byKind(docs, "Deployment")["webapp-hook"], "spec", "template", "spec", "volumes"))
		if field(sync, "authorization", "secretRef", "name") != "my-token" || field(sync, "caBundle", "secretRef", "name") != "my-tls" ||
			!strings.Contains(vols, "my-tls") || !strings.Contains(vols, "my-tokens") || len(byKind(docs, "Certificate")) != 0 {
			t.Errorf("sync webhook %v, volumes %s; want the named Secrets and no Certificate", sync, vols)
		}
	})
	t.Run("off by default", func(t *testing.T) {
		docs := helmTemplate(t, "webapp-system", chartOptions["no NetworkPolicy, PDB"]...)
		if len(byKind(docs, "NetworkPolicy"))+len(byKind(docs, "PodDisruptionBudget")) != 0 {
			t.Error("networkPolicy.enabled=false, podDisruptionBudget.enabled=false still render them")
		}
	})
	t.Run("another namespace", func(t *testing.T) {
		docs := helmTemplate(t, "platform", "tls.enabled=true")
		url := field(byKind(docs, "CompositeController")["webapp-controller"], "spec", "hooks", "sync", "webhook", "url")
		names := fmt.Sprint(field(byKind(docs, "Certificate")["webapp-hook-tls"], "spec", "dnsNames"))
		if url != "https://webapp-hook.platform/sync" || !strings.Contains(names, "webapp-hook.platform.svc") {
			t.Errorf("hook URL %v, certificate names %s; want the release's namespace", url, names)
		}
	})

	// Each refusal names the field.
	for _, tc := range []struct{ set, want string }{
		{"replicas=two", "/replicas"},
		{"unknown=1", "unknown"},
		{"hook.logLevel=loud", "/hook/logLevel"},
		{"hook.unknownFlag=1", "unknownFlag"},
		{"image.digest=latest", "/image/digest"},
		{"tls.source=vault", "/tls/source"},
		{"tls.enabled=yes", "/tls/enabled"},
		{"crds.keep=maybe", "/crds/keep"},
		{"hook.inflightWait=soon", "/hook/inflightWait"},
		{"networkPolicy.metacontroller.extra=1", "extra"},
		{"podLabels.app\\.kubernetes\\.io/name=other", "app.kubernetes.io/name"},
	} {
		t.Run("refuses "+tc.set, func(t *testing.T) {
			_, err := helm("template", "webapp-operator", chartDir, "--set", tc.set)
			if err == nil {
				t.Fatalf("helm template --set %s rendered; want the schema to refuse it", tc.set)
			}
			if msg := err.Error(); !strings.Contains(msg, "schema") || !strings.Contains(msg, tc.want) {
				t.Errorf("helm template --set %s said\n%s\nwant a schema error naming %s", tc.set, msg, tc.want)
			}
		})
	}
}

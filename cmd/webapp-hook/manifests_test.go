package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/example/webapp-operator/analysis"
	"github.com/example/webapp-operator/sync"
)

// manifests reads every YAML document under metacontroller/, by kind.
func manifests(t *testing.T) map[string][][]byte {
	t.Helper()
	files, err := filepath.Glob("../../metacontroller/base/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	out := map[string][][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(b, []byte("\n---\n")) {
			var head struct{ Kind string }
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out[head.Kind] = append(out[head.Kind], doc)
		}
	}
	return out
}

func one[T any](t *testing.T, docs [][]byte, kind string) T {
	t.Helper()
	var v T
	if len(docs) != 1 {
		t.Fatalf("%d %s manifests; want 1", len(docs), kind)
	}
	if err := yaml.UnmarshalStrict(docs[0], &v); err != nil {
		t.Fatalf("%s: %v", kind, err)
	}
	return v
}

// compositeController holds the CompositeController fields the deployment depends on.
type compositeController struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		GenerateSelector    bool `json:"generateSelector"`
		ResyncPeriodSeconds int  `json:"resyncPeriodSeconds"`
		ParentResource      struct {
			APIVersion string `json:"apiVersion"`
			Resource   string `json:"resource"`
		} `json:"parentResource"`
		ChildResources []struct {
			APIVersion     string `json:"apiVersion"`
			Resource       string `json:"resource"`
			UpdateStrategy struct {
				Method string `json:"method"`
			} `json:"updateStrategy"`
		} `json:"childResources"`
		Hooks map[string]struct {
			Version string `json:"version"`
			Webhook struct {
				URL     string `json:"url"`
				Timeout string `json:"timeout"`
				ETag    struct {
					Enabled             bool `json:"enabled"`
					CacheTimeoutSeconds int  `json:"cacheTimeoutSeconds"`
					CacheCleanupSeconds int  `json:"cacheCleanupSeconds"`
				} `json:"etag"`
			} `json:"webhook"`
		} `json:"hooks"`
	} `json:"spec"`
}

// TestManifests checks that the CompositeController, the hook's Service and its Deployment agree
// with each other and with the binary: URLs, ports, routes, probes and update strategies.
func TestManifests(t *testing.T) {
	docs := manifests(t)
	cc := one[compositeController](t, docs["CompositeController"], "CompositeController")
	svc := one[corev1.Service](t, docs["Service"], "Service")
	dep := one[appsv1.Deployment](t, docs["Deployment"], "Deployment")
	pdb := one[policyv1.PodDisruptionBudget](t, docs["PodDisruptionBudget"], "PodDisruptionBudget")
	netpol := one[networkingv1.NetworkPolicy](t, docs["NetworkPolicy"], "NetworkPolicy")
	selects := func(what string, sel map[string]string) {
		for k, v := range sel {
			if dep.Spec.Template.Labels[k] != v {
				t.Errorf("%s selector %s=%s does not match the hook's pods", what, k, v)
			}
		}
	}
	selects("PodDisruptionBudget", pdb.Spec.Selector.MatchLabels)
	selects("NetworkPolicy", netpol.Spec.PodSelector.MatchLabels)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 || dep.Spec.Replicas == nil || *dep.Spec.Replicas < 2 {
		t.Error("want at least 2 replicas and a PodDisruptionBudget keeping 1")
	}
	if len(dep.Spec.Template.Spec.TopologySpreadConstraints) == 0 {
		t.Error("no topology spread constraint")
	}
	// Who may reach which port: Metacontroller's pods the hooks, Prometheus's the metrics, each by
	// namespace and pod labels together (one peer with both selectors), and nothing goes out.
	admitted := map[string]string{}
	for _, rule := range netpol.Spec.Ingress {
		if len(rule.From) != 1 || rule.From[0].NamespaceSelector == nil || rule.From[0].PodSelector == nil || len(rule.Ports) != 1 {
			t.Fatalf("NetworkPolicy rule %+v; want one peer, selected by namespace and pod labels together, to one port", rule)
		}
		peer := rule.From[0]
		admitted[rule.Ports[0].Port.String()] = peer.NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] + "/" + peer.PodSelector.MatchLabels["app.kubernetes.io/name"]
	}
	if want := map[string]string{"http": "metacontroller/metacontroller", "metrics": "monitoring/prometheus"}; !maps.Equal(admitted, want) {
		t.Errorf("NetworkPolicy admits %v; want %v", admitted, want)
	}
	if !slices.Contains(netpol.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) || len(netpol.Spec.Egress) != 0 {
		t.Errorf("NetworkPolicy policyTypes %v, egress %v; want every egress denied", netpol.Spec.PolicyTypes, netpol.Spec.Egress)
	}
	ns := one[corev1.Namespace](t, docs["Namespace"], "Namespace")
	if got := ns.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
		t.Errorf("namespace %s enforces Pod Security %q; want restricted", ns.Name, got)
	}

	if !cc.Spec.GenerateSelector {
		t.Error("generateSelector = false; want true")
	}
	if got := cc.Spec.ParentResource.APIVersion + " " + cc.Spec.ParentResource.Resource; got != "example.com/v1 webapps" {
		t.Errorf("parentResource = %s; want example.com/v1 webapps", got)
	}
	var children []string
	for _, c := range cc.Spec.ChildResources {
		children = append(children, c.APIVersion+" "+c.Resource)
		if c.UpdateStrategy.Method != "InPlace" {
			t.Errorf("%s updateStrategy = %q; want InPlace, or existing children are never updated", c.Resource, c.UpdateStrategy.Method)
		}
	}
	var want []string // every kind of the base the hook builds, in sync.Kinds' order
	for _, k := range sync.Kinds {
		if k.Built && k.Component == "" {
			want = append(want, k.APIVersion+" "+k.Resource)
		}
	}
	if !slices.Equal(children, want) {
		t.Errorf("childResources = %v; want the kinds of the base the hook builds, %v", children, want)
	}

	container := dep.Spec.Template.Spec.Containers[0]
	ports := map[string]int32{}
	for _, p := range container.Ports {
		ports[p.Name] = p.ContainerPort
	}
	port := container.Ports[0]
	for _, hook := range []string{"customize", "sync", "finalize"} {
		h, ok := cc.Spec.Hooks[hook]
		if !ok {
			t.Errorf("hooks.%s missing", hook)
			continue
		}
		u, err := url.Parse(h.Webhook.URL)
		if err != nil {
			t.Fatal(err)
		}
		if want := svc.Name + "." + svc.Namespace; u.Hostname() != want {
			t.Errorf("%s hook host = %q; want the hook Service %q", hook, u.Hostname(), want)
		}
		if !h.Webhook.ETag.Enabled && hook != "customize" {
			t.Errorf("%s hook etag.enabled = false; want true, the hook answers If-None-Match", hook)
		}
		if h.Version != "v2" {
			t.Errorf("%s hook version %q; want v2: keys namespace/name, strict answers", hook, h.Version)
		}
		if u.Path != "/"+hook {
			t.Errorf("%s hook path = %q; want /%s", hook, u.Path, hook)
		}
		if u.Port() != "" || svc.Spec.Ports[0].Port != 80 {
			t.Errorf("%s hook port %q with Service port %d; want the default 80 on both", hook, u.Port(), svc.Spec.Ports[0].Port)
		}
	}
	if svc.Spec.Ports[0].TargetPort.String() != port.Name {
		t.Errorf("Service targetPort = %s; want the container port %q", svc.Spec.Ports[0].TargetPort.String(), port.Name)
	}
	for k, v := range svc.Spec.Selector {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("Service selector %s=%s does not match the hook's pods", k, v)
		}
	}
	if !slices.Contains(container.Args, "--addr=:8080") || ports["http"] != 8080 || port.Name != "http" {
		t.Errorf("args %v, ports %v; want --addr=:8080 and the first port http on 8080", container.Args, ports)
	}
	if !slices.Contains(container.Args, "--metrics-addr=:9090") || ports["metrics"] != 9090 {
		t.Errorf("args %v, ports %v; want --metrics-addr=:9090 and a metrics port 9090", container.Args, ports)
	}
	if p := container.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
		t.Error("readiness probe is not GET /readyz")
	}
	if p := container.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Error("liveness probe is not GET /healthz")
	}
	if a := dep.Spec.Template.Annotations; a["prometheus.io/scrape"] != "true" || a["prometheus.io/path"] != "/metrics" || a["prometheus.io/port"] != fmt.Sprint(ports["metrics"]) {
		t.Errorf("scrape annotations = %v; want scrape true on /metrics at the metrics port", a)
	}
	sc, psc := container.SecurityContext, dep.Spec.Template.Spec.SecurityContext
	switch {
	case sc == nil || psc == nil:
		t.Error("no security context")
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("container root filesystem is writable")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("privilege escalation allowed")
	case sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL":
		t.Error("capabilities not all dropped")
	case psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Error("want runAsNonRoot and the RuntimeDefault seccomp profile")
	}
	if lim, req := container.Resources.Limits.Memory(), container.Resources.Requests.Memory(); lim.IsZero() || req.IsZero() || container.Resources.Requests.Cpu().IsZero() {
		t.Error("want memory requests and limits and a CPU request")
	}
}

// TestKustomizationImage checks that the base kustomization sets the hook's image to the one
// `make image` builds and names (the Makefile's IMAGE), so that the README's deploy path, `make
// image` then `kind load image-archive`, runs what it built; and with a tag that keeps
// imagePullPolicy at IfNotPresent, or a digest.
func TestKustomizationImage(t *testing.T) {
	b, err := os.ReadFile("../../metacontroller/base/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct{ Name, NewName, NewTag, Digest string }
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	dep := one[appsv1.Deployment](t, manifests(t)["Deployment"], "Deployment")
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^IMAGE \?= (\S+)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatal("the Makefile sets no IMAGE default")
	}
	builtName, builtTag, _ := strings.Cut(string(m[1]), ":")
	if len(k.Images) != 1 {
		t.Fatalf("kustomization images %+v; want the hook's alone", k.Images)
	}
	img := k.Images[0]
	if img.Name != dep.Spec.Template.Spec.Containers[0].Image || img.NewName != builtName {
		t.Errorf("kustomization image %+v; want %s set to %s, as make image names it", img, dep.Spec.Template.Spec.Containers[0].Image, builtName)
	}
	switch {
	case img.Digest != "": // pinned: any build's digest
	case img.NewTag == "latest":
		t.Errorf("image %s: the tag latest makes the kubelet pull it always, past kind load", img.Name)
	case img.NewTag != builtTag:
		t.Errorf("image %s: tag %q; make image tags it %q", img.Name, img.NewTag, builtTag)
	}
}

// TestKustomization checks that the base kustomization lists every manifest beside it and the
// CRD, and that metacontroller/ and the secure overlay build on that base.
func TestKustomization(t *testing.T) {
	read := func(path string) (k struct{ Resources []string }) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, &k); err != nil {
			t.Fatal(err)
		}
		return k
	}
	files, _ := filepath.Glob("../../metacontroller/base/*.yaml")
	want := []string{"../../crds"}
	for _, f := range files {
		if base := filepath.Base(f); base != "kustomization.yaml" {
			want = append(want, base)
		}
	}
	got := slices.Clone(read("../../metacontroller/base/kustomization.yaml").Resources)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("base resources = %v; want %v", got, want)
	}
	if got := read("../../metacontroller/kustomization.yaml").Resources; !slices.Equal(got, []string{"base"}) {
		t.Errorf("metacontroller/ resources = %v; want [base]", got)
	}
	if got := read("../../metacontroller/secure/kustomization.yaml").Resources; !slices.Equal(got, []string{"../base"}) {
		t.Errorf("secure overlay resources = %v; want [../base]", got)
	}
}

// TestGatewayAPIComponent checks that metacontroller/gateway-api is a kustomize Component whose
// one patch adds to the base's CompositeController exactly the kinds sync.Kinds puts in that
// component, each updated in place, after the base's (the order sync.Kinds lists them in).
func TestGatewayAPIComponent(t *testing.T) {
	b, err := os.ReadFile("../../metacontroller/gateway-api/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Resources  []string
		Patches    []struct {
			Target struct{ Group, Kind, Name string }
			Patch  string
		}
	}
	if err := yaml.UnmarshalStrict(b, &k); err != nil {
		t.Fatal(err)
	}
	if k.Kind != "Component" || len(k.Resources) != 0 || len(k.Patches) != 1 {
		t.Fatalf("kind %q, resources %v, %d patches; want a Component of one patch and no resource of its own", k.Kind, k.Resources, len(k.Patches))
	}
	cc := one[compositeController](t, manifests(t)["CompositeController"], "CompositeController")
	p := k.Patches[0]
	if p.Target.Group != "metacontroller.k8s.io" || p.Target.Kind != "CompositeController" || p.Target.Name != cc.Metadata.Name {
		t.Errorf("patch target %+v; want the base's CompositeController %s", p.Target, cc.Metadata.Name)
	}
	var ops []struct {
		Op    string
		Path  string
		Value struct {
			APIVersion     string `json:"apiVersion"`
			Resource       string
			UpdateStrategy struct{ Method string } `json:"updateStrategy"`
		}
	}
	if err := yaml.UnmarshalStrict([]byte(p.Patch), &ops); err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, op := range ops {
		if op.Op != "add" || op.Path != "/spec/childResources/-" || op.Value.UpdateStrategy.Method != "InPlace" {
			t.Errorf("op %+v; want an add at the end of childResources, updated InPlace", op)
		}
		got = append(got, op.Value.APIVersion+" "+op.Value.Resource)
	}
	for _, kind := range sync.Kinds {
		if kind.Built && kind.Component == sync.GatewayAPIComponent {
			want = append(want, kind.APIVersion+" "+kind.Resource)
		}
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("the component adds %v; want the kinds of sync.Kinds in it, %v", got, want)
	}
}

// TestAnalysisComponent checks that metacontroller/analysis passes flags the hook takes, mounts
// its templates ConfigMap where --analysis-templates looks, with templates the hook can read, and
// lets the hook out to Prometheus on the port of --prometheus-url; and that its admission policy
// reads that ConfigMap's key.
func TestAnalysisComponent(t *testing.T) {
	b, err := os.ReadFile("../../metacontroller/analysis/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Resources  []string
		Patches    []struct {
			Target struct{ Kind, Name string }
			Patch  string
		}
	}
	if err := yaml.UnmarshalStrict(b, &k); err != nil {
		t.Fatal(err)
	}
	if k.Kind != "Component" || len(k.Patches) != 3 {
		t.Fatalf("kind %q, %d patches; want a Component of three patches", k.Kind, len(k.Patches))
	}
	var ops []struct{ Op, Path, Value string }
	if err := yaml.UnmarshalStrict([]byte(k.Patches[0].Patch), &ops); err != nil {
		t.Fatal(err)
	}
	args := []string{}
	for _, op := range ops {
		if op.Op != "add" || op.Path != "/spec/template/spec/containers/0/args/-" {
			t.Errorf("op %+v; want an add at the end of the hook's args", op)
		}
		args = append(args, op.Value)
	}
	m := NewMain(io.Discard)
	if err := m.ParseFlags(args, func(string) string { return "" }); err != nil {
		t.Fatalf("the hook refuses the component's args %v: %v", args, err)
	}
	var dep appsv1.Deployment
	if err := yaml.Unmarshal([]byte(k.Patches[1].Patch), &dep); err != nil {
		t.Fatal(err)
	}
	spec := dep.Spec.Template.Spec
	if len(spec.Containers) != 1 || len(spec.Containers[0].VolumeMounts) != 1 || len(spec.Volumes) != 1 || spec.Volumes[0].ConfigMap == nil {
		t.Fatalf("the Deployment patch: %+v; want one ConfigMap volume, mounted", spec)
	}
	mount := spec.Containers[0].VolumeMounts[0]
	if want := filepath.Dir(m.Config.Prometheus.TemplatesFile); mount.MountPath != want || !mount.ReadOnly || mount.Name != spec.Volumes[0].Name {
		t.Errorf("mount %+v; want the volume read-only at %s, where --analysis-templates looks", mount, want)
	}
	var cm corev1.ConfigMap
	cmBytes, err := os.ReadFile("../../metacontroller/analysis/templates.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(cmBytes, &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Name != spec.Volumes[0].ConfigMap.Name || !slices.Equal(k.Resources, []string{"templates.yaml", "policy.yaml"}) {
		t.Errorf("ConfigMap %s, resources %v; want the one the volume names, %s, and the policy", cm.Name, k.Resources, spec.Volumes[0].ConfigMap.Name)
	}
	key := filepath.Base(m.Config.Prometheus.TemplatesFile)
	if _, err := analysis.ParseTemplates([]byte(cm.Data[key])); err != nil {
		t.Errorf("the ConfigMap's templates: %v", err)
	}
	// The admission policy reads that ConfigMap's key: its binding names the ConfigMap.
	policyBytes, err := os.ReadFile("../../metacontroller/analysis/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	policyDoc, bindingDoc, _ := strings.Cut(string(policyBytes), "\n---\n")
	var policy admissionregistrationv1.ValidatingAdmissionPolicy
	var binding admissionregistrationv1.ValidatingAdmissionPolicyBinding
	if err := yaml.UnmarshalStrict([]byte(policyDoc), &policy); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(bindingDoc), &binding); err != nil {
		t.Fatal(err)
	}
	if pk := policy.Spec.ParamKind; pk == nil || pk.APIVersion != "v1" || pk.Kind != "ConfigMap" || binding.Spec.PolicyName != policy.Name {
		t.Errorf("policy %s reads %+v, binding binds %s; want a ConfigMap, and the binding of that policy", policy.Name, pk, binding.Spec.PolicyName)
	}
	if ref := binding.Spec.ParamRef; ref == nil || ref.Name != cm.Name || ref.Namespace != cm.Namespace {
		t.Errorf("the binding reads %+v; want the ConfigMap %s/%s", ref, cm.Namespace, cm.Name)
	}
	var variables []string
	for _, v := range policy.Spec.Variables {
		variables = append(variables, v.Expression)
	}
	if !strings.Contains(strings.Join(variables, "\n"), "params.data['"+key+"']") {
		t.Errorf("the policy reads no params.data['%s'], the key the hook reads", key)
	}
	u, err := url.Parse(m.Config.Prometheus.URL)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(k.Patches[2].Patch, "port: "+u.Port()) || k.Patches[2].Target.Kind != "NetworkPolicy" {
		t.Errorf("the NetworkPolicy patch lets the hook out to no port %s:\n%s", u.Port(), k.Patches[2].Patch)
	}
}

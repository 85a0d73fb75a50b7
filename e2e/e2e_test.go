//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/webhook"
)

var (
	// cluster and client are nil when the control plane could not be had; skipReason says why.
	cluster    *controlPlane
	client     *kube
	skipReason string
	// hook serves the real handler, as Metacontroller would reach it.
	hook *httptest.Server
	// recorded counts the requests written to E2E_RECORD_DIR.
	recorded int
)

// metacontrollerCRDs is Metacontroller's own CRD file, shared beside the checkout, not in the repository.
const metacontrollerCRDs = "../../shared/metacontroller/crds.yaml"

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(run(m))
}

func run(m *testing.M) int {
	defer removeHookBuild()
	hook = httptest.NewServer(webhook.New(webhook.Options{Logger: slog.New(slog.DiscardHandler), CacheBytes: webhook.DefaultCacheBytes})) // as deployed
	defer hook.Close()
	if os.Getenv("E2E_EXISTING_CLUSTER") != "" {
		skipReason = "E2E_EXISTING_CLUSTER is set: only the existing-cluster test runs"
		return m.Run()
	}
	bin, err := binaries()
	if err != nil {
		skipReason = "control-plane binaries unavailable: " + err.Error()
		fmt.Fprintln(os.Stderr, "e2e:", skipReason)
		return m.Run()
	}
	start := time.Now()
	cp, err := startControlPlane(context.Background(), bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start control plane:", err)
		return 1
	}
	defer cp.stop()
	cluster, client = cp, newKube(cp.server, cp.token)
	if err := setup(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: setup:", err)
		if exited := cp.exited(); exited != nil {
			fmt.Fprintln(os.Stderr, exited)
		}
		return 1
	}
	fmt.Fprintf(os.Stderr, "e2e: control plane ready in %s at %s\n", time.Since(start).Round(time.Millisecond), cp.server)
	code := m.Run()
	// The real node, when a test started it, goes before the control plane, and must leave
	// nothing behind on the machine.
	if !stopNode() && code == 0 {
		code = 1
	}
	timelinesMu.Lock()
	timelines = append(timelines, &timeline{name: "the suite", marks: []string{fmt.Sprintf("%s in all; the real node Ready in %s", time.Since(start).Round(time.Second), nodeStartup.Round(time.Millisecond))}})
	timelinesMu.Unlock()
	printTimelines()
	return code
}

// setup installs the WebApp CRD, the Gateway API's (standard channel), Metacontroller's when
// shared, and a kwok node.
func setup() error {
	crds, err := os.ReadFile("../crds/example.com_webapps.yaml")
	if err != nil {
		return err
	}
	if err := installCRDs(crds); err != nil {
		return err
	}
	if err := installGatewayAPI(); err != nil {
		return fmt.Errorf("gateway API CRDs: %w", err)
	}
	if mc, err := os.ReadFile(metacontrollerCRDs); err == nil {
		if err := installCRDs(mc); err != nil {
			return fmt.Errorf("metacontroller CRDs: %w", err)
		}
	}
	node := obj{
		"apiVersion": "v1", "kind": "Node",
		"metadata": obj{
			"name":        "kwok-node-0",
			"annotations": obj{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			"labels":      obj{"kubernetes.io/hostname": "kwok-node-0", "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", "type": "kwok"},
		},
	}
	if _, err := client.create(node); err != nil {
		return fmt.Errorf("create kwok node: %w", err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, err := client.get("v1", "Node", "", "kwok-node-0")
		if err != nil {
			return err
		}
		if conditionTrue(n, "Ready") {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kwok node not Ready after 60s\n%s", cluster.tail("kwok"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if ns, err := client.get("v1", "Namespace", "", "default"); err != nil || ns == nil {
		if _, err := client.create(obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": "default"}}); err != nil {
			return fmt.Errorf("create namespace default: %w", err)
		}
	}
	return nil
}

// installGatewayAPI installs the standard channel's CRDs of the sigs.k8s.io/gateway-api module
// this one requires, from the module cache: the CRDs of the very release whose Go types the hook
// builds its HTTPRoutes with. (Its safe-upgrades ValidatingAdmissionPolicy, also in that folder,
// is not a CRD and is left out.)
func installGatewayAPI() error {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		return fmt.Errorf("go list -m sigs.k8s.io/gateway-api: %w", err)
	}
	files, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard", "gateway.networking.k8s.io_*.yaml"))
	var installed int
	for _, f := range files {
		if strings.Contains(filepath.Base(f), "_vap_") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := installCRDs(b); err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		installed++
	}
	if installed == 0 {
		return fmt.Errorf("no CRD in %s/config/crd/standard", strings.TrimSpace(string(out)))
	}
	return nil
}

// installCertManagerCRDs installs cert-manager's own CRDs, which hack/kube-binaries.sh fetches
// from the module proxy into bin/cert-manager-crds, so that its objects can be dry-run.
func installCertManagerCRDs(t *testing.T) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(cluster.bin, "cert-manager-crds", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no cert-manager CRDs in bin/cert-manager-crds; run hack/kube-binaries.sh")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := installCRDs(b); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
}

// installCRDs applies every CRD in a YAML file and waits until each is Established.
func installCRDs(data []byte) error {
	docs, err := yamlDocs(data)
	if err != nil {
		return err
	}
	for _, d := range docs {
		if _, err := client.apply(d, "webapp-e2e", false); err != nil {
			return err
		}
	}
	for _, d := range docs {
		_, _, _, name := identity(d)
		deadline := time.Now().Add(30 * time.Second)
		for {
			c, err := client.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name)
			if err != nil {
				return err
			}
			if conditionTrue(c, "Established") {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("CRD %s not Established after 30s", name)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	client.forget()
	return nil
}

func conditionTrue(o obj, condition string) bool {
	conds, _ := field(o, "status", "conditions").([]any)
	for _, c := range conds {
		if field(c, "type") == condition && field(c, "status") == "True" {
			return true
		}
	}
	return false
}

func requireCluster(t *testing.T) {
	t.Helper()
	if cluster == nil {
		t.Skip(skipReason)
	}
}

func webApp(namespace, name string, spec obj) obj {
	return obj{"apiVersion": "example.com/v1", "kind": "WebApp", "metadata": obj{"name": name, "namespace": namespace}, "spec": spec}
}

// TestCRD checks the WebApp CRD in a real apiserver: defaults, validation, printer columns and
// the field descriptions `kubectl explain` shows.
func TestCRD(t *testing.T) {
	requireCluster(t)
	ns := client.namespace(t, "crd")

	t.Run("defaults", func(t *testing.T) {
		got, err := client.create(webApp(ns, "defaults", obj{"image": "nginx", "port": 80, "ingress": obj{"host": "a.example.com"}, "disruptionBudget": obj{}, "autoscaling": obj{"maxReplicas": 3}, "rollout": obj{"canary": obj{"steps": []any{obj{"weight": 10}}}}}))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range []struct {
			path []any
			want any
		}{
			{[]any{"spec", "replicas"}, float64(1)},
			{[]any{"spec", "ingress", "path"}, "/"},
			{[]any{"spec", "ingress", "pathType"}, "Prefix"},
			{[]any{"spec", "disruptionBudget", "maxUnavailable"}, float64(1)},
			{[]any{"spec", "autoscaling", "minReplicas"}, float64(1)},
			{[]any{"spec", "rollout", "canary", "maxFailedChecks"}, float64(1)},
		} {
			if got := field(got, d.path...); got != d.want {
				t.Errorf("%v = %v; want %v", d.path, got, d.want)
			}
		}
	})

	tests := []struct {
		name string
		spec obj
		want []string // substrings of the apiserver's message
	}{
		{"empty image", obj{"image": ""}, []string{"spec.image", "at least 1 chars long"}},
		{"missing image", obj{"replicas": 1}, []string{"spec.image", "Required value"}},
		{"replicas -1", obj{"image": "nginx", "replicas": -1}, []string{"spec.replicas", "greater than or equal to 0"}},
		{"replicas 1001", obj{"image": "nginx", "replicas": 1001}, []string{"spec.replicas", "less than or equal to 1000"}},
		{"port 0", obj{"image": "nginx", "port": 0}, []string{"spec.port", "greater than or equal to 1"}},
		{"port 70000", obj{"image": "nginx", "port": 70000}, []string{"spec.port", "less than or equal to 65535"}},
		{"env without a name", obj{"image": "nginx", "env": []any{obj{"value": "x"}}}, []string{"spec.env[0].name", "Required value"}},
		{"replicas not a number", obj{"image": "nginx", "replicas": "three"}, []string{"spec.replicas", "must be of type integer"}},
		{"ingress without a port", obj{"image": "nginx", "ingress": obj{"host": "a.example.com"}}, []string{"spec.ingress", "ingress needs port"}},
		{"ingress host not a DNS name", obj{"image": "nginx", "port": 80, "ingress": obj{"host": "Not_A_Host"}}, []string{"spec.ingress.host", "should match"}},
		{"ingress path not absolute", obj{"image": "nginx", "port": 80, "ingress": obj{"host": "a.example.com", "path": "api"}}, []string{"spec.ingress.path", "should match '^/'"}},
		{"ingress pathType unknown", obj{"image": "nginx", "port": 80, "ingress": obj{"host": "a.example.com", "pathType": "Regex"}}, []string{"spec.ingress.pathType", "Unsupported value"}},
		{"healthCheck without a port", obj{"image": "nginx", "healthCheck": obj{"path": "/healthz"}}, []string{"spec.healthCheck", "healthCheck needs a port"}},
		{"healthCheck path not absolute", obj{"image": "nginx", "port": 80, "healthCheck": obj{"path": "healthz"}}, []string{"spec.healthCheck.path", "should match '^/'"}},
		{"a probe without a handler", obj{"image": "nginx", "readinessProbe": obj{"periodSeconds": 5}}, []string{"spec.readinessProbe", "a probe needs exactly one of exec, httpGet, tcpSocket or grpc"}},
		{"a probe with two handlers", obj{"image": "nginx", "livenessProbe": obj{"httpGet": obj{"port": 80}, "tcpSocket": obj{"port": 80}}}, []string{"spec.livenessProbe", "a probe needs exactly one of exec, httpGet, tcpSocket or grpc"}},
		{"a probe of another host", obj{"image": "nginx", "readinessProbe": obj{"httpGet": obj{"port": 80, "host": "169.254.169.254"}}}, []string{"spec.readinessProbe", "httpGet.host must not be set: a probe checks the pod itself"}},
		{"a TCP probe of another host", obj{"image": "nginx", "startupProbe": obj{"tcpSocket": obj{"port": 22, "host": "10.0.0.1"}}}, []string{"spec.startupProbe", "tcpSocket.host must not be set: a probe checks the pod itself"}},
		{"a liveness probe that must succeed twice", obj{"image": "nginx", "livenessProbe": obj{"tcpSocket": obj{"port": 80}, "successThreshold": 2}}, []string{"spec.livenessProbe", "successThreshold must be 1 for a livenessProbe"}},
		{"a volume without a source", obj{"image": "nginx", "volumes": []any{obj{"name": "v", "mountPath": "/v"}}}, []string{"spec.volumes[0]", "a volume needs exactly one of configMap, secret or emptyDir"}},
		{"a volume with two sources", obj{"image": "nginx", "volumes": []any{obj{"name": "v", "mountPath": "/v", "emptyDir": obj{}, "secret": obj{"secretName": "s"}}}}, []string{"spec.volumes[0]", "a volume needs exactly one of configMap, secret or emptyDir"}},
		{"a duplicate volume name", obj{"image": "nginx", "volumes": []any{obj{"name": "v", "mountPath": "/a", "emptyDir": obj{}}, obj{"name": "v", "mountPath": "/b", "emptyDir": obj{}}}}, []string{"spec.volumes[1]", "Duplicate value"}},
		{"a duplicate mount path", obj{"image": "nginx", "volumes": []any{obj{"name": "a", "mountPath": "/data", "emptyDir": obj{}}, obj{"name": "b", "mountPath": "/data", "emptyDir": obj{}}}}, []string{"spec.volumes", "each volume needs a mountPath of its own"}},
		{"a relative mount path", obj{"image": "nginx", "volumes": []any{obj{"name": "a", "mountPath": "data", "emptyDir": obj{}}}}, []string{"spec.volumes[0].mountPath", "should match '^/'"}},
		{"envFrom with both sources", obj{"image": "nginx", "envFrom": []any{obj{"configMapRef": obj{"name": "a"}, "secretRef": obj{"name": "b"}}}}, []string{"spec.envFrom", "each envFrom entry needs exactly one of configMapRef or secretRef"}},
		{"progressDeadlineSeconds 0", obj{"image": "nginx", "progressDeadlineSeconds": 0}, []string{"spec.progressDeadlineSeconds", "greater than or equal to 1"}},
		{"autoscaling min above max", obj{"image": "nginx", "autoscaling": obj{"minReplicas": 5, "maxReplicas": 2}}, []string{"spec.autoscaling", "maxReplicas must be at least minReplicas"}},
		{"autoscaling without maxReplicas", obj{"image": "nginx", "autoscaling": obj{"minReplicas": 2}}, []string{"spec.autoscaling.maxReplicas", "Required value"}},
		{"autoscaling above 1000", obj{"image": "nginx", "autoscaling": obj{"maxReplicas": 1001}}, []string{"spec.autoscaling.maxReplicas", "less than or equal to 1000"}},
		{"an unknown securityProfile", obj{"image": "nginx", "securityProfile": "baseline"}, []string{"spec.securityProfile", "Unsupported value"}},
		{"a podLabel the hook owns", obj{"image": "nginx", "podLabels": obj{"app.kubernetes.io/instance": "x"}}, []string{"spec.podLabels", "podLabels must not set app.kubernetes.io/name"}},
		{"pod-template-hash in podLabels", obj{"image": "nginx", "podLabels": obj{"pod-template-hash": "x"}}, []string{"spec.podLabels", "the hook sets them"}},
		{"a podAnnotation the hook owns", obj{"image": "nginx", "podAnnotations": obj{"webapp.example.com/config-hash": "x"}}, []string{"spec.podAnnotations", "podAnnotations must not set webapp.example.com/config-hash"}},
		{"a shutdown delay as long as the default grace period", obj{"image": "nginx", "shutdownDelaySeconds": 30}, []string{"spec.shutdownDelaySeconds", "must be less than terminationGracePeriodSeconds (30 when unset)"}},
		{"a shutdown delay longer than the grace period", obj{"image": "nginx", "shutdownDelaySeconds": 20, "terminationGracePeriodSeconds": 10}, []string{"spec.shutdownDelaySeconds", "must be less than terminationGracePeriodSeconds"}},
		{"a shutdown delay of 0", obj{"image": "nginx", "shutdownDelaySeconds": 0}, []string{"spec.shutdownDelaySeconds", "greater than or equal to 1"}},
		{"a toleration with an unknown operator", obj{"image": "nginx", "tolerations": []any{obj{"key": "k", "operator": "Like"}}}, []string{"spec.tolerations", "a toleration's operator must be Equal or Exists"}},
		{"a toleration with seconds but no NoExecute", obj{"image": "nginx", "tolerations": []any{obj{"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}}}, []string{"spec.tolerations", "needs effect NoExecute"}},
		{"a spread constraint with maxSkew 0", obj{"image": "nginx", "topologySpreadConstraints": []any{obj{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}}}, []string{"spec.topologySpreadConstraints", "maxSkew must be at least 1"}},
		{"a spread constraint with an unknown whenUnsatisfiable", obj{"image": "nginx", "topologySpreadConstraints": []any{obj{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes"}}}, []string{"spec.topologySpreadConstraints", "DoNotSchedule or ScheduleAnyway"}},
		{"a preStop hook calling another host", obj{"image": "nginx", "lifecycle": obj{"preStop": obj{"httpGet": obj{"port": 80, "host": "169.254.169.254"}}}}, []string{"spec.lifecycle", "lifecycle httpGet.host must not be set"}},
		{"a negative runAsUser", obj{"image": "nginx", "podSecurityContext": obj{"runAsUser": -1}}, []string{"spec.podSecurityContext", "must be at least 0"}},
		{"a Localhost seccomp profile without a name", obj{"image": "nginx", "securityContext": obj{"seccompProfile": obj{"type": "Localhost"}}}, []string{"spec.securityContext", "localhostProfile is set exactly when type is Localhost"}},
		{"an unknown procMount", obj{"image": "nginx", "securityContext": obj{"procMount": "Weird"}}, []string{"spec.securityContext", "procMount must be Default or Unmasked"}},
		{"a nodeSelector value too long for a label", obj{"image": "nginx", "nodeSelector": obj{"pool": strings.Repeat("x", 64)}}, []string{"spec.nodeSelector", "nodeSelector values must be label values"}},
		{"a podLabel key that is no label key", obj{"image": "nginx", "podLabels": obj{"not a key": "x"}}, []string{"spec.podLabels", "podLabels keys must be label keys"}},
		{"a toleration with Exists and a value", obj{"image": "nginx", "tolerations": []any{obj{"key": "k", "operator": "Exists", "value": "v"}}}, []string{"spec.tolerations", "operator Exists takes no value"}},
		{"a toleration without a key", obj{"image": "nginx", "tolerations": []any{obj{"operator": "Equal", "value": "v"}}}, []string{"spec.tolerations", "without a key needs operator Exists"}},
		{"node affinity with no term", obj{"image": "nginx", "affinity": obj{"nodeAffinity": obj{"requiredDuringSchedulingIgnoredDuringExecution": obj{"nodeSelectorTerms": []any{}}}}}, []string{"spec.affinity", "needs at least one node selector term"}},
		{"a preference of weight 0", obj{"image": "nginx", "affinity": obj{"nodeAffinity": obj{"preferredDuringSchedulingIgnoredDuringExecution": []any{obj{"weight": 0, "preference": obj{}}}}}}, []string{"spec.affinity", "weight must be between 1 and 100"}},
		{"pod anti-affinity without a topologyKey", obj{"image": "nginx", "affinity": obj{"podAntiAffinity": obj{"requiredDuringSchedulingIgnoredDuringExecution": []any{obj{"topologyKey": ""}}}}}, []string{"spec.affinity", "podAntiAffinity term needs a topologyKey"}},
		{"a spread constraint with minDomains and ScheduleAnyway", obj{"image": "nginx", "topologySpreadConstraints": []any{obj{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2}}}, []string{"spec.topologySpreadConstraints", "needs whenUnsatisfiable DoNotSchedule"}},
		{"a bad priorityClassName", obj{"image": "nginx", "priorityClassName": "High_Priority"}, []string{"spec.priorityClassName", "should match"}},
		{"a canary without steps", obj{"image": "nginx", "rollout": obj{"canary": obj{"steps": []any{}}}}, []string{"spec.rollout.canary.steps", "should have at least 1 items"}},
		{"a canary step of weight 0 without headerRoute", obj{"image": "nginx", "rollout": obj{"canary": obj{"steps": []any{obj{"weight": 0}}}}}, []string{"spec.rollout.canary.steps", "a step of weight 0 needs headerRoute"}},
		{"a canary step of weight -1", obj{"image": "nginx", "rollout": obj{"canary": obj{"steps": []any{obj{"weight": -1}}}}}, []string{"spec.rollout.canary.steps[0].weight", "greater than or equal to 0"}},
		{"canary weights that fall", obj{"image": "nginx", "rollout": obj{"canary": obj{"steps": []any{obj{"weight": 50}, obj{"weight": 20}}}}}, []string{"spec.rollout.canary.steps", "the steps' weights must rise strictly"}},
		{"a canary pause of a year", obj{"image": "nginx", "rollout": obj{"canary": obj{"steps": []any{obj{"weight": 5, "pauseSeconds": 31536000}}}}}, []string{"spec.rollout.canary.steps[0].pauseSeconds", "less than or equal to 604800"}},
		{"maxFailedChecks 0", obj{"image": "nginx", "rollout": obj{"canary": obj{"steps": []any{obj{"weight": 5}}, "maxFailedChecks": 0}}}, []string{"spec.rollout.canary.maxFailedChecks", "greater than or equal to 1"}},
		{"the canary's label in podLabels", obj{"image": "nginx", "podLabels": obj{"webapp.example.com/track": "canary"}, "rollout": obj{"canary": obj{"steps": []any{obj{"weight": 5}}}}}, []string{"spec.podLabels", "podLabels must not set webapp.example.com/track with rollout.canary"}},
		{"a preStop hook with two actions", obj{"image": "nginx", "lifecycle": obj{"preStop": obj{"sleep": obj{"seconds": 1}, "exec": obj{"command": []any{"true"}}}}}, []string{"spec.lifecycle", "preStop needs exactly one of exec, httpGet, tcpSocket or sleep"}},
		{"a preStop sleep longer than the grace period", obj{"image": "nginx", "lifecycle": obj{"preStop": obj{"sleep": obj{"seconds": 40}}}}, []string{"spec.lifecycle", "a lifecycle preStop sleep must be between 0 and terminationGracePeriodSeconds"}},
		{"a postStart hook calling another host", obj{"image": "nginx", "lifecycle": obj{"postStart": obj{"tcpSocket": obj{"port": 22, "host": "10.0.0.1"}}}}, []string{"spec.lifecycle", "lifecycle tcpSocket.host must not be set"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.create(webApp(ns, fmt.Sprintf("invalid-%d", i), tt.spec))
			e, ok := err.(*apiError)
			if !ok || e.Code != http.StatusUnprocessableEntity {
				t.Fatalf("create = %v; want 422 Invalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message = %q; want it to contain %q", e.Message, w)
				}
			}
		})
	}

	t.Run("printer columns", func(t *testing.T) {
		p, _ := client.path("example.com/v1", "WebApp", ns, "")
		req, _ := http.NewRequest("GET", client.server+p, nil)
		req.Header.Set("Authorization", "Bearer "+client.token)
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
		resp, err := client.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var table struct {
			ColumnDefinitions []struct{ Name string }
		}
		json.NewDecoder(resp.Body).Decode(&table)
		var got []string
		for _, c := range table.ColumnDefinitions {
			got = append(got, c.Name)
		}
		if want := []string{"Name", "Ready", "Phase", "Reason", "URL", "Canary", "Analysis", "Age", "Image", "Message"}; !slices.Equal(got, want) {
			t.Errorf("columns = %v; want %v", got, want)
		}
	})

	t.Run("field descriptions", func(t *testing.T) {
		b, err := client.do("GET", "/openapi/v3/apis/example.com/v1", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		doc, _ := decode(b)
		spec := field(doc, "components", "schemas", "com.example.v1.WebApp", "properties", "spec")
		props, _ := field(spec, "properties").(map[string]any)
		if want := reflect.TypeFor[webappv1.WebAppSpec]().NumField(); len(props) != want {
			t.Fatalf("spec has %d published fields; want the %d of webappv1.WebAppSpec", len(props), want)
		}
		for name, p := range props {
			if d, _ := field(p, "description").(string); d == "" {
				t.Errorf("spec.%s has no description in the published OpenAPI", name)
			}
		}
	})
}

// TestManifests dry-runs every manifest under metacontroller/base against the real apiserver,
// and every object the secure overlay renders to (with kubectl kustomize).
func TestManifests(t *testing.T) {
	requireCluster(t)
	if _, err := client.create(obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": "webapp-system"}}); err != nil {
		if e, ok := err.(*apiError); !ok || e.Code != http.StatusConflict {
			t.Fatal(err)
		}
	}
	dryRun := func(t *testing.T, source string, docs []obj) {
		for _, d := range docs {
			apiVersion, kind, _, name := identity(d)
			t.Run(source+"/"+kind+"/"+name, func(t *testing.T) {
				if strings.HasPrefix(apiVersion, "metacontroller.k8s.io/") {
					if _, err := os.Stat(metacontrollerCRDs); err != nil {
						t.Skip("no " + metacontrollerCRDs + " beside the checkout: Metacontroller's CRDs are shared material, not part of the repository")
					}
				}
				if _, err := client.apply(d, "webapp-e2e", true); err != nil {
					t.Error(err)
				}
			})
		}
	}
	files, _ := filepath.Glob("../metacontroller/base/*.yaml")
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := yamlDocs(data)
		if err != nil {
			t.Fatal(err)
		}
		dryRun(t, filepath.Base(f), docs)
	}
	t.Run("cert-manager overlay", func(t *testing.T) {
		installCertManagerCRDs(t)
		docs := renderKustomize(t, "../metacontroller/cert-manager")
		var certs []string
		for _, d := range docs {
			if _, kind, _, name := identity(d); kind == "Certificate" {
				certs = append(certs, name)
				if name == "webapp-hook-tls" && !slices.Contains(field(d, "spec", "dnsNames").([]any), any("webapp-hook.webapp-system")) {
					t.Errorf("serving certificate dnsNames %v; want the name Metacontroller calls, webapp-hook.webapp-system", field(d, "spec", "dnsNames"))
				}
			}
		}
		if !slices.Equal(certs, []string{"webapp-hook-ca", "webapp-hook-tls"}) {
			t.Errorf("Certificates %v; want the CA and the serving certificate", certs)
		}
		dryRun(t, "cert-manager", docs)
	})
	t.Run("gateway-api component", func(t *testing.T) {
		var cc obj
		for _, d := range renderKustomize(t, "testdata/gateway-api") {
			if _, kind, _, _ := identity(d); kind == "CompositeController" {
				cc = d
			}
		}
		children, _ := field(cc, "spec", "childResources").([]any)
		if n := len(children); n == 0 || field(children[n-1], "resource") != "httproutes" || field(children[n-1], "updateStrategy", "method") != "InPlace" {
			t.Fatalf("childResources %v; want httproutes last, updated InPlace", children)
		}
		dryRun(t, "gateway-api", []obj{cc})
	})
	t.Run("secure overlay", func(t *testing.T) {
		docs := secureOverlay(t)
		for _, d := range docs {
			if _, kind, _, _ := identity(d); kind == "Service" {
				ports, _ := field(d, "spec", "ports").([]any)
				if len(ports) != 1 || field(ports[0], "port") != float64(443) {
					t.Errorf("secure Service ports = %v; want 443 only", ports)
				}
			}
		}
		dryRun(t, "secure", docs)
	})
}

// renderKustomize returns the objects kustomize directory dir renders to, with kubectl's
// built-in kustomize (kubectl is built into bin/ with the control plane).
func renderKustomize(t testing.TB, dir string) []obj {
	t.Helper()
	out, err := exec.Command(filepath.Join(cluster.bin, "kubectl"), "kustomize", dir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", dir, err)
	}
	docs, err := yamlDocs(out)
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// secureOverlay returns the objects metacontroller/secure renders to.
func secureOverlay(t *testing.T) []obj {
	t.Helper()
	return renderKustomize(t, "../metacontroller/secure")
}

// TestAnswers sends every golden answer of the sync and finalize tables, and every example's
// answer, to the apiserver: each child must pass a server-side dry-run apply, and each status must
// be stored by the WebApp status subresource exactly as sent, so its shape matches the CRD.
func TestAnswers(t *testing.T) {
	requireCluster(t)
	var files []string // every answer, however deep a table's subtests put it
	err := filepath.WalkDir("../sync/testdata/answers", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	examples, _ := filepath.Glob("../examples/*.response.json")
	files = append(files, examples...)
	if len(files) < 40 {
		t.Fatalf("found %d answers; want the sync tables and the examples", len(files))
	}
	parent, err := client.apply(webApp("default", "hello", obj{"image": "nginx:1.27", "replicas": 3, "port": 8080}), "webapp-e2e", false)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel("..", f)
		t.Run(rel, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var answer struct {
				Status   map[string]any
				Children []obj
			}
			if err := json.Unmarshal(b, &answer); err != nil {
				t.Fatal(err)
			}
			for _, c := range answer.Children {
				if _, err := client.apply(c, "metacontroller", true); err != nil {
					t.Errorf("child rejected: %v", err)
				}
			}
			stored, err := client.updateStatus(parent, answer.Status)
			if err != nil {
				t.Fatalf("status rejected: %v", err)
			}
			if got, want := canonical(t, stored["status"]), canonical(t, answer.Status); got != want {
				t.Errorf("stored status differs from the answer, so the CRD pruned or changed it:\nstored %s\nsent   %s", got, want)
			}
		})
	}
}

func canonical(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// call sends one hook request, built from observed objects with v2 keys, to the real handler,
// with the related objects the customize hook asks for, as Metacontroller sends them.
func call(t *testing.T, path string, parent obj, children []obj) hooktest.Answer {
	t.Helper()
	groups := map[string]map[string]obj{}
	for _, k := range childKinds {
		groups[k.kind+"."+k.apiVersion] = map[string]obj{}
	}
	for _, c := range children {
		apiVersion, kind, namespace, name := identity(c)
		groups[kind+"."+apiVersion][namespace+"/"+name] = c
	}
	body, _ := json.Marshal(obj{"controller": obj{}, "parent": parent, "children": groups, "related": related(t, parent), "finalizing": path == "/finalize"})
	if dir := os.Getenv("E2E_RECORD_DIR"); dir != "" {
		// Keep the requests, to take realistic benchmark inputs from a real apiserver.
		recorded++
		name := fmt.Sprintf("%s-%03d%s.json", strings.ReplaceAll(t.Name(), "/", "_"), recorded, strings.ReplaceAll(path, "/", "."))
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.Post(hook.URL+path, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s = %d %s", path, resp.StatusCode, out)
	}
	var answer hooktest.Answer
	if err := json.Unmarshal(out, &answer); err != nil {
		t.Fatal(err)
	}
	return answer
}

// childKinds are the kinds of the CompositeController's childResources, in its order.
// The stand-in declares them all, as a CompositeController with the metacontroller/gateway-api
// component does, the HTTPRoute last.
var childKinds = []struct{ apiVersion, kind string }{
	{"apps/v1", "Deployment"}, {"v1", "Service"}, {"networking.k8s.io/v1", "Ingress"}, {"policy/v1", "PodDisruptionBudget"},
	{"autoscaling/v2", "HorizontalPodAutoscaler"}, {"gateway.networking.k8s.io/v1", "HTTPRoute"},
}

// observed returns the WebApp and its children as they are now.
func observed(t *testing.T, namespace, name string) (obj, []obj) {
	t.Helper()
	parent, err := client.get("example.com/v1", "WebApp", namespace, name)
	if err != nil || parent == nil {
		t.Fatalf("get WebApp %s/%s: %v", namespace, name, err)
	}
	var children []obj
	for _, kind := range childKinds {
		c, err := client.get(kind.apiVersion, kind.kind, namespace, name)
		if err != nil {
			t.Fatal(err)
		}
		if c != nil {
			children = append(children, c)
		}
	}
	return parent, children
}

// reconcile does what Metacontroller does once: send the observed state to sync, apply the
// desired children, delete the omitted ones, and write the status.
func reconcile(t *testing.T, path, namespace, name string) hooktest.Answer {
	t.Helper()
	parent, children := observed(t, namespace, name)
	answer := call(t, path, parent, children)
	desired := map[string]bool{}
	for _, c := range answer.Children {
		if _, err := client.apply(c, "metacontroller", false); err != nil {
			t.Fatal(err)
		}
		_, kind, _, n := identity(c)
		desired[kind+"/"+n] = true
	}
	for _, c := range children {
		apiVersion, kind, ns, n := identity(c)
		if !desired[kind+"/"+n] {
			p, _ := client.path(apiVersion, kind, ns, n)
			if _, err := client.do("DELETE", p, "", nil); err != nil {
				t.Fatalf("delete %s %s: %v", kind, n, err)
			}
		}
	}
	if _, err := client.updateStatus(parent, answer.Status); err != nil {
		t.Fatalf("status: %v", err)
	}
	return answer
}

// TestFixedPoint guards against endless sync loops: after the children are applied and read back,
// syncing again must ask for exactly the same children, and applying them must change nothing.
func TestFixedPoint(t *testing.T) {
	requireCluster(t)
	tests := []struct {
		name string
		spec obj
	}{
		{"every optional field", obj{
			"image": "registry.example.com/team/app:v1.2.3", "replicas": 2, "port": 8080,
			"env": []any{
				obj{"name": "GREETING", "value": "hello"},
				obj{"name": "POD_IP", "valueFrom": obj{"fieldRef": obj{"fieldPath": "status.podIP"}}},
				obj{"name": "LIMIT", "valueFrom": obj{"resourceFieldRef": obj{"resource": "limits.memory"}}},
			},
			"resources": obj{"requests": obj{"cpu": "100m", "memory": "64Mi"}, "limits": obj{"memory": "128Mi"}},
		}},
		{"no optional field", obj{"image": "nginx"}},
		{"every field of examples/full.yaml", fullSpec(t)},
		{"a route to two Gateways", obj{"image": "nginx", "port": 8080, "route": obj{"hostnames": []any{"a.example.com", "*.b.example.com"}, "path": "/api", "pathType": "Exact",
			"parentRefs": []any{obj{"name": "public", "sectionName": "https"}, obj{"name": "shared", "namespace": "infra", "port": 443}}}}},
		{"autoscaling", obj{"image": "nginx", "port": 8080, "resources": obj{"requests": obj{"cpu": "100m"}},
			"autoscaling": obj{"minReplicas": 2, "maxReplicas": 5, "targetMemoryUtilizationPercentage": 75}, "disruptionBudget": obj{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ns := client.namespace(t, "fixed")
			if _, err := client.create(webApp(ns, "app", tt.spec)); err != nil {
				t.Fatal(err)
			}
			first := reconcile(t, "/sync", ns, "app")
			parent, stored := observed(t, ns, "app")
			if len(stored) != len(first.Children) {
				t.Fatalf("%d children stored; want %d", len(stored), len(first.Children))
			}
			second := call(t, "/sync", parent, stored)
			if got, want := canonical(t, second.Children), canonical(t, first.Children); got != want {
				t.Fatalf("second sync asks for different children:\n%s\nwant\n%s", got, want)
			}
			for i, c := range second.Children {
				after, err := client.apply(c, "metacontroller", true)
				if err != nil {
					t.Fatal(err)
				}
				before := stored[i]
				_, kind, _, _ := identity(before)
				if field(after, "metadata", "generation") != field(before, "metadata", "generation") {
					t.Errorf("%s generation %v -> %v: applying the same answer again changed the object", kind, field(before, "metadata", "generation"), field(after, "metadata", "generation"))
				}
				if got, want := canonical(t, after["spec"]), canonical(t, before["spec"]); got != want {
					t.Errorf("%s spec changed:\n%s\nwas\n%s", kind, got, want)
				}
				if got, want := ownedFields(t, after), ownedFields(t, before); got != want {
					t.Errorf("%s managed fields changed:\n%s\nwas\n%s", kind, got, want)
				}
			}
		})
	}
}

// fullSpec is the spec of examples/full.yaml, a WebApp using every field.
func fullSpec(t *testing.T) obj {
	t.Helper()
	b, err := os.ReadFile("../examples/full.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var wa obj
	if err := yaml.Unmarshal(b, &wa); err != nil {
		t.Fatal(err)
	}
	return wa["spec"].(map[string]any)
}

// ownedFields is the metacontroller field manager's entry, without its timestamp.
func ownedFields(t *testing.T, o obj) string {
	entries, _ := field(o, "metadata", "managedFields").([]any)
	for _, e := range entries {
		if field(e, "manager") == "metacontroller" {
			m := e.(map[string]any)
			delete(m, "time")
			return canonical(t, m)
		}
	}
	return ""
}

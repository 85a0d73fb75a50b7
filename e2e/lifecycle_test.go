//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// waitStatus waits until the WebApp's status, written by Metacontroller for its current
// generation, satisfies ok, and returns it.
func waitStatus(t *testing.T, ns, name, what string, timeout time.Duration, ok func(webappv1.WebAppStatus) bool) webappv1.WebAppStatus {
	t.Helper()
	var st webappv1.WebAppStatus
	waitFor(t, ns+"/"+name+": "+what, timeout, func() (bool, error) {
		wa, err := client.get("example.com/v1", "WebApp", ns, name)
		if err != nil || wa == nil {
			return false, err
		}
		st = webappv1.WebAppStatus{}
		if err := roundTrip(wa["status"], &st); err != nil {
			return false, err
		}
		gen, _ := field(wa, "metadata", "generation").(float64)
		return st.ObservedGeneration == int64(gen) && ok(st), nil
	})
	return st
}

func phaseIs(phase webappv1.Phase) func(webappv1.WebAppStatus) bool {
	return func(st webappv1.WebAppStatus) bool { return st.Phase == phase }
}

// patchSpec merge-patches a WebApp's spec, as kubectl patch --type=merge does.
func patchSpec(t *testing.T, ns, name string, spec obj) {
	t.Helper()
	p, _ := client.path("example.com/v1", "WebApp", ns, name)
	if _, err := client.do("PATCH", p, "application/merge-patch+json", obj{"spec": spec}); err != nil {
		t.Fatal(err)
	}
}

// versions maps "Kind" to the resourceVersion of each of the WebApp's children that exists.
func versions(t *testing.T, ns, name string) map[string]any {
	t.Helper()
	out := map[string]any{}
	for _, k := range childKinds {
		c, err := client.get(k.apiVersion, k.kind, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if c != nil {
			out[k.kind] = field(c, "metadata", "resourceVersion")
		}
	}
	return out
}

// childrenOf lists the kinds of the WebApp's children that exist, in childKinds order.
func childrenOf(t *testing.T, ns, name string) []string {
	t.Helper()
	var kinds []string
	for _, k := range childKinds {
		if c, err := client.get(k.apiVersion, k.kind, ns, name); err != nil {
			t.Fatal(err)
		} else if c != nil {
			kinds = append(kinds, k.kind)
		}
	}
	return kinds
}

// webAppStatus reads a WebApp's status as the hook wrote it through Metacontroller.
func webAppStatus(t *testing.T, ns, name string) webappv1.WebAppStatus {
	t.Helper()
	var st webappv1.WebAppStatus
	if err := roundTrip(mustGet(t, "example.com/v1", "WebApp", ns, name)["status"], &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// getWebApp returns the row kubectl get webapps prints for the WebApp, by column header (NAME,
// READY, …; with wide, also IMAGE and MESSAGE): the printer columns as a user sees them.
func getWebApp(t *testing.T, ns, name string, wide bool) map[string]string {
	t.Helper()
	args := []string{"get", "webapps", "-n", ns, name}
	if wide {
		args = append(args, "-o", "wide")
	}
	lines := strings.Split(kubectl(t, args...), "\n")
	if len(lines) != 2 {
		t.Fatalf("kubectl get webapps printed %q; want a header and one row", lines)
	}
	// Columns are aligned: each value starts where its header does, and the last runs to the end.
	header, row := lines[0], lines[1]
	var starts []int
	var names []string
	for i := 0; i < len(header); i++ {
		if header[i] != ' ' && (i == 0 || header[i-1] == ' ') {
			starts = append(starts, i)
			end := strings.IndexByte(header[i:], ' ')
			if end < 0 {
				end = len(header) - i
			}
			names = append(names, header[i:i+end])
		}
	}
	cols := map[string]string{}
	for i, start := range starts {
		end := len(row)
		if i+1 < len(starts) && starts[i+1] < end {
			end = starts[i+1]
		}
		if start < len(row) {
			cols[names[i]] = strings.TrimSpace(row[start:end])
		}
	}
	return cols
}

// realInstall starts the hook and the real Metacontroller for the install that kustomize dir
// renders. The CompositeController resyncs every 5 s instead of 60 s, so that an idle period of a
// few seconds covers resyncs.
func realInstall(t *testing.T, dir string) *hookProcess {
	t.Helper()
	requireMetacontroller(t)
	in := renderInstall(t, dir)
	hook := startHook(t, in)
	cc := in.compositeController(t, hook.url())
	cc["spec"].(map[string]any)["resyncPeriodSeconds"] = 5
	startMetacontroller(t, cc, 5)
	return hook
}

// TestMetacontroller runs the real Metacontroller v4.17.2 against the control plane, with the
// CompositeController that metacontroller/ renders and its hooks pointed at the real hook binary
// on loopback, started with the flags of its Deployment there, through the moments a user lives
// through. The subtests share one Metacontroller and run in order.
func TestMetacontroller(t *testing.T) {
	requireCluster(t)
	hook := realInstall(t, "metacontroller")
	ns := client.namespace(t, "mc")

	t.Run("create to Ready", func(t *testing.T) {
		if _, err := client.create(webApp(ns, "hello", obj{"image": "nginx:1.27", "replicas": 2, "port": 8080})); err != nil {
			t.Fatal(err)
		}
		st := waitStatus(t, ns, "hello", "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady))
		if st.ReadyReplicas != 2 || st.AvailableReplicas != 2 || !st.Ready || st.URL != "http://hello."+ns+".svc" {
			t.Errorf("status = %+v; want 2 ready and available, at the Service's address", st)
		}
		for _, k := range childKinds[:2] {
			c := mustGet(t, k.apiVersion, k.kind, ns, "hello")
			if owner := field(c, "metadata", "ownerReferences", 0, "kind"); owner != "WebApp" {
				t.Errorf("%s owner = %v; want the WebApp", k.kind, owner)
			}
		}
	})

	t.Run("idle: no child rewritten", func(t *testing.T) {
		before := versions(t, ns, "hello")
		calls := hook.calls()["sync"]
		time.Sleep(12 * time.Second) // two resyncs or more
		if got := hook.calls()["sync"]; got < calls+2 {
			t.Errorf("%v sync calls while idle; want the resyncs to reach the hook", got-calls)
		}
		if after := versions(t, ns, "hello"); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("children's resourceVersions %v -> %v while idle; want no rewrite", before, after)
		}
	})

	t.Run("scale", func(t *testing.T) {
		patchSpec(t, ns, "hello", obj{"replicas": 3})
		st := waitStatus(t, ns, "hello", "3 ready", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Phase == webappv1.PhaseReady && st.ReadyReplicas == 3
		})
		if got := field(mustGet(t, "apps/v1", "Deployment", ns, "hello"), "spec", "replicas"); got != float64(3) {
			t.Errorf("Deployment replicas = %v; want 3 (status %+v)", got, st)
		}
	})

	t.Run("image rollout: not Ready while it runs", func(t *testing.T) {
		stop := client.record(t, "example.com/v1", "WebApp", ns, "hello")
		patchSpec(t, ns, "hello", obj{"image": "nginx:1.28"})
		generation := field(mustGet(t, "example.com/v1", "WebApp", ns, "hello"), "metadata", "generation").(float64)
		waitStatus(t, ns, "hello", "Ready on the new image", 90*time.Second, phaseIs(webappv1.PhaseReady))
		dep := mustGet(t, "apps/v1", "Deployment", ns, "hello")
		if field(dep, "spec", "template", "spec", "containers", 0, "image") != "nginx:1.28" || field(dep, "status", "updatedReplicas") != float64(3) {
			t.Errorf("Ready with the Deployment at %v", field(dep, "status"))
		}
		// Every status Metacontroller wrote for the new generation, in order: never Ready before
		// the rollout, and not Ready while it ran.
		var phases []string
		for _, e := range stop() {
			var st webappv1.WebAppStatus
			roundTrip(e.Object["status"], &st)
			if st.ObservedGeneration != int64(generation) {
				continue
			}
			if p := fmt.Sprintf("%s ready=%v", st.Phase, st.Ready); len(phases) == 0 || phases[len(phases)-1] != p {
				phases = append(phases, p)
			}
		}
		if len(phases) < 2 || !strings.HasPrefix(phases[0], "Progressing ready=false") || phases[len(phases)-1] != "Ready ready=true" {
			t.Errorf("statuses written for the new generation %q; want Progressing and not ready first, Ready last", phases)
		}
	})

	t.Run("an invalid spec keeps every child", func(t *testing.T) {
		// The Deployment controller may still be writing the last rollout's status (the old
		// ReplicaSet scaled away, Progressing's reason), which moves its resourceVersion: wait
		// for it to be done, so that only a rewrite can move it.
		waitFor(t, "the Deployment's rollout settled", 60*time.Second, func() (bool, error) {
			d := mustGet(t, "apps/v1", "Deployment", ns, "hello")
			want := field(d, "spec", "replicas")
			progressing, _ := field(d, "status", "conditions").([]any)
			reason := ""
			for _, c := range progressing {
				if field(c, "type") == "Progressing" {
					reason, _ = field(c, "reason").(string)
				}
			}
			return field(d, "status", "observedGeneration") == field(d, "metadata", "generation") &&
				field(d, "status", "replicas") == want && field(d, "status", "updatedReplicas") == want &&
				field(d, "status", "availableReplicas") == want && reason == "NewReplicaSetAvailable", nil
		})
		before := versions(t, ns, "hello")
		patchSpec(t, ns, "hello", obj{"image": "nginx:"}) // valid for the schema, not for the hook
		st := waitStatus(t, ns, "hello", "Invalid", 30*time.Second, phaseIs(webappv1.PhaseInvalid))
		if !strings.Contains(st.Message, "spec.image") {
			t.Errorf("message %q; want it to name spec.image", st.Message)
		}
		time.Sleep(6 * time.Second) // a resync more
		if after := versions(t, ns, "hello"); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("children %v -> %v under an invalid spec; want each kept as it was", before, after)
		}
		patchSpec(t, ns, "hello", obj{"image": "nginx:1.28"})
		waitStatus(t, ns, "hello", "Ready again", 60*time.Second, phaseIs(webappv1.PhaseReady))
	})

	t.Run("the hook killed and restarted loses nothing", func(t *testing.T) {
		before := versions(t, ns, "hello")
		hook.stop(syscall.SIGKILL)
		patchSpec(t, ns, "hello", obj{"replicas": 2})
		time.Sleep(6 * time.Second) // Metacontroller's calls fail meanwhile
		if after := versions(t, ns, "hello"); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("children %v -> %v while the hook was down; want them untouched", before, after)
		}
		hook.restart(t)
		st := waitStatus(t, ns, "hello", "Ready with 2", 90*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Phase == webappv1.PhaseReady && st.Replicas == 2
		})
		if st.AvailableReplicas != 2 {
			t.Errorf("status %+v; want 2 available", st)
		}
	})

	t.Run("Ingress and url", func(t *testing.T) {
		if _, err := client.create(webApp(ns, "web", obj{"image": "nginx:1.27", "replicas": 2, "port": 8080, "ingress": obj{"host": "web.example.com"}})); err != nil {
			t.Fatal(err)
		}
		st := waitStatus(t, ns, "web", "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady))
		if st.URL != "http://web.example.com/" {
			t.Errorf("url = %q; want the Ingress's", st.URL)
		}
		ing := mustGet(t, "networking.k8s.io/v1", "Ingress", ns, "web")
		if host := field(ing, "spec", "rules", 0, "host"); host != "web.example.com" {
			t.Errorf("Ingress host = %v", host)
		}
	})

	t.Run("a route without the gateway-api component: Ready, no HTTPRoute, Routed says why", func(t *testing.T) {
		spec := obj{"image": "nginx:1.27", "replicas": 1, "port": 8080, "route": obj{"hostnames": []any{"routed.example.com"}, "parentRefs": []any{obj{"name": "public"}}}}
		if _, err := client.create(webApp(ns, "routed", spec)); err != nil {
			t.Fatal(err)
		}
		st := waitStatus(t, ns, "routed", "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady))
		if got, msg := routedCondition(st); got != "False/GatewayAPINotEnabled" || !strings.Contains(msg, "metacontroller/gateway-api") {
			t.Errorf("Routed = %s %q; want False/GatewayAPINotEnabled naming the component", got, msg)
		}
		if kinds := childrenOf(t, ns, "routed"); strings.Join(kinds, ",") != "Deployment,Service" {
			t.Errorf("children = %v; want the Deployment and the Service, and no HTTPRoute", kinds)
		}
		if st.URL != "http://routed."+ns+".svc" {
			t.Errorf("url = %q; want the Service's address", st.URL)
		}
	})

	t.Run("PodDisruptionBudget on and off", func(t *testing.T) {
		patchSpec(t, ns, "web", obj{"disruptionBudget": obj{"maxUnavailable": 1}})
		waitFor(t, "the PodDisruptionBudget", 30*time.Second, func() (bool, error) {
			pdb, err := client.get("policy/v1", "PodDisruptionBudget", ns, "web")
			return pdb != nil && field(pdb, "status", "expectedPods") == float64(2), err
		})
		patchSpec(t, ns, "web", obj{"disruptionBudget": nil})
		waitFor(t, "the PodDisruptionBudget gone", 30*time.Second, func() (bool, error) {
			pdb, err := client.get("policy/v1", "PodDisruptionBudget", ns, "web")
			return pdb == nil, err
		})
	})

	t.Run("autoscaling hands the count over and back", func(t *testing.T) {
		spec := obj{"image": "nginx:1.27", "replicas": 3, "port": 8080, "resources": obj{"requests": obj{"cpu": "100m"}},
			"autoscaling": obj{"minReplicas": 2, "maxReplicas": 5}}
		if _, err := client.create(webApp(ns, "auto", spec)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the HorizontalPodAutoscaler and minReplicas", 60*time.Second, func() (bool, error) {
			hpa, err := client.get("autoscaling/v2", "HorizontalPodAutoscaler", ns, "auto")
			return hpa != nil && replicasOf(t, ns, "auto") == float64(2), err
		})
		// The autoscaler scales the Deployment through its scale subresource; the count stays.
		p, _ := client.path("apps/v1", "Deployment", ns, "auto")
		if _, err := client.do("PATCH", p+"/scale", "application/merge-patch+json", obj{"spec": obj{"replicas": 4}}); err != nil {
			t.Fatal(err)
		}
		// The real HPA controller finds no metrics API here and says so; the WebApp passes it on.
		st := waitStatus(t, ns, "auto", "the HorizontalPodAutoscaler's report", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			for _, c := range st.Conditions {
				if c.Type == webappv1.ConditionAutoscaling && c.Reason != webappv1.ReasonAutoscalerMissing && c.Reason != webappv1.ReasonAutoscalerPending {
					return true
				}
			}
			return false
		})
		for _, c := range st.Conditions {
			if c.Type == webappv1.ConditionAutoscaling && (c.Status != "False" || !strings.Contains(st.Message, "cannot scale")) {
				t.Errorf("Autoscaling condition %+v, message %q; want False, saying why it cannot scale", c, st.Message)
			}
		}
		time.Sleep(6 * time.Second) // resyncs
		if got := replicasOf(t, ns, "auto"); got != float64(4) {
			t.Errorf("Deployment replicas = %v after resyncs; want the autoscaler's 4, kept", got)
		}
		// kubectl get webapps says 4 are desired, as the autoscaler set, never spec.replicas (3).
		waitStatus(t, ns, "auto", "4 ready of 4 desired", 60*time.Second, func(st webappv1.WebAppStatus) bool { return st.ReadyOfDesired == "4/4" })
		if row := getWebApp(t, ns, "auto", false); row["READY"] != "4/4" || row["PHASE"] != "Ready" {
			t.Errorf("kubectl get webapps auto = %v; want READY 4/4, the autoscaler's count, and PHASE Ready", row)
		}
		patchSpec(t, ns, "auto", obj{"autoscaling": nil})
		waitFor(t, "spec.replicas back in charge, the HorizontalPodAutoscaler gone", 60*time.Second, func() (bool, error) {
			hpa, err := client.get("autoscaling/v2", "HorizontalPodAutoscaler", ns, "auto")
			return hpa == nil && replicasOf(t, ns, "auto") == float64(3), err
		})

		// kubectl scale goes through the WebApp's scale subresource to spec.replicas.
		kubectl(t, "scale", "-n", ns, "webapp/auto", "--replicas=5")
		waitStatus(t, ns, "auto", "5 replicas through the WebApp's /scale", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Replicas == 5 && replicasOf(t, ns, "auto") == float64(5)
		})
		var scale struct {
			Spec   struct{ Replicas int32 }
			Status struct {
				Replicas int32
				Selector string
			}
		}
		raw := kubectl(t, "get", "--raw", "/apis/example.com/v1/namespaces/"+ns+"/webapps/auto/scale")
		if err := json.Unmarshal([]byte(raw), &scale); err != nil {
			t.Fatalf("%v: %s", err, raw)
		}
		if want := "app.kubernetes.io/instance=auto,app.kubernetes.io/managed-by=webapp-hook,app.kubernetes.io/name=webapp"; scale.Spec.Replicas != 5 || scale.Status.Replicas != 5 || scale.Status.Selector != want {
			t.Errorf("WebApp /scale = %+v; want spec and status replicas 5 and the selector %q", scale, want)
		}
	})

	t.Run("config rollout", func(t *testing.T) {
		cm := obj{"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj{"name": "app-config", "namespace": ns}, "data": obj{"LEVEL": "info"}}
		if _, err := client.create(cm); err != nil {
			t.Fatal(err)
		}
		if _, err := client.create(webApp(ns, "conf", obj{"image": "nginx:1.27", "replicas": 2, "port": 8080,
			"envFrom": []any{obj{"configMapRef": obj{"name": "app-config"}}}})); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, ns, "conf", "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady))
		configHash := func() any {
			return field(mustGet(t, "apps/v1", "Deployment", ns, "conf"), "spec", "template", "metadata", "annotations", webappv1.AnnotationConfigHash)
		}
		hash := configHash()
		if hash == nil {
			t.Fatal("no config hash on the pod template")
		}
		cp, _ := client.path("v1", "ConfigMap", ns, "app-config")
		if _, err := client.do("PATCH", cp, "application/merge-patch+json", obj{"metadata": obj{"labels": obj{"team": "shop"}}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(6 * time.Second)
		if got := configHash(); got != hash {
			t.Errorf("config hash %v -> %v after a label change; want no rollout", hash, got)
		}
		if _, err := client.do("PATCH", cp, "application/merge-patch+json", obj{"data": obj{"LEVEL": "debug"}}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "a new config hash", 30*time.Second, func() (bool, error) { return configHash() != hash, nil })
		waitStatus(t, ns, "conf", "Ready after the config rollout", 90*time.Second, phaseIs(webappv1.PhaseReady))

		// The ConfigMap goes: the Deployment is left as it is, and the WebApp says why.
		generation := field(mustGet(t, "apps/v1", "Deployment", ns, "conf"), "metadata", "generation")
		if _, err := client.do("DELETE", cp, "", nil); err != nil {
			t.Fatal(err)
		}
		patchSpec(t, ns, "conf", obj{"image": "nginx:1.29"})
		st := waitStatus(t, ns, "conf", "ConfigMapMissing", 30*time.Second, func(st webappv1.WebAppStatus) bool {
			r, _ := readyCondition(st)
			return r == webappv1.ReasonConfigMapMissing
		})
		dep := mustGet(t, "apps/v1", "Deployment", ns, "conf")
		if st.Phase != webappv1.PhaseDegraded || field(dep, "metadata", "generation") != generation || field(dep, "spec", "template", "spec", "containers", 0, "image") != "nginx:1.27" {
			t.Errorf("phase %s, Deployment generation %v (was %v), image %v; want Degraded and the Deployment as it was", st.Phase, field(dep, "metadata", "generation"), generation, field(dep, "spec", "template", "spec", "containers", 0, "image"))
		}
	})

	t.Run("config rollout with a Secret too, over plain HTTP", func(t *testing.T) {
		// The base install asks Metacontroller for no Secret, so none crosses the network in
		// cleartext; the ConfigMap's edits must roll the pods all the same.
		for _, o := range []obj{
			{"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj{"name": "mixed-config", "namespace": ns}, "data": obj{"LEVEL": "info"}},
			{"apiVersion": "v1", "kind": "Secret", "metadata": obj{"name": "mixed-secret", "namespace": ns}, "stringData": obj{"TOKEN": "s3cret"}},
		} {
			if _, err := client.create(o); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := client.create(webApp(ns, "mixed", obj{"image": "nginx:1.27", "replicas": 2, "port": 8080,
			"envFrom": []any{obj{"configMapRef": obj{"name": "mixed-config"}}, obj{"secretRef": obj{"name": "mixed-secret"}}}})); err != nil {
			t.Fatal(err)
		}
		secretsTracked := func(st webappv1.WebAppStatus) *metav1.Condition {
			for i, c := range st.Conditions {
				if c.Type == webappv1.ConditionSecretsTracked {
					return &st.Conditions[i]
				}
			}
			return nil
		}
		checkTracked := func(st webappv1.WebAppStatus) {
			t.Helper()
			if c := secretsTracked(st); c == nil || c.Status != metav1.ConditionFalse || c.Reason != webappv1.ReasonSecretsNeedTLS || !strings.Contains(c.Message, "Secret mixed-secret") {
				t.Errorf("SecretsTracked = %+v; want False, %s, naming mixed-secret", c, webappv1.ReasonSecretsNeedTLS)
			}
		}
		checkTracked(waitStatus(t, ns, "mixed", "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady)))
		dep := mustGet(t, "apps/v1", "Deployment", ns, "mixed")
		hash, generation := field(dep, "spec", "template", "metadata", "annotations", webappv1.AnnotationConfigHash), field(dep, "metadata", "generation").(float64)
		if hash == nil {
			t.Fatalf("no config hash on the pod template: %v", field(dep, "spec", "template", "metadata"))
		}
		cp, _ := client.path("v1", "ConfigMap", ns, "mixed-config")
		if _, err := client.do("PATCH", cp, "application/merge-patch+json", obj{"data": obj{"LEVEL": "debug"}}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the ConfigMap's edit rolling the pods", 30*time.Second, func() (bool, error) {
			dep = mustGet(t, "apps/v1", "Deployment", ns, "mixed")
			return field(dep, "spec", "template", "metadata", "annotations", webappv1.AnnotationConfigHash) != hash, nil
		})
		st := waitStatus(t, ns, "mixed", "Ready after the rollout", 90*time.Second, func(st webappv1.WebAppStatus) bool {
			d := mustGet(t, "apps/v1", "Deployment", ns, "mixed")
			return st.Phase == webappv1.PhaseReady && field(d, "status", "observedGeneration") == field(d, "metadata", "generation") && field(d, "status", "updatedReplicas") == float64(2)
		})
		checkTracked(st)
		dep = mustGet(t, "apps/v1", "Deployment", ns, "mixed")
		if got := field(dep, "metadata", "generation").(float64); got != generation+1 {
			t.Errorf("Deployment generation %v -> %v; want one rollout for one edit", generation, got)
		}
		// A Secret edit rolls nothing: the hook cannot see it, and says so.
		sp, _ := client.path("v1", "Secret", ns, "mixed-secret")
		if _, err := client.do("PATCH", sp, "application/merge-patch+json", obj{"stringData": obj{"TOKEN": "other"}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(6 * time.Second) // a resync
		if got := field(mustGet(t, "apps/v1", "Deployment", ns, "mixed"), "metadata", "generation").(float64); got != generation+1 {
			t.Errorf("Deployment generation %v after a Secret edit over plain HTTP; want %v, no rollout", got, generation+1)
		}
	})

	t.Run("kubectl get webapps tells the story", func(t *testing.T) {
		t.Logf("kubectl get webapps -o wide:\n%s", kubectl(t, "get", "webapps", "-n", ns, "-o", "wide"))
		for _, tt := range []struct {
			name string
			want map[string]string
		}{
			{"hello", map[string]string{"NAME": "hello", "READY": "2/2", "PHASE": "Ready", "REASON": "RolloutComplete", "URL": "http://hello." + ns + ".svc", "IMAGE": "nginx:1.28"}},
			{"web", map[string]string{"NAME": "web", "READY": "2/2", "PHASE": "Ready", "REASON": "RolloutComplete", "URL": "http://web.example.com/", "IMAGE": "nginx:1.27"}},
			{"conf", map[string]string{"NAME": "conf", "READY": "2/2", "PHASE": "Degraded", "REASON": "ConfigMapMissing", "URL": "http://conf." + ns + ".svc", "IMAGE": "nginx:1.29"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				st := webAppStatus(t, ns, tt.name)
				row := getWebApp(t, ns, tt.name, false)
				if _, ok := row["IMAGE"]; ok {
					t.Errorf("kubectl get webapps shows IMAGE %v; want it only under -o wide", row)
				}
				if row["AGE"] == "" {
					t.Errorf("no AGE in %v", row)
				}
				wide := getWebApp(t, ns, tt.name, true)
				for col, want := range tt.want {
					got := wide[col]
					if col != "IMAGE" && row[col] != got {
						t.Errorf("%s: %q in the default columns, %q under -o wide", col, row[col], got)
					}
					if got != want {
						t.Errorf("%s = %q; want %q (row %v)", col, got, want, wide)
					}
				}
				if wide["MESSAGE"] != st.Message {
					t.Errorf("MESSAGE = %q; want the status message %q", wide["MESSAGE"], st.Message)
				}
			})
		}
	})

	t.Run("ordered delete", func(t *testing.T) {
		patchSpec(t, ns, "web", obj{"disruptionBudget": obj{"maxUnavailable": 1}})
		waitFor(t, "every child of web", 30*time.Second, func() (bool, error) {
			return len(childrenOf(t, ns, "web")) == 4, nil
		})
		var stops []func() []watchEvent
		for _, k := range childKinds[:4] {
			stops = append(stops, client.record(t, k.apiVersion, k.kind, ns, "web"))
		}
		p, _ := client.path("example.com/v1", "WebApp", ns, "web")
		if _, err := client.do("DELETE", p, "", nil); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the WebApp and its children gone", 90*time.Second, func() (bool, error) {
			wa, err := client.get("example.com/v1", "WebApp", ns, "web")
			return wa == nil && len(childrenOf(t, ns, "web")) == 0, err
		})
		deleted := map[string]time.Time{}
		for i, stop := range stops {
			for _, e := range stop() {
				if e.Type == "DELETED" {
					deleted[childKinds[i].kind] = e.At
				}
			}
		}
		if len(deleted) != 4 {
			t.Fatalf("deletions seen %v; want the four children", deleted)
		}
		for kind, at := range deleted {
			if kind != "Deployment" && !at.Before(deleted["Deployment"]) {
				t.Errorf("%s deleted at %s, the Deployment at %s: want the Ingress, the Service and the budget gone first, the Deployment last", kind, at.Format(time.StampMilli), deleted["Deployment"].Format(time.StampMilli))
			}
		}
	})
}

// TestMetacontrollerPodDiagnosis runs the real Metacontroller with the pod-diagnosis component
// (metacontroller/pod-diagnosis): pods of an image that cannot be pulled, then of one that crashes,
// given their status by kwok stages (testdata/kwok-stages.yaml), make the WebApp Degraded with
// their reason while old pods keep serving, and it recovers.
func TestMetacontrollerPodDiagnosis(t *testing.T) {
	requireCluster(t)
	realInstall(t, "e2e/testdata/pod-diagnosis")
	ns := client.namespace(t, "diagnosis")
	if _, err := client.create(webApp(ns, "hello", obj{"image": "nginx:1.27", "replicas": 2, "port": 8080})); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ns, "hello", "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady))

	patchSpec(t, ns, "hello", obj{"image": "registry.invalid/missing:1.0"})
	st := waitStatus(t, ns, "hello", "ImagePullBackOff", 90*time.Second, func(st webappv1.WebAppStatus) bool {
		r, _ := readyCondition(st)
		return r == "ImagePullBackOff"
	})
	if _, msg := readyCondition(st); st.Phase != webappv1.PhaseDegraded || !strings.Contains(msg, `cannot start: ImagePullBackOff: Back-off pulling image "registry.invalid/missing:1.0"`) || st.AvailableReplicas < 1 {
		t.Errorf("status %+v; want Degraded, ImagePullBackOff, with old pods still available", st)
	}

	patchSpec(t, ns, "hello", obj{"image": "registry.invalid/crash:1.0"})
	st = waitStatus(t, ns, "hello", "CrashLoopBackOff with restarts", 90*time.Second, func(st webappv1.WebAppStatus) bool {
		r, _ := readyCondition(st)
		return r == "CrashLoopBackOff" && st.Restarts > 0
	})
	if _, msg := readyCondition(st); !strings.Contains(msg, "container app exited with code 1 (Error)") {
		t.Errorf("message %q; want the last exit", msg)
	}

	patchSpec(t, ns, "hello", obj{"image": "nginx:1.28"})
	st = waitStatus(t, ns, "hello", "Ready again", 90*time.Second, phaseIs(webappv1.PhaseReady))
	if st.Restarts != 0 {
		t.Errorf("restarts = %d; want 0 for the new pods", st.Restarts)
	}
}

//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

// relatedKinds maps the resources the customize hook asks for to their kinds.
var relatedKinds = map[string]string{"pods": "Pod", "replicasets": "ReplicaSet", "configmaps": "ConfigMap", "secrets": "Secret"}

// related does what Metacontroller does with a customize hook: it asks the hook which objects are
// related to the parent, lists each rule's objects from the apiserver (by label selector, or by
// names), and files them like children, "Kind.apiVersion" then "namespace/name", a rule's kind
// present even when nothing matched.
func related(t *testing.T, parent obj) obj {
	t.Helper()
	body, _ := json.Marshal(obj{"controller": obj{}, "parent": parent})
	resp, err := http.Post(hook.URL+"/customize", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("/customize = %d %s", resp.StatusCode, out)
	}
	var answer sync.CustomizeResponse
	if err := json.Unmarshal(out, &answer); err != nil {
		t.Fatal(err)
	}
	groups := obj{}
	for _, rule := range answer.RelatedResources {
		kind := relatedKinds[rule.Resource]
		group := obj{}
		groups[kind+"."+rule.APIVersion] = group
		if len(rule.Names) > 0 {
			for _, name := range rule.Names {
				o, err := client.get(rule.APIVersion, kind, rule.Namespace, name)
				if err != nil {
					t.Fatal(err)
				}
				if o != nil {
					group[rule.Namespace+"/"+name] = o
				}
			}
			continue
		}
		var selector []string
		for k, v := range rule.LabelSelector.MatchLabels {
			selector = append(selector, k+"="+v)
		}
		p, err := client.path(rule.APIVersion, kind, rule.Namespace, "")
		if err != nil {
			t.Fatal(err)
		}
		b, err := client.do("GET", p+"?labelSelector="+url.QueryEscape(strings.Join(selector, ",")), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		list, _ := decode(b)
		items, _ := list["items"].([]any)
		for _, it := range items {
			o := it.(map[string]any)
			o["apiVersion"], o["kind"] = rule.APIVersion, kind // list items come without them
			_, _, ns, name := identity(o)
			group[ns+"/"+name] = o
		}
	}
	return groups
}

// readyCondition is the WebApp's Ready condition in an answer.
func readyCondition(st webappv1.WebAppStatus) (reason, message string) {
	for _, c := range st.Conditions {
		if c.Type == webappv1.ConditionReady {
			return c.Reason, c.Message
		}
	}
	return "", ""
}

// TestRelated drives the customize hook, the related objects and sync as Metacontroller does,
// with real Deployment and ReplicaSet controllers and kwok pods: editing a ConfigMap's data rolls
// the pods out and editing its labels does not; pods of an image that cannot be pulled, then of
// one that crashes, make the WebApp Degraded with their reason while old pods keep serving, and
// it recovers; a missing ConfigMap leaves the Deployment as it is.
func TestRelated(t *testing.T) {
	requireCluster(t)
	ns := client.namespace(t, "related")
	for _, o := range []obj{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj{"name": "app-config", "namespace": ns}, "data": obj{"LEVEL": "info"}},
		{"apiVersion": "v1", "kind": "Secret", "metadata": obj{"name": "app-secret", "namespace": ns}, "data": obj{"TOKEN": "ZTJlLW5vdC1hLXNlY3JldA=="}},
	} {
		if _, err := client.create(o); err != nil {
			t.Fatal(err)
		}
	}
	spec := obj{"image": "nginx:1.27", "replicas": 2, "port": 8080,
		"envFrom": []any{obj{"configMapRef": obj{"name": "app-config"}}, obj{"secretRef": obj{"name": "app-secret"}}}}
	if _, err := client.create(webApp(ns, "hello", spec)); err != nil {
		t.Fatal(err)
	}
	wp, _ := client.path("example.com/v1", "WebApp", ns, "hello")
	cp, _ := client.path("v1", "ConfigMap", ns, "app-config")
	patch := func(p string, o obj) {
		t.Helper()
		if _, err := client.do("PATCH", p, "application/merge-patch+json", o); err != nil {
			t.Fatal(err)
		}
	}
	deployment := func() obj {
		t.Helper()
		d, err := client.get("apps/v1", "Deployment", ns, "hello")
		if err != nil || d == nil {
			t.Fatalf("Deployment: %v", err)
		}
		return d
	}
	configHash := func() any {
		return field(deployment(), "spec", "template", "metadata", "annotations", sync.AnnotationConfigHash)
	}
	var last webappv1.WebAppStatus
	until := func(what string, ok func(st webappv1.WebAppStatus) bool) {
		t.Helper()
		waitFor(t, what, 90*time.Second, func() (bool, error) {
			last = reconcile(t, "/sync", ns, "hello").Status
			return ok(last), nil
		})
	}
	ready := func(st webappv1.WebAppStatus) bool { return st.Phase == webappv1.PhaseReady }

	until("Ready", ready)
	hash := configHash()
	if hash == nil {
		t.Fatal("no config hash on the pod template")
	}

	// A label on the ConfigMap: nothing rolls.
	generation := field(deployment(), "metadata", "generation")
	patch(cp, obj{"metadata": obj{"labels": obj{"team": "shop"}}})
	reconcile(t, "/sync", ns, "hello")
	if got := configHash(); got != hash || field(deployment(), "metadata", "generation") != generation {
		t.Errorf("config hash %v, generation %v after a label change; want %v and %v, nothing rolled", got, field(deployment(), "metadata", "generation"), hash, generation)
	}

	// Its data: a new pod template, rolled out.
	patch(cp, obj{"data": obj{"LEVEL": "debug"}})
	reconcile(t, "/sync", ns, "hello")
	if got := configHash(); got == hash {
		t.Errorf("config hash %v after a data change; want a new one", got)
	}
	until("Ready after the config rollout", ready)
	if rs := related(t, mustGet(t, "example.com/v1", "WebApp", ns, "hello"))["ReplicaSet.apps/v1"].(obj); len(rs) < 2 {
		t.Errorf("%d ReplicaSets; want a new one for the new config", len(rs))
	}

	// An image that cannot be pulled: Degraded at once, old pods serving.
	patch(wp, obj{"spec": obj{"image": "registry.invalid/missing:1.0"}})
	until("ImagePullBackOff", func(st webappv1.WebAppStatus) bool { r, _ := readyCondition(st); return r == "ImagePullBackOff" })
	if _, msg := readyCondition(last); last.Phase != webappv1.PhaseDegraded || !strings.Contains(msg, "cannot start: ImagePullBackOff: Back-off pulling image \"registry.invalid/missing:1.0\"") || last.AvailableReplicas < 1 {
		t.Errorf("status %+v; want Degraded, ImagePullBackOff, with old pods still available", last)
	}

	// One that crashes: CrashLoopBackOff, and restarts counted.
	patch(wp, obj{"spec": obj{"image": "registry.invalid/crash:1.0"}})
	until("CrashLoopBackOff with restarts", func(st webappv1.WebAppStatus) bool {
		r, _ := readyCondition(st)
		return r == "CrashLoopBackOff" && st.Restarts > 0
	})
	if _, msg := readyCondition(last); !strings.Contains(msg, "container app exited with code 1 (Error)") {
		t.Errorf("message %q; want the last exit", msg)
	}

	// Fixed: Ready again.
	patch(wp, obj{"spec": obj{"image": "nginx:1.28"}})
	until("Ready again", ready)
	if last.Restarts != 0 {
		t.Errorf("restarts = %d; want 0 for the new pods", last.Restarts)
	}

	// The ConfigMap goes: the Deployment is left as it is.
	generation = field(deployment(), "metadata", "generation")
	if _, err := client.do("DELETE", cp, "", nil); err != nil {
		t.Fatal(err)
	}
	patch(wp, obj{"spec": obj{"image": "nginx:1.29"}})
	st := reconcile(t, "/sync", ns, "hello").Status
	if r, msg := readyCondition(st); st.Phase != webappv1.PhaseDegraded || r != webappv1.ReasonConfigMapMissing || !strings.Contains(msg, "ConfigMap app-config") {
		t.Errorf("status %+v; want Degraded, ConfigMapMissing, naming it", st)
	}
	if got := field(deployment(), "metadata", "generation"); got != generation || field(deployment(), "spec", "template", "spec", "containers", 0, "image") != "nginx:1.28" {
		t.Errorf("Deployment generation %v, image %v; want it left as it was (%v, nginx:1.28)", got, field(deployment(), "spec", "template", "spec", "containers", 0, "image"), generation)
	}
}

func mustGet(t *testing.T, apiVersion, kind, ns, name string) obj {
	t.Helper()
	o, err := client.get(apiVersion, kind, ns, name)
	if err != nil || o == nil {
		t.Fatalf("get %s %s/%s: %v", kind, ns, name, err)
	}
	return o
}

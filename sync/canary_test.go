package sync_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
)

// canarySpec is a WebApp of 4 replicas with a route and a canary of two steps: 10% for 5
// seconds, then 50% until promoted.
func canarySpec(image string) func(*sync.Parent) {
	return func(p *sync.Parent) {
		p.Spec.Image, p.Spec.Replicas = image, ptr(int32(4))
		p.Spec.Route = &webappv1.Route{Hostnames: []gatewayv1.Hostname{"hello.example.com"}, ParentRefs: publicGateway}
		p.Spec.Rollout = &webappv1.Rollout{Canary: &webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 10, PauseSeconds: ptr(int32(5))}, {Weight: 50}}}}
	}
}

// accepted is a route status in which Gateway public accepted generation 1.
var accepted = gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{
	parentStatus(gatewayRef("public"), 1, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs")}}}

// fakeCluster plays Metacontroller and the controllers around it for one WebApp: each answer's
// children are applied and observed at the next call, with the statuses the test sets by
// "Kind/name", and the answer's status is sent back.
type fakeCluster struct {
	t        *testing.T
	parent   sync.Parent
	children []sync.Child
	status   map[string]any
	now      time.Time
}

func newCluster(t *testing.T, p sync.Parent) *fakeCluster {
	return &fakeCluster{t: t, parent: p, status: map[string]any{}, now: now}
}

// sync answers the next call, after d, and applies the answer.
func (c *fakeCluster) sync(d time.Duration) sync.Response {
	c.t.Helper()
	c.now = c.now.Add(d)
	req := &sync.Request{Parent: c.parent, Children: c.children, ChildKinds: withGatewayAPI}
	resp := sync.Sync(req, c.now)
	if err := hooktest.CheckResponse(req, resp); err != nil {
		c.t.Fatal(err)
	}
	c.parent.Canary, c.parent.Conditions = resp.Status.Canary, resp.Status.Conditions
	c.children = nil
	for _, obj := range resp.Children {
		c.children = append(c.children, observe(c.t, obj, 1, c.status[key(c.t, obj)]))
	}
	sort.Slice(c.children, func(i, j int) bool {
		a, b := c.children[i], c.children[j]
		return a.Kind+"/"+a.Name < b.Kind+"/"+b.Name
	})
	return resp
}

// key is "Kind/name" of a child.
func key(t *testing.T, obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	return obj.GetObjectKind().GroupVersionKind().Kind + "/" + m.GetName()
}

// sent returns the child of an answer named "Kind/name", as the hook sends it, or nil.
func sent(t *testing.T, resp sync.Response, name string) map[string]any {
	t.Helper()
	for _, c := range sentChildren(t, resp) {
		meta := c["metadata"].(map[string]any)
		if c["kind"].(string)+"/"+meta["name"].(string) == name {
			return c
		}
	}
	return nil
}

// member reads a member path of a sent child as JSON text, "" when absent.
func member(t *testing.T, obj map[string]any, path ...string) string {
	t.Helper()
	var v any = obj
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[p]
	}
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// backends renders the route's backends of an answer as "name=weight,…".
func backends(t *testing.T, resp sync.Response) string {
	t.Helper()
	route := childOf[*gatewayv1.HTTPRoute](resp.Children)
	if route == nil {
		return "no route"
	}
	var out []string
	for _, b := range route.Spec.Rules[0].BackendRefs {
		out = append(out, fmt.Sprintf("%s=%d", b.Name, *b.Weight))
	}
	return strings.Join(out, ",")
}

// canaryOf renders an answer's canary status as "phase step weight replicas".
func canaryOf(resp sync.Response) string {
	st := resp.Status.Canary
	if st == nil {
		return "none"
	}
	w := "-"
	if st.Weight != nil {
		w = fmt.Sprint(*st.Weight)
	}
	return fmt.Sprintf("%s step=%d weight=%s replicas=%d", st.Phase, st.Step, w, st.Replicas)
}

// TestSyncCanary follows one canary through Sync, from the template change to its promotion by
// hand, with the cluster around it played by fakeCluster.
func TestSyncCanary(t *testing.T) {
	c := newCluster(t, webapp(canarySpec("shop:1")))
	c.status["Deployment/hello"] = depStatus(1, 4, 4, 4, 4)
	c.status["HTTPRoute/hello"] = accepted
	first := c.sync(0)
	if got := canaryOf(first); got != "none" || conditionOf(first.Status, webappv1.ConditionCanary) != "True/Idle" {
		t.Fatalf("a new WebApp: canary %s, condition %s; want none, True/Idle", got, conditionOf(first.Status, webappv1.ConditionCanary))
	}
	stableTemplate := member(t, sent(t, first, "Deployment/hello"), "spec", "template")
	idle := c.sync(time.Second)
	if asJSON(t, sentChildren(t, idle)) != asJSON(t, sentChildren(t, first)) || idle.ResyncAfterSeconds != 0 {
		t.Fatalf("idle answer differs from the first, or asks for a call")
	}

	c.parent = webapp(canarySpec("shop:2"))
	c.parent.Canary, c.parent.Conditions = idle.Status.Canary, idle.Status.Conditions
	steps := []struct {
		name     string
		after    time.Duration
		status   map[string]any // statuses observed at this call
		promote  bool
		canary   string
		backends string
		replicas string // "stable/canary" as answered
		check    func(t *testing.T, resp sync.Response)
	}{
		{name: "the new template goes to a canary of 1 pod; the stable Deployment keeps its own", after: time.Second,
			canary: "Progressing step=0 weight=0 replicas=1", backends: "hello=1", replicas: "4/1",
			check: func(t *testing.T, resp sync.Response) {
				if got := member(t, sent(t, resp, "Deployment/hello"), "spec", "template"); got != stableTemplate {
					t.Errorf("stable template =\n%s\nwant it unchanged:\n%s", got, stableTemplate)
				}
				canary := sent(t, resp, "Deployment/hello-canary")
				if got := member(t, canary, "spec", "template", "spec", "containers"); !strings.Contains(got, `"image":"shop:2"`) {
					t.Errorf("canary containers %s; want image shop:2", got)
				}
				wantLabels := `{"app.kubernetes.io/instance":"hello","app.kubernetes.io/managed-by":"webapp-hook","webapp.example.com/track":"canary"}`
				for _, path := range [][]string{{"metadata", "labels"}, {"spec", "selector", "matchLabels"}, {"spec", "template", "metadata", "labels"}} {
					if got := member(t, canary, path...); got != wantLabels {
						t.Errorf("canary %v = %s; want %s", path, got, wantLabels)
					}
				}
				if got, want := member(t, canary, "metadata", "annotations", sync.AnnotationRevision), `"`+resp.Status.Canary.Revision+`"`; got != want {
					t.Errorf("canary revision annotation %s; want %s", got, want)
				}
				if got := member(t, sent(t, resp, "Service/hello-canary"), "spec", "selector"); got != wantLabels {
					t.Errorf("Service hello-canary selects %s; want %s", got, wantLabels)
				}
				stableSelector := `{"app.kubernetes.io/instance":"hello","app.kubernetes.io/managed-by":"webapp-hook","app.kubernetes.io/name":"webapp"}`
				for _, svc := range []string{"Service/hello", "Service/hello-stable"} {
					if got := member(t, sent(t, resp, svc), "spec", "selector"); got != stableSelector {
						t.Errorf("%s selects %s; want %s", svc, got, stableSelector)
					}
				}
				if resp.Status.Phase != webappv1.PhaseProgressing || conditionOf(resp.Status, webappv1.ConditionReady) != "False/CanaryInProgress" || conditionOf(resp.Status, webappv1.ConditionCanary) != "True/Progressing" {
					t.Errorf("phase %s, conditions %v; want Progressing, Ready False/CanaryInProgress, Canary True/Progressing", resp.Status.Phase, resp.Status.Conditions)
				}
				if resp.ResyncAfterSeconds != 125 {
					t.Errorf("resyncAfterSeconds = %v; want 125, the availability deadline", resp.ResyncAfterSeconds)
				}
			}},
		{name: "the canary's pod is available and its Services observed: the route sends it 10%", after: time.Second,
			status: map[string]any{"Deployment/hello-canary": depStatus(1, 1, 1, 1, 1)},
			canary: "Progressing step=0 weight=0 replicas=1", backends: "hello-stable=90,hello-canary=10", replicas: "4/1"},
		{name: "the route carries 10% and is accepted: the pause starts, and the Service hello selects the canary's pod too", after: time.Second,
			canary: "Progressing step=0 weight=10 replicas=1", backends: "hello-stable=90,hello-canary=10", replicas: "4/1",
			check: func(t *testing.T, resp sync.Response) {
				if got := member(t, sent(t, resp, "Service/hello"), "spec", "selector"); got != `{"app.kubernetes.io/instance":"hello","app.kubernetes.io/managed-by":"webapp-hook"}` {
					t.Errorf("Service hello selects %s; want the canary's pods too", got)
				}
				if resp.ResyncAfterSeconds != 5 || resp.Status.Canary.PauseStartTime == nil {
					t.Errorf("resyncAfterSeconds %v, pauseStartTime %v; want 5 and set", resp.ResyncAfterSeconds, resp.Status.Canary.PauseStartTime)
				}
			}},
		{name: "5 s later: step 2 scales the canary to 2 pods, the route keeps 10% meanwhile", after: 5 * time.Second,
			canary: "Progressing step=1 weight=10 replicas=2", backends: "hello-stable=90,hello-canary=10", replicas: "4/2"},
		{name: "2 pods available: the route sends 50%", after: time.Second,
			status: map[string]any{"Deployment/hello-canary": depStatus(1, 2, 2, 2, 2)},
			canary: "Progressing step=1 weight=10 replicas=2", backends: "hello-stable=50,hello-canary=50", replicas: "4/2"},
		{name: "50% in place, a step without pauseSeconds: Paused", after: time.Second,
			canary: "Paused step=1 weight=50 replicas=2", backends: "hello-stable=50,hello-canary=50", replicas: "4/2"},
		{name: "still paused a day later: nothing changes and no call is asked for", after: 24 * time.Hour,
			canary: "Paused step=1 weight=50 replicas=2", backends: "hello-stable=50,hello-canary=50", replicas: "4/2",
			check: func(t *testing.T, resp sync.Response) {
				if resp.ResyncAfterSeconds != 0 {
					t.Errorf("resyncAfterSeconds = %v; want 0", resp.ResyncAfterSeconds)
				}
			}},
		{name: "promoted by annotation: the canary scales to 4 pods first", after: time.Second, promote: true,
			canary: "Promoting step=1 weight=50 replicas=4", backends: "hello-stable=50,hello-canary=50", replicas: "4/4"},
		{name: "4 canary pods available: all the traffic goes to the canary", after: time.Second,
			status: map[string]any{"Deployment/hello-canary": depStatus(1, 4, 4, 4, 4)},
			canary: "Promoting step=1 weight=50 replicas=4", backends: "hello-stable=0,hello-canary=100", replicas: "4/4"},
		{name: "the route carries it: the stable Deployment takes the template, as a WebApp without a canary would", after: time.Second,
			canary: "Promoting step=1 weight=100 replicas=4", backends: "hello-stable=0,hello-canary=100", replicas: "4/4",
			check: func(t *testing.T, resp sync.Response) {
				p := webapp(canarySpec("shop:2"))
				p.Spec.Rollout = nil
				want, _ := desired(t, p)
				if got := childOf[*appsv1.Deployment](resp.Children); got == nil || asJSON(t, got) != asJSON(t, want) {
					t.Errorf("stable Deployment =\n%s\nwant\n%s", asJSON(t, got), asJSON(t, want))
				}
			}},
		{name: "the stable Deployment rolled: the route goes back to the Service hello, which selects it alone", after: time.Second,
			canary: "Promoting step=1 weight=100 replicas=4", backends: "hello=1", replicas: "4/4",
			check: func(t *testing.T, resp sync.Response) {
				if got := member(t, sent(t, resp, "Service/hello"), "spec", "selector"); !strings.Contains(got, webappv1.LabelName) {
					t.Errorf("Service hello selects %s; want the stable pods only", got)
				}
			}},
		{name: "the route is back: the canary scales to zero", after: time.Second,
			canary: "Promoting step=1 weight=- replicas=0", backends: "hello=1", replicas: "4/0"},
		{name: "the canary's pods are gone: it and its Services go, and the WebApp is Ready", after: time.Second,
			status: map[string]any{"Deployment/hello-canary": depStatus(1, 0, 0, 0, 0)},
			canary: "Promoted step=1 weight=- replicas=0", backends: "hello=1", replicas: "4/-",
			check: func(t *testing.T, resp sync.Response) {
				if got := names(t, resp.Children); fmt.Sprint(got) != "[Deployment/hello HTTPRoute/hello Service/hello]" {
					t.Errorf("children %v; want the stable Deployment, its Service and the route", got)
				}
				if resp.Status.Phase != webappv1.PhaseReady || conditionOf(resp.Status, webappv1.ConditionCanary) != "True/Promoted" {
					t.Errorf("phase %s, conditions %v; want Ready and Canary True/Promoted", resp.Status.Phase, resp.Status.Conditions)
				}
			}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			for k, v := range st.status {
				c.status[k] = v
			}
			// What the last answer asked for is what is observed now.
			for i, ch := range c.children {
				if s, ok := st.status[ch.Kind+"/"+ch.Name]; ok {
					c.children[i] = observe(t, lastAppliedObject(t, ch), 1, s)
				}
			}
			c.parent.Promote = ""
			if st.promote && c.parent.Canary != nil {
				c.parent.Promote = c.parent.Canary.Revision
			}
			resp := c.sync(st.after)
			if got := canaryOf(resp); got != st.canary {
				t.Errorf("canary = %s; want %s (%s)", got, st.canary, resp.Status.Message)
			}
			if got := backends(t, resp); got != st.backends {
				t.Errorf("route backends = %s; want %s", got, st.backends)
			}
			if got := replicasOf(t, resp); got != st.replicas {
				t.Errorf("replicas stable/canary = %s; want %s", got, st.replicas)
			}
			if st.check != nil {
				st.check(t, resp)
			}
		})
	}
}

// replicasOf renders the replicas an answer asks of the stable and the canary Deployment as
// "stable/canary", "-" for one that is not in the answer.
func replicasOf(t *testing.T, resp sync.Response) string {
	t.Helper()
	get := func(name string) string {
		d := sent(t, resp, "Deployment/"+name)
		if d == nil {
			return "-"
		}
		return member(t, d, "spec", "replicas")
	}
	return get("hello") + "/" + get("hello-canary")
}

// lastAppliedObject is the apply form an observed child was last applied with, to observe it
// again with another status.
func lastAppliedObject(t *testing.T, c sync.Child) runtime.Object {
	return &unstructured.Unstructured{Object: lastApplied(t, c).(map[string]any)}
}

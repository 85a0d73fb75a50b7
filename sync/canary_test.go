package sync_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/sync/wire"
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

// withAnalysis gives the canary an analysis that checks every 10 s that 99% of its requests
// succeed.
func withAnalysis(p *sync.Parent) {
	p.Spec.Rollout.Canary.Analysis = &webappv1.CanaryAnalysis{IntervalSeconds: ptr(int32(10)), Metrics: []webappv1.CanaryMetric{
		{Name: webappv1.MetricRequestSuccessRate, ThresholdRange: webappv1.ThresholdRange{Min: ptr(99.0)}},
	}}
	webappv1.Default(&p.Spec)
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
	related  sync.Related
	now      time.Time
	// measure, when set, plays the edge: it gives the measurement of a check that canary.Due
	// says is due.
	measure func(span canary.Span) *canary.Measurement
}

func newCluster(t *testing.T, p sync.Parent) *fakeCluster {
	return &fakeCluster{t: t, parent: p, status: map[string]any{}, now: now}
}

// requestBody renders the request of the next call as Metacontroller sends it (v2 keys): what
// TestCanaryWalk keeps in testdata/canary.
func (c *fakeCluster) requestBody() []byte {
	c.t.Helper()
	children := map[string]map[string]json.RawMessage{}
	for k := range withGatewayAPI {
		children[k] = map[string]json.RawMessage{}
	}
	for _, ch := range c.children {
		children[ch.Kind+"."+ch.APIVersion][ch.Namespace+"/"+ch.Name] = ch.Raw
	}
	annotations := map[string]string{}
	if c.parent.Promote != "" {
		annotations[webappv1.AnnotationPromote] = c.parent.Promote
	}
	parent := map[string]any{
		"apiVersion": webappv1.Group + "/" + webappv1.Version, "kind": webappv1.Kind,
		"metadata": map[string]any{"name": c.parent.Name, "namespace": c.parent.Namespace, "generation": c.parent.Generation, "annotations": annotations},
		"spec":     c.parent.Spec,
		"status":   map[string]any{"conditions": c.parent.Conditions, "canary": c.parent.Canary},
	}
	b, err := json.MarshalIndent(map[string]any{"parent": parent, "children": children}, "", "  ")
	if err != nil {
		c.t.Fatal(err)
	}
	return append(b, '\n')
}

// sync answers the next call, after d, and applies the answer.
func (c *fakeCluster) sync(d time.Duration) sync.Response {
	c.t.Helper()
	c.now = c.now.Add(d)
	req := &sync.Request{Parent: c.parent, Children: c.children, ChildKinds: withGatewayAPI, Related: c.related}
	if c.measure != nil && c.parent.Spec.Rollout != nil {
		if span, ok := canary.Due(c.parent.Spec.Rollout.Canary, c.parent.Canary, c.now); ok {
			req.Measurement = c.measure(span)
		}
	}
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

// canaryRevisionAnnotation is the canary Deployment's revision annotation: its one reference in
// this file, as it may move to package canary.
const canaryRevisionAnnotation = canary.AnnotationRevision

// canaryStep is one call of a canary, from the template change to its promotion by hand: a case
// of TestSyncCanary, which answers the call's committed request at its time and checks the
// answer, and a step of TestCanaryWalk, which makes that request.
type canaryStep struct {
	name string
	// at is the time of the call, after now (the time of the WebApp's first call, two calls
	// before the first step): TestSyncCanary answers the step's request at now.Add(at), and
	// TestCanaryWalk calls then. The request does not hold it.
	at time.Duration
	// status and promote are for TestCanaryWalk alone, which makes the request: the statuses the
	// cluster reports from this call on, by "Kind/name", and whether the WebApp is annotated to
	// promote the canary's revision at this call.
	status  map[string]any
	promote bool
	// canary, backends and replicas are the answer's canary status (canaryOf), route backends
	// (backends) and replicas asked of the stable and the canary Deployment ("stable/canary").
	canary   string
	backends string
	replicas string
	check    func(t *testing.T, resp sync.Response)
}

// canarySteps follow one canary of canarySpec: shop:1 running on 4 pods with an accepted route,
// changed to shop:2 at the first step, and promoted by hand once paused at 50%.
//
// Their fixtures, and the test that owns each (the only one that writes it, with -update):
//
//   - testdata/canary/step-NN.request.json, the request of the call of canarySteps[NN-1] as
//     Metacontroller sends it (v2 keys), belong to TestCanaryWalk, which makes them by playing the
//     cluster around one canary call by call (fakeCluster). Without -update it compares each
//     request it would send with the committed file and fails with a diff when they drift. They
//     are read by TestSyncCanary (each case its own), FuzzDecide (seeds), BenchmarkSyncCanary
//     (step-06), webhook's TestCacheSkipsTimedAnswers (step-04, which needs the pause running)
//     and docs/development.md.
//   - testdata/answers/TestSyncCanary/<case>.json, the answer to each of those requests at its
//     step's time, belong to TestSyncCanary (golden). No other Go test reads them; the end-to-end
//     suite (e2e TestAnswers) applies them to a real apiserver (dry run).
//
// So -update on TestSyncCanary rewrites answers to the committed requests and never a request,
// and -update on TestCanaryWalk rewrites requests that TestSyncCanary then answers afresh: a
// change of the walk shows as changed answers, not as silently rewritten ones. `go test ./sync
// -update` runs the walk first (it is declared first, and a package's tests run in that order)
// and TestSyncCanary after it, on the new requests; run `go test ./webhook` after it too, the
// other reader. The walk's name does not contain "TestSyncCanary", so that
// `-run 'TestSyncCanary/5_s_later'` runs that one case and not the walk.
var canarySteps = []canaryStep{
	{name: "the new template goes to a canary of 1 pod; the stable Deployment keeps its own", at: 2 * time.Second,
		canary: "Progressing step=0 weight=0 replicas=1", backends: "hello=1", replicas: "4/1",
		check: func(t *testing.T, resp sync.Response) {
			_, first, _ := canaryIdle(t)
			if got, want := stableTemplateOf(t, resp), stableTemplateOf(t, first); got != want {
				t.Errorf("stable template =\n%s\nwant it unchanged:\n%s", got, want)
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
			if got, want := member(t, canary, "metadata", "annotations", canaryRevisionAnnotation), `"`+resp.Status.Canary.Revision+`"`; got != want {
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
	{name: "the canary's pod is available and its Services observed: the route sends it 10%", at: 3 * time.Second,
		status: map[string]any{"Deployment/hello-canary": depStatus(1, 1, 1, 1, 1)},
		canary: "Progressing step=0 weight=0 replicas=1", backends: "hello-stable=90,hello-canary=10", replicas: "4/1"},
	{name: "the route carries 10% and is accepted: the pause starts, and the Service hello selects the canary's pod too", at: 4 * time.Second,
		canary: "Progressing step=0 weight=10 replicas=1", backends: "hello-stable=90,hello-canary=10", replicas: "4/1",
		check: func(t *testing.T, resp sync.Response) {
			if got := member(t, sent(t, resp, "Service/hello"), "spec", "selector"); got != `{"app.kubernetes.io/instance":"hello","app.kubernetes.io/managed-by":"webapp-hook"}` {
				t.Errorf("Service hello selects %s; want the canary's pods too", got)
			}
			if resp.ResyncAfterSeconds != 5 || resp.Status.Canary.PauseStartTime == nil {
				t.Errorf("resyncAfterSeconds %v, pauseStartTime %v; want 5 and set", resp.ResyncAfterSeconds, resp.Status.Canary.PauseStartTime)
			}
		}},
	{name: "5 s later: step 2 scales the canary to 2 pods, the route keeps 10% meanwhile", at: 9 * time.Second,
		canary: "Progressing step=1 weight=10 replicas=2", backends: "hello-stable=90,hello-canary=10", replicas: "4/2"},
	{name: "2 pods available: the route sends 50%", at: 10 * time.Second,
		status: map[string]any{"Deployment/hello-canary": depStatus(1, 2, 2, 2, 2)},
		canary: "Progressing step=1 weight=10 replicas=2", backends: "hello-stable=50,hello-canary=50", replicas: "4/2"},
	{name: "50% in place, a step without pauseSeconds: Paused", at: 11 * time.Second,
		canary: "Paused step=1 weight=50 replicas=2", backends: "hello-stable=50,hello-canary=50", replicas: "4/2"},
	{name: "still paused a day later: nothing changes and no call is asked for", at: 24*time.Hour + 11*time.Second,
		canary: "Paused step=1 weight=50 replicas=2", backends: "hello-stable=50,hello-canary=50", replicas: "4/2",
		check: func(t *testing.T, resp sync.Response) {
			if resp.ResyncAfterSeconds != 0 {
				t.Errorf("resyncAfterSeconds = %v; want 0", resp.ResyncAfterSeconds)
			}
		}},
	{name: "promoted by annotation: the canary scales to 4 pods first", at: 24*time.Hour + 12*time.Second, promote: true,
		canary: "Promoting step=1 weight=50 replicas=4", backends: "hello-stable=50,hello-canary=50", replicas: "4/4"},
	{name: "4 canary pods available: all the traffic goes to the canary", at: 24*time.Hour + 13*time.Second,
		status: map[string]any{"Deployment/hello-canary": depStatus(1, 4, 4, 4, 4)},
		canary: "Promoting step=1 weight=50 replicas=4", backends: "hello-stable=0,hello-canary=100", replicas: "4/4"},
	{name: "the route is seen to carry it: the stable Deployment waits scaleDownDelaySeconds, as the Gateway may still send it traffic", at: 24*time.Hour + 14*time.Second,
		canary: "Promoting step=1 weight=100 replicas=4", backends: "hello-stable=0,hello-canary=100", replicas: "4/4",
		check: func(t *testing.T, resp sync.Response) {
			_, first, _ := canaryIdle(t)
			if got, want := stableTemplateOf(t, resp), stableTemplateOf(t, first); got != want {
				t.Errorf("stable template =\n%s\nwant it held:\n%s", got, want)
			}
			if resp.ResyncAfterSeconds != webappv1.DefaultScaleDownDelaySeconds {
				t.Errorf("resyncAfterSeconds = %v; want %d, when the delay is over", resp.ResyncAfterSeconds, webappv1.DefaultScaleDownDelaySeconds)
			}
		}},
	{name: "10 s later: the stable Deployment takes the template, as a WebApp without a canary would", at: 24*time.Hour + 24*time.Second,
		canary: "Promoting step=1 weight=100 replicas=4", backends: "hello-stable=0,hello-canary=100", replicas: "4/4",
		check: func(t *testing.T, resp sync.Response) {
			p := webapp(canarySpec("shop:2"))
			p.Spec.Rollout = nil
			want, _ := desired(t, p)
			if got := childOf[*appsv1.Deployment](resp.Children); got == nil || asJSON(t, got) != asJSON(t, want) {
				t.Errorf("stable Deployment =\n%s\nwant\n%s", asJSON(t, got), asJSON(t, want))
			}
		}},
	{name: "the stable Deployment rolled: the route goes back to the Service hello, which selects it alone", at: 24*time.Hour + 25*time.Second,
		canary: "Promoting step=1 weight=100 replicas=4", backends: "hello=1", replicas: "4/4",
		check: func(t *testing.T, resp sync.Response) {
			if got := member(t, sent(t, resp, "Service/hello"), "spec", "selector"); !strings.Contains(got, webappv1.LabelName) {
				t.Errorf("Service hello selects %s; want the stable pods only", got)
			}
		}},
	{name: "the route is seen back: the canary keeps its pods for scaleDownDelaySeconds", at: 24*time.Hour + 26*time.Second,
		canary: "Promoting step=1 weight=- replicas=4", backends: "hello=1", replicas: "4/4"},
	{name: "10 s later: the canary scales to zero", at: 24*time.Hour + 36*time.Second,
		canary: "Promoting step=1 weight=- replicas=0", backends: "hello=1", replicas: "4/0"},
	{name: "the canary's pods are gone: it and its Services go, and the WebApp is Ready", at: 24*time.Hour + 37*time.Second,
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

// canaryFixture is the committed request of canarySteps[i].
func canaryFixture(i int) string {
	return filepath.Join("testdata", "canary", fmt.Sprintf("step-%02d.request.json", i+1))
}

// canaryRequest reads the committed request of canarySteps[i] and decodes it as the hook does
// (wire.DecodeRequest).
func canaryRequest(t *testing.T, i int) *sync.Request {
	t.Helper()
	body, err := os.ReadFile(canaryFixture(i))
	if err != nil {
		t.Fatalf("%v (TestCanaryWalk makes it: run it with -update)", err)
	}
	req, err := wire.DecodeRequest(body)
	if err != nil {
		t.Fatalf("DecodeRequest %s: %v", canaryFixture(i), err)
	}
	return req
}

// canaryIdle returns the cluster of canarySteps before its first step: a new WebApp of shop:1
// with its canary configured, 4 pods ready and the route accepted, called twice (its first and
// idle answers), at now plus a second.
func canaryIdle(t *testing.T) (c *fakeCluster, first, idle sync.Response) {
	t.Helper()
	c = newCluster(t, webapp(canarySpec("shop:1")))
	c.status["Deployment/hello"] = depStatus(1, 4, 4, 4, 4)
	c.status["HTTPRoute/hello"] = accepted
	first = c.sync(0)
	idle = c.sync(time.Second)
	return c, first, idle
}

// clusterAt returns a cluster at the call of canarySteps[i] as its committed request shows it:
// the parent, its children, the statuses they show (which it keeps reporting) and the step's time.
func clusterAt(t *testing.T, i int) *fakeCluster {
	t.Helper()
	req := canaryRequest(t, i)
	c := &fakeCluster{t: t, parent: req.Parent, children: req.Children, status: map[string]any{}, related: req.Related, now: now.Add(canarySteps[i].at)}
	for _, ch := range req.Children {
		var obj struct {
			Status any `json:"status"`
		}
		if err := json.Unmarshal(ch.Raw, &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Status != nil {
			c.status[ch.Kind+"/"+ch.Name] = obj.Status
		}
	}
	return c
}

// TestCanaryWalk makes the requests of canarySteps: it plays the cluster around the canary
// (fakeCluster) from a new WebApp, calling Sync at each step's time and applying its answer, and
// compares each request with its committed file; with -update it writes them instead. See
// canarySteps for who reads them. It also holds each request to what
// it stands for: decoded as the hook decodes it, it gets the answer the cluster got.
func TestCanaryWalk(t *testing.T) {
	c, _, idle := canaryIdle(t)
	c.parent = webapp(canarySpec("shop:2"))
	c.parent.Canary, c.parent.Conditions = idle.Status.Canary, idle.Status.Conditions
	for i, st := range canarySteps {
		for k, v := range st.status {
			c.status[k] = v
		}
		// What the last answer asked for is what is observed now.
		for j, ch := range c.children {
			if s, ok := st.status[ch.Kind+"/"+ch.Name]; ok {
				c.children[j] = observe(t, lastAppliedObject(t, ch), 1, s)
			}
		}
		c.parent.Promote = ""
		if st.promote && c.parent.Canary != nil {
			c.parent.Promote = c.parent.Canary.Revision
		}
		body := c.requestBody()
		checkFixture(t, canaryFixture(i), body)
		at := now.Add(st.at)
		if !at.After(c.now) {
			t.Fatalf("step %d (%s) is at %v, not after the call before it (%v)", i+1, st.name, st.at, c.now.Sub(now))
		}
		resp := c.sync(at.Sub(c.now))
		req, err := wire.DecodeRequest(body)
		if err != nil {
			t.Fatalf("step %d (%s): DecodeRequest: %v", i+1, st.name, err)
		}
		if got, want := asJSON(t, sync.Sync(req, at)), asJSON(t, resp); got != want {
			t.Errorf("step %d (%s): the request as sent gets another answer than the cluster got (- the cluster's, + the decoded request's):\n%s", i+1, st.name, lineDiff(want, got))
		}
	}
}

// TestSyncCanary answers each call of canarySteps, from its committed request at its time, and
// checks the answer: each case stands alone (-run 'TestSyncCanary/5_s_later').
func TestSyncCanary(t *testing.T) {
	t.Run("before the change: a new WebApp has no canary, and called again answers the same and asks for no call", func(t *testing.T) {
		_, first, idle := canaryIdle(t)
		if got := canaryOf(first); got != "none" || conditionOf(first.Status, webappv1.ConditionCanary) != "True/Idle" {
			t.Fatalf("a new WebApp: canary %s, condition %s; want none, True/Idle", got, conditionOf(first.Status, webappv1.ConditionCanary))
		}
		if asJSON(t, sentChildren(t, idle)) != asJSON(t, sentChildren(t, first)) || idle.ResyncAfterSeconds != 0 {
			t.Fatalf("idle answer differs from the first, or asks for a call")
		}
	})
	for i, st := range canarySteps {
		t.Run(st.name, func(t *testing.T) {
			req := canaryRequest(t, i)
			resp := sync.Sync(req, now.Add(st.at))
			if err := hooktest.CheckResponse(req, resp); err != nil {
				t.Fatal(err)
			}
			golden(t, resp) // which the end-to-end suite applies to a real apiserver (dry run)
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
	t.Run("promoted is a fixed point: the same answer an hour later, and no call asked for", func(t *testing.T) {
		c := clusterAt(t, len(canarySteps)-1)
		c.sync(0) // the last step's answer, applied
		before := c.sync(time.Second)
		after := c.sync(time.Hour)
		if got, want := asJSON(t, after), asJSON(t, before); got != want || after.ResyncAfterSeconds != 0 {
			t.Errorf("an hour later =\n%s\nwant\n%s", got, want)
		}
	})
}

// checkFixture compares got with the file at path, failing with a line diff when they differ;
// with -update it writes got there instead (hooktest.Golden).
func checkFixture(t *testing.T, path string, got []byte) {
	t.Helper()
	if updating() {
		hooktest.Golden(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to make it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the request sent now (- committed, + sent now; run the test with -update if the change is intended, and then the readers canarySteps lists):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// updating reports whether the test binary runs with hooktest's -update flag.
func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// lineDiff renders the lines that differ from want to got: "-" for want's, "+" for got's, each
// with its line number, amid two lines of context, and at most 80 lines in all.
func lineDiff(want, got string) string {
	a, b := strings.Split(want, "\n"), strings.Split(got, "\n")
	// lcs[i][j] is the length of the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		op   byte // ' ', '-' or '+'
		n    int  // the line's number in want (' ', '-') or got ('+')
		text string
	}
	var lines []line
	for i, j := 0, 0; i < len(a) || j < len(b); {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			lines = append(lines, line{' ', i + 1, a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', i + 1, a[i]})
			i++
		default:
			lines = append(lines, line{'+', j + 1, b[j]})
			j++
		}
	}
	const context, most = 2, 80
	var out []string
	last := -1 // the index in lines of the last line shown
	for k, l := range lines {
		near := false
		for d := max(0, k-context); d <= min(len(lines)-1, k+context); d++ {
			near = near || lines[d].op != ' '
		}
		if !near {
			continue
		}
		if last >= 0 && k > last+1 {
			out = append(out, "  …")
		}
		if len(out) == most {
			out = append(out, "  … and more")
			break
		}
		out = append(out, fmt.Sprintf("%c%5d %s", l.op, l.n, l.text))
		last = k
	}
	return strings.Join(out, "\n")
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

// running returns a cluster whose WebApp runs shop:1 on 4 ready pods with an accepted route,
// with mods applied to its spec, and whose template then changed to shop:2: the first answer
// of the canary is taken.
func running(t *testing.T, mods ...func(*sync.Parent)) (*fakeCluster, sync.Response, sync.Response) {
	t.Helper()
	spec := func(image string) sync.Parent {
		return webapp(append([]func(*sync.Parent){canarySpec(image)}, mods...)...)
	}
	c := newCluster(t, spec("shop:1"))
	c.status["Deployment/hello"] = depStatus(1, 4, 4, 4, 4)
	c.status["HTTPRoute/hello"] = accepted
	before := c.sync(0)
	c.sync(time.Second)
	p := spec("shop:2")
	p.Canary, p.Conditions = c.parent.Canary, c.parent.Conditions
	c.parent = p
	return c, before, c.sync(time.Second)
}

// stableTemplateOf is the stable Deployment's pod template as an answer sends it.
func stableTemplateOf(t *testing.T, resp sync.Response) string {
	return member(t, sent(t, resp, "Deployment/hello"), "spec", "template")
}

// withHeaderRoute gives the canary a header route (X-Canary: always, or a cookie canary=always)
// and a first step of weight 0, held 5 s.
func withHeaderRoute(p *sync.Parent) {
	c := p.Spec.Rollout.Canary
	c.Steps = append([]webappv1.CanaryStep{{Weight: 0, PauseSeconds: ptr(int32(5))}}, c.Steps[1:]...)
	c.HeaderRoute = &webappv1.CanaryHeaderRoute{Matches: []webappv1.HeaderRouteMatch{
		{Headers: []webappv1.HeaderMatch{{Name: "X-Canary", Value: "always"}}},
		{Headers: []webappv1.HeaderMatch{{Name: "Cookie", Value: "(^|; *)canary=always(;|$)", Type: webappv1.HeaderMatchRegularExpression}}},
	}}
	webappv1.Default(&p.Spec)
}

// rules renders the route's rules of an answer, each "[match|match] -> name=weight,…", a match
// being its path and headers.
func rules(t *testing.T, resp sync.Response) string {
	t.Helper()
	route := childOf[*gatewayv1.HTTPRoute](resp.Children)
	if route == nil {
		return "no route"
	}
	var out []string
	for _, r := range route.Spec.Rules {
		var matches, backends []string
		for _, m := range r.Matches {
			match := *m.Path.Value
			for _, h := range m.Headers {
				match += fmt.Sprintf(" %s %s %q", h.Name, *h.Type, h.Value)
			}
			matches = append(matches, match)
		}
		for _, b := range r.BackendRefs {
			backends = append(backends, fmt.Sprintf("%s=%d", b.Name, *b.Weight))
		}
		out = append(out, "["+strings.Join(matches, "|")+"] -> "+strings.Join(backends, ","))
	}
	return strings.Join(out, "; ")
}

// TestSyncCanaryHeaderRoute walks a canary with a header route and a first step of weight 0:
// the header rule goes in the route, before the weighted one, once the canary has a pod
// available; the step is in place only when the route carries it; the steps then go on with it;
// and it goes with the traffic when the canary ends.
func TestSyncCanaryHeaderRoute(t *testing.T) {
	const (
		headerRule   = `[/ X-Canary Exact "always"|/ Cookie RegularExpression "(^|; *)canary=always(;|$)"] -> hello-canary=1`
		weighted0    = "[/] -> hello-stable=100,hello-canary=0"
		weighted50   = "[/] -> hello-stable=50,hello-canary=50"
		toTheService = "[/] -> hello=1"
	)
	c, _, first := running(t, withHeaderRoute)
	c.status["Deployment/hello-canary"] = depStatus(1, 1, 1, 1, 1)
	steps := []struct {
		name         string
		after        time.Duration
		status       map[string]any
		rules        string
		canary       string
		headerRouted bool
		message      string
	}{
		{"the canary starts: no Service of its own yet, the route as it was", 0, nil, toTheService, "Progressing step=0 weight=0 replicas=1", false, "waiting for 1 canary pod to be available (0 are) before 0% of the traffic and the requests its header route matches go to it"},
		{"the Services observed, the canary's pod not seen available yet: the route splits 100/0 alone", time.Second, nil, weighted0, "Progressing step=0 weight=0 replicas=1", false, "waiting for 1 canary pod"},
		{"its pod available: the header rule goes first, the weight stays 0", time.Second, nil, headerRule + "; " + weighted0, "Progressing step=0 weight=0 replicas=1", false, "waiting for the HTTPRoute to send 0% of the traffic and the requests its header route matches to the canary"},
		{"the route carries it, accepted: the step's pause starts", time.Second, nil, headerRule + "; " + weighted0, "Progressing step=0 weight=0 replicas=1", true, "0% of the traffic and the requests its header route matches on the canary, held for 5s"},
		{"the pause over: step 2 of 50% waits for its 2 pods, the header rule stays", 5 * time.Second, map[string]any{"Deployment/hello-canary": depStatus(2, 2, 2, 2, 2)}, headerRule + "; " + weighted0, "Progressing step=1 weight=0 replicas=2", true, "waiting for 2 canary pods"},
		{"2 pods available: 50%, with the header rule", time.Second, nil, headerRule + "; " + weighted50, "Progressing step=1 weight=0 replicas=2", true, "waiting for the HTTPRoute to send 50%"},
		{"in place: paused until promoted", time.Second, nil, headerRule + "; " + weighted50, "Paused step=1 weight=50 replicas=2", true, "50% of the traffic and the requests its header route matches on the canary, paused until it is promoted"},
	}
	for i, st := range steps {
		for k, v := range st.status {
			c.status[k] = v
		}
		resp := first
		if i > 0 {
			resp = c.sync(st.after)
		}
		if got := rules(t, resp); got != st.rules {
			t.Errorf("%s: rules = %s; want %s", st.name, got, st.rules)
		}
		if got := canaryOf(resp); got != st.canary {
			t.Errorf("%s: canary = %s; want %s", st.name, got, st.canary)
		}
		if got := resp.Status.Canary; got.HeaderRouted != st.headerRouted || !strings.Contains(got.Message, st.message) {
			t.Errorf("%s: headerRouted %t, message %q; want %t, and %q in it", st.name, got.HeaderRouted, got.Message, st.headerRouted, st.message)
		}
		if i == 3 {
			t.Run("golden", func(t *testing.T) { golden(t, resp) })
		}
	}
	t.Run("aborted: the header rule goes with the weight; the canary keeps its pods until the route without it is seen, and for the scale-down delay after", func(t *testing.T) {
		c.parent.Abort = webappv1.AttemptValue(c.parent.Canary.Revision, c.parent.Canary.Attempt)
		aborted := c.sync(time.Second)
		if got := rules(t, aborted); got != weighted0 || canaryOf(aborted) != "Aborted step=1 weight=50 replicas=2" || !aborted.Status.Canary.HeaderRouted || aborted.ResyncAfterSeconds != 0 {
			t.Fatalf("aborted: rules %s, canary %s, headerRouted %t, resync %v; want %s, the canary's pods kept, no timer", got, canaryOf(aborted), aborted.Status.Canary.HeaderRouted, aborted.ResyncAfterSeconds, weighted0)
		}
		seen := c.sync(time.Second)
		if seen.Status.Canary.HeaderRouted || seen.ResyncAfterSeconds != webappv1.DefaultScaleDownDelaySeconds || replicasOf(t, seen) != "4/2" {
			t.Errorf("the route seen without the header rule: headerRouted %t, resync %v, replicas %s; want false, %d, the canary's pods kept for the delay", seen.Status.Canary.HeaderRouted, seen.ResyncAfterSeconds, replicasOf(t, seen), webappv1.DefaultScaleDownDelaySeconds)
		}
	})
}

// TestSyncCanaryCases covers the canary's other ways through Sync. They share no state: each case
// plays its own cluster (newCluster, running), so each runs alone.
func TestSyncCanaryCases(t *testing.T) {
	t.Run("turning the canary on rolls nothing: the answer is the same but for the Canary condition", func(t *testing.T) {
		p := webapp(canarySpec("shop:1"))
		p.Spec.Rollout = nil
		c := newCluster(t, p)
		c.status["Deployment/hello"] = depStatus(1, 4, 4, 4, 4)
		c.status["HTTPRoute/hello"] = accepted
		without := c.sync(0)
		c.parent.Spec.Rollout = webapp(canarySpec("shop:1")).Spec.Rollout
		with := c.sync(time.Second)
		if got, want := asJSON(t, sentChildren(t, with)), asJSON(t, sentChildren(t, without)); got != want {
			t.Errorf("children with the canary on =\n%s\nwant them unchanged:\n%s", got, want)
		}
		if with.Status.Canary != nil || conditionOf(with.Status, webappv1.ConditionCanary) != "True/Idle" || with.Status.Phase != webappv1.PhaseReady {
			t.Errorf("status %+v; want Ready, no canary, Canary True/Idle", with.Status)
		}
	})
	t.Run("with an analysis, a canary that answers 500 is aborted at its first step, its metric and value in the message; the stable is never touched", func(t *testing.T) {
		c, before, _ := running(t, withAnalysis)
		c.status["Deployment/hello-canary"] = depStatus(1, 1, 1, 1, 1)
		measures := 0
		c.measure = func(span canary.Span) *canary.Measurement {
			measures++
			return &canary.Measurement{Span: span, Window: 10 * time.Second, Canary: canary.Values{Requests: ptr(40.0), Failed: ptr(40.0)}}
		}
		// The canary started at 12:00:02: its first check, over its requests since then
		// (canary.Due), is 3 s later; 40 requests that all failed abort it at once, and no
		// later call measures again.
		var resp sync.Response
		for _, d := range []time.Duration{time.Second, time.Second, 16 * time.Second, time.Second} {
			resp = c.sync(d)
		}
		if got := resp.Status.Canary; got.Phase != webappv1.CanaryAborted || got.Step != 0 || got.Analysis == nil || got.Analysis.Result != webappv1.CheckFailed {
			t.Fatalf("canary %s, analysis %+v; want Aborted at step 0 by a failed check", canaryOf(resp), got.Analysis)
		}
		if want := "aborted after 1 failed check: analysis: request-success-rate 0 on 40 requests, outside >= 99 at 99 % confidence"; !strings.Contains(resp.Status.Message, want) {
			t.Errorf("message %q; want it to contain %q", resp.Status.Message, want)
		}
		if measures != 1 {
			t.Errorf("measured %d times in one interval; want once", measures)
		}
		if got, want := stableTemplateOf(t, resp), stableTemplateOf(t, before); got != want {
			t.Errorf("stable template =\n%s\nwant it untouched:\n%s", got, want)
		}
	})
	t.Run("with an analysis, a timed step goes on only after a passing check once its weight is in place", func(t *testing.T) {
		c, _, _ := running(t, withAnalysis)
		c.status["Deployment/hello-canary"] = depStatus(1, 1, 1, 1, 1)
		requests := 0.0 // no traffic yet
		c.measure = func(span canary.Span) *canary.Measurement {
			return &canary.Measurement{Span: span, Window: 10 * time.Second, Canary: canary.Values{Requests: &requests}}
		}
		for range 3 {
			c.sync(time.Second) // the route carries 10%, the pause starts
		}
		held := c.sync(20 * time.Second) // the 5 s pause is long over
		if got := held.Status.Canary; got.Step != 0 || got.Analysis == nil || got.Analysis.Result != webappv1.CheckInconclusive {
			t.Fatalf("with no traffic: canary %s, analysis %+v; want step 0 held, inconclusive", canaryOf(held), got.Analysis)
		}
		if want := "the pause is over, and the step goes on after a check passes"; !strings.Contains(held.Status.Message, want) {
			t.Errorf("message %q; want it to contain %q", held.Status.Message, want)
		}
		if held.ResyncAfterSeconds != 0 || !held.Timed {
			t.Errorf("resyncAfterSeconds, timed = %v, %t; want no call of its own while checks are inconclusive (the resync period brings the next), and a timed answer", held.ResyncAfterSeconds, held.Timed)
		}
		requests = 500 // traffic comes back
		next := c.sync(10 * time.Second)
		if got := next.Status.Canary; got.Step != 1 || got.Analysis.Result != webappv1.CheckPassed {
			t.Errorf("with traffic: canary %s, analysis %+v; want step 1 after a passing check", canaryOf(next), got.Analysis)
		}
	})
	t.Run("a canary that cannot create pods is aborted after maxFailedChecks; the stable is never touched", func(t *testing.T) {
		c, before, first := running(t, func(p *sync.Parent) { p.Spec.Rollout.Canary.MaxFailedChecks = ptr(int32(2)) })
		quota := appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: "True", Reason: "FailedCreate",
			Message: `pods "hello-canary-5d8c7-x2kq" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=4, limited: pods=4`}
		c.status["Deployment/hello-canary"] = depStatus(1, 0, 0, 0, 0, quota)
		c.children = nil
		for _, obj := range first.Children {
			c.children = append(c.children, observe(t, obj, 1, c.status[key(t, obj)]))
		}
		sort.Slice(c.children, func(i, j int) bool {
			return c.children[i].Kind+"/"+c.children[i].Name < c.children[j].Kind+"/"+c.children[j].Name
		})
		one := c.sync(time.Second)
		if got := one.Status.Canary; got.FailedChecks != 1 || got.Phase != webappv1.CanaryProgressing || !strings.Contains(one.Status.Message, "1 of 2 failed checks: Deployment hello-canary cannot create pods (QuotaExceeded): exceeded quota") {
			t.Fatalf("after one failure: %s, %q", canaryOf(one), one.Status.Message)
		}
		if one.ResyncAfterSeconds != 10 {
			t.Errorf("resyncAfterSeconds = %v; want 10, when the next failure counts", one.ResyncAfterSeconds)
		}
		same := c.sync(5 * time.Second)
		if same.Status.Canary.FailedChecks != 1 {
			t.Errorf("a failure 5 s later counted: %d failed checks", same.Status.Canary.FailedChecks)
		}
		aborted := c.sync(5 * time.Second)
		if got := aborted.Status; got.Canary.Phase != webappv1.CanaryAborted || got.Phase != webappv1.PhaseDegraded || conditionOf(got, webappv1.ConditionReady) != "False/CanaryAborted" || conditionOf(got, webappv1.ConditionCanary) != "False/Aborted" {
			t.Fatalf("after two failures: phase %s, canary %s, conditions %v; want Degraded, Aborted", got.Phase, canaryOf(aborted), got.Conditions)
		}
		if !strings.Contains(aborted.Status.Message, "aborted after 2 failed checks: Deployment hello-canary cannot create pods (QuotaExceeded)") {
			t.Errorf("message %q; want the failed check named", aborted.Status.Message)
		}
		later := c.sync(time.Minute) // past the scale-down delay
		for _, resp := range []sync.Response{one, same, aborted, later} {
			if got, want := stableTemplateOf(t, resp), stableTemplateOf(t, before); got != want {
				t.Errorf("stable template =\n%s\nwant it untouched:\n%s", got, want)
			}
		}
		if got := replicasOf(t, later); got != "4/0" {
			t.Errorf("replicas stable/canary = %s; want 4/0", got)
		}
		if got, want := member(t, sent(t, aborted, "Deployment/hello-canary"), "metadata", "annotations", canary.AnnotationAborted), `"`+aborted.Status.Canary.Revision+`"`; got != want {
			t.Errorf("the canary Deployment's %s = %s; want %s", canary.AnnotationAborted, got, want)
		}
		// Metacontroller may call with the status before the abort, once the canary is at zero
		// and its ReplicaFailure gone: the canary stays aborted.
		stale := &sync.Request{Parent: c.parent, Children: c.children, ChildKinds: withGatewayAPI}
		stale.Parent.Canary = one.Status.Canary
		for i, ch := range stale.Children {
			if ch.Kind == "Deployment" && ch.Name == "hello-canary" {
				stale.Children[i] = observe(t, lastAppliedObject(t, ch), 1, depStatus(1, 0, 0, 0, 0))
			}
		}
		if got := sync.Sync(stale, c.now); got.Status.Canary.Phase != webappv1.CanaryAborted || replicasOf(t, got) != "4/0" {
			t.Errorf("with a status older than the abort: %s, replicas %s; want Aborted, 4/0", canaryOf(got), replicasOf(t, got))
		}
	})
	t.Run("rollback by edit: the template set back ends the canary at once, and rolls nothing", func(t *testing.T) {
		c, before, _ := running(t)
		c.status["Deployment/hello-canary"] = depStatus(1, 1, 1, 1, 1)
		c.sync(time.Second)
		c.sync(time.Second) // the route carries 10%
		if got := backends(t, c.sync(time.Second)); got != "hello-stable=90,hello-canary=10" {
			t.Fatalf("backends %s; want 10%% on the canary", got)
		}
		revision := c.parent.Canary.Revision
		p := webapp(canarySpec("shop:1"))
		p.Canary, p.Conditions = c.parent.Canary, c.parent.Conditions
		c.parent = p
		back := c.sync(time.Second)
		if got := back.Status.Canary; got.Phase != webappv1.CanaryRolledBack || got.Revision != revision {
			t.Errorf("canary %s (revision %s); want RolledBack of %s", canaryOf(back), got.Revision, revision)
		}
		if got := backends(t, back); got != "hello-stable=100,hello-canary=0" {
			t.Errorf("backends %s; want the canary's weight at 0 first", got)
		}
		if got, want := stableTemplateOf(t, back), stableTemplateOf(t, before); got != want {
			t.Errorf("stable template changed on rollback:\n%s\nwant\n%s", got, want)
		}
		if back.Status.Phase != webappv1.PhaseReady {
			t.Errorf("phase %s; want Ready: the stable runs the spec", back.Status.Phase)
		}
		next := c.sync(time.Second)
		if got := backends(t, next) + " " + replicasOf(t, next); got != "hello-stable=100,hello-canary=0 4/1" {
			t.Errorf("then backends and replicas %s; want hello-stable=100,hello-canary=0 4/1: the canary keeps its pods for the scale-down delay", got)
		}
		next = c.sync(webappv1.DefaultScaleDownDelaySeconds * time.Second)
		if got := backends(t, next) + " " + replicasOf(t, next); got != "hello=1 4/0" {
			t.Errorf("after the scale-down delay, backends and replicas %s; want hello=1 4/0", got)
		}
		c.status["Deployment/hello-canary"] = depStatus(1, 0, 0, 0, 0)
		for i, ch := range c.children {
			if ch.Name == "hello-canary" && ch.Kind == "Deployment" {
				c.children[i] = observe(t, lastAppliedObject(t, ch), 1, c.status["Deployment/hello-canary"])
			}
		}
		gone := c.sync(time.Second)
		if got := names(t, gone.Children); fmt.Sprint(got) != "[Deployment/hello HTTPRoute/hello Service/hello]" {
			t.Errorf("children %v; want the canary and its Services gone", got)
		}
	})
	t.Run("aborted by annotation, set back and then the same template again: the abort left behind does not act on the new attempt", func(t *testing.T) {
		c, _, _ := running(t)
		c.status["Deployment/hello-canary"] = depStatus(1, 1, 1, 1, 1)
		c.sync(time.Second)
		revision := c.parent.Canary.Revision
		c.parent.Abort = revision
		if got := c.sync(time.Second).Status.Canary; got.Phase != webappv1.CanaryAborted {
			t.Fatalf("canary %+v; want Aborted by the annotation", got)
		}
		for _, image := range []string{"shop:1", "shop:2"} {
			p := webapp(canarySpec(image))
			p.Canary, p.Conditions, p.Abort = c.parent.Canary, c.parent.Conditions, revision
			c.parent = p
			c.sync(time.Second)
		}
		again := c.sync(time.Second)
		st := again.Status.Canary
		if st.Phase != webappv1.CanaryProgressing || st.Revision != revision || st.Attempt != 1 {
			t.Errorf("canary %s, revision %s, attempt %d; want revision %s Progressing again, attempt 1", canaryOf(again), st.Revision, st.Attempt, revision)
		}
		want := []string{canary.AnnotationAttempt + "=1", canary.AnnotationRevision + "=" + revision}
		var got []string
		for _, k := range []string{canary.AnnotationAttempt, canary.AnnotationRevision} {
			got = append(got, k+"="+strings.Trim(member(t, sent(t, again, "Deployment/hello-canary"), "metadata", "annotations", k), `"`))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("canary Deployment annotations %v; want %v", got, want)
		}
		if want := []string{webappv1.AnnotationAbort + "=" + revision + ": names attempt 0 of revision " + revision + ", which is over: the canary is attempt 1 (" + revision + "@1)"}; fmt.Sprint(st.IgnoredAnnotations) != fmt.Sprint(want) {
			t.Errorf("ignoredAnnotations %q; want %q", st.IgnoredAnnotations, want)
		}
	})
	t.Run("an invalid rollout mid-canary keeps every child", func(t *testing.T) {
		c, _, _ := running(t)
		c.sync(time.Second)
		p := webapp(canarySpec("shop:2"), func(p *sync.Parent) { p.Spec.Rollout.Canary.Steps[1].Weight = 5 })
		p.Canary = c.parent.Canary
		req := &sync.Request{Parent: p, Children: c.children, ChildKinds: withGatewayAPI}
		invalidKeepsAll(t, req, "spec.rollout.canary.steps[1].weight: Invalid value: 5: must be greater than the weight of step 0 (10)")
		if got := sync.Sync(req, now).Status.Canary; asJSON(t, got) != asJSON(t, p.Canary) {
			t.Errorf("status.canary = %s; want it carried forward: %s", asJSON(t, got), asJSON(t, p.Canary))
		}
	})
	t.Run("the canary removed from the spec mid-canary: the stable takes the template, the canary's weight goes to 0 first", func(t *testing.T) {
		c, _, _ := running(t)
		c.status["Deployment/hello-canary"] = depStatus(1, 1, 1, 1, 1)
		c.sync(time.Second)
		c.sync(time.Second)
		c.parent.Spec.Rollout = nil
		resp := c.sync(time.Second)
		if got := backends(t, resp) + " " + replicasOf(t, resp); got != "hello-stable=100,hello-canary=0 4/1" {
			t.Errorf("backends and replicas %s; want hello-stable=100,hello-canary=0 4/1", got)
		}
		if resp.Status.Canary != nil || conditionOf(resp.Status, webappv1.ConditionCanary) != "" {
			t.Errorf("status canary %s, condition %q; want neither", canaryOf(resp), conditionOf(resp.Status, webappv1.ConditionCanary))
		}
		if got := stableTemplateOf(t, resp); !strings.Contains(got, `"image":"shop:2"`) {
			t.Errorf("stable template %s; want shop:2", got)
		}
	})
	t.Run("without the gateway-api component the split is by pods, and the status says so", func(t *testing.T) {
		c := newCluster(t, webapp(canarySpec("shop:1")))
		c.status["Deployment/hello"] = depStatus(1, 4, 4, 4, 4)
		req := func() sync.Response {
			r := &sync.Request{Parent: c.parent, Children: c.children, ChildKinds: withoutGatewayAPI}
			resp := sync.Sync(r, now)
			if err := hooktest.CheckResponse(r, resp); err != nil {
				t.Fatal(err)
			}
			c.parent.Canary = resp.Status.Canary
			c.children = nil
			for _, obj := range resp.Children {
				c.children = append(c.children, observe(t, obj, 1, c.status[key(t, obj)]))
			}
			return resp
		}
		req()
		c.parent = webapp(canarySpec("shop:2"))
		resp := req()
		if got := names(t, resp.Children); fmt.Sprint(got) != "[Deployment/hello Deployment/hello-canary Service/hello]" {
			t.Errorf("children %v; want no canary Services without a route", got)
		}
		if !strings.Contains(resp.Status.Message, "splits the traffic by pod count, not by weight") {
			t.Errorf("message %q; want it to say the split is by pod count", resp.Status.Message)
		}
		if got := member(t, sent(t, resp, "Service/hello"), "spec", "selector"); strings.Contains(got, webappv1.LabelName) {
			t.Errorf("Service hello selects %s; want the canary's pods too", got)
		}
	})
	t.Run("with an autoscaler the stable keeps its count and the one autoscaler; the canary follows", func(t *testing.T) {
		c, _, first := running(t, func(p *sync.Parent) {
			p.Spec.Autoscaling = &webappv1.Autoscaling{MinReplicas: ptr(int32(2)), MaxReplicas: 20}
		})
		if got := replicasOf(t, first); got != "2/1" {
			t.Errorf("replicas %s; want 2/1, minReplicas", got)
		}
		// The autoscaler sets the stable Deployment to 10.
		for i, ch := range c.children {
			if ch.Kind == "Deployment" && ch.Name == "hello" {
				obj := lastApplied(t, ch).(map[string]any)
				obj["spec"].(map[string]any)["replicas"] = 10
				c.children[i] = observe(t, &unstructured.Unstructured{Object: obj}, 1, depStatus(1, 10, 10, 10, 10))
			}
		}
		c.status["Deployment/hello-canary"] = depStatus(1, 1, 1, 1, 1)
		resp := c.sync(time.Second)
		if got := replicasOf(t, resp); got != "10/1" {
			t.Errorf("replicas %s; want 10/1 (ceil(10%% of 10))", got)
		}
		var hpas []string
		for _, o := range resp.Children {
			if h, ok := o.(interface{ GetName() string }); ok && o.GetObjectKind().GroupVersionKind().Kind == "HorizontalPodAutoscaler" {
				hpas = append(hpas, h.GetName())
			}
		}
		if fmt.Sprint(hpas) != "[hello]" {
			t.Errorf("autoscalers %v; want the one of the stable Deployment", hpas)
		}
	})
	t.Run("pod diagnosis reads the canary's pods alone, even when the stable ones run the same image", func(t *testing.T) {
		env := func(v string) func(*sync.Parent) {
			return func(p *sync.Parent) { p.Spec.Env = []corev1.EnvVar{{Name: "LEVEL", Value: v}} }
		}
		pod := func(name string, labels map[string]string, restarts int32) sync.RelatedPod {
			return sync.RelatedPod{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: labels},
				Images:     map[string]string{sync.ContainerName: "shop:1"},
				Status:     corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: sync.ContainerName, RestartCount: restarts, Ready: true}}},
			}
		}
		stable := map[string]string{webappv1.LabelName: webappv1.AppName, webappv1.LabelInstance: "hello", webappv1.LabelManagedBy: webappv1.ManagedBy}
		canaryLabels := map[string]string{webappv1.LabelInstance: "hello", webappv1.LabelManagedBy: webappv1.ManagedBy, webappv1.LabelTrack: webappv1.TrackCanary}
		c := newCluster(t, webapp(canarySpec("shop:1"), env("info")))
		c.status["Deployment/hello"] = depStatus(1, 4, 4, 4, 4)
		c.status["HTTPRoute/hello"] = accepted
		c.related = sync.Related{Kinds: map[string]bool{"Pod.v1": true}}
		for i := range 4 {
			c.related.Pods = append(c.related.Pods, pod(fmt.Sprintf("hello-5d8c7-%d", i), stable, 3))
		}
		c.sync(0)
		p := webapp(canarySpec("shop:1"), env("debug"))
		p.Canary, p.Conditions = c.parent.Canary, c.parent.Conditions
		c.parent = p
		c.sync(time.Second)
		c.related.Pods = append(c.related.Pods, pod("hello-canary-7f9d4-0", canaryLabels, 0))
		quiet := c.sync(time.Second)
		if got := quiet.Status.Canary; got.FailedChecks != 0 {
			t.Fatalf("%d failed checks (%s); want none: the stable pods' restarts are not the canary's", got.FailedChecks, got.LastFailedCheck)
		}
		c.related.Pods[4] = pod("hello-canary-7f9d4-0", canaryLabels, 1)
		crash := c.sync(time.Second)
		if got := crash.Status.Canary; got.Phase != webappv1.CanaryAborted || !strings.Contains(got.LastFailedCheck, "its containers restarted (1 restarts in all, 0 before)") {
			t.Errorf("canary %s, last failed check %q; want Aborted on the canary's restart", canaryOf(crash), got.LastFailedCheck)
		}
	})
	t.Run("delete mid-canary: the Services and the route go first, then both Deployments scale to zero", func(t *testing.T) {
		c, _, _ := running(t)
		c.status["Deployment/hello-canary"] = depStatus(1, 1, 1, 1, 1)
		c.sync(time.Second)
		req := &sync.Request{Parent: c.parent, Children: c.children, ChildKinds: withGatewayAPI, Finalizing: true}
		first := sync.Finalize(req, now)
		if got := names(t, first.Children); fmt.Sprint(got) != "[Deployment/hello Deployment/hello-canary]" {
			t.Errorf("first finalize keeps %v; want both Deployments only", got)
		}
		var deps []sync.Child
		for _, ch := range c.children {
			if ch.Kind == "Deployment" {
				deps = append(deps, ch)
			}
		}
		second := sync.Finalize(&sync.Request{Parent: c.parent, Children: deps, Finalizing: true}, now)
		if got := replicasOf(t, second); got != "0/0" {
			t.Errorf("then replicas %s; want both at 0", got)
		}
	})
}

// settle plays the controllers around c after its last answer resp: every Deployment answered,
// kept or built, is observed rolled out with the replicas it asks for, and the route accepted.
func (c *fakeCluster) settle(resp sync.Response) {
	c.t.Helper()
	c.status["HTTPRoute/hello"] = accepted
	c.children = nil
	for _, obj := range resp.Children {
		if d, ok := obj.(*appsv1.Deployment); ok {
			n := *d.Spec.Replicas
			c.status[key(c.t, obj)] = depStatus(1, n, n, n, n)
		}
		if u, ok := obj.(*unstructured.Unstructured); ok && u.GetKind() == "Deployment" {
			n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
			c.status[key(c.t, obj)] = depStatus(1, int32(n), int32(n), int32(n), int32(n))
		}
		c.children = append(c.children, observe(c.t, obj, 1, c.status[key(c.t, obj)]))
	}
	sort.Slice(c.children, func(i, j int) bool {
		return c.children[i].Kind+"/"+c.children[i].Name < c.children[j].Kind+"/"+c.children[j].Name
	})
}

// release sets the image to image and promotes its canary by hand, the controllers around it
// settling after every answer, until it is Promoted; it returns the revision promoted.
func (c *fakeCluster) release(image string) string {
	c.t.Helper()
	c.parent.Spec.Image = image
	for range 20 {
		resp := c.sync(11 * time.Second) // past the scale-down delay every time
		c.settle(resp)
		st := resp.Status.Canary
		if st != nil && st.Phase == webappv1.CanaryPromoted && st.Revision != "" {
			c.parent.Promote = ""
			return st.Revision
		}
		if st != nil && canary.AtAStep(st.Phase) {
			c.parent.Promote = webappv1.AttemptValue(st.Revision, st.Attempt)
		}
	}
	c.t.Fatalf("%s never promoted: canary %+v", image, c.parent.Canary)
	return ""
}

// TestSyncCanaryRollbackWindow: with a rollback window, a template set back to a revision the
// stable Deployment ran within it goes back without a canary, the stable Deployment taking the
// template at once, and the status says why; one outside it starts a canary, as without the
// window.
func TestSyncCanaryRollbackWindow(t *testing.T) {
	start := func(revisions int32) (*fakeCluster, string) {
		p := webapp(canarySpec("shop:1"), func(p *sync.Parent) {
			p.Spec.Rollout.Canary.RollbackWindow = &webappv1.RollbackWindow{Revisions: revisions}
		})
		c := newCluster(t, p)
		c.status["Deployment/hello"] = depStatus(1, 4, 4, 4, 4)
		c.settle(c.sync(0))
		c.settle(c.sync(time.Second))
		return c, c.release("shop:2")
	}
	// shop:2 promoted, the image set back to shop:1: the stable Deployment takes it back at once.
	t.Run("within the window", func(t *testing.T) {
		c, two := start(1)
		one := c.parent.Canary.StableRevisions[1]
		if got := c.parent.Canary.StableRevisions; !slices.Equal(got, []string{two, one}) {
			t.Fatalf("stableRevisions after the promotion = %q; want %q", got, []string{two, one})
		}
		c.parent.Spec.Image = "shop:1"
		back := c.sync(time.Second)
		st := back.Status.Canary
		if st.Phase != webappv1.CanaryRolledBack || st.Revision != one || !strings.Contains(st.Message, "Rolled back to revision "+one+" without a canary") {
			t.Fatalf("canary %s %s: %q; want RolledBack to %s, and why", st.Phase, st.Revision, st.Message, one)
		}
		if sent(t, back, "Deployment/hello-canary") != nil || !strings.Contains(stableTemplateOf(t, back), `"image":"shop:1"`) {
			t.Errorf("children %s; want no canary Deployment, and the stable Deployment's template back at shop:1", stableTemplateOf(t, back))
		}
		if back.Status.Phase != webappv1.PhaseProgressing || conditionOf(back.Status, webappv1.ConditionCanary) != "True/RolledBack" {
			t.Errorf("phase %s, Canary %s; want Progressing, as the stable Deployment rolls, and True/RolledBack", back.Status.Phase, conditionOf(back.Status, webappv1.ConditionCanary))
		}
		c.settle(back)
		rolled := c.sync(time.Second)
		if got := rolled.Status.Canary.StableRevisions; !slices.Equal(got, []string{one, two}) || rolled.Status.Phase != webappv1.PhaseReady || rolled.Status.Canary.Phase != webappv1.CanaryRolledBack {
			t.Errorf("rolled back: phase %s, canary %s, stableRevisions %q; want Ready, RolledBack, %q", rolled.Status.Phase, rolled.Status.Canary.Phase, got, []string{one, two})
		}
		t.Run("golden", func(t *testing.T) { golden(t, back) })
	})
	// shop:2 then shop:3 promoted, a window of 1, the image set back to shop:1: a canary.
	t.Run("outside the window", func(t *testing.T) {
		c, _ := start(1)
		c.release("shop:3")
		c.parent.Spec.Image = "shop:1"
		back := c.sync(time.Second)
		if st := back.Status.Canary; st.Phase != webappv1.CanaryProgressing || sent(t, back, "Deployment/hello-canary") == nil || strings.Contains(stableTemplateOf(t, back), `"image":"shop:1"`) {
			t.Errorf("canary %s; want a canary of shop:1, the stable Deployment held at shop:3", canaryOf(back))
		}
	})
}

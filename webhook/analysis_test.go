package webhook_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"runtime"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/example/webapp-operator/analysis"
	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
	"github.com/example/webapp-operator/webhook"
)

// fakeMeasurer records its calls and answers each with its measurement; or, when earlier is set,
// says the check is still being measured and offers its measurement of the earlier check of the
// step that ends at earlier.
type fakeMeasurer struct {
	mu      stdsync.Mutex
	calls   []measureCall
	m       canary.Measurement
	earlier time.Time
}

type measureCall struct {
	parent analysis.Parent
	span   canary.Span
	a      *webappv1.CanaryAnalysis
}

func (f *fakeMeasurer) Lookup(parent analysis.Parent, a *webappv1.CanaryAnalysis, span canary.Span, wait time.Duration) (canary.Measurement, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, measureCall{parent, span, a})
	m := f.m
	m.Span, m.Window = span, a.Window()
	if !f.earlier.IsZero() {
		m.Span.To = f.earlier
		return m, false
	}
	return m, true
}

// analysisRequest is sync's canary walk at its timed step (step-04: 10 % on the canary, its pause
// running), with an analysis checking every 30 s, and a status that recorded checkTime when it is
// not zero; and the time of its pause's start.
func analysisRequest(t *testing.T, checkTime time.Time) (string, time.Time) {
	t.Helper()
	return analysisRequestPaused(t, checkTime, time.Time{})
}

// analysisRequestPaused is analysisRequest with its pause started at pause, when not zero.
func analysisRequestPaused(t *testing.T, checkTime, pause time.Time) (string, time.Time) {
	t.Helper()
	b, err := os.ReadFile("../sync/testdata/canary/step-04.request.json")
	if err != nil {
		t.Fatal(err)
	}
	var req map[string]any
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	parent := req["parent"].(map[string]any)
	c := parent["spec"].(map[string]any)["rollout"].(map[string]any)["canary"].(map[string]any)
	c["analysis"] = map[string]any{"intervalSeconds": 30, "minRequests": 10, "metrics": []any{
		map[string]any{"name": "request-success-rate", "thresholdRange": map[string]any{"min": 99}},
	}}
	st := parent["status"].(map[string]any)["canary"].(map[string]any)
	if !checkTime.IsZero() {
		st["analysis"] = map[string]any{"checkTime": checkTime.Format(time.RFC3339), "windowSeconds": 30, "result": "Passed", "step": 0}
	}
	if !pause.IsZero() {
		st["pauseStartTime"] = pause.UTC().Format(time.RFC3339)
	}
	pause, err = time.Parse(time.RFC3339, st["pauseStartTime"].(string))
	if err != nil {
		t.Fatal(err)
	}
	// The canary started a minute before its pause (its pod took that long); its step's first
	// check is 3 s after the pause starts, and judges the requests since the step began.
	st["stepStartTime"] = pause.Add(-time.Minute).Format(time.RFC3339)
	out, _ := json.Marshal(req)
	return string(out), pause
}

// checkOf is the analysis record of a sync answer.
func checkOf(t *testing.T, body []byte) *webappv1.AnalysisStatus {
	t.Helper()
	var a struct {
		Status struct {
			Canary struct {
				Analysis *webappv1.AnalysisStatus `json:"analysis"`
			} `json:"canary"`
		} `json:"status"`
	}
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return a.Status.Canary.Analysis
}

// TestAnalysisMeasured checks that a sync call measures the check that canary.Due says is due,
// once, at the check's time, and never when none is due, at finalize or at customize; and that an
// answer that judged a measurement is never served from the answer cache.
func TestAnalysisMeasured(t *testing.T) {
	body, pause := analysisRequest(t, time.Time{})
	now := pause.Add(3700 * time.Millisecond)
	at := pause.Add(canary.FirstCheckDelay)
	requests, failed := 1200.0, 1.0
	fake := &fakeMeasurer{m: canary.Measurement{Canary: canary.Values{Requests: &requests, Failed: &failed}}}
	h := webhook.New(webhook.Options{CacheBytes: webhook.DefaultCacheBytes, Now: func() time.Time { return now }, Analysis: fake})

	rec := serve(h, "POST", "/sync", body)
	if rec.Code != 200 {
		t.Fatalf("sync = %d %s", rec.Code, rec.Body)
	}
	if len(fake.calls) != 1 {
		t.Fatalf("%d measurements; want 1", len(fake.calls))
	}
	// The route as the hook writes it; no Gateway was sent along, so it is not Seen.
	wantParent := analysis.Parent{Namespace: "default", Name: "hello", Route: analysis.Route{
		Hostnames: []string{"hello.example.com"}, Path: "/", PathType: "PathPrefix",
		Parents:  []analysis.RouteParent{{Namespace: "default", Name: "public"}},
		Backends: []string{"hello-stable", "hello-canary"},
	}}
	if c := fake.calls[0]; !reflect.DeepEqual(c.parent, wantParent) || !c.span.To.Equal(at) || !c.span.From.Equal(pause.Add(-time.Minute)) || c.a == nil || len(c.a.Metrics) != 1 {
		t.Errorf("measured %+v over %s..%s; want the WebApp's analysis over the step so far, up to %s", c.parent, c.span.From, c.span.To, at)
	}
	rec2 := checkOf(t, rec.Body.Bytes())
	if rec2 == nil || !rec2.CheckTime.Time.Equal(at) || rec2.Result != webappv1.CheckPassed {
		t.Errorf("the answer's check: %+v; want one passed at %s", rec2, at)
	}

	serve(h, "POST", "/sync", body)
	if len(fake.calls) != 2 {
		t.Errorf("the same request again: %d measurements in all; want 2: an answer that judged a measurement is not cached", len(fake.calls))
	}

	// With its check recorded, the answer is still Timed (the next check's timer runs): the same
	// request twice is decided twice, never answered from the cache.
	recorded, _ := analysisRequest(t, at)
	serve(h, "POST", "/sync", recorded)
	serve(h, "POST", "/sync", recorded)
	if m := serve(h.MetricsHandler(), "GET", "/metrics", "").Body.String(); !strings.Contains(m, `webapp_hook_answer_cache_requests_total{result="hit"} 0`) {
		t.Errorf("an answer of a canary with analysis at a step came from the cache:\n%s", m)
	}
	serve(h, "POST", "/finalize", body)
	serve(h, "POST", "/customize", body)
	if len(fake.calls) != 2 {
		t.Errorf("%d measurements in all; want none for a check already recorded, for finalize or for customize", len(fake.calls))
	}
}

// TestAnalysisEarlierCheck checks a call whose due check is still being measured, and which is
// offered the step's earlier check: judged in its stead, at its own time, with a call a second
// later when it found something new, and none when it found what the record holds (a canary
// without traffic behind a slow Prometheus then costs no call of its own); and not judged again
// when the record is of that very check.
func TestAnalysisEarlierCheck(t *testing.T) {
	body, pause := analysisRequest(t, time.Time{})
	first := pause.Add(canary.FirstCheckDelay)
	none := 0.0
	fake := &fakeMeasurer{m: canary.Measurement{Canary: canary.Values{Requests: &none}}}
	var now time.Time
	h := webhook.New(webhook.Options{Now: func() time.Time { return now }, Analysis: fake})
	call := func(body string, check, earlier time.Time) (*webappv1.AnalysisStatus, float64) {
		t.Helper()
		now, fake.earlier = check.Add(700*time.Millisecond), earlier
		rec := serve(h, "POST", "/sync", body)
		var resync struct {
			ResyncAfterSeconds float64 `json:"resyncAfterSeconds"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &resync); err != nil {
			t.Fatal(err)
		}
		return checkOf(t, rec.Body.Bytes()), resync.ResyncAfterSeconds
	}

	c, resync := call(body, first.Add(30*time.Second), first)
	if c == nil || !c.CheckTime.Time.Equal(first) || c.Result != webappv1.CheckInconclusive || resync != 1 {
		t.Fatalf("the second check due, the first offered: check %+v, resyncAfterSeconds %v; want the first, inconclusive, at %s, and a call in 1 s for the second: it found something new", c, resync, first)
	}
	recorded := withRecord(t, body, c)
	c, resync = call(recorded, first.Add(60*time.Second), first.Add(30*time.Second))
	if c == nil || !c.CheckTime.Time.Equal(first) || resync == 1 {
		t.Errorf("the third check due, the second offered, finding what the first did: check %+v, resyncAfterSeconds %v; want the record as it was, at %s, and no call of its own", c, resync, first)
	}
	c, resync = call(recorded, first.Add(30*time.Second), first)
	if c == nil || !c.CheckTime.Time.Equal(first) || resync != 1 {
		t.Errorf("the second check due, the first offered, which the record holds: check %+v, resyncAfterSeconds %v; want the record as it was, and a call in 1 s", c, resync)
	}
	if len(fake.calls) != 3 {
		t.Errorf("%d lookups; want 3", len(fake.calls))
	}
}

// withRecord is the sync request body with status.canary.analysis set to rec, as Metacontroller
// sends it back once it wrote an answer's status.
func withRecord(t *testing.T, body string, rec *webappv1.AnalysisStatus) string {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rec)
	var r map[string]any
	json.Unmarshal(b, &r)
	req["parent"].(map[string]any)["status"].(map[string]any)["canary"].(map[string]any)["analysis"] = r
	out, _ := json.Marshal(req)
	return string(out)
}

// TestAnalysisWithoutPrometheus checks that without a Measurer a due check is recorded as
// inconclusive, and says why.
func TestAnalysisWithoutPrometheus(t *testing.T) {
	body, pause := analysisRequest(t, time.Time{})
	h := webhook.New(webhook.Options{Now: func() time.Time { return pause.Add(4 * time.Second) }})
	rec := serve(h, "POST", "/sync", body)
	c := checkOf(t, rec.Body.Bytes())
	if c == nil || c.Result != webappv1.CheckInconclusive || !strings.Contains(c.Message, "no Prometheus") {
		t.Errorf("check %+v; want inconclusive, for want of a Prometheus", c)
	}
}

// TestAnalysisSlowPrometheus checks that a Prometheus that does not answer holds no sync call: the
// first call with a check due starts the query and answers at once, the check still due and a
// call asked for in a second; a call once the query has timed out judges the check inconclusive,
// saying why without naming Prometheus's address; and the analysis's metrics are served with the
// hook's.
func TestAnalysisSlowPrometheus(t *testing.T) {
	release, gone := make(chan struct{}), make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm() // the whole body read, the server notices when the hook hangs up
		select {
		case <-r.Context().Done():
			gone <- struct{}{} // the hook gave up on it
		case <-release:
		}
	}))
	defer slow.Close()
	defer close(release)
	// The query's timeout is long beside the measure wait, so that a call that returns well within
	// it did not wait for the query, however loaded the machine.
	const timeout = 2 * time.Second
	p, err := analysis.New(analysis.Config{URL: slow.URL, Gateway: "istio", QueryTimeout: timeout}) // Istio's selector needs no Gateway sent along
	if err != nil {
		t.Fatal(err)
	}
	// The pause started 4 s ago by the clock the analysis's cache keeps its measurements by.
	body, pause := analysisRequestPaused(t, time.Time{}, time.Now().Add(-4*time.Second).Truncate(time.Second))
	h := webhook.New(webhook.Options{Now: func() time.Time { return pause.Add(4 * time.Second) }, Analysis: p})
	start := time.Now()
	rec := serve(h, "POST", "/sync", body)
	if took := time.Since(start); took > timeout/2 {
		t.Errorf("the call took %s; want it to wait for Prometheus %s at most, not for the query's %s", took, webhook.DefaultMeasureWait, timeout)
	}
	if c := checkOf(t, rec.Body.Bytes()); c != nil {
		t.Errorf("check %+v recorded while its query runs; want none yet", c)
	}
	var resync struct {
		ResyncAfterSeconds float64 `json:"resyncAfterSeconds"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resync); err != nil || resync.ResyncAfterSeconds != 1 {
		t.Errorf("resyncAfterSeconds = %v (%v); want 1: a call again in a second, for the check being measured", resync.ResyncAfterSeconds, err)
	}
	select {
	case <-gone: // the query's own timeout, in real time
	case <-time.After(5 * timeout):
		t.Fatal("the query never timed out")
	}
	var c *webappv1.AnalysisStatus
	for deadline := time.Now().Add(5 * timeout); c == nil && time.Now().Before(deadline); runtime.Gosched() {
		rec = serve(h, "POST", "/sync", body) // until the timed-out query's measurement is kept
		c = checkOf(t, rec.Body.Bytes())
	}
	if want := "nothing was measured: Prometheus did not answer within 2s"; c == nil || c.Result != webappv1.CheckInconclusive || c.Message != want {
		t.Errorf("check %+v; want inconclusive: %q", c, want)
	}
	if strings.Contains(rec.Body.String(), strings.TrimPrefix(slow.URL, "http://")) {
		t.Errorf("the answer names Prometheus's address: %s", rec.Body)
	}
	metrics := serve(h.MetricsHandler(), "GET", "/metrics", "").Body.String()
	for _, want := range []string{`webapp_hook_analysis_queries_total{outcome="timeout"} 1`} { // one query, however many calls asked
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s:\n%s", want, metrics)
		}
	}
}

// TestAnalysisRoute checks the route a measurement is given: the parentRefs with their
// namespace defaulted (the install's --default-gateway when the spec names none), and each
// Gateway Metacontroller sent along with its listeners; a Gateway not sent is not Seen.
func TestAnalysisRoute(t *testing.T) {
	body, pause := analysisRequest(t, time.Time{})
	var req map[string]any
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	route := req["parent"].(map[string]any)["spec"].(map[string]any)["route"].(map[string]any)
	route["parentRefs"] = []any{
		map[string]any{"name": "public", "namespace": "infra", "sectionName": "https"},
		map[string]any{"name": "internal", "port": 8000},
	}
	req["related"] = map[string]any{"Gateway.gateway.networking.k8s.io/v1": map[string]any{
		"infra/public": map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
			"metadata": map[string]any{"name": "public", "namespace": "infra"},
			"spec": map[string]any{"listeners": []any{
				map[string]any{"name": "http", "port": 8000, "protocol": "HTTP"},
				map[string]any{"name": "https", "port": 8443, "protocol": "HTTPS", "hostname": "*.example.com"},
			}}},
	}}
	b, _ := json.Marshal(req)
	now := pause.Add(canary.FirstCheckDelay + 700*time.Millisecond)
	fake := &fakeMeasurer{}
	h := webhook.New(webhook.Options{Now: func() time.Time { return now }, Analysis: fake})
	if rec := serve(h, "POST", "/sync", string(b)); rec.Code != 200 {
		t.Fatalf("sync = %d %s", rec.Code, rec.Body)
	}
	if len(fake.calls) != 1 {
		t.Fatalf("%d measurements; want 1", len(fake.calls))
	}
	want := analysis.Route{
		Hostnames: []string{"hello.example.com"}, Path: "/", PathType: "PathPrefix",
		Parents: []analysis.RouteParent{
			{Namespace: "infra", Name: "public", SectionName: "https", Seen: true, Listeners: []analysis.Listener{
				{Name: "http", Port: 8000, Protocol: "HTTP"},
				{Name: "https", Port: 8443, Protocol: "HTTPS", Hostname: "*.example.com"},
			}},
			{Namespace: "default", Name: "internal", Port: 8000},
		},
		Backends: []string{"hello-stable", "hello-canary"},
	}
	if got := fake.calls[0].parent.Route; !reflect.DeepEqual(got, want) {
		t.Errorf("route\n got  %+v\n want %+v", got, want)
	}

	// With a header route: its matches, and whether the analysis counts its requests.
	canarySpec := req["parent"].(map[string]any)["spec"].(map[string]any)["rollout"].(map[string]any)["canary"].(map[string]any)
	canarySpec["headerRoute"] = map[string]any{"matches": []any{
		map[string]any{"headers": []any{map[string]any{"name": "X-Canary", "value": "always"}}},
		map[string]any{"headers": []any{map[string]any{"name": "Cookie", "value": "canary=always", "type": "RegularExpression"}}},
	}, "analysis": "Exclude"}
	b, _ = json.Marshal(req)
	fake.calls = nil
	if rec := serve(h, "POST", "/sync", string(b)); rec.Code != 200 {
		t.Fatalf("sync = %d %s", rec.Code, rec.Body)
	}
	want.HeaderMatches = [][]analysis.HeaderMatch{{{Name: "X-Canary", Value: "always"}}, {{Name: "Cookie", Value: "canary=always", Regex: true}}}
	if len(fake.calls) != 1 {
		t.Fatalf("%d measurements; want 1", len(fake.calls))
	}
	if got := fake.calls[0].parent.Route; !reflect.DeepEqual(got, want) {
		t.Errorf("route with a header route\n got  %+v\n want %+v", got, want)
	}
}

// TestAnalysisNotMeasured checks that a check through Traefik whose series the hook cannot tell
// from other routes' (here: no --analysis-entrypoints) is inconclusive and says so, and that
// Prometheus is not asked.
func TestAnalysisNotMeasured(t *testing.T) {
	var asked atomic.Int64
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked.Add(1) }))
	defer prom.Close()
	p, err := analysis.New(analysis.Config{URL: prom.URL})
	if err != nil {
		t.Fatal(err)
	}
	body, pause := analysisRequest(t, time.Time{})
	h := webhook.New(webhook.Options{Now: func() time.Time { return pause.Add(canary.FirstCheckDelay + time.Second) }, Analysis: p})
	c := checkOf(t, serve(h, "POST", "/sync", body).Body.Bytes())
	want := "nothing was measured: the Gateway's series names cannot tell this route from others (Traefik names them after its entry points, and the hook's --analysis-entrypoints names none): not measured"
	if c == nil || c.Result != webappv1.CheckInconclusive || c.Message != want {
		t.Errorf("check %+v; want inconclusive: %q", c, want)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("Prometheus was asked %d times; want none", n)
	}
}

// TestAnalysisHealthyPrometheus checks that a Prometheus that answers within Options.MeasureWait
// costs no second call: the check is judged at the call that found it due. The wait is long here,
// so that a loaded machine running the tests cannot make the fake Prometheus late.
func TestAnalysisHealthyPrometheus(t *testing.T) {
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"success","data":{"resultType":"vector","result":[`+
			`{"metric":{"value":"requests","track":"canary"},"value":[0,"1200"]},`+
			`{"metric":{"value":"failed","track":"canary"},"value":[0,"1"]}]}}`)
	}))
	defer prom.Close()
	p, err := analysis.New(analysis.Config{URL: prom.URL, EntryPoints: analysis.EntryPoints{"web": 8000}})
	if err != nil {
		t.Fatal(err)
	}
	body, pause := analysisRequest(t, time.Time{})
	var req map[string]any
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	route := req["parent"].(map[string]any)["spec"].(map[string]any)["route"].(map[string]any)
	route["parentRefs"] = []any{map[string]any{"name": "public", "namespace": "infra"}}
	req["related"] = map[string]any{"Gateway.gateway.networking.k8s.io/v1": map[string]any{
		"infra/public": map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
			"metadata": map[string]any{"name": "public", "namespace": "infra"},
			"spec":     map[string]any{"listeners": []any{map[string]any{"name": "http", "port": 8000, "protocol": "HTTP"}}}},
	}}
	b, _ := json.Marshal(req)
	h := webhook.New(webhook.Options{Now: func() time.Time { return pause.Add(canary.FirstCheckDelay) }, Analysis: p, MeasureWait: time.Minute})
	c := checkOf(t, serve(h, "POST", "/sync", string(b)).Body.Bytes())
	if c == nil || c.Result != webappv1.CheckPassed || c.Requests == nil || *c.Requests != 1200 {
		t.Errorf("check %+v; want it passed at the first call, on 1200 requests", c)
	}
}

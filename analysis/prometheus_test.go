package analysis

import (
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// at is a check time: a whole multiple of the default 30 s interval.
var at = time.Unix(1_700_000_010, 0).UTC()

var successRate = webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{
	{Name: "request-success-rate", ThresholdRange: webappv1.ThresholdRange{Min: ptr(99.0)}},
}}

// spanTo is the span of a check at at, of a step that began 10 minutes before.
func spanTo(at time.Time) canary.Span { return canary.Span{From: at.Add(-10 * time.Minute), To: at} }

// sample is one series of an answer: its labels as value/metric/track, and its value as
// Prometheus writes it ("NaN" included).
type sample struct{ value, metric, track, v, le string }

// vectorJSON is a Prometheus query answer of samples, at at.
func vectorJSON(samples ...sample) string {
	var parts []string
	for _, s := range samples {
		labels := fmt.Sprintf(`"value":%q,"track":%q`, s.value, s.track)
		if s.metric != "" {
			labels += fmt.Sprintf(`,"metric":%q`, s.metric)
		}
		if s.le != "" {
			labels += fmt.Sprintf(`,"le":%q`, s.le)
		}
		parts = append(parts, fmt.Sprintf(`{"metric":{%s},"value":[%d,%q]}`, labels, at.Unix(), s.v))
	}
	return `{"status":"success","data":{"resultType":"vector","result":[` + strings.Join(parts, ",") + `]}}`
}

// server is a fake Prometheus: it answers every query with answer, and records what it was asked.
type server struct {
	*httptest.Server
	queries atomic.Int64
	mu      stdsync.Mutex
	form    map[string][]string
	auth    string
}

func newServer(t *testing.T, code int, answer string) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.queries.Add(1)
		r.ParseForm()
		s.mu.Lock()
		s.form, s.auth = r.PostForm, r.Header.Get("Authorization")
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, answer)
	}))
	t.Cleanup(s.Close)
	return s
}

// mustNew is New(c), with the tests' entry points when c names none.
func mustNew(t *testing.T, c Config) *Prometheus {
	t.Helper()
	if c.EntryPoints == nil {
		c.EntryPoints = testEntryPoints
	}
	p, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMeasure(t *testing.T) {
	compared := webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{
		{Name: "request-success-rate", ThresholdRange: webappv1.ThresholdRange{Min: ptr(99.0)}, Stable: &webappv1.StableComparison{MaxDifference: 1}},
		{Name: "budget", TemplateRef: &webappv1.MetricTemplateRef{Name: "budget"}, ThresholdRange: webappv1.ThresholdRange{Max: ptr(1.0)}},
		{Name: "nope", TemplateRef: &webappv1.MetricTemplateRef{Name: "nope"}, ThresholdRange: webappv1.ThresholdRange{Max: ptr(1.0)}},
	}}
	templates := filepath.Join(t.TempDir(), "templates.yaml")
	os.WriteFile(templates, []byte("templates:\n- name: budget\n  query: sum(x{s=\"{{.Service}}\"})\n"), 0o600)
	for _, tc := range []struct {
		name           string
		a              webappv1.CanaryAnalysis
		answer         string
		canary, stable canary.Values
	}{
		{
			name:   "every value",
			a:      successRate,
			answer: vectorJSON(sample{"requests", "", "canary", "120.4", ""}, sample{"failed", "", "canary", "2", ""}),
			canary: canary.Values{Requests: ptr(120.4), Failed: ptr(2.0)},
		},
		{
			name:   "NaN and infinities are no data",
			a:      successRate,
			answer: vectorJSON(sample{"requests", "", "canary", "+Inf", ""}, sample{"failed", "", "canary", "NaN", ""}),
		},
		{
			name:   "no series is no data",
			a:      successRate,
			answer: vectorJSON(),
		},
		{
			name: "a histogram, its bounds in milliseconds, sorted and cumulative; a bucket without a finite count is left out",
			a:    webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{{Name: "request-duration", ThresholdRange: webappv1.ThresholdRange{Max: ptr(500.0)}}}},
			answer: vectorJSON(sample{"requests", "", "canary", "100", ""},
				sample{"buckets", "", "canary", "100", "+Inf"}, sample{"buckets", "", "canary", "90", "0.3"}, sample{"buckets", "", "canary", "NaN", "1.2"},
				sample{"buckets", "", "canary", "91", "0.1"}),
			canary: canary.Values{Requests: ptr(100.0), Buckets: []canary.Bucket{{UpperBound: 100, Count: 91}, {UpperBound: 300, Count: 91}, {UpperBound: math.Inf(1), Count: 100}}},
		},
		{
			name: "compared with the stable version; a template that does not aggregate; an unknown template",
			a:    compared,
			answer: vectorJSON(
				sample{"requests", "", "canary", "50", ""}, sample{"requests", "", "stable", "200", ""},
				sample{"failed", "", "canary", "5", ""}, sample{"failed", "", "stable", "+Inf", ""},
				sample{"metric", "budget", "canary", "0.5", ""}, sample{"metric", "budget", "canary", "0.7", ""},
				sample{"metric", "budget", "stable", "0.1", ""}, // asked for by no metric: kept, and read by none
			),
			canary: canary.Values{
				Requests: ptr(50.0), Failed: ptr(5.0), Metrics: map[string]float64{}, // budget's two series: read, then dropped
				Errors: map[string]string{
					"budget": "its template's query gives more than one series: it must aggregate them into one",
					"nope":   `template "nope": the hook's analysis templates define no such template`,
				},
			},
			stable: canary.Values{Requests: ptr(200.0), Metrics: map[string]float64{"budget": 0.1}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, http.StatusOK, tc.answer)
			p := mustNew(t, Config{URL: s.URL, TemplatesFile: templates})
			got := p.Measure(context.Background(), parent("web"), &tc.a, spanTo(at))
			want := canary.Measurement{Span: spanTo(at), Window: 30 * time.Second, Canary: tc.canary, Stable: tc.stable}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %s\nwant %s", show(got), show(want))
			}
			query, _, _ := Query(&Traefik, p.files.inForce().templates, parent("web"), testEntryPoints, &tc.a, 10*time.Minute)
			if q, tm := s.form["query"], s.form["time"]; len(q) != 1 || q[0] != query || len(tm) != 1 || tm[0] != "1700000010" {
				t.Errorf("asked for %q at %q; want Query's one query at the check's time, 1700000010", q, tm)
			}
		})
	}
}

// show writes a measurement with its pointers followed.
func show(m canary.Measurement) string {
	f := func(v canary.Values) string {
		r := "nil"
		if v.Requests != nil {
			r = fmt.Sprint(*v.Requests)
		}
		fl := "nil"
		if v.Failed != nil {
			fl = fmt.Sprint(*v.Failed)
		}
		return fmt.Sprintf("{requests %s, failed %s, buckets %v, metrics %v, errors %v}", r, fl, v.Buckets, v.Metrics, v.Errors)
	}
	return fmt.Sprintf("{span %s..%s, window %s, error %q, canary %s, stable %s}", m.Span.From, m.Span.To, m.Window, m.Error, f(m.Canary), f(m.Stable))
}

// TestMeasureErrors checks that what goes wrong is a sentence for the status that names no URL,
// token or query, and that neither it nor the log holds the token.
func TestMeasureErrors(t *testing.T) {
	const token = "s3cret-Token-Value"
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) string
		want string
	}{
		{"HTTP 503", func(t *testing.T) string { return newServer(t, 503, "overloaded at http://internal:9090").URL }, "Prometheus answered HTTP 503"},
		{"HTTP 401", func(t *testing.T) string { return newServer(t, 401, "no").URL }, "Prometheus answered HTTP 401"},
		{"bad_data", func(t *testing.T) string {
			return newServer(t, 400, `{"status":"error","errorType":"bad_data","error":"parse error at char 5"}`).URL
		}, "Prometheus refused the query (bad_data)"},
		{"execution", func(t *testing.T) string {
			return newServer(t, 422, `{"status":"error","errorType":"execution","error":"many-to-many"}`).URL
		}, "Prometheus refused the query (execution)"},
		{"an odd error type", func(t *testing.T) string {
			return newServer(t, 422, `{"status":"error","errorType":"Bad \"type\"","error":"x"}`).URL
		}, "Prometheus refused the query (error)"},
		{"not JSON", func(t *testing.T) string { return newServer(t, 200, "<html>").URL }, "Prometheus answered something other than a query result"},
		{"a scalar", func(t *testing.T) string {
			return newServer(t, 200, `{"status":"success","data":{"resultType":"scalar","result":[1,"1"]}}`).URL
		}, "Prometheus answered something other than the series asked for"},
		{"a series without our labels", func(t *testing.T) string {
			return newServer(t, 200, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"x":"y"},"value":[1,"1"]}]}}`).URL
		}, "Prometheus answered something other than the series asked for"},
		{"connection refused", func(t *testing.T) string { return closed.URL }, "cannot reach Prometheus (connection refused)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			url := tc.url(t)
			p := mustNew(t, Config{URL: url + "/prom", TokenFile: tokenFile, Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
			got := p.Measure(context.Background(), parent("web"), &successRate, spanTo(at))
			if got.Error != tc.want {
				t.Errorf("Error = %q; want %q", got.Error, tc.want)
			}
			if strings.Contains(got.Error, token) || strings.Contains(got.Error, "127.0.0.1") || strings.Contains(got.Error, "traefik") {
				t.Errorf("Error %q names the token, the URL or the query", got.Error)
			}
			if strings.Contains(logs.String(), token) {
				t.Errorf("the log holds the token:\n%s", logs.String())
			}
			if !strings.Contains(logs.String(), "analysis query") {
				t.Errorf("the details are not logged:\n%s", logs.String())
			}
		})
	}
}

func TestMeasureSendsToken(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("  first\n"), 0o600)
	s := newServer(t, 200, vectorJSON())
	p := mustNew(t, Config{URL: s.URL, TokenFile: tokenFile})
	p.Measure(context.Background(), parent("web"), &successRate, spanTo(at))
	if s.auth != "Bearer first" {
		t.Errorf("Authorization = %q; want Bearer first", s.auth)
	}
	os.WriteFile(tokenFile, []byte("second"), 0o600)
	if changed, err := p.Reload(); !changed || err != nil {
		t.Fatalf("Reload = %t, %v; want a change", changed, err)
	}
	p.Measure(context.Background(), parent("web"), &successRate, spanTo(at.Add(30*time.Second)))
	if s.auth != "Bearer second" {
		t.Errorf("after a reload, Authorization = %q; want Bearer second", s.auth)
	}
	if changed, err := p.Reload(); changed || err != nil {
		t.Errorf("Reload of the same files = %t, %v; want no change", changed, err)
	}
	os.Remove(tokenFile)
	if _, err := p.Reload(); err == nil || p.ReloadErrors() != 1 {
		t.Errorf("Reload of a missing file = %v, %d errors; want an error counted", err, p.ReloadErrors())
	}
	p.Measure(context.Background(), parent("web"), &successRate, spanTo(at.Add(60*time.Second)))
	if s.auth != "Bearer second" {
		t.Errorf("after a failed reload, Authorization = %q; want the token in force, Bearer second", s.auth)
	}
}

func TestReloadTemplatesAndCA(t *testing.T) {
	dir := t.TempDir()
	templates, ca := filepath.Join(dir, "templates.yaml"), filepath.Join(dir, "ca.pem")
	os.WriteFile(templates, []byte("templates:\n- name: a\n  query: up\n"), 0o600)
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, vectorJSON()) }))
	defer s.Close()
	var pemBuf bytes.Buffer
	pemEncode(&pemBuf, s.Certificate().Raw)
	os.WriteFile(ca, pemBuf.Bytes(), 0o600)
	p := mustNew(t, Config{URL: s.URL, CAFile: ca, TemplatesFile: templates})
	if got := p.Measure(context.Background(), parent("web"), &successRate, spanTo(at)); got.Error != "" {
		t.Fatalf("over TLS with the server's CA: %q", got.Error)
	}
	if got := p.Templates(); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("templates %v; want [a]", got)
	}
	os.WriteFile(templates, []byte("templates:\n- name: a\n  query: up\n- name: b\n  query: up\n"), 0o600)
	if changed, err := p.Reload(); !changed || err != nil || !reflect.DeepEqual(p.Templates(), []string{"a", "b"}) {
		t.Errorf("Reload = %t, %v, templates %v; want a and b", changed, err, p.Templates())
	}
	os.WriteFile(templates, []byte("templates: [{name: A}]"), 0o600)
	if _, err := p.Reload(); err == nil || !reflect.DeepEqual(p.Templates(), []string{"a", "b"}) {
		t.Errorf("Reload of a bad file = %v, templates %v; want an error and a and b kept", err, p.Templates())
	}
	os.WriteFile(templates, []byte("templates: []"), 0o600)
	os.WriteFile(ca, []byte("not a certificate"), 0o600)
	if _, err := p.Reload(); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("Reload of a bad CA = %v; want no PEM certificate", err)
	}

	untrusted := mustNew(t, Config{URL: s.URL})
	if got := untrusted.Measure(context.Background(), parent("web"), &successRate, spanTo(at)); got.Error != "cannot reach Prometheus (its TLS certificate is not trusted)" {
		t.Errorf("without the CA: %q", got.Error)
	}
}

// TestMeasureTimeout checks that a Prometheus that does not answer holds a call no longer than
// the query timeout, and makes the check's measurement an Error that says so.
func TestMeasureTimeout(t *testing.T) {
	release := make(chan struct{})
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer s.Close()
	defer close(release)
	p := mustNew(t, Config{URL: s.URL, QueryTimeout: 100 * time.Millisecond})
	start := time.Now()
	got := p.Measure(context.Background(), parent("web"), &successRate, spanTo(at))
	if took := time.Since(start); took > time.Second {
		t.Errorf("Measure took %s; want about the 100ms timeout", took)
	}
	if want := "Prometheus did not answer within 100ms"; got.Error != want {
		t.Errorf("Error = %q; want %q", got.Error, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	got = p.Measure(ctx, parent("other"), &successRate, spanTo(at))
	if want := "the hook call ended before Prometheus answered"; got.Error != want {
		t.Errorf("with the call's context ending first, Error = %q; want %q", got.Error, want)
	}
}

// blockingRoundTripper answers a query once release is closed, or fails it when its context ends
// first; it counts the queries in flight and the most there were at once.
type blockingRoundTripper struct {
	release chan struct{}
	// answer is what it answers; "" for one series, the canary's 1 request.
	answer            string
	inflight, maxSeen atomic.Int64
	calls             atomic.Int64
}

func (b *blockingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	b.calls.Add(1)
	n := b.inflight.Add(1)
	defer b.inflight.Add(-1)
	for {
		m := b.maxSeen.Load()
		if n <= m || b.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	select {
	case <-req.Context().Done():
		return nil, req.Context().Err()
	case <-b.release:
		answer := b.answer
		if answer == "" {
			answer = vectorJSON(sample{"requests", "", "canary", "1", ""})
		}
		return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(answer)), Request: req}, nil
	}
}

func TestMeasureConcurrencyBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &blockingRoundTripper{release: make(chan struct{})}
		p, err := newPrometheus(Config{URL: "http://prometheus:9090", MaxConcurrentQueries: 2, EntryPoints: testEntryPoints}.withDefaults(), rt)
		if err != nil {
			t.Fatal(err)
		}
		var wg stdsync.WaitGroup
		results := make([]canary.Measurement, 6)
		for i := range results {
			wg.Go(func() {
				results[i] = p.Measure(t.Context(), parent(fmt.Sprint("web", i)), &successRate, spanTo(at))
			})
		}
		synctest.Wait()
		if n := rt.inflight.Load(); n != 2 {
			t.Errorf("%d queries in flight; want the bound, 2", n)
		}
		close(rt.release)
		wg.Wait()
		if n := rt.maxSeen.Load(); n != 2 {
			t.Errorf("at most %d queries at once; want 2", n)
		}
		for i, m := range results {
			if m.Error != "" || m.Canary.Requests == nil {
				t.Errorf("call %d: %s", i, show(m))
			}
		}
	})
}

// TestMeasureBusy checks that the wait for a slot counts against the query timeout: with one
// slot held by a query Prometheus never answers, another check is an Error after the timeout, as
// the first is, and neither call lasts longer.
func TestMeasureBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rt := &blockingRoundTripper{release: make(chan struct{})}
		p, err := newPrometheus(Config{URL: "http://prometheus:9090", MaxConcurrentQueries: 1, EntryPoints: testEntryPoints}.withDefaults(), rt)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		var wg stdsync.WaitGroup
		var first, second canary.Measurement
		wg.Go(func() { first = p.Measure(t.Context(), parent("a"), &successRate, spanTo(at)) })
		synctest.Wait()
		wg.Go(func() { second = p.Measure(t.Context(), parent("b"), &successRate, spanTo(at)) })
		wg.Wait()
		if took := time.Since(start); took != DefaultQueryTimeout {
			t.Errorf("took %s; want the timeout, %s", took, DefaultQueryTimeout)
		}
		if want := "Prometheus did not answer within 2s"; first.Error != want {
			t.Errorf("first: %q; want %q", first.Error, want)
		}
		if want := "the hook had 1 queries to Prometheus in flight, and this one could not start within 2s"; second.Error != want {
			t.Errorf("second: %q; want %q", second.Error, want)
		}
		if n := rt.calls.Load(); n != 1 {
			t.Errorf("%d queries sent; want 1", n)
		}
	})
}

// blockedPrometheus is a Prometheus whose queries wait for rt.release, on a clock that reads *now
// (at, to begin with).
func blockedPrometheus(t *testing.T) (*Prometheus, *blockingRoundTripper, *time.Time) {
	t.Helper()
	rt := &blockingRoundTripper{release: make(chan struct{})}
	p, err := newPrometheus(Config{URL: "http://prometheus:9090", EntryPoints: testEntryPoints}.withDefaults(), rt)
	if err != nil {
		t.Fatal(err)
	}
	now := at
	p.now = func() time.Time { return now }
	return p, rt, &now
}

// TestMeasureOncePerCheck checks that however often a check is asked for, at once or later,
// Prometheus is queried once for it, until it expires two intervals after its time.
func TestMeasureOncePerCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, rt, now := blockedPrometheus(t)
		var wg stdsync.WaitGroup
		for range 20 {
			wg.Go(func() { p.Measure(t.Context(), parent("web"), &successRate, spanTo(at)) })
		}
		synctest.Wait()
		close(rt.release)
		wg.Wait()
		for range 5 {
			if m := p.Measure(t.Context(), parent("web"), &successRate, spanTo(at)); m.Canary.Requests == nil {
				t.Errorf("from memory: %s", show(m))
			}
		}
		if n := rt.calls.Load(); n != 1 {
			t.Errorf("%d queries for 25 calls of one check; want 1", n)
		}
		p.Measure(t.Context(), parent("web"), &successRate, spanTo(at.Add(30*time.Second)))
		other := successRate
		other.WindowSeconds = ptr[int32](60)
		p.Measure(t.Context(), parent("web"), &other, spanTo(at))
		p.Measure(t.Context(), parent("web2"), &successRate, spanTo(at))
		if n := rt.calls.Load(); n != 4 {
			t.Errorf("%d queries; want 4: a new check time, a new analysis and another WebApp are each queried", n)
		}
		*now = at.Add(60 * time.Second)
		p.Measure(t.Context(), parent("web"), &successRate, spanTo(at))
		if n := rt.calls.Load(); n != 5 {
			t.Errorf("%d queries; want 5: a check two intervals old is queried again", n)
		}
	})
}

// TestLookupOffersEarlierCheck checks what Lookup hands out while a check's query is still
// running: the latest measured check of the same step, never one of another step, nor a later
// check, nor the check itself.
func TestLookupOffersEarlierCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, rt, now := blockedPrometheus(t)
		first, second := spanTo(at), canary.Span{From: at.Add(-10 * time.Minute), To: at.Add(30 * time.Second)}
		if m, ready := p.Lookup(parent("web"), &successRate, first, 0); ready || m.Span != (canary.Span{}) {
			t.Errorf("the step's first check, its query running: %s, %t; want nothing, false", show(m), ready)
		}
		close(rt.release) // every query answers from now on
		synctest.Wait()
		*now = at.Add(90 * time.Second) // a resync period after the next check's time
		rt.release = make(chan struct{})
		m, ready := p.Lookup(parent("web"), &successRate, second, 0)
		if ready || m.Span != first || m.Canary.Requests == nil {
			t.Errorf("the next check, its query running: %s (span %v), %t; want the first check's measurement, false", show(m), m.Span, ready)
		}
		if m, _ := p.Lookup(parent("web"), &successRate, canary.Span{From: at.Add(-5 * time.Minute), To: at.Add(60 * time.Second)}, 0); m.Span != (canary.Span{}) {
			t.Errorf("a check of a later step: offered %v; want nothing", m.Span)
		}
		if m, _ := p.Lookup(parent("web2"), &successRate, second, 0); m.Span != (canary.Span{}) {
			t.Errorf("another WebApp's check: offered %v; want nothing", m.Span)
		}
		close(rt.release)
		synctest.Wait()
		// The second check landed: it is the latest, and is no earlier check of itself.
		if m, _ := p.Lookup(parent("web"), &successRate, canary.Span{From: second.From, To: second.To.Add(30 * time.Second)}, 0); m.Span != second {
			t.Errorf("after the second check landed, offered %v; want %v", m.Span, second)
		}
		synctest.Wait() // the third check's flight, started by that Lookup, reads the clock: let it land first
		*now = second.To.Add(2*time.Minute + LatestKept)
		if m, _ := p.Lookup(parent("web"), &successRate, canary.Span{From: second.From, To: *now}, 0); m.Span != (canary.Span{}) {
			t.Errorf("%s after the latest check: offered %v; want nothing", now.Sub(second.To), m.Span)
		}
		synctest.Wait()
	})
}

func TestMeasurementsBounded(t *testing.T) {
	c := newMeasurements(3)
	for i := range 5 {
		c.put(fmt.Sprint(i), canary.Measurement{Error: fmt.Sprint(i)}, at.Add(time.Minute), at)
	}
	if c.len() != 3 {
		t.Errorf("%d kept; want 3", c.len())
	}
	if _, ok := c.get("1", at); ok {
		t.Error("the oldest is kept")
	}
	if m, ok := c.get("4", at); !ok || m.Error != "4" {
		t.Errorf("the newest: %v, %t", m, ok)
	}
	if _, ok := c.get("4", at.Add(time.Minute)); ok {
		t.Error("an expired one is kept")
	}
}

func TestRead(t *testing.T) {
	got, _, err := read(model.Vector{}, 1000)
	if err != nil || !reflect.DeepEqual(got, canary.Values{}) {
		t.Errorf("an empty vector: %v, %v", got, err)
	}
	if _, _, err := read(&model.Scalar{}, 1000); err == nil {
		t.Error("a scalar reads")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		c       Config
		wantErr string
	}{
		{Config{URL: "http://prometheus:9090"}, ""},
		{Config{URL: "https://prometheus.monitoring.svc/prom", Gateway: "istio", QueryTimeout: time.Second, MaxConcurrentQueries: 1}, ""},
		{Config{}, "URL: required"},
		{Config{URL: "prometheus:9090"}, "URL: the scheme must be http or https"},
		{Config{URL: "http://"}, "URL: no host"},
		{Config{URL: "http://user:s3cret@prometheus"}, "URL: must hold no user or password"},
		{Config{URL: "http://prometheus?x=1"}, "URL: must have no query"},
		{Config{URL: "http://prometheus", Gateway: "nginx"}, `Gateway: "nginx" is not one of istio, traefik`},
		{Config{URL: "http://prometheus", QueryTimeout: 3 * time.Second}, "QueryTimeout: must be positive and at most 2s"},
		{Config{URL: "http://prometheus", MaxConcurrentQueries: -1}, "MaxConcurrentQueries"},
	} {
		err := tc.c.Validate()
		if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%+v: %v; want %q", tc.c, err, tc.wantErr)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error repeats the password: %v", err)
		}
	}
}

func pemEncode(w io.Writer, der []byte) { pem.Encode(w, &pem.Block{Type: "CERTIFICATE", Bytes: der}) }

// TestMeasureFollowsNoRedirect checks that an answer that redirects, to a plain-http address
// here, is an Error that says so, and that nothing follows it: the address it names gets no
// request, with the token or without.
func TestMeasureFollowsNoRedirect(t *testing.T) {
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte("s3cret-Token-Value"), 0o600)
	var elsewhere atomic.Int64
	var elsewhereAuth atomic.Value
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		elsewhereAuth.Store(r.Header.Get("Authorization"))
		io.WriteString(w, vectorJSON(sample{"requests", "", "canary", "1", ""}))
	}))
	defer target.Close()
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, target.URL+r.URL.Path, code)
			}))
			defer prom.Close()
			p := mustNew(t, Config{URL: prom.URL, TokenFile: tokenFile})
			got := p.Measure(context.Background(), parent("web"), &successRate, spanTo(at))
			if want := fmt.Sprintf("Prometheus answered HTTP %d (the hook follows no redirect)", code); got.Error != want {
				t.Errorf("Error = %q; want %q", got.Error, want)
			}
			if got.Canary.Requests != nil {
				t.Errorf("measured %s; want nothing", show(got))
			}
			if n := elsewhere.Load(); n != 0 {
				t.Errorf("the address redirected to got %d requests (Authorization %q); want none", n, elsewhereAuth.Load())
			}
			if v := counterValue(t, p, "webapp_hook_analysis_queries_total", "http_error"); v != 1 {
				t.Errorf("queries with outcome http_error = %v; want 1", v)
			}
		})
	}
}

// TestMeasureAnswerBounded checks that an answer over MaxAnswerBytes is refused, whether its
// length is told up front or not, and counted as too_large; one of exactly the bound is read.
func TestMeasureAnswerBounded(t *testing.T) {
	// pad is an answer of n bytes: a vector of one series, padded with spaces JSON ignores.
	pad := func(n int) string {
		a := vectorJSON(sample{"requests", "", "canary", "7", ""})
		return a[:len(a)-1] + strings.Repeat(" ", n-len(a)) + "}"
	}
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool // no Content-Length: the bound is met while reading
		want    string
	}{
		{"exactly the bound", MaxAnswerBytes, false, ""},
		{"exactly the bound, chunked", MaxAnswerBytes, true, ""},
		{"a byte over", MaxAnswerBytes + 1, false, "Prometheus's answer was over 1 MiB"},
		{"a byte over, chunked", MaxAnswerBytes + 1, true, "Prometheus's answer was over 1 MiB"},
		{"far over, chunked", 8 * MaxAnswerBytes, true, "Prometheus's answer was over 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer := pad(tc.size)
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if tc.chunked {
					for b := []byte(answer); len(b) > 0; {
						n := min(len(b), 64<<10)
						w.Write(b[:n])
						w.(http.Flusher).Flush()
						b = b[n:]
					}
					return
				}
				w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
				io.WriteString(w, answer)
			}))
			defer s.Close()
			p := mustNew(t, Config{URL: s.URL})
			got := p.Measure(context.Background(), parent("web"), &successRate, spanTo(at))
			if got.Error != tc.want {
				t.Errorf("Error = %q; want %q", got.Error, tc.want)
			}
			if tc.want == "" && (got.Canary.Requests == nil || *got.Canary.Requests != 7) {
				t.Errorf("measured %s; want 7 requests", show(got))
			}
			wantTooLarge := 0.0
			if tc.want != "" {
				wantTooLarge = 1
			}
			if v := counterValue(t, p, "webapp_hook_analysis_queries_total", "too_large"); v != wantTooLarge {
				t.Errorf("queries too_large = %v; want %v", v, wantTooLarge)
			}
		})
	}
}

// TestMeasurementsNotShared checks that what Measure hands a caller is its own: changing its
// maps, slices and counts changes neither what the cache hands the next caller, nor what a caller
// that shared the same query got.
func TestMeasurementsNotShared(t *testing.T) {
	templates := filepath.Join(t.TempDir(), "templates.yaml")
	os.WriteFile(templates, []byte("templates:\n- name: budget\n  query: up\n"), 0o600)
	synctest.Test(t, func(t *testing.T) {
		rt := &blockingRoundTripper{release: make(chan struct{}), answer: vectorJSON(
			sample{"requests", "", "canary", "100", ""}, sample{"failed", "", "canary", "1", ""},
			sample{"buckets", "", "canary", "90", "0.1"}, sample{"buckets", "", "canary", "100", "+Inf"},
			sample{"metric", "budget", "canary", "0.5", ""})}
		p, err := newPrometheus(Config{URL: "http://prometheus:9090", TemplatesFile: templates, EntryPoints: testEntryPoints}.withDefaults(), rt)
		if err != nil {
			t.Fatal(err)
		}
		p.now = func() time.Time { return at }
		a := webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{
			{Name: "request-duration", ThresholdRange: webappv1.ThresholdRange{Max: ptr(500.0)}},
			{Name: "budget", TemplateRef: &webappv1.MetricTemplateRef{Name: "budget"}, ThresholdRange: webappv1.ThresholdRange{Max: ptr(1.0)}},
			{Name: "nope", TemplateRef: &webappv1.MetricTemplateRef{Name: "nope"}, ThresholdRange: webappv1.ThresholdRange{Max: ptr(1.0)}},
		}}
		spoil := func(m canary.Measurement) {
			*m.Canary.Requests, *m.Canary.Failed = -1, -1
			m.Canary.Buckets[0].Count = -1
			m.Canary.Buckets = append(m.Canary.Buckets[:1], canary.Bucket{UpperBound: 1})
			m.Canary.Metrics["budget"] = -1
			m.Canary.Metrics["other"] = -1
			m.Canary.Errors["nope"] = "spoiled"
			m.Canary.Errors["other"] = "spoiled"
		}
		want := canary.Measurement{Span: spanTo(at), Window: 30 * time.Second, Canary: canary.Values{
			Requests: ptr(100.0), Failed: ptr(1.0),
			Buckets: []canary.Bucket{{UpperBound: 100, Count: 90}, {UpperBound: math.Inf(1), Count: 100}},
			Metrics: map[string]float64{"budget": 0.5},
			Errors:  map[string]string{"nope": `template "nope": the hook's analysis templates define no such template`},
		}}
		var wg stdsync.WaitGroup
		shared := make([]canary.Measurement, 3)
		for i := range shared {
			wg.Go(func() {
				shared[i] = p.Measure(t.Context(), parent("web"), &a, spanTo(at))
				if i == 0 {
					if !reflect.DeepEqual(shared[i], want) {
						t.Errorf("got %s; want %s", show(shared[i]), show(want))
					}
					spoil(shared[i])
				}
			})
		}
		synctest.Wait()
		close(rt.release)
		wg.Wait()
		spoil(p.Measure(t.Context(), parent("web"), &a, spanTo(at))) // from the cache
		for i, m := range append(shared, p.Measure(t.Context(), parent("web"), &a, spanTo(at))) {
			if i > 0 && !reflect.DeepEqual(m, want) {
				t.Errorf("caller %d got %s; want %s", i, show(m), show(want))
			}
		}
		if n := rt.calls.Load(); n != 1 {
			t.Errorf("%d queries; want 1, shared and then cached", n)
		}
	})
}

// TestBadTemplatesFileAtStart checks that a templates file that does not parse stops nothing:
// New succeeds, logging and counting it; the built-ins are measured; a metric that names a
// template says the file does not parse, where and why, and nothing of its queries; and a
// Reload that takes up a good file mends it.
func TestBadTemplatesFileAtStart(t *testing.T) {
	templates := filepath.Join(t.TempDir(), "templates.yaml")
	os.WriteFile(templates, []byte("templates:\n- name: budget\n  query: sum(secret_metric{s=\"{{.Service}}\"})\n   oops: x\n"), 0o600)
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		samples := []sample{{"requests", "", "canary", "50", ""}, {"failed", "", "canary", "1", ""}}
		if strings.Contains(r.FormValue("query"), `"budget"`) { // asked for
			samples = append(samples, sample{"metric", "budget", "canary", "0.5", ""})
		}
		io.WriteString(w, vectorJSON(samples...))
	}))
	defer s.Close()
	var logs bytes.Buffer
	p, err := New(Config{URL: s.URL, TemplatesFile: templates, EntryPoints: testEntryPoints, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("New with a bad templates file: %v; want the hook to start", err)
	}
	if p.ReloadErrors() != 1 || counterValue(t, p, "webapp_hook_analysis_reload_errors_total", "") != 1 {
		t.Errorf("reload errors %d; want the bad file counted once", p.ReloadErrors())
	}
	if !strings.Contains(logs.String(), `"level":"ERROR"`) || !strings.Contains(logs.String(), templates) {
		t.Errorf("the bad file is not logged at error, by name:\n%s", logs.String())
	}
	a := webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{
		successRate.Metrics[0],
		{Name: "budget", TemplateRef: &webappv1.MetricTemplateRef{Name: "budget"}, ThresholdRange: webappv1.ThresholdRange{Max: ptr(1.0)}},
	}}
	got := p.Measure(context.Background(), parent("web"), &a, spanTo(at))
	const why = "the hook's analysis templates file does not parse: line 4: mapping values are not allowed in this context"
	want := canary.Measurement{Span: spanTo(at), Window: 30 * time.Second, Canary: canary.Values{
		Requests: ptr(50.0), Failed: ptr(1.0), Errors: map[string]string{"budget": why},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %s\nwant %s", show(got), show(want))
	}
	if strings.Contains(show(got), "secret_metric") {
		t.Errorf("the status shows the template's query: %s", show(got))
	}

	os.WriteFile(templates, []byte("templates:\n- name: budget\n  query: sum(x{s=\"{{.Service}}\"})\n"), 0o600)
	if changed, err := p.Reload(); !changed || err != nil {
		t.Fatalf("Reload of a good file = %t, %v; want it taken up", changed, err)
	}
	next := at.Add(30 * time.Second)
	got = p.Measure(context.Background(), parent("web"), &a, spanTo(next))
	want = canary.Measurement{Span: spanTo(next), Window: 30 * time.Second, Canary: canary.Values{
		Requests: ptr(50.0), Failed: ptr(1.0), Metrics: map[string]float64{"budget": 0.5},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the reload: got  %s\nwant %s", show(got), show(want))
	}
	os.WriteFile(templates, []byte("templates: [{name: Bad, query: up}]"), 0o600)
	if _, err := p.Reload(); err == nil || !reflect.DeepEqual(p.Templates(), []string{"budget"}) {
		t.Errorf("Reload of a bad file after a good one = %v, templates %v; want an error, budget kept", err, p.Templates())
	}
}

// TestBadFilesAtStart checks the token and CA files as New finds them: one that cannot be read or
// used stops nothing, and each check says why, without a query; a templates file that cannot be
// read makes each template's metric say so; and a Reload that finds them good mends them.
func TestBadFilesAtStart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files func(dir string) Config
		// want is the measurement's Error, or the template metric's when template is set.
		want     string
		template bool
	}{
		{"no token file", func(dir string) Config { return Config{TokenFile: filepath.Join(dir, "token")} }, "the hook's Prometheus token file cannot be read", false},
		{"no CA file", func(dir string) Config { return Config{CAFile: filepath.Join(dir, "ca.pem")} }, "the hook's Prometheus CA file cannot be read", false},
		{"a CA file without a certificate", func(dir string) Config {
			os.WriteFile(filepath.Join(dir, "ca.pem"), []byte("not a certificate"), 0o600)
			return Config{CAFile: filepath.Join(dir, "ca.pem")}
		}, "the hook's Prometheus CA file holds no PEM certificate", false},
		{"no templates file", func(dir string) Config { return Config{TemplatesFile: filepath.Join(dir, "templates.yaml")} }, "the hook's analysis templates file cannot be read", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var queries atomic.Int64
			s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				queries.Add(1)
				io.WriteString(w, vectorJSON(sample{"requests", "", "canary", "5", ""}, sample{"metric", "t", "canary", "1", ""}))
			}))
			c := tc.files(dir)
			if c.CAFile != "" {
				s.StartTLS()
			} else {
				s.Start()
			}
			defer s.Close()
			c.URL, c.EntryPoints = s.URL, testEntryPoints
			p, err := New(c)
			if err != nil {
				t.Fatalf("New: %v; want the hook to start", err)
			}
			a := successRate
			if tc.template {
				a = webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{{Name: "t", TemplateRef: &webappv1.MetricTemplateRef{Name: "t"}, ThresholdRange: webappv1.ThresholdRange{Max: ptr(1.0)}}}}
			}
			got := p.Measure(context.Background(), parent("web"), &a, spanTo(at))
			if tc.template {
				if got.Error != "" || got.Canary.Errors["t"] != tc.want || got.Canary.Requests == nil {
					t.Errorf("got %s; want the requests measured, and the metric's error %q", show(got), tc.want)
				}
			} else if got.Error != tc.want || queries.Load() != 0 {
				t.Errorf("got %s after %d queries; want no query and the Error %q", show(got), queries.Load(), tc.want)
			}
			if p.ReloadErrors() != 1 {
				t.Errorf("%d reload errors; want 1", p.ReloadErrors())
			}

			if c.TokenFile != "" {
				os.WriteFile(c.TokenFile, []byte("t0ken"), 0o600)
			}
			if c.CAFile != "" {
				var b bytes.Buffer
				pemEncode(&b, s.Certificate().Raw)
				os.WriteFile(c.CAFile, b.Bytes(), 0o600)
			}
			if c.TemplatesFile != "" {
				os.WriteFile(c.TemplatesFile, []byte("templates:\n- name: t\n  query: up\n"), 0o600)
			}
			if changed, err := p.Reload(); !changed || err != nil {
				t.Fatalf("Reload of good files = %t, %v", changed, err)
			}
			got = p.Measure(context.Background(), parent("web"), &a, spanTo(at.Add(30*time.Second)))
			if got.Error != "" || got.Canary.Errors != nil || got.Canary.Requests == nil {
				t.Errorf("after the reload: %s; want it measured", show(got))
			}
		})
	}
}

// counterValue is the value of p's counter name, with the one label value label ("" for none).
func counterValue(t *testing.T, p *Prometheus, name, label string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(p)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label == "" || (len(m.GetLabel()) == 1 && m.GetLabel()[0].GetValue() == label) {
				return m.GetCounter().GetValue()
			}
		}
	}
	t.Fatalf("no %s{%s}", name, label)
	return 0
}

// TestReadFinite checks that no value read leaves the package unless it is a finite number.
func TestReadFinite(t *testing.T) {
	for _, v := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		vec := model.Vector{
			{Metric: model.Metric{labelValue: valueRequests, labelTrack: trackCanary}, Value: model.SampleValue(v)},
			{Metric: model.Metric{labelValue: valueMetric, labelMetric: "m", labelTrack: trackStable}, Value: model.SampleValue(v)},
		}
		c, s, err := read(vec, 1000)
		if err != nil || c.Requests != nil || s.Metrics != nil {
			t.Errorf("%v: canary %v, stable %v, %v; want no data", v, c, s, err)
		}
	}
}

// TestCloneCoversValues fails when canary.Values gains a field that refers to memory (a pointer,
// slice or map) that cloneValues does not copy: a new one would be shared between callers.
func TestCloneCoversValues(t *testing.T) {
	copied := map[string]bool{"Requests": true, "Failed": true, "Buckets": true, "Metrics": true, "Errors": true}
	typ := reflect.TypeFor[canary.Values]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		switch f.Type.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func:
			if !copied[f.Name] {
				t.Errorf("canary.Values.%s (%s) is not copied by cloneValues", f.Name, f.Type)
			}
		}
	}
}

package webhook_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	stdsync "sync"
	"testing"
	"time"

	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync/wire"
	"github.com/example/webapp-operator/webhook"
)

// clock is the fixed time of every test answer, so that golden files are stable.
var clock = func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }

func newHandler(opts webhook.Options) *webhook.Handler {
	if opts.Now == nil {
		opts.Now = clock
	}
	return webhook.New(opts)
}

func serve(h http.Handler, method, path, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func readExample(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestHandlerStatusCodes(t *testing.T) {
	create := readExample(t, "create.request.json")
	tests := []struct {
		name     string
		method   string
		path     string
		body     string
		wantCode int
		wantBody string // exact body for errors; empty to skip
	}{
		{name: "sync", method: "POST", path: "/sync", body: create, wantCode: 200},
		{name: "finalize", method: "POST", path: "/finalize", body: create, wantCode: 200},
		{name: "customize", method: "POST", path: "/customize", body: create, wantCode: 200},
		{name: "customize without a parent", method: "POST", path: "/customize", body: `{"controller":{}}`, wantCode: 400, wantBody: `{"error":"decode customize request: parent: required"}`},
		{name: "not JSON", method: "POST", path: "/sync", body: "{", wantCode: 400, wantBody: `{"error":"decode sync request: invalid JSON at byte 1: unexpected EOF"}`},
		{name: "empty body", method: "POST", path: "/finalize", body: "", wantCode: 400, wantBody: `{"error":"decode finalize request: empty body: a JSON object is required"}`},
		{name: "no parent", method: "POST", path: "/sync", body: `{"children":{}}`, wantCode: 400, wantBody: `{"error":"decode sync request: parent: required"}`},
		{name: "wrong type", method: "POST", path: "/sync", body: `{"parent":{"metadata":{"name":["a"],"namespace":"n"}}}`, wantCode: 400, wantBody: `{"error":"decode sync request: parent.metadata.name: expected string, got JSON array"}`},
		{name: "too large", method: "POST", path: "/sync", body: `{"parent":` + strings.Repeat(" ", 2048) + `}`, wantCode: 413, wantBody: `{"error":"request body is larger than 1024 bytes"}`},
		{name: "wrong method", method: "GET", path: "/sync", wantCode: 405, wantBody: `{"error":"method GET not allowed on /sync"}`},
		{name: "unknown path", method: "POST", path: "/reconcile", body: create, wantCode: 404, wantBody: `{"error":"no route POST /reconcile"}`},
		{name: "healthz", method: "GET", path: "/healthz", wantCode: 200, wantBody: `{"status":"ok"}`},
		{name: "readyz", method: "GET", path: "/readyz", wantCode: 200, wantBody: `{"status":"ok"}`},
	}
	h := newHandler(webhook.Options{MaxBodyBytes: 1024 + int64(len(create))})
	small := newHandler(webhook.Options{MaxBodyBytes: 1024})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := h
			if tt.wantCode == 413 {
				target = small
			}
			rec := serve(target, tt.method, tt.path, tt.body)
			if rec.Code != tt.wantCode {
				t.Errorf("code = %d; want %d (body %s)", rec.Code, tt.wantCode, rec.Body)
			}
			if got := rec.Header().Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type = %q; want application/json", got)
			}
			if got := strings.TrimSpace(rec.Body.String()); tt.wantBody != "" && got != tt.wantBody {
				t.Errorf("body = %s; want %s", got, tt.wantBody)
			}
		})
	}
}

// TestETag checks that every answer carries a strong ETag of its exact bytes, that the same answer
// always has the same ETag, and that If-None-Match with it gets 304 and no body.
func TestETag(t *testing.T) {
	create := readExample(t, "create.request.json")
	first := serve(newHandler(webhook.Options{}), "POST", "/sync", create)
	tag := first.Header().Get("ETag")
	if len(tag) != 34 || tag[0] != '"' || tag[33] != '"' {
		t.Fatalf("ETag = %q; want a quoted 128-bit hex hash", tag)
	}
	tests := []struct {
		name        string
		ifNoneMatch string
		cacheBytes  int
		wantCode    int
	}{
		{"no If-None-Match", "", 0, 200},
		{"matching", tag, 0, 304},
		{"matching, answered from the cache", tag, webhook.DefaultCacheBytes, 304},
		{"weak form and a list", `"other", W/` + tag, 0, 304},
		{"star", "*", 0, 304},
		{"another answer's tag", `"0123456789abcdef0123456789abcdef"`, 0, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHandler(webhook.Options{CacheBytes: tt.cacheBytes})
			serve(h, "POST", "/sync", create) // warms the cache when there is one
			req := httptest.NewRequest("POST", "/sync", strings.NewReader(create))
			if tt.ifNoneMatch != "" {
				req.Header.Set("If-None-Match", tt.ifNoneMatch)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantCode {
				t.Errorf("code = %d; want %d", rec.Code, tt.wantCode)
			}
			if got := rec.Header().Get("ETag"); got != tag {
				t.Errorf("ETag = %s; want %s, the same for the same answer", got, tag)
			}
			if tt.wantCode == 304 && rec.Body.Len() != 0 {
				t.Errorf("304 with a body of %d bytes; want none", rec.Body.Len())
			}
			if tt.wantCode == 200 && rec.Body.String() != first.Body.String() {
				t.Error("200 answer differs from the first")
			}
		})
	}
}

// TestMetrics checks that /metrics counts calls by hook and code, decisions by phase, panics,
// and carries the Go and process collectors.
func TestMetrics(t *testing.T) {
	calls := 0
	h := webhook.New(webhook.Options{Now: func() time.Time {
		calls++
		if calls == 3 {
			panic("third call")
		}
		return clock()
	}})
	serve(h, "POST", "/sync", readExample(t, "create.request.json"))
	serve(h, "POST", "/sync", readExample(t, "rollout.request.json"))
	serve(h, "POST", "/sync", readExample(t, "create.request.json")) // panics
	serve(h, "POST", "/sync", "{")
	serve(h, "POST", "/finalize", readExample(t, "finalize-done.request.json"))
	serve(h, "POST", "/customize", readExample(t, "customize.request.json"))
	if rec := serve(h, "GET", "/metrics", ""); rec.Code != 404 {
		t.Errorf("GET /metrics on the hook handler = %d; want 404, metrics have a listener of their own", rec.Code)
	}
	rec := serve(h.MetricsHandler(), "GET", "/metrics", "")
	if rec.Code != 200 {
		t.Fatalf("GET /metrics = %d", rec.Code)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`webapp_hook_requests_total{code="200",hook="sync"} 2`,
		`webapp_hook_requests_total{code="500",hook="sync"} 1`,
		`webapp_hook_requests_total{code="400",hook="sync"} 1`,
		`webapp_hook_requests_total{code="200",hook="finalize"} 1`,
		`webapp_hook_requests_total{code="200",hook="customize"} 1`,
		`webapp_hook_request_duration_seconds_count{hook="sync"} 4`,
		`webapp_hook_decisions_total{hook="sync",phase="Pending"} 1`,
		`webapp_hook_decisions_total{hook="sync",phase="Progressing"} 1`,
		`webapp_hook_decisions_total{hook="finalize",phase="Terminating"} 1`,
		`webapp_hook_requests_in_flight 0`,
		`webapp_hook_panics_total 1`,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// TestBodyCutShort checks that a body that ends before its Content-Length is the client's error.
func TestBodyCutShort(t *testing.T) {
	req := httptest.NewRequest("POST", "/sync", io.MultiReader(strings.NewReader(`{"parent":`), failingReader{}))
	req.ContentLength = 100 // declared, as it must be, and never sent in full
	rec := httptest.NewRecorder()
	newHandler(webhook.Options{}).ServeHTTP(rec, req)
	if want := `{"error":"read sync request: unexpected EOF"}`; rec.Code != 400 || strings.TrimSpace(rec.Body.String()) != want {
		t.Errorf("answer = %d %s; want 400 %s", rec.Code, rec.Body, want)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// TestConcurrentCalls runs every example through one handler from many goroutines, with the
// answer cache and the memo on, as deployed; run with -race it checks their locking, and every
// answer must equal the one computed alone.
func TestConcurrentCalls(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "*.request.json"))
	want := map[string]string{}
	for _, f := range files {
		body := readExample(t, filepath.Base(f))
		want[body] = serve(newHandler(webhook.Options{}), "POST", "/sync", body).Body.String()
	}
	h := newHandler(webhook.Options{CacheBytes: 8 << 10}) // small, so that entries come and go
	var wg stdsync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				for body, answer := range want {
					if got := serve(h, "POST", "/sync", body).Body.String(); got != answer {
						t.Errorf("goroutine %d call %d: answer differs from the one computed alone", g, i)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestReadyz checks that readiness turns 503 on shutdown while liveness stays 200.
func TestReadyz(t *testing.T) {
	h := newHandler(webhook.Options{})
	h.SetReady(false)
	if rec := serve(h, "GET", "/readyz", ""); rec.Code != http.StatusServiceUnavailable {
		t.Errorf("readyz while shutting down = %d; want 503", rec.Code)
	}
	if rec := serve(h, "GET", "/healthz", ""); rec.Code != http.StatusOK {
		t.Errorf("healthz while shutting down = %d; want 200", rec.Code)
	}
}

// metacontrollerResponse mirrors the struct Metacontroller decodes hook answers into. Strict
// decoding into it rejects any other top-level field, as v2 hooks do.
type metacontrollerResponse struct {
	Status             map[string]any   `json:"status"`
	Children           []map[string]any `json:"children"`
	ResyncAfterSeconds float64          `json:"resyncAfterSeconds"`
	Finalized          bool             `json:"finalized"`
}

// metacontrollerCustomizeResponse mirrors the struct Metacontroller decodes customize answers
// into (pkg/controller/common/customize/api/v2, pkg/apis/metacontroller/v1alpha1).
type metacontrollerCustomizeResponse struct {
	RelatedResources []struct {
		APIVersion    string `json:"apiVersion"`
		Resource      string `json:"resource"`
		LabelSelector *struct {
			MatchLabels      map[string]string `json:"matchLabels"`
			MatchExpressions []any             `json:"matchExpressions"`
		} `json:"labelSelector"`
		NamespaceSelector any      `json:"namespaceSelector"`
		Namespace         string   `json:"namespace"`
		Names             []string `json:"names"`
	} `json:"relatedResources"`
}

func TestResponseFields(t *testing.T) {
	tests := []struct {
		name       string
		path       string
		example    string
		wantFields []string
	}{
		{"sync", "/sync", "create.request.json", []string{"children", "status"}},
		{"finalize waiting", "/finalize", "finalize-children.request.json", []string{"children", "finalized", "resyncAfterSeconds", "status"}},
		{"finalize done", "/finalize", "finalize-done.request.json", []string{"children", "finalized", "status"}},
		{"sync URL serving a finalizing request", "/sync", "finalize-done.request.json", []string{"children", "finalized", "status"}},
		{"customize", "/customize", "customize.request.json", []string{"relatedResources"}},
	}
	h := newHandler(webhook.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(h, "POST", tt.path, readExample(t, tt.example))
			if rec.Code != 200 {
				t.Fatalf("code = %d; want 200 (%s)", rec.Code, rec.Body)
			}
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(rec.Body.Bytes(), &fields); err != nil {
				t.Fatal(err)
			}
			var got []string
			for k := range fields {
				got = append(got, k)
			}
			if strings.Join(sorted(got), ",") != strings.Join(tt.wantFields, ",") {
				t.Errorf("fields = %v; want %v", sorted(got), tt.wantFields)
			}
			dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
			dec.DisallowUnknownFields()
			var strict any = &metacontrollerResponse{}
			if tt.path == "/customize" {
				strict = &metacontrollerCustomizeResponse{}
			}
			if err := dec.Decode(strict); err != nil {
				t.Errorf("strict decode as Metacontroller does: %v", err)
			}
		})
	}
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// TestExamples sends every request in examples/ and compares the answer byte for byte with the
// response file next to it. Run with -update to rewrite the response files.
func TestExamples(t *testing.T) {
	// wantPhase pins what each example is there to show, so that -update cannot quietly change it.
	wantPhase := map[string]string{
		"create":             "Pending",
		"scaled":             "Ready",
		"rollout":            "Progressing",
		"invalid":            "Invalid",
		"finalize-children":  "Terminating",
		"finalize-done":      "Terminating",
		"ingress":            "Ready",
		"pdb-removed":        "Progressing",
		"autoscaling-on":     "Progressing",
		"autoscaling-scaled": "Ready",
		"autoscaling-off":    "Progressing",
		"customize":          "", // a customize answer has no status
		"image-pull-backoff": "Degraded",
		"crash-loop":         "Degraded",
		"configmap-missing":  "Degraded",
		"config-changed":     "Progressing",
		"quota-exceeded":     "Degraded",
		"route-accepted":     "Ready",
		"route-refused":      "Ready", // Ready does not wait for the Gateway: Routed says it refused
		"route-disabled":     "Ready", // without the component: no HTTPRoute, the rest as ever
		"canary-paused":      "Progressing",
		"canary-analysis":    "Progressing", // a check is due, and the hook has no Prometheus: inconclusive
		"canary-testers":     "Progressing", // step 1 at weight 0: the header rule before the weighted one at 100/0, accepted, its pause running
		"canary-undo":        "Progressing", // RolledBack within the rollback window: the stable Deployment rolls back, no canary
		"blue-green":         "Progressing", // the preview at full size, paused until promoted: 100/0 with the preview's header rule
	}
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.request.json"))
	if err != nil || len(files) != len(wantPhase) {
		t.Fatalf("examples = %v (%v); want one request per case in %v", files, err, wantPhase)
	}
	h := newHandler(webhook.Options{})
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".request.json")
		t.Run(name, func(t *testing.T) {
			path := "/sync"
			switch {
			case strings.HasPrefix(name, "finalize"):
				path = "/finalize"
			case name == "customize":
				path = "/customize"
			}
			rec := serve(h, "POST", path, readExample(t, name+".request.json"))
			if rec.Code != 200 {
				t.Fatalf("code = %d; want 200 (%s)", rec.Code, rec.Body)
			}
			var indented bytes.Buffer
			if err := json.Indent(&indented, bytes.TrimSpace(rec.Body.Bytes()), "", "  "); err != nil {
				t.Fatal(err)
			}
			got := indented.String() + "\n" // as `jq .` prints it
			var resp struct {
				Status struct{ Phase string }
			}
			json.Unmarshal(rec.Body.Bytes(), &resp)
			if resp.Status.Phase != wantPhase[name] {
				t.Errorf("phase = %q; want %q", resp.Status.Phase, wantPhase[name])
			}
			hooktest.Golden(t, filepath.Join("..", "examples", name+".response.json"), []byte(got))
		})
	}
}

// TestLogLine checks the one structured line logged per hook call.
func TestLogLine(t *testing.T) {
	var buf bytes.Buffer
	h := newHandler(webhook.Options{Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	serve(h, "POST", "/sync", readExample(t, "rollout.request.json"))
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("logged %d lines; want 1:\n%s", len(lines), buf.String())
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"msg": "hook", "hook": "sync", "parent": "default/hello", "phase": "Progressing", "children": float64(2)}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("log %s = %v; want %v", k, got[k], v)
		}
	}
	if _, ok := got["duration_ms"].(float64); !ok {
		t.Errorf("log duration_ms = %v; want a number", got["duration_ms"])
	}
}

// TestAnswerCache checks that a request that comes again byte for byte gets the very same answer
// from memory, that answers are kept per route, and that the cache forgets the least recently used.
func TestAnswerCache(t *testing.T) {
	create := readExample(t, "create.request.json")
	rollout := readExample(t, "rollout.request.json")
	tests := []struct {
		name       string
		cacheBytes int
		calls      []string // route and example, "path example"
		wantSame   []bool   // per call after the first: same answer as the call before with that body?
	}{
		{"repeat is answered from memory", 1 << 20, []string{"/sync create", "/sync create"}, []bool{true}},
		{"disabled", 0, []string{"/sync create", "/sync create"}, []bool{false}},
		{"routes are apart", 1 << 20, []string{"/sync create", "/finalize create"}, []bool{false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tick := 0
			h := webhook.New(webhook.Options{
				Logger:     slog.New(slog.NewJSONHandler(&buf, nil)),
				CacheBytes: tt.cacheBytes,
				// Every computed answer is stamped with a new time, so a recomputed one differs.
				Now: func() time.Time { tick++; return clock().Add(time.Duration(tick) * time.Hour) },
			})
			answers := map[string]string{}
			for i, call := range tt.calls {
				path, example, _ := strings.Cut(call, " ")
				body := map[string]string{"create": create, "rollout": rollout}[example]
				rec := serve(h, "POST", path, body)
				if rec.Code != 200 {
					t.Fatalf("call %d = %d", i, rec.Code)
				}
				got := rec.Body.String()
				if prev, ok := answers[example]; ok && i > 0 {
					if same := got == prev; same != tt.wantSame[i-1] {
						t.Errorf("call %d (%s): same answer as before = %v; want %v", i, call, same, tt.wantSame[i-1])
					}
				}
				answers[example] = got
			}
			if want := tt.wantSame[len(tt.wantSame)-1]; strings.Contains(buf.String(), `"cached":true`) != (want || slices.Contains(tt.wantSame, true)) {
				t.Errorf("log lines:\n%s\nwant cached:true exactly when an answer came from memory", buf.String())
			}
		})
	}
}

// TestPanicRecovered checks that a panic becomes a 500 with a generic body and one log line,
// and that the handler keeps serving.
func TestPanicRecovered(t *testing.T) {
	var buf bytes.Buffer
	calls := 0
	h := webhook.New(webhook.Options{
		Logger: slog.New(slog.NewJSONHandler(&buf, nil)),
		Now: func() time.Time {
			calls++
			if calls == 1 {
				panic("clock broke")
			}
			return clock()
		},
	})
	rec := serve(h, "POST", "/sync", readExample(t, "create.request.json"))
	if rec.Code != 500 || strings.TrimSpace(rec.Body.String()) != `{"error":"internal error"}` {
		t.Errorf("answer = %d %s; want 500 {\"error\":\"internal error\"}", rec.Code, rec.Body)
	}
	if n := strings.Count(buf.String(), `panic: clock broke`); n != 1 || strings.Count(buf.String(), "\n") != 1 {
		t.Errorf("logged %d panic lines; want 1", n)
	}
	if rec := serve(h, "POST", "/sync", readExample(t, "create.request.json")); rec.Code != 200 {
		t.Errorf("next call = %d; want 200", rec.Code)
	}
}

// FuzzHandler sends arbitrary bodies to both hooks. No input may panic, every answer is 200, 400
// or 413 with a JSON body, and every 200 obeys the hook contract.
func FuzzHandler(f *testing.F) {
	examples, _ := filepath.Glob(filepath.Join("..", "examples", "*.request.json"))
	fixtures, _ := filepath.Glob(filepath.Join("..", "..", "shared", "fixtures", "*", "*", "*.json"))
	for _, file := range append(examples, fixtures...) {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, strings.Contains(file, "finalize"))
	}
	f.Add([]byte(`{"parent":{"metadata":{"name":"a","namespace":"n"},"spec":{"image":"x","replicas":-1}}}`), false)
	h := newHandler(webhook.Options{MaxBodyBytes: 1 << 20, CacheBytes: webhook.DefaultCacheBytes}) // as deployed
	f.Fuzz(func(t *testing.T, body []byte, finalize bool) {
		path := "/sync"
		if finalize {
			path = "/finalize"
		}
		req := httptest.NewRequest("POST", path, bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		out, _ := io.ReadAll(rec.Body)
		switch rec.Code {
		case 200:
			decoded, err := wire.DecodeRequest(body)
			if err != nil {
				t.Fatalf("200 for a request that does not decode: %v", err)
			}
			strict := json.NewDecoder(bytes.NewReader(out))
			strict.DisallowUnknownFields() // only the fields Metacontroller's strict decoding accepts
			var mc metacontrollerResponse
			if err := strict.Decode(&mc); err != nil {
				t.Fatalf("200 with a body Metacontroller would refuse: %v\n%s", err, out)
			}
			decoded.Finalizing = decoded.Finalizing || finalize
			if err := hooktest.CheckAnswer(decoded, out); err != nil {
				t.Fatalf("contract broken: %v\nrequest: %s\nanswer: %s", err, body, out)
			}
		case 400, 413:
			var e struct{ Error string }
			if err := json.Unmarshal(out, &e); err != nil || e.Error == "" {
				t.Fatalf("%d with body %q; want {\"error\": ...}", rec.Code, out)
			}
		default:
			t.Fatalf("code %d for %q: %s", rec.Code, body, out)
		}
	})
}

// TestLargeRequest checks that the benchmark's large request is the steady state it stands for:
// a WebApp whose children are applied and whose rollout is complete.
func TestLargeRequest(t *testing.T) {
	body, err := hooktest.ReadFile(filepath.Join("testdata", "large.request.json"))
	if err != nil {
		t.Fatal(err)
	}
	rec := serve(newHandler(webhook.Options{}), "POST", "/sync", string(body))
	var resp hooktest.Answer
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Status.Phase != "Ready" || len(resp.Children) != 2 {
		t.Errorf("phase %q with %d children; want Ready with 2", resp.Status.Phase, len(resp.Children))
	}
}

// BenchmarkHandler measures a whole hook call, decoding to encoding: a small request (a new
// WebApp, no children) and a large one (testdata/large.request.json: a Deployment and a Service as
// a real kube-apiserver returned them, with managedFields and Metacontroller's annotations), each
// decided afresh, the large one repeated, as a resync repeats it, answered from memory, the large
// one with 10 and 1,000 related pods (hooktest.WithPods), and a customize call.
func BenchmarkHandler(b *testing.B) {
	large, err := os.ReadFile(filepath.Join("testdata", "large.request.json"))
	if err != nil {
		b.Fatal(err)
	}
	pods := func(n int) string {
		b.Helper()
		body, err := hooktest.WithPods(large, n)
		if err != nil {
			b.Fatal(err)
		}
		return string(body)
	}
	for _, bc := range []struct {
		name, path, body string
		cacheBytes       int
	}{
		{"small", "/sync", readExample(b, "create.request.json"), 0},
		{"large", "/sync", string(large), 0},
		{"finalize", "/finalize", readExample(b, "finalize-children.request.json"), 0},
		{"large-repeated", "/sync", string(large), webhook.DefaultCacheBytes}, // answered from memory
		{"pods-10", "/sync", pods(10), 0},
		{"pods-1000", "/sync", pods(1000), 0},
		{"customize", "/customize", string(large), 0},
	} {
		h := newHandler(webhook.Options{CacheBytes: bc.cacheBytes, MaxBodyBytes: webhook.DefaultMaxBodyBytes})
		body, path := bc.body, bc.path
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				rec := serve(h, "POST", path, body)
				if rec.Code != 200 {
					b.Fatalf("code = %d", rec.Code)
				}
			}
		})
	}
}

// TestCacheSkipsTimedAnswers posts the same request of a WebApp whose canary holds a step's
// pause (sync's TestSyncCanary's fourth call, made by TestCanaryWalk) during the pause and after
// it ends: the answer cache must not replay an answer that runs a timer, which would be wrong once
// the pause is over and would ask for the next call too late.
func TestCacheSkipsTimedAnswers(t *testing.T) {
	body, err := os.ReadFile("../sync/testdata/canary/step-04.request.json")
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Parent struct {
			Status struct {
				Canary struct {
					PauseStartTime time.Time `json:"pauseStartTime"`
				} `json:"canary"`
			} `json:"status"`
		} `json:"parent"`
	}
	if err := json.Unmarshal(body, &req); err != nil || req.Parent.Status.Canary.PauseStartTime.IsZero() {
		t.Fatalf("the request holds no pause: %v", err)
	}
	at := req.Parent.Status.Canary.PauseStartTime.Add(700 * time.Millisecond) // 4.3 s of a 5 s pause left
	h := webhook.New(webhook.Options{CacheBytes: webhook.DefaultCacheBytes, Now: func() time.Time { return at }})
	step := func() (int, float64) {
		t.Helper()
		rec := serve(h, "POST", "/sync", string(body))
		var a struct {
			Status struct {
				Canary struct{ Step int } `json:"canary"`
			} `json:"status"`
			ResyncAfterSeconds float64 `json:"resyncAfterSeconds"`
		}
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &a) != nil {
			t.Fatalf("sync = %d %s", rec.Code, rec.Body)
		}
		return a.Status.Canary.Step, a.ResyncAfterSeconds
	}
	for _, tt := range []struct {
		name       string
		after      time.Duration
		wantStep   int
		wantResync float64
	}{
		{"during the pause: a call is asked for in 5 s, rounded up", 0, 0, 5},
		{"again during the pause: decided afresh, 4 s", 500 * time.Millisecond, 0, 4},
		{"just after the pause, before the 5 s the first answer named", 4 * time.Second, 1, 0},
	} {
		at = at.Add(tt.after)
		if s, r := step(); s != tt.wantStep || (tt.wantResync != 0 && r != tt.wantResync) {
			t.Errorf("%s: step %d, resyncAfterSeconds %v; want step %d, %v", tt.name, s, r, tt.wantStep, tt.wantResync)
		}
	}
}

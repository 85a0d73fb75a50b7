package webhook_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/example/webapp-operator/webhook"
)

// rawResponse is what a client of rawCall saw.
type rawResponse struct {
	code       int
	retryAfter string
	closed     bool // the server asked to close the connection
	body       string
	elapsed    time.Duration // from the end of the headers to the response
}

// rawCall sends head (a request line and headers, without the blank line that ends them) and
// then body over a new connection to addr, keeps the connection open without sending more, and
// reads the response.
func rawCall(t *testing.T, addr, head, body string) rawResponse {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, head+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), closed: resp.Close,
		body: strings.TrimSpace(string(b)), elapsed: time.Since(start)}
}

// TestHookLimits checks over real connections what a hook call may cost: its length must be
// declared, and within MaxBodyBytes, before any of the body is read; a call waits a bounded time
// for the in-flight budget, then gets 503 with Retry-After; a body that trickles in is cut off at
// its deadline, and the budget it held is free again.
func TestHookLimits(t *testing.T) {
	const (
		maxBody     = 64 << 10
		wait        = 200 * time.Millisecond
		bodyTimeout = 700 * time.Millisecond
	)
	create := readExample(t, "create.request.json")
	post := func(length string) string {
		return "POST /sync HTTP/1.1\r\nHost: hook\r\nContent-Type: application/json" + length
	}
	tests := []struct {
		name string
		// hold has a client first declare the whole budget and trickle its body, and after is
		// how long after it the call is made.
		hold  bool
		after time.Duration
		head  string
		body  string

		wantCode       int
		wantBody       string // a prefix
		wantRetryAfter string
		wantClosed     bool
		// wantMin and wantMax bound the time the answer takes.
		wantMin, wantMax time.Duration
	}{
		{name: "declared length, whole body", head: post(fmt.Sprintf("\r\nContent-Length: %d", len(create))), body: create,
			wantCode: 200, wantMax: wait},
		{name: "no Content-Length: chunked, and none of the body sent", head: post("\r\nTransfer-Encoding: chunked"),
			wantCode: 411, wantBody: `{"error":"a Content-Length is required"}`, wantClosed: true, wantMax: wait},
		{name: "declared length over the limit, none of the body sent", head: post(fmt.Sprintf("\r\nContent-Length: %d", maxBody+1)),
			wantCode: 413, wantBody: `{"error":"request body is larger than 65536 bytes"}`, wantClosed: true, wantMax: wait},
		{name: "a body that stops arriving", head: post("\r\nContent-Length: 1000"), body: `{"parent":`,
			wantCode: 408, wantBody: `{"error":"the request body did not arrive within 700ms"}`, wantClosed: true, wantMin: bodyTimeout - 50*time.Millisecond, wantMax: bodyTimeout + time.Second},
		{name: "the budget held: 503 after the wait", hold: true, after: 50 * time.Millisecond, head: post(fmt.Sprintf("\r\nContent-Length: %d", len(create))), body: create,
			wantCode: 503, wantBody: `{"error":"busy: `, wantRetryAfter: "1", wantMin: wait - 20*time.Millisecond, wantMax: wait + 500*time.Millisecond},
		{name: "the budget held by a trickler is free at its deadline", hold: true, after: bodyTimeout + 100*time.Millisecond, head: post(fmt.Sprintf("\r\nContent-Length: %d", len(create))), body: create,
			wantCode: 200, wantMax: wait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(newHandler(webhook.Options{MaxBodyBytes: maxBody, MaxInflightBodyBytes: maxBody, InflightWait: wait, BodyTimeout: bodyTimeout}))
			defer srv.Close()
			addr := srv.Listener.Addr().String()
			if tt.hold {
				held := make(chan rawResponse, 1)
				go func() { held <- rawCall(t, addr, post(fmt.Sprintf("\r\nContent-Length: %d", maxBody)), `{"parent":`) }()
				time.Sleep(tt.after)
				defer func() {
					if r := <-held; r.code != 408 {
						t.Errorf("the client holding the budget got %d; want 408", r.code)
					}
				}()
			}
			got := rawCall(t, addr, tt.head, tt.body)
			if got.code != tt.wantCode || !strings.HasPrefix(got.body, tt.wantBody) {
				t.Errorf("answer = %d %s; want %d %s…", got.code, got.body, tt.wantCode, tt.wantBody)
			}
			if got.retryAfter != tt.wantRetryAfter {
				t.Errorf("Retry-After = %q; want %q", got.retryAfter, tt.wantRetryAfter)
			}
			if got.closed != tt.wantClosed {
				t.Errorf("connection closed = %v; want %v", got.closed, tt.wantClosed)
			}
			if got.elapsed < tt.wantMin || got.elapsed > tt.wantMax {
				t.Errorf("answered after %s; want between %s and %s", got.elapsed, tt.wantMin, tt.wantMax)
			}
		})
	}
}

// TestLoggedPath checks that a request's path is logged once, cut to 256 characters (validation.Cut), and
// that the error a client sees repeats no more of it.
func TestLoggedPath(t *testing.T) {
	tests := []struct {
		name, path string
		wantPath   string // as logged
	}{
		{"short", "/reconcile", "/reconcile"},
		{"long", "/" + strings.Repeat("a", 5000), "/" + strings.Repeat("a", 255) + "…"},
		{"long, two-byte characters", "/" + strings.Repeat("é", 3000), "/" + strings.Repeat("é", 255) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			h := newHandler(webhook.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
			req := httptest.NewRequest("POST", "/", strings.NewReader("{}"))
			req.URL.Path = tt.path // whole, as the server decodes it
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != 404 {
				t.Fatalf("code = %d; want 404", rec.Code)
			}
			if want := `{"error":"no route POST ` + tt.wantPath + `"}`; strings.TrimSpace(rec.Body.String()) != want {
				t.Errorf("body = %.400s; want %.400s", rec.Body, want)
			}
			var entry map[string]any
			if err := json.Unmarshal(logs.Bytes(), &entry); err != nil {
				t.Fatalf("log %q: %v", logs.String(), err)
			}
			if entry["path"] != tt.wantPath {
				t.Errorf("logged path = %.400v; want %.400s", entry["path"], tt.wantPath)
			}
			fragment := tt.path[:min(len(tt.path), 8)]
			if n := strings.Count(logs.String(), fragment); n != 1 {
				t.Errorf("the log line names the path %d times; want once: %.600s", n, logs.String())
			}
		})
	}
}

package webhook_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	stdsync "sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/example/webapp-operator/webhook"
)

// pipeListener is a net.Listener whose connections are net.Pipe's, dialed in memory with dial.
// An http.Server serving it in a synctest bubble blocks durably on its connections (a TCP
// socket, even on loopback, never does), so that synctest.Wait and the fake clock work.
type pipeListener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce stdsync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial opens a connection to the listener: it returns once the server has accepted it.
func (l *pipeListener) dial() (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// rawResponse is what a client of rawCall saw.
type rawResponse struct {
	code       int
	retryAfter string
	closed     bool // the server asked to close the connection
	body       string
	elapsed    time.Duration // from the end of the headers to the response
}

// rawCall sends head (a request line and headers, without the blank line that ends them) and
// then body over a new connection to l, keeps the connection open without sending more, and
// reads the response.
func rawCall(t *testing.T, l *pipeListener, head, body string) rawResponse {
	t.Helper()
	conn, err := l.dial()
	if err != nil {
		t.Error(err)
		return rawResponse{}
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, head+"\r\n\r\n"); err != nil {
		t.Errorf("send the headers: %v", err)
		return rawResponse{}
	}
	start := time.Now()
	if body != "" { // a net.Pipe write, even of nothing, waits for a read
		if _, err := io.WriteString(conn, body); err != nil {
			t.Errorf("send the body: %v", err)
			return rawResponse{}
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Errorf("no response: %v", err)
		return rawResponse{}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResponse{code: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), closed: resp.Close,
		body: strings.TrimSpace(string(b)), elapsed: time.Since(start)}
}

// TestHookLimits checks, through net/http's server on in-memory connections, what a hook call
// may cost: its length must be declared, and within MaxBodyBytes, before any of the body is read;
// a call waits a bounded time for the in-flight budget, then gets 503 with Retry-After; a body
// that trickles in is cut off at its deadline, and the budget it held is free again at that
// instant.
//
// Each case runs in a synctest bubble: synctest.Wait tells when the client holding the budget is
// being read from, and the fake clock makes every deadline exact, so that each answer's time is
// asserted to the nanosecond and the whole test takes no real time.
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
		// how long after its headers the call is made.
		hold  bool
		after time.Duration
		head  string
		body  string

		wantCode       int
		wantBody       string // a prefix
		wantRetryAfter string
		wantClosed     bool
		wantElapsed    time.Duration // the time the answer takes
	}{
		{name: "declared length, whole body", head: post(fmt.Sprintf("\r\nContent-Length: %d", len(create))), body: create,
			wantCode: 200},
		{name: "no Content-Length: chunked, and none of the body sent", head: post("\r\nTransfer-Encoding: chunked"),
			wantCode: 411, wantBody: `{"error":"a Content-Length is required"}`, wantClosed: true},
		{name: "declared length over the limit, none of the body sent", head: post(fmt.Sprintf("\r\nContent-Length: %d", maxBody+1)),
			wantCode: 413, wantBody: `{"error":"request body is larger than 65536 bytes"}`, wantClosed: true},
		{name: "a body that stops arriving", head: post("\r\nContent-Length: 1000"), body: `{"parent":`,
			wantCode: 408, wantBody: `{"error":"the request body did not arrive within 700ms"}`, wantClosed: true, wantElapsed: bodyTimeout},
		{name: "the budget held: 503 after the wait", hold: true, after: 50 * time.Millisecond, head: post(fmt.Sprintf("\r\nContent-Length: %d", len(create))), body: create,
			wantCode: 503, wantBody: `{"error":"busy: `, wantRetryAfter: "1", wantElapsed: wait},
		{name: "the budget held by a trickler is free at its deadline", hold: true, after: bodyTimeout - 100*time.Millisecond, head: post(fmt.Sprintf("\r\nContent-Length: %d", len(create))), body: create,
			wantCode: 200, wantElapsed: 100 * time.Millisecond},
		{name: "the budget held by a trickler is free after its deadline", hold: true, after: bodyTimeout + 100*time.Millisecond, head: post(fmt.Sprintf("\r\nContent-Length: %d", len(create))), body: create,
			wantCode: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newPipeListener()
				srv := &http.Server{Handler: newHandler(webhook.Options{MaxBodyBytes: maxBody, MaxInflightBodyBytes: maxBody, InflightWait: wait, BodyTimeout: bodyTimeout})}
				go srv.Serve(l)
				defer func() {
					// Shutdown rather than Close: the server lingers on connections it closes
					// (net/http's closeWriteAndWait sleeps), and the fake clock only moves while
					// this, the bubble's root goroutine, waits.
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					if err := srv.Shutdown(ctx); err != nil {
						t.Errorf("shutdown: %v", err)
						srv.Close()
					}
				}()
				if tt.hold {
					held := make(chan rawResponse, 1)
					go func() { held <- rawCall(t, l, post(fmt.Sprintf("\r\nContent-Length: %d", maxBody)), `{"parent":`) }()
					synctest.Wait() // the holder's headers are read, its budget taken, and its body awaited
					time.Sleep(tt.after)
					defer func() {
						if r := <-held; r.code != 408 || r.elapsed != bodyTimeout {
							t.Errorf("the client holding the budget got %d after %s; want 408 after %s", r.code, r.elapsed, bodyTimeout)
						}
					}()
				}
				got := rawCall(t, l, tt.head, tt.body)
				if got.code != tt.wantCode || !strings.HasPrefix(got.body, tt.wantBody) {
					t.Errorf("answer = %d %s; want %d %s…", got.code, got.body, tt.wantCode, tt.wantBody)
				}
				if got.retryAfter != tt.wantRetryAfter {
					t.Errorf("Retry-After = %q; want %q", got.retryAfter, tt.wantRetryAfter)
				}
				if got.closed != tt.wantClosed {
					t.Errorf("connection closed = %v; want %v", got.closed, tt.wantClosed)
				}
				if got.elapsed != tt.wantElapsed {
					t.Errorf("answered after %s; want after %s", got.elapsed, tt.wantElapsed)
				}
			})
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

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// startLimited runs the real server with args added to a loopback configuration, and a header
// timeout and an idle timeout short enough to watch.
func startLimited(t *testing.T, headerTimeout, idle time.Duration, args ...string) *Main {
	t.Helper()
	m := NewMain(io.Discard)
	args = append([]string{"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--shutdown-delay", "0s"}, args...)
	if err := m.ParseFlags(args, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	m.Config.ReadHeaderTimeout, m.Config.IdleTimeout = headerTimeout, idle
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// TestMaxConnections checks that --max-connections bounds the hook port's open connections: a
// connection past the bound is not served until one of those open closes (here: cut off by the
// header timeout), and one within it at once.
//
// Each holder is served a request before it sends half the headers of the next: so the test
// knows the server accepted it, and holds one of the bound's slots, before the call is made.
func TestMaxConnections(t *testing.T) {
	const headerTimeout = time.Second
	tests := []struct {
		name     string
		max      string
		holders  int // connections served once, that then send half their next headers, and wait
		wantWait bool
	}{
		{"within the bound", "3", 2, false},
		{"past the bound", "2", 2, true},
		{"no bound", "-1", 8, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := startLimited(t, headerTimeout, time.Minute, "--max-connections", tt.max)
			for range tt.holders {
				conn, err := net.Dial("tcp", m.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: hook\r\n\r\n")
				conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					t.Fatalf("a holder within the bound was not served: %v", err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: hook\r\n") // and nothing more
			}
			start := time.Now()
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
			resp, err := client.Get("http://" + m.Addr().String() + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			waited := time.Since(start)
			if tt.wantWait && waited < headerTimeout/2 {
				t.Errorf("answered after %s; want it to wait for a holder's connection to close (%s)", waited, headerTimeout)
			}
			if !tt.wantWait && waited > headerTimeout/2 {
				t.Errorf("answered after %s; want at once", waited)
			}
		})
	}
}

// TestIdleTimeout checks that both listeners keep a kept-alive connection open while it carries
// requests, and close it once it has carried none for the idle timeout.
//
// The test waits for the server to close the connection, rather than sleeping past the timeout,
// and bounds when it does: never before the idle timeout after the last request (which the
// connection then carried, at once, rather than being closed), and within three times it.
func TestIdleTimeout(t *testing.T) {
	const idle = 300 * time.Millisecond
	m := startLimited(t, time.Second, idle)
	tests := []struct {
		name, addr, path string
	}{
		{"hook port", m.Addr().String(), "/healthz"},
		{"metrics port", m.MetricsAddr().String(), "/metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			r := bufio.NewReader(conn)
			get := func() error {
				fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: hook\r\n\r\n", tt.path)
				conn.SetReadDeadline(time.Now().Add(2 * time.Second))
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					return err
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return err
			}
			if err := get(); err != nil {
				t.Fatal(err)
			}
			// The server's idle timer starts after it has answered this request, so after start.
			start := time.Now()
			if err := get(); err != nil {
				t.Fatalf("second request on the connection: %v; want the connection kept alive", err)
			}
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = r.ReadByte() // ends when the server closes the connection
			closedAfter := time.Since(start)
			if err == nil {
				t.Fatal("the idle connection carried a byte no request asked for")
			}
			if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
				t.Fatalf("the idle connection is still open after 5s; want it closed after %s", idle)
			}
			if closedAfter < idle || closedAfter > 3*idle {
				t.Errorf("the idle connection was closed %s after its last request; want between %s and %s", closedAfter, idle, 3*idle)
			}
		})
	}
}

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/example/webapp-operator/analysis"
	"github.com/example/webapp-operator/webhook"
)

// defaultPrometheus is the analysis's configuration with no flag set: no URL, and the defaults.
var defaultPrometheus = analysis.Config{Gateway: "traefik", QueryTimeout: 2 * time.Second, MaxConcurrentQueries: 8}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{name: "defaults", want: Config{Addr: ":8080", MetricsAddr: ":9090", Options: webhook.Options{MaxBodyBytes: 16 << 20, MaxInflightBodyBytes: 16 << 20, InflightWait: 2 * time.Second, BodyTimeout: 5 * time.Second, CacheBytes: 1 << 20}, MaxConnections: 128, ShutdownDelay: 5 * time.Second, ShutdownTimeout: 20 * time.Second, LogLevel: "info", ReadHeaderTimeout: 5 * time.Second, ReloadInterval: 5 * time.Second, IdleTimeout: 30 * time.Second, Prometheus: defaultPrometheus}},
		{name: "environment", env: map[string]string{"ADDR": ":9090", "METRICS_ADDR": "127.0.0.1:9100", "MAX_BODY_BYTES": "1024", "SHUTDOWN_DELAY": "0s", "SHUTDOWN_TIMEOUT": "3s", "LOG_LEVEL": "debug"},
			want: Config{Addr: ":9090", MetricsAddr: "127.0.0.1:9100", Options: webhook.Options{MaxBodyBytes: 1024, MaxInflightBodyBytes: 16 << 20, InflightWait: 2 * time.Second, BodyTimeout: 5 * time.Second, CacheBytes: 1 << 20}, MaxConnections: 128, ShutdownTimeout: 3 * time.Second, LogLevel: "debug", ReadHeaderTimeout: 5 * time.Second, ReloadInterval: 5 * time.Second, IdleTimeout: 30 * time.Second, Prometheus: defaultPrometheus}},
		{name: "flags win over environment", args: []string{"--addr", "127.0.0.1:7000"}, env: map[string]string{"ADDR": ":9090"},
			want: Config{Addr: "127.0.0.1:7000", MetricsAddr: ":9090", Options: webhook.Options{MaxBodyBytes: 16 << 20, MaxInflightBodyBytes: 16 << 20, InflightWait: 2 * time.Second, BodyTimeout: 5 * time.Second, CacheBytes: 1 << 20}, MaxConnections: 128, ShutdownDelay: 5 * time.Second, ShutdownTimeout: 20 * time.Second, LogLevel: "info", ReadHeaderTimeout: 5 * time.Second, ReloadInterval: 5 * time.Second, IdleTimeout: 30 * time.Second, Prometheus: defaultPrometheus}},
		{name: "limits from the environment", env: map[string]string{"MAX_CONNECTIONS": "16", "BODY_TIMEOUT": "3s", "INFLIGHT_WAIT": "1s"},
			want: Config{Addr: ":8080", MetricsAddr: ":9090", Options: webhook.Options{MaxBodyBytes: 16 << 20, MaxInflightBodyBytes: 16 << 20, InflightWait: time.Second, BodyTimeout: 3 * time.Second, CacheBytes: 1 << 20}, MaxConnections: 16, ShutdownDelay: 5 * time.Second, ShutdownTimeout: 20 * time.Second, LogLevel: "info", ReadHeaderTimeout: 5 * time.Second, ReloadInterval: 5 * time.Second, IdleTimeout: 30 * time.Second, Prometheus: defaultPrometheus}},
		{name: "no connection bound", args: []string{"--max-connections", "-1"},
			want: Config{Addr: ":8080", MetricsAddr: ":9090", Options: webhook.Options{MaxBodyBytes: 16 << 20, MaxInflightBodyBytes: 16 << 20, InflightWait: 2 * time.Second, BodyTimeout: 5 * time.Second, CacheBytes: 1 << 20}, MaxConnections: -1, ShutdownDelay: 5 * time.Second, ShutdownTimeout: 20 * time.Second, LogLevel: "info", ReadHeaderTimeout: 5 * time.Second, ReloadInterval: 5 * time.Second, IdleTimeout: 30 * time.Second, Prometheus: defaultPrometheus}},
		{name: "client certificate names from the environment", env: map[string]string{"TLS_CERT_FILE": "t.crt", "TLS_KEY_FILE": "t.key", "CLIENT_CA_FILE": "ca.crt", "CLIENT_CERT_NAMES": "metacontroller.metacontroller.svc, other"},
			want: Config{Addr: ":8080", MetricsAddr: ":9090", Options: webhook.Options{MaxBodyBytes: 16 << 20, MaxInflightBodyBytes: 16 << 20, InflightWait: 2 * time.Second, BodyTimeout: 5 * time.Second, CacheBytes: 1 << 20, ClientCertNames: []string{"metacontroller.metacontroller.svc", "other"}}, MaxConnections: 128, ShutdownDelay: 5 * time.Second, ShutdownTimeout: 20 * time.Second, LogLevel: "info", ReadHeaderTimeout: 5 * time.Second, ReloadInterval: 5 * time.Second, IdleTimeout: 30 * time.Second, Prometheus: defaultPrometheus, TLSCertFile: "t.crt", TLSKeyFile: "t.key", ClientCAFile: "ca.crt"}},
		{name: "a default security profile from the environment", env: map[string]string{"DEFAULT_SECURITY_PROFILE": "restricted"},
			want: Config{Addr: ":8080", MetricsAddr: ":9090", Options: webhook.Options{MaxBodyBytes: 16 << 20, MaxInflightBodyBytes: 16 << 20, InflightWait: 2 * time.Second, BodyTimeout: 5 * time.Second, CacheBytes: 1 << 20}, MaxConnections: 128, ShutdownDelay: 5 * time.Second, ShutdownTimeout: 20 * time.Second, LogLevel: "info", ReadHeaderTimeout: 5 * time.Second, ReloadInterval: 5 * time.Second, IdleTimeout: 30 * time.Second, Prometheus: defaultPrometheus, DefaultSecurityProfile: "restricted"}},
		{name: "an unknown default security profile", args: []string{"--default-security-profile", "baseline"}, wantErr: `-default-security-profile must be restricted, none or empty, got "baseline"`},
		{name: "a default gateway from the environment", env: map[string]string{"DEFAULT_GATEWAY": "infra/public/https"},
			want: Config{Addr: ":8080", MetricsAddr: ":9090", Options: webhook.Options{MaxBodyBytes: 16 << 20, MaxInflightBodyBytes: 16 << 20, InflightWait: 2 * time.Second, BodyTimeout: 5 * time.Second, CacheBytes: 1 << 20}, MaxConnections: 128, ShutdownDelay: 5 * time.Second, ShutdownTimeout: 20 * time.Second, LogLevel: "info", ReadHeaderTimeout: 5 * time.Second, ReloadInterval: 5 * time.Second, IdleTimeout: 30 * time.Second, Prometheus: defaultPrometheus, DefaultGateway: "infra/public/https"}},
		{name: "a default gateway without a namespace", args: []string{"--default-gateway", "public"}, wantErr: `-default-gateway: "public" is not namespace/name or namespace/name/section`},
		{name: "a default gateway with a bad name", args: []string{"--default-gateway", "infra/Public"}, wantErr: `-default-gateway: "infra/Public": name "Public": a lowercase RFC 1123 subdomain`},
		{name: "a default gateway with a bad namespace", args: []string{"--default-gateway", "in.fra/public"}, wantErr: `-default-gateway: "in.fra/public": namespace "in.fra": must not contain dots`},
		{name: "a default gateway with too many parts", args: []string{"--default-gateway", "a/b/c/d"}, wantErr: `is not namespace/name or namespace/name/section`},
		{name: "analysis from the environment", env: map[string]string{"PROMETHEUS_URL": "https://prometheus.monitoring:9090", "PROMETHEUS_TOKEN_FILE": "/t", "PROMETHEUS_CA_FILE": "/ca", "ANALYSIS_GATEWAY": "istio", "ANALYSIS_TEMPLATES": "/tpl.yaml", "ANALYSIS_QUERY_TIMEOUT": "1500ms", "ANALYSIS_MAX_CONCURRENT_QUERIES": "4", "ANALYSIS_ENTRYPOINTS": "web=8000,websecure=8443"},
			want: Config{Addr: ":8080", MetricsAddr: ":9090", Options: webhook.Options{MaxBodyBytes: 16 << 20, MaxInflightBodyBytes: 16 << 20, InflightWait: 2 * time.Second, BodyTimeout: 5 * time.Second, CacheBytes: 1 << 20}, MaxConnections: 128, ShutdownDelay: 5 * time.Second, ShutdownTimeout: 20 * time.Second, LogLevel: "info", ReadHeaderTimeout: 5 * time.Second, ReloadInterval: 5 * time.Second, IdleTimeout: 30 * time.Second,
				Prometheus: analysis.Config{URL: "https://prometheus.monitoring:9090", TokenFile: "/t", CAFile: "/ca", Gateway: "istio", TemplatesFile: "/tpl.yaml", QueryTimeout: 1500 * time.Millisecond, MaxConcurrentQueries: 4, EntryPoints: analysis.EntryPoints{"web": 8000, "websecure": 8443}}}},
		{name: "a Prometheus token without a URL", args: []string{"--prometheus-token-file", "/t"}, wantErr: "-prometheus-token-file needs -prometheus-url"},
		{name: "templates without a URL", args: []string{"--analysis-templates", "/t"}, wantErr: "-analysis-templates needs -prometheus-url"},
		{name: "entry points without a URL", args: []string{"--analysis-entrypoints", "web=8000"}, wantErr: "-analysis-entrypoints needs -prometheus-url"},
		{name: "an entry point without its port", args: []string{"--analysis-entrypoints", "web"}, wantErr: `-analysis-entrypoints: "web" is not name=port`},
		{name: "a Prometheus URL with a password", args: []string{"--prometheus-url", "http://u:s3cret@prometheus"}, wantErr: "-prometheus-url: must hold no user or password"},
		{name: "a Prometheus URL without a scheme", args: []string{"--prometheus-url", "prometheus:9090"}, wantErr: "-prometheus-url: the scheme must be http or https"},
		{name: "an unknown gateway", args: []string{"--analysis-gateway", "nginx"}, wantErr: `-analysis-gateway: "nginx" is not one of istio, traefik`},
		{name: "a query timeout past 2s", args: []string{"--analysis-query-timeout", "3s"}, wantErr: "-analysis-query-timeout must be positive and at most 2s, got 3s"},
		{name: "no query slot", args: []string{"--analysis-max-concurrent-queries", "0"}, wantErr: "-analysis-max-concurrent-queries must be positive, got 0"},
		{name: "no connection bound of 0", args: []string{"--max-connections", "0"}, wantErr: "-max-connections must not be 0"},
		{name: "a wait as long as the body timeout", args: []string{"--inflight-wait", "5s"}, wantErr: "-inflight-wait must be positive and shorter than -body-timeout (5s), got 5s"},
		{name: "a body timeout past the read timeout", args: []string{"--body-timeout", "20s"}, wantErr: "-body-timeout must be positive and at most the server's read timeout of 15s, got 20s"},
		{name: "no body timeout", args: []string{"--body-timeout", "0s"}, wantErr: "-body-timeout must be positive"},
		{name: "client certificate names without a client CA", args: []string{"--client-cert-names", "a"}, wantErr: "-client-cert-names needs -client-ca-file"},
		{name: "client certificate names that name none", args: []string{"--tls-cert-file", "t", "--tls-key-file", "k", "--client-ca-file", "c", "--client-cert-names", " , "}, wantErr: `-client-cert-names " , " names no DNS name`},
		{name: "negative delay", args: []string{"--shutdown-delay", "-1s"}, wantErr: "-shutdown-delay must not be negative"},
		{name: "bad environment value", env: map[string]string{"MAX_BODY_BYTES": "lots"}, wantErr: `environment MAX_BODY_BYTES="lots"`},
		{name: "non-positive body limit", args: []string{"--max-body-bytes", "0"}, wantErr: "-max-body-bytes must be positive, got 0"},
		{name: "no in-flight bound of 0", args: []string{"--max-inflight-body-bytes", "0"}, wantErr: "-max-inflight-body-bytes must not be 0"},
		{name: "bad log level", args: []string{"--log-level", "loud"}, wantErr: "-log-level"},
		{name: "stray argument", args: []string{"serve"}, wantErr: "unexpected arguments: serve"},
		{name: "no metrics", args: []string{"--metrics-addr="}, want: Config{Addr: ":8080", Options: webhook.Options{MaxBodyBytes: 16 << 20, MaxInflightBodyBytes: 16 << 20, InflightWait: 2 * time.Second, BodyTimeout: 5 * time.Second, CacheBytes: 1 << 20}, MaxConnections: 128, ShutdownDelay: 5 * time.Second, ShutdownTimeout: 20 * time.Second, LogLevel: "info", ReadHeaderTimeout: 5 * time.Second, ReloadInterval: 5 * time.Second, IdleTimeout: 30 * time.Second, Prometheus: defaultPrometheus}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMain(io.Discard)
			err := m.ParseFlags(tt.args, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v; want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m.Config, tt.want) {
				t.Errorf("config = %+v; want %+v", m.Config, tt.want)
			}
		})
	}
}

// oneShot is a client that closes each connection after its request. The default client keeps
// connections alive, and its Transport may dial one more while an earlier one goes back to its
// pool, then keep it unused: the server sees a new connection that never sends a request, which
// http.Server.Shutdown waits 5s for before it counts it idle, and Close takes 5s more.
var oneShot = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// startMain runs the real server on a free loopback port.
func startMain(t *testing.T) (*Main, string) {
	t.Helper()
	m := NewMain(io.Discard)
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--shutdown-delay", "400ms", "--shutdown-timeout", "5s"}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	m.Config.ReadHeaderTimeout = 300 * time.Millisecond
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, "http://" + m.Addr().String()
}

func TestMainServes(t *testing.T) {
	m, base := startMain(t)
	metrics := "http://" + m.MetricsAddr().String()
	body, err := os.ReadFile("../../examples/create.request.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, url string
		body        []byte
		wantCode    int
		wantBody    string // a substring
	}{
		{"POST", base + "/sync", body, 200, `"phase":"Pending"`},
		{"POST", base + "/finalize", body, 200, `"finalized":true`},
		{"GET", base + "/healthz", nil, 200, "ok"},
		{"GET", base + "/readyz", nil, 200, "ok"},
		{"POST", base + "/sync", []byte("{"), 400, "invalid JSON"},
		{"GET", base + "/metrics", nil, 404, "no route"},
		{"GET", metrics + "/metrics", nil, 200, `webapp_hook_requests_total{code="200",hook="sync"} 1`},
		{"POST", metrics + "/metrics", nil, 405, ""},
		{"POST", metrics + "/sync", body, 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.url, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, tt.url, bytes.NewReader(tt.body))
			resp, err := oneShot.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantCode {
				t.Errorf("code = %d; want %d", resp.StatusCode, tt.wantCode)
			}
			if !strings.Contains(string(got), tt.wantBody) {
				t.Errorf("body = %.300s; want it to contain %q", got, tt.wantBody)
			}
		})
	}
}

// TestGracefulShutdown starts a request, then shuts down while its body is still arriving. During
// the shutdown delay /readyz answers 503 over the network and new requests are still served; then
// the listener closes while the in-flight request holds Close, the metrics still served, until it
// is answered; and new connections are refused.
//
// The test waits for events, never for time: the request is in flight when the metrics count it,
// and the delay is held open through the waitDelay seam until the test has looked.
func TestGracefulShutdown(t *testing.T) {
	m, base := startMain(t)
	delayed := make(chan time.Duration, 1)
	delayEnded := make(chan struct{})
	endDelay := sync.OnceFunc(func() { close(delayEnded) })
	defer endDelay() // on failure too, so that the cleanup's Close returns
	m.waitDelay = func(d time.Duration) {
		delayed <- d
		<-delayEnded
	}
	body, err := os.ReadFile("../../examples/create.request.json")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", m.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	half := len(body) / 2
	fmt.Fprintf(conn, "POST /sync HTTP/1.1\r\nHost: hook\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	conn.Write(body[:half])
	waitForMetric(t, m, "webapp_hook_requests_in_flight", func(v float64) bool { return v == 1 }) // the server is now reading this request's body

	closed := make(chan error, 1)
	go func() { closed <- m.Close() }()
	select {
	case d := <-delayed:
		if d != 400*time.Millisecond {
			t.Errorf("Close waited a shutdown delay of %s; want the configured 400ms", d)
		}
	case err := <-closed:
		t.Fatalf("Close returned (%v) without a shutdown delay", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not start its shutdown delay within 5s")
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := client.Get(base + "/readyz"); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz during the shutdown delay = %v, %v; want 503", resp, err)
	}
	if resp, err := client.Post(base+"/sync", "application/json", bytes.NewReader(body)); err != nil || resp.StatusCode != 200 {
		t.Errorf("new request during the shutdown delay = %v, %v; want 200", resp, err)
	}

	endDelay()
	// Past the delay the listener closes: wait until a connection is refused.
	for deadline := time.Now().Add(5 * time.Second); ; {
		c, err := net.Dial("tcp", m.Addr().String())
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the hook listener still accepts connections 5s after the shutdown delay")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The request in flight holds Close, and the metrics are served while it does.
	if v := metricValue(t, m, "webapp_hook_requests_in_flight"); v != 1 {
		t.Errorf("metrics during the drain: %g requests in flight; want 1", v)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) before the in-flight request was answered", err)
	default:
	}
	conn.Write(body[half:])
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("in-flight request lost: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("in-flight request = %d; want 200", resp.StatusCode)
	}
	if err := <-closed; err != nil {
		t.Errorf("Close = %v; want nil", err)
	}
	if _, err := client.Get(base + "/healthz"); err == nil {
		t.Error("a new connection was accepted after shutdown")
	}
}

// metricValue scrapes m's metrics listener for the value of series, a sample's name and labels
// as exposed (`webapp_hook_credential_reload_errors_total{file="token"}`); it fails the test if
// there is none.
func metricValue(t *testing.T, m *Main, series string) float64 {
	t.Helper()
	resp, err := oneShot.Get("http://" + m.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	exposition, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(exposition)) {
		if value, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatalf("/metrics: %s: %v", series, err)
			}
			return v
		}
	}
	t.Fatalf("/metrics has no %s:\n%s", series, exposition)
	return 0
}

// waitForMetric polls m's metrics every 5ms until series has a value ok accepts, and returns it;
// it fails the test after 5s.
func waitForMetric(t *testing.T, m *Main, series string, ok func(float64) bool) float64 {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		v := metricValue(t, m, series)
		if ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is still %g after 5s", series, v)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSlowHeaders checks that a client sending its headers slowly is cut off after
// ReadHeaderTimeout, and that the server keeps serving others meanwhile.
func TestSlowHeaders(t *testing.T) {
	m, base := startMain(t)
	conn, err := net.Dial("tcp", m.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprint(conn, "POST /sync HTTP/1.1\r\nHost: hook\r\n") // and nothing more
	if resp, err := http.Get(base + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Errorf("another client during the slow one: %v, %v", resp, err)
	}
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	reply, _ := io.ReadAll(conn) // ends when the server closes the connection
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("connection held %s; want it closed after the 300ms header timeout", elapsed)
	}
	if len(reply) > 0 && !strings.HasPrefix(string(reply), "HTTP/1.1 408") {
		t.Errorf("reply = %q; want nothing or 408", reply)
	}
}

// TestTokenFile starts the real server with --token-file: a hook call needs a listed token; a
// rotated file is picked up without a restart, by its content; a file gone keeps the tokens in
// force and counts in the metrics; a file that lists no token refuses every call, from the start
// too; and a missing file stops the server from starting.
func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte("old-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := NewMain(io.Discard)
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--token-file", path, "--shutdown-delay", "0s"}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	m.Config.ReloadInterval = 20 * time.Millisecond
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	body, err := os.ReadFile("../../examples/create.request.json")
	if err != nil {
		t.Fatal(err)
	}
	call := func(token string) int {
		req, _ := http.NewRequest("POST", "http://"+m.Addr().String()+"/sync", bytes.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := oneShot.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := call(""); got != 401 {
		t.Errorf("no token: %d; want 401", got)
	}
	if got := call("old-token"); got != 200 {
		t.Errorf("listed token: %d; want 200", got)
	}
	// waitFor waits until token gets want, as the reload loop takes up the file.
	waitFor := func(step, token string, want int) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		for call(token) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %q did not get %d within 3s", step, token, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := os.WriteFile(path, []byte("new-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, time.Now().Add(time.Minute), time.Now().Add(time.Minute))
	waitFor("a rotated token", "new-token", 200)
	if got := call("old-token"); got != 401 {
		t.Errorf("rotated-out token: %d; want 401", got)
	}
	info, _ := os.Stat(path)
	if err := os.WriteFile(path, []byte("nex-token\n"), 0o600); err != nil { // as long as new-token
		t.Fatal(err)
	}
	os.Chtimes(path, info.ModTime(), info.ModTime())
	waitFor("a token of the same length, the time restored", "nex-token", 200)
	if got := call("new-token"); got != 401 {
		t.Errorf("the token it replaced: %d; want 401", got)
	}
	reloadErrors := `webapp_hook_credential_reload_errors_total{file="token"}`
	before := metricValue(t, m, reloadErrors)
	os.Remove(path)
	// A few reloads fail, and the metrics count them.
	waitForMetric(t, m, reloadErrors, func(n float64) bool { return n >= before+2 })
	if got := call("nex-token"); got != 200 {
		t.Errorf("with the file gone, the token in force: %d; want 200", got)
	}
	if err := os.WriteFile(path, []byte("# every token revoked\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor("a file of comments only", "nex-token", 401)

	empty := NewMain(io.Discard)
	if err := empty.ParseFlags([]string{"--addr", "127.0.0.1:0", "--metrics-addr", "", "--token-file", path, "--shutdown-delay", "0s"}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	if err := empty.Open(); err != nil {
		t.Fatalf("Open with a token file that lists no token: %v; want it to start, refusing every call", err)
	}
	for _, token := range []string{"", "nex-token", "# every token revoked"} {
		req, _ := http.NewRequest("POST", "http://"+empty.Addr().String()+"/sync", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := oneShot.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("with no token listed, %q got %d; want 401", token, resp.StatusCode)
		}
	}
	empty.Close()
	missing := NewMain(io.Discard)
	missing.ParseFlags([]string{"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--token-file", path + ".missing"}, func(string) string { return "" })
	if err := missing.Open(); err == nil {
		missing.Close()
		t.Error("Open with a missing token file succeeded; want an error, never an open hook")
	}
}

// TestAnalysisFlags starts the real server with a Prometheus and a templates file: the analysis's
// metrics are served with the hook's, and a templates file rewritten is taken up without a
// restart. A templates file that does not parse never stops the hook from starting: it is logged
// by name and counted, every WebApp is synced, and a good file is taken up when it comes.
func TestAnalysisFlags(t *testing.T) {
	dir := t.TempDir()
	templates := filepath.Join(dir, "templates.yaml")
	if err := os.WriteFile(templates, []byte("templates:\n- name: budget\n  query: up\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var mu sync.Mutex
	m := NewMain(writerFunc(func(b []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(b) }))
	args := []string{"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--shutdown-delay", "0s",
		"--prometheus-url", "http://127.0.0.1:1", "--analysis-templates", templates}
	if err := m.ParseFlags(args, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	m.Config.ReloadInterval = 20 * time.Millisecond
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if v := metricValue(t, m, `webapp_hook_analysis_queries_total{outcome="ok"}`); v != 0 {
		t.Errorf("queries ok = %v; want 0", v)
	}
	if err := os.WriteFile(templates, []byte("templates:\n- name: budget\n  query: up\n- name: latency\n  query: up\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		mu.Lock()
		done := strings.Contains(logs.String(), `"templates":["budget","latency"]`)
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the rewritten templates were not taken up within 3s:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	if err := os.WriteFile(templates, []byte("templates: [{name: Bad, query: up}]"), 0o600); err != nil {
		t.Fatal(err)
	}
	var badLogs bytes.Buffer
	var badMu sync.Mutex
	bad := NewMain(writerFunc(func(b []byte) (int, error) { badMu.Lock(); defer badMu.Unlock(); return badLogs.Write(b) }))
	if err := bad.ParseFlags(args, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	bad.Config.ReloadInterval = 20 * time.Millisecond
	if err := bad.Open(); err != nil {
		t.Fatalf("Open with a bad templates file: %v; want the hook to start and serve", err)
	}
	defer bad.Close()
	badMu.Lock()
	if l := badLogs.String(); !strings.Contains(l, `"level":"ERROR"`) || !strings.Contains(l, templates) || !strings.Contains(l, "RFC 1123 label") {
		t.Errorf("the bad templates file is not logged at error, by name and why:\n%s", l)
	}
	badMu.Unlock()
	if v := metricValue(t, bad, "webapp_hook_analysis_reload_errors_total"); v < 1 {
		t.Errorf("reload errors = %v; want the bad file counted", v)
	}
	body, err := os.ReadFile("../../examples/create.request.json")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := oneShot.Post("http://"+bad.Addr().String()+"/sync", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(answer), `"phase":"Pending"`) {
		t.Errorf("sync with a bad templates file: %d %.300s; want the WebApp synced", resp.StatusCode, answer)
	}
	if err := os.WriteFile(templates, []byte("templates:\n- name: budget\n  query: up\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		badMu.Lock()
		done := strings.Contains(badLogs.String(), `"msg":"analysis files reloaded","templates":["budget"]`)
		badMu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mended templates file was not taken up within 3s:\n%s", badLogs.String())
		}
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

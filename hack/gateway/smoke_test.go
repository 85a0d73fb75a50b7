package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// repo is the repository root, from hack/gateway.
var repo, _ = filepath.Abs("../..")

// The smoke's traffic: requests through Traefik, of which the backend fails every fifth.
const (
	requests = 50
	failures = 10
)

// client talks to loopback only, never through a proxy from the environment.
var client = &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 5 * time.Second}

// freePort is a port on 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is a binary of bin/ running for the test, its output in a file of the test's directory.
type proc struct {
	name, log string
	cmd       *exec.Cmd
	done      chan struct{}
	err       error
}

// exited says why p ended, or "" while it runs.
func (p *proc) exited() string {
	select {
	case <-p.done:
		return fmt.Sprintf("%s exited: %v\n%s", p.name, p.err, p.tail())
	default:
		return ""
	}
}

// tail is the end of p's output.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return string(b)
}

// start runs bin/NAME in dir with args, with no Kubernetes, kubeconfig or proxy settings from the
// environment, and stops it at the end of the test: SIGTERM, then SIGKILL after 10 s.
func start(t *testing.T, dir, name string, args ...string) *proc {
	t.Helper()
	bin := filepath.Join(repo, "bin", name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%v: make gateway-binaries builds it", err)
	}
	p := &proc{name: name, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	out, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir, p.cmd.Stdout, p.cmd.Stderr = dir, out, out
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBECONFIG", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY":
			continue
		}
		p.cmd.Env = append(p.cmd.Env, kv)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	t.Logf("started %s (pid %d): %s", name, p.cmd.Process.Pid, strings.Join(args, " "))
	go func() { p.err = p.cmd.Wait(); out.Close(); close(p.done) }()
	t.Cleanup(func() {
		if p.exited() == "" {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(10 * time.Second):
				t.Errorf("%s did not stop within 10 s of SIGTERM; killing it", name)
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}
		if t.Failed() {
			t.Logf("%s's output, its end:\n%s", name, p.tail())
		}
	})
	return p
}

// waitFor calls check every 200 ms until it says done, failing the test at deadline with what it
// last said, or at once when one of procs has exited.
func waitFor(t *testing.T, deadline time.Time, what string, check func() (bool, string), procs ...*proc) {
	t.Helper()
	for {
		ok, last := check()
		if ok {
			return
		}
		for _, p := range procs {
			if why := p.exited(); why != "" {
				t.Fatalf("waiting for %s: %s", what, why)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s by the deadline; last: %s", what, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// get answers the status and body of a GET of u.
func get(u string) (int, string, error) {
	resp, err := client.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// sample is one series of a Prometheus instant vector.
type sample struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

// query runs an instant query against Prometheus's HTTP API.
func query(base, q string) ([]sample, error) {
	code, body, err := get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string   `json:"resultType"`
			Result     []sample `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &r); err != nil || r.Status != "success" {
		return nil, fmt.Errorf("query %s: HTTP %d, %v: %s", q, code, err, body)
	}
	if r.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %s: a %s, not a vector", q, r.Data.ResultType)
	}
	return r.Data.Result, nil
}

// scalar is the value of a query that gives one series, "" when it gives none.
func scalar(base, q string) (string, error) {
	res, err := query(base, q)
	if err != nil || len(res) == 0 {
		return "", err
	}
	if len(res) > 1 {
		return "", fmt.Errorf("query %s: %d series, want one", q, len(res))
	}
	v, _ := res[0].Value[1].(string)
	return v, nil
}

// TestTraefikPrometheus sends requests through bin/traefik to a backend on loopback, a fifth of
// which the backend fails, and reads Traefik's counts of them back from bin/prometheus, which
// scrapes Traefik every second: the canary analysis's path, without Kubernetes.
func TestTraefikPrometheus(t *testing.T) {
	deadline := time.Now().Add(2 * time.Minute)
	dir := t.TempDir()

	var served, failed atomic.Int64
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		if r.URL.Query().Get("fail") != "" {
			failed.Add(1)
			http.Error(w, "failing as asked", http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "ok")
	}))
	defer backend.Close()
	if !strings.HasPrefix(backend.URL, "http://127.0.0.1:") {
		t.Fatalf("backend at %s, not on 127.0.0.1", backend.URL)
	}

	// Traefik: one router for every path to the backend, on the entry point web; its Prometheus
	// metrics on an entry point of their own; no version check, no usage report.
	webPort, metricsPort := freePort(t), freePort(t)
	dynamic := filepath.Join(dir, "dynamic.yaml")
	if err := os.WriteFile(dynamic, fmt.Appendf(nil, `http:
  routers:
    app:
      rule: "PathPrefix(%s)"
      entryPoints: [web]
      service: app
  services:
    app:
      loadBalancer:
        servers:
          - url: %q
`, "`/`", backend.URL), 0o644); err != nil {
		t.Fatal(err)
	}
	traefik := start(t, dir, "traefik",
		"--global.checkNewVersion=false",
		"--global.sendAnonymousUsage=false",
		"--log.level=INFO",
		fmt.Sprintf("--entryPoints.web.address=127.0.0.1:%d", webPort),
		fmt.Sprintf("--entryPoints.metrics.address=127.0.0.1:%d", metricsPort),
		"--metrics.prometheus=true",
		"--metrics.prometheus.entryPoint=metrics",
		"--metrics.prometheus.addServicesLabels=true",
		"--providers.file.filename="+dynamic,
	)

	// Prometheus: Traefik's metrics every second, its data in the test's directory.
	promPort := freePort(t)
	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, fmt.Appendf(nil, `global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: traefik
    scrape_interval: 1s
    scrape_timeout: 1s
    static_configs:
      - targets: ["127.0.0.1:%d"]
`, metricsPort), 0o644); err != nil {
		t.Fatal(err)
	}
	prom := start(t, dir, "prometheus",
		"--config.file="+config,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", promPort),
	)
	promURL := fmt.Sprintf("http://127.0.0.1:%d", promPort)

	waitFor(t, deadline, "Prometheus ready (/-/ready 200)", func() (bool, string) {
		code, body, err := get(promURL + "/-/ready")
		return err == nil && code == http.StatusOK, fmt.Sprint(code, " ", strings.TrimSpace(body), " ", err)
	}, prom, traefik)

	// Until Traefik has loaded the file provider's router, it answers 404 itself: such requests
	// reach no service and no service counts them. The first request is retried until it does.
	web := fmt.Sprintf("http://127.0.0.1:%d/", webPort)
	for i := range requests {
		u, want := web, http.StatusOK
		if i%(requests/failures) == requests/failures-1 {
			u, want = web+"?fail=1", http.StatusInternalServerError
		}
		var (
			code int
			body string
			err  error
		)
		if i == 0 {
			waitFor(t, deadline, "Traefik routing to the backend", func() (bool, string) {
				code, body, err = get(u)
				return err == nil && code != http.StatusNotFound, fmt.Sprint(code, " ", strings.TrimSpace(body), " ", err)
			}, traefik)
		} else {
			code, body, err = get(u)
		}
		if err != nil || code != want {
			t.Fatalf("request %d through Traefik, GET %s: %d %q %v; want %d", i+1, u, code, body, err, want)
		}
	}
	if served.Load() != requests || failed.Load() != failures {
		t.Fatalf("the backend served %d requests, %d of them failed; want %d and %d", served.Load(), failed.Load(), requests, failures)
	}

	var last string
	waitFor(t, deadline, fmt.Sprintf("sum(traefik_service_requests_total) = %d in Prometheus", requests), func() (bool, string) {
		v, err := scalar(promURL, "sum(traefik_service_requests_total)")
		last = v
		return err == nil && v == fmt.Sprint(requests), fmt.Sprintf("%q %v", v, err)
	}, prom, traefik)
	t.Logf("sum(traefik_service_requests_total) = %s", last)

	for _, c := range []struct{ q, want string }{
		{`sum(traefik_service_requests_total{code="500"})`, fmt.Sprint(failures)},
		{`sum(traefik_service_requests_total{code="200"})`, fmt.Sprint(requests - failures)},
		{`sum(traefik_service_requests_total{code=~"5.."}) / sum(traefik_service_requests_total)`, fmt.Sprint(float64(failures) / requests)},
	} {
		q, want := c.q, c.want
		got, err := scalar(promURL, q)
		if err != nil || got != want {
			t.Errorf("%s = %q (%v); want %s", q, got, err, want)
		} else {
			t.Logf("%s = %s", q, got)
		}
	}

	// What the next engineer needs to write the canary's queries: the series and their labels,
	// and every metric name Traefik exported.
	series, err := query(promURL, "traefik_service_requests_total")
	if err != nil {
		t.Fatal(err)
	}
	services := map[string]bool{}
	for _, s := range series {
		t.Logf("series: %s = %v", labels(s.Metric), s.Value[1])
		services[s.Metric["service"]] = true
	}
	if !services["app@file"] || len(services) != 1 {
		t.Errorf("service label values %v; want only app@file, the file provider's service app", services)
	}
	code, body, err := get(promURL + "/api/v1/label/__name__/values?match[]=" + url.QueryEscape(`{job="traefik"}`))
	if err != nil || code != http.StatusOK {
		t.Fatalf("metric names: %d %v %s", code, err, body)
	}
	var names struct {
		Data []string `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &names); err != nil {
		t.Fatal(err)
	}
	var traefikNames []string
	for _, n := range names.Data {
		if strings.HasPrefix(n, "traefik_") {
			traefikNames = append(traefikNames, n)
		}
	}
	t.Logf("Traefik's metric names, as scraped:\n  %s", strings.Join(traefikNames, "\n  "))
	for _, n := range []string{"traefik_service_requests_total", "traefik_service_request_duration_seconds_bucket", "traefik_entrypoint_requests_total"} {
		if !slices.Contains(traefikNames, n) {
			t.Errorf("no metric %s among Traefik's", n)
		}
	}

	// The same counters as Traefik exposes them, for comparison with what Prometheus stored.
	code, body, err = get(fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort))
	if err != nil || code != http.StatusOK {
		t.Fatalf("Traefik's /metrics: %d %v", code, err)
	}
	var lines bytes.Buffer
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "traefik_service_requests_total") {
			lines.WriteString("  " + line)
		}
	}
	t.Logf("Traefik's /metrics, traefik_service_requests_total:\n%s", lines.String())

	// Both shut down cleanly on SIGTERM.
	client.CloseIdleConnections()
	for _, p := range []*proc{traefik, prom} {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.done:
			if p.err != nil {
				t.Errorf("%s on SIGTERM: %v", p.name, p.err)
			}
		case <-time.After(15 * time.Second):
			t.Errorf("%s still running 15 s after SIGTERM", p.name)
		}
	}
}

// labels prints a series' labels in Prometheus's notation, sorted.
func labels(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(m["__name__"] + "{")
	first := true
	for _, k := range keys {
		if k == "__name__" {
			continue
		}
		if !first {
			b.WriteString(", ")
		}
		first = false
		fmt.Fprintf(&b, "%s=%q", k, m[k])
	}
	return b.String() + "}"
}

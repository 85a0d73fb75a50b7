//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// prometheus is a running bin/prometheus (make gateway-binaries) on loopback, scraping the
// targets it was started with every second, for the canary analysis's proofs: the hook queries
// it as a user's Prometheus, and the tests query it to check what the hook read.
type prometheus struct {
	proc    *process
	dir     string   // its config, data and log
	port    string   // of its HTTP API on 127.0.0.1
	targets []string // host:port of each scraped /metrics
}

// startPrometheus runs bin/prometheus on a free loopback port until the test ends, its data in a
// directory of the suite's, with the job "traefik" scraping each of targets (host:port, whose
// /metrics it reads; a traefik's metricsAddr) every second, and waits until it is ready and has
// scraped every target once (up == 1).
func startPrometheus(t *testing.T, targets ...string) *prometheus {
	t.Helper()
	if _, err := os.Stat(filepath.Join(cluster.bin, "prometheus")); err != nil {
		t.Fatalf("bin/prometheus missing: run make gateway-binaries (%v)", err)
	}
	dir, err := os.MkdirTemp(cluster.dir, "prometheus-")
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, len(targets))
	for i, target := range targets {
		quoted[i] = strconv.Quote(target)
	}
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: traefik
    static_configs:
      - targets: [%s]
`, strings.Join(quoted, ", "))
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &prometheus{dir: dir, port: freePort(), targets: targets}
	p.start(t)
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("Prometheus's log (%s), its end:\n%s", filepath.Join(dir, "prometheus.log"), tailFile(filepath.Join(dir, "prometheus.log"), 4000))
		}
	})
	return p
}

// start runs bin/prometheus with p's config, data and port, and waits until it is ready and has
// scraped each target. After stop, it starts it again on the same port with the data kept, as a
// restarted Prometheus would be.
func (p *prometheus) start(t *testing.T) {
	t.Helper()
	proc, err := startProcess(p.dir, cluster.bin, "prometheus", []string{"HOME=" + p.dir},
		"--config.file="+filepath.Join(p.dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(p.dir, "data"),
		"--web.listen-address=127.0.0.1:"+p.port,
		// No remote UI assets in this build (hack/prometheus.sh); the API is what is used.
		"--log.level=info",
	)
	if err != nil {
		t.Fatal(err)
	}
	p.proc = proc
	if err := waitHTTP(context.Background(), p.url()+"/-/ready", nil, 60*time.Second); err != nil {
		t.Fatalf("Prometheus not ready: %v\n%s", err, tailFile(proc.log, 3000))
	}
	if len(p.targets) > 0 {
		waitFor(t, "Prometheus to scrape its targets", 30*time.Second, func() (bool, error) {
			up, err := p.values(`up{job="traefik"}`, "instance")
			if err != nil {
				return false, nil
			}
			for _, target := range p.targets {
				if up[target] != 1 {
					return false, nil
				}
			}
			return true, nil
		})
	}
}

// stop ends Prometheus (SIGTERM, SIGKILL after 10 s); its data stays for start.
func (p *prometheus) stop() {
	if p.proc != nil {
		stopAll([]*process{p.proc}, 10*time.Second)
		p.proc = nil
	}
}

// url is the base URL of its HTTP API, as the hook's --prometheus-url would name it.
func (p *prometheus) url() string { return "http://127.0.0.1:" + p.port }

// promSample is one series of an instant vector: its labels and its value.
type promSample struct {
	Labels map[string]string
	Value  float64
}

// query runs an instant query (GET /api/v1/query) now and returns its vector; a scalar result
// comes back as one sample without labels. NaN and ±Inf values are returned as such.
func (p *prometheus) query(q string) ([]promSample, error) {
	hc := &http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get(p.url() + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status, Error string
		Data          struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		}
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		return nil, fmt.Errorf("query %s: HTTP %d, %v: %.300s", q, resp.StatusCode, err, body)
	}
	parse := func(v [2]any) (float64, error) {
		s, _ := v[1].(string)
		return strconv.ParseFloat(s, 64) // Prometheus writes NaN, +Inf, -Inf as ParseFloat reads them
	}
	switch r.Data.ResultType {
	case "vector":
		var series []struct {
			Metric map[string]string
			Value  [2]any
		}
		if err := json.Unmarshal(r.Data.Result, &series); err != nil {
			return nil, fmt.Errorf("query %s: %v", q, err)
		}
		out := make([]promSample, 0, len(series))
		for _, s := range series {
			v, err := parse(s.Value)
			if err != nil {
				return nil, fmt.Errorf("query %s: value %v: %v", q, s.Value, err)
			}
			out = append(out, promSample{s.Metric, v})
		}
		return out, nil
	case "scalar":
		var s [2]any
		if err := json.Unmarshal(r.Data.Result, &s); err != nil {
			return nil, fmt.Errorf("query %s: %v", q, err)
		}
		v, err := parse(s)
		if err != nil {
			return nil, fmt.Errorf("query %s: value %v: %v", q, s, err)
		}
		return []promSample{{Value: v}}, nil
	}
	return nil, fmt.Errorf("query %s: a %s, not a vector or a scalar", q, r.Data.ResultType)
}

// value runs a query that gives at most one series and returns its value; ok is false when it
// gives none (no data), and an error when it gives more than one.
func (p *prometheus) value(q string) (v float64, ok bool, err error) {
	res, err := p.query(q)
	if err != nil || len(res) == 0 {
		return 0, false, err
	}
	if len(res) > 1 {
		return 0, false, fmt.Errorf("query %s: %d series, want at most one", q, len(res))
	}
	return res[0].Value, true, nil
}

// values runs a query and returns each series' value by the value of its label.
func (p *prometheus) values(q, label string) (map[string]float64, error) {
	res, err := p.query(q)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, len(res))
	for _, s := range res {
		out[s.Labels[label]] = s.Value
	}
	return out, nil
}

// waitValue waits until the query gives one series whose value ok accepts, and returns it.
func (p *prometheus) waitValue(t *testing.T, what, q string, timeout time.Duration, ok func(float64) bool) float64 {
	t.Helper()
	var got float64
	waitFor(t, what+" ("+q+")", timeout, func() (bool, error) {
		v, found, err := p.value(q)
		got = v
		return err == nil && found && ok(v), nil
	})
	return got
}

// traefikServiceSelector is a PromQL label matcher of Traefik's service label for the backend
// Service svc of the HTTPRoute route, both in ns: Traefik names an HTTPRoute's backend
// httproute-<route ns>-<route>-gw-<gateway ns>-<gateway>-ep-<entry point>-<rule>-<hash>-svc-<ns>-<service>-<index>@kubernetesgateway,
// where the hash depends on the route's rule (docs/development.md).
func traefikServiceSelector(ns, route, svc string) string {
	return fmt.Sprintf(`service=~"httproute-%s-%s-gw-.*-svc-%s-%s-[0-9]+@kubernetesgateway"`, ns, route, ns, svc)
}

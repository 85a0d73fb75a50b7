//go:build e2e

package e2e

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"
)

// scaleMode is one CompositeController the scale benchmark measures.
type scaleMode struct {
	name string
	// dir is the kustomize directory that renders it.
	dir string
	// noCustomize drops the customize hook from what dir renders.
	noCustomize bool
	// config gives each WebApp a ConfigMap and a Secret of its own, in envFrom, so that the
	// customize answer relates them.
	config bool
	// route gives each WebApp a route to one Gateway of the namespace, so that each has an
	// HTTPRoute and the customize answer relates that Gateway; dir must add the gateway-api
	// component.
	route bool
	// gatewayElsewhere puts that Gateway in a namespace of its own, as platform teams do, which
	// the customize answer relates by namespace and name.
	gatewayElsewhere bool
	// canary gives each WebApp a canary of three steps in its spec (rollout.canary), which runs
	// none as long as the pod template does not change: the cost of turning it on.
	canary bool
	// midCanary gives each WebApp a canary of two steps (10 % held 60 s, then 50 % until it is
	// promoted) and, once all are Ready, a new image, so that each starts a canary; with no
	// Gateway controller the route is never accepted, and each canary waits for it at its first
	// step. The idle window is then measured with every WebApp mid-canary. Needs route.
	midCanary bool
	// analysis adds rollout.canary.analysis to midCanary's canary: the two built-in metrics,
	// checked every scaleAnalysisInterval, and the hook asks a real Prometheus
	// (--prometheus-url), which scrapes nothing: every query finds no data and every check is
	// inconclusive, as for a canary without traffic. That is the cost of the queries themselves.
	analysis bool
	// blueGreen, with midCanary, gives each WebApp a blue-green release (rollout.blueGreen,
	// previewed by a header) instead of the canary: each new image runs at full size at its
	// preview, which waits for the route as the canary's first step does (compareBlueGreen).
	blueGreen bool
	// promDelay, with analysis, puts a proxy of the test's (promProxy) between the hook and
	// Prometheus that forwards each query only after promDelay: a slow Prometheus.
	promDelay time.Duration
	// notifier runs the notifier (cmd/webapp-notifier, scaleNotifier) from before the WebApps
	// are created to after they are deleted, with every WebApp subscribed to every trigger of a
	// webhook service whose receiver is the test's; the idle window starts once it has told
	// every canary's start. Its cost is compared with the mid-canary mode without it
	// (compareNotifier).
	notifier bool
	// subscriptions annotates every WebApp as notifier does, with no notifier running: what the
	// annotations alone cost Metacontroller (each WebApp about 1 KB larger to decode, cache and
	// send), so that compareNotifier can tell it from the notifier's own cost. notifier implies it.
	subscriptions bool
}

// scaleAnalysisInterval is the analysis's intervalSeconds in the mode with analysis: the default.
const scaleAnalysisInterval = 30

// scaleModes are the CompositeControllers make scale compares, by the names SCALE_MODES takes.
var scaleModes = []scaleMode{
	{name: "as shipped", dir: "metacontroller"},
	{name: "without customize", dir: "metacontroller", noCustomize: true},
	{name: "with pod diagnosis", dir: "e2e/testdata/pod-diagnosis"},
	{name: "as shipped, each with a ConfigMap and a Secret", dir: "metacontroller", config: true},
	{name: "with routes (gateway-api component)", dir: "e2e/testdata/gateway-api", route: true},
	{name: "with routes to a Gateway in another namespace", dir: "e2e/testdata/gateway-api", route: true, gatewayElsewhere: true},
	{name: "with routes and a canary in the spec", dir: "e2e/testdata/gateway-api", route: true, canary: true},
	{name: "with routes and a canary mid-way", dir: "e2e/testdata/gateway-api", route: true, midCanary: true},
	{name: "with routes and a canary mid-way with analysis", dir: "e2e/testdata/gateway-api", route: true, midCanary: true, analysis: true},
	{name: "with routes and a canary mid-way with analysis and Prometheus answering in 2 s", dir: "e2e/testdata/gateway-api", route: true, midCanary: true, analysis: true, promDelay: 2 * time.Second},
	{name: "with routes and a canary mid-way with subscriptions and no notifier", dir: "e2e/testdata/gateway-api", route: true, midCanary: true, subscriptions: true},
	{name: "with routes and a canary mid-way with the notifier", dir: "e2e/testdata/gateway-api", route: true, midCanary: true, notifier: true, subscriptions: true},
	{name: "with routes and blue-green at its preview", dir: "e2e/testdata/gateway-api", route: true, midCanary: true, blueGreen: true},
}

// scaleResult is one row of the benchmark's table.
type scaleResult struct {
	mode                     string
	n                        int
	background               bool
	ready                    time.Duration
	callsPerApp              float64
	cpuConverge, cpuWhole    float64
	peakRSS                  int64
	idleRewrites, idleWrites int
	deleted                  time.Duration
	hookCPU                  float64
	hookPeakRSS              int64
	// For a route mode, one change of the Gateway every route attaches to: the sync calls it
	// brought (beyond the idle rate), the time until the last, and Metacontroller's CPU.
	gatewaySyncs  float64
	gatewaySpread time.Duration
	gatewayCPU    float64
	converged     bool
	failure       string
	// For a mid-canary mode: the time from the new images until every WebApp's canary waited at
	// its first step, and what the idle window that followed cost.
	midCanary, analysis bool
	// blueGreen: the WebApps were released blue-green, each at its preview.
	blueGreen bool
	// subscriptions: every WebApp carried the notifier's subscription annotations.
	subscriptions bool
	toMidCanary   time.Duration
	// cpuToMidCanary is Metacontroller's CPU seconds over toMidCanary and the quiet that ends it.
	cpuToMidCanary float64
	window         scaleWindow
	// promUnasked is Prometheus's CPU seconds a second over 30 s before the hook started,
	// scraping nothing and asked nothing.
	promUnasked float64
	promDelay   time.Duration
	// plainN WebApps without a canary, created once the idle window is over (every other WebApp
	// still mid-canary), were all Ready plainReady after.
	plainN     int
	plainReady time.Duration
	// notifier is what the notifier cost, in a mode with it; nil without.
	notifier *notifierCost
}

// scaleWindow is what an idle window cost, from snapshots at its start and end.
type scaleWindow struct {
	length time.Duration
	// Metacontroller's, the hook's and Prometheus's CPU seconds over the window.
	mcCPU, hookCPU, promCPU float64
	// calls are the hook calls (webapp_hook_requests_total, every hook), syncs those of the
	// sync hook, writes Metacontroller's writes to the apiserver.
	calls, syncs, writes float64
	// queries are the analysis's queries to Prometheus by outcome
	// (webapp_hook_analysis_queries_total), lookups its measurements by how they were got
	// (webapp_hook_analysis_measurements_total).
	queries, lookups map[string]float64
	// syncLatency is the hook's sync calls by duration (its webapp_hook_request_duration_seconds).
	syncLatency latencies
}

// scaleSnapshot is what scaleWindow subtracts: counters at one time.
type scaleSnapshot struct {
	at                      time.Time
	mcCPU, hookCPU, promCPU float64
	calls, syncs, writes    float64
	queries, lookups        map[string]float64
	syncLatency             latencies
}

func takeSnapshot(mc *metacontroller, hook *hookProcess, prom *prometheus) scaleSnapshot {
	s := scaleSnapshot{at: time.Now(), mcCPU: mc.cpuSeconds(), hookCPU: hook.cpuSeconds(), writes: mc.writes()}
	if prom != nil && prom.proc != nil {
		s.promCPU = procCPUSeconds(prom.proc.cmd.Process.Pid)
	}
	for h, c := range hook.calls() {
		s.calls += c
		if h == "sync" {
			s.syncs += c
		}
	}
	metrics := "http://" + hook.metricsAddr + "/metrics"
	s.queries = scrape(metrics, "webapp_hook_analysis_queries_total", "outcome")
	s.lookups = scrape(metrics, "webapp_hook_analysis_measurements_total", "result")
	s.syncLatency = hook.syncLatencies()
	return s
}

// since is the window from s to now.
func (s scaleSnapshot) since(mc *metacontroller, hook *hookProcess, prom *prometheus) scaleWindow {
	e := takeSnapshot(mc, hook, prom)
	w := scaleWindow{length: e.at.Sub(s.at), mcCPU: e.mcCPU - s.mcCPU, hookCPU: e.hookCPU - s.hookCPU, promCPU: e.promCPU - s.promCPU,
		calls: e.calls - s.calls, syncs: e.syncs - s.syncs, writes: e.writes - s.writes,
		queries: map[string]float64{}, lookups: map[string]float64{}, syncLatency: e.syncLatency.minus(s.syncLatency)}
	for k, v := range e.queries {
		w.queries[k] = v - s.queries[k]
	}
	for k, v := range e.lookups {
		w.lookups[k] = v - s.lookups[k]
	}
	return w
}

// total sums a map of counts.
func total(m map[string]float64) float64 {
	t := 0.0
	for _, v := range m {
		t += v
	}
	return t
}

// nonZero writes the non-zero counts of m as "k v, k v", sorted by key; "none" when all are 0.
func nonZero(m map[string]float64) string {
	var parts []string
	for k, v := range m {
		if v != 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", k, v))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// TestScale is the scale benchmark (make scale): N WebApps (1 to 3 replicas, env only) are
// created at once under the real Metacontroller, converge, idle for SCALE_IDLE (40 s), then are
// deleted, once per CompositeController of SCALE_MODES. It prints Metacontroller's CPU and peak
// memory (from /proc), the hook calls per WebApp (from the hook's metrics), the children rewritten
// while idle and the time the delete took. SCALE_BACKGROUND=1 first adds what a real cluster has
// in other namespaces: 2,000 unrelated pods and 200 Secrets of 100 KB.
func TestScale(t *testing.T) {
	nText := os.Getenv("E2E_SCALE_N")
	if nText == "" {
		t.Skip("the scale benchmark runs only when asked: make scale N=1000 (E2E_SCALE_N)")
	}
	requireCluster(t)
	requireMetacontroller(t)
	n, err := strconv.Atoi(nText)
	if err != nil || n < 1 {
		t.Fatalf("E2E_SCALE_N=%q; want a count of WebApps", nText)
	}
	idle := 40 * time.Second
	if s := os.Getenv("SCALE_IDLE"); s != "" {
		if idle, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	workers := 5
	if s := os.Getenv("SCALE_WORKERS"); s != "" {
		workers, _ = strconv.Atoi(s)
	}
	modes := scaleModes
	if s := os.Getenv("SCALE_MODES"); s != "" {
		modes = nil
		for _, name := range strings.Split(s, ",") {
			found := false
			for _, m := range scaleModes {
				if m.name == strings.TrimSpace(name) {
					modes, found = append(modes, m), true
				}
			}
			if !found {
				t.Fatalf("SCALE_MODES names %q; want some of %v", name, scaleModeNames())
			}
		}
	}
	background := os.Getenv("SCALE_BACKGROUND") != ""
	if background {
		start := time.Now()
		addBackground(t, 2000, 200, 100<<10)
		t.Logf("background of 2,000 pods and 200 Secrets of 100 KB ready in %s", time.Since(start).Round(time.Second))
	}
	var results []scaleResult
	for i, m := range modes {
		r := runScale(t, m, n, fmt.Sprintf("scale-%d", i), idle, workers)
		r.background = background
		results = append(results, r)
		t.Log(scaleTable(results))
		if r.midCanary {
			t.Log(midCanaryTable(results))
		}
		if r.notifier != nil {
			t.Log(notifierTable(results))
		}
	}
	fmt.Println(scaleTable(results))
	if s := midCanaryTable(results); s != "" {
		fmt.Println(s)
	}
	if s := notifierTable(results); s != "" {
		fmt.Println(s)
	}
	compareAnalysis(t, results)
	compareNotifier(t, results)
	compareBlueGreen(results)
	var base *scaleResult
	for i := range results {
		if results[i].mode == "without customize" && results[i].cpuConverge > 0 && results[i].peakRSS > 0 {
			base = &results[i]
		}
	}
	for _, r := range results {
		if base == nil || r.mode == base.mode {
			continue
		}
		cpu, rss := r.cpuConverge/base.cpuConverge, float64(r.peakRSS)/float64(base.peakRSS)
		fmt.Printf("%s against %s: Metacontroller CPU to converge %.2f× (target ≤ 2×: %s), peak RSS %.2f× (target ≤ 1.5×: %s)\n",
			r.mode, base.mode, cpu, metOrNot(cpu <= 2), rss, metOrNot(rss <= 1.5))
	}
	for _, r := range results {
		if r.failure != "" {
			t.Errorf("%s: %s", r.mode, r.failure)
		}
	}
}

func scaleModeNames() []string {
	var names []string
	for _, m := range scaleModes {
		names = append(names, m.name)
	}
	return names
}

func metOrNot(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// midCanaryTable formats the idle windows of the mid-canary modes of results as the Markdown
// table of docs/performance.md; "" when there are none.
func midCanaryTable(results []scaleResult) string {
	var b strings.Builder
	for _, r := range results {
		if !r.midCanary {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n| N | CompositeController | all at the canary's first step | idle window | Metacontroller CPU over it | Metacontroller writes | hook calls (sync) | hook sync p99 over it | hook CPU over it | hook CPU, whole run | hook peak RSS | queries to Prometheus: per s (at most N/interval), outcomes | measurements asked for | Prometheus CPU over it (over as long unasked) | WebApps without a canary created after it: all Ready |\n")
			b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |\n")
		}
		w := r.window
		queries, lookups, prom := "–", "–", "–"
		if r.analysis {
			queries = fmt.Sprintf("%.2f (%.2f): %s", total(w.queries)/w.length.Seconds(), float64(r.n)/scaleAnalysisInterval, nonZero(w.queries))
			lookups = nonZero(w.lookups)
			prom = fmt.Sprintf("%.2f s (%.2f s unasked)", w.promCPU, r.promUnasked*w.length.Seconds())
		}
		fmt.Fprintf(&b, "| %d | %s | %.1f s | %.0f s | %.2f s | %.0f | %.0f (%.0f) | %s | %.2f s | %.1f s | %d MiB | %s | %s | %s | %d in %.1f s |\n",
			r.n, r.mode, r.toMidCanary.Seconds(), w.length.Seconds(), w.mcCPU, w.writes, w.calls, w.syncs, p99String(w.syncLatency), w.hookCPU, r.hookCPU, r.hookPeakRSS>>20, queries, lookups, prom, r.plainN, r.plainReady.Seconds())
	}
	return b.String()
}

// compareAnalysis prints, for a run of the mid-canary modes, Metacontroller's CPU over the idle
// window with analysis against without (the target: at most 1.1×), with the sync calls and the
// CPU per call that explain it; for each mode with a slow Prometheus, the same against the mode
// with analysis and a healthy one (the target: at most 1.1×), with the hook's sync latency (its
// p99 under 50 ms) and the time WebApps without a canary took to be Ready (as fast); and checks
// that the hook sent at most one query per WebApp per interval.
func compareAnalysis(t *testing.T, results []scaleResult) {
	var without, healthy *scaleResult
	var slow []*scaleResult
	for i := range results {
		switch r := &results[i]; {
		case r.midCanary && r.analysis && r.promDelay > 0:
			slow = append(slow, r)
		case r.midCanary && r.analysis:
			healthy = r
		case r.midCanary && !r.subscriptions && !r.blueGreen:
			without = r
		}
	}
	for _, with := range append([]*scaleResult{healthy}, slow...) {
		if with == nil {
			continue
		}
		w := with.window
		rate, limit := total(w.queries)/w.length.Seconds(), float64(with.n)/scaleAnalysisInterval
		fmt.Printf("%s: %.0f queries in %.0f s, %.2f a second, against at most N/interval = %.2f: %s\n",
			with.mode, total(w.queries), w.length.Seconds(), rate, limit, metOrNot(rate <= limit*1.01))
		if rate > limit*1.01 {
			t.Errorf("%s: %.2f queries a second, more than one per WebApp per interval (%.2f)", with.mode, rate, limit)
		}
	}
	perMin := func(w scaleWindow, n int) float64 { return w.syncs / float64(n) / w.length.Minutes() }
	if healthy != nil && without != nil && without.window.mcCPU > 0 && without.window.syncs > 0 && healthy.window.syncs > 0 {
		a, b := healthy.window, without.window
		cpu := a.mcCPU / b.mcCPU
		fmt.Printf("%s against %s, over the idle window: Metacontroller CPU %.2f× (target ≤ 1.1×: %s); sync calls %.2f× (%.2f against %.2f per WebApp a minute); Metacontroller CPU per sync call %.2f ms against %.2f ms; writes %.0f against %.0f\n",
			healthy.mode, without.mode, cpu, metOrNot(cpu <= 1.1), a.syncs/b.syncs, perMin(a, healthy.n), perMin(b, without.n),
			1000*a.mcCPU/a.syncs, 1000*b.mcCPU/b.syncs, a.writes, b.writes)
	}
	for _, r := range slow {
		a := r.window
		p99 := a.syncLatency.quantile(0.99)
		line := fmt.Sprintf("%s: the hook's sync p99 over the idle window %s (target < 50 ms: %s)", r.mode, p99String(a.syncLatency), metOrNot(p99 < 0.05))
		if healthy != nil && healthy.window.mcCPU > 0 && healthy.window.syncs > 0 && a.syncs > 0 {
			b := healthy.window
			cpu := a.mcCPU / b.mcCPU
			// As fast: within a tenth, or within 2 s (a resync tick, and the poll).
			fast := r.plainReady <= healthy.plainReady*11/10 || r.plainReady <= healthy.plainReady+2*time.Second
			line += fmt.Sprintf("; against %s: Metacontroller CPU %.2f× (target ≤ 1.1×: %s); sync calls %.2f× (%.2f against %.2f per WebApp a minute); Metacontroller CPU per sync call %.2f ms against %.2f ms; writes %.0f against %.0f; hook sync p99 %s; %d WebApps without a canary, created mid-canary, all Ready in %.1f s against %.1f s (target: as fast, within 1.1× or 2 s: %s); all %d Ready at the start in %.1f s against %.1f s",
				healthy.mode, cpu, metOrNot(cpu <= 1.1), a.syncs/b.syncs, perMin(a, r.n), perMin(b, healthy.n),
				1000*a.mcCPU/a.syncs, 1000*b.mcCPU/b.syncs, a.writes, b.writes, p99String(b.syncLatency),
				r.plainN, r.plainReady.Seconds(), healthy.plainReady.Seconds(), metOrNot(fast), r.n, r.ready.Seconds(), healthy.ready.Seconds())
		}
		fmt.Println(line)
	}
}

// p99String is the 99th percentile of l in milliseconds, or what stands for it.
func p99String(l latencies) string {
	switch q := l.quantile(0.99); {
	case math.IsNaN(q):
		return "no call"
	case math.IsInf(q, 1):
		return "over 1 s"
	default:
		return fmt.Sprintf("%.1f ms", 1000*q)
	}
}

// scaleTable formats results as the Markdown table of docs/performance.md.
func scaleTable(results []scaleResult) string {
	var b strings.Builder
	b.WriteString("\n| N | CompositeController | background | all Ready | hook calls per app | Metacontroller CPU to converge | Metacontroller CPU, whole run | Metacontroller peak RSS | children rewritten while idle | Metacontroller writes while idle | delete | hook CPU | hook peak RSS | one change of the Gateway: syncs, over, Metacontroller CPU |\n")
	b.WriteString("| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range results {
		bg := "none"
		if r.background {
			bg = "2,000 pods, 200 Secrets"
		}
		ready := fmt.Sprintf("%.1f s", r.ready.Seconds())
		if !r.converged {
			ready = "not converged"
		}
		gateway := "–"
		if r.gatewaySpread > 0 {
			gateway = fmt.Sprintf("%.0f, %.1f s, %.1f s", r.gatewaySyncs, r.gatewaySpread.Seconds(), r.gatewayCPU)
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %.2f | %.1f s | %.1f s | %d MiB | %d | %d | %.1f s | %.1f s | %d MiB | %s |\n",
			r.n, r.mode, bg, ready, r.callsPerApp, r.cpuConverge, r.cpuWhole, r.peakRSS>>20, r.idleRewrites, r.idleWrites, r.deleted.Seconds(), r.hookCPU, r.hookPeakRSS>>20, gateway)
	}
	return b.String()
}

// runScale measures one mode with a Metacontroller and a hook of its own, in namespace ns.
func runScale(t *testing.T, m scaleMode, n int, ns string, idle time.Duration, workers int) scaleResult {
	r := scaleResult{mode: m.name, n: n, subscriptions: m.subscriptions}
	if _, err := client.create(obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": ns}}); err != nil {
		t.Fatal(err)
	}
	in := renderInstall(t, m.dir)
	var prom *prometheus
	if m.analysis {
		// A real Prometheus that scrapes nothing: each query is answered, with no data.
		prom = startPrometheus(t)
		defer prom.stop()
		promURL := prom.url()
		if m.promDelay > 0 { // a slow one: each query forwarded only after the delay
			proxy := startPromProxy(t, promURL)
			defer proxy.stop()
			proxy.slow("", m.promDelay)
			promURL = proxy.url()
			r.promDelay = m.promDelay
		}
		// The entry point of the Gateway's listener port, 80, so that each check is queried
		// (without it, none would be: its series could not be told from others').
		in.hookArgs = append(in.hookArgs, "--prometheus-url="+promURL, "--analysis-entrypoints=web=80")
		// What it costs unasked, to tell the queries' cost from its own.
		time.Sleep(5 * time.Second)
		pid := prom.proc.cmd.Process.Pid
		cpu, from := procCPUSeconds(pid), time.Now()
		time.Sleep(30 * time.Second)
		r.promUnasked = (procCPUSeconds(pid) - cpu) / time.Since(from).Seconds()
	}
	var notifier *scaleNotifier
	if m.notifier {
		// Built and leading before the hook and Metacontroller start, so that its build costs
		// them nothing, and before any WebApp exists, so that it sees each one's whole life.
		notifier = startScaleNotifier(t, ns)
		r.notifier = &notifierCost{}
	}
	hook := startHook(t, in)
	cc := in.compositeController(t, hook.url())
	if m.noCustomize {
		delete(cc["spec"].(map[string]any)["hooks"].(map[string]any), "customize")
	}
	// A Metacontroller of its own, so that its CPU and memory are this mode's alone.
	// SCALE_PROFILE=dir writes a CPU profile of it over the idle window to dir.
	profileDir, pprofAddr := os.Getenv("SCALE_PROFILE"), "127.0.0.1:"+freePort()
	var mcFlags []string
	if profileDir != "" {
		mcFlags = []string{"--pprof-address", pprofAddr}
	}
	mc := startMetacontroller(t, cc, workers, mcFlags...)

	if m.config {
		if err := parallel(n, 8, func(i int) error {
			meta := obj{"name": fmt.Sprintf("app-%04d", i), "namespace": ns}
			if _, err := client.create(obj{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": obj{"LEVEL": "info"}}); err != nil {
				return err
			}
			_, err := client.create(obj{"apiVersion": "v1", "kind": "Secret", "metadata": meta, "data": obj{"TOKEN": "bm90LWEtc2VjcmV0"}})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	gatewayNS := ns
	if m.gatewayElsewhere {
		gatewayNS = ns + "-infra"
		if _, err := client.create(obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": gatewayNS}}); err != nil {
			t.Fatal(err)
		}
		defer client.do("DELETE", "/api/v1/namespaces/"+gatewayNS, "", nil)
	}
	if m.route { // the one Gateway every route attaches to; no controller answers for it
		gw := obj{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": obj{"name": "web", "namespace": gatewayNS},
			"spec": obj{"gatewayClassName": "scale", "listeners": []any{obj{"name": "http", "protocol": "HTTP", "port": 80,
				"allowedRoutes": obj{"namespaces": obj{"from": "All"}}}}}}
		if _, err := client.create(gw); err != nil {
			t.Fatal(err)
		}
	}
	// spec is the spec of WebApp i, named name: withRollout false leaves out its canary.
	spec := func(i int, name string, withRollout bool) obj {
		spec := obj{
			"image": "nginx:1.27", "replicas": 1 + i%3, "port": 8080,
			"env": []any{obj{"name": "INDEX", "value": strconv.Itoa(i)}},
		}
		if m.route {
			ref := obj{"name": "web"}
			if m.gatewayElsewhere {
				ref["namespace"] = gatewayNS
			}
			spec["route"] = obj{"hostnames": []any{name + ".example.com"}, "parentRefs": []any{ref}}
		}
		if m.config {
			spec["envFrom"] = []any{obj{"configMapRef": obj{"name": name}}, obj{"secretRef": obj{"name": name}}}
		}
		if !withRollout {
			return spec
		}
		if m.canary {
			spec["rollout"] = obj{"canary": obj{"steps": []any{obj{"weight": 10, "pauseSeconds": 60}, obj{"weight": 50, "pauseSeconds": 60}, obj{"weight": 80}}}}
		}
		if m.midCanary && m.blueGreen {
			spec["rollout"] = obj{"blueGreen": obj{"preview": obj{"matches": []any{obj{"headers": []any{obj{"name": "X-Preview", "value": "1"}}}}}}}
		} else if m.midCanary {
			c := obj{"steps": []any{obj{"weight": 10, "pauseSeconds": 60}, obj{"weight": 50}}}
			if m.analysis {
				c["analysis"] = obj{"intervalSeconds": scaleAnalysisInterval, "metrics": []any{
					obj{"name": "request-success-rate", "thresholdRange": obj{"min": 99}},
					obj{"name": "request-duration", "thresholdRange": obj{"max": 500}},
				}}
			}
			spec["rollout"] = obj{"canary": c}
		}
		return spec
	}
	start := time.Now()
	if err := parallel(n, 8, func(i int) error {
		name := fmt.Sprintf("app-%04d", i)
		w := webApp(ns, name, spec(i, name, true))
		if m.subscriptions {
			w = subscribed(w)
		}
		_, err := client.create(w)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	deadline := start.Add(time.Duration(n)*300*time.Millisecond + 2*time.Minute)
	for {
		ready, total := countReady(t, ns)
		if ready == n && total == n {
			r.converged = true
			break
		}
		if time.Now().After(deadline) {
			r.failure = fmt.Sprintf("%d of %d WebApps Ready after %s", ready, n, time.Since(start).Round(time.Second))
			break
		}
		if err := mc.exited(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	r.ready = time.Since(start)
	r.cpuConverge = mc.cpuSeconds()

	if m.midCanary {
		r.midCanary, r.analysis, r.blueGreen = true, m.analysis, m.blueGreen
		from, cpu := time.Now(), mc.cpuSeconds()
		r.toMidCanary = startCanaries(t, &r, mc, ns, n, m.analysis)
		r.cpuToMidCanary = mc.cpuSeconds() - cpu
		if notifier != nil {
			notifier.waitTold(t, &r, r.notifier, ns, n, from)
		}
	}
	before := childVersions(t, ns)
	writesBefore := mc.writes()
	var notifierWin *notifierWindow
	if notifier != nil {
		notifierWin = notifier.open(t)
	}
	snap := takeSnapshot(mc, hook, prom)
	if profileDir != "" {
		profileCPU(t, pprofAddr, filepath.Join(profileDir, strings.NewReplacer(" ", "-", ",", "", "(", "", ")", "").Replace(m.name)+".pprof"), idle)
	} else {
		time.Sleep(idle)
	}
	r.window = snap.since(mc, hook, prom)
	if notifier != nil {
		notifier.close(t, notifierWin, r.notifier)
	}
	after := childVersions(t, ns)
	r.idleWrites = int(mc.writes() - writesBefore)
	for k, v := range after {
		if before[k] != v {
			r.idleRewrites++
		}
	}
	if m.midCanary {
		// WebApps without a canary, created with every other WebApp mid-canary (and, with
		// analysis, its checks asking Prometheus): how soon are they all Ready?
		r.plainN = max(10, n/10)
		from := time.Now()
		if err := parallel(r.plainN, 8, func(i int) error {
			name := fmt.Sprintf("plain-%04d", i)
			wa := webApp(ns, name, spec(i, name, false))
			if m.subscriptions {
				wa = subscribed(wa)
			}
			wa["metadata"].(obj)["labels"] = obj{scalePlainLabel: "true"}
			_, err := client.create(wa)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the WebApps without a canary Ready", 5*time.Minute, func() (bool, error) {
			return countReadyLabelled(t, ns, scalePlainLabel) == r.plainN, nil
		})
		r.plainReady = time.Since(from)
	}
	if m.route && !m.midCanary {
		// One change of the shared Gateway, as a Gateway controller makes when it updates its
		// status, or the platform team a listener: Metacontroller syncs every WebApp relating it.
		// The resync period syncs every WebApp at once too, so the change is made just after
		// such a burst has ended, a resync period before the next.
		quiet := func(d time.Duration) (float64, time.Time) { // the count once it held still for d
			c, at := hook.calls()["sync"], time.Now()
			for time.Since(at) < d {
				time.Sleep(100 * time.Millisecond)
				if n := hook.calls()["sync"]; n != c {
					c, at = n, time.Now()
				}
			}
			return c, at
		}
		from := hook.calls()["sync"]
		waitFor(t, "a resync of every WebApp", 90*time.Second, func() (bool, error) { return hook.calls()["sync"]-from >= float64(n)/2, nil })
		syncs, _ := quiet(3 * time.Second)
		cpu, start := mc.cpuSeconds(), time.Now()
		gp, _ := client.path("gateway.networking.k8s.io/v1", "Gateway", gatewayNS, "web")
		if _, err := client.do("PATCH", gp, "application/merge-patch+json", obj{"metadata": obj{"labels": obj{"changed": "once"}}}); err != nil {
			t.Fatal(err)
		}
		last, lastAt := quiet(5 * time.Second)
		r.gatewaySyncs, r.gatewaySpread, r.gatewayCPU = last-syncs, lastAt.Sub(start), mc.cpuSeconds()-cpu
	}
	start = time.Now()
	p, _ := client.path("example.com/v1", "WebApp", ns, "")
	// A delete of the whole collection can outlast the client's timeout on a loaded machine (the
	// apiserver deletes one WebApp at a time, and keeps what it deleted when the client gives up);
	// the same delete again is harmless and goes on with what is left, so try until a deadline as
	// long as the wait below, rather than a number of times.
	deleteBy := time.Now().Add(time.Duration(n)*200*time.Millisecond + 2*time.Minute)
	for try := 1; ; try++ {
		_, err := client.do("DELETE", p, "", nil)
		if err == nil {
			break
		}
		if time.Now().After(deleteBy) {
			t.Fatal(err)
		}
		_, left := countReady(t, ns)
		t.Logf("delete of every WebApp, try %d: %v (%d WebApps left)", try, err, left)
	}
	waitFor(t, "every WebApp and its children gone", time.Duration(n)*200*time.Millisecond+2*time.Minute, func() (bool, error) {
		_, total := countReady(t, ns)
		return total == 0 && len(childVersions(t, ns)) == 0, nil
	})
	r.deleted = time.Since(start)
	r.cpuWhole = mc.cpuSeconds()
	r.peakRSS = mc.peakRSS()
	r.hookCPU = hook.cpuSeconds()
	r.hookPeakRSS = hook.peakRSS()
	calls := 0.0
	for _, c := range hook.calls() {
		calls += c
	}
	r.callsPerApp = calls / float64(n)
	if notifier != nil {
		notifier.stop(r.notifier, ns)
	}
	mc.finish()
	hook.stop(syscall.SIGTERM)
	// Wait for the pods to go too, so that the next mode does not pay for their deletion.
	waitFor(t, "the pods gone", 5*time.Minute, func() (bool, error) {
		b, err := client.do("GET", "/api/v1/namespaces/"+ns+"/pods?limit=1", "", nil)
		if err != nil {
			return false, err
		}
		list, _ := decode(b)
		items, _ := list["items"].([]any)
		return len(items) == 0, nil
	})
	return r
}

// startCanaries gives each of the n WebApps of ns a new image, so that each starts its canary,
// waits until every canary waits at its first step for the route (and, with analysis, has
// recorded a check), then until Metacontroller has written nothing for 6 s, and returns the time
// until every canary was at its step. With analysis it then waits until a quarter of an interval
// after a check time, so that an idle window of whole intervals holds the same number of checks
// however it falls. A failure to get there is recorded in r.
func startCanaries(t *testing.T, r *scaleResult, mc *metacontroller, ns string, n int, analysis bool) time.Duration {
	t.Helper()
	start := time.Now()
	if err := parallel(n, 8, func(i int) error {
		p, _ := client.path("example.com/v1", "WebApp", ns, fmt.Sprintf("app-%04d", i))
		_, err := client.do("PATCH", p, "application/merge-patch+json", obj{"spec": obj{"image": "nginx:1.28"}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	deadline := start.Add(time.Duration(n)*300*time.Millisecond + 3*time.Minute)
	var took time.Duration
	for {
		mid, total, example := countMidCanary(t, ns, analysis)
		if mid == n && total == n {
			took = time.Since(start)
			break
		}
		if time.Now().After(deadline) {
			took = time.Since(start)
			r.failure = fmt.Sprintf("%d of %d WebApps mid-canary after %s; one that is not: %s", mid, n, took.Round(time.Second), example)
			break
		}
		if err := mc.exited(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
	}
	// The canaries' last status writes settle before the window opens.
	for quiet := time.Now().Add(2 * time.Minute); time.Now().Before(quiet); {
		w := mc.writes()
		time.Sleep(6 * time.Second)
		if mc.writes() == w {
			break
		}
	}
	if analysis {
		const interval = scaleAnalysisInterval * time.Second
		now := time.Now()
		next := now.Truncate(interval).Add(interval / 4)
		if next.Before(now) {
			next = next.Add(interval)
		}
		time.Sleep(next.Sub(now))
	}
	return took
}

// countMidCanary counts the WebApps of ns, and those whose canary waits at its first step for its
// route (with analysis, having recorded a check), for their current generation; example says
// where one that does not stands.
func countMidCanary(t *testing.T, ns string, analysis bool) (mid, total int, example string) {
	t.Helper()
	p, _ := client.path("example.com/v1", "WebApp", ns, "")
	b, err := client.do("GET", p, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := decode(b)
	items, _ := list["items"].([]any)
	for _, it := range items {
		msg, _ := field(it, "status", "canary", "message").(string)
		ok := field(it, "status", "observedGeneration") == field(it, "metadata", "generation") &&
			field(it, "status", "canary", "phase") == "Progressing" && fmt.Sprint(field(it, "status", "canary", "step")) == "0" &&
			strings.Contains(msg, "waiting for the HTTPRoute") && (!analysis || field(it, "status", "canary", "analysis") != nil)
		if ok {
			mid++
		} else if example == "" {
			example = fmt.Sprintf("%v: %v", field(it, "metadata", "name"), field(it, "status", "canary"))
		}
	}
	return mid, len(items), example
}

// profileCPU writes a CPU profile of the Go process serving pprof at addr, over d, to path.
func profileCPU(t *testing.T, addr, path string, d time.Duration) {
	t.Helper()
	start := time.Now()
	hc := &http.Client{Timeout: d + 30*time.Second}
	resp, err := hc.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d.Seconds())))
	if err == nil {
		defer resp.Body.Close()
		var b []byte
		if b, err = io.ReadAll(resp.Body); err == nil {
			err = os.WriteFile(path, b, 0o644)
		}
	}
	if err != nil {
		t.Logf("CPU profile of Metacontroller: %v", err)
	}
	time.Sleep(d - time.Since(start)) // the window is d, whatever happened
}

// countReady counts the WebApps of ns, and those Ready for their current generation.
func countReady(t *testing.T, ns string) (ready, total int) {
	t.Helper()
	p, _ := client.path("example.com/v1", "WebApp", ns, "")
	b, err := client.do("GET", p, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := decode(b)
	items, _ := list["items"].([]any)
	for _, it := range items {
		if field(it, "status", "phase") == "Ready" && field(it, "status", "observedGeneration") == field(it, "metadata", "generation") {
			ready++
		}
	}
	return ready, len(items)
}

// scalePlainLabel labels the WebApps without a canary that a mid-canary mode creates after its
// idle window, so that they are listed alone.
const scalePlainLabel = "scale.example.com/plain"

// countReadyLabelled counts the WebApps of ns labelled label that are Ready for their current
// generation.
func countReadyLabelled(t *testing.T, ns, label string) int {
	t.Helper()
	p, _ := client.path("example.com/v1", "WebApp", ns, "")
	b, err := client.do("GET", p+"?labelSelector="+url.QueryEscape(label), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	list, _ := decode(b)
	items, _ := list["items"].([]any)
	ready := 0
	for _, it := range items {
		if field(it, "status", "phase") == "Ready" && field(it, "status", "observedGeneration") == field(it, "metadata", "generation") {
			ready++
		}
	}
	return ready
}

// childVersions maps each Deployment, Service and HTTPRoute of ns to its resourceVersion.
func childVersions(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, k := range []struct{ apiVersion, kind string }{{"apps/v1", "Deployment"}, {"v1", "Service"}, {"gateway.networking.k8s.io/v1", "HTTPRoute"}} {
		p, _ := client.path(k.apiVersion, k.kind, ns, "")
		b, err := client.do("GET", p, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		list, _ := decode(b)
		items, _ := list["items"].([]any)
		for _, it := range items {
			name, _ := field(it, "metadata", "name").(string)
			rv, _ := field(it, "metadata", "resourceVersion").(string)
			out[k.kind+"/"+name] = rv
		}
	}
	return out
}

// addBackground creates, in namespaces of their own, pods unrelated to any WebApp (bound to the
// kwok node, so that kwok runs them) and Secrets of secretBytes each, as a real cluster has.
func addBackground(t *testing.T, pods, secrets, secretBytes int) {
	t.Helper()
	const namespaces = 10
	for i := 0; i < namespaces; i++ {
		if _, err := client.create(obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": fmt.Sprintf("background-%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	value := strings.Repeat("A", secretBytes*4/3) // base64 of secretBytes bytes
	if err := parallel(secrets, 8, func(i int) error {
		_, err := client.create(obj{"apiVersion": "v1", "kind": "Secret",
			"metadata": obj{"name": fmt.Sprintf("blob-%03d", i), "namespace": fmt.Sprintf("background-%d", i%namespaces)},
			"data":     obj{"blob": value[:len(value)/4*4]}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := parallel(pods, 8, func(i int) error {
		_, err := client.create(obj{"apiVersion": "v1", "kind": "Pod",
			"metadata": obj{"name": fmt.Sprintf("other-%04d", i), "namespace": fmt.Sprintf("background-%d", i%namespaces),
				"labels": obj{"app.kubernetes.io/name": "other", "app.kubernetes.io/instance": fmt.Sprintf("other-%d", i%50)}},
			"spec": obj{"nodeName": "kwok-node-0", "containers": []any{obj{"name": "app", "image": "registry.example.com/other:1"}}}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "background pods running", 5*time.Minute, func() (bool, error) {
		running := 0
		for i := 0; i < namespaces; i++ {
			b, err := client.do("GET", fmt.Sprintf("/api/v1/namespaces/background-%d/pods?fieldSelector=status.phase%%3DRunning", i), "", nil)
			if err != nil {
				return false, err
			}
			list, _ := decode(b)
			items, _ := list["items"].([]any)
			running += len(items)
		}
		return running == pods, nil
	})
}

// parallel runs f(0..n-1) on k goroutines and returns the first error.
func parallel(n, k int, f func(i int) error) error {
	var wg gosync.WaitGroup
	var mu gosync.Mutex
	var first error
	next := make(chan int)
	for w := 0; w < k; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// compareBlueGreen prints, for a run of the mode with blue-green at its preview and the plain
// mid-canary mode, Metacontroller's CPU over the idle window and its peak RSS, and the hook's peak
// RSS, of the one against the other: a preview runs the full count of pods where the canary's
// first step runs 10 %, and its route has one rule more.
func compareBlueGreen(results []scaleResult) {
	var bg, canary *scaleResult
	for i := range results {
		switch r := &results[i]; {
		case !r.midCanary || r.analysis || r.subscriptions:
		case r.blueGreen:
			bg = r
		default:
			canary = r
		}
	}
	if bg == nil || canary == nil || canary.window.mcCPU <= 0 || canary.peakRSS <= 0 || canary.hookPeakRSS <= 0 {
		return
	}
	fmt.Printf("%s against %s: Metacontroller CPU over the idle window %.2f× (%.2f s against %.2f s), to reach it %.2f×, peak RSS %.2f× (%d against %d MiB); the hook's peak RSS %.2f× (%d against %d MiB)\n",
		bg.mode, canary.mode, bg.window.mcCPU/canary.window.mcCPU, bg.window.mcCPU, canary.window.mcCPU, bg.cpuToMidCanary/canary.cpuToMidCanary,
		float64(bg.peakRSS)/float64(canary.peakRSS), bg.peakRSS>>20, canary.peakRSS>>20,
		float64(bg.hookPeakRSS)/float64(canary.hookPeakRSS), bg.hookPeakRSS>>20, canary.hookPeakRSS>>20)
}

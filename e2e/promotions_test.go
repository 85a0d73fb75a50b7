//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// TestPromotions promotes canaries one after the other through Traefik, the WebApp's pods on the
// real node, with clients sending requests through Traefik the whole time, and fails on any
// request that does not get a 200 (issue 36, proof 9). Each failure is shown with what happened
// around it, to the millisecond: the canary's status, the HTTPRoute's backends and whether Traefik
// accepted them, the configuration Traefik really routes by (its API), the Deployments, the
// Services' selectors, the EndpointSlices' ready addresses and the pods.
//
// Opt-in, for its length: E2E_PROMOTIONS=10 (make promotions) runs ten. E2E_SHUTDOWN_DELAY sets
// the WebApp's spec.shutdownDelaySeconds (none by default, as a WebApp that does not ask for it).
func TestPromotions(t *testing.T) {
	count, _ := strconv.Atoi(os.Getenv("E2E_PROMOTIONS"))
	if count <= 0 {
		t.Skip("opt-in: E2E_PROMOTIONS=10 (make promotions) promotes that many canaries in a row under load")
	}
	n := requireNode(t)
	realInstall(t, "e2e/testdata/gateway-api")
	tl := newTimeline(t)
	ns := client.namespace(t, "promotions")
	tr := requireTraefik(t, ns)
	tr.gateway(t, ns, "public")
	prom := startPrometheus(t, tr.metricsAddr())
	tl.mark(t, "Traefik on 127.0.0.1:%s (API :%s), Prometheus on %s scraping it", tr.port, tr.apiPort, prom.url())

	const name = "shop"
	spec := obj{"replicas": 2, "readinessProbe": fastProbe(), "strategy": obj{"maxSurge": 1, "maxUnavailable": 0},
		"route":   obj{"hostnames": []any{traefikHost}, "parentRefs": []any{obj{"name": "public"}}},
		"rollout": obj{"canary": obj{"steps": []any{obj{"weight": 20, "pauseSeconds": 5}, obj{"weight": 50, "pauseSeconds": 5}}}}}
	if d := os.Getenv("E2E_SHUTDOWN_DELAY"); d != "" {
		spec["shutdownDelaySeconds"] = mustAtoi(t, d)
	}
	if _, err := client.create(realWebApp(ns, name, spec)); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ns, name, "Ready and Routed", 150*time.Second, func(st webappv1.WebAppStatus) bool {
		got, _ := routedCondition(st)
		return st.Phase == webappv1.PhaseReady && got == "True/Accepted"
	})
	waitFor(t, "an answer through Traefik", 30*time.Second, func() (bool, error) {
		code, _, err := tr.get("/")
		return err == nil && code == 200, nil
	})
	tl.mark(t, "WebApp Ready behind Traefik: 2 replicas of testapp:1, canary steps [20%% 5s, 50%% 5s], shutdownDelaySeconds %v", spec["shutdownDelaySeconds"])

	// The entry point's count before the load, once Prometheus has scraped it.
	time.Sleep(2 * time.Second)
	before, _, err := prom.value(`sum(traefik_entrypoint_requests_total{entrypoint="web"})`)
	if err != nil {
		t.Fatal(err)
	}
	events := recordStages(t, tr, ns)
	load := startLoad(tr, 3, 20*time.Millisecond)
	type promotion struct {
		from, to time.Time
		image    string
	}
	var promotions []promotion
	for i := 1; i <= count; i++ {
		image := "testapp:2"
		if i%2 == 0 {
			image = "testapp:1"
		}
		from := time.Now()
		load.step(fmt.Sprintf("%d: %s", i, image), -1)
		follow := followCanary(load, ns, name)
		patchSpec(t, ns, name, obj{"image": n.image(image)})
		gen := generationOf(t, ns, name)
		waitFor(t, fmt.Sprintf("promotion %d (%s) done", i, image), 180*time.Second, func() (bool, error) {
			v := lookCanary(t, ns, name)
			if v.st.ObservedGeneration != gen || v.canary != nil || v.st.Canary == nil || v.st.Canary.Phase != webappv1.CanaryPromoted ||
				!isNormalRoute(v.route, name) || !traefikAccepted(v.route) {
				return false, nil
			}
			return v.st.Phase == webappv1.PhaseReady && len(readyPods(t, ns, name)) == 2 && len(podsNow(ns, name)) == 2 &&
				slices.Equal(services(t, ns, name), []string{name}), nil
		})
		follow.stop()
		// The old pods gone, a second more of traffic on the new ones alone.
		time.Sleep(time.Second)
		promotions = append(promotions, promotion{from, time.Now(), image})
		failed, sent := 0, 0
		for _, r := range load.snapshot() {
			if !r.at.Before(from) {
				sent++
				if r.failed() {
					failed++
				}
			}
		}
		tl.mark(t, "promotion %d to %s in %.1fs: %d requests, %d failed", i, image, time.Since(from).Seconds(), sent, failed)
	}
	results := load.stop()
	log := events.stop()
	tl.mark(t, "load stopped: %s", summarize(results))
	t.Logf("requests by step:\n%s", tallyTable(load.tallies(), ""))

	var failures []loadResult
	for _, r := range results {
		if r.failed() {
			failures = append(failures, r)
		}
	}
	for i, p := range promotions {
		var sent, failed int
		for _, r := range results {
			if !r.at.Before(p.from) && r.at.Before(p.to) {
				sent++
				if r.failed() {
					failed++
				}
			}
		}
		t.Logf("promotion %2d to %s: %5.1fs, %5d requests sent, %d failed", i+1, p.image, p.to.Sub(p.from).Seconds(), sent, failed)
	}
	for _, c := range clusters(failures, 2*time.Second) {
		first, last := c[0].at, c[len(c)-1].at
		codes := map[string]int{}
		for _, r := range c {
			k := "error"
			if r.err == nil {
				k = fmt.Sprint(r.code)
			}
			codes[k]++
		}
		var around []string
		for _, e := range log {
			if !e.at.Before(first.Add(-4*time.Second)) && !e.at.After(last.Add(2*time.Second)) {
				around = append(around, fmt.Sprintf("  %s  %s", e.at.Format("15:04:05.000"), e.what))
			}
		}
		var shown []string
		for _, r := range c[:min(len(c), 5)] {
			shown = append(shown, "  "+r.String())
		}
		tl.mark(t, "%d failed requests (%s) from %s to %s (%s)", len(c), countsString(codes), first.Format("15:04:05.000"), last.Format("15:04:05.000"), last.Sub(first).Round(time.Millisecond))
		t.Logf("the failures, the first %d:\n%s\nwhat happened from 4 s before to 2 s after:\n%s", len(shown), strings.Join(shown, "\n"), strings.Join(around, "\n"))
	}

	// Prometheus counted what the clients sent, at Traefik's entry point (the services' series go
	// with the services a promotion removes): as many more requests as were answered.
	answered := 0
	for _, r := range results {
		if r.err == nil {
			answered++
		}
	}
	q := `sum(traefik_entrypoint_requests_total{entrypoint="web"})`
	got := prom.waitValue(t, "Prometheus to count every request", q, 30*time.Second, func(v float64) bool { return v-before >= float64(answered) })
	byCode, _ := prom.values(`sum by (code) (traefik_entrypoint_requests_total{entrypoint="web"})`, "code")
	tl.mark(t, "Prometheus: %s went from %v to %v: %v requests (the clients had %d answers); by code, since Traefik started: %v", q, before, got, got-before, answered, byCode)
	if got-before != float64(answered) {
		t.Errorf("Prometheus counted %v requests at the entry point; the clients had %d answers", got-before, answered)
	}

	var all strings.Builder
	for _, e := range log {
		fmt.Fprintf(&all, "%s  %s\n", e.at.Format("15:04:05.000"), e.what)
	}
	for _, r := range failures {
		fmt.Fprintf(&all, "%s  FAILED %s\n", r.at.Format("15:04:05.000"), r)
	}
	if err := os.WriteFile(promotionsLog, []byte(all.String()), 0o644); err == nil {
		t.Logf("every change seen, and every failed request: %s", promotionsLog)
	}

	if len(failures) > 0 {
		t.Errorf("%d of %d requests failed over %d promotions; want none", len(failures), len(results), count)
	}
}

// promotionsLog is where TestPromotions writes every change it saw.
const promotionsLog = "../bin/e2e-promotions.txt"

// stageEvent is one change seen by recordStages.
type stageEvent struct {
	at   time.Time
	what string
}

// stageRecorder holds recordStages's watches and its poll of Traefik's API.
type stageRecorder struct {
	stops  []func() []watchEvent
	stopCh chan struct{}
	done   chan struct{}
	mu     gosync.Mutex
	polled []stageEvent
}

// recordStages watches, in ns, the WebApps, HTTPRoutes, Deployments, Services, EndpointSlices and
// pods, and polls every 50 ms the services Traefik routes by (its API), until stop.
func recordStages(t *testing.T, tr *traefik, ns string) *stageRecorder {
	t.Helper()
	r := &stageRecorder{stopCh: make(chan struct{}), done: make(chan struct{})}
	for _, k := range []struct{ apiVersion, kind string }{
		{"example.com/v1", "WebApp"}, {routeAPI, "HTTPRoute"}, {"apps/v1", "Deployment"}, {"v1", "Service"},
		{"discovery.k8s.io/v1", "EndpointSlice"}, {"v1", "Pod"},
	} {
		r.stops = append(r.stops, client.record(t, k.apiVersion, k.kind, ns, ""))
	}
	go func() {
		defer close(r.done)
		last := ""
		hc := &http.Client{Timeout: 2 * time.Second}
		for {
			if s := traefikRouting(hc, tr, ns); s != "" && s != last {
				last = s
				r.mu.Lock()
				r.polled = append(r.polled, stageEvent{time.Now(), "Traefik routes by: " + s})
				r.mu.Unlock()
			}
			select {
			case <-r.stopCh:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { r.stop() })
	return r
}

// stop ends the watches and the poll, and returns every change seen, in order, each object's
// repeats left out.
func (r *stageRecorder) stop() []stageEvent {
	select {
	case <-r.stopCh:
		return nil
	default:
		close(r.stopCh)
	}
	<-r.done
	out := slices.Clone(r.polled)
	last := map[string]string{}
	for _, stop := range r.stops {
		for _, e := range stop() {
			key, what := describeStage(e)
			if what == "" || last[key] == what {
				continue
			}
			last[key] = what
			out = append(out, stageEvent{e.At, what})
		}
	}
	slices.SortStableFunc(out, func(a, b stageEvent) int { return a.at.Compare(b.at) })
	return out
}

// describeStage says what a watch event shows of the canary's stages, and the object it is of.
func describeStage(e watchEvent) (key, what string) {
	o := e.Object
	kind, _ := o["kind"].(string)
	name, _ := field(o, "metadata", "name").(string)
	key = kind + "/" + name
	if e.Type == "DELETED" {
		return key, fmt.Sprintf("%s %s deleted", kind, name)
	}
	switch kind {
	case "WebApp":
		var st webappv1.WebAppStatus
		roundTrip(o["status"], &st)
		c := "no canary"
		if st.Canary != nil {
			c = fmt.Sprintf("%s step %d weight %s replicas %d", st.Canary.Phase, st.Canary.Step+1, ptrString(st.Canary.Weight), st.Canary.Replicas)
		}
		return key, fmt.Sprintf("WebApp %s: %s, %s", name, st.Phase, c)
	case "HTTPRoute":
		accepted := "not yet accepted"
		if traefikAccepted(o) {
			accepted = "accepted"
		}
		return key, fmt.Sprintf("HTTPRoute gen %v: %s, %s", field(o, "metadata", "generation"), backendsString(o), accepted)
	case "Deployment":
		return key, fmt.Sprintf("Deployment %s: %s, replicas %v, status replicas %v ready %v available %v", name, shortImage(imageOf(o)),
			field(o, "spec", "replicas"), field(o, "status", "replicas"), field(o, "status", "readyReplicas"), field(o, "status", "availableReplicas"))
	case "Service":
		sel := "the canary's pods and the stable's"
		if field(o, "spec", "selector", webappv1.LabelName) != nil {
			sel = "the stable pods"
		}
		if field(o, "spec", "selector", webappv1.LabelTrack) != nil {
			sel = "the canary's pods"
		}
		return key, fmt.Sprintf("Service %s selects %s", name, sel)
	case "EndpointSlice":
		svc, _ := field(o, "metadata", "labels", "kubernetes.io/service-name").(string)
		var ready, other []string
		eps, _ := field(o, "endpoints").([]any)
		for _, ep := range eps {
			addrs, _ := field(ep, "addresses").([]any)
			for _, a := range addrs {
				ip := shortIP(fmt.Sprint(a))
				switch {
				case field(ep, "conditions", "ready") == true:
					ready = append(ready, ip)
				case field(ep, "conditions", "terminating") == true:
					other = append(other, ip+" terminating")
				default:
					other = append(other, ip+" not ready")
				}
			}
		}
		slices.Sort(ready)
		slices.Sort(other)
		return key, fmt.Sprintf("EndpointSlice of %s: ready [%s], others [%s]", svc, strings.Join(ready, " "), strings.Join(other, ", "))
	case "Pod":
		state := "not ready"
		if conditionTrue(o, "Ready") {
			state = "ready"
		}
		if field(o, "metadata", "deletionTimestamp") != nil {
			state += ", deleting"
		}
		ip, _ := field(o, "status", "podIP").(string)
		return key, fmt.Sprintf("Pod %s (%s) %s: %s", name, shortIP(ip), shortImage(fmt.Sprint(field(o, "spec", "containers", 0, "image"))), state)
	}
	return key, ""
}

// traefikRouting is what Traefik's API says it routes by for ns's routes: each weighted service's
// weights, and each load balancer's servers; "" when the API does not answer.
func traefikRouting(hc *http.Client, tr *traefik, ns string) string {
	resp, err := hc.Get("http://127.0.0.1:" + tr.apiPort + "/api/http/services")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var services []struct {
		Name         string
		LoadBalancer *struct{ Servers []struct{ URL string } }
		Weighted     *struct {
			Services []struct {
				Name   string
				Weight *int
			}
		}
	}
	if json.NewDecoder(resp.Body).Decode(&services) != nil {
		return ""
	}
	short := func(s string) string {
		s = strings.TrimSuffix(s, "@kubernetesgateway")
		if _, after, ok := strings.Cut(s, "-svc-"+ns+"-"); ok {
			return after
		}
		if strings.HasSuffix(s, "-wrr") {
			return "wrr"
		}
		return s
	}
	var parts []string
	for _, s := range services {
		if !strings.Contains(s.Name, "httproute-"+ns+"-") {
			continue
		}
		switch {
		case s.Weighted != nil:
			var ws []string
			for _, c := range s.Weighted.Services {
				w := 1
				if c.Weight != nil {
					w = *c.Weight
				}
				ws = append(ws, fmt.Sprintf("%s=%d", short(c.Name), w))
			}
			parts = append(parts, short(s.Name)+"("+strings.Join(ws, " ")+")")
		case s.LoadBalancer != nil:
			var ips []string
			for _, srv := range s.LoadBalancer.Servers {
				ips = append(ips, shortIP(strings.TrimSuffix(strings.TrimPrefix(srv.URL, "http://"), ":8080")))
			}
			slices.Sort(ips)
			parts = append(parts, short(s.Name)+"["+strings.Join(ips, " ")+"]")
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// shortIP is the last part of a pod's address, enough to tell the pods of a node's /24 apart.
func shortIP(ip string) string {
	if i := strings.LastIndex(ip, "."); i >= 0 {
		return ip[i:]
	}
	return ip
}

// shortImage is an image's last path element: testapp:2.
func shortImage(image string) string {
	return image[strings.LastIndex(image, "/")+1:]
}

//go:build e2e

package e2e

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// Issue 43's proofs of TestAnalysis (13 to 15): the built-in selector's exact series, no sync
// waiting on Prometheus, and annotations that act on the attempt they name.

// oldTraefikSelector is the built-in Traefik selector of the requests route ns/route sent to
// Service svc before issue 43 (analysis/query.go at f6275df^, for names of [a-z0-9-] alone, which
// neither normalizing nor quoting changes): the route's namespace and name fixed at the start and
// the Service at the end, anything for the Gateway, the entry point and the hash.
func oldTraefikSelector(ns, route, svc string) string {
	return fmt.Sprintf(`service=~"httproute-%s-%s-gw-.+-ep-.+-[0-9]+-[0-9a-f]+-svc-%s-%s-[0-9]+@kubernetesgateway"`, ns, route, ns, svc)
}

// collidingNames is proof 13 (issue 43, item 1): two WebApps of one namespace ns whose canaries'
// series the built-in Traefik selector mixed before issue 43, as the c-gw-1-a-svc-a-c
// against a/c: shop, and shop-gw-1-a-svc-<ns>-shop, whose canary's series
//
//	httproute-<ns>-shop-gw-1-a-svc-<ns>-shop-gw-<ns>-public-ep-web-0-<hash>-svc-<ns>-shop-gw-1-a-svc-<ns>-shop-canary-1@kubernetesgateway
//
// shop's old selector matched (oldTraefikSelector), so that its 500s counted against shop. Each
// has clients of its own; the long one's canary answers every request with a 500 and shop's is
// good, both started together. The long one is aborted, on a value of 0 (none of shop's 200s
// counted); shop is promoted after its checks pass (none of the other's 500s counted); and each
// check counted its WebApp's own canary requests (what its clients got from its canary over the
// check's span), not the other's with them. Prometheus is asked with the old selector too: it
// matches both canaries' series, so the names did collide, in this run's Traefik.
func (e *analysisEnv) collidingNames(t *testing.T) {
	ns := client.namespace(t, "analysis-43-names")
	e.tr.gateway(t, ns, analysisGateway)
	weights := []int32{50}
	const pause = 10
	canary := analysisCanary(weights, pause, 1, successRate(99, -1))
	good := e.newAppIn(t, ns, "shop", ns+".example.com", canary, nil, 2, standardLoad)
	bad := e.newAppIn(t, ns, "shop-gw-1-a-svc-"+ns+"-shop", "other-"+ns+".example.com", canary, nil, 2, standardLoad)

	badGen := bad.set(t, obj{"image": e.node.image("testapp:2"), "env": testappEnv("TESTAPP_FAIL", "1")},
		fmt.Sprintf("%s: image set to testapp:2 with TESTAPP_FAIL=1 (every GET / answered 500): one step of 50%% for 10 s; request-success-rate >= 99", bad.name))
	goodGen := good.set(t, obj{"image": e.node.image("testapp:2")},
		fmt.Sprintf("%s: image set to testapp:2 (good), at the same time: one step of 50%% for 10 s; request-success-rate >= 99", good.name))
	badRev, goodRev := bad.canaryOf(t, badGen), good.canaryOf(t, goodGen)
	badSt, aborted := bad.watchUntil(t, "the failing canary aborted", 120*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Canary != nil && st.Canary.Revision == badRev && st.Canary.Phase == webappv1.CanaryAborted
	})
	goodSt, promoted := good.watchUntil(t, "the good canary promoted", 180*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Canary != nil && st.Canary.Revision == goodRev && (st.Canary.Phase == webappv1.CanaryPromoted || st.Canary.Phase == webappv1.CanaryAborted)
	})
	// What the selector before issue 43 would have read for shop's canary, while both series are
	// fresh.
	oldSelector := oldTraefikSelector(ns, good.name, good.name+webappv1.CanarySuffix)
	oldMatched, err := e.prom.values(`sum by (service) (last_over_time(traefik_service_requests_total{`+oldSelector+`}[10m]))`, "service")
	if err != nil {
		t.Errorf("asking Prometheus with the old selector: %v", err)
	}
	if aborted {
		bad.tl.mark(t, "canary Aborted: %s", badSt.Canary.Message)
		bad.waitRetired(t)
	}
	if promoted {
		good.tl.mark(t, "canary %s: %s", goodSt.Canary.Phase, goodSt.Canary.Message)
		good.waitRetired(t)
	}
	good.stop()
	bad.stop()

	var ownServices []string
	for service, n := range oldMatched {
		owner := "neither"
		switch {
		case strings.Contains(service, "-svc-"+ns+"-"+bad.name+webappv1.CanarySuffix+"-"):
			owner = bad.name
		case strings.Contains(service, "-svc-"+ns+"-"+good.name+webappv1.CanarySuffix+"-"):
			owner = good.name
		}
		ownServices = append(ownServices, owner)
		good.figure(t, "the selector of %s's canary before issue 43, %s, matches Traefik's series %s (%.0f requests): %s's canary", good.name, oldSelector, service, n, owner)
	}
	if !slices.Contains(ownServices, bad.name) || !slices.Contains(ownServices, good.name) {
		t.Errorf("the old selector of %s's canary matched %v; want both canaries' series (the names must collide under it)", good.name, oldMatched)
	}
	for _, pair := range []struct{ a, other *analysisApp }{{good, bad}, {bad, good}} {
		a, other := pair.a, pair.other
		rev := goodRev
		if a == bad {
			rev = badRev
		}
		for _, l := range checkLines(a.history(rev)) {
			a.figure(t, "%s", l)
		}
		for _, c := range checkRequests(a, other, rev) {
			a.figure(t, "%s", c)
			if c.off() {
				t.Errorf("%s: %s; want the requests its own canary answered, within %d, not the other's with them", a.name, c, c.tolerance())
			}
		}
	}
	sent, failed, _ := failedAfter(good.results(), good.start)
	good.figure(t, "%s's clients: %d requests from the release on, %d failed", good.name, sent, failed)
	sent, failed, _ = failedAfter(bad.results(), bad.start)
	bad.figure(t, "%s's clients: %d requests from the release on, %d failed", bad.name, sent, failed)
	good.finish(t, fmt.Sprintf("Issue 43, proof 13: %s, good, beside %s, whose series its old selector matched", good.name, bad.name), "v2")
	bad.finish(t, fmt.Sprintf("Issue 43, proof 13: %s, answering 500, beside %s", bad.name, good.name), "v2")

	if !aborted || !promoted {
		return
	}
	if c := badSt.Canary; c.Step != 0 || !regexp.MustCompile(`request-success-rate 0 on \d+ requests?, outside >= 99 at 99 % confidence`).MatchString(c.Message) {
		t.Errorf("%s aborted at step %d: %q; want step 1, on request-success-rate 0 (no request of %s's counted)", bad.name, c.Step+1, c.Message, good.name)
	}
	if c := goodSt.Canary; c.Phase != webappv1.CanaryPromoted {
		t.Errorf("%s's canary %s: %q; want Promoted (none of %s's 500s counted)", good.name, c.Phase, c.Message, bad.name)
	}
	hist := good.history(goodRev)
	checkSteps(t, hist, weights, pause*time.Second)
	for _, s := range hist {
		if c := s.st.Canary; c.FailedChecks != 0 || (c.Analysis != nil && c.Analysis.Result == webappv1.CheckFailed) {
			t.Errorf("%s's status.canary at %s: %s; want no failed check", good.name, s.at.Format(time.TimeOnly), jsonString(c))
			break
		}
	}
}

// checkCount is what one check of a canary counted, beside what its clients and the other
// WebApp's got from their canaries over the check's span.
type checkCount struct {
	at           time.Time
	span         time.Duration
	result       webappv1.CheckResult
	counted      int64 // status.canary.analysis.requests
	own, others  int   // the canary answers the WebApp's clients, and the other's, got over the span
	othersFailed int   // of others, those not 200
	otherName    string
}

// tolerance is how far counted may be from own: two fifths of own, and at least 20. Prometheus
// scrapes Traefik every second and increase() extrapolates to the span's ends, so the count is
// off by up to a second's requests; a check 3 s after the weight is in place has about three
// seconds' of them.
func (c checkCount) tolerance() int {
	return max(20, int(math.Ceil(0.4*float64(c.own))))
}

// off reports whether counted is further than tolerance from own, or nearer own and the other's
// together than own alone.
func (c checkCount) off() bool {
	d := math.Abs(float64(c.counted) - float64(c.own))
	return d > float64(c.tolerance()) || (c.others > 0 && math.Abs(float64(c.counted)-float64(c.own+c.others)) < d)
}

func (c checkCount) String() string {
	return fmt.Sprintf("the check at %s (%s, over %s): %d requests counted; its clients got %d answers from its canary over the span, %s's %d from theirs (%d of them not 200)",
		c.at.UTC().Format(time.TimeOnly), c.result, c.span, c.counted, c.own, c.otherName, c.others, c.othersFailed)
}

// checkRequests are the checks of a's canary of revision that counted requests, each with the
// answers a's clients and other's got from their canaries (v2) over its span.
func checkRequests(a, other *analysisApp, revision string) []checkCount {
	mine, theirs := a.results(), other.results()
	var out []checkCount
	seen := map[string]bool{}
	for _, s := range a.history(revision) {
		x := s.st.Canary.Analysis
		if x == nil || x.Requests == nil || seen[timeString(&x.CheckTime)] {
			continue
		}
		seen[timeString(&x.CheckTime)] = true
		span := time.Duration(x.WindowSeconds) * time.Second
		from := x.CheckTime.Add(-span)
		own, _ := canaryAnswers(mine, from, x.CheckTime.Time)
		others, othersFailed := canaryAnswers(theirs, from, x.CheckTime.Time)
		out = append(out, checkCount{at: x.CheckTime.Time, span: span, counted: *x.Requests, result: x.Result,
			own: own, others: others, othersFailed: othersFailed, otherName: other.name})
	}
	return out
}

// canaryAnswers counts the results sent from from to to that the canary (v2) answered, and of
// them those not 200.
func canaryAnswers(results []loadResult, from, to time.Time) (answered, failed int) {
	for _, r := range results {
		if r.version == "v2" && !r.at.Before(from) && !r.at.After(to) {
			answered++
			if r.failed() {
				failed++
			}
		}
	}
	return answered, failed
}

// historyOf is every canary status of attempt attempt of revision that the WebApp's watch saw.
func (a *analysisApp) historyOf(revision string, attempt int32) []statusAt {
	return slices.DeleteFunc(a.history(revision), func(s statusAt) bool { return s.st.Canary.Attempt != attempt })
}

// annotate merge-patches the WebApp's annotations, as kubectl annotate --overwrite does.
func (a *analysisApp) annotate(t *testing.T, annotations obj) {
	t.Helper()
	p, _ := client.path("example.com/v1", "WebApp", a.ns, a.name)
	if _, err := client.do("PATCH", p, "application/merge-patch+json", obj{"metadata": obj{"annotations": annotations}}); err != nil {
		t.Fatal(err)
	}
	a.tl.mark(t, "annotated %v", annotations)
}

// leftoverPromote is proof 14 (issue 43, item 6): a canary of testapp:2 (attempt 0 of its
// revision) is aborted by the abort annotation; a promote annotation naming it comes after, and
// does not act on the aborted canary; the template is set back (RolledBack), then to testapp:2
// again, the user applying the same image after the abort: the canary of the same revision is
// attempt 1, and both annotations, left in place, name attempt 0. The new attempt runs its steps,
// each after its pause and a passing check, and is promoted by them, not at once; its status
// lists both annotations as ignored, saying why.
func (e *analysisEnv) leftoverPromote(t *testing.T) {
	weights := []int32{20, 50}
	const pause = 10
	a := e.newApp(t, "analysis-43-leftover", analysisCanary(weights, pause, 1, successRate(99, -1)), nil)
	gen := a.set(t, obj{"image": e.node.image("testapp:2")}, "image set to testapp:2: steps 20/50%, 10 s each; request-success-rate >= 99")
	revision := a.canaryOf(t, gen)
	if c := webAppStatus(t, a.ns, a.name).Canary; c == nil || c.Attempt != 0 {
		t.Fatalf("the first canary of revision %s: %s; want attempt 0", revision, jsonString(c))
	}
	a.annotate(t, obj{webappv1.AnnotationAbort: webappv1.AttemptValue(revision, 0)})
	st := a.waitPhase(t, revision, webappv1.CanaryAborted, 60*time.Second)
	if !strings.Contains(st.Canary.Message, "aborted by the "+webappv1.AnnotationAbort+" annotation") {
		t.Errorf("status.canary.message %q; want it aborted by the annotation", st.Canary.Message)
	}
	a.waitRetired(t)
	// A promote of attempt 0 that came too late: it never acts on the aborted canary.
	a.annotate(t, obj{webappv1.AnnotationPromote: webappv1.AttemptValue(revision, 0)})
	calls := hookSyncs(e.hook, a.ns, a.name)
	waitFor(t, "three sync calls that see the promote annotation", 60*time.Second, func() (bool, error) {
		return hookSyncs(e.hook, a.ns, a.name) >= calls+3, nil
	})
	if c := webAppStatus(t, a.ns, a.name).Canary; c == nil || c.Revision != revision || c.Phase != webappv1.CanaryAborted {
		t.Errorf("status.canary %s after the leftover promote; want attempt 0 still Aborted", jsonString(c))
	}
	a.set(t, obj{"image": e.node.image("testapp:1")}, "image set back to testapp:1, the stable's")
	waitStatus(t, a.ns, a.name, "the canary rolled back and the WebApp Ready", 60*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Phase == webappv1.PhaseReady && st.Canary != nil && st.Canary.Revision == revision && st.Canary.Phase == webappv1.CanaryRolledBack
	})
	a.waitRetired(t)

	gen = a.set(t, obj{"image": e.node.image("testapp:2")}, "image set to testapp:2 again, the abort and the promote of attempt 0 left in place")
	again := a.canaryOf(t, gen)
	started := time.Now()
	if again != revision {
		t.Fatalf("the same template again has revision %s; want %s", again, revision)
	}
	st = waitStatus(t, a.ns, a.name, "attempt 1 at its first step", 30*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Canary != nil && st.Canary.Revision == revision && st.Canary.Attempt == 1 && len(st.Canary.IgnoredAnnotations) > 0
	})
	ignored := strings.Join(st.Canary.IgnoredAnnotations, "\n")
	a.figure(t, "attempt %d of revision %s, %s at step %d, its status.canary.ignoredAnnotations: %q", st.Canary.Attempt, revision, st.Canary.Phase, st.Canary.Step+1, st.Canary.IgnoredAnnotations)
	for _, ann := range []string{webappv1.AnnotationPromote, webappv1.AnnotationAbort} {
		want := fmt.Sprintf("%s=%s: names attempt 0 of revision %s, which is over: the canary is attempt 1 (%s)", ann, revision, revision, webappv1.AttemptValue(revision, 1))
		if !strings.Contains(ignored, want) {
			t.Errorf("status.canary.ignoredAnnotations %q; want %q", st.Canary.IgnoredAnnotations, want)
		}
	}
	st, promoted := a.watchUntil(t, "attempt 1 promoted", 240*time.Second, func(st webappv1.WebAppStatus) bool {
		c := st.Canary
		return c != nil && c.Revision == revision && c.Attempt == 1 && (c.Phase == webappv1.CanaryPromoted || c.Phase == webappv1.CanaryAborted)
	})
	if promoted {
		a.tl.mark(t, "attempt 1 %s: %s", st.Canary.Phase, st.Canary.Message)
		a.waitRetired(t)
	}
	annotations, _ := field(mustGet(t, "example.com/v1", "WebApp", a.ns, a.name), "metadata", "annotations").(map[string]any)
	a.stop()
	hist := a.historyOf(revision, 1)
	for _, l := range checkLines(hist) {
		a.figure(t, "attempt 1: %s", l)
	}
	var promoting time.Time
	for _, s := range hist {
		if s.st.Canary.Phase == webappv1.CanaryPromoting {
			promoting = s.at
			break
		}
	}
	for _, l := range timingLines(stepTimings(hist, len(weights)), pause*time.Second, analysisInterval*time.Second, analysisWindow*time.Second) {
		a.figure(t, "attempt 1: %s", l)
	}
	if !promoting.IsZero() {
		a.figure(t, "attempt 1 Promoting %.1f s after the same image was set again (its two pauses: %d s)", promoting.Sub(started).Seconds(), pause*len(weights))
	}
	sent, failed, first := failedAfter(a.results(), a.start)
	a.figure(t, "%d requests from the first release on, %d failed", sent, failed)
	a.finish(t, "Issue 43, proof 14: a leftover promote from an aborted attempt, then the same template again", "v2")

	if !promoted {
		return
	}
	if st.Canary.Phase != webappv1.CanaryPromoted {
		t.Errorf("attempt 1 %s: %q; want Promoted", st.Canary.Phase, st.Canary.Message)
	}
	for _, ann := range []string{webappv1.AnnotationPromote, webappv1.AnnotationAbort} {
		if annotations[ann] != revision {
			t.Errorf("annotation %s is %v at the end; want %s left in place throughout", ann, annotations[ann], revision)
		}
	}
	// Every step, each after its pause and a check that passed at it: not promoted at once.
	checkSteps(t, hist, weights, pause*time.Second)
	if !promoting.IsZero() && promoting.Sub(started) < time.Duration(pause*len(weights))*time.Second {
		t.Errorf("attempt 1 Promoting %.1f s after it started; want after its steps' pauses, %d s", promoting.Sub(started).Seconds(), pause*len(weights))
	}
	if failed > 0 {
		t.Errorf("%d of %d requests failed; want none:\n%s", failed, sent, strings.Join(first, "\n"))
	}
}

// slowIdleCanaries is how many canaries without traffic proof 15 runs beside its WebApp's: with
// the one under load, enough that, were each of their syncs to wait the query timeout (2 s) at
// every resync (5 s), they would take more than Metacontroller's 5 workers.
const slowIdleCanaries = 12

// slowPrometheus is proof 15 (issue 43, item 2): the proxy in front of Prometheus makes every
// query that names the proof's namespace ns answer after 10 s, then never (it holds the
// connection). In ns, a WebApp under load and 12 without traffic (nginx on the kwok node) are
// mid-canary with an analysis checked every 5 s. Their checks hold inconclusive, their status
// saying what is wrong with Prometheus; the one under load, past its pause, holds at its step, and
// is promoted once Prometheus answers again. Meanwhile WebApps with no canary (3 at a time, on the
// kwok node) are created, and each is Ready about as fast as 3 created with Prometheus healthy
// (the same canaries mid-step, inconclusive for want of traffic), measured first in the same run:
// the median within twice the healthy one's and 3 s. No sync call of the hook takes over 1 s
// while Prometheus is slow (a call that waited on it would take 2 s).
func (e *analysisEnv) slowPrometheus(t *testing.T) {
	ns := client.namespace(t, "analysis-43-slow")
	e.tr.gateway(t, ns, analysisGateway)
	const pause = 10
	canary := analysisCanary([]int32{50}, pause, 1, successRate(99, -1))
	a := e.newAppIn(t, ns, "shop", ns+".example.com", canary, nil, 2, standardLoad)
	idle := make([]string, slowIdleCanaries)
	for i := range idle {
		idle[i] = fmt.Sprintf("idle-%02d", i)
		spec := obj{"image": "nginx:1.27", "replicas": 1, "port": 8080,
			"route":   obj{"hostnames": []any{idle[i] + "." + ns + ".example.com"}, "parentRefs": []any{obj{"name": analysisGateway}}},
			"rollout": obj{"canary": canary}}
		if _, err := client.create(webApp(ns, idle[i], spec)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range idle {
		waitStatus(t, ns, name, "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady))
	}
	for _, name := range idle {
		patchSpec(t, ns, name, obj{"image": "nginx:1.28"})
	}
	for _, name := range idle {
		waitStatus(t, ns, name, "its canary checked", 90*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && st.Canary.Phase == webappv1.CanaryProgressing && st.Canary.Analysis != nil
		})
	}
	a.tl.mark(t, "%d canaries of nginx:1.28 without traffic mid-step in %s, each checked", len(idle), ns)
	metrics := "http://" + e.hook.metricsAddr + "/metrics"
	type phase struct {
		name  string
		ready []time.Duration
		syncs latencies
	}
	measure := func(name, prefix string) phase {
		lat := e.hook.syncLatencies()
		p := phase{name: name, ready: readyTimes(t, ns, prefix, 3)}
		p.syncs = e.hook.syncLatencies().minus(lat)
		a.figure(t, "Prometheus %s: 3 WebApps with no canary created one after the other, Ready in %s (median %.1f s); the hook's sync calls meanwhile, every namespace's: %s",
			name, durations(p.ready), median(p.ready).Seconds(), p.syncs)
		return p
	}
	healthy := measure("healthy", "plain-healthy")

	// Slow: every query of ns answered after 10 s; the hook gives up on each after 2 s.
	e.proxy.slow(ns, 10*time.Second)
	slowFrom, slowLatencies := time.Now(), e.hook.syncLatencies()
	slowQueries := scrape(metrics, "webapp_hook_analysis_queries_total", "outcome")
	a.tl.mark(t, "the proxy answers the queries of %s after 10 s", ns)
	gen := a.set(t, obj{"image": e.node.image("testapp:2")}, "image set to testapp:2 (good): one step of 50% for 10 s; request-success-rate >= 99")
	revision := a.canaryOf(t, gen)
	saysProm := func(x *webappv1.AnalysisStatus, after time.Time) bool {
		return x != nil && x.Result == webappv1.CheckInconclusive && strings.Contains(x.Message, "Prometheus") && x.CheckTime.Time.After(after)
	}
	waitStatus(t, a.ns, a.name, "a check inconclusive for Prometheus", 90*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Canary != nil && st.Canary.Revision == revision && saysProm(st.Canary.Analysis, slowFrom)
	})
	for _, name := range idle {
		waitStatus(t, ns, name, "a check inconclusive for Prometheus", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && saysProm(st.Canary.Analysis, slowFrom)
		})
	}
	a.tl.mark(t, "every canary of %s has a check inconclusive for Prometheus", ns)
	slow := measure("answering after 10 s", "plain-slow")

	// Never: every query of ns held, unanswered, until the hook gives up.
	e.proxy.slow(ns, promHold)
	held := e.proxy.count(ns, "held")
	a.tl.mark(t, "the proxy holds the queries of %s, answering none", ns)
	waitFor(t, "a query of every canary of "+ns+" held", 60*time.Second, func() (bool, error) {
		return e.proxy.count(ns, "held") >= held+len(idle)+1, nil
	})
	never := measure("answering never", "plain-never")
	st := waitStatus(t, a.ns, a.name, "the step's pause started", 60*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Canary != nil && st.Canary.Revision == revision && st.Canary.PauseStartTime != nil
	})
	c := a.waitHeld(t, "Prometheus", st.Canary.PauseStartTime.Add(pause*time.Second))
	if !strings.Contains(c.Message, "Prometheus") || !strings.Contains(c.Analysis.Message, "Prometheus") {
		t.Errorf("status.canary.message %q, the check's %q; want them to say what is wrong with Prometheus", c.Message, c.Analysis.Message)
	}
	a.figure(t, "held past its pause: %q", c.Message)
	idleSaid := map[string]int{}
	for _, name := range idle {
		x := webAppStatus(t, ns, name).Canary.Analysis
		if x == nil || x.Result != webappv1.CheckInconclusive || !strings.Contains(x.Message, "Prometheus") {
			t.Errorf("%s's latest check %s; want it inconclusive, saying what is wrong with Prometheus", name, jsonString(x))
			continue
		}
		idleSaid[x.Message]++
	}
	a.figure(t, "the latest checks of the %d canaries without traffic: %v", len(idle), idleSaid)

	e.proxy.slow(ns, 0)
	backAt, whileSlow := time.Now(), e.hook.syncLatencies().minus(slowLatencies)
	a.tl.mark(t, "the proxy forwards the queries of %s at once again", ns)
	a.figure(t, "the hook's sync calls over the %.0f s Prometheus was slow, every namespace's: %s", backAt.Sub(slowFrom).Seconds(), whileSlow)
	outcomes := map[string]float64{}
	for k, v := range scrape(metrics, "webapp_hook_analysis_queries_total", "outcome") {
		if d := v - slowQueries[k]; d != 0 {
			outcomes[k] = d
		}
	}
	a.figure(t, "the hook's queries to Prometheus over it, every namespace's, by outcome: %v", outcomes)
	a.figure(t, "the proxy, for the queries of %s: %d held 10 s, of which the hook gave up on %d before they were forwarded; then %d held, never answered",
		ns, e.proxy.count(ns, "answered late")+e.proxy.count(ns, "gave up"), e.proxy.count(ns, "gave up"), e.proxy.count(ns, "held")-held)
	st, promoted := a.watchUntil(t, "the canary promoted, Prometheus answering again", 120*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Canary != nil && st.Canary.Revision == revision && (st.Canary.Phase == webappv1.CanaryPromoted || st.Canary.Phase == webappv1.CanaryAborted)
	})
	if promoted {
		a.tl.mark(t, "canary %s: %s", st.Canary.Phase, st.Canary.Message)
		a.figure(t, "Promoted %.1f s after Prometheus answered again", time.Since(backAt).Seconds())
		a.waitRetired(t)
	}
	a.stop()
	hist := a.history(revision)
	for _, l := range checkLines(hist) {
		a.figure(t, "%s", l)
	}
	sent, failed, first := failedAfter(a.results(), a.start)
	a.figure(t, "%d requests from the release on, %d failed", sent, failed)
	a.finish(t, "Issue 43, proof 15: Prometheus answering in 10 s, then never, then again", "v2")

	for _, p := range []phase{slow, never} {
		if got, base := median(p.ready), median(healthy.ready); got > 2*base+3*time.Second {
			t.Errorf("Prometheus %s: WebApps with no canary Ready in %s (median %.1f s); want no slower than twice the healthy run's %s (median %.1f s) and 3 s",
				p.name, durations(p.ready), got.Seconds(), durations(healthy.ready), base.Seconds())
		}
	}
	if n := whileSlow.over(1); n > 0 {
		t.Errorf("%.0f of the hook's sync calls took over 1 s while Prometheus was slow (%s); want none waiting on it", n, whileSlow)
	}
	if !promoted || st.Canary.Phase != webappv1.CanaryPromoted {
		t.Errorf("the canary %s once Prometheus answered again; want Promoted", st.Canary.Phase)
	}
	for _, s := range hist {
		c := s.st.Canary
		if c.FailedChecks != 0 || (c.Analysis != nil && c.Analysis.Result == webappv1.CheckFailed) {
			t.Errorf("at %s: %s; want no failed check", s.at.Format(time.TimeOnly), jsonString(c))
			break
		}
		if c.Phase == webappv1.CanaryPromoting && s.at.Before(backAt) {
			t.Errorf("promoting at %s, before Prometheus answered again at %s", s.at.Format(time.TimeOnly), backAt.Format(time.TimeOnly))
		}
		// Silence never passes: no status seen while Prometheus was slow holds a passed check. Its
		// checkTime is no bound: a check of that time may be measured once Prometheus is back,
		// and an earlier check judged in the stead of the one due (canary.StandsIn) is
		// recorded at its own time.
		if x := c.Analysis; x != nil && x.Result == webappv1.CheckPassed && s.at.Before(backAt) {
			t.Errorf("at %s, Prometheus slow, the check at %s passed: %s; want inconclusive", s.at.Format(time.TimeOnly), x.CheckTime.UTC().Format(time.TimeOnly), jsonString(x))
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d requests failed; want none:\n%s", failed, sent, strings.Join(first, "\n"))
	}
}

// readyTimes creates count WebApps <prefix>-<i> of ns one after the other, with no canary (nginx,
// 1 replica, on the kwok node), and returns how long each took from its creation until its
// status said Ready for its generation with its replica available, polled every 100 ms.
func readyTimes(t *testing.T, ns, prefix string, count int) []time.Duration {
	t.Helper()
	created := make([]time.Time, count)
	names := make([]string, count)
	for i := range count {
		names[i] = fmt.Sprintf("%s-%d", prefix, i+1)
		created[i] = time.Now()
		if _, err := client.create(webApp(ns, names[i], obj{"image": "nginx:1.27", "replicas": 1, "port": 8080})); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]time.Duration, count)
	for deadline, left := time.Now().Add(2*time.Minute), count; left > 0; {
		for i, name := range names {
			if out[i] > 0 {
				continue
			}
			wa, err := client.get("example.com/v1", "WebApp", ns, name)
			if err != nil || wa == nil {
				continue
			}
			var st webappv1.WebAppStatus
			gen, _ := field(wa, "metadata", "generation").(float64)
			if roundTrip(wa["status"], &st) == nil && st.ObservedGeneration == int64(gen) && st.Phase == webappv1.PhaseReady && st.AvailableReplicas == 1 {
				out[i], left = time.Since(created[i]), left-1
			}
		}
		if left > 0 && time.Now().After(deadline) {
			t.Errorf("%d of the WebApps %s-* not Ready after 2 minutes", left, prefix)
			for i := range out {
				if out[i] == 0 {
					out[i] = time.Since(created[i])
				}
			}
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return out
}

// median is the middle of ds (the upper middle of an even count).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// durations are ds to the tenth of a second, "1.2 s, 1.4 s".
func durations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.1f s", d.Seconds())
	}
	return strings.Join(parts, ", ")
}

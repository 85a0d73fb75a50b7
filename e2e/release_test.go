//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// TestRelease proves issue 45's header route and rollback window through Traefik, the WebApps'
// pods on the real node, with clients sending requests through Traefik the whole time, counted
// by the version that answered:
//
//   - a header route at weight 0: only the requests with the header reach the new version until
//     the canary's next step, then the steps go on to the promotion; no request fails;
//   - undo within the rollback window: after a promotion, the image set back goes back to the
//     previous version with no canary (no canary Deployment, the route never split), no request
//     failing;
//   - undo outside it: a canary, as without the window;
//   - blue-green (bluegreen_test.go): the preview reached only with its header while users get
//     only the old version, one switch; an abort within the scale-down delay, and ten switches
//     in a row; the autoscaler lowering the idle old version, the new one keeping its pods.
//
// The subtests run side by side, a WebApp each, as the suite's other proofs do.
//
// Each WebApp has spec.shutdownDelaySeconds 5: the rollback window's rollback is a rollout of the
// stable Deployment, as without a canary, and without a preStop delay a pod that stops still gets
// the requests Traefik sends it until it routes by the new EndpointSlices (docs/development.md,
// "No dropped requests").
func TestRelease(t *testing.T) {
	n := requireNode(t)
	realInstall(t, "e2e/testdata/gateway-api")
	ns := client.namespace(t, "release")
	tr := requireTraefik(t, ns)
	tr.gateway(t, ns, "public")
	t.Cleanup(func() { // after the parallel subtests, which run once this function has returned
		if refused := tr.refusals(); refused != "" {
			t.Errorf("Traefik was refused by RBAC; its ClusterRole lacks:\n%s", refused)
		}
	})
	// release makes WebApp name of 2 replicas of testapp:1 behind Traefik at <name>.example.com,
	// with rollout (and more of the spec), and waits for it to be Ready and routed.
	release := func(t *testing.T, name string, rollout obj, more ...obj) string {
		t.Helper()
		host := name + ".example.com"
		spec := obj{"replicas": 2, "readinessProbe": fastProbe(), "strategy": obj{"maxSurge": 1, "maxUnavailable": 0}, "shutdownDelaySeconds": 5,
			"route": obj{"hostnames": []any{host}, "parentRefs": []any{obj{"name": "public"}}}, "rollout": rollout}
		for _, m := range more {
			for k, v := range m {
				spec[k] = v
			}
		}
		if _, err := client.create(realWebApp(ns, name, spec)); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, ns, name, "Ready and Routed", 150*time.Second, func(st webappv1.WebAppStatus) bool {
			got, _ := routedCondition(st)
			return st.Phase == webappv1.PhaseReady && got == "True/Accepted"
		})
		waitFor(t, "an answer of v1 through Traefik", 30*time.Second, func() (bool, error) {
			r := startLoadTo(tr, host, 1, time.Hour)
			time.Sleep(500 * time.Millisecond)
			got := r.stop()
			return len(got) > 0 && !got[0].failed() && got[0].version == "v1", nil
		})
		return host
	}

	t.Run("a header route at weight 0: only the testers reach the new version, then the steps go on", func(t *testing.T) {
		t.Parallel()
		tl := newTimeline(t)
		const name = "testers"
		host := release(t, name, canaryOf(obj{
			"headerRoute": obj{"matches": []any{obj{"headers": []any{obj{"name": "X-Canary", "value": "always"}}}}},
			"steps":       []any{obj{"weight": 0, "pauseSeconds": 20}, obj{"weight": 50, "pauseSeconds": 5}},
		}))
		users := startLoadTo(tr, host, 2, 20*time.Millisecond)
		testers := startLoadWith(tr, host, http.Header{"X-Canary": {"always"}}, 1, 20*time.Millisecond)
		follow := followCanary(users, ns, name)
		patchSpec(t, ns, name, obj{"image": n.image("testapp:2")})
		gen := generationOf(t, ns, name)
		tl.mark(t, "image testapp:1 -> testapp:2; steps [0%% with X-Canary: always, 20 s], [50%%, 5 s]")

		// The step of weight 0 until the canary moves to step 2: when its header rule was first
		// seen accepted, and when step 2 began.
		var headerAt, step2At, step2Start time.Time
		last := ""
		waitFor(t, "the promotion", 180*time.Second, func() (bool, error) {
			v := lookCanary(t, ns, name)
			c := v.st.Canary
			if v.st.ObservedGeneration != gen || c == nil {
				return false, nil
			}
			if s := v.summary(name); s != last {
				tl.mark(t, "%s, header route %t", s, c.HeaderRouted)
				last = s
			}
			if c.HeaderRouted && traefikAccepted(v.route) && headerAt.IsZero() && c.Step == 0 {
				headerAt = time.Now()
				recordStory(t, ns, name, "testers", "TestRelease")
			}
			if c.Step >= 1 && step2At.IsZero() {
				step2At = time.Now()
				if c.StepStartTime != nil {
					step2Start = c.StepStartTime.Time
				}
			}
			return c.Phase == webappv1.CanaryPromoted && v.canary == nil && isNormalRoute(v.route, name) && traefikAccepted(v.route) &&
				v.st.Phase == webappv1.PhaseReady, nil
		})
		time.Sleep(time.Second)
		follow.stop()
		usersGot, testersGot := users.stop(), testers.stop()
		tl.mark(t, "users: %s; testers: %s", summarize(usersGot), summarize(testersGot))
		t.Logf("users' requests by step:\n%s", tallyTable(users.tallies(), "v2"))
		if headerAt.IsZero() || step2At.IsZero() {
			t.Fatalf("the header rule seen accepted at %v, step 2 at %v; want both", headerAt, step2At)
		}
		// Before step 2, no user reached the new version; once Traefik routes by the header rule
		// (up to 2.4 s after it is accepted), every tester did. Step 2 began at its
		// stepStartTime, which the hook sets in the answer that gives the route its weight: the
		// watch sees the status after Traefik may route by it, so the time it was seen is no
		// bound (a request 1 ms before it reached v2); stepStartTime, to the second, is one.
		if step2Start.IsZero() {
			t.Fatalf("step 2 seen at %s without a stepStartTime", step2At.Format("15:04:05.000"))
		}
		for _, r := range usersGot {
			if r.version == "v2" && r.at.Before(step2Start) {
				t.Errorf("a user's request reached v2 before step 2 began (%s, its stepStartTime): %s", step2Start.Format("15:04:05.000"), r)
			}
		}
		routed := headerAt.Add(3 * time.Second)
		testersAtZero := 0
		for _, r := range testersGot {
			if r.at.After(routed) && r.at.Before(step2At) {
				testersAtZero++
				if r.version != "v2" {
					t.Errorf("a tester's request at weight 0, the header rule in place since %s, reached %q: %s", headerAt.Format("15:04:05.000"), r.version, r)
				}
			}
		}
		if testersAtZero < 100 {
			t.Errorf("%d testers' requests at weight 0 once the header rule was in place; want the step's 20 s of them", testersAtZero)
		}
		for _, r := range append(usersGot, testersGot...) {
			if r.failed() {
				t.Errorf("failed: %s", r)
			}
		}
	})

	t.Run("undo within the rollback window: back to the previous version with no canary", func(t *testing.T) {
		t.Parallel()
		tl := newTimeline(t)
		const name = "undo"
		host := release(t, name, canaryOf(obj{"steps": []any{obj{"weight": 50, "pauseSeconds": 5}}, "rollbackWindow": obj{"revisions": 1}}))
		promote(t, tl, ns, name, obj{"image": n.image("testapp:2")})
		v := lookCanary(t, ns, name)
		if got := v.st.Canary.StableRevisions; len(got) != 2 {
			t.Fatalf("status.canary.stableRevisions %q; want the promoted revision and the one before", got)
		}
		previous := v.st.Canary.StableRevisions[1]

		users := startLoadTo(tr, host, 3, 20*time.Millisecond)
		from := time.Now()
		patchSpec(t, ns, name, obj{"image": n.image("testapp:1")})
		gen := generationOf(t, ns, name)
		tl.mark(t, "image testapp:2 -> testapp:1 (revision %s), within rollbackWindow", previous)
		last, lastStatus := "", ""
		waitFor(t, "the stable Deployment back on testapp:1", 120*time.Second, func() (bool, error) {
			v := lookCanary(t, ns, name)
			if v.st.ObservedGeneration != gen {
				return false, nil
			}
			c := v.st.Canary
			if s := v.summary(name); s != last {
				tl.mark(t, "%s", s)
				last = s
			}
			if v.canary != nil || !isNormalRoute(v.route, name) {
				t.Fatalf("a canary: Deployment %v, route %s; want none, the route on %s throughout", v.canary != nil, backendsString(v.route), name)
			}
			// Not yet RolledBack is waited for, not failed: Metacontroller may write, after the
			// rollback's status, the answer of a call that saw the parent before it (on the
			// timeline; the next call makes it RolledBack again). A canary never runs meanwhile.
			if c == nil || c.Phase != webappv1.CanaryRolledBack || c.Revision != previous || !strings.Contains(c.Message, "without a canary") {
				if j := jsonString(c); j != lastStatus {
					tl.mark(t, "not yet RolledBack to %s: status.canary %s", previous, j)
					lastStatus = j
				}
				return false, nil
			}
			return v.st.Phase == webappv1.PhaseReady && len(readyPods(t, ns, name)) == 2 && len(podsNow(ns, name)) == 2, nil
		})
		recordStory(t, ns, name, "rollback-window", "TestRelease")
		time.Sleep(time.Second)
		got := users.stop()
		tl.mark(t, "back in %.1fs: %s", time.Since(from).Seconds(), summarize(got))
		tail := 0
		for _, r := range got {
			if r.failed() {
				t.Errorf("failed: %s", r)
			}
			if r.at.After(time.Now().Add(-500*time.Millisecond)) && r.version != "v1" && !r.failed() {
				tail++
			}
		}
		if tail > 0 {
			t.Errorf("%d requests of the last half second answered by another version than v1", tail)
		}
	})

	t.Run("undo outside the rollback window: a canary, as without it", func(t *testing.T) {
		t.Parallel()
		tl := newTimeline(t)
		const name = "outside"
		host := release(t, name, canaryOf(obj{"steps": []any{obj{"weight": 50, "pauseSeconds": 5}}, "rollbackWindow": obj{"revisions": 1}}))
		promote(t, tl, ns, name, obj{"image": n.image("testapp:2")})
		promote(t, tl, ns, name, obj{"env": []any{obj{"name": "TESTAPP_VERSION", "value": "v3"}}})
		users := startLoadTo(tr, host, 3, 20*time.Millisecond)
		patchSpec(t, ns, name, obj{"image": n.image("testapp:1"), "env": nil})
		gen := generationOf(t, ns, name)
		tl.mark(t, "image and env back to testapp:1, two revisions back: outside rollbackWindow")
		waitFor(t, "a canary of testapp:1", 60*time.Second, func() (bool, error) {
			v := lookCanary(t, ns, name)
			c := v.st.Canary
			return v.st.ObservedGeneration == gen && c != nil && c.Phase == webappv1.CanaryProgressing && v.canary != nil, nil
		})
		tl.mark(t, "a canary runs")
		waitStatus(t, ns, name, "the canary promoted", 120*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && st.Canary.Phase == webappv1.CanaryPromoted && st.Phase == webappv1.PhaseReady
		})
		got := users.stop()
		tl.mark(t, "%s", summarize(got))
		for _, r := range got {
			if r.failed() {
				t.Errorf("failed: %s", r)
			}
		}
	})

	bg := blueGreenEnv{ns: ns, tr: tr, n: n, release: release}
	t.Run("blue-green: the preview only with its header, then one switch", func(t *testing.T) { t.Parallel(); bg.preview(t) })
	t.Run("blue-green: an abort within the scale-down delay, and ten switches in a row", func(t *testing.T) { t.Parallel(); bg.switches(t) })
	t.Run("blue-green with the autoscaler: the idle old version lowered, the new one keeps its pods", func(t *testing.T) { t.Parallel(); bg.autoscaled(t) })
}

// canaryOf is a rollout of canary c.
func canaryOf(c obj) obj { return obj{"canary": c} }

// promote changes WebApp name's spec by patch and waits for its canary to be promoted, by
// webapp.example.com/promote once the canary is at a step, and the WebApp Ready.
func promote(t *testing.T, tl *timeline, ns, name string, patch obj) {
	t.Helper()
	patchSpec(t, ns, name, patch)
	gen := generationOf(t, ns, name)
	waitFor(t, fmt.Sprintf("%s promoted", jsonString(patch)), 180*time.Second, func() (bool, error) {
		v := lookCanary(t, ns, name)
		c := v.st.Canary
		if v.st.ObservedGeneration != gen || c == nil {
			return false, nil
		}
		if c.Phase == webappv1.CanaryProgressing || c.Phase == webappv1.CanaryPaused {
			p, _ := client.path("example.com/v1", "WebApp", ns, name)
			client.do("PATCH", p, "application/merge-patch+json", obj{"metadata": obj{"annotations": obj{webappv1.AnnotationPromote: webappv1.AttemptValue(c.Revision, c.Attempt)}}})
		}
		return c.Phase == webappv1.CanaryPromoted && v.canary == nil && isNormalRoute(v.route, name) && v.st.Phase == webappv1.PhaseReady, nil
	})
	tl.mark(t, "%s promoted", jsonString(patch))
}

//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// blueGreenEnv is what TestRelease's blue-green proofs share: its namespace, Traefik, the real
// node, and its release helper.
type blueGreenEnv struct {
	ns      string
	tr      *traefik
	n       *realNode
	release func(t *testing.T, name string, rollout obj, more ...obj) string
}

// previewHeader is the header blueGreen's preview matches.
var previewHeader = http.Header{"X-Preview": {"1"}}

// blueGreen is a blue-green rollout previewed by requests with previewHeader, its old version kept
// delay seconds after the switch, promoted by hand.
func blueGreen(delay int) obj {
	return obj{"blueGreen": obj{
		"preview":               obj{"matches": []any{obj{"headers": []any{obj{"name": "X-Preview", "value": "1"}}}}},
		"scaleDownDelaySeconds": delay,
	}}
}

// annotate sets annotations on WebApp name.
func (e blueGreenEnv) annotate(t *testing.T, name string, a obj) {
	t.Helper()
	p, _ := client.path("example.com/v1", "WebApp", e.ns, name)
	if _, err := client.do("PATCH", p, "application/merge-patch+json", obj{"metadata": obj{"annotations": a}}); err != nil {
		t.Fatal(err)
	}
}

// watch waits up to timeout for done to hold of WebApp name's view, marking each new summary on
// the timeline, and returns the last view.
func (e blueGreenEnv) watch(t *testing.T, tl *timeline, name, what string, timeout time.Duration, done func(v canaryView) bool) canaryView {
	t.Helper()
	var v canaryView
	last := ""
	waitFor(t, what, timeout, func() (bool, error) {
		v = lookCanary(t, e.ns, name)
		if s := v.summary(name); s != last {
			tl.mark(t, "%s", s)
			last = s
		}
		return done(v), nil
	})
	return v
}

// routeAt reports whether v's route splits stable/canary as given, accepted by Traefik.
func routeAt(v canaryView, name string, stable, canary int32) bool {
	sw, cw, ok := splitWeights(v.route, name)
	return ok && sw == stable && cw == canary && traefikAccepted(v.route)
}

// waitPreview waits for the canary of generation gen to be Paused at its preview, the route's
// preview rule accepted, the users' traffic all on the stable Deployment, and full pods of the
// new version available.
func (e blueGreenEnv) waitPreview(t *testing.T, tl *timeline, name string, gen int64, full int) canaryView {
	t.Helper()
	return e.watch(t, tl, name, "the preview in place at full size", 120*time.Second, func(v canaryView) bool {
		c := v.st.Canary
		return v.st.ObservedGeneration == gen && c != nil && c.Phase == webappv1.CanaryPaused && c.HeaderRouted && routeAt(v, name, 100, 0) &&
			countString(v.canary, "status", "availableReplicas") == fmt.Sprint(full)
	})
}

// allOf checks that every request of rs sent within [from, to) got a 200 from version, and that
// there were some.
func allOf(t *testing.T, rs []loadResult, from, to time.Time, version, what string) {
	t.Helper()
	if !from.Before(to) {
		t.Errorf("%s: the window from %s to %s is empty: the test held the state too briefly", what, from.Format("15:04:05.000"), to.Format("15:04:05.000"))
		return
	}
	n := 0
	for _, r := range rs {
		if r.at.Before(from) || !r.at.Before(to) {
			continue
		}
		n++
		if r.failed() || r.version != version {
			t.Errorf("%s: a request between %s and %s answered by %q, want %s: %s", what, from.Format("15:04:05.000"), to.Format("15:04:05.000"), r.version, version, r)
		}
	}
	if n == 0 {
		t.Errorf("%s: no request between %s and %s", what, from.Format("15:04:05.000"), to.Format("15:04:05.000"))
	}
}

// noneFailed fails t for each failed request of rs.
func noneFailed(t *testing.T, rs []loadResult) {
	t.Helper()
	for _, r := range rs {
		if r.failed() {
			t.Errorf("failed: %s", r)
		}
	}
}

// routed is how long after Traefik accepts a route it may still route by the one before (2.4 s
// measured, its providersThrottleDuration of 2 s included).
const routed = 3 * time.Second

// preview: a new version at full size behind its preview, reached only with its header while
// the users get only the old one; promoted by hand, all the traffic switches at once (the route
// never between 0 and 100), stays on it, and no request fails.
func (e blueGreenEnv) preview(t *testing.T) {
	tl := newTimeline(t)
	const name = "bluegreen"
	host := e.release(t, name, blueGreen(5))
	users := startLoadTo(e.tr, host, 2, 20*time.Millisecond)
	previewers := startLoadWith(e.tr, host, previewHeader, 1, 20*time.Millisecond)
	patchSpec(t, e.ns, name, obj{"image": e.n.image("testapp:2")})
	gen := generationOf(t, e.ns, name)
	tl.mark(t, "image testapp:1 -> testapp:2, blue-green previewed by X-Preview: 1")
	v := e.waitPreview(t, tl, name, gen, 2)
	previewAt := time.Now()
	recordStory(t, e.ns, name, "blue-green", "TestRelease")
	if got := countString(v.canary, "spec", "replicas"); got != "2" {
		t.Errorf("the preview runs %s pods; want the stable Deployment's full count, 2", got)
	}
	time.Sleep(8 * time.Second) // the preview, tried
	c := v.st.Canary
	promoteAt := time.Now()
	e.annotate(t, name, obj{webappv1.AnnotationPromote: webappv1.AttemptValue(c.Revision, c.Attempt)})
	tl.mark(t, "promoted by hand")
	var between []string
	var switchedAt time.Time
	e.watch(t, tl, name, "the promotion", 180*time.Second, func(v canaryView) bool {
		if _, cw, ok := splitWeights(v.route, name); ok && cw > 0 && cw < 100 {
			between = append(between, v.summary(name))
		}
		if switchedAt.IsZero() && routeAt(v, name, 0, 100) {
			switchedAt = time.Now()
			recordStory(t, e.ns, name, "blue-green-switch", "TestRelease")
		}
		c := v.st.Canary
		return c != nil && c.Phase == webappv1.CanaryPromoted && v.canary == nil && isNormalRoute(v.route, name) && traefikAccepted(v.route) &&
			v.st.Phase == webappv1.PhaseReady
	})
	time.Sleep(time.Second)
	end := time.Now()
	usersGot, previewersGot := users.stop(), previewers.stop()
	tl.mark(t, "users: %s; previewers: %s", summarize(usersGot), summarize(previewersGot))
	if len(between) > 0 {
		t.Errorf("the route gave the new version a share between 0 and 100: %q", between)
	}
	if switchedAt.IsZero() {
		t.Fatal("the route was never seen to give the new version all the traffic")
	}
	noneFailed(t, append(usersGot, previewersGot...))
	allOf(t, usersGot, time.Time{}, promoteAt, "v1", "the users before the promotion")
	allOf(t, previewersGot, previewAt.Add(routed), promoteAt, "v2", "the previewers")
	allOf(t, usersGot, switchedAt.Add(routed), end, "v2", "the users once switched")
	// One switch: the users' last request of the old version came within a moment of their
	// first of the new.
	var firstNew, lastOld time.Time
	for _, r := range usersGot {
		switch {
		case r.version == "v2" && firstNew.IsZero():
			firstNew = r.at
		case r.version == "v1":
			lastOld = r.at
		}
	}
	if d := lastOld.Sub(firstNew); d > routed {
		t.Errorf("users met both versions for %s after the first reached the new one; want one switch, within %s", d, routed)
	}
	tl.mark(t, "users switched within %s", max(lastOld.Sub(firstNew), 0).Round(time.Millisecond))
}

// switches: switched, then aborted within the scale-down delay, all the traffic goes back at
// once to the old version, which kept its pods; retried, previewed and switched again: ten
// switches in a row under load, each way counted by version, and no request fails.
func (e blueGreenEnv) switches(t *testing.T) {
	tl := newTimeline(t)
	const name = "bg-switch"
	host := e.release(t, name, blueGreen(60))
	users := startLoadTo(e.tr, host, 3, 20*time.Millisecond)
	patchSpec(t, e.ns, name, obj{"image": e.n.image("testapp:2")})
	gen := generationOf(t, e.ns, name)
	tl.mark(t, "image testapp:1 -> testapp:2, blue-green with a scale-down delay of 60 s")
	e.waitPreview(t, tl, name, gen, 2)
	type window struct {
		from, to time.Time
		version  string
	}
	var windows []window
	previewAt := time.Now()
	// Each state is held for hold, so that each window, from routed after the state was seen
	// in place to its end, has requests to count: the switches themselves take under a second.
	const hold = 5 * time.Second
	for i := range 5 {
		time.Sleep(hold) // the preview
		c := webAppStatus(t, e.ns, name).Canary
		promoteAt := time.Now()
		windows = append(windows, window{previewAt.Add(routed), promoteAt, "v1"})
		e.annotate(t, name, obj{webappv1.AnnotationPromote: webappv1.AttemptValue(c.Revision, c.Attempt)})
		e.watch(t, tl, name, fmt.Sprintf("switch %d: all the traffic on the new version", 2*i+1), 60*time.Second, func(v canaryView) bool {
			c := v.st.Canary
			return c != nil && c.Phase == webappv1.CanaryPromoting && c.AllTrafficTime != nil && routeAt(v, name, 0, 100)
		})
		switchedAt := time.Now()
		tl.mark(t, "switch %d in %.1fs", 2*i+1, switchedAt.Sub(promoteAt).Seconds())
		time.Sleep(hold)
		v := lookCanary(t, e.ns, name)
		if got := countString(v.stable, "status", "availableReplicas"); got != "2" {
			t.Errorf("switch %d: the old version has %s pods available; want its 2, kept for the scale-down delay", 2*i+1, got)
		}
		c = v.st.Canary
		abortAt := time.Now()
		windows = append(windows, window{switchedAt.Add(routed), abortAt, "v2"})
		e.annotate(t, name, obj{webappv1.AnnotationAbort: webappv1.AttemptValue(c.Revision, c.Attempt)})
		e.watch(t, tl, name, fmt.Sprintf("switch %d: all the traffic back on the old version", 2*i+2), 60*time.Second, func(v canaryView) bool {
			c := v.st.Canary
			return c != nil && c.Phase == webappv1.CanaryAborted && routeAt(v, name, 100, 0)
		})
		backAt := time.Now()
		if d := backAt.Sub(abortAt); d > 10*time.Second {
			t.Errorf("switch %d: back %s after the abort; want at once", 2*i+2, d.Round(time.Millisecond))
		}
		tl.mark(t, "switch %d, the abort, in %.1fs", 2*i+2, backAt.Sub(abortAt).Seconds())
		time.Sleep(hold)
		windows = append(windows, window{backAt.Add(routed), time.Now(), "v1"})
		if i == 4 {
			break
		}
		st := webAppStatus(t, e.ns, name)
		c = st.Canary
		e.annotate(t, name, obj{webappv1.AnnotationRetry: webappv1.RetryValue(c.Revision, c.Attempt, c.Retries)})
		e.waitPreview(t, tl, name, st.ObservedGeneration, 2)
		previewAt = time.Now()
	}
	got := users.stop()
	tl.mark(t, "users: %s", summarize(got))
	noneFailed(t, got)
	for i, w := range windows {
		allOf(t, got, w.from, w.to, w.version, fmt.Sprintf("window %d", i+1))
	}
}

// autoscaled: with spec.autoscaling, the HorizontalPodAutoscaler drives the stable Deployment, and
// the preview follows its count. Once all the traffic is on the new version, the autoscaler sees
// the old one idle and lowers it: the new version keeps its pods and all the traffic, the hook
// writes the stable Deployment's count back to nothing, and no request fails. The cluster has no
// metrics API, so the test scales the stable Deployment through its scale subresource, as the
// autoscaler does.
func (e blueGreenEnv) autoscaled(t *testing.T) {
	tl := newTimeline(t)
	const name = "bg-hpa"
	host := e.release(t, name, blueGreen(20), obj{"autoscaling": obj{"minReplicas": 2, "maxReplicas": 4}})
	scale := func(n int) {
		p, _ := client.path("apps/v1", "Deployment", e.ns, name)
		if _, err := client.do("PATCH", p+"/scale", "application/merge-patch+json", obj{"spec": obj{"replicas": n}}); err != nil {
			t.Fatal(err)
		}
		tl.mark(t, "Deployment %s scaled to %d through /scale, as the autoscaler does", name, n)
	}
	users := startLoadTo(e.tr, host, 2, 20*time.Millisecond)
	patchSpec(t, e.ns, name, obj{"image": e.n.image("testapp:2")})
	gen := generationOf(t, e.ns, name)
	tl.mark(t, "image testapp:1 -> testapp:2, blue-green with autoscaling 2 to 4")
	e.waitPreview(t, tl, name, gen, 2)
	scale(3)
	e.waitPreview(t, tl, name, gen, 3) // the preview follows the autoscaler's count
	c := webAppStatus(t, e.ns, name).Canary
	e.annotate(t, name, obj{webappv1.AnnotationPromote: webappv1.AttemptValue(c.Revision, c.Attempt)})
	e.watch(t, tl, name, "all the traffic on the new version", 60*time.Second, func(v canaryView) bool {
		c := v.st.Canary
		return c != nil && c.Phase == webappv1.CanaryPromoting && c.AllTrafficTime != nil && routeAt(v, name, 0, 100)
	})
	scale(2)
	// Until the traffic goes back to the stable Deployment: the new version keeps its 3 pods, the
	// stable Deployment the autoscaler's 2.
	fewest, most := 3.0, 2.0
	e.watch(t, tl, name, "the promotion", 180*time.Second, func(v canaryView) bool {
		if _, cw, ok := splitWeights(v.route, name); ok && cw == 100 {
			if n, ok := field(v.canary, "spec", "replicas").(float64); ok {
				fewest = min(fewest, n)
			}
		}
		if n, ok := field(v.stable, "spec", "replicas").(float64); ok {
			most = max(most, n)
		}
		c := v.st.Canary
		return c != nil && c.Phase == webappv1.CanaryPromoted && v.canary == nil && isNormalRoute(v.route, name) && traefikAccepted(v.route) &&
			v.st.Phase == webappv1.PhaseReady
	})
	got := users.stop()
	tl.mark(t, "users: %s; the new version had at least %v pods while it had all the traffic, the stable Deployment at most %v", summarize(got), fewest, most)
	noneFailed(t, got)
	if fewest < 3 {
		t.Errorf("the new version went down to %v pods while it had all the traffic; want the 3 it had at the switch", fewest)
	}
	if most > 2 {
		t.Errorf("the stable Deployment was asked for %v pods after the autoscaler's 2; want the autoscaler's count alone", most)
	}
	if n := replicasOf(t, e.ns, name); n != float64(2) {
		t.Errorf("Deployment %s has %v replicas after the promotion; want the autoscaler's 2", name, n)
	}
}

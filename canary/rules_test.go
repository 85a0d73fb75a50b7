package canary_test

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

func TestIdle(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan *webappv1.Canary
		left bool
		want bool
	}{
		{"no canary asked, none left: nothing to decide", nil, false, true},
		{"no canary asked, its children left: they wind down", nil, true, false},
		{"a canary asked, nothing yet", plan(), false, false},
		{"a canary asked, its children observed", plan(), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := canary.Idle(tc.plan, tc.left); got != tc.want {
				t.Errorf("Idle = %t; want %t", got, tc.want)
			}
		})
	}
}

func TestAtAStep(t *testing.T) {
	for _, p := range append([]webappv1.CanaryPhase{canary.None}, webappv1.CanaryPhases...) {
		want := p == webappv1.CanaryProgressing || p == webappv1.CanaryPaused
		if got := canary.AtAStep(p); got != want {
			t.Errorf("AtAStep(%q) = %t; want %t", p, got, want)
		}
	}
}

func TestStepIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		plan *webappv1.Canary
		step int32
		want int
	}{
		{"the first step", plan(), 0, 0},
		{"the last step", plan(), 2, 2},
		{"the steps edited to fewer: the last", plan(), 5, 2},
		{"no plan: the status's", nil, 5, 5},
		{"a plan without steps: the status's", &webappv1.Canary{}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := canary.StepIndex(tc.plan, &webappv1.CanaryStatus{Step: tc.step}); got != tc.want {
				t.Errorf("StepIndex = %d; want %d", got, tc.want)
			}
		})
	}
}

func TestTarget(t *testing.T) {
	for _, tc := range []struct {
		name   string
		plan   *webappv1.Canary
		st     webappv1.CanaryStatus
		want   int32
		wantOK bool
	}{
		{"at the first step", plan(), webappv1.CanaryStatus{Phase: webappv1.CanaryProgressing}, 10, true},
		{"paused at the last step", plan(), webappv1.CanaryStatus{Phase: webappv1.CanaryPaused, Step: 2}, 60, true},
		{"the steps edited to fewer: the last one's", plan(), webappv1.CanaryStatus{Phase: webappv1.CanaryProgressing, Step: 7}, 60, true},
		{"promoting: all of it", plan(), webappv1.CanaryStatus{Phase: webappv1.CanaryPromoting, Step: 1}, 100, true},
		{"promoting without a plan: all of it", nil, webappv1.CanaryStatus{Phase: webappv1.CanaryPromoting}, 100, true},
		{"at a step without a plan: none", nil, webappv1.CanaryStatus{Phase: webappv1.CanaryProgressing}, 0, false},
		{"promoted: none", plan(), webappv1.CanaryStatus{Phase: webappv1.CanaryPromoted, Step: 2}, 0, false},
		{"aborted: none", plan(), webappv1.CanaryStatus{Phase: webappv1.CanaryAborted, Step: 1}, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := canary.Target(tc.plan, &tc.st)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("Target = %d, %t; want %d, %t", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestPauseEnd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		plan   *webappv1.Canary
		st     webappv1.CanaryStatus
		want   time.Time
		wantOK bool
	}{
		{"a timed step, its pause started", plan(), webappv1.CanaryStatus{Step: 1, PauseStartTime: at(0)}, t0.Add(5 * time.Second), true},
		{"a timed step, its pause not started", plan(), webappv1.CanaryStatus{Step: 1}, time.Time{}, false},
		{"a step until promoted", plan(), webappv1.CanaryStatus{Step: 2, PauseStartTime: at(0)}, time.Time{}, false},
		{"the steps edited to fewer: the last one's", plan(), webappv1.CanaryStatus{Step: 4, PauseStartTime: at(0)}, time.Time{}, false},
		{"no plan", nil, webappv1.CanaryStatus{PauseStartTime: at(0)}, time.Time{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := canary.PauseEnd(tc.plan, &tc.st)
			if !got.Equal(tc.want) || ok != tc.wantOK {
				t.Errorf("PauseEnd = %s, %t; want %s, %t", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestAnalysisPassed(t *testing.T) {
	analyzedPlan := func() *webappv1.Canary {
		p := plan()
		p.Analysis = &webappv1.CanaryAnalysis{}
		return p
	}
	check := func(r webappv1.CheckResult, step int32, d time.Duration) *webappv1.AnalysisStatus {
		return &webappv1.AnalysisStatus{Result: r, Step: step, CheckTime: *at(d)}
	}
	for _, tc := range []struct {
		name string
		plan *webappv1.Canary
		st   webappv1.CanaryStatus
		want bool
	}{
		{"no analysis", plan(), webappv1.CanaryStatus{Step: 1}, true},
		{"no plan", nil, webappv1.CanaryStatus{Step: 1}, true},
		{"no check yet", analyzedPlan(), webappv1.CanaryStatus{Step: 1, PauseStartTime: at(0)}, false},
		{"passed at this step, after the weight was in place", analyzedPlan(), webappv1.CanaryStatus{Step: 1, PauseStartTime: at(0), Analysis: check(webappv1.CheckPassed, 1, 3*time.Second)}, true},
		{"passed as the weight was in place", analyzedPlan(), webappv1.CanaryStatus{Step: 1, PauseStartTime: at(0), Analysis: check(webappv1.CheckPassed, 1, 0)}, true},
		{"passed before the weight was in place", analyzedPlan(), webappv1.CanaryStatus{Step: 1, PauseStartTime: at(0), Analysis: check(webappv1.CheckPassed, 1, -time.Second)}, false},
		{"passed, the weight not in place", analyzedPlan(), webappv1.CanaryStatus{Step: 1, Analysis: check(webappv1.CheckPassed, 1, 3*time.Second)}, false},
		{"passed at the step before", analyzedPlan(), webappv1.CanaryStatus{Step: 1, PauseStartTime: at(0), Analysis: check(webappv1.CheckPassed, 0, 3*time.Second)}, false},
		{"passed at the last step, the steps edited to fewer", analyzedPlan(), webappv1.CanaryStatus{Step: 5, PauseStartTime: at(0), Analysis: check(webappv1.CheckPassed, 2, 3*time.Second)}, true},
		{"inconclusive", analyzedPlan(), webappv1.CanaryStatus{Step: 1, PauseStartTime: at(0), Analysis: check(webappv1.CheckInconclusive, 1, 3*time.Second)}, false},
		{"failed", analyzedPlan(), webappv1.CanaryStatus{Step: 1, PauseStartTime: at(0), Analysis: check(webappv1.CheckFailed, 1, 3*time.Second)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := canary.AnalysisPassed(tc.plan, &tc.st); got != tc.want {
				t.Errorf("AnalysisPassed = %t; want %t", got, tc.want)
			}
		})
	}
}

func TestScaleDownDelay(t *testing.T) {
	withDelay := plan()
	withDelay.ScaleDownDelaySeconds = ptr(int32(30))
	for _, tc := range []struct {
		name string
		plan *webappv1.Canary
		want time.Duration
	}{
		{"the plan's", withDelay, 30 * time.Second},
		{"the default", plan(), webappv1.DefaultScaleDownDelaySeconds * time.Second},
		{"no plan: the default", nil, webappv1.DefaultScaleDownDelaySeconds * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := canary.ScaleDownDelay(tc.plan); got != tc.want {
				t.Errorf("ScaleDownDelay = %s; want %s", got, tc.want)
			}
		})
	}
}

func TestAbortTooLate(t *testing.T) {
	delay := webappv1.DefaultScaleDownDelaySeconds * time.Second
	now := t0.Add(time.Minute)
	promoting := func(edit func(*webappv1.CanaryStatus)) webappv1.CanaryStatus {
		st := webappv1.CanaryStatus{Phase: webappv1.CanaryPromoting, Revision: "new", Step: 2}
		if edit != nil {
			edit(&st)
		}
		return st
	}
	allTrafficAt := func(d time.Duration) func(*webappv1.CanaryStatus) {
		return func(st *webappv1.CanaryStatus) { t := metav1.NewTime(now.Add(d)); st.AllTrafficTime = &t }
	}
	weight := func(w int32) func(*webappv1.CanaryStatus) {
		return func(st *webappv1.CanaryStatus) { st.Weight = &w }
	}
	for _, tc := range []struct {
		name   string
		routed bool
		st     webappv1.CanaryStatus
		want   bool
	}{
		{"routed, the route not seen to give the canary all the traffic", true, promoting(nil), false},
		{"routed, all the traffic for less than the delay", true, promoting(allTrafficAt(-delay + time.Second)), false},
		{"routed, all the traffic for the delay", true, promoting(allTrafficAt(-delay)), true},
		{"routed, all the traffic for longer", true, promoting(allTrafficAt(-time.Hour)), true},
		{"routed, the weight at 100 but the route not seen yet", true, promoting(weight(100)), false},
		{"no route, the pods cover part of the traffic", false, promoting(weight(60)), false},
		{"no route, no weight", false, promoting(nil), false},
		{"no route, the pods cover all the traffic: at once", false, promoting(weight(100)), true},
		{"at a step", true, webappv1.CanaryStatus{Phase: webappv1.CanaryProgressing, AllTrafficTime: at(0)}, false},
		{"promoted", false, webappv1.CanaryStatus{Phase: webappv1.CanaryPromoted, Weight: ptr(int32(100))}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := canary.AbortTooLate(plan(), tc.routed, &tc.st, now); got != tc.want {
				t.Errorf("AbortTooLate = %t; want %t", got, tc.want)
			}
		})
	}
}

// TestAbortTooLateAsTheMachine holds AbortTooLate, the status's reading, to what the machine
// does with an abort asked while promoting, when what it observes agrees with the status: an
// abort acts exactly when it is not too late.
func TestAbortTooLateAsTheMachine(t *testing.T) {
	delay := webappv1.DefaultScaleDownDelaySeconds * time.Second
	for _, tc := range []struct {
		name string
		edit func(*canary.Input)
	}{
		{"routed, the canary at 60 %", func(in *canary.Input) {
			in.Canary, in.Route = ready(3), split(60, true)
		}},
		{"routed, all the traffic for less than the delay", func(in *canary.Input) {
			in.Last.AllTrafficTime = at(time.Minute - delay + time.Second)
			in.Canary, in.Route = ready(4), split(100, true)
		}},
		{"routed, all the traffic for the delay", func(in *canary.Input) {
			in.Last.AllTrafficTime = at(time.Minute - delay)
			in.Canary, in.Route = ready(4), split(100, true)
		}},
		{"no route, the pods cover 60 %", func(in *canary.Input) {
			in.Routed, in.Route, in.Canary = false, nil, ready(3)
			in.Last.Weight = ptr(int32(60))
		}},
		{"no route, the pods cover all of it", func(in *canary.Input) {
			in.Routed, in.Route, in.Canary = false, nil, ready(4)
			in.Last.Weight = ptr(int32(100))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Abort = running(webappv1.CanaryPromoting, 2, nil), true, "new"
				tc.edit(in)
			})
			tooLate := canary.AbortTooLate(in.Plan, in.Routed, in.Last, in.Now)
			out := canary.Next(in)
			aborted := out.Status != nil && out.Status.Phase == webappv1.CanaryAborted
			if aborted == tooLate {
				t.Errorf("AbortTooLate = %t, and the machine aborted = %t (rows %q); want the one the other's opposite", tooLate, aborted, out.Fired)
			}
		})
	}
}

func TestWithinRollbackWindow(t *testing.T) {
	window := func(n int32) *webappv1.Canary {
		p := plan()
		p.RollbackWindow = &webappv1.RollbackWindow{Revisions: n}
		return p
	}
	listed := &webappv1.CanaryStatus{StableRevisions: []string{"e", "d", "c", "b"}}
	for _, tc := range []struct {
		name             string
		plan             *webappv1.Canary
		st               *webappv1.CanaryStatus
		stable, revision string
		want             bool
	}{
		{"the previous revision, in a window of 1", window(1), listed, "e", "d", true},
		{"2 back, in a window of 1: outside", window(1), listed, "e", "c", false},
		{"2 back, in a window of 2", window(2), listed, "e", "c", true},
		{"3 back, in a window of 3", window(3), listed, "e", "b", true},
		{"never stable", window(3), listed, "e", "x", false},
		{"the stable one: nothing to go back to", window(3), listed, "e", "e", false},
		{"the stable Deployment mid-rollback to d, an older observation: d still within", window(1), listed, "d", "e", true},
		{"the stable's revision not told: the list counts from its first", window(1), listed, "", "e", true},
		{"no window", plan(), listed, "e", "d", false},
		{"no plan", nil, listed, "e", "d", false},
		{"no status", window(1), nil, "e", "d", false},
		{"no revision", window(1), listed, "e", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := canary.WithinRollbackWindow(tc.plan, tc.st, tc.stable, tc.revision); got != tc.want {
				t.Errorf("WithinRollbackWindow = %t; want %t", got, tc.want)
			}
		})
	}
}

// TestRolledBackWithinWindow holds RolledBackWithinWindow, the status's reading, to the machine's
// rollbacks: true for each of its rollbacks within the rollback window, from a promotion, from a
// step and from an abort, and false for a canary rolled back by setting the template back.
func TestRolledBackWithinWindow(t *testing.T) {
	window := func(edit func(*canary.Input)) canary.Input {
		return input(func(in *canary.Input) {
			in.Plan.RollbackWindow = &webappv1.RollbackWindow{Revisions: 2}
			in.Stable.RolledOut = true
			edit(in)
		})
	}
	for _, tc := range []struct {
		name string
		in   canary.Input
		want bool
	}{
		{"promoted, the template set back to the revision before, within the window", window(func(in *canary.Input) {
			in.Revision = "old"
			in.Last = &webappv1.CanaryStatus{Revision: "new", Phase: webappv1.CanaryPromoted, Step: 2, StepStartTime: at(0), StableRevisions: []string{"new", "old"}}
			in.Stable = &canary.Stable{Revision: "new", Complete: true, RolledOut: true}
			in.Route = &canary.Route{Accepted: true}
		}), true},
		{"at a step, the template set to a revision the window lists", window(func(in *canary.Input) {
			in.Revision = "older"
			in.Last = running(webappv1.CanaryProgressing, 1, func(st *webappv1.CanaryStatus) { st.StableRevisions = []string{"old", "older"} })
			in.ServicesObserved, in.Canary, in.Route = true, ready(2), split(30, true)
		}), true},
		{"aborted, the template set to a revision the window lists", window(func(in *canary.Input) {
			in.Revision = "older"
			in.Last = running(webappv1.CanaryAborted, 0, func(st *webappv1.CanaryStatus) { st.StableRevisions = []string{"old", "older"} })
			in.Canary, in.Route = &canary.Deployment{Aborted: "new", ScaledDown: true}, &canary.Route{Accepted: true}
		}), true},
		{"at a step, the template set back to the stable one: a canary rolled back", window(func(in *canary.Input) {
			in.Revision = "old"
			in.Last = running(webappv1.CanaryProgressing, 1, func(st *webappv1.CanaryStatus) { st.StableRevisions = []string{"old"} })
			in.ServicesObserved, in.Canary, in.Route = true, ready(2), split(30, true)
		}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := canary.Next(tc.in)
			if out.Status == nil || out.Status.Phase != webappv1.CanaryRolledBack {
				t.Fatalf("the machine's status %+v (rows %q); want RolledBack", out.Status, out.Fired)
			}
			if got := canary.RolledBackWithinWindow(out.Status); got != tc.want {
				t.Errorf("RolledBackWithinWindow = %t; want %t (rows %q)", got, tc.want, out.Fired)
			}
		})
	}
	for _, st := range []*webappv1.CanaryStatus{nil, {Revision: "old", Phase: webappv1.CanaryPromoted}} {
		if canary.RolledBackWithinWindow(st) {
			t.Errorf("RolledBackWithinWindow(%+v) = true; want false", st)
		}
	}
}

func TestStableRevisions(t *testing.T) {
	window := func(n int32) *webappv1.Canary {
		p := plan()
		p.RollbackWindow = &webappv1.RollbackWindow{Revisions: n}
		return p
	}
	list := func(r ...string) *webappv1.CanaryStatus { return &webappv1.CanaryStatus{StableRevisions: r} }
	for _, tc := range []struct {
		name      string
		plan      *webappv1.Canary
		st        *webappv1.CanaryStatus
		stable    string
		rolledOut bool
		want      []string
	}{
		{"the first", window(2), list(), "a", true, []string{"a"}},
		{"a new one, first", window(2), list("a"), "b", true, []string{"b", "a"}},
		{"listed first already: the same list", window(2), list("b", "a"), "b", true, []string{"b", "a"}},
		{"listed further back: moved first, once", window(2), list("b", "a"), "a", true, []string{"a", "b"}},
		{"not rolled out yet: not listed", window(2), list("b", "a"), "c", false, []string{"b", "a"}},
		{"not told: not listed", window(2), list("b", "a"), "", true, []string{"b", "a"}},
		{"the window and the one it runs, no more", window(2), list("c", "b", "a"), "d", true, []string{"d", "c", "b"}},
		{"a window made smaller: cut", window(1), list("c", "b", "a"), "c", true, []string{"c", "b"}},
		{"no window: none", plan(), list("c", "b"), "c", true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := slices.Clone(tc.st.StableRevisions)
			got := canary.StableRevisions(tc.plan, tc.st, tc.stable, tc.rolledOut)
			if !slices.Equal(got, tc.want) {
				t.Errorf("StableRevisions = %q; want %q", got, tc.want)
			}
			if !slices.Equal(tc.st.StableRevisions, before) {
				t.Errorf("the status's list changed to %q", tc.st.StableRevisions)
			}
		})
	}
}

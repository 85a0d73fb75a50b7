package canary

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// This file holds the canary's rules that are read from the spec's plan and a canary status
// alone: the machine reads them (next.go, table.go), and so do kubectl webapp's commands and
// screens, so that what they say and refuse is what the machine does.

// Idle reports whether there is no canary to decide, so that Next need not run: the spec asks for
// none (plan is nil) and none of a canary's children is left (left: the canary Deployment, or
// either of the Services <name>-canary and <name>-stable, is observed). A route left split, by
// hand or by an older hook, is not a canary's child: without a canary it goes back to the
// Service <name> at once. So a WebApp that does not use the feature costs nothing more.
func Idle(plan *webappv1.Canary, left bool) bool { return plan == nil && !left }

// AtAStep reports whether a canary in phase p is at a step: Progressing or Paused. Only then do
// its checks and its analysis run, and may it be promoted, or its step ended.
func AtAStep(p webappv1.CanaryPhase) bool { return slices.Contains(atAStep, p) }

// StepIndex is the index, from 0, of the step a canary whose status is st is at: st.Step, or
// the last of plan's steps when they were edited to fewer since. Without a plan, or one without
// steps (the spec asks for no canary any more), it is st.Step.
func StepIndex(plan *webappv1.Canary, st *webappv1.CanaryStatus) int {
	if plan == nil || len(plan.Steps) == 0 {
		return int(st.Step)
	}
	return min(int(st.Step), len(plan.Steps)-1)
}

// Target is the weight the phase of a canary whose status is st asks for: its step's
// (StepIndex) at a step, 100 while promoting. ok is false in any other phase, and at a step
// without a plan or steps.
func Target(plan *webappv1.Canary, st *webappv1.CanaryStatus) (weight int32, ok bool) {
	switch {
	case st.Phase == webappv1.CanaryPromoting:
		return 100, true
	case !AtAStep(st.Phase) || plan == nil || len(plan.Steps) == 0:
		return 0, false
	}
	return plan.Steps[StepIndex(plan, st)].Weight, true
}

// PauseEnd is when the pause of the step a canary whose status is st is at runs out:
// pauseSeconds after its weight was in place (st.PauseStartTime). ok is false for a step that
// waits for a person (no pauseSeconds), before the pause starts, and without a plan or steps.
func PauseEnd(plan *webappv1.Canary, st *webappv1.CanaryStatus) (end time.Time, ok bool) {
	if plan == nil || len(plan.Steps) == 0 || st.PauseStartTime == nil {
		return time.Time{}, false
	}
	d, timed := pauseOf(plan.Steps[StepIndex(plan, st)])
	if !timed {
		return time.Time{}, false
	}
	return st.PauseStartTime.Add(d), true
}

// pauseOf is a step's pauseSeconds as a duration, and whether the step is timed.
func pauseOf(step webappv1.CanaryStep) (time.Duration, bool) {
	if step.Kind() != webappv1.StepTimed {
		return 0, false
	}
	return time.Duration(*step.PauseSeconds) * time.Second, true
}

// AnalysisPassed reports whether the step a canary whose status is st is at may go on as far as
// plan's analysis goes: the plan has none, or the latest check (st.Analysis) passed, at this step
// (StepIndex), once its weight was in place (st.PauseStartTime). A nil plan has no analysis.
func AnalysisPassed(plan *webappv1.Canary, st *webappv1.CanaryStatus) bool {
	if plan == nil || plan.Analysis == nil {
		return true
	}
	r := st.Analysis
	return r != nil && r.Result == webappv1.CheckPassed && int(r.Step) == StepIndex(plan, st) &&
		st.PauseStartTime != nil && !r.CheckTime.Before(st.PauseStartTime)
}

// ScaleDownDelay is plan's scaleDownDelaySeconds, or webappv1.DefaultScaleDownDelaySeconds
// without a plan or a value: how long a Gateway is given to route by the new weights before the
// pods the route took traffic away from may go, or the stable Deployment takes the template.
func ScaleDownDelay(plan *webappv1.Canary) time.Duration {
	if plan != nil && plan.ScaleDownDelaySeconds != nil {
		return time.Duration(*plan.ScaleDownDelaySeconds) * time.Second
	}
	return webappv1.DefaultScaleDownDelaySeconds * time.Second
}

// delayOver reports whether plan's scale-down delay has passed at now since at, when the route
// was seen to take traffic away from pods. Without a route (routed false) there is no Gateway
// to wait for: it is over at once. With one, it is not before the route is seen (at nil).
func delayOver(plan *webappv1.Canary, routed bool, at *metav1.Time, now time.Time) bool {
	return !routed || at != nil && !now.Before(at.Add(ScaleDownDelay(plan)))
}

// AbortTooLate reports whether a canary being promoted (st.Phase Promoting) is past the point
// where an abort acts, as its status shows it: the canary has all the traffic and the stable
// Deployment takes the template. With a route (routed) that is plan's scale-down delay after
// the route was seen to give the canary all the traffic (st.AllTrafficTime); without one, at once
// once its available pods cover it all (st.Weight 100). It is false in any other phase: at a
// step an abort acts, and once the canary ended there is nothing to abort. The machine's row
// "abort asked while promoting, before the stable Deployment takes the template" decides the
// same from what it observes.
func AbortTooLate(plan *webappv1.Canary, routed bool, st *webappv1.CanaryStatus, now time.Time) bool {
	if st.Phase != webappv1.CanaryPromoting {
		return false
	}
	allTraffic := st.AllTrafficTime != nil
	if !routed {
		allTraffic = st.Weight != nil && *st.Weight == 100
	}
	return allTraffic && delayOver(plan, routed, st.AllTrafficTime, now)
}

// WithinRollbackWindow reports whether revision goes back without a canary: plan has a rollback
// window, revision is not stable (the revision the stable Deployment runs, "" when that cannot be
// told), and it is among the window's revisions of the canary status st (st.StableRevisions,
// newest first) other than stable's, no further than plan.RollbackWindow.Revisions. It is false
// without a plan, a window, a status or a revision, and for stable itself (nothing to go back
// to).
func WithinRollbackWindow(plan *webappv1.Canary, st *webappv1.CanaryStatus, stable, revision string) bool {
	if plan == nil || plan.RollbackWindow == nil || st == nil || revision == "" || revision == stable {
		return false
	}
	n := 0
	for _, r := range st.StableRevisions {
		if r == stable {
			continue
		}
		if n >= int(plan.RollbackWindow.Revisions) {
			return false
		}
		if r == revision {
			return true
		}
		n++
	}
	return false
}

// RolledBackWithinWindow reports whether the canary status st is a rollback within the rollback
// window: RolledBack to a revision the stable Deployment ran before (st.Revision), with no
// canary, so that no step of it ever started (the row "a revision the stable Deployment ran
// within the rollback window" leaves stepStartTime unset). It is false for a nil st, and for a
// canary rolled back by setting the template back, which started at a step; st.Revision is then
// the canary's.
func RolledBackWithinWindow(st *webappv1.CanaryStatus) bool {
	return st != nil && st.Phase == webappv1.CanaryRolledBack && st.StepStartTime == nil
}

// StableRevisions is what the canary status st's list of the stable Deployment's revisions
// (status.canary.stableRevisions) becomes when the stable Deployment is seen to run stable, its
// rollout of it complete (rolledOut): stable first, then the others in order, each once, at most
// plan.RollbackWindow.Revisions + 1 in all. It is nil without a rollback window, and st's own
// list when stable cannot be told ("") or is not rolled out.
func StableRevisions(plan *webappv1.Canary, st *webappv1.CanaryStatus, stable string, rolledOut bool) []string {
	if plan == nil || plan.RollbackWindow == nil {
		return nil
	}
	list := st.StableRevisions
	if stable != "" && rolledOut && (len(list) == 0 || list[0] != stable) {
		list = append([]string{stable}, slices.DeleteFunc(slices.Clone(list), func(r string) bool { return r == stable })...)
	}
	if most := int(plan.RollbackWindow.Revisions) + 1; len(list) > most {
		list = list[:most]
	}
	return list
}

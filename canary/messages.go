package canary

import (
	"fmt"
	"strings"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/internal/english"
)

// weight is status.canary.weight in o: the weight the observed route gives the canary, or,
// while the canary serves before its promotion hands the traffic back, 0 with a route that does
// not split yet and the weight its available pods cover without a route; nil otherwise.
func (s *state) weight(o *Output) *int32 {
	var w int32
	switch {
	case s.routeSplit():
		w = s.in.Route.CanaryWeight
	case !o.Serving || o.Stage == HandingBack || o.Stage == Draining:
		return nil
	case !s.in.Routed:
		w = s.safeWeight()
	}
	return &w
}

// message is status.canary.message in o: what the canary's stage is, and what holds it.
func (s *state) message(o *Output) string {
	var msg string
	switch o.Stage {
	case AtStep:
		msg = s.stepMessage()
	case ScalingUp:
		if s.delayedTakeOver() {
			msg = fmt.Sprintf("Promoting: the canary has all the traffic; Deployment %s takes its template at %s, %s after the route was seen to give it all, as a Gateway may route by the old weights for a while.", s.in.Name, s.next.AllTrafficTime.Add(s.scaleDownDelay()).UTC().Format(time.RFC3339), s.scaleDownDelay())
			break
		}
		msg = fmt.Sprintf("Promoting: the canary scales to %d pods (%d available) and then takes all the traffic.", s.fullCount(), s.available())
	case TakingOver:
		msg = fmt.Sprintf("Promoting: the canary has all the traffic while Deployment %s rolls to revision %s.", s.in.Name, s.in.Revision)
	case HandingBack:
		msg = "Promoting: Deployment " + s.in.Name + " runs the canary's template; the traffic goes back to it."
		if s.delayedScaleDown() {
			msg = fmt.Sprintf("Promoting: Deployment %s runs the canary's template and has all the traffic; the canary keeps its pods until %s, %s after the route was seen to give it none, as a Gateway may route by the old weights for a while.", s.in.Name, s.next.NoTrafficTime.Add(s.scaleDownDelay()).UTC().Format(time.RFC3339), s.scaleDownDelay())
		}
	case Draining:
		msg = "Promoting: Deployment " + s.in.Name + " runs the canary's template and has all the traffic; the canary scales to zero."
	default:
		msg = s.endMessage()
	}
	if o.Serving && !s.in.Routed && o.Stage != HandingBack && o.Stage != Draining {
		msg += " Without an HTTPRoute the Service " + s.in.Name + " splits the traffic by pod count, not by weight."
	}
	if n := s.next.FailedChecks; n > 0 && o.Serving && s.phase() != webappv1.CanaryPromoting {
		msg += fmt.Sprintf(" %d of %d failed checks: %s.", n, *s.in.Plan.MaxFailedChecks, strings.TrimSuffix(s.next.LastFailedCheck, "."))
	}
	if r := s.next.Analysis; r != nil && o.Stage == AtStep {
		msg += " " + s.analysisMessage(r)
	}
	return msg
}

// stepMessage says where a canary at a step stands.
func (s *state) stepMessage() string {
	step := fmt.Sprintf("Step %d of %d", s.stepIndex()+1, len(s.in.Plan.Steps))
	if s.in.BlueGreen {
		step = "Preview"
	}
	w, want := s.target(), s.replicasFor(s.target())
	switch {
	case s.phase() == webappv1.CanaryPaused:
		return fmt.Sprintf("%s: %d%% of the traffic%s on the canary, paused until it is promoted (annotate the WebApp with %s=%s).", step, w, s.andHeaders(), webappv1.AnnotationPromote, webappv1.AttemptValue(s.next.Revision, s.next.Attempt))
	case s.next.PauseStartTime != nil:
		d, _ := s.pause()
		msg := fmt.Sprintf("%s: %d%% of the traffic%s on the canary, held for %s from %s", step, w, s.andHeaders(), d, s.next.PauseStartTime.UTC().Format(time.RFC3339))
		if !s.in.Now.Before(s.next.PauseStartTime.Add(d)) && !s.analysisPassed() {
			msg += "; the pause is over, and the step goes on after a check passes"
		}
		return msg + "."
	case s.available() < want || s.in.Canary == nil || s.in.Canary.Replicas < want:
		goes := "goes"
		if s.andHeaders() != "" {
			goes = "go"
		}
		return fmt.Sprintf("%s: waiting for %d canary %s to be available (%d %s) before %d%% of the traffic%s %s to it.", step, want, english.Plural(want, "pod", "pods"), s.available(), english.Plural(s.available(), "is", "are"), w, s.andHeaders(), goes)
	case s.in.Routed:
		return fmt.Sprintf("%s: waiting for the HTTPRoute to send %d%% of the traffic%s to the canary and for its Gateways to accept it.", step, w, s.andHeaders())
	}
	return fmt.Sprintf("%s: %d%% of the traffic%s on the canary.", step, w, s.andHeaders())
}

// andHeaders is what a step sends the canary besides its weight: " and the requests its header
// route matches" with a header route and a route, "" otherwise. A constant, so that a message of
// a canary without a header route costs nothing more.
func (s *state) andHeaders() string {
	switch {
	case s.headerRoute() && s.in.Routed && s.in.BlueGreen:
		return " and the requests its preview matches"
	case s.headerRoute() && s.in.Routed:
		return " and the requests its header route matches"
	}
	return ""
}

// endMessage says how the last canary ended.
func (s *state) endMessage() string {
	switch s.phase() {
	case webappv1.CanaryPromoted:
		return fmt.Sprintf("Revision %s was promoted: the stable Deployment runs it.", s.next.Revision)
	case webappv1.CanaryRolledBack:
		if s.next.Revision == s.in.Revision && s.in.Plan != nil && s.in.Plan.RollbackWindow != nil { // rollBackWithinWindow's
			return fmt.Sprintf("Rolled back to revision %s without a canary: the stable Deployment ran it within spec.rollout.%s.rollbackWindow (its last %s before the one it runs), and goes back to it as a Deployment rolls.",
				s.next.Revision, s.way(), english.Count(s.in.Plan.RollbackWindow.Revisions, "revision"))
		}
		return fmt.Sprintf("Revision %s was rolled back: the pod template is the stable one again.", s.next.Revision)
	case webappv1.CanaryAborted:
		if last := s.in.Last; last != nil && last.Phase == webappv1.CanaryAborted && last.Revision == s.next.Revision && last.Message != "" {
			return last.Message // said when it was aborted
		}
		if r := s.next.Analysis; inconclusiveAbort(s) && r != nil {
			after, _ := s.in.Plan.Analysis.Inconclusive()
			return fmt.Sprintf("Revision %s was aborted: its checks stayed inconclusive for %s (%s). The stable Deployment was not touched; a new pod template starts a new canary.", s.next.Revision, after, strings.TrimSuffix(r.Message, "."))
		}
		if !abortAsked(s) && s.next.LastFailedCheck != "" {
			return fmt.Sprintf("Revision %s was aborted after %s: %s. The stable Deployment was not touched; a new pod template starts a new canary.", s.next.Revision, english.Count(s.next.FailedChecks, "failed check"), strings.TrimSuffix(s.next.LastFailedCheck, "."))
		}
		return fmt.Sprintf("Revision %s was aborted by the %s annotation. The stable Deployment was not touched; a new pod template starts a new canary.", s.next.Revision, webappv1.AnnotationAbort)
	}
	return ""
}

// analysisMessage says what the latest check of the analysis found: what a held canary waits
// for, and, with action Hold, that the step holds.
func (s *state) analysisMessage(r *webappv1.AnalysisStatus) string {
	msg := strings.TrimSuffix(r.Message, ".")
	switch r.Result {
	case webappv1.CheckInconclusive:
		msg = fmt.Sprintf("Checks inconclusive since %s: %s", r.CheckTime.UTC().Format(time.TimeOnly), msg)
	case webappv1.CheckHeld:
		msg = fmt.Sprintf("Check at %s: %s; the step holds until a check passes or fails, or a person promotes or aborts it", r.CheckTime.UTC().Format(time.TimeOnly), msg)
	case webappv1.CheckFailed:
		msg = fmt.Sprintf("Check at %s failed: %s", r.CheckTime.UTC().Format(time.TimeOnly), msg)
	default:
		msg = fmt.Sprintf("Check at %s: %s", r.CheckTime.UTC().Format(time.TimeOnly), msg)
	}
	return msg + "."
}

// way is the field of spec.rollout the plan is: "canary", or "blueGreen".
func (s *state) way() string {
	if s.in.BlueGreen {
		return "blueGreen"
	}
	return "canary"
}

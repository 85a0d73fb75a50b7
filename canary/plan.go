package canary

import (
	"fmt"
	"slices"
	"strings"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// plan turns the phase reached into the children and completes the status: what the canary
// Deployment, the Services and the route are in that phase follows from the observations alone.
func (s *state) plan() Output {
	in := s.in
	switch s.phase() {
	case webappv1.CanaryProgressing, webappv1.CanaryPaused:
		o := s.serve(s.replicasFor(s.target()), false)
		s.finish(&o, s.stepMessage())
		return o
	case webappv1.CanaryPromoting:
		return s.promote()
	}
	o := retire(in, &s.next)
	o.StableTemplate = s.phase() != webappv1.CanaryAborted
	s.finish(&o, s.endMessage())
	return o
}

// serve is the output of a canary that runs with replicas pods, the route split between the
// Services by the weight the canary's available pods cover (none before they are observed).
// back is true once the traffic goes back to the stable Deployment, in the last stage of a
// promotion.
func (s *state) serve(replicas int32, back bool) Output {
	in := s.in
	observedSplit := in.Route != nil && in.Route.Split
	o := Output{Canary: CanaryRun, CanaryReplicas: replicas, Serving: true}
	if in.Routed {
		o.Services = !back || observedSplit
		if in.ServicesObserved && !back {
			w := s.safeWeight()
			o.Split, o.StableWeight, o.CanaryWeight = true, 100-w, w
		}
	}
	o.Relax = !back && (!in.Routed || observedSplit)
	return o
}

// promote is the output of a promotion, in four stages read off the observations: the canary
// scales to the stable's full count and then takes all the traffic; the stable Deployment then
// takes the template; once it is rolled, the traffic goes back to it; once the route shows that,
// the canary scales to zero, and is gone when its pods are.
func (s *state) promote() Output {
	in := s.in
	full := in.StableReplicas
	taken := s.taken()
	rolled := taken && in.StableRolled
	back := rolled && (!in.Routed || in.Route == nil || !in.Route.Split)
	o := s.serve(full, rolled)
	o.StableTemplate = taken
	s.back = rolled
	var msg string
	switch {
	case back:
		o.Canary, o.CanaryReplicas = CanaryZero, 0
		if in.Canary == nil {
			o.Canary = CanaryAbsent
		}
		msg = "Promoting: Deployment " + s.name() + " runs the canary's template and has all the traffic; the canary scales to zero."
	case rolled:
		msg = "Promoting: Deployment " + s.name() + " runs the canary's template; the traffic goes back to it."
	case taken:
		msg = fmt.Sprintf("Promoting: the canary has all the traffic while Deployment %s rolls to revision %s.", s.name(), in.Revision)
	default:
		msg = fmt.Sprintf("Promoting: the canary scales to %d pods (%d available) and then takes all the traffic.", full, s.available())
	}
	s.finish(&o, msg)
	return o
}

// retire is the output when no canary runs (last, when not nil, is the status being computed):
// the route's canary weight goes to 0 first, and once the route shows that, the route goes back
// to the Service <name> and the canary scales to zero; the Services stay while the route names
// them. An observed canary Deployment is kept at zero while its pods go, and after that too
// when the canary was aborted (its conditions and events tell why); else it is deleted.
func retire(in *Input, last *webappv1.CanaryStatus) Output {
	o := Output{StableTemplate: true}
	r := in.Route
	split := in.Routed && r != nil && r.Split
	if split {
		o.Services = true
	}
	c := in.Canary
	switch {
	case c == nil:
	case split && r.CanaryWeight > 0:
		o.Split, o.StableWeight, o.CanaryWeight = true, 100, 0
		o.Canary = CanaryKeep
	case c.Replicas > 0 || c.Total > 0 || last != nil && last.Phase == webappv1.CanaryAborted:
		o.Canary = CanaryZero
	}
	return o
}

// finish completes the status: the weight and replicas, the message, and when to call again.
func (s *state) finish(o *Output, msg string) {
	in := s.in
	s.next.Weight = nil
	switch {
	case in.Routed && in.Route != nil && in.Route.Split:
		w := in.Route.CanaryWeight
		s.next.Weight = &w
	case in.Routed && o.Serving && !s.back:
		var w int32
		s.next.Weight = &w
	case o.Serving && !s.back:
		w := s.safeWeight()
		s.next.Weight = &w
	}
	switch o.Canary {
	case CanaryRun:
		if last := in.Last; last != nil && last.Revision == s.next.Revision && last.Step == s.next.Step && slices.Contains(stepped, s.phase()) && last.Replicas > 0 && o.CanaryReplicas > last.Replicas {
			now := s.now() // more pods within the step: they have until a deadline of their own
			s.next.ScaleTime = &now
		}
		s.next.Replicas = o.CanaryReplicas
	case CanaryKeep:
		s.next.Replicas = in.Canary.Replicas
	default:
		s.next.Replicas = 0
	}
	if o.Serving && !in.Routed && !s.back {
		msg += " Without an HTTPRoute the Service " + s.name() + " splits the traffic by pod count, not by weight."
	}
	if n := s.next.FailedChecks; n > 0 && o.Serving && s.phase() != webappv1.CanaryPromoting {
		msg += fmt.Sprintf(" %d of %d failed checks: %s.", n, *in.Plan.MaxFailedChecks, strings.TrimSuffix(s.next.LastFailedCheck, "."))
	}
	s.next.Message = msg
	o.Status = &s.next
	o.ResyncAfter = s.resyncAfter()
}

// name is the stable Deployment's name, the WebApp's.
func (s *state) name() string { return s.in.Name }

// stepMessage says where a canary at a step stands.
func (s *state) stepMessage() string {
	in := s.in
	step := fmt.Sprintf("Step %d of %d", s.step()+1, len(s.steps()))
	w, want := s.target(), s.replicasFor(s.target())
	switch {
	case s.phase() == webappv1.CanaryPaused:
		return fmt.Sprintf("%s: %d%% of the traffic on the canary, paused until it is promoted (annotate the WebApp with %s=%s).", step, w, webappv1.AnnotationPromote, s.next.Revision)
	case s.next.PauseStartTime != nil:
		d, _ := s.pause()
		return fmt.Sprintf("%s: %d%% of the traffic on the canary, held for %s from %s.", step, w, d, s.next.PauseStartTime.UTC().Format(time.RFC3339))
	case s.available() < want || s.in.Canary == nil || s.in.Canary.Replicas < want:
		return fmt.Sprintf("%s: waiting for %d canary %s to be available (%d %s) before %d%% of the traffic goes to it.", step, want, plural(want, "pod", "pods"), s.available(), plural(s.available(), "is", "are"), w)
	case in.Routed:
		return fmt.Sprintf("%s: waiting for the HTTPRoute to send %d%% of the traffic to the canary and for its Gateways to accept it.", step, w)
	}
	return fmt.Sprintf("%s: %d%% of the traffic on the canary.", step, w)
}

// endMessage says how the last canary ended.
func (s *state) endMessage() string {
	switch s.phase() {
	case webappv1.CanaryPromoted:
		return fmt.Sprintf("Revision %s was promoted: the stable Deployment runs it.", s.next.Revision)
	case webappv1.CanaryRolledBack:
		return fmt.Sprintf("Revision %s was rolled back: the pod template is the stable one again.", s.next.Revision)
	case webappv1.CanaryAborted:
		if last := s.in.Last; last != nil && last.Phase == webappv1.CanaryAborted && last.Revision == s.next.Revision && last.Message != "" {
			return last.Message // said when it was aborted
		}
		if !s.in.Abort && s.next.LastFailedCheck != "" {
			return fmt.Sprintf("Revision %s was aborted after %d failed %s: %s. The stable Deployment was not touched; a new pod template starts a new canary.", s.next.Revision, s.next.FailedChecks, plural(s.next.FailedChecks, "check", "checks"), strings.TrimSuffix(s.next.LastFailedCheck, "."))
		}
		return fmt.Sprintf("Revision %s was aborted by the %s annotation. The stable Deployment was not touched; a new pod template starts a new canary.", s.next.Revision, webappv1.AnnotationAbort)
	}
	return ""
}

// resyncAfter is when the next timer runs out: the step's pause, the availability deadline, or
// the interval before a failing check counts again; 0 when none runs.
func (s *state) resyncAfter() time.Duration {
	if !slices.Contains(stepped, s.phase()) {
		return 0
	}
	var at []time.Time
	d, ok := s.pause()
	if ok && s.next.PauseStartTime != nil {
		at = append(at, s.next.PauseStartTime.Add(d))
	}
	if t, ok := s.availableBy(); ok && s.available() < s.replicasFor(s.target()) {
		at = append(at, t)
	}
	if t := s.next.LastFailedCheckTime; t != nil && s.failure != "" {
		at = append(at, t.Add(webappv1.CanaryCheckInterval))
	}
	var soonest time.Duration
	for _, t := range at {
		if left := t.Sub(s.in.Now); left > 0 && (soonest == 0 || left < soonest) {
			soonest = left
		}
	}
	return soonest
}

// plural picks one or many by n.
func plural(n int32, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

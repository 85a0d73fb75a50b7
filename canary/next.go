package canary

import (
	"slices"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// state is one call's working copy: the input, and the status the rows compute.
type state struct {
	in   *Input
	next webappv1.CanaryStatus
	// verdict is the one piece of a call's working state beside the status: what the row "the
	// checks run" found, the first failing check's sentence, "" when none failed or no check ran
	// (start clears it). The timer reads it, so that a failure that is not counted yet asks for
	// a call when it would count. It is never carried to the next call.
	verdict string
	// measured is true when this call recorded a check of the analysis (status.canary.analysis),
	// which the check "analysis" then reads; a record from an earlier call is never counted again.
	measured bool
	// decisive is true when the check this call recorded failed a built-in metric's sequential
	// test: the row "the analysis shows the canary outside its threshold" aborts at once.
	decisive bool
}

// Next reads Transitions for in, and returns the next canary status and what the children
// should be (Stages). It is a pure function of in: in.Last is never modified.
func Next(in Input) Output {
	s := &state{in: &in}
	if in.Last != nil {
		s.next = clone(in.Last)
	}
	var fired []string
	moved := false
	for i := range Transitions {
		r := &Transitions[i]
		if r.Kind == Move && moved || !slices.Contains(r.From, s.phase()) || r.When != nil && !r.When(s) {
			continue
		}
		if r.Do != nil {
			r.Do(s)
		}
		if r.Kind == Move {
			s.next.Phase, moved = r.To, true
		}
		fired = append(fired, r.Name)
	}
	o := s.children()
	o.Fired = fired
	o.Annotations = s.deploymentAnnotations(&o)
	if s.phase() != None {
		o.Status = &s.next
		o.ResyncAfter = s.timer()
		o.Timed = o.ResyncAfter > 0 || s.analyzing()
	}
	o.Report = s.webAppReport(&o)
	if in.Plan != nil {
		o.Condition = s.condition()
	}
	return o
}

// children is the stage the canary is in, with what the children are in it (Stages).
func (s *state) children() Output {
	for _, r := range Stages {
		if slices.Contains(r.In, s.phase()) && (r.When == nil || r.When(s)) {
			o := r.Children(s)
			o.Stage = r.Stage
			return o
		}
	}
	panic("canary: no stage for phase " + string(s.phase())) // Stages ends with a row for every phase
}

// deploymentAnnotations are the annotations the canary Deployment carries in o: the revision it
// runs, and whether it is being promoted; or, kept after an abort, the revision that was aborted;
// and the attempt and retries of either.
func (s *state) deploymentAnnotations(o *Output) map[string]string {
	var a map[string]string
	switch {
	case o.Form == Run && s.phase() == webappv1.CanaryPromoting:
		a = map[string]string{AnnotationRevision: s.in.Revision, AnnotationPromoting: s.in.Revision}
	case o.Form == Run:
		a = map[string]string{AnnotationRevision: s.in.Revision}
	case (o.Form == Keep || o.Form == Zero) && s.phase() == webappv1.CanaryAborted:
		a = map[string]string{AnnotationAborted: s.next.Revision}
	}
	if a != nil && s.next.Retries > 0 {
		a[AnnotationRetries] = strconv.Itoa(int(s.next.Retries))
	}
	if a != nil && s.next.Attempt > 0 {
		a[AnnotationAttempt] = strconv.Itoa(int(s.next.Attempt))
	}
	return a
}

// webAppReport is what the canary says of the WebApp: Progressing while it runs, Degraded while the
// spec asks for the template whose canary was aborted, and nil otherwise.
func (s *state) webAppReport(o *Output) *Report {
	st := o.Status
	switch {
	case st == nil:
		return nil
	case o.Serving:
		return &Report{Phase: webappv1.PhaseProgressing, Reason: webappv1.ReasonCanaryProgressing, Message: "Canary " + st.Revision + ": " + st.Message}
	case st.Phase == webappv1.CanaryAborted && st.Revision == s.in.Revision:
		return &Report{Phase: webappv1.PhaseDegraded, Reason: webappv1.ReasonCanaryAborted, Message: st.Message}
	}
	return nil
}

// condition is the Canary condition: True unless aborted, its reason the phase.
func (s *state) condition() *Condition {
	if s.phase() == None {
		return &Condition{OK: true, Reason: webappv1.ReasonCanaryIdle, Message: "No canary has run: the stable Deployment runs the current pod template."}
	}
	return &Condition{OK: s.phase() != webappv1.CanaryAborted, Reason: string(s.phase()), Message: s.next.Message}
}

// phase is the phase the canary is in, None before the first.
func (s *state) phase() webappv1.CanaryPhase { return s.next.Phase }

// names reports whether an annotation's value v names the spec's revision.
func (s *state) names(v string) bool { return v != "" && v == s.in.Revision }

// stepIndex is the index of the step the canary is at: the last one when the steps were edited
// to fewer. step is that step, and atLastStep whether it is the last.
func (s *state) stepIndex() int            { return min(int(s.next.Step), len(s.in.Plan.Steps)-1) }
func (s *state) step() webappv1.CanaryStep { return s.in.Plan.Steps[s.stepIndex()] }
func (s *state) atLastStep() bool          { return s.stepIndex() == len(s.in.Plan.Steps)-1 }

// now is the call's time as the status stores it: to the second.
func (s *state) now() metav1.Time { return metav1.NewTime(s.in.Now.UTC().Truncate(time.Second)) }

// runsRevision reports whether the canary Deployment carries the spec's revision, with no pod of
// another template left.
func (s *state) runsRevision() bool {
	c := s.in.Canary
	return c != nil && c.Revision == s.in.Revision && c.Total == c.Updated
}

// stableRolled reports whether the stable Deployment runs the spec's revision, its rollout
// complete.
func (s *state) stableRolled() bool {
	st := s.in.Stable
	return st != nil && st.Revision == s.in.Revision && st.Complete
}

// routeSplit reports whether the observed route splits the traffic between the Services
// <name>-stable and <name>-canary.
func (s *state) routeSplit() bool { return s.in.Routed && s.in.Route != nil && s.in.Route.Split }

// replicasFor is the canary's pod count for weight: ceil(weight × stable replicas / 100), at
// least 1, and 0 when the WebApp is scaled to zero.
func (s *state) replicasFor(weight int32) int32 {
	n := s.in.StableReplicas
	if n <= 0 {
		return 0
	}
	return max(1, int32((int64(weight)*int64(n)+99)/100))
}

// available is how many of the canary's pods are available and of its revision: none until its
// controller has observed the generation that brought the revision. A generation that only
// scaled it does not count, so that the route keeps its weight while the controller catches up.
func (s *state) available() int32 {
	c := s.in.Canary
	if !s.runsRevision() {
		return 0
	}
	brought := s.next.TemplateGeneration
	if c.ObservedGeneration < c.Generation && (brought == 0 || c.ObservedGeneration < brought) {
		return 0
	}
	return c.Available
}

// target is the weight the canary's phase asks for: its step's, or 100 while promoting.
func (s *state) target() int32 {
	if s.phase() == webappv1.CanaryPromoting {
		return 100
	}
	return s.step().Weight
}

// safeWeight is the largest weight, among those of the steps reached so far (and 100 while
// promoting), that the canary's available pods cover; 0 when they cover none. The route never
// asks more of the canary than that.
func (s *state) safeWeight() int32 {
	steps := s.in.Plan.Steps
	ladder := make([]int32, 0, len(steps)+1)
	for i := 0; i <= s.stepIndex(); i++ {
		ladder = append(ladder, steps[i].Weight)
	}
	if s.phase() == webappv1.CanaryPromoting {
		ladder = append(ladder, 100)
	}
	c := s.in.Canary
	var safe int32
	for _, w := range ladder {
		if s.runsRevision() && c.Replicas >= s.replicasFor(w) && s.available() >= s.replicasFor(w) {
			safe = max(safe, w)
		}
	}
	return safe
}

// inPlace reports whether weight w is in place: the observed route carries it and its Gateways
// accepted it, or, without a route, the canary's pods for it are available.
func (s *state) inPlace(w int32) bool {
	if !s.in.Routed {
		return s.safeWeight() >= w
	}
	r := s.in.Route
	return r != nil && r.Split && r.Accepted && r.CanaryWeight == w && r.StableWeight == 100-w
}

// stableTakesTemplate reports whether, in a promotion, the stable Deployment takes (or has
// taken) the template: once the canary has all the traffic. From then on the stable rolls, and
// the canary can no longer be aborted, only followed by a new template.
func (s *state) stableTakesTemplate() bool {
	return s.in.Stable != nil && s.in.Stable.Revision == s.in.Revision || s.inPlace(100) && !s.delayedTakeOver()
}

// allTraffic reports whether the observed route gives the canary all the traffic, accepted.
func (s *state) allTraffic() bool { return s.in.Routed && s.inPlace(100) }

// noTraffic reports whether the observed route gives the canary none of the traffic, accepted:
// it splits 100/0, or sends it all to the Service <name> again.
func (s *state) noTraffic() bool {
	r := s.in.Route
	return s.in.Routed && r != nil && r.Accepted && (!r.Split || r.CanaryWeight == 0)
}

// scaleDownDelay is the plan's scaleDownDelaySeconds, or its default without a plan.
func (s *state) scaleDownDelay() time.Duration {
	if p := s.in.Plan; p != nil && p.ScaleDownDelaySeconds != nil {
		return time.Duration(*p.ScaleDownDelaySeconds) * time.Second
	}
	return webappv1.DefaultScaleDownDelaySeconds * time.Second
}

// delayedTakeOver reports whether the stable Deployment waits for the scale-down delay before it
// takes the template: promoting, the route gives the canary all the traffic, but not for long
// enough yet.
func (s *state) delayedTakeOver() bool {
	return s.phase() == webappv1.CanaryPromoting && s.inPlace(100) && (s.in.Stable == nil || s.in.Stable.Revision != s.in.Revision) &&
		!s.settled(s.next.AllTrafficTime)
}

// delayedScaleDown reports whether the canary keeps its pods for the scale-down delay: the route
// gives it none of the traffic, but not for long enough yet; promoting, once the route is back
// on the Service <name>, and otherwise while it splits 100/0.
func (s *state) delayedScaleDown() bool {
	c := s.in.Canary
	if c == nil || c.ScaledDown || s.settled(s.next.NoTrafficTime) {
		return false
	}
	if s.phase() == webappv1.CanaryPromoting {
		return !s.routeSplit()
	}
	return slices.Contains(retiring, s.phase()) && s.routeSplit() && s.in.Route.CanaryWeight == 0
}

// settled reports whether the scale-down delay has passed since at, when the route was seen to
// take traffic away from pods: only then may they go. Without a route there is no Gateway to
// wait for, and without a status (the spec no longer asks for a canary) no time to count from:
// both are settled at once.
func (s *state) settled(at *metav1.Time) bool {
	if !s.in.Routed || s.phase() == None {
		return true
	}
	return at != nil && !s.in.Now.Before(at.Add(s.scaleDownDelay()))
}

// pause is the step's pauseSeconds as a duration, and whether the step is timed.
func (s *state) pause() (time.Duration, bool) {
	st := s.step()
	if st.Kind() != webappv1.StepTimed {
		return 0, false
	}
	return time.Duration(*st.PauseSeconds) * time.Second, true
}

// pauseOver reports whether the step's pause has run out, and, with an analysis, its latest
// check passed.
func (s *state) pauseOver() bool {
	d, ok := s.pause()
	return ok && s.next.PauseStartTime != nil && !s.in.Now.Before(s.next.PauseStartTime.Add(d)) && s.analysisPassed()
}

// availableBy is when the canary's pods must all be available: the step's pauseSeconds plus
// the availability grace after the step started, or after the canary was last asked for more
// pods; false when the step has no start time.
func (s *state) availableBy() (time.Time, bool) {
	from := s.next.StepStartTime
	if t := s.next.ScaleTime; t != nil && (from == nil || t.After(from.Time)) {
		from = t
	}
	if from == nil {
		return time.Time{}, false
	}
	d, _ := s.pause()
	return from.Add(d + webappv1.CanaryAvailabilityGrace), true
}

// timer is how long until the next timer runs out: the scale-down delay of pods the route took
// traffic away from, the step's pause, the availability deadline, the check interval before a
// failing check counts again, or the next check of the analysis; 0 when none runs.
func (s *state) timer() time.Duration {
	var at []time.Time
	if s.delayedTakeOver() {
		at = append(at, s.next.AllTrafficTime.Add(s.scaleDownDelay()))
	}
	if s.delayedScaleDown() {
		at = append(at, s.next.NoTrafficTime.Add(s.scaleDownDelay()))
	}
	if !slices.Contains(atAStep, s.phase()) {
		return soonest(at, s.in.Now)
	}
	d, ok := s.pause()
	if ok && s.next.PauseStartTime != nil {
		at = append(at, s.next.PauseStartTime.Add(d))
	}
	if t, ok := s.availableBy(); ok && s.available() < s.replicasFor(s.target()) {
		at = append(at, t)
	}
	if t := s.next.LastFailedCheckTime; t != nil && s.verdict != "" {
		at = append(at, t.Add(webappv1.CanaryCheckInterval))
	}
	if t, ok := s.nextCheck(); ok {
		at = append(at, t)
	}
	return soonest(at, s.in.Now)
}

// soonest is how long from now until the first of the times at that is still to come; 0 for
// none.
func soonest(at []time.Time, now time.Time) time.Duration {
	var first time.Duration
	for _, t := range at {
		if left := t.Sub(now); left > 0 && (first == 0 || left < first) {
			first = left
		}
	}
	return first
}

// clone copies a status, so that what Next changes is never the input's.
func clone(st *webappv1.CanaryStatus) webappv1.CanaryStatus {
	c := *st
	for _, t := range []**metav1.Time{&c.StepStartTime, &c.ScaleTime, &c.PauseStartTime, &c.LastFailedCheckTime, &c.AllTrafficTime, &c.NoTrafficTime} {
		if *t != nil {
			v := **t
			*t = &v
		}
	}
	if c.Weight != nil {
		w := *c.Weight
		c.Weight = &w
	}
	c.IgnoredAnnotations = slices.Clone(c.IgnoredAnnotations)
	c.Analysis = cloneAnalysis(c.Analysis)
	return c
}

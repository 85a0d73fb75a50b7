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
	// behind is true when the check this call recorded is an earlier one that stood in for the
	// one due (StandsIn) and found something new: the one due is judged at a call a moment later.
	behind bool
	// reached is the stage the canary reached, with its children (stage), once computed
	// (hasReached); every row that fires drops it, as it may change the phase or what a stage
	// reads.
	reached    Output
	hasReached bool
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
		s.hasReached = false
		if r.Do != nil {
			r.Do(s)
		}
		if r.Kind == Move {
			s.next.Phase, moved = r.To, true
		}
		fired = append(fired, r.Name)
	}
	o := s.stage()
	if in.Stable == nil {
		o.StableTemplate = true // none observed: it is made with the template as it is
	}
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

// stage is the stage the canary reached, with what the children are in it (children), computed
// once a call: the last row, describe, asks for it after every row that changes the status, and
// Next answers with the same. A row that fired since drops it (Next), so that it is never stale.
func (s *state) stage() Output {
	if !s.hasReached {
		s.reached, s.hasReached = s.children(), true
	}
	return s.reached
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

// stepIndex is the index of the step the canary is at (StepIndex). step is that step, and
// atLastStep whether it is the last.
func (s *state) stepIndex() int            { return StepIndex(s.in.Plan, &s.next) }
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
// least 1, and 0 when the WebApp is scaled to zero. A blue-green release's is the stable
// replicas at every weight: its preview runs at full size.
func (s *state) replicasFor(weight int32) int32 {
	n := s.in.StableReplicas
	switch {
	case n <= 0:
		return 0
	case s.in.BlueGreen:
		return n
	}
	return max(1, int32((int64(weight)*int64(n)+99)/100))
}

// onePod is 1, the canary pods the header route waits for, and 0 when the WebApp is scaled to
// zero.
func (s *state) onePod() int32 { return min(1, max(s.in.StableReplicas, 0)) }

// fullCount is the canary's pod count while it is promoted: the stable Deployment's full count;
// for a blue-green release, no fewer than it runs already, since once it has all the traffic
// the autoscaler scales the idle stable Deployment, not it (switched).
func (s *state) fullCount() int32 {
	if c := s.in.Canary; s.in.BlueGreen && c != nil && c.Revision == s.in.Revision {
		return max(s.in.StableReplicas, c.Replicas)
	}
	return s.in.StableReplicas
}

// previewUp reports whether a blue-green release's preview has all its pods available, as its
// step needs before its pause starts or it waits for a person: testers try the whole new
// version, as Argo Rollouts counts autoPromotionSeconds from a fully available preview. Always
// true for a canary, whose step is in place once its weight is.
func (s *state) previewUp() bool {
	return !s.in.BlueGreen || s.available() >= s.replicasFor(s.target())
}

// switched reports whether a blue-green release has all the traffic, promoted: the route was
// seen to give it all, accepted (status.canary.allTrafficTime). From then on it keeps it until
// the traffic goes back to the stable Deployment, rolled.
func (s *state) switched() bool {
	return s.in.BlueGreen && s.phase() == webappv1.CanaryPromoting && s.next.AllTrafficTime != nil
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

// target is the weight the canary's phase asks for (Target): its step's, or 100 while
// promoting. Only those phases ask for it.
func (s *state) target() int32 {
	w, _ := Target(s.in.Plan, &s.next)
	return w
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

// inPlace reports whether weight w is in place: the observed route carries it, and the header
// route when the plan has one, and its Gateways accepted it; or, without a route, the canary's
// pods for it are available.
func (s *state) inPlace(w int32) bool {
	if !s.in.Routed {
		return s.safeWeight() >= w
	}
	r := s.in.Route
	return r != nil && r.Split && r.Accepted && r.CanaryWeight == w && r.StableWeight == 100-w && r.Header == s.headerRoute()
}

// headerRoute reports whether the plan has a header route: while the canary serves, the route
// sends the requests that match it to the canary, once the canary has a pod available.
func (s *state) headerRoute() bool { return s.in.Plan != nil && s.in.Plan.HeaderRoute != nil }

// headerRouted reports whether the observed route sends the header route's requests to the
// canary (status.canary.headerRouted).
func (s *state) headerRouted() bool { return s.in.Routed && s.in.Route != nil && s.in.Route.Header }

// stableTakesTemplate reports whether, in a promotion, the stable Deployment takes (or has
// taken) the template: once the canary has all the traffic. From then on the stable rolls, and
// the canary can no longer be aborted, only followed by a new template.
func (s *state) stableTakesTemplate() bool {
	return s.in.Stable != nil && s.in.Stable.Revision == s.in.Revision || s.inPlace(100) && !s.delayedTakeOver()
}

// allTraffic reports whether the observed route gives the canary all the traffic, accepted.
func (s *state) allTraffic() bool { return s.in.Routed && s.inPlace(100) }

// noTraffic reports whether the observed route gives the canary none of the traffic, accepted:
// it splits 100/0, or sends it all to the Service <name> again, and sends it no header route's
// requests.
func (s *state) noTraffic() bool {
	r := s.in.Route
	return s.in.Routed && r != nil && r.Accepted && (!r.Split || r.CanaryWeight == 0) && !r.Header
}

// scaleDownDelay is the plan's scaleDownDelaySeconds, or its default (ScaleDownDelay).
func (s *state) scaleDownDelay() time.Duration { return ScaleDownDelay(s.in.Plan) }

// delayedTakeOver reports whether the stable Deployment waits for the scale-down delay before it
// takes the template: promoting, the route gives the canary all the traffic, but not for long
// enough yet.
func (s *state) delayedTakeOver() bool {
	return s.phase() == webappv1.CanaryPromoting && s.inPlace(100) && (s.in.Stable == nil || s.in.Stable.Revision != s.in.Revision) &&
		!s.settled(s.next.AllTrafficTime)
}

// delayedScaleDown reports whether the canary keeps its pods for the scale-down delay: the route
// gives it none of the traffic, but not for long enough yet; promoting, once the route is back
// on the Service <name>, and otherwise while it splits 100/0 without the header route.
func (s *state) delayedScaleDown() bool {
	c := s.in.Canary
	if c == nil || c.ScaledDown || s.settled(s.next.NoTrafficTime) || s.in.Route != nil && s.in.Route.Header {
		return false
	}
	if s.phase() == webappv1.CanaryPromoting {
		return !s.routeSplit()
	}
	return slices.Contains(retiring, s.phase()) && s.routeSplit() && s.in.Route.CanaryWeight == 0
}

// settled reports whether the scale-down delay has passed since at, when the route was seen to
// take traffic away from pods: only then may they go (delayOver). Without a route there is no
// Gateway to wait for, and without a status (the spec no longer asks for a canary) no time to
// count from: both are settled at once.
func (s *state) settled(at *metav1.Time) bool {
	return s.phase() == None || delayOver(s.in.Plan, s.in.Routed, at, s.in.Now)
}

// pause is the step's pauseSeconds as a duration, and whether the step is timed.
func (s *state) pause() (time.Duration, bool) { return pauseOf(s.step()) }

// pauseOver reports whether the step's pause has run out (PauseEnd), and, with an analysis, its
// latest check passed (AnalysisPassed).
func (s *state) pauseOver() bool {
	end, ok := PauseEnd(s.in.Plan, &s.next)
	return ok && !s.in.Now.Before(end) && s.analysisPassed()
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
	if !AtAStep(s.phase()) {
		return soonest(at, s.in.Now)
	}
	if t, ok := PauseEnd(s.in.Plan, &s.next); ok {
		at = append(at, t)
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
	c.StableRevisions = slices.Clone(c.StableRevisions)
	c.Analysis = cloneAnalysis(c.Analysis)
	return c
}

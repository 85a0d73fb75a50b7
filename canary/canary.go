package canary

import (
	"fmt"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// Deployment is what Next reads of an observed Deployment.
type Deployment struct {
	// Replicas is spec.replicas.
	Replicas int32
	// Current is true when it carries the revision asked of it and no pod of another template
	// is left. Its available pods are then of that revision once its controller has observed the
	// generation that brought the revision (CanaryStatus.TemplateGeneration), or its current one.
	Current bool
	// Generation and ObservedGeneration are metadata.generation and status.observedGeneration.
	Generation, ObservedGeneration int64
	// Aborted is true when it says that the revision asked of it was aborted, and Promoting when
	// it says that it is being promoted: a status older than that decision (Metacontroller may
	// call with one, and write what it gets over a newer one) then does not undo it.
	Aborted, Promoting bool
	// Total and Available are status.replicas and status.availableReplicas.
	Total, Available int32
	// Failure is a sentence when it reports ReplicaFailure or ProgressDeadlineExceeded for its
	// current generation, "" otherwise.
	Failure string
}

// Route is what Next reads of the observed HTTPRoute.
type Route struct {
	// Split is true when its backends are the Services <name>-stable and <name>-canary.
	Split bool
	// StableWeight and CanaryWeight are their weights, when Split.
	StableWeight, CanaryWeight int32
	// Accepted is true when every Gateway it attaches to has accepted its current generation
	// and resolved its backends.
	Accepted bool
}

// Pods is what pod diagnosis shows of the canary's pods.
type Pods struct {
	// Diagnosed is true when pods are sent along (pod diagnosis is on); the other fields are
	// meaningful only then.
	Diagnosed bool
	// Trouble says why they cannot start, in a sentence; "" when they can.
	Trouble string
	// Restarts is the total of their containers' restarts.
	Restarts int32
}

// Input is everything Next decides from.
type Input struct {
	// Name is the WebApp's, and so the stable Deployment's.
	Name string
	// Plan is spec.rollout.canary, defaulted and valid; nil when the spec asks for no canary.
	Plan *webappv1.Canary
	// Last is the canary status Metacontroller sent back; nil before any canary.
	Last *webappv1.CanaryStatus
	// Revision names the pod template the spec asks for.
	Revision string
	// HasStable is true when the stable Deployment is observed; StableRevision names its pod
	// template ("" when it cannot be told). Without a stable Deployment there is nothing to
	// compare a canary with: the Deployment is made with the template as it is.
	HasStable      bool
	StableRevision string
	// StableReplicas is the stable Deployment's full count: spec.replicas, or the autoscaler's.
	StableReplicas int32
	// StableRolled is true when the stable Deployment runs Revision and its rollout is complete.
	StableRolled bool
	// Canary is the observed canary Deployment, nil when none is.
	Canary *Deployment
	// Routed is true when the WebApp has an HTTPRoute (spec.route, and the CompositeController
	// manages HTTPRoutes); Route is the observed one, nil when none is. Without a route the
	// traffic is split by pod count alone.
	Routed bool
	Route  *Route
	// ServicesObserved is true when both the Services <name>-stable and <name>-canary are
	// observed: only then may the route name them.
	ServicesObserved bool
	// Pods is what pod diagnosis shows of the canary's pods.
	Pods Pods
	// Promote and Abort are true when the WebApp's annotation asks so for Revision.
	Promote, Abort bool
	// Now is the time of the call.
	Now time.Time
}

// CanaryForm says what the canary Deployment should be.
type CanaryForm int

// The forms of the canary Deployment.
const (
	// CanaryAbsent: there is none; an observed one is deleted.
	CanaryAbsent CanaryForm = iota
	// CanaryRun: it runs Revision with Output.CanaryReplicas pods.
	CanaryRun
	// CanaryKeep: the observed one is kept as it is.
	CanaryKeep
	// CanaryZero: the observed one is kept, scaled to zero.
	CanaryZero
)

// Output is what Next decides.
type Output struct {
	// Status is the next canary status; nil while no canary has run.
	Status *webappv1.CanaryStatus
	// Canary is what the canary Deployment should be, and CanaryReplicas its count with CanaryRun.
	Canary         CanaryForm
	CanaryReplicas int32
	// StableTemplate is true when the stable Deployment takes the template the spec asks for;
	// false keeps it as observed (its replicas aside).
	StableTemplate bool
	// Split is true when the route sends StableWeight to <name>-stable and CanaryWeight to
	// <name>-canary; false sends it all to <name>, as without a canary.
	Split                      bool
	StableWeight, CanaryWeight int32
	// Services is true when the Services <name>-stable and <name>-canary should exist.
	Services bool
	// Relax is true when the Service <name> selects the canary's pods as well as the stable ones.
	Relax bool
	// Serving is true while the canary runs: phase Progressing, Paused or Promoting.
	Serving bool
	// ResyncAfter asks for a call after that long, when a timer runs out then; 0 for none.
	ResyncAfter time.Duration
}

// Transition is one row of the canary's table of transitions.
type Transition struct {
	// Name says what happened.
	Name string
	// From are the phases it fires in; "" stands for no canary yet.
	From []webappv1.CanaryPhase
	// To is the phase it leads to.
	To webappv1.CanaryPhase
	// when is its guard, do what it changes besides the phase.
	when func(*state) bool
	do   func(*state)
}

// none is the phase of a WebApp before its first canary.
const none webappv1.CanaryPhase = ""

var (
	anyPhase = []webappv1.CanaryPhase{none, webappv1.CanaryProgressing, webappv1.CanaryPaused, webappv1.CanaryPromoting, webappv1.CanaryPromoted, webappv1.CanaryAborted, webappv1.CanaryRolledBack}
	stepped  = []webappv1.CanaryPhase{webappv1.CanaryProgressing, webappv1.CanaryPaused}
	serving  = []webappv1.CanaryPhase{webappv1.CanaryProgressing, webappv1.CanaryPaused, webappv1.CanaryPromoting}
)

// Transitions is the canary's table, read in order: the first row whose phase and guard match
// fires, at most one per call. Before it is read, a canary at a step is checked (a failed check
// counts, at most once per CheckInterval); the children follow from the phase reached.
var Transitions = []Transition{
	{"rolled back: the template is the stable one again", append(slices.Clip(serving), webappv1.CanaryAborted), webappv1.CanaryRolledBack, rolledBack, nil},
	{"a new template", anyPhase, webappv1.CanaryProgressing, newTemplate, start},
	{"aborted before: the canary Deployment says so, whatever an older status says", serving, webappv1.CanaryAborted, func(s *state) bool { return s.in.Canary != nil && s.in.Canary.Aborted }, abortedBefore},
	{"abort asked", stepped, webappv1.CanaryAborted, func(s *state) bool { return s.in.Abort }, nil},
	{"abort asked while promoting, before the stable Deployment takes the template", []webappv1.CanaryPhase{webappv1.CanaryPromoting}, webappv1.CanaryAborted, func(s *state) bool { return s.in.Abort && !s.taken() }, nil},
	{"checks failed maxFailedChecks times", stepped, webappv1.CanaryAborted, checksExhausted, nil},
	{"promote asked", stepped, webappv1.CanaryPromoting, func(s *state) bool { return s.in.Promote }, nil},
	{"promoting before: the canary Deployment says so, whatever an older status says", stepped, webappv1.CanaryPromoting, func(s *state) bool { return s.in.Canary != nil && s.in.Canary.Promoting }, nil},
	{"weight in place, its pause starts", []webappv1.CanaryPhase{webappv1.CanaryProgressing}, webappv1.CanaryProgressing, pauseStarts, startPause},
	{"weight in place, a step that waits to be promoted", []webappv1.CanaryPhase{webappv1.CanaryProgressing}, webappv1.CanaryPaused, waitsForPerson, nil},
	{"pause over, next step", []webappv1.CanaryPhase{webappv1.CanaryProgressing}, webappv1.CanaryProgressing, func(s *state) bool { return s.pauseOver() && !s.lastStep() }, nextStep},
	{"pause over at the last step", []webappv1.CanaryPhase{webappv1.CanaryProgressing}, webappv1.CanaryPromoting, func(s *state) bool { return s.pauseOver() && s.lastStep() }, nil},
	{"promoted: the stable runs the template, the canary is gone", []webappv1.CanaryPhase{webappv1.CanaryPromoting}, webappv1.CanaryPromoted, promoted, nil},
}

// state is one call's working copy: the input and the status being computed.
type state struct {
	in   *Input
	next webappv1.CanaryStatus
	// failure is the check that failed in this call, counted or not; "" when none did.
	failure string
	// fired is the row that fired, nil when none did.
	fired *Transition
	// back is true once a promotion sends the traffic back to the stable Deployment.
	back bool
}

// Next computes the next canary status and what the children should be. It is a pure function
// of in: in.Last is never modified.
func Next(in Input) Output {
	if in.Plan == nil {
		return retire(&in, nil)
	}
	s := &state{in: &in}
	if in.Last != nil {
		s.next = clone(in.Last)
	}
	if c := in.Canary; c != nil && c.Current && s.next.Revision == in.Revision && s.next.TemplateGeneration == 0 {
		s.next.TemplateGeneration = c.Generation // first seen to carry the revision
	}
	if slices.Contains(stepped, s.phase()) && s.next.Revision == in.Revision {
		s.check()
	}
	for i := range Transitions {
		t := &Transitions[i]
		if slices.Contains(t.From, s.phase()) && t.when(s) {
			if t.do != nil {
				t.do(s)
			}
			s.next.Phase = t.To
			s.fired = t
			break
		}
	}
	if in.Last == nil && s.fired == nil {
		return retire(&in, nil) // no canary yet: the stable takes the template
	}
	return s.plan()
}

// phase is the phase the canary is in, none before the first.
func (s *state) phase() webappv1.CanaryPhase { return s.next.Phase }

// steps and step are the plan's steps and the one the canary is at (the last one when the
// steps were edited to fewer).
func (s *state) steps() []webappv1.CanaryStep { return s.in.Plan.Steps }
func (s *state) step() int {
	return min(int(s.next.Step), len(s.steps())-1)
}
func (s *state) lastStep() bool { return s.step() == len(s.steps())-1 }

// now is the call's time as the status stores it: to the second.
func (s *state) now() metav1.Time { return metav1.NewTime(s.in.Now.UTC().Truncate(time.Second)) }

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
	if c == nil || !c.Current {
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
	return s.steps()[s.step()].Weight
}

// safeWeight is the largest weight, among those of the steps reached so far (and 100 while
// promoting), that the canary's available pods cover; 0 when they cover none. The route never
// asks more of the canary than that.
func (s *state) safeWeight() int32 {
	ladder := make([]int32, 0, len(s.steps())+1)
	for i := 0; i <= s.step(); i++ {
		ladder = append(ladder, s.steps()[i].Weight)
	}
	if s.phase() == webappv1.CanaryPromoting {
		ladder = append(ladder, 100)
	}
	c := s.in.Canary
	var safe int32
	for _, w := range ladder {
		if c != nil && c.Current && c.Replicas >= s.replicasFor(w) && s.available() >= s.replicasFor(w) {
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

// taken reports whether, in a promotion, the stable Deployment takes (or has taken) the
// template: once the canary has all the traffic. From then on the stable rolls, and the
// canary can no longer be aborted, only followed by a new template.
func (s *state) taken() bool {
	return s.in.StableRevision == s.in.Revision || s.inPlace(100)
}

// pause is the step's pauseSeconds as a duration, and whether it has one.
func (s *state) pause() (time.Duration, bool) {
	p := s.steps()[s.step()].PauseSeconds
	if p == nil {
		return 0, false
	}
	return time.Duration(*p) * time.Second, true
}

// pauseOver reports whether the step's pause has run out.
func (s *state) pauseOver() bool {
	d, ok := s.pause()
	return ok && s.next.PauseStartTime != nil && !s.in.Now.Before(s.next.PauseStartTime.Add(d))
}

// availableBy is when the canary's pods must all be available: the step's pauseSeconds plus
// webappv1.CanaryAvailabilityGrace after the step started, or after the canary was last asked for more pods;
// false when the step has no start time.
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

// The guards and changes of the table.

func rolledBack(s *state) bool {
	return s.in.HasStable && s.in.Revision == s.in.StableRevision && s.in.Revision != s.next.Revision
}

func newTemplate(s *state) bool {
	if !s.in.HasStable || s.in.Revision == s.in.StableRevision {
		return false
	}
	switch s.phase() {
	case none, webappv1.CanaryPromoted, webappv1.CanaryRolledBack:
		return true
	}
	return s.next.Revision != s.in.Revision
}

func start(s *state) {
	now := s.now()
	s.next = webappv1.CanaryStatus{Revision: s.in.Revision, StepStartTime: &now, Restarts: s.in.Pods.Restarts}
	s.failure = ""
}

// abortedBefore makes an older status agree with the abort the canary Deployment records: one
// that the annotation did not ask for was for maxFailedChecks failed checks. Metacontroller
// writes a status computed from an older parent over a newer one (it retries a conflicting
// write on the latest object), so both must come to the same status.
func abortedBefore(s *state) {
	if !s.in.Abort {
		s.next.FailedChecks = max(s.next.FailedChecks, *s.in.Plan.MaxFailedChecks)
	}
}

func checksExhausted(s *state) bool { return s.next.FailedChecks >= *s.in.Plan.MaxFailedChecks }

func pauseStarts(s *state) bool {
	_, ok := s.pause()
	return ok && s.next.PauseStartTime == nil && s.inPlace(s.target())
}

func startPause(s *state) { now := s.now(); s.next.PauseStartTime = &now }

func waitsForPerson(s *state) bool {
	_, ok := s.pause()
	return !ok && s.inPlace(s.target())
}

func nextStep(s *state) {
	now := s.now()
	s.next.Step = int32(s.step() + 1)
	s.next.StepStartTime, s.next.PauseStartTime, s.next.ScaleTime = &now, nil, nil
}

func promoted(s *state) bool {
	c := s.in.Canary
	return s.in.StableRevision == s.in.Revision && s.in.StableRolled && (c == nil || c.Replicas == 0 && c.Total == 0)
}

// check runs the canary's checks (Plan.MaxFailedChecks documents them). A failure counts when
// none has in the last CheckInterval.
func (s *state) check() {
	in := s.in
	c := in.Canary
	want := s.replicasFor(s.target())
	if asked := s.next.Replicas; asked > 0 && asked < want {
		want = asked // the pods asked for now have until a deadline of their own
	}
	deadline, ok := s.availableBy()
	due := ok && !in.Now.Before(deadline)
	switch {
	case c != nil && c.Current && c.Failure != "":
		s.failure = c.Failure
	case in.Pods.Diagnosed && in.Pods.Trouble != "":
		s.failure = "its pods cannot start: " + in.Pods.Trouble
	case in.Pods.Diagnosed && in.Pods.Restarts > s.next.Restarts:
		s.failure = fmt.Sprintf("its containers restarted (%d restarts in all, %d before)", in.Pods.Restarts, s.next.Restarts)
	case due && s.available() < want:
		d, _ := s.pause()
		s.failure = fmt.Sprintf("%d of %d canary pods available %s after they were asked for", s.available(), want, d+webappv1.CanaryAvailabilityGrace)
	default:
		return
	}
	if last := s.next.LastFailedCheckTime; last != nil && in.Now.Before(last.Add(webappv1.CanaryCheckInterval)) {
		return // counted already in this interval
	}
	now := s.now()
	s.next.FailedChecks++
	s.next.LastFailedCheckTime = &now
	s.next.Restarts = in.Pods.Restarts
	s.next.LastFailedCheck = s.failure
}

// clone copies a status, so that what Next changes is never the input's.
func clone(st *webappv1.CanaryStatus) webappv1.CanaryStatus {
	c := *st
	for _, t := range []**metav1.Time{&c.StepStartTime, &c.ScaleTime, &c.PauseStartTime, &c.LastFailedCheckTime} {
		if *t != nil {
			v := **t
			*t = &v
		}
	}
	if c.Weight != nil {
		w := *c.Weight
		c.Weight = &w
	}
	return c
}

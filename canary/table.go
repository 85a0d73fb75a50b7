package canary

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// RowKind says how a row of Transitions fires.
type RowKind int

const (
	// Record rows keep the phase and record what the call found: each fires whenever its phase
	// and guard match.
	Record RowKind = iota
	// Move rows decide the call: only the first whose phase and guard match fires.
	Move
)

// String is "record" or "move", as the docs print the table.
func (k RowKind) String() string {
	if k == Move {
		return "move"
	}
	return "record"
}

// Row is one row of the canary's table of transitions.
type Row struct {
	// Name says what happened, as the docs print it and Output.Fired reports it.
	Name string
	// Kind says whether it records or moves.
	Kind RowKind
	// From are the phases it fires in; None stands for no canary.
	From []webappv1.CanaryPhase
	// When is its guard; nil always holds.
	When func(*state) bool
	// To is the phase a Move row leads to; a Record row keeps the phase.
	To webappv1.CanaryPhase
	// Do is what it changes in the status besides the phase; nil changes nothing else.
	Do func(*state)
}

// None is the phase of a WebApp before its first canary, or whose spec no longer asks for one.
const None webappv1.CanaryPhase = ""

// Sets of phases the rows fire in.
var (
	anyPhase = append([]webappv1.CanaryPhase{None}, webappv1.CanaryPhases...)
	atAStep  = []webappv1.CanaryPhase{webappv1.CanaryProgressing, webappv1.CanaryPaused}
	serving  = []webappv1.CanaryPhase{webappv1.CanaryProgressing, webappv1.CanaryPaused, webappv1.CanaryPromoting}
	ended    = []webappv1.CanaryPhase{webappv1.CanaryPromoted, webappv1.CanaryAborted, webappv1.CanaryRolledBack}
)

// Transitions is the canary's table, the whole of its behaviour. Each call reads it once, top
// to bottom, each row seeing what the rows above it did: a Record row fires whenever its phase
// and guard match; of the Move rows, only the first whose phase and guard match fires. Every
// change of the canary status is made by a row. What the children are follows from the phase
// reached and the observations (Stages), computed once a call: the last row, describe, reads
// them, and Next answers with the same (state.stage).
var Transitions = []Row{
	{Name: "the spec no longer asks for a canary: its status goes", Kind: Move,
		From: anyPhase, When: noPlan, To: None, Do: forget},
	{Name: "the canary Deployment is first seen to run the revision: the generation that brought it is recorded", Kind: Record,
		From: webappv1.CanaryPhases, When: firstRunsRevision, Do: recordTemplateGeneration},
	{Name: "a check of the analysis is due: what it measured is judged and recorded", Kind: Record,
		From: atAStep, When: analysisDue, Do: recordCheck},
	{Name: "the checks run; a failure counts, at most once every check interval", Kind: Record,
		From: atAStep, When: sameRevision, Do: runChecks},
	{Name: "rolled back: the template is the stable one again", Kind: Move,
		From: append(slices.Clip(serving), webappv1.CanaryAborted), When: rolledBack, To: webappv1.CanaryRolledBack},
	{Name: "a revision the stable Deployment ran within the rollback window: it goes back to it, without a canary", Kind: Move,
		From: webappv1.CanaryPhases, When: withinRollbackWindow, To: webappv1.CanaryRolledBack, Do: rollBackWithinWindow},
	{Name: "a new template, before any canary or after one ended", Kind: Move,
		From: []webappv1.CanaryPhase{None, webappv1.CanaryPromoted, webappv1.CanaryRolledBack}, When: differsFromStable, To: webappv1.CanaryProgressing, Do: start},
	{Name: "a new template, mid-canary or after an abort", Kind: Move,
		From: append(slices.Clip(serving), webappv1.CanaryAborted), When: newRevision, To: webappv1.CanaryProgressing, Do: start},
	{Name: "retry asked for the aborted revision: its canary starts again from the first step", Kind: Move,
		From: []webappv1.CanaryPhase{webappv1.CanaryAborted}, When: retryAsked, To: webappv1.CanaryProgressing, Do: retry},
	{Name: "started again before: the canary Deployment runs a later attempt of the revision, whatever an older status says", Kind: Move,
		From: append(slices.Clip(serving), webappv1.CanaryAborted), When: startedBefore, To: webappv1.CanaryProgressing, Do: agreeWithStart},
	{Name: "aborted before: the canary Deployment says so, whatever an older status says", Kind: Move,
		From: serving, When: abortedBefore, To: webappv1.CanaryAborted, Do: agreeWithAbort},
	{Name: "abort asked", Kind: Move,
		From: atAStep, When: abortAsked, To: webappv1.CanaryAborted},
	{Name: "abort asked while promoting, before the stable Deployment takes the template", Kind: Move,
		From: []webappv1.CanaryPhase{webappv1.CanaryPromoting}, When: abortAskedInTime, To: webappv1.CanaryAborted},
	{Name: "a check shows, at FailConfidence, the canary outside a built-in metric's threshold: aborted at once", Kind: Move,
		From: atAStep, When: analysisDecisive, To: webappv1.CanaryAborted},
	{Name: "checks failed maxFailedChecks times", Kind: Move,
		From: atAStep, When: checksExhausted, To: webappv1.CanaryAborted},
	{Name: "checks inconclusive past onInconclusive.afterSeconds, with action Abort", Kind: Move,
		From: atAStep, When: inconclusiveAbort, To: webappv1.CanaryAborted},
	{Name: "promote asked", Kind: Move,
		From: atAStep, When: promoteAsked, To: webappv1.CanaryPromoting},
	{Name: "promoting before: the canary Deployment says so, whatever an older status says", Kind: Move,
		From: atAStep, When: promotingBefore, To: webappv1.CanaryPromoting},
	{Name: "checks inconclusive past onInconclusive.afterSeconds, with action Promote", Kind: Move,
		From: atAStep, When: inconclusivePromote, To: webappv1.CanaryPromoting},
	{Name: "promote-step asked: the step ends, whatever its pause and checks", Kind: Move,
		From: atAStep, When: promoteStepBeforeLast, To: webappv1.CanaryProgressing, Do: nextStep},
	{Name: "promote-step asked at the last step: promoting", Kind: Move,
		From: atAStep, When: promoteStepAtLast, To: webappv1.CanaryPromoting},
	{Name: "weight in place at a timed step: its pause starts", Kind: Move,
		From: []webappv1.CanaryPhase{webappv1.CanaryProgressing}, When: pauseStarts, To: webappv1.CanaryProgressing, Do: startPause},
	{Name: "weight in place at a manual step: paused until promoted", Kind: Move,
		From: []webappv1.CanaryPhase{webappv1.CanaryProgressing}, When: waitsForPerson, To: webappv1.CanaryPaused},
	{Name: "pause over and the latest check passed: the next step", Kind: Move,
		From: []webappv1.CanaryPhase{webappv1.CanaryProgressing}, When: pauseOverBeforeLast, To: webappv1.CanaryProgressing, Do: nextStep},
	{Name: "pause over and the latest check passed, at the last step: promoting", Kind: Move,
		From: []webappv1.CanaryPhase{webappv1.CanaryProgressing}, When: pauseOverAtLast, To: webappv1.CanaryPromoting},
	{Name: "promoted: the stable Deployment runs the template, the canary's pods are gone", Kind: Move,
		From: []webappv1.CanaryPhase{webappv1.CanaryPromoting}, When: promoted, To: webappv1.CanaryPromoted},
	{Name: "more canary pods asked for within the step: their availability deadline starts now", Kind: Record,
		From: atAStep, When: scaledUpWithinStep, Do: noteScaleTime},
	{Name: "the route is first seen to give the canary all the traffic, or none: the time is recorded, for the scale-down delay", Kind: Record,
		From: append(slices.Clip(ended), webappv1.CanaryPromoting), When: trafficShifted, Do: noteTrafficShift},
	{Name: "the stable Deployment is seen to run a revision, rolled out, that the rollback window does not list first: it is listed first", Kind: Record,
		From: webappv1.CanaryPhases, When: stableRevisionsChanged, Do: noteStableRevisions},
	{Name: "the route is first seen to send the header route's requests to the canary, or no longer: the status says so", Kind: Record,
		From: webappv1.CanaryPhases, When: headerRoutedChanged, Do: noteHeaderRouted},
	{Name: "the annotations that cannot act on this canary are not those the status names: it names them, and why", Kind: Record,
		From: webappv1.CanaryPhases, When: ignoredChanged, Do: noteIgnored},
	{Name: "the status says where the canary stands: its weight, its pods and a message", Kind: Record,
		From: webappv1.CanaryPhases, Do: describe},
}

// The guards of the table.

func noPlan(s *state) bool { return s.in.Plan == nil }

func firstRunsRevision(s *state) bool {
	return s.runsRevision() && s.next.Revision == s.in.Revision && s.next.TemplateGeneration == 0
}

func sameRevision(s *state) bool { return s.next.Revision == s.in.Revision }

func rolledBack(s *state) bool {
	return s.in.Stable != nil && s.in.Revision == s.in.Stable.Revision && s.in.Revision != s.next.Revision
}

func differsFromStable(s *state) bool {
	return s.in.Stable != nil && s.in.Revision != s.in.Stable.Revision
}

func newRevision(s *state) bool { return differsFromStable(s) && s.next.Revision != s.in.Revision }

// withinRollbackWindow: the spec asks for a revision the stable Deployment ran within the
// rollback window, and the stable Deployment does not run it (WithinRollbackWindow). Or it runs
// it already while the status still names the revision listed first, the one it ran before,
// within whose window the spec's is: a rollback whose status was lost, since Metacontroller
// wrote the answer of a call that saw the parent as it was before that rollback's status (an
// older parent) after it. Without this the status would say, for ever, that the stable
// Deployment runs the revision it left.
func withinRollbackWindow(s *state) bool {
	if differsFromStable(s) {
		return WithinRollbackWindow(s.in.Plan, &s.next, s.in.Stable.Revision, s.in.Revision)
	}
	lost := s.in.Stable != nil && s.next.Revision != s.in.Revision && len(s.next.StableRevisions) > 0 && s.next.StableRevisions[0] == s.next.Revision
	return lost && WithinRollbackWindow(s.in.Plan, &s.next, s.next.Revision, s.in.Revision)
}

func stableRevisionsChanged(s *state) bool {
	return !slices.Equal(s.stableRevisions(), s.next.StableRevisions)
}

// stableRevisions is what status.canary.stableRevisions becomes at this call (StableRevisions).
func (s *state) stableRevisions() []string {
	var stable string
	var rolledOut bool
	if st := s.in.Stable; st != nil {
		stable, rolledOut = st.Revision, st.RolledOut
	}
	return StableRevisions(s.in.Plan, &s.next, stable, rolledOut)
}

// abortedBefore: the canary Deployment records an abort of this revision, in this attempt or a
// later one (a retry since takes it back: the retried attempt is later).
func abortedBefore(s *state) bool {
	c := s.in.Canary
	return c != nil && s.names(c.Aborted) && !s.recordEarlier()
}

// retryAsked: the retry annotation names the aborted attempt, with a retry not yet taken by the
// status or the canary Deployment, and a next attempt to number. For attempt 0, a value of the
// hook's earlier versions, "<revision>/<n>", asks for the nth retry, taken once n is no more
// than the retries the status or the canary Deployment counts.
func retryAsked(s *state) bool {
	t, ok := s.namesAttempt(webappv1.AnnotationRetry, s.in.Retry)
	if !ok || s.recordLater() || s.nextAttempt() <= t.Attempt {
		return false
	}
	return t.Attempt > 0 || t.Retry > max(s.next.Retries, s.deploymentRetries())
}

// startedBefore: the canary Deployment runs the spec's revision at a later attempt than the
// status says, or after more retries: a status older than the retry, or than a start of the same
// template again.
func startedBefore(s *state) bool {
	c := s.in.Canary
	return c != nil && s.names(c.Revision) && s.next.Revision == c.Revision && c.Aborted == "" && s.recordLater()
}

// deploymentRetries is the retries the canary Deployment records of this revision, 0 when it
// runs or aborted another.
func (s *state) deploymentRetries() int32 {
	if c := s.in.Canary; c != nil && (s.names(c.Revision) || s.names(c.Aborted)) {
		return c.Retries
	}
	return 0
}

// recordLater reports whether the canary Deployment records this revision at a later attempt
// than the status (or the same attempt after more retries, as the hook's earlier versions
// counted them): the status is older than the Deployment. recordEarlier reports the reverse: what
// the Deployment records is of an earlier attempt; its callers have checked that the record is
// of this revision.
func (s *state) recordLater() bool {
	c := s.in.Canary
	if c == nil || !(s.names(c.Revision) || s.names(c.Aborted) || s.names(c.Promoting)) {
		return false
	}
	return c.Attempt > s.next.Attempt || c.Attempt == s.next.Attempt && c.Retries > s.next.Retries
}

func (s *state) recordEarlier() bool {
	c := s.in.Canary
	return c != nil && (c.Attempt < s.next.Attempt || c.Attempt == s.next.Attempt && c.Retries < s.next.Retries)
}

// promoteStepAsked: the promote-step annotation names this attempt and the step it is at.
func promoteStepAsked(s *state) bool {
	t, ok := s.namesAttempt(webappv1.AnnotationPromoteStep, s.in.PromoteStep)
	return ok && t.Step == s.next.Step
}

func promoteStepBeforeLast(s *state) bool { return promoteStepAsked(s) && !s.atLastStep() }

func promoteStepAtLast(s *state) bool { return promoteStepAsked(s) && s.atLastStep() }

func abortAsked(s *state) bool {
	_, ok := s.namesAttempt(webappv1.AnnotationAbort, s.in.Abort)
	return ok
}

func abortAskedInTime(s *state) bool { return abortAsked(s) && !s.stableTakesTemplate() }

func checksExhausted(s *state) bool { return s.next.FailedChecks >= *s.in.Plan.MaxFailedChecks }

func promoteAsked(s *state) bool {
	_, ok := s.namesAttempt(webappv1.AnnotationPromote, s.in.Promote)
	return ok
}

// promotingBefore: the canary Deployment records a promotion of this attempt (or a later one).
func promotingBefore(s *state) bool {
	c := s.in.Canary
	return c != nil && s.names(c.Promoting) && !s.recordEarlier()
}

func pauseStarts(s *state) bool {
	return s.step().Kind() == webappv1.StepTimed && s.next.PauseStartTime == nil && s.inPlace(s.target()) && s.previewUp()
}

func waitsForPerson(s *state) bool {
	return s.step().Kind() == webappv1.StepManual && s.inPlace(s.target()) && s.previewUp()
}

func pauseOverBeforeLast(s *state) bool { return s.pauseOver() && !s.atLastStep() }

func pauseOverAtLast(s *state) bool { return s.pauseOver() && s.atLastStep() }

func promoted(s *state) bool {
	c := s.in.Canary
	return s.stableRolled() && (c == nil || c.ScaledDown)
}

func scaledUpWithinStep(s *state) bool {
	last := s.in.Last
	return last != nil && last.Revision == s.next.Revision && last.Step == s.next.Step && last.Replicas > 0 && s.replicasFor(s.target()) > last.Replicas
}

func trafficShifted(s *state) bool {
	return (s.next.AllTrafficTime == nil) == s.allTraffic() || (s.next.NoTrafficTime == nil) == s.noTraffic()
}

func ignoredChanged(s *state) bool { return !slices.Equal(s.ignored(), s.next.IgnoredAnnotations) }

func headerRoutedChanged(s *state) bool { return s.next.HeaderRouted != s.headerRouted() }

// The steps of the table: what a row changes besides the phase.

func forget(s *state) { s.next = webappv1.CanaryStatus{} }

func recordTemplateGeneration(s *state) { s.next.TemplateGeneration = s.in.Canary.Generation }

// start starts a new attempt of the spec's revision, numbered by nextAttempt. The rollback
// window's revisions are kept: they are the stable Deployment's, not the canary's.
func start(s *state) {
	now := s.now()
	s.next = webappv1.CanaryStatus{Revision: s.in.Revision, Attempt: s.nextAttempt(), StepStartTime: &now, Restarts: s.in.Pods.Restarts, StableRevisions: s.next.StableRevisions}
	s.verdict = ""
}

// rollBackWithinWindow rolls back to the spec's revision, which the stable Deployment ran within
// the rollback window: the status names it, as a rollback's, and keeps the window's revisions;
// one that names it already is kept as it is.
func rollBackWithinWindow(s *state) {
	if s.next.Phase == webappv1.CanaryRolledBack && s.next.Revision == s.in.Revision {
		return
	}
	s.next = webappv1.CanaryStatus{Revision: s.in.Revision, StableRevisions: s.next.StableRevisions}
	s.verdict = ""
}

// retry starts the aborted revision's canary again, as a new attempt, its retries counting the
// one the annotation asked for (n of the hook's earlier "<revision>/<n>").
func retry(s *state) {
	t, _ := webappv1.ParseCanaryAnnotation(webappv1.AnnotationRetry, s.in.Retry)
	n := max(s.next.Retries+1, t.Retry)
	start(s)
	s.next.Retries = n
}

// agreeWithStart makes an older status agree with the attempt the canary Deployment runs.
func agreeWithStart(s *state) {
	c := s.in.Canary
	start(s)
	s.next.Attempt, s.next.Retries = c.Attempt, c.Retries
}

// agreeWithAbort makes an older status agree with the abort the canary Deployment records, and
// its attempt: one that the annotation did not ask for, and that this call does not find again
// (a check of the analysis that fails decisively, or checks inconclusive past
// onInconclusive.afterSeconds with Abort: the older status lacks what the abort recorded, and the
// call judges it again), was for maxFailedChecks failed checks. Metacontroller writes a status
// computed from an older parent over a newer one (it retries a conflicting write on the latest
// object), so both must come to the same status: a decisive abort after one failed check says
// one, not maxFailedChecks.
func agreeWithAbort(s *state) {
	if s.recordLater() {
		s.next.Attempt, s.next.Retries = s.in.Canary.Attempt, s.in.Canary.Retries
	}
	if !abortAsked(s) && !s.decisive && !inconclusiveAbort(s) {
		s.next.FailedChecks = max(s.next.FailedChecks, *s.in.Plan.MaxFailedChecks)
	}
}

func startPause(s *state) { now := s.now(); s.next.PauseStartTime = &now }

func nextStep(s *state) {
	now := s.now()
	s.next.Step = int32(s.stepIndex() + 1)
	s.next.StepStartTime, s.next.PauseStartTime, s.next.ScaleTime = &now, nil, nil
}

func noteScaleTime(s *state) { now := s.now(); s.next.ScaleTime = &now }

func noteIgnored(s *state) { s.next.IgnoredAnnotations = s.ignored() }

func noteHeaderRouted(s *state) { s.next.HeaderRouted = s.headerRouted() }

func noteStableRevisions(s *state) { s.next.StableRevisions = s.stableRevisions() }

// noteTrafficShift records when the route was first seen to give the canary all the traffic,
// and when none, and forgets each once the route no longer does.
func noteTrafficShift(s *state) {
	now := s.now()
	for _, f := range []struct {
		holds bool
		at    **metav1.Time
	}{{s.allTraffic(), &s.next.AllTrafficTime}, {s.noTraffic(), &s.next.NoTrafficTime}} {
		switch {
		case f.holds && *f.at == nil:
			t := now
			*f.at = &t
		case !f.holds:
			*f.at = nil
		}
	}
}

// runChecks runs Checks on the canary; the first that fails is the call's verdict. The failure
// counts when none has in the last check interval.
func runChecks(s *state) {
	for _, c := range Checks {
		if why := c.Fails(s); why != "" {
			s.verdict = why
			break
		}
	}
	if s.verdict == "" {
		return
	}
	if last := s.next.LastFailedCheckTime; last != nil && s.in.Now.Before(last.Add(webappv1.CanaryCheckInterval)) {
		return // counted already in this interval
	}
	now := s.now()
	s.next.FailedChecks++
	s.next.LastFailedCheckTime = &now
	s.next.LastFailedCheck = s.verdict
	for _, c := range Checks {
		if c.Rebase != nil {
			c.Rebase(s)
		}
	}
}

// describe completes the status with what the stage shows: the canary's weight and pods, and a
// message. No stage reads what it changes.
func describe(s *state) {
	o := s.stage()
	s.next.Weight = s.weight(&o)
	switch o.Form {
	case Run:
		s.next.Replicas = o.Replicas
	case Keep:
		s.next.Replicas = s.in.Canary.Replicas
	default:
		s.next.Replicas = 0
	}
	s.next.Message = s.message(&o)
}

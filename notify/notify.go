// Package notify tells what happened to a WebApp: given what the notifier has told of it (a
// Record) and the WebApp as it is now, Next returns the transitions to tell, each with a key that
// names it deterministically, and the Record to keep. It is pure: no clock, no API, no I/O; the
// notifier (cmd/webapp-notifier) records an Event and sends notifications for each transition.
//
// A transition is a fact of the WebApp's status (a canary started, a step done, a manual step
// waiting, a check failed, an analysis held, a canary aborted, promoted or rolled back, the
// WebApp Degraded or Ready again) that the Record does not hold yet. Facts are read from the
// status alone, so a notifier that restarts, resyncs or runs as another replica finds the same
// facts with the same keys, and tells none twice as long as it keeps the Record.
package notify

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kind is what happened. Its string is the reason of the Event the notifier records
// (CamelCase, as Kubernetes reasons are), and what a trigger's condition compares
// (`transition.kind == 'CanaryAborted'`).
type Kind string

// The kinds of transition, in the order Next returns them within one call.
const (
	// CanaryStarted: a canary of a new revision (or a new attempt of one) began.
	CanaryStarted Kind = "CanaryStarted"
	// CanaryStepDone: the canary went past a step (its weight held, its pause over, or
	// promoted by hand to the next step).
	CanaryStepDone Kind = "CanaryStepDone"
	// CanaryWaiting: the canary holds a manual step until a person promotes it.
	CanaryWaiting Kind = "CanaryWaiting"
	// CanaryCheckFailed: a check failed; with the analysis, the metric, its value and its range.
	CanaryCheckFailed Kind = "CanaryCheckFailed"
	// CanaryAnalysisHeld: the analysis holds the canary: its checks were held inconclusive.
	CanaryAnalysisHeld Kind = "CanaryAnalysisHeld"
	// CanaryAborted: the canary was aborted; the message says why.
	CanaryAborted Kind = "CanaryAborted"
	// CanaryPromoted: the stable Deployment runs the canary's template.
	CanaryPromoted Kind = "CanaryPromoted"
	// CanaryRolledBack: the pod template was set back to the stable one.
	CanaryRolledBack Kind = "CanaryRolledBack"
	// Degraded: the WebApp is Degraded for a reason other than an aborted canary (which
	// CanaryAborted tells); a new reason is a new transition.
	Degraded Kind = "Degraded"
	// ReadyAgain: the WebApp is Ready after a Degraded the notifier told.
	ReadyAgain Kind = "ReadyAgain"
)

// Kinds are every Kind, in Next's order.
var Kinds = []Kind{CanaryStarted, CanaryStepDone, CanaryWaiting, CanaryCheckFailed, CanaryAnalysisHeld,
	CanaryAborted, CanaryPromoted, CanaryRolledBack, Degraded, ReadyAgain}

// Warning reports whether an Event of kind k is of type Warning (else Normal): a failed check,
// a held analysis, an abort and Degraded.
func (k Kind) Warning() bool {
	switch k {
	case CanaryCheckFailed, CanaryAnalysisHeld, CanaryAborted, Degraded:
		return true
	}
	return false
}

// Transition is one thing that happened to a WebApp, as the notifier tells it.
type Transition struct {
	// Key names the transition, the same from any notifier at any time:
	// "<uid>/<revision>@<attempt>/<what>" for a canary's, "<uid>/<what>" for the WebApp's.
	Key string `json:"key"`
	// Kind is what happened.
	Kind Kind `json:"kind"`
	// Message is the status's sentence for it (for a step done, one made of the step's index
	// and weight). Empty when the status has none.
	Message string `json:"message"`
	// Reason is the Ready condition's reason, for Degraded and ReadyAgain; empty otherwise.
	Reason string `json:"reason,omitempty"`
	// Revision and Attempt are the canary's, for a canary's transition.
	Revision string `json:"revision,omitempty"`
	Attempt  int32  `json:"attempt,omitempty"`
	// Step is the index of the step, from 0, for CanaryStepDone and CanaryWaiting; the step
	// the canary was at otherwise. Steps is how many the canary has (0 without a canary).
	Step  int32 `json:"step"`
	Steps int32 `json:"steps"`
	// Metric, Value and Threshold are the first failed metric's, for CanaryCheckFailed from the
	// analysis; empty otherwise.
	Metric    string `json:"metric,omitempty"`
	Value     string `json:"value,omitempty"`
	Threshold string `json:"threshold,omitempty"`
}

// Record is what the notifier has told of one WebApp, the state it keeps between calls. The
// zero Record is a WebApp the notifier has told nothing of.
type Record struct {
	// Told are the keys of the transitions told, pruned to the facts the status still shows:
	// a fact gone from the status never comes back under the same key.
	Told []string `json:"told,omitempty"`
	// Degraded is the key of the Degraded (or aborted canary) last told while the WebApp is
	// not Ready again; empty otherwise. ReadyAgain is told only after one.
	Degraded string `json:"degraded,omitempty"`
}

// Next returns the transitions of w that rec has not told, in the order of Kinds (a canary's
// steps in order), and the Record that holds them. It reads w's uid, annotations-free status and
// its canary's steps, and changes neither input.
//
// A WebApp rec has told nothing of (the zero Record: first seen, or the notifier new) is told
// what its status shows, except a canary that has ended, Promoted or RolledBack, which is the
// past: its facts are recorded as told, silently, so that installing the notifier beside a
// thousand WebApps sends nothing for canaries long done. An aborted canary, a waiting one and a
// Degraded WebApp are told, since they want someone now. A nil w returns no transitions and rec.
func Next(rec Record, w *webappv1.WebApp) ([]Transition, Record) {
	if w == nil {
		return nil, rec
	}
	facts := Facts(w)
	told := make(map[string]bool, len(rec.Told))
	for _, k := range rec.Told {
		told[k] = true
	}
	fresh := len(rec.Told) == 0 && rec.Degraded == ""
	var out []Transition
	next := Record{Degraded: rec.Degraded}
	for _, f := range facts {
		next.Told = append(next.Told, f.Key)
		if told[f.Key] {
			continue
		}
		if f.Kind == ReadyAgain {
			if rec.Degraded == "" {
				next.Told = next.Told[:len(next.Told)-1] // nothing to be Ready again from
				continue
			}
		}
		if fresh && ended(w) && f.Kind != Degraded {
			continue // the past: recorded, not told
		}
		out = append(out, f)
	}
	for _, f := range facts {
		switch f.Kind {
		case Degraded, CanaryAborted:
			next.Degraded = f.Key
		case ReadyAgain:
			next.Degraded = ""
		}
	}
	if len(next.Told) == 0 {
		next.Told = nil
	}
	return out, next
}

// ended reports whether w's canary has ended in a promotion or a rollback.
func ended(w *webappv1.WebApp) bool {
	c := w.Status.Canary
	return c != nil && (c.Phase == webappv1.CanaryPromoted || c.Phase == webappv1.CanaryRolledBack)
}

// Facts returns every transition w's status shows, told or not, in the order of Kinds: what
// Next compares with a Record. The WebApp's Ready condition gives Degraded (phase Degraded,
// unless its reason is CanaryAborted, which the canary's own fact tells) and ReadyAgain (phase
// Ready); status.canary gives the canary's. A status without a canary or conditions has none.
func Facts(w *webappv1.WebApp) []Transition {
	uid := string(w.UID)
	var out []Transition
	if c := w.Status.Canary; c != nil && c.Revision != "" {
		out = append(out, canaryFacts(uid, w, c)...)
	}
	ready := readyCondition(w)
	switch {
	case w.Status.Phase == webappv1.PhaseDegraded && ready != nil && ready.Reason != webappv1.ReasonCanaryAborted:
		out = append(out, Transition{
			Key:     fmt.Sprintf("%s/degraded/%s@%s", uid, ready.Reason, stamp(ready.LastTransitionTime)),
			Kind:    Degraded,
			Reason:  ready.Reason,
			Message: cmp.Or(ready.Message, w.Status.Message),
		})
	case w.Status.Phase == webappv1.PhaseReady && ready != nil && ready.Status == metav1.ConditionTrue:
		out = append(out, Transition{
			Key:     fmt.Sprintf("%s/ready@%s", uid, stamp(ready.LastTransitionTime)),
			Kind:    ReadyAgain,
			Reason:  ready.Reason,
			Message: cmp.Or(ready.Message, w.Status.Message),
		})
	}
	return out
}

// canaryFacts returns the facts of the canary c of w.
func canaryFacts(uid string, w *webappv1.WebApp, c *webappv1.CanaryStatus) []Transition {
	var steps []webappv1.CanaryStep
	if plan := w.Spec.Rollout.Plan(); plan != nil {
		steps = plan.Steps
	}
	base := Transition{Revision: c.Revision, Attempt: c.Attempt, Step: c.Step, Steps: int32(len(steps))}
	prefix := uid + "/" + c.Revision + "@" + strconv.Itoa(int(c.Attempt)) + "/"
	fact := func(kind Kind, what, message string) Transition {
		t := base
		t.Kind, t.Key, t.Message = kind, prefix+what, message
		return t
	}
	out := []Transition{fact(CanaryStarted, "started",
		fmt.Sprintf("Canary of revision %s started%s.", c.Revision, attemptSuffix(c.Attempt)))}

	// Every step before the current one is done, and the current one once the canary is
	// promoting or promoted (a promotion in full skips the steps after it: they are not done).
	done := c.Step
	if c.Phase == webappv1.CanaryPromoting || c.Phase == webappv1.CanaryPromoted {
		done = c.Step + 1
	}
	for i := range done {
		t := fact(CanaryStepDone, "step-"+strconv.Itoa(int(i))+"/done", stepDoneMessage(i, steps))
		t.Step = i
		out = append(out, t)
	}
	if c.Phase == webappv1.CanaryPaused {
		out = append(out, fact(CanaryWaiting, "step-"+strconv.Itoa(int(c.Step))+"/waiting", c.Message))
	}
	if c.FailedChecks > 0 {
		t := fact(CanaryCheckFailed, "failed-"+strconv.Itoa(int(c.FailedChecks)), c.LastFailedCheck)
		if a := c.Analysis; a != nil && a.Result == webappv1.CheckFailed && c.LastFailedCheckTime != nil && a.CheckTime.Equal(c.LastFailedCheckTime) {
			withMetric(&t, a)
		}
		out = append(out, t)
	}
	if a := c.Analysis; a != nil && a.Result == webappv1.CheckFailed &&
		(c.LastFailedCheckTime == nil || !a.CheckTime.Equal(c.LastFailedCheckTime)) {
		// A failure the checks did not count (a built-in metric shown out of range aborts at once).
		t := fact(CanaryCheckFailed, "check@"+stamp(a.CheckTime), a.Message)
		t.Step = a.Step
		withMetric(&t, a)
		out = append(out, t)
	}
	if a := c.Analysis; a != nil && a.Result == webappv1.CheckHeld {
		since := a.CheckTime
		if a.InconclusiveSince != nil {
			since = *a.InconclusiveSince
		}
		t := fact(CanaryAnalysisHeld, "held@"+stamp(since), cmp.Or(a.Message, c.Message))
		t.Step = a.Step
		out = append(out, t)
	}
	switch c.Phase {
	case webappv1.CanaryAborted:
		out = append(out, fact(CanaryAborted, "aborted", c.Message))
	case webappv1.CanaryPromoted:
		out = append(out, fact(CanaryPromoted, "promoted", c.Message))
	case webappv1.CanaryRolledBack:
		out = append(out, fact(CanaryRolledBack, "rolledback", c.Message))
	}
	slices.SortStableFunc(out, func(a, b Transition) int { return cmp.Compare(order(a.Kind), order(b.Kind)) })
	return out
}

// withMetric fills t's metric from the first failed metric of a, and its message from a's when
// t has none.
func withMetric(t *Transition, a *webappv1.AnalysisStatus) {
	for _, m := range a.Metrics {
		if m.Result == webappv1.CheckFailed {
			t.Metric, t.Value, t.Threshold = m.Name, m.Value, m.Threshold
			break
		}
	}
	t.Message = cmp.Or(t.Message, a.Message)
}

func order(k Kind) int { return slices.Index(Kinds, k) }

func stepDoneMessage(i int32, steps []webappv1.CanaryStep) string {
	if int(i) < len(steps) {
		return fmt.Sprintf("Step %d of %d (%d%% of the traffic) done.", i+1, len(steps), steps[i].Weight)
	}
	return fmt.Sprintf("Step %d done.", i+1)
}

func attemptSuffix(a int32) string {
	if a == 0 {
		return ""
	}
	return fmt.Sprintf(" (attempt %d)", a)
}

func readyCondition(w *webappv1.WebApp) *metav1.Condition {
	for i := range w.Status.Conditions {
		if w.Status.Conditions[i].Type == webappv1.ConditionReady {
			return &w.Status.Conditions[i]
		}
	}
	return nil
}

// stamp is t in UTC seconds, as the key of a fact that happened at t.
func stamp(t metav1.Time) string { return t.UTC().Format(time.RFC3339) }

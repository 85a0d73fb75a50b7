package canary

import (
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// Form says what the canary Deployment should be.
type Form int

// The forms of the canary Deployment.
const (
	// Absent: there is none; an observed one is deleted.
	Absent Form = iota
	// Run: it runs Input.Revision with Output.Replicas pods.
	Run
	// Keep: the observed one is kept as it is.
	Keep
	// Zero: the observed one is kept, scaled to zero.
	Zero
)

// Output is what Next decides: the next canary status, and what the children should be.
type Output struct {
	// Status is the next canary status; nil while no canary has run, or once the spec no
	// longer asks for one.
	Status *webappv1.CanaryStatus
	// Stage is where the canary stands within its phase (Stages).
	Stage Stage
	// Form is what the canary Deployment should be, and Replicas its count with Run.
	Form     Form
	Replicas int32
	// Annotations are those the canary Deployment carries, with Run, Keep or Zero, to remember
	// the machine's decisions (AnnotationRevision, AnnotationAborted, AnnotationPromoting,
	// AnnotationRetries, AnnotationAttempt).
	Annotations map[string]string
	// StableTemplate is true when the stable Deployment takes the template the spec asks for,
	// as it always does when none is observed (Input.Stable nil); false holds it as observed
	// (its replicas aside).
	StableTemplate bool
	// Split is true when the route sends StableWeight to <name>-stable and CanaryWeight to
	// <name>-canary; false sends it all to <name>, as without a canary.
	Split                      bool
	StableWeight, CanaryWeight int32
	// HeaderRoute is true, only with Split, when the route sends the requests that match the
	// plan's header route to <name>-canary alone, in a rule before the weighted one.
	HeaderRoute bool
	// Services is true when the Services <name>-stable and <name>-canary should exist.
	Services bool
	// SelectsCanary is true when the Service <name> selects the canary's pods as well as the
	// stable ones.
	SelectsCanary bool
	// Serving is true while the canary runs: phase Progressing, Paused or Promoting.
	Serving bool
	// ResyncAfter asks for a call after that long, when a timer runs out then; 0 for none.
	ResyncAfter time.Duration
	// Timed is true when the decision holds only at Input.Now: a call later may decide otherwise
	// on the same input. That is when a timer runs (ResyncAfter > 0), and whenever a canary with
	// an analysis is at a step, since a check may fall due at any later call. Such an answer must
	// not be replayed.
	Timed bool
	// Report is what the canary says of the WebApp as a whole, while it decides that: nil when
	// the stable Deployment's rollout tells the story.
	Report *Report
	// Condition is the WebApp's Canary condition; nil when the spec asks for no canary.
	Condition *Condition
	// Fired names the rows of Transitions that fired, in the order they did.
	Fired []string
}

// Report is a WebApp's phase, with its Ready condition's reason and message.
type Report struct {
	// Phase is status.phase: Progressing while a canary runs, Degraded after an abort.
	Phase webappv1.Phase
	// Reason and Message are the Ready condition's.
	Reason, Message string
}

// Condition is the WebApp's webappv1.ConditionCanary: True unless the last canary was aborted.
type Condition struct {
	// OK is the condition's status: True unless the last canary was aborted.
	OK bool
	// Reason is the canary's phase, or webappv1.ReasonCanaryIdle before any; Message says what
	// the canary is doing.
	Reason, Message string
}

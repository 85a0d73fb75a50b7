package v1

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Limits of spec.rollout.canary, enforced both by the CRD schema and by the hook's own validation.
const (
	// MaxCanarySteps is the most steps a canary takes.
	MaxCanarySteps = 20
	// MaxCanaryWeight bounds a step's weight, the canary's share of the traffic in percent: all
	// of it.
	MaxCanaryWeight = 100
	// MaxCanaryPauseSeconds bounds a step's pauseSeconds: a week.
	MaxCanaryPauseSeconds = 7 * 24 * 3600
	// DefaultMaxFailedChecks is maxFailedChecks when it is omitted.
	DefaultMaxFailedChecks = 1
	// MaxFailedChecksLimit bounds maxFailedChecks.
	MaxFailedChecksLimit = 100
	// DefaultScaleDownDelaySeconds is scaleDownDelaySeconds when it is omitted: a Gateway may
	// route by the old weights for a while after it accepts the new ones (Traefik v3.7 did for up
	// to 2.4 s, its providersThrottleDuration of 2 s included), and 10 s covers that four times.
	DefaultScaleDownDelaySeconds = 10
	// MaxScaleDownDelaySeconds bounds scaleDownDelaySeconds: an hour.
	MaxScaleDownDelaySeconds = 3600
	// CanaryCheckInterval is the least time between two failed checks that count: a failure
	// that lasts counts once per interval, so that maxFailedChecks is a number of intervals, as
	// in Flagger.
	CanaryCheckInterval = 10 * time.Second
	// CanaryAvailabilityGrace is how long past a step's pauseSeconds the canary's pods may take
	// to be all available, counted from when the canary moved to the step (or was last asked for
	// more pods), before a check fails.
	CanaryAvailabilityGrace = 2 * time.Minute
	// AnalysisFirstCheckDelay is how long after a step's weight is in place
	// (status.canary.pauseStartTime) its first check of the analysis comes; then one comes every
	// intervalSeconds. A canary that fails every request at full load is then stopped seconds
	// after its users first meet it, not an interval later; the few seconds let the Gateway's new
	// weights and a scrape of its metrics come in.
	AnalysisFirstCheckDelay = 3 * time.Second
	// CanaryMinReadySeconds is the canary Deployment's minReadySeconds: a pod counts as available
	// only that long after it is ready, and the route gives the canary only the weight its
	// available pods cover. A pod's endpoint reaches its EndpointSlice about a second after it is
	// ready, and a Gateway's configuration up to 2 s after that (Traefik's
	// providersThrottleDuration): weight given at once was routed to a backend with no server
	// yet, answered 503.
	CanaryMinReadySeconds = 5
	// CanarySuffix makes the names of the canary's Deployment and Service, <name>-canary, and
	// StableSuffix that of the Service the route sends the stable share to, <name>-stable.
	CanarySuffix = "-canary"
	StableSuffix = "-stable"
)

// Annotations a user sets on a WebApp to act on its canary. Each names the attempt it acts on: the
// canary's revision (status.canary.revision), and, when status.canary.attempt is not 0, its
// attempt, "<revision>@<attempt>" (AttemptValue). An annotation acts only on the attempt it names,
// so that one left behind never acts on a later canary, of another template or of the same one
// again: a value that names another revision or attempt does nothing, and the status says so
// (status.canary.ignoredAnnotations). ParseCanaryAnnotation reads every value.
const (
	// AnnotationPromote promotes the canary now: the remaining steps are skipped. Its value is
	// AttemptValue's.
	AnnotationPromote = "webapp.example.com/promote"
	// AnnotationAbort aborts the canary now, as failed checks would. Its value is AttemptValue's.
	AnnotationAbort = "webapp.example.com/abort"
	// AnnotationPromoteStep ends the canary's current step now, as if its pause were over and
	// its latest check had passed: the canary moves to the next step, or is promoted from the
	// last one. Its value is "<attempt>/<step>", step being status.canary.step, so that it acts
	// once, on that step of that attempt (PromoteStepValue).
	AnnotationPromoteStep = "webapp.example.com/promote-step"
	// AnnotationRetry starts an aborted canary again from its first step, its failed checks at 0,
	// as a new attempt. Its value names the aborted attempt (RetryValue), so that once the retry
	// starts the next attempt it never acts again. For attempt 0 it keeps the form of the hook's
	// earlier versions: "<revision>" for the first retry and "<revision>/<n>" for the nth, which
	// acts only while n is more than status.canary.retries.
	AnnotationRetry = "webapp.example.com/retry"
)

// CanaryAnnotations are the annotations that act on a canary, in the order the status lists those
// it ignores.
var CanaryAnnotations = []string{AnnotationPromote, AnnotationPromoteStep, AnnotationAbort, AnnotationRetry}

// Limits of the canary annotations' values, which the admission policy
// (metacontroller/base/policy.yaml) checks too.
const (
	// MaxRevisionLength bounds a revision in an annotation's value: 1 to 63 characters of a-z and
	// 0-9. The hook's revisions are 10 hex digits.
	MaxRevisionLength = 63
	// MaxAnnotationNumber is the largest attempt, step or retry number a value holds: 7 decimal
	// digits. status.canary.attempt never passes it.
	MaxAnnotationNumber = 9_999_999
)

// AttemptValue is the value of AnnotationPromote and AnnotationAbort that names attempt attempt
// (status.canary.attempt) of the canary of revision: the revision alone for attempt 0, as before
// attempts were counted, "<revision>@<attempt>" after.
func AttemptValue(revision string, attempt int32) string {
	if attempt == 0 {
		return revision
	}
	return revision + "@" + strconv.Itoa(int(attempt))
}

// PromoteStepValue is the value of AnnotationPromoteStep that ends step step (status.canary.step)
// of attempt attempt of the canary of revision: "<revision>[@<attempt>]/<step>".
func PromoteStepValue(revision string, attempt, step int32) string {
	return AttemptValue(revision, attempt) + "/" + strconv.Itoa(int(step))
}

// RetryValue is the value of AnnotationRetry that retries attempt attempt of the canary of
// revision, aborted after retries retries (status.canary.retries): AttemptValue's for an attempt
// other than 0; for attempt 0, the form of the hook's earlier versions, the revision alone for
// the first retry and "<revision>/<retries+1>" after.
func RetryValue(revision string, attempt, retries int32) string {
	if attempt > 0 || retries == 0 {
		return AttemptValue(revision, attempt)
	}
	return revision + "/" + strconv.Itoa(int(retries)+1)
}

// CanaryTarget is what the value of a canary annotation names.
type CanaryTarget struct {
	// Revision and Attempt name the canary: status.canary.revision and status.canary.attempt.
	Revision string
	Attempt  int32
	// Step is, for AnnotationPromoteStep, the step it ends (status.canary.step); 0 otherwise.
	Step int32
	// Retry is, for AnnotationRetry of attempt 0, the retry it asks for: n of "<revision>/<n>",
	// else 1. It is 1 for the other annotations.
	Retry int32
}

// CanaryAnnotationForm is the form of key's value, as a message says it.
func CanaryAnnotationForm(key string) string {
	switch key {
	case AnnotationPromoteStep:
		return "<revision>[@<attempt>]/<step>"
	case AnnotationRetry:
		return "<revision>[@<attempt>] or <revision>/<n>"
	}
	return "<revision>[@<attempt>]"
}

// ParseCanaryAnnotation reads the value v of the canary annotation key (one of
// CanaryAnnotations). A revision is 1 to MaxRevisionLength characters of a-z and 0-9; an
// attempt, a step and a retry's n are 1 to 7 decimal digits; "<revision>@0" is "<revision>".
// The error, which says the form the value must have, is returned for an empty value, any other
// form, a retry's n of 0, and a key that is not a canary annotation.
func ParseCanaryAnnotation(key, v string) (CanaryTarget, error) {
	t := CanaryTarget{Retry: 1}
	rest, suffix, slash := strings.Cut(v, "/")
	switch key {
	case AnnotationPromote, AnnotationAbort:
		if slash {
			return t, formError(key)
		}
	case AnnotationPromoteStep:
		n, ok := number(suffix)
		if !slash || !ok {
			return t, formError(key)
		}
		t.Step = n
	case AnnotationRetry:
		if slash {
			n, ok := number(suffix)
			if !ok || n == 0 || strings.Contains(rest, "@") {
				return t, formError(key)
			}
			t.Retry = n
		}
	default:
		return t, fmt.Errorf("%s is not a canary annotation", key)
	}
	rev, attempt, at := strings.Cut(rest, "@")
	if !isRevision(rev) {
		return t, formError(key)
	}
	t.Revision = rev
	if at {
		n, ok := number(attempt)
		if !ok {
			return t, formError(key)
		}
		t.Attempt = n
	}
	return t, nil
}

// formError is the error of a value of key that is not of its form.
func formError(key string) error {
	return errors.New("must be " + CanaryAnnotationForm(key))
}

// isRevision reports whether s is a revision as a value names it: 1 to MaxRevisionLength
// characters of a-z and 0-9.
func isRevision(s string) bool {
	if s == "" || len(s) > MaxRevisionLength {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// number reads 1 to 7 decimal digits.
func number(s string) (int32, bool) {
	if s == "" || len(s) > 7 {
		return 0, false
	}
	var n int32
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int32(c-'0')
	}
	return n, true
}

// Rollout says how a new pod template reaches the pods.
type Rollout struct {
	// canary sends a new pod template first to a Deployment of its own, <name>-canary, and
	// through the HTTPRoute's weights a growing share of the traffic to it, step by step; the
	// stable Deployment takes the template only once the canary is promoted. Without route (or
	// without the gateway-api component) the share is by pod count alone.
	// +optional
	Canary *Canary `json:"canary,omitempty"`
}

// Canary is a canary's plan: its steps and how many failed checks abort it.
type Canary struct {
	// steps are the canary's shares of the traffic, in order, each held for pauseSeconds once it
	// is in place; a step without pauseSeconds waits until the canary is promoted. After the
	// last step the canary is promoted. Weights rise strictly from step to step.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=20
	// +kubebuilder:validation:XValidation:rule="self.all(i, s, i == 0 || self[i - 1].weight < s.weight)",message="the steps' weights must rise strictly from one step to the next"
	Steps []CanaryStep `json:"steps"`

	// maxFailedChecks is how many failed checks of the canary abort it, 1 (the default) to 100.
	// The canary is checked at every call while it runs its steps, and a failure counts at most
	// once every 10 seconds. A check fails when the canary Deployment reports ReplicaFailure or
	// ProgressDeadlineExceeded, when its pods are not all available within the step's
	// pauseSeconds plus 2 minutes of the step's start (or of the last time it was asked for more
	// pods), or, with pod diagnosis, when its pods cannot start or have
	// restarted since the last failure.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxFailedChecks *int32 `json:"maxFailedChecks,omitempty"`

	// scaleDownDelaySeconds is how long pods that no longer get traffic keep running, counted
	// from when the HTTPRoute that takes their traffic away is first seen accepted by its
	// Gateways, 0 to 3600 (default 10), as Argo Rollouts' scaleDownDelaySeconds: a Gateway may
	// route by the old weights for a while after it accepts the new. It holds back the stable
	// Deployment's rollout once the canary has all the traffic, and the canary's scale-down once
	// it has none (after a promotion, an abort or a rollback). Without a route it does not apply.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	ScaleDownDelaySeconds *int32 `json:"scaleDownDelaySeconds,omitempty"`

	// analysis judges the canary by its users' requests, as the Gateway reports them to
	// Prometheus: a timed step goes on only once its latest check passed, and a failed check
	// counts towards maxFailedChecks. It needs the hook to be given a Prometheus (docs/configuration.md).
	// +optional
	Analysis *CanaryAnalysis `json:"analysis,omitempty"`
}

// CanaryStep is one step of a canary.
type CanaryStep struct {
	// weight is the canary's share of the route's traffic in this step, in percent, 1 to 100.
	// The canary Deployment runs ceil(weight × stable replicas / 100) pods, at least 1 (none
	// while the WebApp is scaled to zero).
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	Weight int32 `json:"weight"`

	// pauseSeconds is how long the step holds once its weight is in place (the route carries it
	// and its Gateways accepted it, or, without a route, the canary's pods are available), 0 to
	// a week. Omitted, the step waits until the canary is promoted by hand.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=604800
	PauseSeconds *int32 `json:"pauseSeconds,omitempty"`
}

// CanaryStepKind says how a canary step ends. A new kind of step is a constant here, a case in
// Kind, and a row of the canary's table (canary.Transitions) that ends it.
type CanaryStepKind int

const (
	// StepTimed holds its weight for pauseSeconds once it is in place; then the canary goes on.
	StepTimed CanaryStepKind = iota
	// StepManual holds its weight until the canary is promoted by hand.
	StepManual
)

// Kind is how s ends: StepTimed with pauseSeconds, StepManual without.
func (s CanaryStep) Kind() CanaryStepKind {
	if s.PauseSeconds == nil {
		return StepManual
	}
	return StepTimed
}

// CanaryPhase is where a canary stands.
// +kubebuilder:validation:Enum=Progressing;Paused;Promoting;Promoted;Aborted;RolledBack
type CanaryPhase string

// CanaryPhases are the phases a canary status may have, in the order of the CRD's enum (the
// +kubebuilder:validation:Enum marker on CanaryPhase, tied to this list by a test).
var CanaryPhases = []CanaryPhase{CanaryProgressing, CanaryPaused, CanaryPromoting, CanaryPromoted, CanaryAborted, CanaryRolledBack}

// The phases of a canary.
const (
	// CanaryProgressing: the canary is at a step, moving its weight into place or holding it for
	// the step's pauseSeconds.
	CanaryProgressing CanaryPhase = "Progressing"
	// CanaryPaused: the canary holds a step without pauseSeconds until it is promoted by hand.
	CanaryPaused CanaryPhase = "Paused"
	// CanaryPromoting: the canary takes all the traffic while the stable Deployment rolls to its
	// template, then hands the traffic back.
	CanaryPromoting CanaryPhase = "Promoting"
	// CanaryPromoted: the stable Deployment runs the canary's template; the canary is gone.
	CanaryPromoted CanaryPhase = "Promoted"
	// CanaryAborted: checks failed maxFailedChecks times, or the abort annotation asked; the
	// canary has no traffic and no pods, and the stable Deployment was never touched. A new pod
	// template starts a new canary.
	CanaryAborted CanaryPhase = "Aborted"
	// CanaryRolledBack: the pod template was set back to the stable one; the canary has no
	// traffic and no pods.
	CanaryRolledBack CanaryPhase = "RolledBack"
)

// CanaryStatus is the state of a canary that the hook carries from one call to the next. Every
// field is computed from the spec, the previous CanaryStatus and the observed children.
type CanaryStatus struct {
	// revision names the canary's pod template: a digest of it, which the promote, abort,
	// promote-step and retry annotations name.
	// +required
	Revision string `json:"revision"`

	// attempt tells this canary from the other canaries of its revision (the same pod template
	// again later, or retried), so that an annotation left by one never acts on another. It is 0
	// (omitted) unless, when the canary started or was retried, an annotation on the WebApp or
	// the canary Deployment's record named an attempt of the revision: then it is one more than
	// the highest they named. The annotations name it after the revision, <revision>@<attempt>,
	// and attempt 0 by the revision alone.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=9999999
	Attempt int32 `json:"attempt,omitempty"`

	// phase is where the canary stands: Progressing, Paused, Promoting, Promoted, Aborted or
	// RolledBack.
	// +required
	Phase CanaryPhase `json:"phase"`

	// step is the index in spec.rollout.canary.steps of the step the canary is at, from 0.
	// +optional
	Step int32 `json:"step"`

	// weight is the canary's share of the traffic now, in percent: the weight the observed route
	// gives the Service <name>-canary, or, without a route, the largest weight its available pods
	// cover (the Service <name> then splits by pod count). Unset once the canary serves no
	// traffic; while an abort or a rollback winds the route's weight down, it is the route's.
	// +optional
	Weight *int32 `json:"weight,omitempty"`

	// replicas is the canary Deployment's desired pod count.
	// +optional
	Replicas int32 `json:"replicas"`

	// templateGeneration is the canary Deployment's metadata.generation when it was first seen to
	// carry this revision: once its controller has observed that generation, its available pods
	// are of this revision, whatever replica counts were asked of it since.
	// +optional
	TemplateGeneration int64 `json:"templateGeneration,omitempty"`

	// stepStartTime is when the canary moved to its step; the pods' availability is checked
	// against it.
	// +optional
	StepStartTime *metav1.Time `json:"stepStartTime,omitempty"`

	// scaleTime is when the canary was last asked for more pods within its step (the autoscaler
	// scaled the stable Deployment up); the new pods' availability is checked against it.
	// +optional
	ScaleTime *metav1.Time `json:"scaleTime,omitempty"`

	// pauseStartTime is when the step's weight was in place; the step's pauseSeconds count from
	// it. Unset while the weight moves.
	// +optional
	PauseStartTime *metav1.Time `json:"pauseStartTime,omitempty"`

	// failedChecks counts the checks of this revision that failed. Failures count at most once
	// every 10 seconds, from lastFailedCheckTime.
	// +optional
	FailedChecks int32 `json:"failedChecks,omitempty"`

	// lastFailedCheckTime is when a check of this revision last failed.
	// +optional
	LastFailedCheckTime *metav1.Time `json:"lastFailedCheckTime,omitempty"`

	// lastFailedCheck says which check last failed, and why.
	// +optional
	LastFailedCheck string `json:"lastFailedCheck,omitempty"`

	// restarts is the total of container restarts in the canary's pods when the canary started or
	// a check last failed, with pod diagnosis: more fails the next check.
	// +optional
	Restarts int32 `json:"restarts,omitempty"`

	// message says what the canary is doing, or which check failed.
	// +optional
	Message string `json:"message,omitempty"`

	// allTrafficTime is when the HTTPRoute was first seen, accepted by its Gateways, to give the
	// canary all the traffic while it is promoted: the stable Deployment takes the template
	// scaleDownDelaySeconds after it. Unset otherwise.
	// +optional
	AllTrafficTime *metav1.Time `json:"allTrafficTime,omitempty"`

	// noTrafficTime is when the HTTPRoute was first seen, accepted by its Gateways, to give the
	// canary none of the traffic once it no longer serves (handed back after a promotion,
	// wound down after an abort or a rollback): the canary scales to zero
	// scaleDownDelaySeconds after it. Unset otherwise.
	// +optional
	NoTrafficTime *metav1.Time `json:"noTrafficTime,omitempty"`

	// retries is how many times the webapp.example.com/retry annotation started this revision's
	// canary again after an abort, each retry a new attempt.
	// +optional
	Retries int32 `json:"retries,omitempty"`

	// analysis is the record of the latest check of spec.rollout.canary.analysis at this
	// revision: when it ran, what each metric measured, and its result.
	// +optional
	Analysis *AnalysisStatus `json:"analysis,omitempty"`

	// ignoredAnnotations are the canary annotations on the WebApp that cannot act on this
	// canary, each "<annotation>=<value>: <why>": a value not of its form, or one that names
	// another revision, another attempt, or a step the canary has not reached. An annotation that
	// names this attempt is never listed, whether it has acted or is still to. Omitted when none.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4
	// +kubebuilder:validation:items:MaxLength=512
	IgnoredAnnotations []string `json:"ignoredAnnotations,omitempty"`
}

// ConditionCanary is there while spec.rollout.canary is set. It is True unless the last canary
// was aborted; its reason is the canary's phase (CanaryIdle before any canary), and its message
// what the canary is doing.
const ConditionCanary = "Canary"

// Reasons of a WebApp that runs a canary.
const (
	// ReasonCanaryIdle: no canary has run; the stable Deployment runs the current template.
	ReasonCanaryIdle = "Idle"
	// ReasonCanaryAborted goes with PhaseDegraded: the canary of the current template was
	// aborted, and the Ready condition says which check failed.
	ReasonCanaryAborted = "CanaryAborted"
	// ReasonCanaryProgressing goes with PhaseProgressing while a canary runs its steps, is paused
	// or is being promoted.
	ReasonCanaryProgressing = "CanaryInProgress"
)

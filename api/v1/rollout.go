package v1

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
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
	// MaxHeaderRouteMatches bounds headerRoute.matches, and MaxHeaderMatches each match's
	// headers (the HTTPRoute's own bound); MaxHeaderNameLength and MaxHeaderValueLength are the
	// HTTPRoute's bounds of a header match's name and value.
	MaxHeaderRouteMatches = 8
	MaxHeaderMatches      = 16
	MaxHeaderNameLength   = 256
	MaxHeaderValueLength  = 4096
	// MaxRollbackWindowRevisions bounds rollbackWindow.revisions: a Deployment keeps 10 old
	// ReplicaSets by default (revisionHistoryLimit), from which kubectl webapp undo reads an older
	// revision's template.
	MaxRollbackWindowRevisions = 10
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
// +kubebuilder:validation:XValidation:rule="!(has(self.canary) && has(self.blueGreen))",message="canary and blueGreen are two ways to release: set one"
type Rollout struct {
	// canary sends a new pod template first to a Deployment of its own, <name>-canary, and
	// through the HTTPRoute's weights a growing share of the traffic to it, step by step; the
	// stable Deployment takes the template only once the canary is promoted. Without route (or
	// without the gateway-api component) the share is by pod count alone.
	// +optional
	Canary *Canary `json:"canary,omitempty"`

	// blueGreen runs a new pod template at full size in a Deployment of its own, <name>-canary,
	// reached only through its preview (requests that match a header on the route) while the
	// users keep the old version; then all their traffic switches to it at once, promoted by hand
	// or after autoPromotionSeconds, and the old version stays up for scaleDownDelaySeconds, during
	// which an abort switches everything back at once. It needs route. It runs on the canary's
	// machine, as a canary of one step of weight 0 (Plan): status.canary, the annotations and
	// kubectl webapp are the canary's. It excludes canary.
	// +optional
	BlueGreen *BlueGreen `json:"blueGreen,omitempty"`
}

// Plan is the canary plan the rollout runs: canary, or blueGreen as the canary of one step of
// weight 0, held for autoPromotionSeconds (by hand without), whose header route is the preview
// and counted by its analysis. A nil Rollout, or one with neither, has no plan (nil). The plan of
// a blueGreen is built at each call and shares its pointers: never modify it.
func (r *Rollout) Plan() *Canary {
	switch {
	case r == nil:
		return nil
	case r.Canary != nil:
		return r.Canary
	case r.BlueGreen != nil:
		b := r.BlueGreen
		return &Canary{
			Steps:                 []CanaryStep{{Weight: 0, PauseSeconds: b.AutoPromotionSeconds}},
			MaxFailedChecks:       b.MaxFailedChecks,
			ScaleDownDelaySeconds: b.ScaleDownDelaySeconds,
			Analysis:              b.Analysis,
			HeaderRoute:           &CanaryHeaderRoute{Matches: b.Preview.Matches, Analysis: HeaderRouteInclude},
			RollbackWindow:        b.RollbackWindow,
		}
	}
	return nil
}

// IsBlueGreen reports whether the rollout is a blueGreen one: its new version runs at full size
// before any user reaches it. A nil Rollout is not.
func (r *Rollout) IsBlueGreen() bool { return r != nil && r.Canary == nil && r.BlueGreen != nil }

// DefaultBlueGreenScaleDownDelaySeconds is blueGreen.scaleDownDelaySeconds when it is omitted:
// Argo Rollouts' default, long enough to see that the new version holds before the old one goes.
const DefaultBlueGreenScaleDownDelaySeconds = 30

// BlueGreen is a blue-green release: the new version at full size beside the old, reached only
// through the preview until all traffic switches to it at once.
type BlueGreen struct {
	// preview says which requests reach the new version before the switch: those that match it,
	// a rule of the HTTPRoute before the users' one, as the canary's headerRoute (testers, a
	// synthetic prober). Its analysis counts them: they are the preview's only requests.
	// +required
	Preview BlueGreenPreview `json:"preview"`

	// autoPromotionSeconds is how long the preview holds once the route carries it and all its
	// pods are available, 0 to a week,
	// before all traffic switches to the new version (with an analysis, once its latest check
	// passed too), as Argo Rollouts' autoPromotionSeconds. Omitted, it waits for a promotion by
	// hand (kubectl webapp promote).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=604800
	AutoPromotionSeconds *int32 `json:"autoPromotionSeconds,omitempty"`

	// scaleDownDelaySeconds is how long the old version keeps all its pods once the route that
	// switched its traffic away is first seen accepted by its Gateways, 0 to 3600 (default 30, as
	// Argo Rollouts'): an abort within it switches everything back at once. After it, the stable
	// Deployment takes the new template, and the traffic goes back to it once it has rolled.
	// +optional
	// +kubebuilder:default=30
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	ScaleDownDelaySeconds *int32 `json:"scaleDownDelaySeconds,omitempty"`

	// maxFailedChecks is how many failed checks of the new version abort it before the switch, 1
	// (the default) to 100, as the canary's.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	MaxFailedChecks *int32 `json:"maxFailedChecks,omitempty"`

	// analysis judges the new version by the preview's requests before the switch, as Argo
	// Rollouts' prePromotionAnalysis: the canary's analysis, at its one step.
	// +optional
	Analysis *CanaryAnalysis `json:"analysis,omitempty"`

	// rollbackWindow lets a pod template go back to a revision the stable Deployment ran within
	// the window without a preview or a switch, as the canary's.
	// +optional
	RollbackWindow *RollbackWindow `json:"rollbackWindow,omitempty"`
}

// BlueGreenPreview is how a blue-green release's new version is reached before the switch.
type BlueGreenPreview struct {
	// matches are the requests sent to the new version: those that any of them matches, 1 to 8,
	// each an HTTPRoute match of headers alone (the route's own path is added to each), as the
	// canary's headerRoute.matches.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Matches []HeaderRouteMatch `json:"matches"`
}

// Canary is a canary's plan: its steps and how many failed checks abort it.
// +kubebuilder:validation:XValidation:rule="self.steps.size() == 0 || self.steps[0].weight > 0 || has(self.headerRoute)",message="a step of weight 0 needs headerRoute: without it the canary gets no request",fieldPath=".steps"
// +kubebuilder:validation:XValidation:rule="!has(self.headerRoute) || !has(self.headerRoute.analysis) || self.headerRoute.analysis != 'Exclude' || !has(self.analysis) || self.steps.size() == 0 || self.steps[0].weight > 0",message="headerRoute.analysis Exclude leaves a step of weight 0 no request to judge: include them, or start at a weight above 0",fieldPath=".headerRoute.analysis"
type Canary struct {
	// steps are the canary's shares of the traffic, in order, each held for pauseSeconds once it
	// is in place; a step without pauseSeconds waits until the canary is promoted. After the
	// last step the canary is promoted. Weights rise strictly from step to step; only the first
	// may be 0, with headerRoute: the canary then gets the requests that match it, and no user's.
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

	// headerRoute sends the requests that match it to the canary alone, at every step (a first
	// step of weight 0 included) and while it is promoted, as Argo Rollouts' setHeaderRoute and
	// Flagger's A/B match do: testers or a synthetic prober reach the new version before any user
	// does. It is a rule of the HTTPRoute, before the weighted one, with the route's path and
	// these headers, in place once the canary has a pod available. It needs route.
	// +optional
	HeaderRoute *CanaryHeaderRoute `json:"headerRoute,omitempty"`

	// rollbackWindow lets a pod template go back to a revision the stable Deployment ran within
	// the window without a canary, as Argo Rollouts' rollbackWindow does: setting the template
	// back (or kubectl webapp undo) rolls the stable Deployment back to it at once, as a
	// Deployment rolls, and status.canary says why. Other templates start a canary, as without it.
	// +optional
	RollbackWindow *RollbackWindow `json:"rollbackWindow,omitempty"`
}

// CanaryHeaderRoute is a canary's header route: the requests it sends to the canary whatever
// the step's weight, and whether its analysis counts them.
type CanaryHeaderRoute struct {
	// matches are the requests sent to the canary: those that any of them matches, 1 to 8, each
	// an HTTPRoute match of headers alone (the route's own path is added to each).
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	Matches []HeaderRouteMatch `json:"matches"`

	// analysis says whether the canary's analysis counts the requests the header route sends it,
	// beside those its weight sends: Include (the default) or Exclude. At a step of weight 0 they
	// are its only requests, and they are how a little-used app gets the requests a check needs;
	// Exclude judges the canary by its users' requests alone, and needs a Gateway whose metrics
	// tell the two rules apart (Traefik's do, Istio's do not).
	// +optional
	// +kubebuilder:default=Include
	Analysis HeaderRouteAnalysis `json:"analysis,omitempty"`
}

// HeaderRouteMatch is one match of a header route: the Gateway API's HTTPRouteMatch, headers
// only.
type HeaderRouteMatch struct {
	// headers a request must all match, 1 to 16, each name once (names are case-insensitive),
	// as an HTTPRouteMatch's headers. HTTPRoute has no cookie match: match a cookie with a
	// RegularExpression on the Cookie header, as "(^|; *)canary=always(;|$)".
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(h1, self.exists_one(h2, h2.name.lowerAscii() == h1.name.lowerAscii()))",message="headers must each name a different header: names are case-insensitive"
	Headers []HeaderMatch `json:"headers"`
}

// HeaderMatch matches one request header, as the Gateway API's HTTPHeaderMatch does.
type HeaderMatch struct {
	// type is how value matches the header's: Exact (the default) or RegularExpression. A
	// RegularExpression's dialect is the Gateway's: Traefik reads it as Go's (RE2), matched
	// anywhere in the value unless anchored with ^ and $.
	// +optional
	// +kubebuilder:default=Exact
	Type HeaderMatchType `json:"type,omitempty"`

	// name is the header's name, as HTTP writes it: letters, digits and !#$%&'*+-.^_`|~.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+\-.^_\x60|~]+$`
	Name string `json:"name"`

	// value is the value, or the regular expression, the header must match: 1 to 4096 printable
	// ASCII characters, with single spaces or tabs between them, as the Gateway API asks.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:Pattern=`^[!-~]+([\t ]?[!-~]+)*$`
	Value string `json:"value"`
}

// HeaderMatchType is how a header match's value matches: the Gateway API's HeaderMatchType.
// +kubebuilder:validation:Enum=Exact;RegularExpression
type HeaderMatchType string

// The types of a header match, the Gateway API's own values.
const (
	// HeaderMatchExact matches a header whose value is the value, exactly.
	HeaderMatchExact = HeaderMatchType(gatewayv1.HeaderMatchExact)
	// HeaderMatchRegularExpression matches a header whose value the regular expression matches.
	HeaderMatchRegularExpression = HeaderMatchType(gatewayv1.HeaderMatchRegularExpression)
)

// HeaderRouteAnalysis says whether a canary's analysis counts the requests its header route
// sends it.
// +kubebuilder:validation:Enum=Include;Exclude
type HeaderRouteAnalysis string

// Whether the analysis counts the header route's requests.
const (
	// HeaderRouteInclude counts them with those the step's weight sends the canary.
	HeaderRouteInclude HeaderRouteAnalysis = "Include"
	// HeaderRouteExclude counts only those the step's weight sends.
	HeaderRouteExclude HeaderRouteAnalysis = "Exclude"
)

// Counted reports whether the analysis counts the requests h sends the canary: Include, which
// "" (not defaulted) means too. A nil h sends none.
func (h *CanaryHeaderRoute) Counted() bool {
	return h != nil && h.Analysis != HeaderRouteExclude
}

// RollbackWindow says which revisions a pod template goes back to without a canary.
type RollbackWindow struct {
	// revisions is how many of the revisions the stable Deployment ran before the one it runs are
	// in the window, 1 to 10, newest first: 1 is the previous one alone, as Argo Rollouts counts
	// them. The hook remembers them from when the window is set (status.canary.stableRevisions).
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=10
	Revisions int32 `json:"revisions"`
}

// CanaryStep is one step of a canary.
type CanaryStep struct {
	// weight is the canary's share of the route's traffic in this step, in percent, 1 to 100, or
	// 0 for a first step with headerRoute. The canary Deployment runs ceil(weight × stable
	// replicas / 100) pods, at least 1 (none while the WebApp is scaled to zero).
	// +required
	// +kubebuilder:validation:Minimum=0
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
	// traffic and no pods. With rollbackWindow, also: the pod template was set back to a revision
	// the stable Deployment ran within the window, and the stable Deployment goes back to it
	// without a canary (status.canary.revision is then that revision).
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

	// headerRouted is true while the observed HTTPRoute sends the requests that match
	// spec.rollout.canary.headerRoute to the canary: from when the canary has a pod available
	// until its traffic goes back to the stable Deployment.
	// +optional
	HeaderRouted bool `json:"headerRouted,omitempty"`

	// stableRevisions are, with spec.rollout.canary.rollbackWindow, the revisions the stable
	// Deployment was seen to run with its rollout complete, newest first, each once: the one it
	// runs, then at most rollbackWindow.revisions before it. A pod template set back to one of
	// those before it goes back without a canary. Omitted without a rollback window.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=11
	// +kubebuilder:validation:items:MaxLength=63
	StableRevisions []string `json:"stableRevisions,omitempty"`
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

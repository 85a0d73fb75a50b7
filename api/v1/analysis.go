package v1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Limits and defaults of spec.rollout.canary.analysis, enforced both by the CRD schema and by the
// hook's own validation (TestCRDMatchesConstants ties them to the markers).
const (
	// DefaultAnalysisIntervalSeconds is intervalSeconds when it is omitted, as in Flagger's
	// examples.
	DefaultAnalysisIntervalSeconds = 30
	// MinAnalysisIntervalSeconds and MaxAnalysisIntervalSeconds bound intervalSeconds, and
	// windowSeconds too: Prometheus scrapes a Gateway every few seconds, so a shorter window sees
	// one sample or none.
	MinAnalysisIntervalSeconds = 5
	MaxAnalysisIntervalSeconds = 3600
	// DefaultAnalysisMinRequests is minRequests when it is omitted: below 10 requests, one error
	// moves the success rate by more than ten points.
	DefaultAnalysisMinRequests = 10
	// MaxAnalysisMinRequests bounds minRequests.
	MaxAnalysisMinRequests = 1000000
	// DefaultInconclusiveAfterSeconds is onInconclusive.afterSeconds when it is omitted.
	DefaultInconclusiveAfterSeconds = 600
	// MaxAnalysisMetrics is the most metrics an analysis takes.
	MaxAnalysisMetrics = 10
	// DefaultLatencyQuantile is a request-duration metric's quantile when it sets none: the 99th
	// percentile, as Flagger's request-duration reads.
	DefaultLatencyQuantile = 0.99
)

// The built-in metrics of an analysis, named as Flagger names its own: a metric with one of these
// names and no templateRef is measured from the Gateway's request metrics.
const (
	// MetricRequestSuccessRate is the share of the canary's requests since its step began that
	// were not answered with a 5xx status, in percent: 0 to 100.
	MetricRequestSuccessRate = "request-success-rate"
	// MetricRequestDuration is a quantile of the canary's request durations since its step
	// began, in milliseconds.
	MetricRequestDuration = "request-duration"
)

// CanaryAnalysis judges the canary by what its users get: the Gateway's own request metrics, as
// Prometheus holds them, or metrics of templates the platform team defined. A step's first check
// runs a few seconds after its weight is in place, then one every intervalSeconds; a built-in
// metric judges every request of the canary since its step began, by a sequential test
// (docs/canary.md#the-verdict). A timed step goes on only when its pause is over and its latest
// check passed; a built-in metric shown outside its threshold aborts the canary at once, and a
// template's metric outside its threshold counts towards maxFailedChecks.
// +kubebuilder:validation:XValidation:rule="!has(self.onInconclusive) || !has(self.onInconclusive.afterSeconds) || self.onInconclusive.afterSeconds >= 2 * (has(self.intervalSeconds) ? self.intervalSeconds : 30)",message="onInconclusive.afterSeconds must be at least two intervalSeconds"
type CanaryAnalysis struct {
	// intervalSeconds is how often a check runs, 5 to 3600 (default 30), after a step's first,
	// which comes 3 seconds after its weight is in place. Check times follow from the status, so
	// every replica of the hook measures the same check.
	// +optional
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=3600
	IntervalSeconds *int32 `json:"intervalSeconds,omitempty"`

	// windowSeconds is the span of time a template's metric measures, ending at the check, 5 to
	// 3600 (default: intervalSeconds). The built-in metrics judge every request since the step
	// began.
	// +optional
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=3600
	WindowSeconds *int32 `json:"windowSeconds,omitempty"`

	// minRequests is how many requests the canary must have had since its step began for a
	// check to pass, 0 to 1000000 (default 10): a floor for passing, never for failing (10
	// requests that all failed are evidence). A template's metric is judged only from it on (and
	// compared with the stable version only when that had as many).
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000000
	MinRequests *int32 `json:"minRequests,omitempty"`

	// onInconclusive says what happens when the checks stay inconclusive for long: by default,
	// the step holds.
	// +optional
	OnInconclusive *InconclusivePolicy `json:"onInconclusive,omitempty"`

	// metrics are what each check measures and the thresholds they must meet: the built-ins
	// request-success-rate and request-duration, or a metric from a template the platform team
	// defined (templateRef). 1 to 10, with distinct names.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=10
	Metrics []CanaryMetric `json:"metrics"`
}

// InconclusiveAction is what a canary does when its checks stay inconclusive past
// onInconclusive.afterSeconds.
// +kubebuilder:validation:Enum=Hold;Abort;Promote
type InconclusiveAction string

// The actions on checks that stay inconclusive.
const (
	// InconclusiveHold keeps the canary at its step until a check passes or fails, or a person
	// promotes or aborts it.
	InconclusiveHold InconclusiveAction = "Hold"
	// InconclusiveAbort aborts the canary.
	InconclusiveAbort InconclusiveAction = "Abort"
	// InconclusivePromote promotes the canary, as the promote annotation does.
	InconclusivePromote InconclusiveAction = "Promote"
)

// InconclusiveActions are the actions in the order of the CRD's enum (tied to it by a test).
var InconclusiveActions = []InconclusiveAction{InconclusiveHold, InconclusiveAbort, InconclusivePromote}

// InconclusivePolicy says what happens when a canary's checks stay inconclusive.
type InconclusivePolicy struct {
	// afterSeconds is how long the checks may stay inconclusive, counted from the first of an
	// unbroken run of inconclusive checks, before action is taken, from two intervalSeconds to a
	// week (default 600); less than two intervals counts as two. For Promote, a check that
	// measured nothing (no answer from Prometheus, no request) starts the run again: silence
	// never promotes.
	// +optional
	// +kubebuilder:validation:Minimum=5
	// +kubebuilder:validation:Maximum=604800
	AfterSeconds *int32 `json:"afterSeconds,omitempty"`

	// action is Hold (the default: the step holds, and the status says why), Abort or Promote.
	// +optional
	Action InconclusiveAction `json:"action,omitempty"`
}

// CanaryMetric is one metric of an analysis and the range its value must stay in.
// +kubebuilder:validation:XValidation:rule="has(self.templateRef) || self.name == 'request-success-rate' || self.name == 'request-duration'",message="a metric without templateRef must be request-success-rate or request-duration"
// +kubebuilder:validation:XValidation:rule="!has(self.quantile) || (!has(self.templateRef) && self.name == 'request-duration')",message="quantile is for the built-in request-duration only"
type CanaryMetric struct {
	// name names the metric in the status and in messages, a DNS label. Without templateRef it
	// is a built-in: request-success-rate (percent of requests not answered 5xx) or
	// request-duration (milliseconds, at quantile).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// templateRef names a metric template the platform team defined for the hook (its
	// --analysis-templates file); its query is theirs, and is given only this WebApp's names.
	// +optional
	TemplateRef *MetricTemplateRef `json:"templateRef,omitempty"`

	// quantile is the quantile of request-duration, greater than 0 and less than 1 (default
	// 0.99).
	// +optional
	// +kubebuilder:validation:ExclusiveMinimum=true
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:ExclusiveMaximum=true
	// +kubebuilder:validation:Maximum=1
	Quantile *float64 `json:"quantile,omitempty"`

	// thresholdRange is the range the canary's value must stay in: min, max or both.
	// +required
	ThresholdRange ThresholdRange `json:"thresholdRange"`

	// stable, when set, compares the canary with the stable version in the same window: the
	// metric fails only when the canary is also worse than the stable version by more than
	// maxDifference. An incident that hits both versions then fails nothing.
	// +optional
	Stable *StableComparison `json:"stable,omitempty"`
}

// MetricTemplateRef names a metric template of the hook's configuration.
type MetricTemplateRef struct {
	// name is the template's name, a DNS label.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
}

// ThresholdRange bounds a metric's value, as Flagger's thresholdRange does: a value below min or
// above max fails.
// +kubebuilder:validation:XValidation:rule="has(self.min) || has(self.max)",message="thresholdRange needs min, max or both"
// +kubebuilder:validation:XValidation:rule="!has(self.min) || !has(self.max) || self.min <= self.max",message="thresholdRange's min must not exceed its max"
type ThresholdRange struct {
	// min is the least value that passes.
	// +optional
	Min *float64 `json:"min,omitempty"`
	// max is the greatest value that passes.
	// +optional
	Max *float64 `json:"max,omitempty"`
}

// StableComparison compares a metric of the canary with the stable version's.
type StableComparison struct {
	// maxDifference is how much worse than the stable version's the canary's value may be, in
	// the metric's unit (percentage points for request-success-rate, milliseconds for
	// request-duration), 0 or more. Worse is lower for a metric with only min, higher for one
	// with only max, and farther from the range for one with both.
	// +required
	// +kubebuilder:validation:Minimum=0
	MaxDifference float64 `json:"maxDifference"`
}

// Interval is how often the analysis checks: intervalSeconds, defaulted.
func (a *CanaryAnalysis) Interval() time.Duration {
	return seconds(a.IntervalSeconds, DefaultAnalysisIntervalSeconds)
}

// Window is what each check measures: windowSeconds, or the interval when it is unset.
func (a *CanaryAnalysis) Window() time.Duration {
	if a.WindowSeconds == nil {
		return a.Interval()
	}
	return seconds(a.WindowSeconds, 0)
}

// Inconclusive is onInconclusive, defaulted: how long the checks may stay inconclusive, and what
// is done then.
//
// afterSeconds is at least two intervals: a shorter one, which the schema refuses now but a
// WebApp saved before may hold, counts as two, so that one failed query can never act.
func (a *CanaryAnalysis) Inconclusive() (time.Duration, InconclusiveAction) {
	after, action := time.Duration(DefaultInconclusiveAfterSeconds)*time.Second, InconclusiveHold
	if p := a.OnInconclusive; p != nil {
		after = seconds(p.AfterSeconds, DefaultInconclusiveAfterSeconds)
		if p.Action != "" {
			action = p.Action
		}
	}
	return max(after, 2*a.Interval()), action
}

// Requests is minRequests, defaulted.
func (a *CanaryAnalysis) Requests() int32 {
	if a.MinRequests == nil {
		return DefaultAnalysisMinRequests
	}
	return *a.MinRequests
}

// LatencyQuantile is m's quantile, defaulted; it means something for request-duration only.
func (m *CanaryMetric) LatencyQuantile() float64 {
	if m.Quantile == nil {
		return DefaultLatencyQuantile
	}
	return *m.Quantile
}

func seconds(p *int32, def int32) time.Duration {
	if p == nil {
		return time.Duration(def) * time.Second
	}
	return time.Duration(*p) * time.Second
}

// CheckResult is the result of a check of the analysis, or of one of its metrics.
// +kubebuilder:validation:Enum=Passed;Failed;Inconclusive;Held
type CheckResult string

// The results of a check.
const (
	// CheckPassed: every metric was shown in its range (a built-in at 95 % confidence, on at
	// least minRequests requests).
	CheckPassed CheckResult = "Passed"
	// CheckFailed: a metric was shown out of its range (a built-in at 99 % confidence, which
	// aborts the canary at once; a template's metric counts towards maxFailedChecks).
	CheckFailed CheckResult = "Failed"
	// CheckInconclusive: too few requests to tell yet, no data, or no answer from Prometheus: the
	// check neither fails nor lets the step go on.
	CheckInconclusive CheckResult = "Inconclusive"
	// CheckHeld: an inconclusive check the canary holds for: both versions fail a metric compared
	// with the stable version (an incident, not the canary), or the checks have stayed
	// inconclusive past onInconclusive.afterSeconds with action Hold. Neither fails nor passes.
	CheckHeld CheckResult = "Held"
)

// CheckResults are the results in the order of the CRD's enum (tied to it by a test).
var CheckResults = []CheckResult{CheckPassed, CheckFailed, CheckInconclusive, CheckHeld}

// AnalysisStatus is the record of the canary's latest check: what it measured and what it
// found. It is written by the call that ran the check, and read by every later call, whatever
// replica of the hook answers: a check is never run, nor counted, twice.
type AnalysisStatus struct {
	// checkTime is when the check was: FirstCheckDelay (3 s) after the step's weight was in
	// place, then every intervalSeconds.
	// +required
	CheckTime metav1.Time `json:"checkTime"`

	// step is the step the canary was at when the check ran.
	// +optional
	Step int32 `json:"step"`

	// windowSeconds is the span of time the check judged, ending at checkTime: since the step
	// began, for the built-in metrics.
	// +required
	WindowSeconds int32 `json:"windowSeconds"`

	// result is Passed, Failed or Inconclusive.
	// +required
	Result CheckResult `json:"result"`

	// requests is how many requests the canary had since its step began.
	// +optional
	Requests *int64 `json:"requests,omitempty"`

	// stableRequests is how many requests the stable version had since the canary's step began,
	// when a metric is compared with it.
	// +optional
	StableRequests *int64 `json:"stableRequests,omitempty"`

	// message says what the check found: the metric that failed and its value against its
	// threshold, or why it was inconclusive.
	// +optional
	Message string `json:"message,omitempty"`

	// inconclusiveSince is the checkTime of the first of an unbroken run of inconclusive checks;
	// unset after a check that passed or failed.
	// +optional
	InconclusiveSince *metav1.Time `json:"inconclusiveSince,omitempty"`

	// metrics are each metric's value and result, in the order of spec.rollout.canary.analysis.metrics.
	// +optional
	// +listType=map
	// +listMapKey=name
	Metrics []MetricStatus `json:"metrics,omitempty"`
}

// MetricStatus is what a check found of one metric.
type MetricStatus struct {
	// name is the metric's.
	// +required
	Name string `json:"name"`

	// value is the canary's value, in the metric's unit, with at most 4 significant digits;
	// unset when there was no data.
	// +optional
	Value string `json:"value,omitempty"`

	// stable is the stable version's value, when the metric is compared with it.
	// +optional
	Stable string `json:"stable,omitempty"`

	// threshold is the range the value had to stay in, as ">= 99", "<= 500" or "90..100", with
	// the allowed difference from the stable version when compared with it.
	// +optional
	Threshold string `json:"threshold,omitempty"`

	// result is Passed, Failed or Inconclusive.
	// +required
	Result CheckResult `json:"result"`
}

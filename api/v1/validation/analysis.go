package validation

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// validateAnalysis reports what the CRD schema refuses in spec.rollout.canary.analysis, so that
// a WebApp the schema never saw (an older CRD, a request by curl) is refused the same way: an
// interval, window, minRequests or afterSeconds out of range, an action that is not Hold, Abort
// or Promote, no metric or too many, a metric name that is not a DNS label or repeats, a
// built-in name that is not one (without templateRef), a quantile on any other metric or outside
// (0, 1), a threshold range with no bound, a bound that is not finite or a min above its max, a
// request-success-rate bound outside 0..100, and a negative or infinite maxDifference. A nil
// analysis is valid. fld is the analysis's path.
func validateAnalysis(a *webappv1.CanaryAnalysis, fld *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	errs := validateRange(a.IntervalSeconds, webappv1.MinAnalysisIntervalSeconds, webappv1.MaxAnalysisIntervalSeconds, fld.Child("intervalSeconds"))
	errs = append(errs, validateRange(a.WindowSeconds, webappv1.MinAnalysisIntervalSeconds, webappv1.MaxAnalysisIntervalSeconds, fld.Child("windowSeconds"))...)
	errs = append(errs, validateRange(a.MinRequests, 0, webappv1.MaxAnalysisMinRequests, fld.Child("minRequests"))...)
	if p := a.OnInconclusive; p != nil {
		at := fld.Child("onInconclusive")
		errs = append(errs, validateRange(p.AfterSeconds, webappv1.MinAnalysisIntervalSeconds, webappv1.MaxCanaryPauseSeconds, at.Child("afterSeconds"))...)
		switch p.Action {
		case "", webappv1.InconclusiveHold, webappv1.InconclusiveAbort, webappv1.InconclusivePromote:
		default:
			errs = append(errs, field.NotSupported(at.Child("action"), p.Action, webappv1.InconclusiveActions))
		}
	}
	metrics := fld.Child("metrics")
	errs = append(errs, validateCount(len(a.Metrics), webappv1.MaxAnalysisMetrics, metrics, "an analysis needs at least one metric")...)
	seen := map[string]bool{}
	for i := range a.Metrics {
		m, at := &a.Metrics[i], metrics.Index(i)
		errs = append(errs, validateMetric(m, at)...)
		if seen[m.Name] {
			errs = append(errs, field.Duplicate(at.Child("name"), m.Name))
		}
		seen[m.Name] = true
	}
	return errs
}

// validateMetric reports what is wrong with one metric of an analysis.
func validateMetric(m *webappv1.CanaryMetric, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(m.Name) {
		errs = append(errs, field.Invalid(fld.Child("name"), Short(m.Name), msg))
	}
	builtin := m.TemplateRef == nil
	if r := m.TemplateRef; r != nil {
		for _, msg := range validation.IsDNS1123Label(r.Name) {
			errs = append(errs, field.Invalid(fld.Child("templateRef", "name"), Short(r.Name), msg))
		}
	} else if m.Name != webappv1.MetricRequestSuccessRate && m.Name != webappv1.MetricRequestDuration {
		errs = append(errs, field.Invalid(fld.Child("name"), Short(m.Name), fmt.Sprintf("a metric without templateRef must be %s or %s", webappv1.MetricRequestSuccessRate, webappv1.MetricRequestDuration)))
	}
	if q := m.Quantile; q != nil {
		switch {
		case !builtin || m.Name != webappv1.MetricRequestDuration:
			errs = append(errs, field.Forbidden(fld.Child("quantile"), "quantile is for the built-in "+webappv1.MetricRequestDuration+" only"))
		case !(*q > 0 && *q < 1):
			errs = append(errs, field.Invalid(fld.Child("quantile"), *q, "must be greater than 0 and less than 1"))
		}
	}
	r, at := m.ThresholdRange, fld.Child("thresholdRange")
	if r.Min == nil && r.Max == nil {
		errs = append(errs, field.Required(at, "thresholdRange needs min, max or both"))
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if builtin && m.Name == webappv1.MetricRequestSuccessRate {
		lo, hi = 0, 100
	}
	if builtin && m.Name == webappv1.MetricRequestDuration {
		lo = 0
	}
	for _, b := range []struct {
		v    *float64
		name string
	}{{r.Min, "min"}, {r.Max, "max"}} {
		switch {
		case b.v == nil:
		case math.IsNaN(*b.v) || math.IsInf(*b.v, 0):
			errs = append(errs, field.Invalid(at.Child(b.name), fmt.Sprint(*b.v), "must be a finite number"))
		case *b.v < lo || *b.v > hi:
			errs = append(errs, field.Invalid(at.Child(b.name), *b.v, fmt.Sprintf("must be between %v and %v for %s", lo, hi, m.Name)))
		}
	}
	if r.Min != nil && r.Max != nil && *r.Min > *r.Max {
		errs = append(errs, field.Invalid(at.Child("min"), *r.Min, fmt.Sprintf("must not exceed max (%v)", *r.Max)))
	}
	if c := m.Stable; c != nil && (math.IsNaN(c.MaxDifference) || math.IsInf(c.MaxDifference, 0) || c.MaxDifference < 0) {
		errs = append(errs, field.Invalid(fld.Child("stable", "maxDifference"), fmt.Sprint(c.MaxDifference), "must be a finite number, 0 or more"))
	}
	return errs
}

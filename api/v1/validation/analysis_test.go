package validation

import (
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

func TestValidateAnalysis(t *testing.T) {
	at := field.NewPath("spec", "rollout", "canary", "analysis")
	success := func(r webappv1.ThresholdRange) webappv1.CanaryMetric {
		return webappv1.CanaryMetric{Name: webappv1.MetricRequestSuccessRate, ThresholdRange: r}
	}
	duration := func(q *float64) webappv1.CanaryMetric {
		return webappv1.CanaryMetric{Name: webappv1.MetricRequestDuration, Quantile: q, ThresholdRange: webappv1.ThresholdRange{Max: new(500.0)}}
	}
	template := func(name, ref string) webappv1.CanaryMetric {
		return webappv1.CanaryMetric{Name: name, TemplateRef: &webappv1.MetricTemplateRef{Name: ref}, ThresholdRange: webappv1.ThresholdRange{Max: new(5.0)}}
	}
	valid := func(edit func(*webappv1.CanaryAnalysis)) *webappv1.CanaryAnalysis {
		a := &webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{success(webappv1.ThresholdRange{Min: new(99.0)}), duration(nil)}}
		if edit != nil {
			edit(a)
		}
		return a
	}
	tests := []struct {
		name string
		in   *webappv1.CanaryAnalysis
		want []fieldErr
	}{
		{"none", nil, nil},
		{"the built-ins and a template", valid(func(a *webappv1.CanaryAnalysis) { a.Metrics = append(a.Metrics, template("errors", "error-budget")) }), nil},
		{"intervals and bounds at their limits", valid(func(a *webappv1.CanaryAnalysis) {
			a.IntervalSeconds, a.WindowSeconds, a.MinRequests = new(int32(webappv1.MinAnalysisIntervalSeconds)), new(int32(webappv1.MaxAnalysisIntervalSeconds)), new(int32(webappv1.MaxAnalysisMinRequests))
			a.OnInconclusive = &webappv1.InconclusivePolicy{AfterSeconds: new(int32(webappv1.MaxCanaryPauseSeconds)), Action: webappv1.InconclusivePromote}
		}), nil},
		{"an interval below 5 s", valid(func(a *webappv1.CanaryAnalysis) { a.IntervalSeconds = new(int32(4)) }),
			[]fieldErr{invalid("spec.rollout.canary.analysis.intervalSeconds").of(int32(4))}},
		{"a window past an hour", valid(func(a *webappv1.CanaryAnalysis) { a.WindowSeconds = new(int32(3601)) }),
			[]fieldErr{invalid("spec.rollout.canary.analysis.windowSeconds").of(int32(3601))}},
		{"negative minRequests", valid(func(a *webappv1.CanaryAnalysis) { a.MinRequests = new(int32(-1)) }),
			[]fieldErr{invalid("spec.rollout.canary.analysis.minRequests").of(int32(-1))}},
		{"an unknown action", valid(func(a *webappv1.CanaryAnalysis) { a.OnInconclusive = &webappv1.InconclusivePolicy{Action: "Retry"} }),
			[]fieldErr{notSupported("spec.rollout.canary.analysis.onInconclusive.action")}},
		{"afterSeconds below 5", valid(func(a *webappv1.CanaryAnalysis) {
			a.OnInconclusive = &webappv1.InconclusivePolicy{AfterSeconds: new(int32(1))}
		}),
			[]fieldErr{invalid("spec.rollout.canary.analysis.onInconclusive.afterSeconds")}},
		{"no metric", valid(func(a *webappv1.CanaryAnalysis) { a.Metrics = nil }),
			[]fieldErr{required("spec.rollout.canary.analysis.metrics")}},
		{"too many metrics", valid(func(a *webappv1.CanaryAnalysis) {
			a.Metrics = nil
			for i := range webappv1.MaxAnalysisMetrics + 1 {
				a.Metrics = append(a.Metrics, template("m"+string(rune('a'+i)), "t"))
			}
		}), []fieldErr{tooMany("spec.rollout.canary.analysis.metrics")}},
		{"a name twice", valid(func(a *webappv1.CanaryAnalysis) { a.Metrics = append(a.Metrics, duration(nil)) }),
			[]fieldErr{duplicate("spec.rollout.canary.analysis.metrics[2].name")}},
		{"a built-in that is not one", valid(func(a *webappv1.CanaryAnalysis) { a.Metrics[0].Name = "request-errors" }),
			[]fieldErr{invalid("spec.rollout.canary.analysis.metrics[0].name").with("must be request-success-rate or request-duration")}},
		{"a name that is no DNS label", valid(func(a *webappv1.CanaryAnalysis) { a.Metrics = append(a.Metrics, template(`x"}`, "t")) }),
			[]fieldErr{invalid("spec.rollout.canary.analysis.metrics[2].name")}},
		{"a templateRef that is no DNS label", valid(func(a *webappv1.CanaryAnalysis) { a.Metrics = append(a.Metrics, template("x", `a.b"}`)) }),
			[]fieldErr{invalid("spec.rollout.canary.analysis.metrics[2].templateRef.name")}},
		{"a quantile of 1", valid(func(a *webappv1.CanaryAnalysis) { a.Metrics[1] = duration(new(1.0)) }),
			[]fieldErr{invalid("spec.rollout.canary.analysis.metrics[1].quantile").of(1.0)}},
		{"a quantile on the success rate", valid(func(a *webappv1.CanaryAnalysis) { a.Metrics[0].Quantile = new(0.5) }),
			[]fieldErr{forbidden("spec.rollout.canary.analysis.metrics[0].quantile")}},
		{"no bound", valid(func(a *webappv1.CanaryAnalysis) { a.Metrics[0] = success(webappv1.ThresholdRange{}) }),
			[]fieldErr{required("spec.rollout.canary.analysis.metrics[0].thresholdRange")}},
		{"a success rate above 100", valid(func(a *webappv1.CanaryAnalysis) { a.Metrics[0] = success(webappv1.ThresholdRange{Min: new(101.0)}) }),
			[]fieldErr{invalid("spec.rollout.canary.analysis.metrics[0].thresholdRange.min").with("between 0 and 100")}},
		{"a bound that is not finite", valid(func(a *webappv1.CanaryAnalysis) { a.Metrics[1].ThresholdRange.Max = new(math.Inf(1)) }),
			[]fieldErr{invalid("spec.rollout.canary.analysis.metrics[1].thresholdRange.max").with("finite")}},
		{"min above max", valid(func(a *webappv1.CanaryAnalysis) {
			a.Metrics[0] = success(webappv1.ThresholdRange{Min: new(99.0), Max: new(90.0)})
		}),
			[]fieldErr{invalid("spec.rollout.canary.analysis.metrics[0].thresholdRange.min").with("must not exceed max (90)")}},
		{"a negative maxDifference", valid(func(a *webappv1.CanaryAnalysis) { a.Metrics[0].Stable = &webappv1.StableComparison{MaxDifference: -1} }),
			[]fieldErr{invalid("spec.rollout.canary.analysis.metrics[0].stable.maxDifference")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateAnalysis(tt.in, at), tt.want...)
		})
	}
}

package canary_test

import (
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// TestDue checks when a check of the analysis is due: at whole multiples of the interval, once,
// and, at the first step, only once the window measured begins after the canary started. The
// canary's Service, and the Gateway's series of its requests, have the same name whatever the
// revision: found by TestAnalysis (e2e), where a good canary started 5 s after a failing one was
// aborted had a check of a window that ended before it started, whose 153 requests were the
// aborted canary's 500s, counted as its own failed check.
func TestDue(t *testing.T) {
	plan := &webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 20, PauseSeconds: ptr(int32(10))}, {Weight: 50, PauseSeconds: ptr(int32(10))}},
		Analysis: &webappv1.CanaryAnalysis{IntervalSeconds: ptr(int32(5)), WindowSeconds: ptr(int32(10)),
			Metrics: []webappv1.CanaryMetric{{Name: webappv1.MetricRequestSuccessRate, ThresholdRange: webappv1.ThresholdRange{Min: ptr(99.0)}}}}}
	for _, c := range []struct {
		name string
		last *webappv1.CanaryStatus
		now  time.Duration // after t0
		at   time.Duration // the check due, after t0; -1 for none
	}{
		{"step 1, started at t0: the check at t0 measures the 10 s before the canary: not due",
			running(webappv1.CanaryProgressing, 0, nil), 2 * time.Second, -1},
		{"step 1: the check at t0+5 s measures 5 s before the canary: not due",
			running(webappv1.CanaryProgressing, 0, nil), 9 * time.Second, -1},
		{"step 1: the check at t0+10 s measures from t0 on: due",
			running(webappv1.CanaryProgressing, 0, nil), 12 * time.Second, 10 * time.Second},
		{"step 1, started at t0+3 s: the check at t0+10 s still reaches before it: not due",
			running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.StepStartTime = at(3 * time.Second) }), 12 * time.Second, -1},
		{"step 1, started at t0+3 s: the check at t0+15 s is due",
			running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.StepStartTime = at(3 * time.Second) }), 15 * time.Second, 15 * time.Second},
		{"step 2, started 1 s ago: its window reaches into step 1, of the same canary: due",
			running(webappv1.CanaryProgressing, 1, func(st *webappv1.CanaryStatus) { st.StepStartTime = at(29 * time.Second) }), 30 * time.Second, 30 * time.Second},
		{"a check the status records already: not due",
			running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
				st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(20 * time.Second), Result: webappv1.CheckPassed}
			}), 24 * time.Second, -1},
		{"the next one is",
			running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
				st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(20 * time.Second), Result: webappv1.CheckPassed}
			}), 25 * time.Second, 25 * time.Second},
		{"promoting: not due", running(webappv1.CanaryPromoting, 1, nil), time.Minute, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := canary.Due(plan, c.last, t0.Add(c.now))
			switch {
			case c.at < 0 && ok:
				t.Errorf("Due = %s; want none", got.Format(time.TimeOnly))
			case c.at >= 0 && (!ok || !got.Equal(t0.Add(c.at))):
				t.Errorf("Due = %s, %v; want %s", got.Format(time.TimeOnly), ok, t0.Add(c.at).Format(time.TimeOnly))
			}
		})
	}
}

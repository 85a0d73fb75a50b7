package canary_test

import (
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// TestDue checks when a check of the analysis is due: FirstCheckDelay after the step's anchor
// (when its weight was in place, or until then when it began), then every interval, once each;
// and that its span starts when the step began. The canary's Service, and the Gateway's series of
// its requests, have the same name whatever the revision: found by TestAnalysis (e2e), where a
// good canary started 5 s after a failing one was aborted had a check of a window that ended
// before it started, whose 153 requests were the aborted canary's 500s, counted as its own failed
// check. A span that starts when the step began never reaches into an earlier canary.
func TestDue(t *testing.T) {
	plan := &webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 20, PauseSeconds: ptr(int32(10))}, {Weight: 50, PauseSeconds: ptr(int32(10))}},
		Analysis: &webappv1.CanaryAnalysis{IntervalSeconds: ptr(int32(10)), WindowSeconds: ptr(int32(10)),
			Metrics: []webappv1.CanaryMetric{{Name: webappv1.MetricRequestSuccessRate, ThresholdRange: webappv1.ThresholdRange{Min: ptr(99.0)}}}}}
	recorded := func(d time.Duration) func(*webappv1.CanaryStatus) {
		return func(st *webappv1.CanaryStatus) {
			st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(d), Result: webappv1.CheckInconclusive}
		}
	}
	for _, c := range []struct {
		name     string
		last     *webappv1.CanaryStatus
		now      time.Duration // after t0
		at, from time.Duration // the check due and its span's start, after t0; at -1 for none
	}{
		{"step 1, started at t0: its first check is 3 s later, not before",
			running(webappv1.CanaryProgressing, 0, nil), 2 * time.Second, -1, 0},
		{"step 1: the first check, over the 3 s since the step began",
			running(webappv1.CanaryProgressing, 0, nil), 3 * time.Second, 3 * time.Second, 0},
		{"step 1: a call late for the first check measures it, up to its time",
			running(webappv1.CanaryProgressing, 0, nil), 12 * time.Second, 3 * time.Second, 0},
		{"a check the status records already: not due",
			running(webappv1.CanaryProgressing, 0, recorded(3*time.Second)), 12 * time.Second, -1, 0},
		{"the next one, an interval later, judges every request since the step began",
			running(webappv1.CanaryProgressing, 0, recorded(3*time.Second)), 13 * time.Second, 13 * time.Second, 0},
		{"the weight in place at t0+20 s: the next check is 3 s after it, not on the old grid",
			running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
				recorded(13 * time.Second)(st)
				st.PauseStartTime = at(20 * time.Second)
			}), 22 * time.Second, -1, 0},
		{"… and due then, its span still from the step's start",
			running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
				recorded(13 * time.Second)(st)
				st.PauseStartTime = at(20 * time.Second)
			}), 23 * time.Second, 23 * time.Second, 0},
		{"step 2, started at t0+29 s after a check at t0+23 s: its first check at t0+32 s, from t0+29 s",
			running(webappv1.CanaryProgressing, 1, func(st *webappv1.CanaryStatus) {
				recorded(23 * time.Second)(st)
				st.StepStartTime = at(29 * time.Second)
			}), 32 * time.Second, 32 * time.Second, 29 * time.Second},
		{"paused at a manual step: checks go on, from the step's start",
			running(webappv1.CanaryPaused, 1, nil), 50 * time.Second, 43 * time.Second, 0},
		{"promoting: not due", running(webappv1.CanaryPromoting, 1, nil), time.Minute, -1, 0},
		{"no step start time: not due", running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.StepStartTime = nil }), time.Minute, -1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := canary.Due(plan, c.last, t0.Add(c.now))
			switch {
			case c.at < 0 && ok:
				t.Errorf("Due = %s..%s; want none", got.From.Format(time.TimeOnly), got.To.Format(time.TimeOnly))
			case c.at >= 0 && (!ok || !got.To.Equal(t0.Add(c.at)) || !got.From.Equal(t0.Add(c.from))):
				t.Errorf("Due = %s..%s, %v; want %s..%s", got.From.Format(time.TimeOnly), got.To.Format(time.TimeOnly), ok,
					t0.Add(c.from).Format(time.TimeOnly), t0.Add(c.at).Format(time.TimeOnly))
			}
		})
	}
}

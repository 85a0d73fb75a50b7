package canary_test

import (
	"fmt"
	"slices"
	"strings"
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

// TestEdgeAndTableAgreeOnDue pins the one decision of whether a check is due, Due, as its two
// callers make it. The edge (webhook's measure) calls it on the status Metacontroller sent back,
// and measures the check it finds due; the table's row "a check of the analysis is due" calls it
// on the status the rows above it computed, which change nothing Due reads. So the two disagree
// in one case only: the status is of another revision than the spec's, the row's guard holds
// back (sameRevision), and a row below it moves the canary off that revision (a new canary
// starts, or the template rolled back); the edge's measurement is then unused, and harmless.
// Over every phase, step, anchor, record and time below, with the spec's revision or another, the
// stable Deployment of either or none, and the canary Deployment and the annotations in a few
// forms: a check the edge finds due is recorded, the very check the edge measured, but in that
// case; a check the edge does not find due is never recorded; and none is while the edge is still
// measuring it (Input.Measuring). One more case is allowed, and counted apart: the revision
// differs and no stable Deployment is observed (see below).
// TestStandsIn checks which earlier check may be judged in the stead of the one due.
func TestStandsIn(t *testing.T) {
	step, due := at(0).Time, canary.Span{From: at(0).Time, To: at(53 * time.Second).Time}
	recorded := func(check time.Duration) *webappv1.CanaryStatus {
		return running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
			st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(check), Result: webappv1.CheckInconclusive}
		})
	}
	for _, tc := range []struct {
		name    string
		last    *webappv1.CanaryStatus
		earlier canary.Span
		want    bool
	}{
		{"no status", nil, canary.Span{From: step, To: at(43 * time.Second).Time}, true},
		{"no record yet", running(webappv1.CanaryProgressing, 0, nil), canary.Span{From: step, To: at(43 * time.Second).Time}, true},
		{"after the record", recorded(33 * time.Second), canary.Span{From: step, To: at(43 * time.Second).Time}, true},
		{"the record's own check: it made its record already", recorded(43 * time.Second), canary.Span{From: step, To: at(43 * time.Second).Time}, false},
		{"before the record", recorded(43 * time.Second), canary.Span{From: step, To: at(33 * time.Second).Time}, false},
		{"the due check itself", nil, due, false},
		{"after the due check", nil, canary.Span{From: step, To: at(63 * time.Second).Time}, false},
		{"of another step", nil, canary.Span{From: at(-time.Minute).Time, To: at(43 * time.Second).Time}, false},
		{"none", nil, canary.Span{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := canary.StandsIn(tc.last, due, tc.earlier); got != tc.want {
				t.Errorf("StandsIn(%+v, %v) = %t; want %t", tc.last, tc.earlier, got, tc.want)
			}
		})
	}
}

func TestEdgeAndTableAgreeOnDue(t *testing.T) {
	const row = "a check of the analysis is due: what it measured is judged and recorded"
	phases := append([]webappv1.CanaryPhase{canary.None}, webappv1.CanaryPhases...)
	records := []func(*webappv1.CanaryStatus){
		nil,
		func(st *webappv1.CanaryStatus) { // the first check of a step that began at t0, recorded
			st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(3 * time.Second), Result: webappv1.CheckPassed}
		},
		func(st *webappv1.CanaryStatus) { // a check of an earlier step, long ago
			st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(-time.Hour), Result: webappv1.CheckInconclusive, Step: 0}
		},
	}
	stables := []*canary.Stable{nil, {Revision: "old", Complete: true}, {Revision: "new", Complete: true}}
	deployments := []*canary.Deployment{nil, ready(1), {Aborted: "new", ScaledDown: true}, {Revision: "new", Promoting: "new", Replicas: 1}}
	annotations := []func(*canary.Input){
		func(*canary.Input) {},
		func(in *canary.Input) { in.Promote = "new" },
		func(in *canary.Input) { in.Abort = "new" },
		func(in *canary.Input) { in.PromoteStep = "new/0" },
		func(in *canary.Input) { in.Retry = "new" },
	}
	const (
		newCanary  = "a new template, mid-canary or after an abort"
		rolledBack = "rolled back: the template is the stable one again"
	)
	cases, due, recorded, unused, unrecorded, standIns := 0, 0, 0, 0, 0, 0
	for _, phase := range phases {
		for _, step := range []int32{0, 2, 5} { // 5: the steps were edited to fewer
			for _, started := range []bool{true, false} {
				for _, paused := range []bool{false, true} {
					for ri, record := range records {
						for _, now := range []time.Duration{2 * time.Second, 13 * time.Second, time.Minute} {
							for _, revision := range []string{"new", "older"} {
								for si, stable := range stables {
									cases++
									in := analyzed(func(in *canary.Input) {
										in.Last = running(phase, step, func(st *webappv1.CanaryStatus) {
											st.Revision = revision
											if !started {
												st.StepStartTime = nil
											}
											if paused {
												st.PauseStartTime = at(10 * time.Second)
											}
											if record != nil {
												record(st)
											}
										})
										in.Now, in.Stable = t0.Add(now), stable
										in.Canary = deployments[cases%len(deployments)]
										annotations[cases%len(annotations)](in)
									})
									name := fmt.Sprintf("%s at step %d of %s, started %t, paused %t, record %d, at t0+%s, stable %d", phase, step, revision, started, paused, ri, now, si)
									span, edgeDue := canary.Due(in.Plan, in.Last, in.Now) // as the edge calls it
									if edgeDue {
										in.Measurement = measured(100, 100, 20)
										in.Measurement.Span = span
									}
									out := canary.Next(in)
									fired := slices.Contains(out.Fired, row)
									switch {
									case !edgeDue && fired:
										t.Errorf("%s: the table recorded a check the edge did not find due", name)
									case edgeDue && fired:
										due++
										recorded++
										if r := out.Status.Analysis; r == nil || !r.CheckTime.Time.Equal(span.To) || strings.Contains(r.Message, "another check") {
											t.Errorf("%s: recorded %+v; want the check the edge measured, at %s", name, r, span.To)
										}
									case edgeDue:
										due++
										switch {
										case revision == in.Revision:
											t.Errorf("%s: the edge measured a check of the spec's revision that the table did not record (fired %q)", name, out.Fired)
										case stable != nil && (moved(out) == newCanary || moved(out) == rolledBack):
											unused++
										case stable == nil:
											// The one other case, reported rather than fixed: with no stable
											// Deployment observed, neither row moves a canary whose revision the
											// spec no longer asks for (both compare with the stable one), so it
											// stays at its step, its check due at the edge, measured at every call
											// and recorded at none, until the stable Deployment is observed again,
											// or an annotation naming the spec's revision (abort, promote) or the
											// canary Deployment's moves that canary.
											unrecorded++
										default:
											t.Errorf("%s: the edge's measurement was unused, and the call moved the canary by %q", name, moved(out))
										}
									}
									if edgeDue {
										in.Measurement, in.Measuring = nil, true
										if out := canary.Next(in); slices.Contains(out.Fired, row) {
											t.Errorf("%s: recorded a check the edge is still measuring", name)
										}
										// The edge offers the step's check an interval before, as it does
										// while the one due is still being measured, when StandsIn says so.
										earlier := canary.Span{From: span.From, To: span.To.Add(-in.Plan.Analysis.Interval())}
										if canary.StandsIn(in.Last, span, earlier) {
											standIns++
											in.Measurement, in.Measuring = measured(100, 100, 20), false
											in.Measurement.Span = earlier
											out := canary.Next(in)
											if r := out.Status.Analysis; slices.Contains(out.Fired, row) && (r == nil || !r.CheckTime.Time.Equal(earlier.To) || strings.Contains(r.Message, "another check")) {
												t.Errorf("%s: recorded %+v for the earlier check the edge offered; want it, at %s", name, r, earlier.To)
											}
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d cases: the edge found a check due in %d; the table recorded %d, %d unused as a new canary started or the template rolled back, %d unused with no stable Deployment observed; %d offered an earlier check in its stead", cases, due, recorded, unused, unrecorded, standIns)
	if recorded == 0 || unused == 0 || standIns == 0 {
		t.Errorf("recorded %d, unused %d, earlier checks offered %d; want cases of each", recorded, unused, standIns)
	}
}

package canary

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/internal/english"
)

// Measurement is what the edge measured for one check of a canary's analysis, at the time Due
// gave. The machine judges it (the row "a check of the analysis is due") and records the
// judgement in status.canary.analysis; a Measurement is never kept.
type Measurement struct {
	// At is the end of the window measured: Due's answer.
	At time.Time
	// Window is the span of time measured, ending at At.
	Window time.Duration
	// Error says why nothing could be measured, in a sentence fit for the status: it names no
	// URL, token or query. "" when measured.
	Error string
	// Canary is what was measured of the canary's requests. Stable is what was measured of the
	// stable version's, for the metrics compared with it (webappv1.CanaryMetric.Stable) and its
	// requests; zero when none is.
	Canary, Stable Values
}

// Values are what was measured of one version's requests in the window.
type Values struct {
	// Requests is how many requests it had; nil when the query found no data.
	Requests *float64
	// Metrics are the metrics' values by name. A metric whose query found no data, or NaN, is
	// absent.
	Metrics map[string]float64
	// Errors says, by metric name, why a metric could not be measured (its template is not
	// defined, say); absent when it was.
	Errors map[string]string
}

// Due says whether a check of plan's analysis is due at now, given the status Metacontroller
// sent back, and when the check is: now, rounded down to a whole multiple of the interval in
// Unix seconds. That time is the same in every replica of the hook, so a check is measured and
// counted once whatever replica answers; one that last's record already holds is not due. A check
// is due only while the canary is at a step (Progressing or Paused) and the plan has an analysis,
// and, at the first step, only once its window begins after the canary started (stepStartTime):
// the canary's Service, and so the Gateway's series of its requests, has the same name whatever
// the revision, so an earlier window would measure the requests of an earlier canary, one just
// aborted say, as this one's.
func Due(plan *webappv1.Canary, last *webappv1.CanaryStatus, now time.Time) (time.Time, bool) {
	if plan == nil || plan.Analysis == nil || last == nil || !slices.Contains(atAStep, last.Phase) {
		return time.Time{}, false
	}
	at := checkTime(plan.Analysis, now)
	if r := last.Analysis; r != nil && !r.CheckTime.Time.Before(at) {
		return time.Time{}, false
	}
	if last.Step == 0 && last.StepStartTime != nil && at.Add(-plan.Analysis.Window()).Before(last.StepStartTime.Time) {
		return time.Time{}, false
	}
	return at, true
}

// checkTime is now rounded down to a whole multiple of a's interval, in Unix seconds.
func checkTime(a *webappv1.CanaryAnalysis, now time.Time) time.Time {
	n := int64(a.Interval() / time.Second)
	u := now.Unix()
	return time.Unix(u-u%n, 0).UTC()
}

// analysisDue is the guard of the row that records a check: one is due for the spec's revision.
func analysisDue(s *state) bool {
	if !sameRevision(s) {
		return false
	}
	_, ok := Due(s.in.Plan, &s.next, s.in.Now)
	return ok
}

// recordCheck judges the measurement of a check that is due and records it in the status; the
// check "analysis" of Checks then reads it. An inconclusive check that finds what the recorded
// one found (the same step, message, counts and metrics) leaves the record as it is: a canary
// without traffic, or without Prometheus, then costs no status write per check, and its record
// says since when its checks find that.
func recordCheck(s *state) {
	a := s.in.Plan.Analysis
	at := checkTime(a, s.in.Now)
	rec := judge(a, s.in.Measurement, at)
	rec.Step = int32(s.stepIndex())
	s.measured = true
	if last := s.next.Analysis; last != nil && sameFinding(last, rec) {
		return
	}
	if rec.Result == webappv1.CheckInconclusive {
		since := rec.CheckTime
		if last := s.next.Analysis; last != nil && last.Result == webappv1.CheckInconclusive && last.InconclusiveSince != nil {
			since = *last.InconclusiveSince
		}
		rec.InconclusiveSince = &since
	}
	s.next.Analysis = rec
}

// sameFinding reports whether rec, an inconclusive check, finds what last found.
func sameFinding(last, rec *webappv1.AnalysisStatus) bool {
	return rec.Result == webappv1.CheckInconclusive && last.Result == rec.Result && last.Step == rec.Step &&
		last.Message == rec.Message && last.WindowSeconds == rec.WindowSeconds &&
		equalCount(last.Requests, rec.Requests) && equalCount(last.StableRequests, rec.StableRequests) &&
		slices.Equal(last.Metrics, rec.Metrics)
}

func equalCount(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// judge is the record of the check at at of analysis a, from measurement m (nil when the edge
// measured nothing: it has no Prometheus).
func judge(a *webappv1.CanaryAnalysis, m *Measurement, at time.Time) *webappv1.AnalysisStatus {
	rec := &webappv1.AnalysisStatus{CheckTime: metav1.NewTime(at), WindowSeconds: int32(a.Window() / time.Second)}
	rec.Metrics = make([]webappv1.MetricStatus, len(a.Metrics))
	for i := range a.Metrics {
		rec.Metrics[i] = webappv1.MetricStatus{Name: a.Metrics[i].Name, Threshold: threshold(&a.Metrics[i]), Result: webappv1.CheckInconclusive}
	}
	switch {
	case m == nil:
		return inconclusive(rec, "nothing was measured: the hook has no Prometheus to ask (its --prometheus-url is unset)")
	case m.Error != "":
		return inconclusive(rec, "nothing was measured: "+strings.TrimSuffix(m.Error, "."))
	}
	compared := slices.ContainsFunc(a.Metrics, func(m webappv1.CanaryMetric) bool { return m.Stable != nil })
	rec.Requests = count(m.Canary.Requests)
	if compared {
		rec.StableRequests = count(m.Stable.Requests)
	}
	for i := range a.Metrics {
		spec, got := &a.Metrics[i], &rec.Metrics[i]
		if v, ok := m.Canary.Metrics[spec.Name]; ok {
			got.Value = format(v)
		}
		if v, ok := m.Stable.Metrics[spec.Name]; ok && spec.Stable != nil {
			got.Stable = format(v)
		}
	}
	least := int64(a.Requests())
	if rec.Requests == nil || *rec.Requests < least {
		return inconclusive(rec, fmt.Sprintf("the canary had %s in %s, fewer than minRequests (%d)", english.Count(deref(rec.Requests), "request"), a.Window(), least))
	}
	var failed, unsure []string
	for i := range a.Metrics {
		why, result := judgeMetric(&a.Metrics[i], m, rec.StableRequests, least)
		rec.Metrics[i].Result = result
		switch result {
		case webappv1.CheckFailed:
			failed = append(failed, why)
		case webappv1.CheckInconclusive:
			unsure = append(unsure, why)
		}
	}
	switch {
	case len(failed) > 0:
		rec.Result, rec.Message = webappv1.CheckFailed, strings.Join(failed, "; ")
	case len(unsure) > 0:
		rec.Result, rec.Message = webappv1.CheckInconclusive, strings.Join(unsure, "; ")
	default:
		rec.Result = webappv1.CheckPassed
		parts := make([]string, len(rec.Metrics))
		for i, ms := range rec.Metrics {
			parts[i] = ms.Name + " " + ms.Value + " (" + ms.Threshold + ")"
		}
		rec.Message = "passed: " + strings.Join(parts, ", ")
	}
	return rec
}

// judgeMetric judges one metric of a measured check: why it failed or was inconclusive, and its
// result.
func judgeMetric(spec *webappv1.CanaryMetric, m *Measurement, stableRequests *int64, least int64) (string, webappv1.CheckResult) {
	if e := m.Canary.Errors[spec.Name]; e != "" {
		return spec.Name + ": " + strings.TrimSuffix(e, "."), webappv1.CheckInconclusive
	}
	v, ok := m.Canary.Metrics[spec.Name]
	if !ok {
		return spec.Name + ": no data in the window", webappv1.CheckInconclusive
	}
	r := spec.ThresholdRange
	off := outside(r, v)
	if off == 0 {
		return "", webappv1.CheckPassed
	}
	against := fmt.Sprintf("%s %s, outside %s", spec.Name, format(v), threshold(&webappv1.CanaryMetric{ThresholdRange: r}))
	c := spec.Stable
	if c == nil {
		return against, webappv1.CheckFailed
	}
	if e := m.Stable.Errors[spec.Name]; e != "" {
		return spec.Name + ": the stable version's: " + strings.TrimSuffix(e, "."), webappv1.CheckInconclusive
	}
	sv, ok := m.Stable.Metrics[spec.Name]
	if !ok || stableRequests == nil || *stableRequests < least {
		return against + ", and the stable version had too few requests to compare with", webappv1.CheckInconclusive
	}
	if off-outside(r, sv) <= c.MaxDifference {
		return "", webappv1.CheckPassed // the stable version is as far out: an incident, not the canary
	}
	return fmt.Sprintf("%s, and worse than the stable version's %s by more than %s", against, format(sv), format(c.MaxDifference)), webappv1.CheckFailed
}

// outside is how far v is outside r: 0 within it.
func outside(r webappv1.ThresholdRange, v float64) float64 {
	switch {
	case r.Min != nil && v < *r.Min:
		return *r.Min - v
	case r.Max != nil && v > *r.Max:
		return v - *r.Max
	}
	return 0
}

// inconclusive completes rec as an inconclusive check, for why.
func inconclusive(rec *webappv1.AnalysisStatus, why string) *webappv1.AnalysisStatus {
	rec.Result, rec.Message = webappv1.CheckInconclusive, why
	return rec
}

// threshold says m's range as the status shows it: ">= 99", "<= 500" or "90..100", with the
// allowed difference from the stable version.
func threshold(m *webappv1.CanaryMetric) string {
	r := m.ThresholdRange
	var t string
	switch {
	case r.Min != nil && r.Max != nil:
		t = format(*r.Min) + ".." + format(*r.Max)
	case r.Min != nil:
		t = ">= " + format(*r.Min)
	case r.Max != nil:
		t = "<= " + format(*r.Max)
	}
	if m.Stable != nil {
		t += ", or within " + format(m.Stable.MaxDifference) + " of the stable version"
	}
	return t
}

// format writes v with at most 4 significant digits and no exponent: 99.52, 1235, 0.01235.
func format(v float64) string {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	digits := 4 - int(math.Floor(math.Log10(math.Abs(v)))) - 1
	p := math.Pow(10, float64(digits))
	return strconv.FormatFloat(math.Round(v*p)/p, 'f', -1, 64)
}

// count is a measured request count, rounded: Prometheus's increase() extrapolates, so counts
// are seldom whole. nil stays nil.
func count(v *float64) *int64 {
	if v == nil || math.IsNaN(*v) {
		return nil
	}
	n := int64(math.Round(*v))
	return &n
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// analysisFails is the check "analysis": the check this call recorded failed.
func analysisFails(s *state) string {
	if r := s.next.Analysis; s.measured && r.Result == webappv1.CheckFailed {
		return "analysis: " + r.Message
	}
	return ""
}

// analysisPassed reports whether the step may go on as far as the analysis goes: there is none,
// or the latest check passed, at this step, once its weight was in place.
func (s *state) analysisPassed() bool {
	if s.in.Plan.Analysis == nil {
		return true
	}
	r := s.next.Analysis
	return r != nil && r.Result == webappv1.CheckPassed && int(r.Step) == s.stepIndex() &&
		s.next.PauseStartTime != nil && !r.CheckTime.Before(s.next.PauseStartTime)
}

// inconclusiveFor reports whether the checks have stayed inconclusive past the analysis's bound
// and its action is action.
func (s *state) inconclusiveFor(action webappv1.InconclusiveAction) bool {
	a := s.in.Plan.Analysis
	if a == nil {
		return false
	}
	after, act := a.Inconclusive()
	r := s.next.Analysis
	return act == action && r != nil && r.Result == webappv1.CheckInconclusive && r.InconclusiveSince != nil &&
		!s.in.Now.Before(r.InconclusiveSince.Add(after))
}

func inconclusiveAbort(s *state) bool   { return s.inconclusiveFor(webappv1.InconclusiveAbort) }
func inconclusivePromote(s *state) bool { return s.inconclusiveFor(webappv1.InconclusivePromote) }

// analyzing reports whether the canary is at a step with an analysis: its answer then holds only
// now (Output.Timed), since a check may fall due at any later call.
func (s *state) analyzing() bool {
	return s.in.Plan != nil && s.in.Plan.Analysis != nil && slices.Contains(atAStep, s.phase())
}

// nextCheck is when the canary asks for a call for its analysis: at the next check, while its
// latest check was not inconclusive, or, while it was, when onInconclusive's action (Abort or
// Promote) is due; false otherwise. While checks are inconclusive (no traffic, Prometheus down)
// the resync period brings the next check, not a timer of the canary's own: a thousand canaries
// without traffic then cost Metacontroller no more syncs than without an analysis (make scale
// measured 2.05 times as many with a call at every check).
func (s *state) nextCheck() (time.Time, bool) {
	if !s.analyzing() {
		return time.Time{}, false
	}
	a := s.in.Plan.Analysis
	r := s.next.Analysis
	if r == nil || r.Result != webappv1.CheckInconclusive {
		return checkTime(a, s.in.Now).Add(a.Interval()), true
	}
	if after, act := a.Inconclusive(); act != webappv1.InconclusiveHold && r.InconclusiveSince != nil {
		return r.InconclusiveSince.Add(after), true
	}
	return time.Time{}, false
}

// cloneAnalysis copies a record, so that what Next changes is never the input's.
func cloneAnalysis(r *webappv1.AnalysisStatus) *webappv1.AnalysisStatus {
	if r == nil {
		return nil
	}
	c := *r
	c.Metrics = slices.Clone(r.Metrics)
	if r.InconclusiveSince != nil {
		t := *r.InconclusiveSince
		c.InconclusiveSince = &t
	}
	for _, p := range []**int64{&c.Requests, &c.StableRequests} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	return &c
}

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

// Measurement is what the edge measured for one check of a canary's analysis, for the Span Due
// gave. The machine judges it (the row "a check of the analysis is due") and records the
// judgement in status.canary.analysis; a Measurement is never kept.
type Measurement struct {
	// Span is the check's: the requests of the built-in metrics are those from Span.From (the
	// step's start) to Span.To (the check's time).
	Span Span
	// Window is the span of time a template's metric measured, ending at Span.To: the
	// analysis's windowSeconds.
	Window time.Duration
	// Error says why nothing could be measured, in a sentence fit for the status: it names no
	// URL, token or query. "" when measured.
	Error string
	// Canary is what was measured of the canary's requests. Stable is what was measured of the
	// stable version's, for the metrics compared with it (webappv1.CanaryMetric.Stable) and its
	// requests; zero when none is.
	Canary, Stable Values
}

// Values are what was measured of one version's requests.
type Values struct {
	// Requests is how many requests it had in the span; nil when the query found no data.
	Requests *float64
	// Failed is how many of them were answered with a 5xx status; nil when no series of a 5xx
	// answer was found (none was), with Requests set.
	Failed *float64
	// Buckets is the histogram of the durations of its requests in the span, cumulative, by
	// upper bound in milliseconds, the last one +Inf; nil when no request-duration metric asks
	// for it or the query found none.
	Buckets []Bucket
	// Metrics are the template metrics' values by name, each over the analysis's window. A
	// metric whose query found no data, or NaN, is absent.
	Metrics map[string]float64
	// Errors says, by metric name, why a metric could not be measured (its template is not
	// defined, say); absent when it was.
	Errors map[string]string
}

// Bucket is one bucket of a cumulative histogram: how many requests took at most UpperBound
// milliseconds.
type Bucket struct {
	UpperBound, Count float64
}

// Span is the requests a check of the analysis judges: those from From, when the canary moved
// to its step, to To, the check's time.
type Span struct {
	From, To time.Time
}

// Duration is the span's length, in whole seconds.
func (s Span) Duration() time.Duration { return s.To.Sub(s.From).Truncate(time.Second) }

// FirstCheckDelay is how long after a step's weight is in place its first check comes:
// webappv1.AnalysisFirstCheckDelay.
const FirstCheckDelay = webappv1.AnalysisFirstCheckDelay

// Due says whether a check of plan's analysis is due at now, given the status Metacontroller
// sent back, and its span. A step's checks come at FirstCheckDelay after its anchor, then every
// intervalSeconds: the anchor is when its weight was in place (pauseStartTime), or, until then,
// when it began (stepStartTime). Those times are the status's, the same in every replica of the
// hook, so a check is measured and counted once whatever replica answers; one that last's record
// already holds is not due. A check is due only while the canary is at a step (Progressing or
// Paused) and the plan has an analysis. Its span starts when the step began: the canary's
// Service, and so the Gateway's series of its requests, has the same name whatever the revision,
// so an earlier start would count the requests of an earlier canary, one just aborted say, as
// this one's.
func Due(plan *webappv1.Canary, last *webappv1.CanaryStatus, now time.Time) (Span, bool) {
	if plan == nil || plan.Analysis == nil || last == nil || !AtAStep(last.Phase) || last.StepStartTime == nil {
		return Span{}, false
	}
	at, _, ok := schedule(plan.Analysis, last, now)
	if !ok {
		return Span{}, false
	}
	if r := last.Analysis; r != nil && !r.CheckTime.Time.Before(at) {
		return Span{}, false
	}
	return Span{From: last.StepStartTime.Time.UTC(), To: at}, true
}

// StandsIn reports whether a measurement of earlier, a check the edge measured before, may be
// judged in the stead of due's (the check Due says is due) while due's is still being measured:
// earlier is a check of the same step (the same From, so of the same revision and attempt),
// before due, and after the check last's record holds, so that no measurement makes two records.
// It is false for a zero earlier, and when last is nil or has no record it needs only the first
// two. The record says which check it judged, by its checkTime. A Prometheus slower than the
// hook's wait then costs no call of its own while a step's checks find what they found (a canary
// without traffic, the common case at scale): each call judges the check its previous call
// started. An earlier check that finds something new, or none to stand in, asks for the due one
// at a call a moment later (MeasuringRetry); a decisive failure aborts at once either way.
func StandsIn(last *webappv1.CanaryStatus, due, earlier Span) bool {
	if earlier.To.IsZero() || !earlier.From.Equal(due.From) || !earlier.To.Before(due.To) {
		return false
	}
	return last == nil || last.Analysis == nil || earlier.To.After(last.Analysis.CheckTime.Time)
}

// schedule is the latest check of st's step at or before now (ok false when its first is still
// to come) and the next after now.
func schedule(a *webappv1.CanaryAnalysis, st *webappv1.CanaryStatus, now time.Time) (at, next time.Time, ok bool) {
	anchor := st.StepStartTime
	if st.PauseStartTime != nil {
		anchor = st.PauseStartTime
	}
	first := anchor.Time.UTC().Add(FirstCheckDelay)
	if now.Before(first) {
		return time.Time{}, first, false
	}
	every := a.Interval()
	at = first.Add(now.Sub(first) / every * every)
	return at, at.Add(every), true
}

// MeasuringRetry is how soon a call whose check the edge is still measuring asks for the next:
// the edge never holds a call for Prometheus, so the check is judged at a call a moment later.
const MeasuringRetry = time.Second

// analysisDue is the guard of the row that records a check: one is due for the spec's revision,
// and the edge has measured it (or has no Prometheus to ask).
func analysisDue(s *state) bool {
	if !sameRevision(s) || s.in.Measuring {
		return false
	}
	_, ok := Due(s.in.Plan, &s.next, s.in.Now)
	return ok
}

// recordCheck judges the measurement of a check that is due and records it in the status; the
// check "analysis" of Checks, and the row of a decisive failure, then read it. An inconclusive
// check that finds what the recorded one found (the same step, message, counts and metrics)
// leaves the record as it is: a canary without traffic, or without Prometheus, then costs no
// status write per check, and its record says since when its checks find that.
//
// The run of inconclusive checks (inconclusiveSince) goes on through held ones; with
// onInconclusive's action Promote, a check that measured nothing, or no request, starts it
// again: silence never counts towards a promotion. With action Hold, an inconclusive check past
// afterSeconds is recorded Held, and says what it waits for.
func recordCheck(s *state) {
	a := s.in.Plan.Analysis
	span, _ := Due(s.in.Plan, &s.next, s.in.Now)
	m := s.in.Measurement
	standIn := false
	switch {
	case m == nil || m.Span == span:
	case StandsIn(&s.next, span, m.Span):
		span, standIn = m.Span, true // judged, and recorded, at its own time
	default:
		m = &Measurement{Span: span, Error: "the hook measured another check than the one due"}
	}
	rec := Judge(a, m, span)
	rec.Step = int32(s.stepIndex())
	s.measured = true
	s.decisive = decisive(a, rec)
	last := s.next.Analysis
	if last != nil && sameFinding(last, rec) {
		return
	}
	if inconclusive(rec.Result) {
		after, action := a.Inconclusive()
		since := rec.CheckTime
		if last != nil && inconclusive(last.Result) && last.InconclusiveSince != nil && !(action == webappv1.InconclusivePromote && silent(rec)) {
			since = *last.InconclusiveSince
		}
		rec.InconclusiveSince = &since
		if action == webappv1.InconclusiveHold && rec.Result == webappv1.CheckInconclusive && !rec.CheckTime.Time.Before(since.Add(after)) {
			rec.Result = webappv1.CheckHeld
			rec.Message = "held since " + since.Add(after).UTC().Format(time.TimeOnly) + " (onInconclusive: Hold): " + rec.Message
		}
		if last != nil && sameFinding(last, rec) {
			return
		}
	}
	s.next.Analysis = rec
	s.behind = standIn
}

// inconclusive reports whether a check's result lets the step neither go on nor fail: Held is an
// inconclusive check the canary holds for.
func inconclusive(r webappv1.CheckResult) bool {
	return r == webappv1.CheckInconclusive || r == webappv1.CheckHeld
}

// silent reports whether a check measured no request of the canary: no answer from Prometheus,
// no data, or none at all.
func silent(r *webappv1.AnalysisStatus) bool { return r.Requests == nil || *r.Requests == 0 }

// decisive reports whether a failed check failed a built-in metric: a sequential test that
// failed at FailConfidence, evidence that needs no second check.
func decisive(a *webappv1.CanaryAnalysis, r *webappv1.AnalysisStatus) bool {
	if r.Result != webappv1.CheckFailed {
		return false
	}
	for i := range a.Metrics {
		if a.Metrics[i].TemplateRef == nil && r.Metrics[i].Result == webappv1.CheckFailed {
			return true
		}
	}
	return false
}

// sameFinding reports whether rec, an inconclusive check, finds what last found: its span,
// longer by each check's interval, does not count.
func sameFinding(last, rec *webappv1.AnalysisStatus) bool {
	return inconclusive(rec.Result) && last.Result == rec.Result && last.Step == rec.Step &&
		last.Message == rec.Message &&
		equalCount(last.Requests, rec.Requests) && equalCount(last.StableRequests, rec.StableRequests) &&
		slices.Equal(last.Metrics, rec.Metrics)
}

func equalCount(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// Judge is the record of the check of analysis a over span, from measurement m (nil when the
// edge measured nothing: it has no Prometheus). It is pure: the simulation of docs/canary.md
// runs it as the machine does.
//
// A built-in metric is judged by the sequential test (Share.Test) of the canary's requests in
// the span: Failed once they show, at FailConfidence, that it is outside its threshold, whatever
// minRequests; Passed once at least minRequests show, at PassConfidence, that it is inside;
// Inconclusive between, saying about how many more requests would settle it. Compared with the
// stable version (stable), a canary shown outside fails only when the stable version is shown
// inside, or is better by more than maxDifference; otherwise both versions fail, and the metric
// is Held, never passed. A template's metric is its value over the analysis's window against
// its threshold, as before: judged only with at least minRequests canary requests in the span.
// The check fails when a metric fails, is Held when one is held and none failed, Inconclusive
// when one is, and Passed when all passed.
func Judge(a *webappv1.CanaryAnalysis, m *Measurement, span Span) *webappv1.AnalysisStatus {
	rec := &webappv1.AnalysisStatus{CheckTime: metav1.NewTime(span.To), WindowSeconds: int32(span.Duration() / time.Second)}
	rec.Metrics = make([]webappv1.MetricStatus, len(a.Metrics))
	for i := range a.Metrics {
		rec.Metrics[i] = webappv1.MetricStatus{Name: a.Metrics[i].Name, Threshold: threshold(&a.Metrics[i]), Result: webappv1.CheckInconclusive}
	}
	switch {
	case m == nil:
		return inconclusiveRecord(rec, "nothing was measured: the hook has no Prometheus to ask (its --prometheus-url is unset)")
	case m.Error != "":
		return inconclusiveRecord(rec, "nothing was measured: "+strings.TrimSuffix(m.Error, "."))
	}
	compared := slices.ContainsFunc(a.Metrics, func(m webappv1.CanaryMetric) bool { return m.Stable != nil })
	rec.Requests = count(m.Canary.Requests)
	if compared {
		rec.StableRequests = count(m.Stable.Requests)
	}
	least := int64(a.Requests())
	if rec.Requests == nil || *rec.Requests == 0 {
		return inconclusiveRecord(rec, "the canary had no request since its step began")
	}
	var failed, held, unsure []string
	for i := range a.Metrics {
		j := judgeMetric(&a.Metrics[i], m, least, *rec.Requests)
		rec.Metrics[i].Value, rec.Metrics[i].Stable, rec.Metrics[i].Result = j.value, j.stable, j.result
		switch j.result {
		case webappv1.CheckFailed:
			failed = append(failed, j.why)
		case webappv1.CheckHeld:
			held = append(held, j.why)
		case webappv1.CheckInconclusive:
			unsure = append(unsure, j.why)
		}
	}
	switch {
	case len(failed) > 0:
		rec.Result, rec.Message = webappv1.CheckFailed, strings.Join(failed, "; ")
	case len(held) > 0:
		rec.Result, rec.Message = webappv1.CheckHeld, strings.Join(append(held, unsure...), "; ")
	case len(unsure) > 0:
		rec.Result, rec.Message = webappv1.CheckInconclusive, strings.Join(unsure, "; ")
	default:
		rec.Result = webappv1.CheckPassed
		parts := make([]string, len(rec.Metrics))
		for i, ms := range rec.Metrics {
			parts[i] = ms.Name + " " + ms.Value + " (" + ms.Threshold + ")"
		}
		rec.Message = fmt.Sprintf("passed: %s, on %s since the step began", strings.Join(parts, ", "), english.Count(*rec.Requests, "request"))
	}
	return rec
}

// judgement is what Judge found of one metric.
type judgement struct {
	value, stable string
	result        webappv1.CheckResult
	why           string
}

// judgeMetric judges one metric of a measured check; requests, the canary's in the span, is 1 or
// more.
func judgeMetric(spec *webappv1.CanaryMetric, m *Measurement, least, requests int64) judgement {
	if e := m.Canary.Errors[spec.Name]; e != "" {
		return judgement{result: webappv1.CheckInconclusive, why: spec.Name + ": " + strings.TrimSuffix(e, ".")}
	}
	if spec.TemplateRef != nil {
		return judgeTemplate(spec, m, least, requests)
	}
	v, claims, ok := builtin(spec, &m.Canary)
	if !ok {
		return judgement{result: webappv1.CheckInconclusive, why: spec.Name + ": no data since the step began"}
	}
	j := judgement{value: format(v)}
	verdict := testAll(claims, least)
	th := threshold(&webappv1.CanaryMetric{ThresholdRange: spec.ThresholdRange})
	switch verdict.Result {
	case webappv1.CheckPassed:
		j.result = webappv1.CheckPassed
		return j
	case webappv1.CheckInconclusive:
		j.result = webappv1.CheckInconclusive
		j.why = fmt.Sprintf("%s %s on %s, not yet shown %s: %s", spec.Name, j.value, english.Count(requests, "request"), th, more(verdict, least, requests))
		return j
	}
	against := fmt.Sprintf("%s %s on %s, outside %s at %s confidence", spec.Name, j.value, english.Count(requests, "request"), th, percent(FailConfidence))
	if j, done := uncompared(spec, m, j, against); done {
		return j
	}
	c := spec.Stable
	sv, stableClaims, ok := builtin(spec, &m.Stable)
	if !ok {
		j.result, j.why = webappv1.CheckInconclusive, against+", and the stable version had no request since the step began to compare with"
		return j
	}
	j.stable = format(sv)
	r := spec.ThresholdRange
	switch {
	case testAll(stableClaims, 0).Result == webappv1.CheckPassed:
		j.result, j.why = webappv1.CheckFailed, against+", while the stable version's "+j.stable+" is inside it"
	case outside(r, v)-outside(r, sv) > c.MaxDifference:
		j.result, j.why = webappv1.CheckFailed, fmt.Sprintf("%s, and worse than the stable version's %s by more than %s", against, j.stable, format(c.MaxDifference))
	default:
		j.result, j.why = webappv1.CheckHeld, fmt.Sprintf("both versions fail: held, not judged (%s %s, the stable version's %s, %s)", spec.Name, j.value, j.stable, th)
	}
	return j
}

// uncompared completes j, a metric shown outside its range (against says so), when no comparison
// with the stable version can excuse it: failed without one, inconclusive when the stable
// version's could not be measured; done false when the comparison goes on.
func uncompared(spec *webappv1.CanaryMetric, m *Measurement, j judgement, against string) (judgement, bool) {
	switch {
	case spec.Stable == nil:
		j.result, j.why = webappv1.CheckFailed, against
	case m.Stable.Errors[spec.Name] != "":
		j.result, j.why = webappv1.CheckInconclusive, spec.Name+": the stable version's: "+strings.TrimSuffix(m.Stable.Errors[spec.Name], ".")
	default:
		return j, false
	}
	return j, true
}

// judgeTemplate judges a template's metric: its value over the window against its threshold.
func judgeTemplate(spec *webappv1.CanaryMetric, m *Measurement, least, requests int64) judgement {
	v, ok := m.Canary.Metrics[spec.Name]
	if !ok {
		return judgement{result: webappv1.CheckInconclusive, why: spec.Name + ": no data in the window"}
	}
	j := judgement{value: format(v)}
	if sv, ok := m.Stable.Metrics[spec.Name]; ok && spec.Stable != nil {
		j.stable = format(sv)
	}
	if requests < least {
		j.result, j.why = webappv1.CheckInconclusive, fmt.Sprintf("%s: the canary had %s since its step began, fewer than minRequests (%d)", spec.Name, english.Count(requests, "request"), least)
		return j
	}
	r := spec.ThresholdRange
	off := outside(r, v)
	if off == 0 {
		j.result = webappv1.CheckPassed
		return j
	}
	against := fmt.Sprintf("%s %s, outside %s", spec.Name, format(v), threshold(&webappv1.CanaryMetric{ThresholdRange: r}))
	if j, done := uncompared(spec, m, j, against); done {
		return j
	}
	c := spec.Stable
	sv, ok := m.Stable.Metrics[spec.Name]
	if !ok || count(m.Stable.Requests) == nil || *count(m.Stable.Requests) < least {
		j.result, j.why = webappv1.CheckInconclusive, against+", and the stable version had too few requests to compare with"
		return j
	}
	if outside(r, sv) > 0 && off-outside(r, sv) <= c.MaxDifference {
		j.result, j.why = webappv1.CheckHeld, fmt.Sprintf("both versions fail: held, not judged (%s %s, the stable version's %s)", spec.Name, format(v), format(sv))
		return j
	}
	if off-outside(r, sv) <= c.MaxDifference {
		return judgement{value: j.value, stable: j.stable, result: webappv1.CheckPassed}
	}
	j.result, j.why = webappv1.CheckFailed, fmt.Sprintf("%s, and worse than the stable version's %s by more than %s", against, format(sv), format(c.MaxDifference))
	return j
}

// builtin is a built-in metric's value for one version's requests, and the claims of its
// threshold as shares of them (see sequential.go); ok false when there is no data.
func builtin(spec *webappv1.CanaryMetric, v *Values) (value float64, claims []Share, ok bool) {
	r := spec.ThresholdRange
	switch spec.Name {
	case webappv1.MetricRequestSuccessRate:
		if v.Requests == nil || math.Round(*v.Requests) <= 0 {
			return 0, nil, false
		}
		n := math.Round(*v.Requests)
		failed := 0.0
		if v.Failed != nil {
			failed = min(math.Round(*v.Failed), n)
		}
		value = 100 * (n - failed) / n
		if r.Min != nil {
			claims = append(claims, Share{Requests: n, Bad: failed, Bound: 1 - *r.Min/100})
		}
		if r.Max != nil {
			claims = append(claims, Share{Requests: n, Bad: n - failed, Bound: *r.Max / 100})
		}
		return value, claims, true
	case webappv1.MetricRequestDuration:
		b := v.Buckets
		if len(b) == 0 || math.Round(b[len(b)-1].Count) <= 0 {
			return 0, nil, false
		}
		q := spec.LatencyQuantile()
		n := math.Round(b[len(b)-1].Count)
		value = bucketQuantile(q, b)
		if r.Max != nil {
			claims = append(claims, Share{Requests: n, Bad: n - atMost(b, *r.Max), Bound: 1 - q})
		}
		if r.Min != nil {
			claims = append(claims, Share{Requests: n, Bad: atMost(b, *r.Min), Bound: q})
		}
		return value, claims, true
	}
	return 0, nil, false
}

// testAll is the verdict of every claim: Failed when one fails, Passed when all pass, else
// Inconclusive, with the most More of those undecided (-1 when one cannot tell).
func testAll(claims []Share, least int64) Verdict {
	all := Verdict{Result: webappv1.CheckPassed}
	for _, c := range claims {
		v := c.Test(least)
		switch v.Result {
		case webappv1.CheckFailed:
			return v
		case webappv1.CheckInconclusive:
			if all.Result == webappv1.CheckPassed {
				all = Verdict{Result: webappv1.CheckInconclusive}
			}
			switch {
			case v.More < 0 || all.More < 0:
				all.More = -1
			case v.Failing && !all.Failing: // a claim heading towards failing says what it waits for
				all.More, all.Failing = v.More, true
			case v.Failing == all.Failing:
				all.More = max(all.More, v.More)
			}
		}
	}
	return all
}

// more says what an inconclusive test v waits for.
func more(v Verdict, least, requests int64) string {
	n := v.More
	switch {
	case n < 0:
		return "its share of bad requests is too near the threshold to tell within reason"
	case v.Failing:
		return fmt.Sprintf("about %s more to show it outside at %s confidence, if they go as these did", english.Count(n, "request"), percent(FailConfidence))
	case requests < least && requests+n <= least:
		return fmt.Sprintf("about %s more to reach minRequests (%d)", english.Count(n, "request"), least)
	}
	return fmt.Sprintf("about %s more to show it at %s confidence, if they go as these did", english.Count(n, "request"), percent(PassConfidence))
}

// percent writes a confidence as "95 %".
func percent(c float64) string { return strconv.FormatFloat(math.Round(c*1000)/10, 'f', -1, 64) + " %" }

// atMost is how many requests of histogram b took at most x milliseconds, interpolated linearly
// within the bucket x falls in, as Prometheus's histogram_quantile interpolates; the requests of
// the +Inf bucket count as slower than any x.
func atMost(b []Bucket, x float64) float64 {
	lower, below := 0.0, 0.0
	for _, bk := range b {
		if math.IsInf(bk.UpperBound, 1) {
			return below
		}
		if x <= bk.UpperBound {
			if bk.UpperBound == lower {
				return bk.Count
			}
			return below + (bk.Count-below)*(x-lower)/(bk.UpperBound-lower)
		}
		lower, below = bk.UpperBound, bk.Count
	}
	return below
}

// bucketQuantile is quantile q of histogram b, as Prometheus's histogram_quantile computes it
// for a classic histogram: linear within the bucket the rank falls in, the lowest bucket from 0,
// and the upper bound of the last finite bucket when it falls in +Inf.
func bucketQuantile(q float64, b []Bucket) float64 {
	total := b[len(b)-1].Count
	rank := q * total
	lower, below := 0.0, 0.0
	for i, bk := range b {
		if bk.Count >= rank {
			if math.IsInf(bk.UpperBound, 1) {
				if i == 0 {
					return math.NaN()
				}
				return b[i-1].UpperBound
			}
			if bk.Count == below {
				return bk.UpperBound
			}
			return lower + (bk.UpperBound-lower)*(rank-below)/(bk.Count-below)
		}
		lower, below = bk.UpperBound, bk.Count
	}
	return lower
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

// inconclusiveRecord completes rec as an inconclusive check, for why.
func inconclusiveRecord(rec *webappv1.AnalysisStatus, why string) *webappv1.AnalysisStatus {
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
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0 || *v > math.MaxInt32 {
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

// analysisPassed reports whether the step may go on as far as the analysis goes
// (AnalysisPassed): there is none, or the latest check passed, at this step, once its weight was
// in place.
func (s *state) analysisPassed() bool { return AnalysisPassed(s.in.Plan, &s.next) }

// inconclusiveFor reports whether the checks have stayed inconclusive (or held) past the
// analysis's bound and its action is action. Promote takes more: the latest check measured
// requests of the canary, and found too few of them to decide; a check that measured nothing
// starts the run again (recordCheck), and a held one (both versions fail) never promotes.
func (s *state) inconclusiveFor(action webappv1.InconclusiveAction) bool {
	a := s.in.Plan.Analysis
	if a == nil {
		return false
	}
	after, act := a.Inconclusive()
	r := s.next.Analysis
	if act != action || r == nil || !inconclusive(r.Result) || r.InconclusiveSince == nil || s.in.Now.Before(r.InconclusiveSince.Add(after)) {
		return false
	}
	return action != webappv1.InconclusivePromote || r.Result == webappv1.CheckInconclusive && !silent(r)
}

func inconclusiveAbort(s *state) bool   { return s.inconclusiveFor(webappv1.InconclusiveAbort) }
func inconclusivePromote(s *state) bool { return s.inconclusiveFor(webappv1.InconclusivePromote) }

// analyzing reports whether the canary is at a step with an analysis: its answer then holds only
// now (Output.Timed), since a check may fall due at any later call.
func (s *state) analyzing() bool {
	return s.in.Plan != nil && s.in.Plan.Analysis != nil && AtAStep(s.phase())
}

// nextCheck is when the canary asks for a call for its analysis: MeasuringRetry from now while
// the edge is still measuring the check due, or judged an earlier one in its stead that found
// something new (behind); else at its step's first check,
// FirstCheckDelay after the weight is in place, whatever the checks found before; then at the
// next check while the latest was not inconclusive, or, while it was, when onInconclusive's
// action (Abort or Promote) is due; false otherwise. While checks are inconclusive (no traffic,
// Prometheus down) the resync period brings the next check, not a timer of the canary's own: a
// thousand canaries without traffic then cost Metacontroller no more syncs than without an
// analysis (make scale measured 2.05 times as many with a call at every check), and one more a
// step.
func (s *state) nextCheck() (time.Time, bool) {
	if !s.analyzing() || s.next.StepStartTime == nil {
		return time.Time{}, false
	}
	if (s.in.Measuring || s.behind) && sameRevision(s) {
		return s.in.Now.Add(MeasuringRetry), true
	}
	a := s.in.Plan.Analysis
	_, next, started := schedule(a, &s.next, s.in.Now)
	r := s.next.Analysis
	if !started || r == nil || !inconclusive(r.Result) {
		return next, true
	}
	if after, act := a.Inconclusive(); act != webappv1.InconclusiveHold && r.InconclusiveSince != nil {
		return r.InconclusiveSince.Add(after), true
	}
	return time.Time{}, false
}

// analysisDecisive is the guard of the row that aborts at once: the check this call recorded
// failed a built-in metric's sequential test.
func analysisDecisive(s *state) bool { return s.decisive }

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

package canary_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// The simulation of issue 42's "numbers it must reach": canaries of four kinds, each at a range of
// traffic, through every check of every step of the shipped example's plan
// (examples/canary-analysis.yaml), judged three ways on the same model and seeds:
//
//   - the sequential judge, canary.Judge's: each built-in metric's claims tested by
//     canary.Share.Test on the canary's requests since its step began; a step's first check
//     canary.FirstCheckDelay after its weight is in place, then one every interval; a failed
//     check of a built-in metric aborts at once. The simulation judges with Share.Test as Judge
//     does, and checks a sample of its checks against Judge and Due (judgeEvery);
//   - today's per-window judge (canary/analysis.go's judge as of 19a7015): each check judges the
//     last windowSeconds alone, with minRequests per window, a value outside its range fails
//     unless the stable comparison excuses it, and maxFailedChecks failures abort;
//   - Flagger's rule (pkg/controller/scheduler.go and scheduler_metrics.go): a window outside its
//     threshold, or without values (no requests, or none answered without a 5xx, whose query
//     finds no series), is a failed check, and the scheduler's next run aborts once threshold
//     (maxFailedChecks) checks failed.
//
// The model, per check: a version's requests since its last draw are Poisson arrivals at its
// rate; each is answered 5xx with the version's error share, and takes a log-normal time (sigma
// simSigma) independent of that. Only six kinds of request matter to the judges (5xx or not ×
// at most the lower bound of the histogram bucket that holds max, in that bucket, or above it),
// so a check draws six counts, not a time per request: below 30 requests expected, a Poisson
// total and each request's kind; from 30, each kind's count an independent Poisson, which is the
// same distribution (a Poisson total split binomially). The canary's rate scales with the step's
// weight; the stable version gets the rest of the traffic, as a healthy version (simHealthy).
// Weights are in place at once when a step starts, and the windows of the per-window judges
// start with the step, which is as well as those judges can do: a window that straddles the
// weight's change has fewer of the canary's requests.
//
// Two shortcuts keep the test within seconds. While the sequential judge is inconclusive, the
// checks that get no new request are skipped: their number is geometric, and the verdict cannot
// change without a request. A per-window judge at a step whose windows reach minRequests with a
// chance below one in a million over the whole horizon is held there to the horizon without
// drawing each window: that changes an outcome with a chance below one in a million a run.

// simRuns is how many canaries each row simulates at each rate.
const simRuns = 10_000

// simSeed seeds every simulation: each row, rate and chunk of runs draws from a stream of its own
// (rand.NewPCG(simSeed, stream)), the same for the three judges.
const simSeed = 42

// simHorizon ends a run still held at a step: 24 hours after the release.
const simHorizon = 24 * 3600.0

// simSigma is the log-normal's sigma of request durations: a median 1/10.2 of the p99.
const simSigma = 1.0

// simFirstCheckDelay is canary.FirstCheckDelay, in seconds.
var simFirstCheckDelay = canary.FirstCheckDelay.Seconds()

// simEpoch is the time of the first run's release, for canary.Judge's and canary.Due's spans.
var simEpoch = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)

// Runs checked against canary.Judge and canary.Due, in each chunk of runs (simulate): every check
// of the first runs, until judgeEvery checks were, and the checks that pass or fail of the first
// judgeDecisive runs. Judge writes the status's messages (about 10 µs a call, 45 µs with -race),
// too slow for the millions of checks simulated: the simulation judges them with Share.Test as
// Judge does, and these runs show that both find the same.
const judgeEvery, judgeDecisive = 100, 50

// Request-duration's histogram boundaries, in seconds: Traefik's defaults, and the finer
// defaults of Prometheus's client libraries (which have the example's max, 0.5 s, as a
// boundary).
var (
	traefikBuckets = []float64{0.1, 0.3, 1.2, 5}
	finerBuckets   = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
)

// simRate is a canary's own rate of requests at the first step (weight 10); at the second
// (weight 50) it is five times that.
type simRate struct {
	name      string
	perSecond float64
}

var simRates = []simRate{{"1/min", 1.0 / 60}, {"0.1/s", 0.1}, {"1/s", 1}, {"10/s", 10}, {"100/s", 100}, {"1000/s", 1000}}

// version is what a version's requests get: the share answered 5xx, and the p99 of their
// durations as a multiple of request-duration's max.
type version struct {
	errors, p99 float64
}

// simHealthy is a good version: 0.1 % of its requests answered 5xx, its p99 a third of max.
var simHealthy = version{errors: 0.001, p99: 1.0 / 3}

// goal is what a row must reach.
type goal int

const (
	// failsFirst: the first check that has 10 of the canary's requests (or an earlier one)
	// fails, and that failure aborts the canary.
	failsFirst goal = iota
	// failsBy: the first check that has 300 of its requests (or an earlier one) fails.
	failsBy
	// passes: aborted in under 1 % of runs; each step's checks pass by its first check that has
	// 1,000 of the step's requests, in 95 %.
	passes
)

// simRow is a row of the table: a kind of canary over a range of traffic.
type simRow struct {
	name    string
	canary  version
	buckets []float64
	rates   []simRate
	goal    goal
}

var simRows = []simRow{
	{"fails every request", version{errors: 1, p99: simHealthy.p99}, traefikBuckets, simRates, failsFirst},
	{"5 % errors", version{errors: 0.05, p99: simHealthy.p99}, traefikBuckets, simRates[1:5], failsBy},
	{"p99 3× max, Traefik's buckets", version{errors: simHealthy.errors, p99: 3}, traefikBuckets, simRates[1:5], failsBy},
	{"p99 3× max, finer buckets", version{errors: simHealthy.errors, p99: 3}, finerBuckets, simRates[1:5], failsBy},
	{"0.1 % errors", simHealthy, traefikBuckets, simRates, passes},
}

// judgeKind is one of the three judges.
type judgeKind int

const (
	judgeSequential judgeKind = iota
	judgeWindow
	judgeFlagger
)

var judgeNames = []string{"sequential (new)", "per window (today)", "Flagger's rule"}

// simPlan is what the simulation reads of the example's canary.
type simPlan struct {
	weights, pauses []float64
	interval        float64
	least           int64
	maxFailed       int
	// successBound is the share of 5xx request-success-rate allows (1 - min/100); minSuccess is
	// min, in percent; maxDifference is its stable comparison's.
	successBound, minSuccess, maxDifference float64
	// max is request-duration's max, in seconds, and quantile its quantile.
	max, quantile     float64
	inconclusiveAfter float64
	// spec is the example's canary.
	spec *webappv1.Canary
}

// readExamplePlan reads examples/canary-analysis.yaml's canary, and fails unless it is the shape
// the simulation models: two timed steps, an interval, request-success-rate with min and a stable
// comparison, request-duration with max.
func readExamplePlan(t *testing.T) simPlan {
	t.Helper()
	raw, err := os.ReadFile("../examples/canary-analysis.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var w webappv1.WebApp
	if err := yaml.Unmarshal(raw, &w); err != nil {
		t.Fatal(err)
	}
	c := w.Spec.Rollout.Canary
	a := c.Analysis
	p := simPlan{interval: a.Interval().Seconds(), least: int64(a.Requests()), maxFailed: int(*c.MaxFailedChecks), spec: c}
	after, _ := a.Inconclusive()
	p.inconclusiveAfter = after.Seconds()
	for _, s := range c.Steps {
		p.weights = append(p.weights, float64(s.Weight))
		p.pauses = append(p.pauses, float64(*s.PauseSeconds))
	}
	if a.Window() != a.Interval() || len(a.Metrics) != 2 {
		t.Fatalf("the simulation models a window of one interval and two metrics; the example has %v and %d", a.Window(), len(a.Metrics))
	}
	for _, m := range a.Metrics {
		r := m.ThresholdRange
		switch {
		case m.Name == webappv1.MetricRequestSuccessRate && r.Min != nil && r.Max == nil && m.Stable != nil:
			p.minSuccess, p.successBound, p.maxDifference = *r.Min, 1-*r.Min/100, m.Stable.MaxDifference
		case m.Name == webappv1.MetricRequestDuration && r.Max != nil && r.Min == nil && m.Stable == nil:
			p.max, p.quantile = *r.Max/1000, m.LatencyQuantile()
		default:
			t.Fatalf("the simulation does not model the example's metric %s", m.Name)
		}
	}
	return p
}

// mix is a version's requests under a histogram: the chance of each of the six kinds (ok or 5xx,
// × at most lower, in (lower, upper], above upper, where (lower, upper] is the bucket that holds
// max) and their running sums.
type mix struct {
	p, cum [6]float64
	// slowShare is the share of a request in (lower, upper] that counts as slower than max: the
	// histogram's linear interpolation, (upper - max) / (upper - lower); 0 when max is a
	// boundary.
	slowShare float64
	// lower and upper bound the bucket that holds max, in seconds (upper +Inf when max is above
	// every boundary).
	lower, upper float64
}

func newMix(v version, buckets []float64, max, quantile float64) mix {
	i, _ := slices.BinarySearch(buckets, max) // buckets[i] is the least boundary >= max
	upper, lower := math.Inf(1), 0.0
	if i < len(buckets) {
		upper = buckets[i]
	}
	if i > 0 {
		lower = buckets[i-1]
	}
	// Log-normal durations whose quantile's value is v.p99 × max.
	z := math.Sqrt2 * math.Erfinv(2*quantile-1)
	mu := math.Log(v.p99*max) - z*simSigma
	cdf := func(x float64) float64 {
		if math.IsInf(x, 1) {
			return 1
		}
		return 0.5 * math.Erfc(-(math.Log(x)-mu)/(simSigma*math.Sqrt2))
	}
	lat := [3]float64{cdf(lower), cdf(upper) - cdf(lower), 1 - cdf(upper)}
	m := mix{lower: lower, upper: upper}
	for e, pe := range [2]float64{1 - v.errors, v.errors} {
		for l, pl := range lat {
			m.p[3*e+l] = pe * pl
		}
	}
	sum := 0.0
	for k, p := range m.p {
		sum += p
		m.cum[k] = sum
	}
	if !math.IsInf(upper, 1) {
		m.slowShare = (upper - max) / (upper - lower)
	}
	return m
}

// tally counts a version's requests over a span: all of them, those answered 5xx, and those in
// the bucket that holds max (mid) and above it (slow).
type tally struct {
	n, bad, mid, slow int64
}

func (t *tally) add(u tally) {
	t.n += u.n
	t.bad += u.bad
	t.mid += u.mid
	t.slow += u.slow
}

// slower is how many of t's requests the histogram says were slower than max: those above the
// bucket that holds max, and that bucket's share above max by linear interpolation, as
// histogram_quantile reads a bucket.
func (t tally) slower(m *mix) float64 { return float64(t.slow) + m.slowShare*float64(t.mid) }

// poisson draws from a Poisson distribution of mean lam: by Knuth's product of uniforms below
// 10, by Hörmann's transformed rejection (PTRS, as NumPy does) from 10.
func poisson(r *rand.Rand, lam float64) int64 {
	switch {
	case lam <= 0:
		return 0
	case lam < 10:
		limit := math.Exp(-lam)
		k := int64(0)
		for p := r.Float64(); p > limit; p *= r.Float64() {
			k++
		}
		return k
	}
	slam, loglam := math.Sqrt(lam), math.Log(lam)
	b := 0.931 + 2.53*slam
	a := -0.059 + 0.02483*b
	invalpha := 1.1239 + 1.1328/(b-3.4)
	vr := 0.9277 - 3.6224/(b-2)
	for {
		u := r.Float64() - 0.5
		v := r.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + lam + 0.43)
		if us >= 0.07 && v <= vr {
			return int64(k)
		}
		if k < 0 || us < 0.013 && v > us {
			continue
		}
		lg, _ := math.Lgamma(k + 1)
		if math.Log(v)+math.Log(invalpha)-math.Log(a/(us*us)+b) <= -lam+k*loglam-lg {
			return int64(k)
		}
	}
}

// poissonTail is the chance that a Poisson of mean lam is at least m.
func poissonTail(lam float64, m int64) float64 {
	pmf := func(k int64) float64 {
		lg, _ := math.Lgamma(float64(k) + 1)
		return math.Exp(-lam + float64(k)*math.Log(lam) - lg)
	}
	if lam >= float64(m) {
		below := 0.0
		for k := range m {
			below += pmf(k)
		}
		return max(1-below, 0)
	}
	tail := 0.0
	for k := m; k < m+1000; k++ {
		p := pmf(k)
		tail += p
		if p < tail*1e-17 {
			break
		}
	}
	return tail
}

// verdict is a check's result.
type verdict int

const (
	inconclusive verdict = iota
	passed
	failed
)

func (v verdict) String() string { return [...]string{"Inconclusive", "Passed", "Failed"}[v] }

// fromResult is a check's verdict from its result: Held is inconclusive.
func fromResult(r webappv1.CheckResult) verdict {
	switch r {
	case webappv1.CheckPassed:
		return passed
	case webappv1.CheckFailed:
		return failed
	}
	return inconclusive
}

// ending is how a run ended.
type ending int

const (
	held ending = iota // still at a step at the horizon
	promoted
	abortedFailed       // aborted by failed checks
	abortedInconclusive // aborted by onInconclusive's Abort
)

// outcome is one simulated canary.
type outcome struct {
	ending ending
	// end is when it ended, in seconds after the release (the first step's weight in place).
	end float64
	// requests and bad are the canary's requests until the end, and those answered 5xx.
	requests, bad int64
	// firstFail is the canary's requests since the release at its first failed check; -1 when
	// none failed.
	firstFail int64
	// failedInTime: a check failed by the first check with the row's number of requests since
	// the release (10 or 300). abortedAtOnce: the first failed check aborted.
	failedInTime, abortedAtOnce bool
	// passedInTime: every step's checks passed by its first check with 1,000 of the step's
	// requests.
	passedInTime bool
}

// simulation is one judge on one row at one rate.
type simulation struct {
	plan         simPlan
	row          simRow
	rate         float64
	judge        judgeKind
	abortAfter   bool // onInconclusive: Abort after plan.inconclusiveAfter, rather than Hold
	canary, stbl mix
	// reach is, by step, the chance that a window of the step has minRequests of the canary's.
	reach []float64
	// jumps lets the runs of a good canary jump (runner.jump); TestSimJump turns it off.
	jumps bool
	// runs counts the runs so far; judged, the checks canary.Judge judged too; differences says
	// where it found otherwise than the simulation, or canary.Due scheduled otherwise.
	runs, judged int
	differences  []string
}

func newSimulation(plan simPlan, row simRow, rate float64, judge judgeKind, abortAfter bool) *simulation {
	s := &simulation{plan: plan, row: row, rate: rate, judge: judge, abortAfter: abortAfter, jumps: true,
		canary: newMix(row.canary, row.buckets, plan.max, plan.quantile),
		stbl:   newMix(simHealthy, row.buckets, plan.max, plan.quantile)}
	for _, w := range plan.weights {
		s.reach = append(s.reach, poissonTail(rate*w/plan.weights[0]*plan.interval, plan.least))
	}
	return s
}

// failGoal and passGoal are the requests by which a check must fail (rows 1 to 3) or pass.
const passGoal = 1000

func (s *simulation) failGoal() int64 {
	if s.row.goal == failsFirst {
		return 10
	}
	return 300
}

// runner is the state of one simulated canary.
type runner struct {
	*simulation
	r *rand.Rand
	o outcome
	// t is the current step's start, in seconds after the release; rate and stableRate are the
	// versions' rates of requests in it.
	t, rate, stableRate float64
	// cum is the canary's requests since the release; step, since the step began; stable, the
	// stable version's, drawn up to stableDrawn (a step time).
	cum, step, stable tally
	last, stableDrawn float64 // the canary's requests are drawn up to last (a step time)
	// lam and limit cache Knuth's exp(-lam) for the interval's span.
	lam, limit float64
	// every and decisive: this run's checks are checked against canary.Judge, all of them or
	// those that pass or fail; record is the latest check Judge recorded at the step.
	every, decisive bool
	record          *webappv1.AnalysisStatus
	// passKey and passN: with the step's requests other than quick good ones as in passKey, the
	// checks pass from passN requests on (0 when not by passGoal).
	passKey tally
	passN   int64
}

// poisson is poisson with the last mean's exp(-lam) kept: most spans are one interval.
func (u *runner) poisson(lam float64) int64 {
	if lam >= 10 || lam <= 0 {
		return poisson(u.r, lam)
	}
	if lam != u.lam {
		u.lam, u.limit = lam, math.Exp(-lam)
	}
	k := int64(0)
	for p := u.r.Float64(); p > u.limit; p *= u.r.Float64() {
		k++
	}
	return k
}

// draw counts the requests of a version with mix m over a span in which lam of them are
// expected: below 30, a Poisson total and each request's kind drawn; from 30, each kind's count
// drawn as an independent Poisson, which is the same distribution. n, when not negative, is the
// total already drawn.
func (u *runner) draw(m *mix, lam float64, n int64) tally {
	var t tally
	switch {
	case n >= 0 || lam < 30:
		if n < 0 {
			n = u.poisson(lam)
		}
		for range n {
			t.addKind(m.kind(u.r.Float64()), 1)
		}
	default:
		for k, p := range m.p {
			t.addKind(k, poisson(u.r, lam*p))
		}
	}
	return t
}

// kind is the kind of request (mix.p's order) that a uniform draw x in [0, 1) falls on.
func (m *mix) kind(x float64) int {
	k := 0
	for k < 5 && x >= m.cum[k] {
		k++
	}
	return k
}

// addKind counts c more requests of kind k (mix.p's order).
func (t *tally) addKind(k int, c int64) {
	t.n += c
	if k >= 3 {
		t.bad += c
	}
	switch k % 3 {
	case 1:
		t.mid += c
	case 2:
		t.slow += c
	}
}

// advance draws the canary's requests up to at (a step time), and returns them.
func (u *runner) advance(at float64) tally {
	return u.count(u.draw(&u.canary, u.rate*(at-u.last), -1), at)
}

// count adds d, the canary's requests up to at, to the counts.
func (u *runner) count(d tally, at float64) tally {
	u.last = at
	u.step.add(d)
	u.cum.add(d)
	return d
}

// stableSince returns the stable version's requests from from to to (step times): from 0, its
// requests since the step began; from to - interval, its window's.
func (u *runner) stableSince(from, to float64) tally {
	if from >= u.stableDrawn { // what came before from is never asked for
		u.stableDrawn, u.stable = from, tally{}
	}
	u.stable.add(u.draw(&u.stbl, u.stableRate*(to-u.stableDrawn), -1))
	u.stableDrawn = to
	return u.stable
}

// finish ends the run.
func (u *runner) finish(e ending, at float64, failDecided bool) outcome {
	o := &u.o
	o.ending, o.end, o.requests, o.bad = e, at, u.cum.n, u.cum.bad
	if !failDecided {
		o.failedInTime = o.firstFail >= 0
	}
	if e != promoted {
		o.passedInTime = false
	}
	return *o
}

// run simulates one canary.
func (s *simulation) run(r *rand.Rand) outcome {
	p := &s.plan
	u := &runner{simulation: s, r: r, o: outcome{firstFail: -1, passedInTime: true}}
	if s.judge == judgeSequential {
		u.every, u.decisive = s.judged < judgeEvery, s.runs < judgeDecisive
	}
	s.runs++
	failedChecks := 0    // towards maxFailedChecks
	failDecided := false // whether the first check with failGoal requests has been seen
	since := -1.0        // the first check of an unbroken run of inconclusive checks
	for i := range p.weights {
		u.rate = s.rate * p.weights[i] / p.weights[0]
		u.stableRate = s.rate * (100 - p.weights[i]) / p.weights[0]
		u.step, u.stable, u.last, u.stableDrawn, u.record = tally{}, tally{}, 0, 0, nil
		pause := p.pauses[i]
		latest := inconclusive
		passDecided := false
		cached := false // the sequential judge's latest verdict holds while no request comes
		// A per-window judge held for good: no window of the step will have minRequests, but with
		// a chance below one in a million a run.
		if s.judge == judgeWindow && s.reach[i]*(simHorizon-u.t)/p.interval < 1e-6 {
			end, e := simHorizon-u.t, held
			if first := p.interval; s.abortAfter && u.t+first+p.inconclusiveAfter < simHorizon {
				end, e = first+p.inconclusiveAfter, abortedInconclusive
			}
			u.advance(end)
			if !failDecided && u.cum.n >= s.failGoal() {
				failDecided, u.o.failedInTime = true, false
			}
			return u.finish(e, u.t+end, failDecided)
		}
		for k := 0; ; k++ {
			c := p.interval * float64(k+1)
			if s.judge == judgeSequential {
				c = simFirstCheckDelay + p.interval*float64(k)
			}
			// While the sequential judge's checks stay inconclusive, a good canary's run goes
			// straight to the check that passes or that sees a request other than a quick good
			// one (jump), and otherwise, while few requests come, skips the checks that get none:
			// their number is geometric.
			var arrived int64 = -1
			var jumped *tally
			if cached && latest == inconclusive && !u.every && s.jumps && !s.abortAfter && s.row.goal == passes {
				var horizon bool
				if jumped, c, horizon = u.jump(c); horizon {
					return u.finish(held, simHorizon, failDecided)
				}
				if jumped != nil {
					k = int(math.Round((c - simFirstCheckDelay) / p.interval))
				}
			}
			if jumped == nil && cached && latest == inconclusive && u.rate*p.interval < 3 && !u.every {
				skip := math.Floor(math.Log(u.r.Float64()) / (-u.rate * p.interval))
				skip = min(skip, (simHorizon-u.t)/p.interval+1)
				if skip > 0 {
					k += int(skip)
					c += skip * p.interval
					u.last = c - p.interval
				}
				arrived = 0 // at least one request comes by c: drawn below
			}
			if latest == passed && c > pause { // the pause ended after a check that passed
				u.advance(pause)
				u.t += pause
				break
			}
			if s.abortAfter && since >= 0 && u.t+c > since+p.inconclusiveAfter {
				end := since + p.inconclusiveAfter - u.t
				if end > u.last {
					u.advance(end)
				}
				return u.finish(abortedInconclusive, since+p.inconclusiveAfter, failDecided)
			}
			if u.t+c > simHorizon {
				if simHorizon-u.t > u.last {
					u.advance(simHorizon - u.t)
				}
				return u.finish(held, simHorizon, failDecided)
			}
			if s.judge == judgeFlagger && failedChecks >= p.maxFailed { // the scheduler's next run
				u.advance(c)
				return u.finish(abortedFailed, u.t+c, failDecided)
			}
			var v verdict
			switch s.judge {
			case judgeSequential:
				var d tally
				switch {
				case jumped != nil:
					d = u.count(*jumped, c)
				case arrived == 0:
					d = u.count(u.draw(&s.canary, 0, atLeastOne(u.r, u.rate*(c-u.last))), c)
				default:
					d = u.advance(c)
				}
				if cached && d.n == 0 {
					v = latest
				} else {
					var asked bool
					v, asked = s.sequential(u, c)
					cached = !asked
				}
				if u.every || u.decisive && v != inconclusive {
					u.compare(i, c, v)
				}
			default:
				w := u.advance(c)
				if s.judge == judgeWindow {
					v = s.window(w, u, c)
				} else {
					v = s.flagger(w)
				}
			}
			latest = v
			if v == inconclusive {
				if since < 0 {
					since = u.t + c
				}
			} else {
				since = -1
			}
			if v == failed && u.o.firstFail < 0 {
				u.o.firstFail = u.cum.n
			}
			if !failDecided && (v == failed || u.cum.n >= s.failGoal()) {
				failDecided, u.o.failedInTime = true, v == failed
			}
			if !passDecided && (v == passed || u.step.n >= passGoal) {
				passDecided = true
				if v != passed {
					u.o.passedInTime = false
				}
			}
			if v == failed {
				failedChecks++
				if s.judge == judgeSequential || s.judge == judgeWindow && failedChecks >= p.maxFailed {
					u.o.abortedAtOnce = failedChecks == 1
					return u.finish(abortedFailed, u.t+c, failDecided)
				}
			}
			if v == passed && c >= pause {
				u.t += c
				break
			}
		}
		if !passDecided {
			u.o.passedInTime = false
		}
	}
	return u.finish(promoted, u.t, failDecided)
}

// jump takes a sequential judge's run, inconclusive at its step's check before c (the k'th,
// not yet drawn), straight to its next check that can find otherwise: the first that has the
// requests to pass (passN), or that sees a request other than a quick good one ("clean": not
// 5xx, and at most the lower bound of the bucket that holds max). Until then only clean requests
// come, and with more of them the sequential test can only pass, never fail (each lowers its
// likelihood ratio). It draws the time of the next other request (exponential), and that of the
// clean one that brings passN (gamma), and returns the requests up to the first check after
// either, and that check's time; nil when there is no such passN. At the horizon it counts the
// requests up to it, and says so.
func (u *runner) jump(c float64) (d *tally, at float64, horizon bool) {
	p := &u.plan
	t := u.step
	if key := (tally{bad: t.bad, mid: t.mid, slow: t.slow}); key != u.passKey || u.passN == 0 {
		u.passKey, u.passN = key, 0
		pass := func(n int64) bool {
			x := t
			x.n = n
			success, duration := u.claims(x)
			return success == passed && duration == passed
		}
		if pass(passGoal) {
			u.passN = t.n + 1 + int64(sort.Search(int(passGoal-t.n), func(i int) bool { return pass(t.n + 1 + int64(i)) }))
		}
	}
	if u.passN == 0 || u.passN <= t.n {
		return nil, c, false
	}
	c0, p0 := u.last, u.canary.p[0]
	rc, rx := u.rate*p0, u.rate*(1-p0)
	need := u.passN - t.n
	tc, tx := c0+gamma(u.r, float64(need))/rc, math.Inf(1)
	if rx > 0 {
		tx = c0 + u.r.ExpFloat64()/rx
	}
	checkAt := func(x float64) float64 {
		return max(c, simFirstCheckDelay+math.Ceil((x-simFirstCheckDelay)/p.interval)*p.interval)
	}
	land := min(checkAt(tc), checkAt(tx))
	if u.t+land > simHorizon {
		land, horizon = simHorizon-u.t, true
	}
	// The requests up to land: clean ones, given tc; others from tx.
	var got tally
	if tc <= land {
		got.addKind(0, need+u.poisson(rc*(land-tc)))
	} else {
		got.addKind(0, truncatedPoisson(u.r, rc*(land-c0), need))
	}
	if tx <= land {
		for range 1 + u.poisson(rx*(land-tx)) {
			got.addKind(max(u.canary.kind(p0+u.r.Float64()*(1-p0)), 1), 1)
		}
	}
	if horizon {
		u.count(got, land)
		return nil, land, true
	}
	return &got, land, false
}

// gamma draws from a gamma distribution of shape a >= 1 and scale 1 (Marsaglia and Tsang).
func gamma(r *rand.Rand, a float64) float64 {
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// truncatedPoisson draws from a Poisson distribution of mean lam given that it is below m (m >=
// 1), by inversion over the weights of 0 to m-1, each relative to the greatest (at the mode, or
// m-1), so that none overflows; those below 1e-17 of it are left out.
func truncatedPoisson(r *rand.Rand, lam float64, m int64) int64 {
	top := min(m-1, int64(lam))
	// each calls f with the weights from the top down, then up from above it, while they matter.
	each := func(f func(k int64, w float64) bool) {
		w := 1.0
		for k := top; k >= 0 && w > 1e-17; k-- {
			if f(k, w) {
				return
			}
			w *= float64(k) / lam
		}
		w = 1.0
		for k := top + 1; k < m; k++ {
			if w *= lam / float64(k); w < 1e-17 || f(k, w) {
				return
			}
		}
	}
	sum := 0.0
	each(func(_ int64, w float64) bool { sum += w; return false })
	x, got := r.Float64()*sum, top
	each(func(k int64, w float64) bool { got = k; x -= w; return x < 0 })
	return got
}

// compare judges the check at step time c of step i with canary.Judge, from the counts the
// simulation judged (the stable version's drawn now if they were not), and notes where it finds
// otherwise than v, or canary.Due does not make it the check due at c.
func (u *runner) compare(i int, c float64, v verdict) {
	p := &u.plan
	from := simEpoch.Add(time.Duration(u.t * float64(time.Second)))
	span := canary.Span{From: from, To: from.Add(time.Duration(c * float64(time.Second)))}
	m := &canary.Measurement{Span: span, Window: p.spec.Analysis.Window(),
		Canary: u.values(u.step, &u.canary), Stable: u.values(u.stableSince(0, c), nil)}
	rec := canary.Judge(p.spec.Analysis, m, span)
	u.judged++
	got := fromResult(rec.Result)
	if got != v {
		u.differences = append(u.differences, fmt.Sprintf("step %d at %v: canary.Judge found %s (%s), the simulation %v; canary %+v, stable %+v",
			i, c, rec.Result, rec.Message, v, u.step, u.stable))
	}
	start := metav1.NewTime(from)
	st := &webappv1.CanaryStatus{Phase: webappv1.CanaryProgressing, Step: int32(i), StepStartTime: &start, PauseStartTime: &start, Analysis: u.record}
	if due, ok := canary.Due(p.spec, st, span.To); !ok || due != span {
		u.differences = append(u.differences, fmt.Sprintf("step %d at %v: canary.Due gives %v, %v; the simulation's check is %v", i, c, due, ok, span))
	}
	if _, ok := canary.Due(p.spec, st, span.To.Add(-time.Second)); ok && u.every { // with the record of every check before
		u.differences = append(u.differences, fmt.Sprintf("step %d: canary.Due makes a check due before the simulation's at %v", i, span.To))
	}
	u.record = rec
}

// values are a version's counts as the edge measures them: its requests, those answered 5xx
// (nil when none was, as the query finds no series), and, with a mix, the cumulative histogram
// at the bounds of the bucket that holds max (the others do not change what Judge finds).
func (u *runner) values(t tally, m *mix) canary.Values {
	f := func(x int64) *float64 { v := float64(x); return &v }
	v := canary.Values{Requests: f(t.n)}
	if t.bad > 0 {
		v.Failed = f(t.bad)
	}
	if m != nil {
		fast := float64(t.n - t.mid - t.slow)
		if m.lower > 0 {
			v.Buckets = append(v.Buckets, canary.Bucket{UpperBound: 1000 * m.lower, Count: fast})
		}
		if !math.IsInf(m.upper, 1) {
			v.Buckets = append(v.Buckets, canary.Bucket{UpperBound: 1000 * m.upper, Count: fast + float64(t.mid)})
		}
		v.Buckets = append(v.Buckets, canary.Bucket{UpperBound: math.Inf(1), Count: float64(t.n)})
	}
	return v
}

// atLeastOne draws from a Poisson distribution of mean lam, given that it is at least 1, by
// inversion.
func atLeastOne(r *rand.Rand, lam float64) int64 {
	x := r.Float64() * -math.Expm1(-lam)
	k, p := int64(1), lam*math.Exp(-lam)
	for x > p && p > 0 {
		x -= p
		k++
		p *= lam / float64(k)
	}
	return k
}

// sequential is the sequential judge's check of the step's requests so far, as canary.Judge
// makes it: each built-in metric's claim (a Share) tested at minRequests. A canary shown outside
// request-success-rate's min fails when the stable version's requests over the same span show
// it inside (tested with no floor), or when it is worse than the stable version's by more than
// maxDifference; otherwise both versions fail, and the check is held (inconclusive here). Any
// metric failed fails the check; else any inconclusive makes it inconclusive. asked says whether
// the stable version's requests were asked for: the verdict then depends on them too.
func (s *simulation) sequential(u *runner, at float64) (v verdict, asked bool) {
	p := &s.plan
	c := u.step
	success, duration := s.claims(c)
	if success == failed {
		asked = true
		st := u.stableSince(0, at)
		inside := (canary.Share{Requests: float64(st.n), Bad: float64(st.bad), Bound: p.successBound}).Test(0).Result == webappv1.CheckPassed
		outside := func(t tally) float64 { return max(p.minSuccess-100*float64(t.n-t.bad)/float64(t.n), 0) }
		switch {
		case st.n == 0:
			success = inconclusive
		case inside, outside(c)-outside(st) > p.maxDifference:
		default:
			success = inconclusive
		}
	}
	return combine(success, duration), asked
}

// claims are the canary's two built-in metrics' tests on its requests c, before any comparison
// with the stable version.
func (s *simulation) claims(c tally) (success, duration verdict) {
	p := &s.plan
	success = fromResult(canary.Share{Requests: float64(c.n), Bad: float64(c.bad), Bound: p.successBound}.Test(p.least).Result)
	duration = fromResult(canary.Share{Requests: float64(c.n), Bad: c.slower(&s.canary), Bound: 1 - p.quantile}.Test(p.least).Result)
	return success, duration
}

// combine is a check's verdict from its metrics'.
func combine(vs ...verdict) verdict {
	switch {
	case slices.Contains(vs, failed):
		return failed
	case slices.Contains(vs, inconclusive):
		return inconclusive
	}
	return passed
}

// window is today's per-window judge of one window w (canary/analysis.go's judge and
// judgeMetric as of 19a7015): inconclusive below minRequests; request-success-rate outside min
// passes when the stable version is as far outside (within maxDifference), is inconclusive when
// the stable version had fewer than minRequests, and fails otherwise; request-duration's
// quantile above max fails.
func (s *simulation) window(w tally, u *runner, at float64) verdict {
	p := &s.plan
	if w.n < p.least {
		return inconclusive
	}
	success := passed
	if off := p.minSuccess - 100*float64(w.n-w.bad)/float64(w.n); off > 0 {
		st := u.stableSince(at-p.interval, at)
		switch {
		case st.n == 0 || st.n < p.least:
			success = inconclusive
		case off-max(p.minSuccess-100*float64(st.n-st.bad)/float64(st.n), 0) <= p.maxDifference:
			success = passed
		default:
			success = failed
		}
	}
	duration := passed
	if s.quantileAbove(w) {
		duration = failed
	}
	return combine(success, duration)
}

// flagger is Flagger's rule on one window w: a window without requests, or whose every request
// got a 5xx (the success rate's numerator finds no series), finds "no values" and fails, as a
// success rate below min or a quantile above max does.
func (s *simulation) flagger(w tally) verdict {
	p := &s.plan
	switch {
	case w.n == 0 || w.bad == w.n:
		return failed
	case 100*float64(w.n-w.bad)/float64(w.n) < p.minSuccess, s.quantileAbove(w):
		return failed
	}
	return passed
}

// quantileAbove reports whether histogram_quantile's estimate of the window's quantile is above
// max. Prometheus finds the first bucket whose count reaches rank = quantile × n and interpolates
// linearly within it (the +Inf bucket answers the highest finite boundary): the estimate is above
// max exactly when rank is beyond the requests at most lower plus the bucket's share up to max.
func (s *simulation) quantileAbove(w tally) bool {
	if w.n == 0 {
		return false
	}
	rank := s.plan.quantile * float64(w.n)
	fast := float64(w.n - w.mid - w.slow)
	return rank > fast+(1-s.canary.slowShare)*float64(w.mid)
}

// summary is what a simulation's runs came to.
type summary struct {
	runs                               int
	failedInTime, atOnce, passedInTime int
	endings                            [4]int
	// abortTimes and abortBad are the aborted runs' ends and the 5xx their canaries answered;
	// promoteTimes the promoted runs' ends; firstFails the requests at each run's first failed
	// check, +Inf when none failed.
	abortTimes, abortBad, promoteTimes, firstFails []float64
}

func summarize(outs []outcome) summary {
	m := summary{runs: len(outs), firstFails: make([]float64, 0, len(outs))}
	for _, o := range outs {
		if o.failedInTime {
			m.failedInTime++
			if o.abortedAtOnce {
				m.atOnce++
			}
		}
		if o.passedInTime {
			m.passedInTime++
		}
		m.endings[o.ending]++
		switch o.ending {
		case abortedFailed, abortedInconclusive:
			m.abortTimes = append(m.abortTimes, o.end)
			m.abortBad = append(m.abortBad, float64(o.bad))
		case promoted:
			m.promoteTimes = append(m.promoteTimes, o.end)
		}
		f := math.Inf(1)
		if o.firstFail >= 0 {
			f = float64(o.firstFail)
		}
		m.firstFails = append(m.firstFails, f)
	}
	for _, xs := range [][]float64{m.abortTimes, m.abortBad, m.promoteTimes, m.firstFails} {
		slices.Sort(xs)
	}
	return m
}

func (m *summary) aborted() int { return m.endings[abortedFailed] + m.endings[abortedInconclusive] }

// share is n of the runs, a fraction.
func (m *summary) share(n int) float64 { return float64(n) / float64(m.runs) }

// pct writes n of the runs in percent: "0 %", "0.03 %", "99.4 %", "100 %".
func (m *summary) pct(n int) string {
	f := 100 * m.share(n)
	switch {
	case n == 0:
		return "0 %"
	case n == m.runs:
		return "100 %"
	case f < 0.1, f > 99.9:
		return fmt.Sprintf("%.2f %%", f)
	}
	return fmt.Sprintf("%.1f %%", f)
}

// quantile is the q-quantile of sorted xs.
func quantile(xs []float64, q float64) float64 { return xs[int(q*float64(len(xs)-1))] }

// duration writes a time after the release: "35 s", "4.5 min", "3.2 h".
func duration(s float64) string {
	switch {
	case s < 100:
		return fmt.Sprintf("%.0f s", s)
	case s < 6000:
		return fmt.Sprintf("%.1f min", s/60)
	}
	return fmt.Sprintf("%.1f h", s/3600)
}

// requests writes a number of requests.
func requests(n float64) string {
	if math.IsInf(n, 1) {
		return "none"
	}
	return fmt.Sprintf("%.0f", n)
}

// cell is what the table says of one judge on one row at one rate: the goal's figure first.
func (m *summary) cell(r *simRow) string {
	var parts []string
	switch r.goal {
	case failsFirst:
		parts = append(parts, m.pct(m.atOnce))
	case failsBy:
		parts = append(parts, m.pct(m.failedInTime))
		if f := m.firstFails; !math.IsInf(quantile(f, 0.5), 1) {
			parts = append(parts, fmt.Sprintf("1st failure at %s req. (95 %%: %s)", requests(quantile(f, 0.5)), requests(quantile(f, 0.95))))
		}
	case passes:
		parts = append(parts, m.pct(m.aborted())+" aborted", m.pct(m.passedInTime)+" in time")
	}
	return strings.Join(append(parts, m.fate(r.canary.errors > simHealthy.errors)), " · ")
}

// fate says how most runs ended, and when; with failures, how many 5xx the canary answered.
func (m *summary) fate(failures bool) string {
	switch {
	case m.aborted() > m.runs/2:
		f := "aborted at " + duration(quantile(m.abortTimes, 0.5))
		if failures {
			f += fmt.Sprintf(", %.0f failed", quantile(m.abortBad, 0.5))
		}
		return f
	case m.endings[promoted] > m.runs/2:
		return "promoted at " + duration(quantile(m.promoteTimes, 0.5))
	case m.endings[held] == m.runs:
		return "held at its step"
	}
	return fmt.Sprintf("%s promoted, %s held", m.pct(m.endings[promoted]), m.pct(m.endings[held]))
}

// goalText is the goal of a row.
var goalText = map[goal]string{
	failsFirst: "the first check that has 10 of its requests fails, in every run, and aborts at once",
	failsBy:    "a check fails by the first one that has 300 of its requests, in 95 % of runs",
	passes:     "aborted in under 1 % of runs; each step's checks pass by its first check that has 1,000 of the step's requests, in 95 %",
}

// met reports whether the sequential judge's summary meets row r's goal.
func (m *summary) met(r *simRow) bool {
	switch r.goal {
	case failsFirst:
		return m.atOnce == m.runs
	case failsBy:
		return m.share(m.failedInTime) >= 0.95
	}
	return m.share(m.aborted()) < 0.01 && m.share(m.passedInTime) >= 0.95
}

// simCell is one simulation of the test: a judge on a row at a rate.
type simCell struct {
	simKey
	sum summary
}

// simKey names a simCell.
type simKey struct {
	row, rate int
	judge     judgeKind
	abort     bool // onInconclusive: Abort, rather than Hold
}

// abortRows and abortRates are the rows and rates simulated with onInconclusive: Abort too: the
// canaries that fail everything and the good ones, at the rates where checks stay inconclusive.
var abortRows, abortRates = []int{0, 4}, 3

// The docs print the simulation's tables between these lines.
const (
	simStart = "<!-- canary judge simulation: written by go test ./canary -run TestJudgeSimulation -update -->"
	simEnd   = "<!-- end of canary judge simulation -->"
)

// TestJudgeSimulation simulates simRuns canaries of each row at each rate through the example's
// plan, judged by each judge (the comment at the top of this file), and fails unless the
// sequential judge meets every row's goal and docs/canary.md prints the tables it logs (-update
// writes them there).
func TestJudgeSimulation(t *testing.T) {
	plan := readExamplePlan(t)
	var cells []*simCell
	for ri, row := range simRows {
		for qi := range row.rates {
			for j := range judgeNames {
				cells = append(cells, &simCell{simKey: simKey{row: ri, rate: qi, judge: judgeKind(j)}})
			}
		}
	}
	for _, ri := range abortRows {
		for qi := range abortRates {
			for _, j := range []judgeKind{judgeSequential, judgeWindow} { // Flagger's has no inconclusive
				cells = append(cells, &simCell{simKey: simKey{row: ri, rate: qi, judge: j, abort: true}})
			}
		}
	}
	judged, differences := simulate(plan, cells)
	if len(differences) > 0 {
		t.Errorf("canary.Judge or canary.Due found otherwise than the simulation at %d of the %d checks both judged, first:\n%s", len(differences), judged, strings.Join(differences[:min(len(differences), 10)], "\n"))
	}
	tables := simTables(plan, cells)
	t.Logf("%d checks judged by canary.Judge too, as the simulation did\n%s", judged, tables)
	for _, c := range cells {
		row := &simRows[c.row]
		if c.judge == judgeSequential && !c.abort && !c.sum.met(row) {
			t.Errorf("%s at %s: the sequential judge does not reach the goal (%s): %s", row.name, row.rates[c.rate].name, goalText[row.goal], c.sum.cell(row))
		}
	}
	if t.Failed() {
		t.Fatalf("goals not met; the tables:\n%s", tables)
	}
	const path = "../docs/canary.md"
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), simStart+"\n")
	_, after, ok2 := strings.Cut(rest, simEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the lines %q and %q around the simulation's tables", path, simStart, simEnd)
	}
	want := before + simStart + "\n" + tables + simEnd + after
	switch {
	case *update:
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	case want != string(doc):
		t.Errorf("%s's simulation tables are stale; go test ./canary -run TestJudgeSimulation -update rewrites them", path)
	}
}

// simulate runs every cell's simulation: each cell's runs in chunks, each chunk with a random
// stream of its own (the same for every judge), so that the cores share the longest cells too.
func simulate(plan simPlan, cells []*simCell) (judged int, differences []string) {
	const chunks = 4
	var mu sync.Mutex
	type chunk struct {
		c    *simCell
		i    int
		outs []outcome
	}
	outs := make([][]outcome, len(cells))
	work := make(chan chunk)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for w := range work {
				row := simRows[w.c.row]
				rate := row.rates[w.c.rate]
				s := newSimulation(plan, row, rate.perSecond, w.c.judge, w.c.abort)
				stream := uint64(w.c.row)<<16 | uint64(slices.Index(simRates, rate))<<8 | uint64(w.i)
				r := rand.New(rand.NewPCG(simSeed, stream))
				for i := range w.outs {
					w.outs[i] = s.run(r)
				}
				mu.Lock()
				judged += s.judged
				differences = append(differences, s.differences...)
				mu.Unlock()
			}
		})
	}
	for ci, c := range cells {
		outs[ci] = make([]outcome, simRuns)
		for i := range chunks {
			work <- chunk{c: c, i: i, outs: outs[ci][i*simRuns/chunks : (i+1)*simRuns/chunks]}
		}
	}
	close(work)
	wg.Wait()
	for ci, c := range cells {
		c.sum = summarize(outs[ci])
	}
	return judged, differences
}

// simTables writes the simulation's tables in Markdown: one a row, the three judges side by
// side, then the rows simulated with onInconclusive: Abort.
func simTables(plan simPlan, cells []*simCell) string {
	byKey := map[simKey]*simCell{}
	for _, c := range cells {
		byKey[c.simKey] = c
	}
	var b strings.Builder
	for ri := range simRows {
		row := &simRows[ri]
		fmt.Fprintf(&b, "**%s.** Goal: %s.\n\n| its rate | %s |\n| --- | --- | --- | --- |\n", row.title(), goalText[row.goal], strings.Join(judgeNames, " | "))
		for qi, rate := range row.rates {
			fmt.Fprintf(&b, "| %s |", rate.name)
			for j := range judgeNames {
				fmt.Fprintf(&b, " %s |", byKey[simKey{row: ri, rate: qi, judge: judgeKind(j)}].sum.cell(row))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "**With onInconclusive: Abort after %.0f s,** as the example has it, at the rates where checks stay inconclusive for long (Flagger's rule has no inconclusive check):\n\n", plan.inconclusiveAfter)
	fmt.Fprintf(&b, "| canary | its rate | %s | %s |\n| --- | --- | --- | --- |\n", judgeNames[judgeSequential], judgeNames[judgeWindow])
	for _, ri := range abortRows {
		row := &simRows[ri]
		for qi := range abortRates {
			fmt.Fprintf(&b, "| %s | %s |", row.name, row.rates[qi].name)
			for _, j := range []judgeKind{judgeSequential, judgeWindow} {
				fmt.Fprintf(&b, " %s |", byKey[simKey{row: ri, rate: qi, judge: j, abort: true}].sum.abortCell(row))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

// title is the row's canary, in a sentence.
func (r *simRow) title() string {
	s := "A canary: " + r.name
	if r.goal != failsFirst {
		s += ", against " + map[bool]string{true: "min: 99", false: "max: 500"}[r.canary.p99 <= simHealthy.p99]
	}
	return s
}

// abortCell says how runs ended with onInconclusive: Abort.
func (m *summary) abortCell(r *simRow) string {
	var parts []string
	for _, e := range []struct {
		n    int
		what string
	}{{m.endings[abortedFailed], "aborted by a failed check"}, {m.endings[abortedInconclusive], "aborted as inconclusive"}, {m.endings[promoted], "promoted"}, {m.endings[held], "held"}} {
		if e.n > 0 {
			parts = append(parts, m.pct(e.n)+" "+e.what)
		}
	}
	return strings.Join(append(parts, m.fate(r.canary.errors > simHealthy.errors)), " · ")
}

// TestSimSamplers checks the simulation's draws: the Poisson sampler's mean and variance at the
// means it is used at (both of its methods), the draw of at least one request, and that a
// version whose p99 is max has exactly 1 % of its requests slower than max when max is a bucket
// boundary.
func TestSimSamplers(t *testing.T) {
	r := rand.New(rand.NewPCG(simSeed, 1))
	const n = 20_000
	for _, lam := range []float64{0.05, 0.5, 3, 9.9, 10, 30, 1000, 150_000} {
		t.Run(fmt.Sprint(lam), func(t *testing.T) {
			var sum, sq float64
			for range n {
				x := float64(poisson(r, lam))
				sum += x
				sq += x * x
			}
			mean := sum / n
			variance := sq/n - mean*mean
			// The mean within 5 standard errors; the variance within 5 % (more for small means).
			if got, se := mean, math.Sqrt(lam/n); math.Abs(got-lam) > 5*se {
				t.Errorf("mean %v, want %v ± %v", got, lam, 5*se)
			}
			if got, tol := variance, lam*(0.05+2/math.Sqrt(lam*n)); math.Abs(got-lam) > tol {
				t.Errorf("variance %v, want %v ± %v", got, lam, tol)
			}
		})
	}
	t.Run("at least one", func(t *testing.T) {
		const lam = 0.5
		var sum float64
		for range n {
			x := atLeastOne(r, lam)
			if x < 1 {
				t.Fatalf("atLeastOne drew %d", x)
			}
			sum += float64(x)
		}
		want := lam / -math.Expm1(-lam) // E[X | X >= 1]
		if got := sum / n; math.Abs(got-want) > 0.02 {
			t.Errorf("mean %v, want %v", got, want)
		}
	})
	t.Run("slower than max", func(t *testing.T) {
		m := newMix(version{errors: 0.1, p99: 1}, finerBuckets, 0.5, 0.99)
		if got := m.p[2] + m.p[5]; math.Abs(got-0.01) > 1e-9 || m.slowShare != 0 {
			t.Errorf("share above max %v (slowShare %v), want 0.01 (0)", got, m.slowShare)
		}
		if got := m.cum[5]; math.Abs(got-1) > 1e-12 {
			t.Errorf("the kinds' chances add up to %v", got)
		}
		m = newMix(simHealthy, traefikBuckets, 0.5, 0.99)
		if want := (1.2 - 0.5) / (1.2 - 0.3); math.Abs(m.slowShare-want) > 1e-12 {
			t.Errorf("slowShare %v with Traefik's buckets, want %v", m.slowShare, want)
		}
	})
}

// TestSimJump checks that a good canary's runs that jump (runner.jump) end as those that go
// check by check: when they are promoted, and on how many requests, at the rates where they
// jump.
func TestSimJump(t *testing.T) {
	plan := readExamplePlan(t)
	row := simRows[len(simRows)-1]
	if row.goal != passes {
		t.Fatal("the last row is not the good canary's")
	}
	const runs = 1500
	for qi, rate := range row.rates[:3] {
		t.Run(rate.name, func(t *testing.T) {
			stats := func(jumps bool) (mean, variance [2]float64) {
				s := newSimulation(plan, row, rate.perSecond, judgeSequential, false)
				s.jumps, s.runs = jumps, judgeDecisive // no run checked against Judge
				r := rand.New(rand.NewPCG(simSeed, uint64(1000+qi)<<1|map[bool]uint64{true: 1}[jumps]))
				for range runs {
					o := s.run(r)
					if o.ending != promoted {
						t.Fatalf("a good canary ended %v", o.ending)
					}
					for i, x := range []float64{o.end, float64(o.requests)} {
						mean[i] += x / runs
						variance[i] += x * x / runs
					}
				}
				for i := range variance {
					variance[i] -= mean[i] * mean[i]
				}
				return mean, variance
			}
			jm, jv := stats(true)
			sm, sv := stats(false)
			for i, what := range []string{"promotion time", "requests"} {
				if se := math.Sqrt((jv[i] + sv[i]) / runs); math.Abs(jm[i]-sm[i]) > 5*se {
					t.Errorf("mean %s %.1f when jumping, %.1f check by check (± %.1f)", what, jm[i], sm[i], 5*se)
				}
			}
		})
	}
}

// TestTruncatedPoisson checks truncatedPoisson's mean against the truncated distribution's, from
// below its mode to far above it.
func TestTruncatedPoisson(t *testing.T) {
	r := rand.New(rand.NewPCG(simSeed, 2))
	for _, tt := range []struct {
		lam float64
		m   int64
	}{{0, 1}, {0.5, 3}, {5, 3}, {50, 40}, {300, 200}, {2000, 201}} {
		t.Run(fmt.Sprint(tt.lam, "<", tt.m), func(t *testing.T) {
			var want, sum, sq float64 // the truncated mean and variance, by its weights
			lw := 0.0
			var ws []float64
			for k := range tt.m {
				if k > 0 {
					lw += math.Log(tt.lam / float64(k))
				}
				ws = append(ws, lw)
			}
			top := slices.Max(ws)
			for k, w := range ws {
				w = math.Exp(w - top)
				sum += w
				want += float64(k) * w
				sq += float64(k) * float64(k) * w
			}
			want /= sum
			sd := math.Sqrt(max(sq/sum-want*want, 0))
			const n = 20_000
			got := 0.0
			for range n {
				x := truncatedPoisson(r, tt.lam, tt.m)
				if x < 0 || x >= tt.m {
					t.Fatalf("drew %d", x)
				}
				got += float64(x) / n
			}
			if math.Abs(got-want) > 5*sd/math.Sqrt(n)+1e-9 {
				t.Errorf("mean %v, want %v", got, want)
			}
		})
	}
}

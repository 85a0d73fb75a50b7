package canary

import (
	"math"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// The built-in metrics are judged by a sequential test of a share of the canary's requests, the
// same at any traffic. Each built-in threshold is a claim about a share:
//
//	request-success-rate >= min   at most 1 - min/100 of the requests were answered 5xx
//	request-duration <= max       at most 1 - quantile of the requests were slower than max
//
// (and the other bounds alike: a success rate <= max is "at most max/100 were not 5xx", a
// duration >= min "at most the quantile were faster than min"). A check weighs every request of
// the canary since its step began, not one window, so that evidence adds up from check to check:
// 10 requests that all failed are as telling in an hour of 1 request a minute as in a second.
//
// The test is Wald's sequential probability ratio test (SPRT) between two shares on either side
// of the bound b, at an odds ratio of Margin: pPass, whose odds are b's divided by Margin, and
// pFail, whose odds are b's times Margin (for b = 1 %: 0.50 % and 1.98 %). After n requests, k
// of them bad, its log-likelihood ratio is
//
//	llr = k·ln(pFail/pPass) + (n-k)·ln((1-pFail)/(1-pPass))
//
// and the test fails once llr >= ln(1/(1-FailConfidence)), passes once llr <=
// -ln(1/(1-PassConfidence)) with at least minRequests requests, and is inconclusive between.
// llr is a martingale under pPass (and a supermartingale under any smaller share), so by
// Ville's inequality a canary whose true share is pPass or less fails, at any check of the step,
// however many there are, with probability at most 1 - FailConfidence; likewise one whose share
// is pFail or more passes with probability at most 1 - PassConfidence. A share between pPass and
// pFail is too near the bound to be told from it quickly: the test may go either way, or take
// long, and says so (Verdict.More).
const (
	// FailConfidence is the confidence of a failed test: a canary at most as bad as the pass
	// share fails with probability at most 1 %.
	FailConfidence = 0.99
	// PassConfidence is the confidence of a passed test: a canary at least as bad as the fail
	// share passes with probability at most 5 %.
	PassConfidence = 0.95
	// Margin is the odds ratio between the bound and each of the shares the test tells apart.
	Margin = 2.0
)

// Share is the evidence of one claim of a threshold: of Requests requests, Bad were bad (answered
// 5xx, slower than max, …), and the claim is that at most Bound of them are, a share from 0 to 1.
// Counts are rounded to whole requests (Prometheus's increase() extrapolates), and Bad is kept
// within 0 and Requests.
type Share struct {
	Requests, Bad float64
	Bound         float64
}

// Verdict is what a sequential test found.
type Verdict struct {
	// Result is Passed, Failed or Inconclusive.
	Result webappv1.CheckResult
	// More is, for an inconclusive verdict, about how many more requests would settle the test if
	// they go as those seen did (at least enough to reach minRequests), or -1 when the share seen
	// is so near the bound that no number within reason would; 0 when settled.
	More int64
	// LLR is the test's log-likelihood ratio: positive leans towards failing, negative towards
	// passing. Zero for a bound of 0 or 1.
	LLR float64
	// Failing is, for an inconclusive verdict, whether More counts the requests towards failing
	// (the requests seen are bad often enough to go that way), for which minRequests does not
	// count, rather than towards passing.
	Failing bool
}

// maxMore is the most requests More reports: beyond, the share seen is too near the bound.
const maxMore = 10_000_000

// thresholds are the test's two boundaries of llr.
var (
	failAt = math.Log(1 / (1 - FailConfidence))
	passAt = -math.Log(1 / (1 - PassConfidence))
)

// Test runs the sequential test on s: Failed once the bad requests show, at FailConfidence, that
// the share is above the bound; Passed once the requests, at least least of them, show at
// PassConfidence that it is within; Inconclusive otherwise. A bound of 0 admits no bad request:
// one fails, and least requests with none pass. A bound of 1 admits any: least requests pass.
func (s Share) Test(least int64) Verdict {
	n := math.Round(max(s.Requests, 0))
	k := math.Min(math.Round(max(s.Bad, 0)), n)
	need := max(float64(least)-n, 0)
	switch {
	case s.Bound <= 0 && k > 0:
		return Verdict{Result: webappv1.CheckFailed}
	case s.Bound <= 0, s.Bound >= 1:
		if need == 0 && n > 0 {
			return Verdict{Result: webappv1.CheckPassed}
		}
		return Verdict{Result: webappv1.CheckInconclusive, More: int64(max(need, 1))}
	}
	pPass, pFail := shares(s.Bound)
	bad, good := math.Log(pFail/pPass), math.Log((1-pFail)/(1-pPass)) // bad > 0 > good
	llr := k*bad + (n-k)*good
	switch {
	case llr >= failAt:
		return Verdict{Result: webappv1.CheckFailed, LLR: llr}
	case llr <= passAt && need == 0:
		return Verdict{Result: webappv1.CheckPassed, LLR: llr}
	}
	// How many more requests, at the share seen (none bad before any is seen), until llr crosses
	// a boundary: its drift per request is the share's mean step.
	seen := 0.0
	if n > 0 {
		seen = k / n
	}
	drift := seen*bad + (1-seen)*good
	var more float64
	failing := false
	switch {
	case llr <= passAt:
		more = need // only minRequests is missing
	case drift < 0:
		more = max((llr-passAt)/-drift, need) // towards passing, which takes minRequests too
	case drift > 0:
		more, failing = (failAt-llr)/drift, true // towards failing, which does not
	default:
		more = math.Inf(1)
	}
	more = max(math.Ceil(more), 1)
	if more > maxMore {
		return Verdict{Result: webappv1.CheckInconclusive, More: -1, LLR: llr}
	}
	return Verdict{Result: webappv1.CheckInconclusive, More: int64(more), LLR: llr, Failing: failing}
}

// shares are the two shares the test tells apart for bound b (0 < b < 1): odds(b)/Margin and
// odds(b)·Margin, as shares.
func shares(b float64) (pPass, pFail float64) {
	odds := b / (1 - b)
	return fromOdds(odds / Margin), fromOdds(odds * Margin)
}

func fromOdds(o float64) float64 { return o / (1 + o) }

// TestShares are the two shares the sequential test tells apart for bound b: at most pPass of
// the requests bad, the canary fails with probability at most 1 - FailConfidence; at least
// pFail, it passes with probability at most 1 - PassConfidence. Both are b itself for a bound of
// 0 or 1. docs/canary.md prints them.
func TestShares(b float64) (pPass, pFail float64) {
	if b <= 0 || b >= 1 {
		return b, b
	}
	return shares(b)
}

package canary_test

import (
	"math"
	"testing"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// tooNear, as a case's more, wants More to say the share is too near the bound to tell soon: -1,
// or at least 100,000 requests.
const tooNear = -2

// TestShareTest checks the sequential test at the edges of its decisions, for the bound of
// request-success-rate >= 99 (1 % of requests may fail): its shares are 0.50 % and 1.98 %, so a
// request that fails moves the log-likelihood ratio up by ln(1.98/0.50) = 1.37, and one that
// succeeds down by 0.015; it fails at ln(100) = 4.61 and passes at -ln(20) = -3.00.
func TestShareTest(t *testing.T) {
	for _, c := range []struct {
		name  string
		share canary.Share
		least int64
		want  webappv1.CheckResult
		more  int64 // for Inconclusive; 0 to skip
	}{
		{"10 requests, all failed: failed, whatever minRequests", canary.Share{Requests: 10, Bad: 10, Bound: 0.01}, 1000, webappv1.CheckFailed, 0},
		{"4 requests, all failed: failed (4 × 1.37 > 4.61)", canary.Share{Requests: 4, Bad: 4, Bound: 0.01}, 20, webappv1.CheckFailed, 0},
		{"3 requests, all failed: not yet (3 × 1.37 < 4.61)", canary.Share{Requests: 3, Bad: 3, Bound: 0.01}, 20, webappv1.CheckInconclusive, 1},
		{"1 of 60 failed: one bad request in a small window fails nothing", canary.Share{Requests: 60, Bad: 1, Bound: 0.01}, 20, webappv1.CheckInconclusive, 0},
		{"0 of 200: not yet shown", canary.Share{Requests: 200, Bad: 0, Bound: 0.01}, 20, webappv1.CheckInconclusive, 1},
		{"0 of 201: passed", canary.Share{Requests: 201, Bad: 0, Bound: 0.01}, 20, webappv1.CheckPassed, 0},
		{"0 of 201 but minRequests 500: inconclusive, 299 to go", canary.Share{Requests: 201, Bad: 0, Bound: 0.01}, 500, webappv1.CheckInconclusive, 299},
		{"0 of 100: about 101 more", canary.Share{Requests: 100, Bad: 0, Bound: 0.01}, 20, webappv1.CheckInconclusive, 101},
		{"15 of 300 (5 %): failed", canary.Share{Requests: 300, Bad: 15, Bound: 0.01}, 20, webappv1.CheckFailed, 0},
		{"1 of 1000 (0.1 %): passed", canary.Share{Requests: 1000, Bad: 1, Bound: 0.01}, 20, webappv1.CheckPassed, 0},
		{"100 of 10000, at the bound: within it, passed in the end", canary.Share{Requests: 10000, Bad: 100, Bound: 0.01}, 20, webappv1.CheckPassed, 0},
		{"200 of 10000 (2 %): failed", canary.Share{Requests: 10000, Bad: 200, Bound: 0.01}, 20, webappv1.CheckFailed, 0},
		{"1079 of 100000, where the test drifts neither way: too near to tell within reason", canary.Share{Requests: 100000, Bad: 1079, Bound: 0.01}, 20, webappv1.CheckInconclusive, tooNear},
		{"no request", canary.Share{Bound: 0.01}, 20, webappv1.CheckInconclusive, 201},
		{"bound 0 (min: 100): one failure fails", canary.Share{Requests: 5000, Bad: 1, Bound: 0}, 20, webappv1.CheckFailed, 0},
		{"bound 0: minRequests with none failed passes", canary.Share{Requests: 20, Bound: 0}, 20, webappv1.CheckPassed, 0},
		{"bound 1 (min: 0): anything passes at minRequests", canary.Share{Requests: 20, Bad: 20, Bound: 1}, 20, webappv1.CheckPassed, 0},
		{"counts are rounded, and Bad kept within Requests", canary.Share{Requests: 3.6, Bad: 9, Bound: 0.01}, 20, webappv1.CheckFailed, 0},
		{"a negative count is none", canary.Share{Requests: -5, Bad: -1, Bound: 0.01}, 20, webappv1.CheckInconclusive, 201},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.share.Test(c.least)
			if got.Result != c.want {
				t.Fatalf("Test = %+v; want %s", got, c.want)
			}
			if c.more != 0 && c.more != tooNear && got.More != c.more {
				t.Errorf("More = %d; want %d", got.More, c.more)
			}
			if c.more == tooNear && got.More != -1 && got.More < 100_000 {
				t.Errorf("More = %d; want -1, or at least 100,000 requests", got.More)
			}
			if got.Result == webappv1.CheckInconclusive && got.More == 0 {
				t.Errorf("More = 0 for an inconclusive verdict")
			}
		})
	}
}

// TestShareTestSaysWhichWay checks that an inconclusive verdict says whether the requests it
// wants more of lead towards failing (for which minRequests does not count) or passing.
func TestShareTestSaysWhichWay(t *testing.T) {
	for _, c := range []struct {
		name    string
		share   canary.Share
		failing bool
	}{
		{"1 request, failed: towards failing, 3 more", canary.Share{Requests: 1, Bad: 1, Bound: 0.01}, true},
		{"3 of 3 failed: towards failing", canary.Share{Requests: 3, Bad: 3, Bound: 0.01}, true},
		{"0 of 100: towards passing", canary.Share{Requests: 100, Bound: 0.01}, false},
		{"no request: towards passing, minRequests first", canary.Share{Bound: 0.01}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.share.Test(20); got.Result != webappv1.CheckInconclusive || got.Failing != c.failing {
				t.Errorf("Test = %+v; want Inconclusive, Failing %v", got, c.failing)
			}
		})
	}
}

// TestTestShares checks the shares the test tells apart: odds ratio 2 either side of the bound.
func TestTestShares(t *testing.T) {
	pass, fail := canary.TestShares(0.01)
	if math.Abs(pass-0.005025) > 1e-5 || math.Abs(fail-0.019803) > 1e-5 {
		t.Errorf("TestShares(0.01) = %.6f, %.6f; want 0.005025, 0.019803", pass, fail)
	}
	if pass, fail := canary.TestShares(0.5); math.Abs(pass-1.0/3) > 1e-9 || math.Abs(fail-2.0/3) > 1e-9 {
		t.Errorf("TestShares(0.5) = %f, %f; want 1/3, 2/3", pass, fail)
	}
}

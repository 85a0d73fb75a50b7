package canary_test

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
	"github.com/example/webapp-operator/internal/english"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func at(d time.Duration) *metav1.Time { t := metav1.NewTime(t0.Add(d)); return &t }

// plan is three steps: 10% for 5 s, 30% for 5 s, 60% until promoted, with maxFailedChecks 2.
func plan() *webappv1.Canary {
	return &webappv1.Canary{
		Steps:           []webappv1.CanaryStep{{Weight: 10, PauseSeconds: ptr(int32(5))}, {Weight: 30, PauseSeconds: ptr(int32(5))}, {Weight: 60}},
		MaxFailedChecks: ptr(int32(2)),
	}
}

// input is a WebApp of 4 replicas with a route, whose template changed from "old" to "new", at
// t0 + 1 minute.
func input(edit func(*canary.Input)) canary.Input {
	in := canary.Input{
		Name:           "shop",
		Plan:           plan(),
		Revision:       "new",
		Stable:         &canary.Stable{Revision: "old", Complete: true},
		StableReplicas: 4,
		Routed:         true,
		Now:            t0.Add(time.Minute),
	}
	if edit != nil {
		edit(&in)
	}
	return in
}

// analyzed is input with a plan that checks every 10 s, in a window of 10 s, that at least 99%
// of the canary's requests succeed and its 99th percentile is at most 500 ms, with a route that
// carries 10% and the canary's pod ready.
func analyzed(edit func(*canary.Input)) canary.Input {
	return input(func(in *canary.Input) {
		webappv1.Default(&webappv1.WebAppSpec{Rollout: &webappv1.Rollout{Canary: in.Plan}})
		in.Plan.Analysis = &webappv1.CanaryAnalysis{
			IntervalSeconds: ptr(int32(10)),
			Metrics: []webappv1.CanaryMetric{
				{Name: webappv1.MetricRequestSuccessRate, ThresholdRange: webappv1.ThresholdRange{Min: ptr(99.0)}},
				{Name: webappv1.MetricRequestDuration, ThresholdRange: webappv1.ThresholdRange{Max: ptr(500.0)}},
			},
		}
		webappv1.Default(&webappv1.WebAppSpec{Rollout: &webappv1.Rollout{Canary: in.Plan}})
		in.ServicesObserved, in.Canary, in.Route = true, ready(1), split(10, true)
		if edit != nil {
			edit(in)
		}
		if m := in.Measurement; m != nil && m.Span == (canary.Span{}) {
			m.Span, _ = canary.Due(in.Plan, in.Last, in.Now) // the check that is due, as the edge measures it
		}
	})
}

// measured is a measurement of a canary that had requests since its step began, successRate
// percent of them not 5xx, each of them taking latency milliseconds: the histogram has them all
// in the bucket latency falls in. Its span is filled in by analyzed, as the check that is due.
func measured(requests, successRate, latency float64) *canary.Measurement {
	failed := requests * (100 - successRate) / 100
	var buckets []canary.Bucket
	for _, le := range []float64{10, 50, 100, 250, 500, 1000, 2500, 5000, math.Inf(1)} {
		n := 0.0
		if latency <= le {
			n = requests
		}
		buckets = append(buckets, canary.Bucket{UpperBound: le, Count: n})
	}
	return &canary.Measurement{Window: 10 * time.Second, Canary: canary.Values{Requests: &requests, Failed: &failed, Buckets: buckets}}
}

// running is the status of a canary of "new" at step, started at t0.
func running(phase webappv1.CanaryPhase, step int32, edit func(*webappv1.CanaryStatus)) *webappv1.CanaryStatus {
	st := &webappv1.CanaryStatus{Revision: "new", Phase: phase, Step: step, StepStartTime: at(0)}
	if edit != nil {
		edit(st)
	}
	return st
}

// ready is a canary Deployment with n pods, all available and of its revision.
func ready(n int32) *canary.Deployment {
	return &canary.Deployment{Revision: "new", Replicas: n, Total: n, Updated: n, Available: n}
}

// gone is a canary Deployment of "new" scaled to zero, its pods gone.
func gone() *canary.Deployment { return &canary.Deployment{Revision: "new", ScaledDown: true} }

// split is an observed route that sends canary percent to the canary, accepted or not.
func split(canaryWeight int32, accepted bool) *canary.Route {
	return &canary.Route{Split: true, StableWeight: 100 - canaryWeight, CanaryWeight: canaryWeight, Accepted: accepted}
}

// want is what a case checks of the output; a zero field is not checked unless named in check.
type want struct {
	phase           webappv1.CanaryPhase // "" checks for no status
	step            int32
	form            canary.Form
	replicas        int32
	stableTemplate  bool
	split           bool
	weights         [2]int32
	services        bool
	selectsCanary   bool
	failedChecks    int32
	pauseStart      *metav1.Time
	resync          time.Duration
	message         string               // a part of the status message
	row             string               // the Move row that fires, "" for none
	analysis        webappv1.CheckResult // the result status.canary.analysis records, "" for none
	checkTime       *metav1.Time         // when it was checked, with analysis
	retries         int32                // status.canary.retries
	attempt         int32                // status.canary.attempt
	ignored         []string             // status.canary.ignoredAnnotations
	headerRoute     bool                 // the route's header rule (Output.HeaderRoute)
	headerRouted    bool                 // status.canary.headerRouted
	stableRevisions []string             // status.canary.stableRevisions
}

// transitionCase is a case of TestTransitions: an input, and what Next's output must show.
type transitionCase struct {
	name string
	in   canary.Input
	want want
}

// transitionCases are TestTransitions' cases; TestEveryRowHasACase reads them too.
func transitionCases() []transitionCase {
	cases := []transitionCase{
		{
			name: "no canary yet and the template is the stable one: nothing to do",
			in:   input(func(in *canary.Input) { in.Revision = "old" }),
			want: want{stableTemplate: true},
		},
		{
			name: "no stable Deployment yet: the Deployment is made with the template",
			in:   input(func(in *canary.Input) { in.Stable = nil }),
			want: want{stableTemplate: true},
		},
		{
			name: "start: a new template goes to a canary of ceil(10% of 4) = 1 pod; the route waits for the Services",
			in:   input(nil),
			want: want{row: "a new template, before any canary or after one ended", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, resync: 2*time.Minute + 5*time.Second, message: "Step 1 of 3: waiting for 1 canary pod"},
		},
		{
			name: "Services observed, canary not available: the route splits 100/0",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved = running(webappv1.CanaryProgressing, 0, nil), true
				in.Canary = &canary.Deployment{Replicas: 1, Revision: "new", Total: 1, Updated: 1}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, resync: time.Minute + 5*time.Second},
		},
		{
			name: "the canary's pod is available: 10% goes to it, and the Service <name> selects it once the route is split",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryProgressing, 0, nil), true, ready(1), split(0, true)
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, message: "waiting for the HTTPRoute to send 10%"},
		},
		{
			name: "the route carries 10% but its Gateway has not accepted this generation: the pause waits",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryProgressing, 0, nil), true, ready(1), split(10, false)
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true},
		},
		{
			name: "the route carries 10% and is accepted: the step's pause starts, and a call is asked for when it ends",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryProgressing, 0, nil), true, ready(1), split(10, true)
			}),
			want: want{row: "weight in place at a timed step: its pause starts", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, pauseStart: at(time.Minute), resync: 5 * time.Second, message: "held for 5s"},
		},
		{
			name: "the pause is over: the next step scales the canary to 2 pods first, the route keeps 10% until they are available",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.PauseStartTime = at(50 * time.Second) })
				in.ServicesObserved, in.Canary, in.Route = true, ready(1), split(10, true)
			}),
			want: want{row: "pause over and the latest check passed: the next step", phase: webappv1.CanaryProgressing, step: 1, form: canary.Run, replicas: 2, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 2*time.Minute + 5*time.Second},
		},
		{
			name: "the pause is over at the last step: the canary is promoted, and scales to the stable's 4 pods first",
			in: input(func(in *canary.Input) {
				in.Plan.Steps = in.Plan.Steps[:2]
				in.Last = running(webappv1.CanaryProgressing, 1, func(st *webappv1.CanaryStatus) { st.PauseStartTime = at(50 * time.Second) })
				in.ServicesObserved, in.Canary, in.Route = true, ready(2), split(30, true)
			}),
			want: want{row: "pause over and the latest check passed, at the last step: promoting", phase: webappv1.CanaryPromoting, step: 1, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{70, 30}, selectsCanary: true, pauseStart: at(50 * time.Second), message: "the canary scales to 4 pods (2 available)"},
		},
		{
			name: "the Deployment controller has not observed the canary's scale-up yet: the route keeps its weight",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 1, func(st *webappv1.CanaryStatus) { st.TemplateGeneration, st.Replicas = 3, 2 })
				in.ServicesObserved, in.Route = true, split(10, true)
				in.Canary = &canary.Deployment{Replicas: 2, Revision: "new", Generation: 4, ObservedGeneration: 3, Total: 1, Updated: 1, Available: 1}
			}),
			want: want{phase: webappv1.CanaryProgressing, step: 1, form: canary.Run, replicas: 2, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: time.Minute + 5*time.Second},
		},
		{
			name: "the generation that brought the revision is not observed yet: no pod counts",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.TemplateGeneration, st.Replicas = 4, 1 })
				in.ServicesObserved, in.Route = true, split(0, true)
				in.Canary = &canary.Deployment{Replicas: 1, Revision: "new", Generation: 4, ObservedGeneration: 3, Total: 1, Updated: 1, Available: 1}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, selectsCanary: true, resync: time.Minute + 5*time.Second},
		},
		{
			name: "a step without pauseSeconds, in place: Paused until promoted",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryProgressing, 2, nil), true, ready(3), split(60, true)
			}),
			want: want{row: "weight in place at a manual step: paused until promoted", phase: webappv1.CanaryPaused, step: 2, form: canary.Run, replicas: 3, services: true, split: true, weights: [2]int32{40, 60}, selectsCanary: true, message: "paused until it is promoted (annotate the WebApp with webapp.example.com/promote=new)"},
		},
		{
			name: "promote asked: the canary scales to the stable's 4 pods before it takes all the traffic",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPaused, 2, nil), true, ready(3), split(60, true)
				in.Promote = "new"
			}),
			want: want{row: "promote asked", phase: webappv1.CanaryPromoting, step: 2, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{40, 60}, selectsCanary: true, message: "the canary scales to 4 pods"},
		},
		{
			name: "a status older than the promotion, its annotation gone: the canary Deployment says it is being promoted",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Route = running(webappv1.CanaryPaused, 2, nil), true, split(60, true)
				in.Canary = &canary.Deployment{Replicas: 4, Revision: "new", Total: 4, Updated: 4, Available: 4, Promoting: "new"}
			}),
			want: want{row: "promoting before: the canary Deployment says so, whatever an older status says", phase: webappv1.CanaryPromoting, step: 2, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{0, 100}, selectsCanary: true},
		},
		{
			name: "promote asked for another revision does nothing (sync passes Promote false)",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPaused, 2, nil), true, ready(3), split(60, true)
			}),
			want: want{phase: webappv1.CanaryPaused, step: 2, form: canary.Run, replicas: 3, services: true, split: true, weights: [2]int32{40, 60}, selectsCanary: true},
		},
		{
			name: "promoting, the canary at full count: all the traffic goes to it",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPromoting, 2, nil), true, ready(4), split(60, true)
			}),
			want: want{phase: webappv1.CanaryPromoting, step: 2, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{0, 100}, selectsCanary: true},
		},
		{
			name: "promoting, the route is first seen to carry all to the canary: the stable Deployment waits scaleDownDelaySeconds, as the Gateway may still send it traffic",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPromoting, 2, nil), true, ready(4), split(100, true)
			}),
			want: want{phase: webappv1.CanaryPromoting, step: 2, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{0, 100}, selectsCanary: true, resync: 10 * time.Second, message: "Deployment shop takes its template at 2026-12-01T12:01:10Z, 10s after the route was seen to give it all"},
		},
		{
			name: "promoting, the route has carried all to the canary for scaleDownDelaySeconds: the stable Deployment takes the template",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPromoting, 2, func(st *webappv1.CanaryStatus) { st.AllTrafficTime = at(50 * time.Second) }), true, ready(4), split(100, true)
			}),
			want: want{phase: webappv1.CanaryPromoting, step: 2, form: canary.Run, replicas: 4, stableTemplate: true, services: true, split: true, weights: [2]int32{0, 100}, selectsCanary: true, message: "rolls to revision new"},
		},
		{
			name: "promoting, the stable rolled: the route goes back to <name>, which selects the stable pods only",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPromoting, 2, nil), true, ready(4), split(100, true)
				in.Stable.Revision = "new"
			}),
			want: want{phase: webappv1.CanaryPromoting, step: 2, form: canary.Run, replicas: 4, stableTemplate: true, services: true},
		},
		{
			name: "promoting, the route is first seen back: the canary keeps its pods for scaleDownDelaySeconds, as the Gateway may still send them traffic",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPromoting, 2, nil), true, ready(4), &canary.Route{Accepted: true}
				in.Stable.Revision = "new"
			}),
			want: want{phase: webappv1.CanaryPromoting, step: 2, form: canary.Run, replicas: 4, stableTemplate: true, resync: 10 * time.Second, message: "the canary keeps its pods until 2026-12-01T12:01:10Z"},
		},
		{
			name: "with scaleDownDelaySeconds 0, the canary scales to zero as soon as the route is seen back",
			in: input(func(in *canary.Input) {
				in.Plan.ScaleDownDelaySeconds = ptr(int32(0))
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPromoting, 2, nil), true, ready(4), &canary.Route{Accepted: true}
				in.Stable.Revision = "new"
			}),
			want: want{phase: webappv1.CanaryPromoting, step: 2, form: canary.Zero, stableTemplate: true, message: "the canary scales to zero"},
		},
		{
			name: "promoting, the route has been back for scaleDownDelaySeconds: the canary scales to zero",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPromoting, 2, func(st *webappv1.CanaryStatus) { st.NoTrafficTime = at(50 * time.Second) }), true, ready(4), &canary.Route{Accepted: true}
				in.Stable.Revision = "new"
			}),
			want: want{phase: webappv1.CanaryPromoting, step: 2, form: canary.Zero, stableTemplate: true, message: "the canary scales to zero"},
		},
		{
			name: "promoted: the canary's pods are gone, so are it and its Services",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPromoting, 2, nil), true, gone(), &canary.Route{Accepted: true}
				in.Stable.Revision = "new"
			}),
			want: want{row: "promoted: the stable Deployment runs the template, the canary's pods are gone", phase: webappv1.CanaryPromoted, step: 2, form: canary.Absent, stableTemplate: true, message: "Revision new was promoted"},
		},
		{
			name: "promoted stays promoted",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryPromoted, 2, nil)
				in.Stable.Revision = "new"
			}),
			want: want{phase: webappv1.CanaryPromoted, step: 2, stableTemplate: true},
		},
		{
			name: "abort asked: the route's canary weight goes to 0 first, the canary kept as it is",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryProgressing, 1, nil), true, ready(2), split(30, true)
				in.Abort = "new"
			}),
			want: want{row: "abort asked", phase: webappv1.CanaryAborted, step: 1, form: canary.Keep, replicas: 2, services: true, split: true, weights: [2]int32{100, 0}, message: "aborted by the webapp.example.com/abort annotation"},
		},
		{
			name: "aborted, the route's canary weight is first seen at 0: the canary keeps its pods for scaleDownDelaySeconds",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryAborted, 1, nil), true, ready(2), split(0, true)
			}),
			want: want{phase: webappv1.CanaryAborted, step: 1, form: canary.Keep, replicas: 2, services: true, split: true, weights: [2]int32{100, 0}, resync: 10 * time.Second},
		},
		{
			name: "aborted, the route's canary weight has been 0 for scaleDownDelaySeconds: the route goes back to <name>, the canary to zero",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryAborted, 1, func(st *webappv1.CanaryStatus) { st.NoTrafficTime = at(0) }), true, ready(2), split(0, true)
			}),
			want: want{phase: webappv1.CanaryAborted, step: 1, form: canary.Zero, services: true},
		},
		{
			name: "aborted, the route is back: the Services go, the canary stays at zero",
			in: input(func(in *canary.Input) {
				in.Last, in.Canary, in.Route = running(webappv1.CanaryAborted, 1, nil), gone(), &canary.Route{Accepted: true}
			}),
			want: want{phase: webappv1.CanaryAborted, step: 1, form: canary.Zero},
		},
		{
			name: "a check fails (ReplicaFailure): it counts, 1 of 2",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved = running(webappv1.CanaryProgressing, 0, nil), true
				in.Canary = &canary.Deployment{Replicas: 1, Revision: "new", Failure: "Deployment shop-canary cannot create pods (QuotaExceeded): exceeded quota."}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, failedChecks: 1, resync: 10 * time.Second, message: "1 of 2 failed checks: Deployment shop-canary cannot create pods (QuotaExceeded)"},
		},
		{
			name: "it fails again within 10 s: not counted, a call is asked for when it would count",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.FailedChecks, st.LastFailedCheckTime, st.LastFailedCheck = 1, at(56*time.Second), "Deployment shop-canary cannot create pods"
				})
				in.ServicesObserved = true
				in.Canary = &canary.Deployment{Replicas: 1, Revision: "new", Failure: "Deployment shop-canary cannot create pods"}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, failedChecks: 1, resync: 6 * time.Second},
		},
		{
			name: "it fails again after 10 s: the second failure aborts",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.FailedChecks, st.LastFailedCheckTime, st.LastFailedCheck = 1, at(50*time.Second), "Deployment shop-canary cannot create pods"
				})
				in.ServicesObserved, in.Route = true, split(0, true)
				in.Canary = &canary.Deployment{Replicas: 1, Revision: "new", Failure: "Deployment shop-canary cannot create pods"}
			}),
			want: want{row: "checks failed maxFailedChecks times", phase: webappv1.CanaryAborted, form: canary.Keep, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, failedChecks: 2, resync: 10 * time.Second, message: "aborted after 2 failed checks: Deployment shop-canary cannot create pods"},
		},
		{
			name: "a status older than the abort, the canary already at zero: its Deployment says it was aborted",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.FailedChecks, st.LastFailedCheckTime, st.LastFailedCheck = 1, at(50*time.Second), "Deployment shop-canary cannot create pods"
				})
				in.ServicesObserved, in.Route = true, split(0, true)
				in.Canary = &canary.Deployment{Revision: "new", Aborted: "new", ScaledDown: true}
			}),
			want: want{row: "aborted before: the canary Deployment says so, whatever an older status says", phase: webappv1.CanaryAborted, form: canary.Zero, services: true, failedChecks: 2, message: "was aborted after 2 failed checks: Deployment shop-canary cannot create pods"},
		},
		{
			name: "pods not all available within pauseSeconds plus 2 minutes of the step's start: a failed check",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved = running(webappv1.CanaryProgressing, 0, nil), true
				in.Canary = &canary.Deployment{Replicas: 1, Revision: "new", Total: 1, Updated: 1}
				in.Now = t0.Add(2*time.Minute + 5*time.Second)
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, failedChecks: 1, resync: 10 * time.Second, message: "0 of 1 canary pods available 2m5s after they were asked for"},
		},
		{
			name: "before that deadline, unavailable pods fail nothing, and a call is asked for at the deadline",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved = running(webappv1.CanaryProgressing, 0, nil), true
				in.Canary = &canary.Deployment{Replicas: 1, Revision: "new", Total: 1, Updated: 1}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, resync: time.Minute + 5*time.Second},
		},
		{
			name: "with pod diagnosis, pods that cannot start fail a check",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved = running(webappv1.CanaryProgressing, 0, nil), true
				in.Canary = &canary.Deployment{Replicas: 1, Revision: "new", Total: 1, Updated: 1}
				in.Pods = canary.Pods{Diagnosed: true, Trouble: "1 of 1 current pod cannot start: ImagePullBackOff"}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, failedChecks: 1, resync: 10 * time.Second, message: "its pods cannot start: 1 of 1 current pod cannot start: ImagePullBackOff"},
		},
		{
			name: "with pod diagnosis, a restart since the last failure fails a check",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.Restarts = 1 })
				in.ServicesObserved, in.Canary, in.Route = true, ready(1), split(10, true)
				in.Pods = canary.Pods{Diagnosed: true, Restarts: 2}
			}),
			want: want{row: "weight in place at a timed step: its pause starts", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, failedChecks: 1, pauseStart: at(time.Minute), resync: 5 * time.Second, message: "its containers restarted (2 restarts in all, 1 before)"},
		},
		{
			name: "rollback by edit: the template is the stable one again; the route's canary weight goes to 0 first",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryProgressing, 1, nil), true, ready(2), split(30, true)
				in.Revision = "old"
			}),
			want: want{row: "rolled back: the template is the stable one again", phase: webappv1.CanaryRolledBack, step: 1, form: canary.Keep, replicas: 2, stableTemplate: true, services: true, split: true, weights: [2]int32{100, 0}, message: "Revision new was rolled back"},
		},
		{
			name: "rolled back, no traffic on the canary: it scales to zero, and goes once its pods have",
			in: input(func(in *canary.Input) {
				in.Last, in.Canary, in.Route = running(webappv1.CanaryRolledBack, 1, nil), ready(2), &canary.Route{Accepted: true}
				in.Revision = "old"
			}),
			want: want{phase: webappv1.CanaryRolledBack, step: 1, form: canary.Zero, stableTemplate: true},
		},
		{
			name: "rolled back, the canary's pods are gone: it is deleted",
			in: input(func(in *canary.Input) {
				in.Last, in.Canary, in.Route = running(webappv1.CanaryRolledBack, 1, nil), gone(), &canary.Route{Accepted: true}
				in.Revision = "old"
			}),
			want: want{phase: webappv1.CanaryRolledBack, step: 1, form: canary.Absent, stableTemplate: true},
		},
		{
			name: "a new template mid-canary starts a new canary at step 1, its failed checks forgotten",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 1, func(st *webappv1.CanaryStatus) { st.FailedChecks = 1 })
				in.ServicesObserved, in.Route = true, split(30, true)
				in.Canary = &canary.Deployment{Revision: "new", Replicas: 2, Total: 2, Updated: 2, Available: 2} // of "new", not "newer"
				in.Revision = "newer"
			}),
			want: want{row: "a new template, mid-canary or after an abort", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, selectsCanary: true, resync: 2*time.Minute + 5*time.Second},
		},
		{
			name: "a new template after an abort starts a new canary",
			in: input(func(in *canary.Input) {
				in.Last, in.Canary = running(webappv1.CanaryAborted, 1, nil), &canary.Deployment{Revision: "new"}
				in.Revision = "newer"
			}),
			want: want{row: "a new template, mid-canary or after an abort", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, resync: 2*time.Minute + 5*time.Second},
		},
		{
			name: "abort asked while promoting, before the canary has all the traffic: aborted",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPromoting, 2, nil), true, ready(3), split(60, true)
				in.Abort = "new"
			}),
			want: want{row: "abort asked while promoting, before the stable Deployment takes the template", phase: webappv1.CanaryAborted, step: 2, form: canary.Keep, replicas: 3, services: true, split: true, weights: [2]int32{100, 0}},
		},
		{
			name: "once the canary has all the traffic, neither checks nor abort apply: the stable rolls",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved = running(webappv1.CanaryPromoting, 2, func(st *webappv1.CanaryStatus) { st.AllTrafficTime = at(0) }), true
				in.Canary = &canary.Deployment{Replicas: 4, Revision: "new", Total: 4, Updated: 4, Available: 3, Failure: "Deployment shop-canary exceeded its progress deadline"}
				in.Route = split(100, true) // the stable takes the template: too late to abort
				in.Abort = "new"
			}),
			want: want{phase: webappv1.CanaryPromoting, step: 2, form: canary.Run, replicas: 4, stableTemplate: true, services: true, split: true, weights: [2]int32{40, 60}, selectsCanary: true},
		},
		{
			name: "without a route: no Services, the Service <name> spreads over both, and the weight is in place once the pods are",
			in: input(func(in *canary.Input) {
				in.Routed, in.Last, in.Canary = false, running(webappv1.CanaryProgressing, 0, nil), ready(1)
			}),
			want: want{row: "weight in place at a timed step: its pause starts", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, selectsCanary: true, pauseStart: at(time.Minute), resync: 5 * time.Second},
		},
		{
			name: "with an autoscaler at 8 replicas the canary follows: 30% is 3 pods",
			in: input(func(in *canary.Input) {
				in.Last, in.StableReplicas = running(webappv1.CanaryProgressing, 1, nil), 8
			}),
			want: want{phase: webappv1.CanaryProgressing, step: 1, form: canary.Run, replicas: 3, services: true, resync: time.Minute + 5*time.Second},
		},
		{
			name: "paused for an hour, the autoscaler doubles the stable: the route sends the canary what its 3 pods cover until the new ones are available, which have a deadline of their own",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryPaused, 2, func(st *webappv1.CanaryStatus) { st.Replicas = 3 })
				in.ServicesObserved, in.Canary, in.Route = true, ready(3), split(60, true)
				in.StableReplicas, in.Now = 8, t0.Add(time.Hour)
			}),
			want: want{phase: webappv1.CanaryPaused, step: 2, form: canary.Run, replicas: 5, services: true, split: true, weights: [2]int32{70, 30}, selectsCanary: true, resync: 2 * time.Minute},
		},
		{
			name: "steps edited to fewer mid-canary: the canary is at the last one",
			in: input(func(in *canary.Input) {
				in.Plan.Steps = in.Plan.Steps[:1]
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryProgressing, 2, nil), true, ready(1), split(10, true)
			}),
			want: want{row: "weight in place at a timed step: its pause starts", phase: webappv1.CanaryProgressing, step: 2, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, pauseStart: at(time.Minute), resync: 5 * time.Second},
		},
		{
			name: "analysis: a passing check at a step whose pause is over: the next step",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.PauseStartTime = at(50 * time.Second) })
				in.Measurement = measured(1000, 99.8, 120)
			}),
			want: want{row: "pause over and the latest check passed: the next step", phase: webappv1.CanaryProgressing, step: 1, form: canary.Run, replicas: 2, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 3 * time.Second, analysis: webappv1.CheckPassed, checkTime: at(53 * time.Second), message: "passed: request-success-rate 99.8 (>= 99), request-duration 248.5 (<= 500), on 1000 requests since the step began"},
		},
		{
			name: "analysis: the pause is over but too few requests show the canary inside: the step holds, inconclusive, and says how many more it needs",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.PauseStartTime = at(50 * time.Second) })
				in.Measurement = measured(3, 100, 20)
				in.Now = t0.Add(65 * time.Second)
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, pauseStart: at(50 * time.Second), resync: 0, analysis: webappv1.CheckInconclusive, checkTime: at(63 * time.Second), message: "the pause is over, and the step goes on after a check passes. Checks inconclusive since 12:01:03: request-success-rate 100 on 3 requests, not yet shown >= 99: about 198 requests more to show it at 95 % confidence"},
		},
		{
			name: "analysis: minRequests is a floor for passing: shown inside on 201 requests, but 500 are asked for",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.MinRequests = ptr(int32(500))
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.PauseStartTime = at(50 * time.Second) })
				in.Measurement = measured(201, 100, 20)
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, pauseStart: at(50 * time.Second), resync: 0, analysis: webappv1.CheckInconclusive, checkTime: at(53 * time.Second), message: "about 299 requests more to reach minRequests (500)"},
		},
		{
			name: "analysis: a failing built-in metric aborts at once, whatever maxFailedChecks, naming the metric and its value",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, nil)
				in.Measurement = measured(400, 62.5, 20)
			}),
			want: want{row: "a check shows, at FailConfidence, the canary outside a built-in metric's threshold: aborted at once", phase: webappv1.CanaryAborted, failedChecks: 1, form: canary.Keep, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, analysis: webappv1.CheckFailed, checkTime: at(53 * time.Second), message: "after 1 failed check: analysis: request-success-rate 62.5 on 400 requests, outside >= 99 at 99 % confidence"},
		},
		{
			name: "analysis: a status older than a decisive abort, whose check is judged again: its canary Deployment says it was aborted, after one failed check, not maxFailedChecks",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.MinRequests = ptr(int32(20))
				in.Last = running(webappv1.CanaryProgressing, 0, nil)
				in.Measurement = measured(10, 0, 20)
				in.Canary.Aborted = "new"
			}),
			want: want{row: "aborted before: the canary Deployment says so, whatever an older status says", phase: webappv1.CanaryAborted, failedChecks: 1, form: canary.Keep, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, analysis: webappv1.CheckFailed, checkTime: at(53 * time.Second), message: "after 1 failed check: analysis: request-success-rate 0 on 10 requests, outside >= 99"},
		},
		{
			name: "analysis: two requests, both failed: inconclusive, saying how many more would show it outside, not minRequests",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.MinRequests = ptr(int32(20))
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.PauseStartTime = at(50 * time.Second) })
				in.Measurement = measured(2, 0, 20)
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, pauseStart: at(50 * time.Second), resync: 0, analysis: webappv1.CheckInconclusive, checkTime: at(53 * time.Second), message: "request-success-rate 0 on 2 requests, not yet shown >= 99: about 2 requests more to show it outside at 99 % confidence, if they go as these did"},
		},
		{
			name: "analysis: ten requests that all failed are evidence, fewer than minRequests though they are",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.MinRequests = ptr(int32(20))
				in.Last = running(webappv1.CanaryProgressing, 0, nil)
				in.Measurement = measured(10, 0, 20)
			}),
			want: want{row: "a check shows, at FailConfidence, the canary outside a built-in metric's threshold: aborted at once", phase: webappv1.CanaryAborted, failedChecks: 1, form: canary.Keep, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, analysis: webappv1.CheckFailed, checkTime: at(53 * time.Second), message: "request-success-rate 0 on 10 requests, outside >= 99"},
		},
		{
			name: "analysis: one request, failed, below minRequests: inconclusive, and it says how many more would fail it, not minRequests",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.MinRequests = ptr(int32(20))
				in.Last = running(webappv1.CanaryProgressing, 0, nil)
				in.Measurement = measured(1, 0, 20)
			}),
			want: want{row: "weight in place at a timed step: its pause starts", pauseStart: at(time.Minute), phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 3 * time.Second, analysis: webappv1.CheckInconclusive, checkTime: at(53 * time.Second), message: "request-success-rate 0 on 1 request, not yet shown >= 99: about 3 requests more to show it outside at 99 % confidence"},
		},
		{
			name: "analysis: one bad request of 60 fails nothing: inconclusive",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, nil)
				in.Measurement = measured(60, 100-100.0/60, 20)
			}),
			want: want{row: "weight in place at a timed step: its pause starts", pauseStart: at(time.Minute), phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 3 * time.Second, analysis: webappv1.CheckInconclusive, checkTime: at(53 * time.Second), message: "request-success-rate 98.33 on 60 requests, not yet shown >= 99"},
		},
		{
			name: "analysis: a slow canary fails on latency, from the histogram: aborted at once",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, nil)
				in.Measurement = measured(400, 100, 812.4)
			}),
			want: want{row: "a check shows, at FailConfidence, the canary outside a built-in metric's threshold: aborted at once", phase: webappv1.CanaryAborted, failedChecks: 1, form: canary.Keep, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, analysis: webappv1.CheckFailed, checkTime: at(53 * time.Second), message: "request-duration 995 on 400 requests, outside <= 500 at 99 % confidence"},
		},
		{
			name: "analysis: a template's metric outside its threshold counts towards maxFailedChecks, and aborts nothing alone",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.Metrics = []webappv1.CanaryMetric{{Name: "errors", TemplateRef: &webappv1.MetricTemplateRef{Name: "errors"}, ThresholdRange: webappv1.ThresholdRange{Max: ptr(1.0)}}}
				in.Last = running(webappv1.CanaryProgressing, 0, nil)
				in.Measurement = &canary.Measurement{Window: 10 * time.Second, Canary: canary.Values{Requests: ptr(400.0), Metrics: map[string]float64{"errors": 5}}}
			}),
			want: want{row: "weight in place at a timed step: its pause starts", pauseStart: at(time.Minute), phase: webappv1.CanaryProgressing, failedChecks: 1, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 3 * time.Second, analysis: webappv1.CheckFailed, checkTime: at(53 * time.Second), message: "1 of 2 failed checks: analysis: errors 5, outside <= 1"},
		},
		{
			name: "analysis: a check the status records already is neither run nor counted again, whatever was measured",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.FailedChecks, st.LastFailedCheckTime = 1, at(time.Minute)
					st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(63 * time.Second), WindowSeconds: 63, Result: webappv1.CheckFailed, Message: "errors 5, outside <= 1"}
				})
				in.Measurement = measured(400, 10, 20)
				in.Now = t0.Add(69 * time.Second)
			}),
			want: want{row: "weight in place at a timed step: its pause starts", pauseStart: at(69 * time.Second), phase: webappv1.CanaryProgressing, failedChecks: 1, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 3 * time.Second, analysis: webappv1.CheckFailed, checkTime: at(63 * time.Second)},
		},
		{
			name: "analysis: Prometheus does not answer: inconclusive, no check fails, the status says why, and the step's first check is asked for 3 s after its weight is in place",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, nil)
				in.Measurement = &canary.Measurement{Window: 10 * time.Second, Error: "Prometheus did not answer within 2s"}
			}),
			want: want{row: "weight in place at a timed step: its pause starts", pauseStart: at(time.Minute), phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 3 * time.Second, analysis: webappv1.CheckInconclusive, checkTime: at(53 * time.Second), message: "Checks inconclusive since 12:00:53: nothing was measured: Prometheus did not answer within 2s"},
		},
		{
			name: "analysis: an inconclusive check that finds what the recorded one found leaves the record as it is: no status write per check",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.PauseStartTime = at(40 * time.Second)
					st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(43 * time.Second), WindowSeconds: 43, Result: webappv1.CheckInconclusive, InconclusiveSince: at(43 * time.Second),
						Message: "nothing was measured: Prometheus did not answer within 2s",
						Metrics: []webappv1.MetricStatus{{Name: webappv1.MetricRequestSuccessRate, Threshold: ">= 99", Result: webappv1.CheckInconclusive}, {Name: webappv1.MetricRequestDuration, Threshold: "<= 500", Result: webappv1.CheckInconclusive}}}
				})
				in.Measurement = &canary.Measurement{Window: 10 * time.Second, Error: "Prometheus did not answer within 2s"}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, pauseStart: at(40 * time.Second), resync: 0, analysis: webappv1.CheckInconclusive, checkTime: at(43 * time.Second), message: "Checks inconclusive since 12:00:43: nothing was measured: Prometheus did not answer within 2s"},
		},
		{
			name: "analysis: a canary still without a request is the same finding at every check, though its span grows: no status write per check",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.PauseStartTime = at(40 * time.Second)
					st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(43 * time.Second), WindowSeconds: 43, Result: webappv1.CheckInconclusive, InconclusiveSince: at(43 * time.Second),
						Requests: ptr(int64(0)), Message: "the canary had no request since its step began",
						Metrics: []webappv1.MetricStatus{{Name: webappv1.MetricRequestSuccessRate, Threshold: ">= 99", Result: webappv1.CheckInconclusive}, {Name: webappv1.MetricRequestDuration, Threshold: "<= 500", Result: webappv1.CheckInconclusive}}}
				})
				in.Measurement = &canary.Measurement{Window: 10 * time.Second, Canary: canary.Values{Requests: ptr(0.0)}}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, pauseStart: at(40 * time.Second), resync: 0, analysis: webappv1.CheckInconclusive, checkTime: at(43 * time.Second), message: "Checks inconclusive since 12:00:43: the canary had no request since its step began"},
		},
		{
			name: "analysis: the edge is still measuring the check that is due: nothing is judged, and a call comes in a second",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.PauseStartTime = at(50 * time.Second) })
				in.Measuring = true
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, pauseStart: at(50 * time.Second), resync: time.Second},
		},
		{
			name: "analysis: the edge is still measuring the check that is due, and offers the step's earlier check, which failed: judged in its stead, at its own time, and aborted",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.PauseStartTime = at(40 * time.Second) })
				in.Measurement = measured(400, 80, 20)
				in.Measurement.Span = canary.Span{From: at(0).Time, To: at(43 * time.Second).Time}
			}),
			want: want{row: "a check shows, at FailConfidence, the canary outside a built-in metric's threshold: aborted at once", phase: webappv1.CanaryAborted, failedChecks: 1, form: canary.Keep, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, pauseStart: at(40 * time.Second), analysis: webappv1.CheckFailed, checkTime: at(43 * time.Second), message: "request-success-rate"},
		},
		{
			name: "analysis: the edge is still measuring the check that is due, and offers the step's earlier check, which finds something new: recorded at its own time, and the due one a second later",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.PauseStartTime = at(40 * time.Second) })
				in.Measurement = &canary.Measurement{Window: 10 * time.Second, Canary: canary.Values{Requests: ptr(0.0)}, Span: canary.Span{From: at(0).Time, To: at(43 * time.Second).Time}}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, pauseStart: at(40 * time.Second), resync: time.Second, analysis: webappv1.CheckInconclusive, checkTime: at(43 * time.Second), message: "Checks inconclusive since 12:00:43: the canary had no request since its step began"},
		},
		{
			name: "analysis: the edge is still measuring the check that is due, and offers the step's earlier check, which finds what the record found: no status write, and no call of its own",
			in: analyzed(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.PauseStartTime = at(30 * time.Second)
					st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(33 * time.Second), WindowSeconds: 33, Result: webappv1.CheckInconclusive, InconclusiveSince: at(33 * time.Second),
						Requests: ptr(int64(0)), Message: "the canary had no request since its step began",
						Metrics: []webappv1.MetricStatus{{Name: webappv1.MetricRequestSuccessRate, Threshold: ">= 99", Result: webappv1.CheckInconclusive}, {Name: webappv1.MetricRequestDuration, Threshold: "<= 500", Result: webappv1.CheckInconclusive}}}
				})
				in.Measurement = &canary.Measurement{Window: 10 * time.Second, Canary: canary.Values{Requests: ptr(0.0)}, Span: canary.Span{From: at(0).Time, To: at(43 * time.Second).Time}}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, pauseStart: at(30 * time.Second), resync: 0, analysis: webappv1.CheckInconclusive, checkTime: at(33 * time.Second), message: "Checks inconclusive since 12:00:33: the canary had no request since its step began"},
		},
		{
			name: "analysis: a hook without Prometheus measures nothing: inconclusive",
			in:   analyzed(func(in *canary.Input) { in.Last = running(webappv1.CanaryProgressing, 0, nil) }),
			want: want{row: "weight in place at a timed step: its pause starts", pauseStart: at(time.Minute), phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 3 * time.Second, analysis: webappv1.CheckInconclusive, checkTime: at(53 * time.Second), message: "the hook has no Prometheus to ask"},
		},
		{
			name: "analysis compared with the stable version: both fail alike, an incident: held, never passed",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.Metrics[0].Stable = &webappv1.StableComparison{MaxDifference: 2}
				in.Last = running(webappv1.CanaryProgressing, 0, nil)
				in.Measurement = measured(400, 80, 20)
				in.Measurement.Stable = canary.Values{Requests: ptr(3600.0), Failed: ptr(684.0)}
			}),
			want: want{row: "weight in place at a timed step: its pause starts", pauseStart: at(time.Minute), phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 3 * time.Second, analysis: webappv1.CheckHeld, checkTime: at(53 * time.Second), message: "both versions fail: held, not judged (request-success-rate 80, the stable version's 81, >= 99)"},
		},
		{
			name: "analysis compared with the stable version: only the canary fails: aborted",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.Metrics[0].Stable = &webappv1.StableComparison{MaxDifference: 2}
				in.Last = running(webappv1.CanaryProgressing, 0, nil)
				in.Measurement = measured(400, 80, 20)
				in.Measurement.Stable = canary.Values{Requests: ptr(3600.0)}
			}),
			want: want{row: "a check shows, at FailConfidence, the canary outside a built-in metric's threshold: aborted at once", phase: webappv1.CanaryAborted, failedChecks: 1, form: canary.Keep, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, analysis: webappv1.CheckFailed, checkTime: at(53 * time.Second), message: "while the stable version's 100 is inside it"},
		},
		{
			name: "analysis compared with the stable version: both fail, the canary worse by more than maxDifference: aborted",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.Metrics[0].Stable = &webappv1.StableComparison{MaxDifference: 2}
				in.Last = running(webappv1.CanaryProgressing, 0, nil)
				in.Measurement = measured(400, 80, 20)
				in.Measurement.Stable = canary.Values{Requests: ptr(3600.0), Failed: ptr(360.0)}
			}),
			want: want{row: "a check shows, at FailConfidence, the canary outside a built-in metric's threshold: aborted at once", phase: webappv1.CanaryAborted, failedChecks: 1, form: canary.Keep, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, analysis: webappv1.CheckFailed, checkTime: at(53 * time.Second), message: "worse than the stable version's 90 by more than 2"},
		},
		{
			name: "analysis inconclusive past afterSeconds with action Abort: aborted, and the message says why",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.OnInconclusive = &webappv1.InconclusivePolicy{AfterSeconds: ptr(int32(60)), Action: webappv1.InconclusiveAbort}
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(43 * time.Second), WindowSeconds: 43, Result: webappv1.CheckInconclusive, InconclusiveSince: at(0)}
				})
				in.Measurement = measured(0, 0, 0)
			}),
			want: want{row: "checks inconclusive past onInconclusive.afterSeconds, with action Abort", phase: webappv1.CanaryAborted, form: canary.Keep, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, analysis: webappv1.CheckInconclusive, checkTime: at(53 * time.Second), message: "its checks stayed inconclusive for 1m0s"},
		},
		{
			name: "analysis: a status older than an abort for checks inconclusive past afterSeconds: its canary Deployment says it was aborted, after no failed check",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.OnInconclusive = &webappv1.InconclusivePolicy{AfterSeconds: ptr(int32(60)), Action: webappv1.InconclusiveAbort}
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(43 * time.Second), WindowSeconds: 43, Result: webappv1.CheckInconclusive, InconclusiveSince: at(0)}
				})
				in.Measurement = measured(0, 0, 0)
				in.Canary.Aborted = "new"
			}),
			want: want{row: "aborted before: the canary Deployment says so, whatever an older status says", phase: webappv1.CanaryAborted, form: canary.Keep, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, analysis: webappv1.CheckInconclusive, checkTime: at(53 * time.Second), message: "its checks stayed inconclusive for 1m0s"},
		},
		{
			name: "analysis inconclusive past afterSeconds with action Promote, its checks measuring too few requests: promoting",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.OnInconclusive = &webappv1.InconclusivePolicy{AfterSeconds: ptr(int32(60)), Action: webappv1.InconclusivePromote}
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(43 * time.Second), WindowSeconds: 43, Result: webappv1.CheckInconclusive, InconclusiveSince: at(0), Requests: ptr(int64(2))}
				})
				in.Measurement = measured(3, 100, 20)
			}),
			want: want{row: "checks inconclusive past onInconclusive.afterSeconds, with action Promote", phase: webappv1.CanaryPromoting, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, analysis: webappv1.CheckInconclusive, checkTime: at(53 * time.Second)},
		},
		{
			name: "analysis: silence never promotes: no request since the step began, past afterSeconds with action Promote: the run starts again",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.OnInconclusive = &webappv1.InconclusivePolicy{AfterSeconds: ptr(int32(60)), Action: webappv1.InconclusivePromote}
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(43 * time.Second), WindowSeconds: 43, Result: webappv1.CheckInconclusive, InconclusiveSince: at(0), Requests: ptr(int64(2))}
				})
				in.Measurement = measured(0, 0, 0)
			}),
			want: want{row: "weight in place at a timed step: its pause starts", pauseStart: at(time.Minute), phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 3 * time.Second, analysis: webappv1.CheckInconclusive, checkTime: at(53 * time.Second)},
		},
		{
			name: "analysis: silence never promotes: Prometheus down past afterSeconds with action Promote",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.OnInconclusive = &webappv1.InconclusivePolicy{AfterSeconds: ptr(int32(60)), Action: webappv1.InconclusivePromote}
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(43 * time.Second), WindowSeconds: 43, Result: webappv1.CheckInconclusive, InconclusiveSince: at(0), Requests: ptr(int64(2))}
				})
				in.Measurement = &canary.Measurement{Window: 10 * time.Second, Error: "cannot reach Prometheus (connection refused)"}
			}),
			want: want{row: "weight in place at a timed step: its pause starts", pauseStart: at(time.Minute), phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 3 * time.Second, analysis: webappv1.CheckInconclusive, checkTime: at(53 * time.Second)},
		},
		{
			name: "analysis inconclusive past afterSeconds with action Hold: held, and the status says so and what it waits for",
			in: analyzed(func(in *canary.Input) {
				in.Plan.Analysis.OnInconclusive = &webappv1.InconclusivePolicy{AfterSeconds: ptr(int32(60)), Action: webappv1.InconclusiveHold}
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.Analysis = &webappv1.AnalysisStatus{CheckTime: *at(43 * time.Second), WindowSeconds: 43, Result: webappv1.CheckInconclusive, InconclusiveSince: at(-10 * time.Second)}
				})
				in.Measurement = measured(3, 100, 20)
			}),
			want: want{row: "weight in place at a timed step: its pause starts", pauseStart: at(time.Minute), phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 3 * time.Second, analysis: webappv1.CheckHeld, checkTime: at(53 * time.Second), message: "held since 12:00:50 (onInconclusive: Hold): request-success-rate 100 on 3 requests, not yet shown >= 99: about 198 requests more"},
		},
		{
			name: "promote-step at a timed step whose pause is not over: the next step, at once",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.PauseStartTime = at(58 * time.Second) })
				in.ServicesObserved, in.Canary, in.Route = true, ready(1), split(10, true)
				in.PromoteStep = webappv1.PromoteStepValue("new", 0, 0)
			}),
			want: want{row: "promote-step asked: the step ends, whatever its pause and checks", phase: webappv1.CanaryProgressing, step: 1, form: canary.Run, replicas: 2, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, resync: 2*time.Minute + 5*time.Second, message: "Step 2 of 3"},
		},
		{
			name: "promote-step left behind for a step already ended does nothing",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPaused, 2, nil), true, ready(3), split(60, true)
				in.PromoteStep = webappv1.PromoteStepValue("new", 0, 1)
			}),
			want: want{phase: webappv1.CanaryPaused, step: 2, form: canary.Run, replicas: 3, services: true, split: true, weights: [2]int32{40, 60}, selectsCanary: true},
		},
		{
			name: "promote-step at the last step, paused until promoted: promoting",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPaused, 2, nil), true, ready(3), split(60, true)
				in.PromoteStep = webappv1.PromoteStepValue("new", 0, 2)
			}),
			want: want{row: "promote-step asked at the last step: promoting", phase: webappv1.CanaryPromoting, step: 2, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{40, 60}, selectsCanary: true, message: "the canary scales to 4 pods"},
		},
		{
			name: "retry asked for the aborted revision: its canary starts again at step 1, its failed checks at 0",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryAborted, 1, func(st *webappv1.CanaryStatus) { st.FailedChecks = 2 })
				in.Canary, in.Route = &canary.Deployment{Aborted: "new", ScaledDown: true}, &canary.Route{Accepted: true}
				in.Retry = webappv1.RetryValue("new", 0, 0)
			}),
			want: want{row: "retry asked for the aborted revision: its canary starts again from the first step", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, retries: 1, attempt: 1, resync: 2*time.Minute + 5*time.Second, message: "Step 1 of 3",
				ignored: []string{"webapp.example.com/retry=new: names attempt 0 of revision new, which is over: the canary is attempt 1 (new@1)"}},
		},
		{
			name: "a retry of the hook's earlier versions left behind does nothing once the retried canary aborted again",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryAborted, 0, func(st *webappv1.CanaryStatus) { st.FailedChecks, st.Retries = 2, 1 })
				in.Canary, in.Route = &canary.Deployment{Aborted: "new", Retries: 1, ScaledDown: true}, &canary.Route{Accepted: true}
				in.Retry = webappv1.RetryValue("new", 0, 0)
			}),
			want: want{phase: webappv1.CanaryAborted, form: canary.Zero, failedChecks: 2, retries: 1},
		},
		{
			name: "a second retry of the same revision: /2",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryAborted, 0, func(st *webappv1.CanaryStatus) { st.FailedChecks, st.Retries = 2, 1 })
				in.Canary, in.Route = &canary.Deployment{Aborted: "new", Retries: 1, ScaledDown: true}, &canary.Route{Accepted: true}
				in.Retry = webappv1.RetryValue("new", 0, 1)
			}),
			want: want{row: "retry asked for the aborted revision: its canary starts again from the first step", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, retries: 2, attempt: 1, resync: 2*time.Minute + 5*time.Second,
				ignored: []string{"webapp.example.com/retry=new/2: names attempt 0 of revision new, which is over: the canary is attempt 1 (new@1)"}},
		},
		{
			name: "retry asked for another revision does nothing",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryAborted, 1, func(st *webappv1.CanaryStatus) { st.FailedChecks = 2 })
				in.Canary, in.Route = &canary.Deployment{Aborted: "new", ScaledDown: true}, &canary.Route{Accepted: true}
				in.Retry = "older"
			}),
			want: want{phase: webappv1.CanaryAborted, step: 1, form: canary.Zero, failedChecks: 2, ignored: []string{"webapp.example.com/retry=older: names revision older, not the canary's, new"}},
		},
		{
			name: "a status older than the retry: the canary Deployment says it was retried",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryAborted, 1, func(st *webappv1.CanaryStatus) { st.FailedChecks = 2 })
				in.Canary, in.Route = &canary.Deployment{Revision: "new", Retries: 1, Replicas: 1, Total: 1, Updated: 1}, &canary.Route{Accepted: true}
				in.Retry = webappv1.RetryValue("new", 0, 0)
			}),
			want: want{row: "started again before: the canary Deployment runs a later attempt of the revision, whatever an older status says", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, retries: 1, resync: 2*time.Minute + 5*time.Second},
		},
		{
			name: "retried, the canary Deployment not yet updated: the abort it records is of the attempt before, and is not taken for one",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.Retries = 1 })
				in.Canary = &canary.Deployment{Aborted: "new", ScaledDown: true}
				in.Retry = webappv1.RetryValue("new", 0, 0)
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, retries: 1, resync: time.Minute + 5*time.Second},
		},
		{
			name: "a leftover promote of an earlier attempt of the same template: the new attempt is numbered past it",
			in: input(func(in *canary.Input) {
				in.Last, in.Promote = running(webappv1.CanaryRolledBack, 1, nil), "new"
			}),
			want: want{row: "a new template, before any canary or after one ended", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, resync: 2*time.Minute + 5*time.Second, attempt: 1,
				ignored: []string{"webapp.example.com/promote=new: names attempt 0 of revision new, which is over: the canary is attempt 1 (new@1)"}},
		},
		{
			name: "a leftover promote of an earlier attempt does not promote the new one, which the message names",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 2, func(st *webappv1.CanaryStatus) { st.Attempt = 1 })
				in.ServicesObserved, in.Canary, in.Route = true, ready(3), split(60, true)
				in.Canary.Attempt, in.Promote = 1, "new"
			}),
			want: want{row: "weight in place at a manual step: paused until promoted", phase: webappv1.CanaryPaused, step: 2, form: canary.Run, replicas: 3, services: true, split: true, weights: [2]int32{40, 60}, selectsCanary: true, attempt: 1,
				message: "(annotate the WebApp with webapp.example.com/promote=new@1)",
				ignored: []string{"webapp.example.com/promote=new: names attempt 0 of revision new, which is over: the canary is attempt 1 (new@1)"}},
		},
		{
			name: "promote naming the attempt promotes it",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryPaused, 2, func(st *webappv1.CanaryStatus) { st.Attempt = 1 })
				in.ServicesObserved, in.Canary, in.Route = true, ready(3), split(60, true)
				in.Canary.Attempt, in.Promote = 1, "new@1"
			}),
			want: want{row: "promote asked", phase: webappv1.CanaryPromoting, step: 2, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{40, 60}, selectsCanary: true, attempt: 1},
		},
		{
			name: "retried: what the aborted attempt left, promote, promote-step and abort, does not act on the next",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) {
					st.Attempt, st.Retries, st.PauseStartTime = 1, 1, at(50*time.Second)
				})
				in.ServicesObserved, in.Canary, in.Route = true, ready(1), split(10, true)
				in.Canary.Attempt, in.Canary.Retries = 1, 1
				in.Promote, in.PromoteStep, in.Abort, in.Retry = "new", "new/0", "new", "new"
			}),
			want: want{row: "pause over and the latest check passed: the next step", phase: webappv1.CanaryProgressing, step: 1, form: canary.Run, replicas: 2, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, attempt: 1, retries: 1, resync: 2*time.Minute + 5*time.Second,
				ignored: []string{
					"webapp.example.com/promote=new: names attempt 0 of revision new, which is over: the canary is attempt 1 (new@1)",
					"webapp.example.com/promote-step=new/0: names attempt 0 of revision new, which is over: the canary is attempt 1 (new@1)",
					"webapp.example.com/abort=new: names attempt 0 of revision new, which is over: the canary is attempt 1 (new@1)",
					"webapp.example.com/retry=new: names attempt 0 of revision new, which is over: the canary is attempt 1 (new@1)",
				}},
		},
		{
			name: "retried, the canary Deployment not yet updated: the aborted attempt's abort and promotion are not taken for this one's",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.Attempt, st.Retries = 1, 1 })
				in.Canary = &canary.Deployment{Revision: "new", Aborted: "new", Promoting: "new", ScaledDown: true}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, attempt: 1, retries: 1, resync: time.Minute + 5*time.Second},
		},
		{
			name: "a retry of attempt 1 starts attempt 2",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryAborted, 1, func(st *webappv1.CanaryStatus) { st.FailedChecks, st.Attempt, st.Retries = 2, 1, 1 })
				in.Canary, in.Route = &canary.Deployment{Revision: "new", Aborted: "new", Attempt: 1, Retries: 1, ScaledDown: true}, &canary.Route{Accepted: true}
				in.Retry = webappv1.RetryValue("new", 1, 1)
			}),
			want: want{row: "retry asked for the aborted revision: its canary starts again from the first step", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, attempt: 2, retries: 2, resync: 2*time.Minute + 5*time.Second,
				ignored: []string{"webapp.example.com/retry=new@1: names attempt 1 of revision new, which is over: the canary is attempt 2 (new@2)"}},
		},
		{
			name: "a retry left behind does nothing once the retried attempt aborted again, and the status says why",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryAborted, 0, func(st *webappv1.CanaryStatus) { st.FailedChecks, st.Attempt, st.Retries = 2, 1, 1 })
				in.Canary, in.Route = &canary.Deployment{Revision: "new", Aborted: "new", Attempt: 1, Retries: 1, ScaledDown: true}, &canary.Route{Accepted: true}
				in.Retry = "new"
			}),
			want: want{row: "", phase: webappv1.CanaryAborted, form: canary.Zero, failedChecks: 2, attempt: 1, retries: 1,
				ignored: []string{"webapp.example.com/retry=new: names attempt 0 of revision new, which is over: the canary is attempt 1 (new@1)"}},
		},
		{
			name: "a status older than a retry, while promoting: the canary Deployment runs the later attempt, and the earlier one's abort does not act",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Route = running(webappv1.CanaryPromoting, 2, nil), true, split(60, true)
				in.Canary = &canary.Deployment{Revision: "new", Attempt: 1, Retries: 1, Replicas: 1, Total: 1, Updated: 1}
				in.Abort = "new"
			}),
			want: want{row: "started again before: the canary Deployment runs a later attempt of the revision, whatever an older status says", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, selectsCanary: true, attempt: 1, retries: 1, resync: 2*time.Minute + 5*time.Second,
				ignored: []string{"webapp.example.com/abort=new: names attempt 0 of revision new, which is over: the canary is attempt 1 (new@1)"}},
		},
		{
			name: "a status older than the abort of a later attempt: aborted, at the Deployment's attempt, by the annotation that names it",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, nil)
				in.Canary, in.Route = &canary.Deployment{Revision: "new", Aborted: "new", Attempt: 1, Retries: 1, ScaledDown: true}, &canary.Route{Accepted: true}
				in.Abort = "new@1"
			}),
			want: want{row: "aborted before: the canary Deployment says so, whatever an older status says", phase: webappv1.CanaryAborted, form: canary.Zero, attempt: 1, retries: 1, message: "was aborted by the webapp.example.com/abort annotation"},
		},
		{
			name: "the same template again, its aborted canary Deployment not yet gone: the new attempt is numbered past the abort it records",
			in: input(func(in *canary.Input) {
				in.Last, in.Canary = running(webappv1.CanaryRolledBack, 1, nil), &canary.Deployment{Revision: "new", Aborted: "new", ScaledDown: true}
			}),
			want: want{row: "a new template, before any canary or after one ended", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, attempt: 1, resync: 2*time.Minute + 5*time.Second},
		},
		{
			name: "a promote-step without its step is ignored, and the status says why",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryPaused, 2, nil), true, ready(3), split(60, true)
				in.PromoteStep = "new"
			}),
			want: want{phase: webappv1.CanaryPaused, step: 2, form: canary.Run, replicas: 3, services: true, split: true, weights: [2]int32{40, 60}, selectsCanary: true,
				ignored: []string{"webapp.example.com/promote-step=new: must be <revision>[@<attempt>]/<step>"}},
		},
		{
			name: "a promote-step for a step not reached yet is ignored, and the status says why",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryProgressing, 0, nil), true, ready(1), split(0, true)
				in.PromoteStep = webappv1.PromoteStepValue("new", 0, 2)
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, selectsCanary: true, message: "waiting for the HTTPRoute to send 10%",
				ignored: []string{"webapp.example.com/promote-step=new/2: names step 2 (from 0), which the canary has not reached: it is at step 0"}},
		},
		{
			name: "an ignored annotation removed: the status no longer names it",
			in: input(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryPaused, 2, func(st *webappv1.CanaryStatus) {
					st.IgnoredAnnotations = []string{"webapp.example.com/promote-step=new: must be <revision>[@<attempt>]/<step>"}
				})
				in.ServicesObserved, in.Canary, in.Route = true, ready(3), split(60, true)
			}),
			want: want{phase: webappv1.CanaryPaused, step: 2, form: canary.Run, replicas: 3, services: true, split: true, weights: [2]int32{40, 60}, selectsCanary: true},
		},
		{
			name: "the canary removed from the spec mid-canary: its weight goes to 0 first, and the status goes",
			in: input(func(in *canary.Input) {
				in.Plan, in.Last, in.ServicesObserved, in.Canary, in.Route = nil, running(webappv1.CanaryProgressing, 1, nil), true, ready(2), split(30, true)
			}),
			want: want{row: "the spec no longer asks for a canary: its status goes", form: canary.Keep, stableTemplate: true, services: true, split: true, weights: [2]int32{100, 0}},
		},
	}
	return append(append(append(cases, headerRouteCases()...), rollbackWindowCases()...), blueGreenCases()...)
}

// rollbackWindowCases are the cases of a canary with a rollback window (issue 45): the status
// lists the revisions the stable Deployment ran, and a template set back to one of them within
// the window goes back without a canary.
func rollbackWindowCases() []transitionCase {
	window := func(n int32, edit func(*canary.Input)) canary.Input {
		return input(func(in *canary.Input) {
			in.Plan.RollbackWindow = &webappv1.RollbackWindow{Revisions: n}
			in.Stable.RolledOut = true
			if edit != nil {
				edit(in)
			}
		})
	}
	const undo = "a revision the stable Deployment ran within the rollback window: it goes back to it, without a canary"
	ended := func(phase webappv1.CanaryPhase, revision string, list ...string) *webappv1.CanaryStatus {
		return &webappv1.CanaryStatus{Revision: revision, Phase: phase, Step: 2, StableRevisions: list}
	}
	return []transitionCase{
		{
			name: "rollback window: a canary starts, and the status lists the revision the stable Deployment runs",
			in:   window(2, nil),
			want: want{row: "a new template, before any canary or after one ended", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, resync: 2*time.Minute + 5*time.Second,
				stableRevisions: []string{"old"}},
		},
		{
			name: "rollback window: promoted, the stable Deployment runs the canary's revision, rolled out: it is listed first",
			in: window(2, func(in *canary.Input) {
				in.Last = running(webappv1.CanaryPromoting, 2, func(st *webappv1.CanaryStatus) { st.StableRevisions = []string{"old"} })
				in.Stable = &canary.Stable{Revision: "new", Complete: true, RolledOut: true}
				in.Canary, in.Route = gone(), &canary.Route{Accepted: true}
			}),
			want: want{row: "promoted: the stable Deployment runs the template, the canary's pods are gone", phase: webappv1.CanaryPromoted, step: 2, stableTemplate: true,
				stableRevisions: []string{"new", "old"}},
		},
		{
			name: "rollback window: the template set back to the previous stable revision: the stable Deployment goes back to it, without a canary, and the status says why",
			in: window(2, func(in *canary.Input) {
				in.Revision, in.Last = "old", ended(webappv1.CanaryPromoted, "new", "new", "old")
				in.Stable = &canary.Stable{Revision: "new", RolledOut: true}
				in.Route = &canary.Route{Accepted: true}
			}),
			want: want{row: undo, phase: webappv1.CanaryRolledBack, stableTemplate: true, stableRevisions: []string{"new", "old"},
				message: "Rolled back to revision old without a canary: the stable Deployment ran it within spec.rollout.canary.rollbackWindow (its last 2 revisions before the one it runs)"},
		},
		{
			name: "rollback window: an older observation of the stable Deployment, before it took the template back: still no canary",
			in: window(2, func(in *canary.Input) {
				in.Revision, in.Last = "old", ended(webappv1.CanaryRolledBack, "old", "new", "old")
				in.Stable = &canary.Stable{Revision: "new", RolledOut: true}
			}),
			want: want{row: undo, phase: webappv1.CanaryRolledBack, step: 2, stableTemplate: true, stableRevisions: []string{"new", "old"}, message: "Rolled back to revision old without a canary"},
		},
		{
			name: "rollback window: the stable Deployment took the template set back, but the status is an older call's, still Promoted to the one before: it is RolledBack, without a canary",
			in: window(2, func(in *canary.Input) {
				in.Revision, in.Last = "old", ended(webappv1.CanaryPromoted, "new", "new", "old")
				in.Stable = &canary.Stable{Revision: "old"}
				in.Route = &canary.Route{Accepted: true}
			}),
			want: want{row: undo, phase: webappv1.CanaryRolledBack, stableTemplate: true, stableRevisions: []string{"new", "old"},
				message: "Rolled back to revision old without a canary: the stable Deployment ran it within spec.rollout.canary.rollbackWindow (its last 2 revisions before the one it runs)"},
		},
		{
			name: "rollback window: the stable Deployment runs the template, the status Promoted to another revision it does not list first: nothing moves",
			in: window(2, func(in *canary.Input) {
				in.Revision, in.Last = "old", ended(webappv1.CanaryPromoted, "new", "old")
				in.Stable = &canary.Stable{Revision: "old", Complete: true, RolledOut: true}
			}),
			want: want{phase: webappv1.CanaryPromoted, step: 2, stableTemplate: true, stableRevisions: []string{"old"}},
		},
		{
			name: "rollback window: the stable Deployment rolled back, rolled out: it is listed first, and nothing moves",
			in: window(2, func(in *canary.Input) {
				in.Revision, in.Last = "old", ended(webappv1.CanaryRolledBack, "old", "new", "old")
				in.Stable = &canary.Stable{Revision: "old", Complete: true, RolledOut: true}
			}),
			want: want{phase: webappv1.CanaryRolledBack, step: 2, stableTemplate: true, stableRevisions: []string{"old", "new"}, message: "Rolled back to revision old without a canary"},
		},
		{
			name: "rollback window: the stable Deployment rolling back: not listed before its rollout is complete",
			in: window(2, func(in *canary.Input) {
				in.Revision, in.Last = "old", ended(webappv1.CanaryRolledBack, "old", "new", "old")
				in.Stable = &canary.Stable{Revision: "old"}
			}),
			want: want{phase: webappv1.CanaryRolledBack, step: 2, stableTemplate: true, stableRevisions: []string{"new", "old"}},
		},
		{
			name: "rollback window of 1: a revision 2 back is outside it: a canary, as without the window, and the list keeps 2",
			in: window(1, func(in *canary.Input) {
				in.Revision, in.Last = "a", ended(webappv1.CanaryPromoted, "c", "c", "b", "a")
				in.Stable = &canary.Stable{Revision: "c", RolledOut: true}
			}),
			want: want{row: "a new template, before any canary or after one ended", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, resync: 2*time.Minute + 5*time.Second,
				stableRevisions: []string{"c", "b"}},
		},
		{
			name: "rollback window, mid-canary: the template set to a revision stable within it: the canary's weight winds down, and the stable Deployment goes back at once",
			in: window(2, func(in *canary.Input) {
				in.Revision = "older"
				in.Last = running(webappv1.CanaryProgressing, 1, func(st *webappv1.CanaryStatus) { st.StableRevisions = []string{"old", "older"} })
				in.ServicesObserved, in.Canary, in.Route = true, ready(2), split(30, true)
			}),
			want: want{row: undo, phase: webappv1.CanaryRolledBack, form: canary.Keep, replicas: 2, stableTemplate: true, services: true, split: true, weights: [2]int32{100, 0},
				stableRevisions: []string{"old", "older"}, message: "Rolled back to revision older without a canary"},
		},
		{
			name: "rollback window, aborted: the template set to a revision stable within it: no retry, no canary",
			in: window(2, func(in *canary.Input) {
				in.Revision = "older"
				in.Last = running(webappv1.CanaryAborted, 0, func(st *webappv1.CanaryStatus) { st.StableRevisions = []string{"old", "older"} })
				in.Canary, in.Route = &canary.Deployment{Aborted: "new", ScaledDown: true}, &canary.Route{Accepted: true}
			}),
			want: want{row: undo, phase: webappv1.CanaryRolledBack, stableTemplate: true, stableRevisions: []string{"old", "older"}},
		},
		{
			name: "the rollback window removed from the spec: the status lists no revision",
			in: input(func(in *canary.Input) {
				in.Revision, in.Last = "new", ended(webappv1.CanaryPromoted, "new", "new", "old")
				in.Stable = &canary.Stable{Revision: "new", Complete: true, RolledOut: true}
			}),
			want: want{phase: webappv1.CanaryPromoted, step: 2, stableTemplate: true},
		},
	}
}

// headerPlan is a plan with a header route (X-Canary: always) whose first step, of weight 0,
// holds 5 s, then 50% until promoted.
func headerPlan() *webappv1.Canary {
	return &webappv1.Canary{
		Steps:           []webappv1.CanaryStep{{Weight: 0, PauseSeconds: ptr(int32(5))}, {Weight: 50}},
		MaxFailedChecks: ptr(int32(1)),
		HeaderRoute: &webappv1.CanaryHeaderRoute{Matches: []webappv1.HeaderRouteMatch{
			{Headers: []webappv1.HeaderMatch{{Name: "X-Canary", Value: "always", Type: webappv1.HeaderMatchExact}}},
		}},
	}
}

// withHeader is an observed route r that also sends the header route's requests to the canary.
func withHeader(r *canary.Route) *canary.Route { r.Header = true; return r }

// headerRouteCases are the cases of a canary with a header route (issue 45): the header rule is
// in the route only once the canary has a pod available, a step of weight 0 is in place only
// with it, and it goes with the traffic.
func headerRouteCases() []transitionCase {
	header := func(edit func(*canary.Input)) canary.Input {
		return input(func(in *canary.Input) {
			in.Plan, in.ServicesObserved = headerPlan(), true
			if edit != nil {
				edit(in)
			}
		})
	}
	return []transitionCase{
		{
			name: "header route, a step of weight 0, the canary's pod not available yet: the route splits 100/0 without the header rule, and the Service <name> does not select the canary",
			in: header(func(in *canary.Input) {
				in.Last, in.Route = running(webappv1.CanaryProgressing, 0, nil), split(0, true)
				in.Canary = &canary.Deployment{Replicas: 1, Revision: "new", Total: 1, Updated: 1}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, resync: time.Minute + 5*time.Second,
				message: "waiting for 1 canary pod to be available (0 are) before 0% of the traffic and the requests its header route matches go to it"},
		},
		{
			name: "header route, a step of weight 0, the canary's pod available: the route gets the header rule, and still no weight",
			in: header(func(in *canary.Input) {
				in.Last, in.Canary, in.Route = running(webappv1.CanaryProgressing, 0, nil), ready(1), split(0, true)
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, headerRoute: true,
				message: "waiting for the HTTPRoute to send 0% of the traffic and the requests its header route matches to the canary"},
		},
		{
			name: "header route, a step of weight 0: the route seen with the header rule, accepted: the status says so, and the step's pause starts",
			in: header(func(in *canary.Input) {
				in.Last, in.Canary, in.Route = running(webappv1.CanaryProgressing, 0, nil), ready(1), withHeader(split(0, true))
			}),
			want: want{row: "weight in place at a timed step: its pause starts", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, headerRoute: true, headerRouted: true,
				pauseStart: at(time.Minute), resync: 5 * time.Second, message: "Step 1 of 2: 0% of the traffic and the requests its header route matches on the canary, held for 5s"},
		},
		{
			name: "header route, the weight of 0 in place but the header rule not accepted yet: the pause waits",
			in: header(func(in *canary.Input) {
				in.Last, in.Canary, in.Route = running(webappv1.CanaryProgressing, 0, nil), ready(1), withHeader(split(0, false))
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, headerRoute: true, headerRouted: true},
		},
		{
			name: "header route, the step of weight 0 over: the next step's 50% waits for its 2 pods, the header rule stays",
			in: header(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.PauseStartTime, st.HeaderRouted = at(50*time.Second), true })
				in.Canary, in.Route = ready(1), withHeader(split(0, true))
			}),
			want: want{row: "pause over and the latest check passed: the next step", phase: webappv1.CanaryProgressing, step: 1, form: canary.Run, replicas: 2, services: true, split: true, weights: [2]int32{100, 0},
				headerRoute: true, headerRouted: true, selectsCanary: true, resync: 2 * time.Minute},
		},
		{
			name: "header route at 50%, in place with it: paused until promoted",
			in: header(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 1, func(st *webappv1.CanaryStatus) { st.HeaderRouted = true })
				in.Canary, in.Route = ready(2), withHeader(split(50, true))
			}),
			want: want{row: "weight in place at a manual step: paused until promoted", phase: webappv1.CanaryPaused, step: 1, form: canary.Run, replicas: 2, services: true, split: true, weights: [2]int32{50, 50},
				headerRoute: true, headerRouted: true, selectsCanary: true, message: "Step 2 of 2: 50% of the traffic and the requests its header route matches on the canary, paused until it is promoted"},
		},
		{
			name: "header route, aborted at the step of weight 0: the header rule goes with the weight, the canary keeps its pods and no delay runs until the route without it is seen",
			in: header(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.PauseStartTime, st.HeaderRouted = at(58*time.Second), true })
				in.Canary, in.Route, in.Abort = ready(1), withHeader(split(0, true)), "new"
			}),
			want: want{row: "abort asked", phase: webappv1.CanaryAborted, form: canary.Keep, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, headerRouted: true, pauseStart: at(58 * time.Second),
				message: "aborted by the webapp.example.com/abort annotation"},
		},
		{
			name: "header route, aborted: the route seen without the header rule, accepted: the status says so, and the scale-down delay starts",
			in: header(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryAborted, 0, func(st *webappv1.CanaryStatus) { st.HeaderRouted, st.Replicas = true, 1 })
				in.Canary, in.Route = ready(1), split(0, true)
			}),
			want: want{phase: webappv1.CanaryAborted, form: canary.Keep, replicas: 1, services: true, split: true, weights: [2]int32{100, 0}, resync: webappv1.DefaultScaleDownDelaySeconds * time.Second},
		},
		{
			name: "header route, promoting: the header rule stays while the canary takes all the traffic",
			in: header(func(in *canary.Input) {
				in.Last = running(webappv1.CanaryPromoting, 1, func(st *webappv1.CanaryStatus) { st.HeaderRouted = true })
				in.Canary, in.Route = ready(4), withHeader(split(100, true))
			}),
			want: want{phase: webappv1.CanaryPromoting, step: 1, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{0, 100}, headerRoute: true, headerRouted: true,
				selectsCanary: true, resync: webappv1.DefaultScaleDownDelaySeconds * time.Second, message: "the canary has all the traffic"},
		},
		{
			name: "the header route removed from the spec mid-canary: the route drops the rule, and the step's weight is in place only once it has",
			in: input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = running(webappv1.CanaryProgressing, 0, nil), true, ready(1), withHeader(split(10, true))
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, services: true, split: true, weights: [2]int32{90, 10}, headerRouted: true, selectsCanary: true,
				message: "waiting for the HTTPRoute to send 10% of the traffic to the canary"},
		},
		{
			name: "header route, the WebApp scaled to zero: the header rule and the weight go in with no pod, as a weight alone does, and the pause starts",
			in: header(func(in *canary.Input) {
				in.StableReplicas, in.Last, in.Canary, in.Route = 0, running(webappv1.CanaryProgressing, 0, nil), &canary.Deployment{Revision: "new"}, withHeader(split(0, true))
			}),
			want: want{row: "weight in place at a timed step: its pause starts", phase: webappv1.CanaryProgressing, form: canary.Run, services: true, split: true, weights: [2]int32{100, 0}, headerRoute: true, headerRouted: true,
				pauseStart: at(time.Minute), resync: 5 * time.Second},
		},
		{
			name: "header route without the gateway-api component: a step of weight 0 gives the canary no request, by pod count neither",
			in: header(func(in *canary.Input) {
				in.Routed, in.ServicesObserved, in.Last, in.Canary = false, false, running(webappv1.CanaryProgressing, 0, nil), ready(1)
			}),
			want: want{row: "weight in place at a timed step: its pause starts", phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 1, pauseStart: at(time.Minute), resync: 5 * time.Second,
				message: "Step 1 of 2: 0% of the traffic on the canary, held for 5s"},
		},
	}
}

func TestTransitions(t *testing.T) {
	for _, tt := range transitionCases() {
		t.Run(tt.name, func(t *testing.T) {
			before := asJSON(t, tt.in.Last) // a deep copy: a change through any of its pointers shows
			got := canary.Next(tt.in)
			if after := asJSON(t, tt.in.Last); after != before {
				t.Errorf("Next modified its input: %s, was %s", after, before)
			}
			w := tt.want
			if row := moved(got); row != w.row {
				t.Errorf("the row that moved = %q; want %q", row, w.row)
			}
			switch {
			case w.phase == "" && got.Status != nil:
				t.Fatalf("status = %+v; want none", *got.Status)
			case w.phase != "" && got.Status == nil:
				t.Fatalf("no status; want phase %s", w.phase)
			case got.Status != nil:
				st := got.Status
				if st.Phase != w.phase || st.Step != w.step || st.FailedChecks != w.failedChecks {
					t.Errorf("phase, step, failedChecks = %s, %d, %d; want %s, %d, %d", st.Phase, st.Step, st.FailedChecks, w.phase, w.step, w.failedChecks)
				}
				if !reflect.DeepEqual(st.PauseStartTime, w.pauseStart) {
					t.Errorf("pauseStartTime = %v; want %v", st.PauseStartTime, w.pauseStart)
				}
				if !strings.Contains(st.Message, w.message) {
					t.Errorf("message = %q; want it to contain %q", st.Message, w.message)
				}
				if st.Retries != w.retries || st.Attempt != w.attempt {
					t.Errorf("retries, attempt = %d, %d; want %d, %d", st.Retries, st.Attempt, w.retries, w.attempt)
				}
				if !slices.Equal(st.IgnoredAnnotations, w.ignored) {
					t.Errorf("ignoredAnnotations = %q; want %q", st.IgnoredAnnotations, w.ignored)
				}
				if st.Replicas != w.replicas {
					t.Errorf("status replicas = %d; want %d", st.Replicas, w.replicas)
				}
				if !slices.Equal(st.StableRevisions, w.stableRevisions) {
					t.Errorf("stableRevisions = %q; want %q", st.StableRevisions, w.stableRevisions)
				}
				if st.HeaderRouted != w.headerRouted {
					t.Errorf("headerRouted = %t; want %t", st.HeaderRouted, w.headerRouted)
				}
				switch r := st.Analysis; {
				case w.analysis == "" && r != nil:
					t.Errorf("analysis = %+v; want none", *r)
				case w.analysis != "" && r == nil:
					t.Errorf("no analysis; want %s", w.analysis)
				case r != nil && (r.Result != w.analysis || !r.CheckTime.Equal(w.checkTime)):
					t.Errorf("analysis = %s at %s; want %s at %s", r.Result, r.CheckTime, w.analysis, w.checkTime)
				}
			}
			if got.Form != w.form || (w.form == canary.Run && got.Replicas != w.replicas) {
				t.Errorf("canary = %v with %d replicas; want %v with %d", got.Form, got.Replicas, w.form, w.replicas)
			}
			gotWeights := [2]int32{got.StableWeight, got.CanaryWeight}
			if got.Split != w.split || gotWeights != w.weights {
				t.Errorf("split, weights = %t, %v; want %t, %v", got.Split, gotWeights, w.split, w.weights)
			}
			if got.HeaderRoute != w.headerRoute {
				t.Errorf("headerRoute = %t; want %t", got.HeaderRoute, w.headerRoute)
			}
			if got.StableTemplate != w.stableTemplate || got.Services != w.services || got.SelectsCanary != w.selectsCanary {
				t.Errorf("stableTemplate, services, selectsCanary = %t, %t, %t; want %t, %t, %t", got.StableTemplate, got.Services, got.SelectsCanary, w.stableTemplate, w.services, w.selectsCanary)
			}
			// An answer is timed while a timer runs, and while a canary with an analysis is at a step.
			atStep := w.phase == webappv1.CanaryProgressing || w.phase == webappv1.CanaryPaused
			timed := w.resync > 0 || w.analysis != "" && atStep
			if got.ResyncAfter != w.resync || got.Timed != timed {
				t.Errorf("resyncAfter, timed = %s, %t; want %s, %t", got.ResyncAfter, got.Timed, w.resync, timed)
			}
		})
	}
}

// moved is the Move row that fired in out, "" when none did.
func moved(out canary.Output) string {
	for _, name := range out.Fired {
		for _, r := range canary.Transitions {
			if r.Name == name && r.Kind == canary.Move {
				return name
			}
		}
	}
	return ""
}

// asJSON renders v as JSON, failing the test when it cannot.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEveryRowHasACase fails when a row of Transitions, or a stage of Stages, is reached by no
// case of TestTransitions: every row's behaviour is pinned by at least one case.
func TestEveryRowHasACase(t *testing.T) {
	fired, stages := map[string][]string{}, map[canary.Stage]bool{}
	for _, tt := range transitionCases() {
		out := canary.Next(tt.in)
		for _, name := range out.Fired {
			fired[name] = append(fired[name], tt.name)
		}
		stages[out.Stage] = true
	}
	for i, r := range canary.Transitions {
		if len(fired[r.Name]) == 0 {
			t.Errorf("row %q fires in no case of TestTransitions", r.Name)
		} else if r.Kind == canary.Move {
			t.Logf("row %d, %q: %s, e.g. %q", i+1, r.Name, english.Count(len(fired[r.Name]), "case"), fired[r.Name][0])
		} else {
			t.Logf("row %d, %q: %s", i+1, r.Name, english.Count(len(fired[r.Name]), "case"))
		}
	}
	for _, r := range canary.Stages {
		if !stages[r.Stage] {
			t.Errorf("stage %s is reached in no case of TestTransitions", r.Stage)
		}
	}
}

// TestRetryMarksTheCanaryDeployment: a retried canary's Deployment records its retries, running
// and once aborted again, so that an older status neither retries it again nor takes the
// earlier attempt's abort for this one's; a canary never retried carries no such annotation.
func TestRetryMarksTheCanaryDeployment(t *testing.T) {
	tests := []struct {
		name string
		in   canary.Input
		want map[string]string
	}{
		{"retried, running", input(func(in *canary.Input) {
			in.Last = running(webappv1.CanaryAborted, 1, func(st *webappv1.CanaryStatus) { st.FailedChecks = 2 })
			in.Canary = &canary.Deployment{Aborted: "new", ScaledDown: true}
			in.Retry = "new"
		}), map[string]string{canary.AnnotationRevision: "new", canary.AnnotationRetries: "1", canary.AnnotationAttempt: "1"}},
		{"retried once more, aborted again", input(func(in *canary.Input) {
			in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.Attempt, st.Retries = 2, 2 })
			in.Canary, in.Abort = &canary.Deployment{Revision: "new", Attempt: 2, Retries: 2, Replicas: 1}, "new@2"
		}), map[string]string{canary.AnnotationAborted: "new", canary.AnnotationRetries: "2", canary.AnnotationAttempt: "2"}},
		{"retried, aborted again", input(func(in *canary.Input) {
			in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.Retries = 1 })
			in.Canary, in.Abort = &canary.Deployment{Revision: "new", Retries: 1, Replicas: 1}, "new"
		}), map[string]string{canary.AnnotationAborted: "new", canary.AnnotationRetries: "1"}},
		{"never retried, aborted", input(func(in *canary.Input) {
			in.Last = running(webappv1.CanaryProgressing, 0, nil)
			in.Canary, in.Abort = &canary.Deployment{Revision: "new", Replicas: 1}, "new"
		}), map[string]string{canary.AnnotationAborted: "new"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := canary.Next(tt.in).Annotations; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("annotations = %v; want %v", got, tt.want)
			}
		})
	}
}

// TestLeftoverAnnotationsDoNotAct follows a canary call by call, each call given the status the
// one before answered, through the same template again: an annotation left by an earlier attempt
// (a promote, an abort, the promote and abort a retry by hand leaves in place) never acts on the
// next attempt, which is numbered past it.
func TestLeftoverAnnotationsDoNotAct(t *testing.T) {
	tests := []struct {
		name string
		// first is the call that starts the new attempt; then is the next call, given its status.
		first func(*canary.Input)
		then  func(*canary.Input)
	}{
		{"the template set back to the stable one and then again: a leftover promote",
			func(in *canary.Input) { in.Last, in.Promote = running(webappv1.CanaryRolledBack, 2, nil), "new" },
			func(in *canary.Input) { in.Promote = "new" }},
		{"the template set back to the stable one and then again: a leftover abort",
			func(in *canary.Input) { in.Last, in.Abort = running(webappv1.CanaryRolledBack, 2, nil), "new" },
			func(in *canary.Input) { in.Abort = "new" }},
		{"retried by hand, the promote and the promote-step of the aborted attempt left in place",
			func(in *canary.Input) {
				in.Last = running(webappv1.CanaryAborted, 2, func(st *webappv1.CanaryStatus) { st.FailedChecks = 2 })
				in.Canary, in.Route = &canary.Deployment{Revision: "new", Aborted: "new", ScaledDown: true}, &canary.Route{Accepted: true}
				in.Retry, in.Promote, in.PromoteStep = "new", "new", "new/0"
			},
			func(in *canary.Input) { in.Retry, in.Promote, in.PromoteStep = "new", "new", "new/0" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := canary.Next(input(tt.first))
			if first.Status == nil || first.Status.Phase != webappv1.CanaryProgressing || first.Status.Step != 0 {
				t.Fatalf("the first call: status %+v; want a new attempt at its first step", first.Status)
			}
			// The next call: the canary's pod is available and the route carries its 10%.
			next := canary.Next(input(func(in *canary.Input) {
				in.Last, in.ServicesObserved, in.Canary, in.Route = first.Status, true, ready(1), split(10, true)
				for k, v := range first.Annotations {
					if k == canary.AnnotationAttempt {
						fmt.Sscan(v, &in.Canary.Attempt)
					}
				}
				tt.then(in)
			}))
			if st := next.Status; st == nil || st.Phase != webappv1.CanaryProgressing || st.Step != 0 {
				t.Errorf("the next call: status %+v (rows %q); want the new attempt at its first step, its pause started", st, next.Fired)
			}
		})
	}
}

// TestNoStableTakesTheTemplate: without an observed stable Deployment there is no template to
// hold, whatever the canary's phase: the output says the stable Deployment takes the spec's, as
// it is then made with it.
func TestNoStableTakesTheTemplate(t *testing.T) {
	for _, p := range append([]webappv1.CanaryPhase{canary.None}, webappv1.CanaryPhases...) {
		t.Run(string(orNone(p)), func(t *testing.T) {
			in := input(func(in *canary.Input) {
				in.Stable, in.ServicesObserved, in.Canary, in.Route = nil, true, ready(1), split(10, true)
				if p != canary.None {
					in.Last = running(p, 0, nil)
				}
			})
			if out := canary.Next(in); !out.StableTemplate {
				t.Errorf("StableTemplate = false (stage %s, rows %q); want true", out.Stage, out.Fired)
			}
		})
	}
}

// orNone names the phase None "none".
func orNone(p webappv1.CanaryPhase) webappv1.CanaryPhase {
	if p == canary.None {
		return "none"
	}
	return p
}

// blueGreenPlan is the plan of a blue-green release (webappv1.Rollout.Plan) previewed to requests
// with X-Preview: 1, defaulted (its scale-down delay 30 s), promoted after auto seconds, or by
// hand when auto is nil.
func blueGreenPlan(auto *int32) *webappv1.Canary {
	spec := webappv1.WebAppSpec{Rollout: &webappv1.Rollout{BlueGreen: &webappv1.BlueGreen{
		Preview:              webappv1.BlueGreenPreview{Matches: []webappv1.HeaderRouteMatch{{Headers: []webappv1.HeaderMatch{{Name: "X-Preview", Value: "1"}}}}},
		AutoPromotionSeconds: auto,
	}}}
	webappv1.Default(&spec)
	return spec.Rollout.Plan()
}

// blueGreenCases are the cases of a blue-green release (issue 45): the new version at full size
// behind its preview, one switch of all the traffic, held through a lost pod and an autoscaler
// that lowers the idle stable Deployment's count, and an abort within the scale-down delay that
// switches it all back at once.
func blueGreenCases() []transitionCase {
	const delay = webappv1.DefaultBlueGreenScaleDownDelaySeconds * time.Second
	bg := func(auto *int32, edit func(*canary.Input)) canary.Input {
		return input(func(in *canary.Input) {
			in.Plan, in.BlueGreen, in.ServicesObserved = blueGreenPlan(auto), true, true
			edit(in)
		})
	}
	switched := func(edit func(*webappv1.CanaryStatus)) *webappv1.CanaryStatus {
		return running(webappv1.CanaryPromoting, 0, func(st *webappv1.CanaryStatus) {
			st.AllTrafficTime, st.HeaderRouted = at(50*time.Second), true
			if edit != nil {
				edit(st)
			}
		})
	}
	return []transitionCase{
		{
			name: "blue-green, the preview scaling up: it runs at the stable's full count, and the preview's header rule goes in with its first pod available, no user's request",
			in: bg(nil, func(in *canary.Input) {
				in.Last, in.Route = running(webappv1.CanaryProgressing, 0, nil), split(0, true)
				in.Canary = &canary.Deployment{Revision: "new", Replicas: 4, Total: 4, Updated: 4, Available: 1}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{100, 0}, headerRoute: true, resync: time.Minute,
				message: "Preview: waiting for 4 canary pods to be available (1 is) before 0% of the traffic and the requests its preview matches go to it"},
		},
		{
			name: "blue-green, the preview on the route with 2 of its 4 pods available: it waits for all of them before it is paused, or its pause starts",
			in: bg(ptr(int32(20)), func(in *canary.Input) {
				in.Last, in.Route = running(webappv1.CanaryProgressing, 0, nil), withHeader(split(0, true))
				in.Canary = &canary.Deployment{Revision: "new", Replicas: 4, Total: 4, Updated: 4, Available: 2}
			}),
			want: want{phase: webappv1.CanaryProgressing, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{100, 0}, headerRoute: true, headerRouted: true,
				resync: time.Minute + 20*time.Second, message: "Preview: waiting for 4 canary pods to be available (2 are)"},
		},
		{
			name: "blue-green, the preview in place at full size, promoted by hand: paused",
			in: bg(nil, func(in *canary.Input) {
				in.Last, in.Canary, in.Route = running(webappv1.CanaryProgressing, 0, nil), ready(4), withHeader(split(0, true))
			}),
			want: want{row: "weight in place at a manual step: paused until promoted", phase: webappv1.CanaryPaused, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{100, 0},
				headerRoute: true, headerRouted: true, message: "Preview: 0% of the traffic and the requests its preview matches on the canary, paused until it is promoted"},
		},
		{
			name: "blue-green, promoted: all the traffic switches to the new version at once, not step by step",
			in: bg(nil, func(in *canary.Input) {
				in.Last = running(webappv1.CanaryPaused, 0, func(st *webappv1.CanaryStatus) { st.HeaderRouted = true })
				in.Canary, in.Route, in.Promote = ready(4), withHeader(split(0, true)), "new"
			}),
			want: want{row: "promote asked", phase: webappv1.CanaryPromoting, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{0, 100},
				headerRoute: true, headerRouted: true, selectsCanary: true, message: "Promoting: the canary scales to 4 pods (4 available) and then takes all the traffic"},
		},
		{
			name: "blue-green, after the preview's autoPromotionSeconds: promoted, all the traffic switches at once",
			in: bg(ptr(int32(20)), func(in *canary.Input) {
				in.Last = running(webappv1.CanaryProgressing, 0, func(st *webappv1.CanaryStatus) { st.PauseStartTime, st.HeaderRouted = at(30*time.Second), true })
				in.Canary, in.Route = ready(4), withHeader(split(0, true))
			}),
			want: want{row: "pause over and the latest check passed, at the last step: promoting", phase: webappv1.CanaryPromoting, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{0, 100},
				headerRoute: true, headerRouted: true, selectsCanary: true, pauseStart: at(30 * time.Second)},
		},
		{
			name: "blue-green, switched, a pod of the new version lost: it keeps all the traffic, no user is switched back",
			in: bg(nil, func(in *canary.Input) {
				in.Last, in.Route = switched(nil), withHeader(split(100, true))
				in.Canary = &canary.Deployment{Revision: "new", Replicas: 4, Total: 4, Updated: 4, Available: 3}
			}),
			want: want{phase: webappv1.CanaryPromoting, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{0, 100}, headerRoute: true, headerRouted: true,
				selectsCanary: true, resync: delay - 10*time.Second, message: "the canary has all the traffic"},
		},
		{
			name: "blue-green, switched, the autoscaler lowers the idle stable Deployment to 2: the new version, which has all the traffic, keeps its 4 pods",
			in: bg(nil, func(in *canary.Input) {
				in.Last, in.Route, in.Canary, in.StableReplicas = switched(nil), withHeader(split(100, true)), ready(4), 2
			}),
			want: want{phase: webappv1.CanaryPromoting, form: canary.Run, replicas: 4, services: true, split: true, weights: [2]int32{0, 100}, headerRoute: true, headerRouted: true,
				selectsCanary: true, resync: delay - 10*time.Second},
		},
		{
			name: "blue-green, switched, aborted within the scale-down delay: all the traffic goes back to the old version at once, which kept its pods",
			in: bg(nil, func(in *canary.Input) {
				in.Last, in.Route, in.Canary, in.Abort = switched(nil), withHeader(split(100, true)), ready(4), "new"
			}),
			want: want{row: "abort asked while promoting, before the stable Deployment takes the template", phase: webappv1.CanaryAborted, form: canary.Keep, replicas: 4, services: true, split: true,
				weights: [2]int32{100, 0}, headerRouted: true, message: "aborted by the webapp.example.com/abort annotation"},
		},
		{
			name: "blue-green, switched for the scale-down delay: the stable Deployment takes the new template while the new version keeps all the traffic",
			in: bg(nil, func(in *canary.Input) {
				in.Last = switched(func(st *webappv1.CanaryStatus) { st.AllTrafficTime = at(60*time.Second - delay) })
				in.Route, in.Canary = withHeader(split(100, true)), ready(4)
			}),
			want: want{phase: webappv1.CanaryPromoting, form: canary.Run, replicas: 4, stableTemplate: true, services: true, split: true, weights: [2]int32{0, 100}, headerRoute: true, headerRouted: true,
				selectsCanary: true, message: "the canary has all the traffic while Deployment shop rolls"},
		},
	}
}

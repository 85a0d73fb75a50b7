package canary_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// world is a small model of what Metacontroller, the Deployment controller and a Gateway
// controller do with Next's answers, one second per tick: an applied canary Deployment gains one
// available pod per tick, a Service is observed a tick after it is asked for, a Gateway accepts
// a route's new generation a tick after it changes, the canary Deployment's controller observes
// its generation a tick after the next, and a stable Deployment takes three ticks to roll. It records what a Gateway would do with the route at every tick.
type world struct {
	stableRev                   string
	stableAvailable, stableFull int32
	rolling                     int // ticks left of the stable's rollout
	canary                      *canary.Deployment
	canaryRev                   string
	services, servicesAsked     bool
	route                       canary.Route
	routed                      bool
	pendingGeneration           int64 // the canary's generation its controller observes next
}

func (w *world) input(plan *webappv1.Canary, last *webappv1.CanaryStatus, revision string, now time.Time) canary.Input {
	in := canary.Input{
		Name: "shop", Plan: plan, Last: last, Revision: revision,
		Stable:         &canary.Stable{Revision: w.stableRev, Complete: w.rolling == 0 && w.stableAvailable == w.stableFull},
		StableReplicas: w.stableFull, Routed: w.routed, ServicesObserved: w.services, Now: now,
	}
	if w.routed {
		r := w.route
		in.Route = &r
	}
	if c := w.canary; c != nil {
		d := *c
		d.Revision, d.Updated = w.canaryRev, d.Total // its pods are replaced at once on a template change
		d.ScaledDown = d.Replicas == 0 && d.ObservedGeneration >= d.Generation && d.Total == 0
		in.Canary = &d
	}
	return in
}

// apply does what Metacontroller would with out, and returns the invariants it broke.
func (w *world) apply(out canary.Output, revision string) []string {
	var broken []string
	switch out.Form {
	case canary.Run:
		if w.canary == nil {
			w.canary = &canary.Deployment{}
		}
		if w.canaryRev != revision || w.canary.Replicas != out.Replicas {
			w.canary.Generation++ // observed by its controller a tick later
		}
		if w.canaryRev != revision {
			w.canaryRev, w.canary.Available = revision, 0
		}
		w.canary.Replicas = out.Replicas
	case canary.Zero:
		if w.canary.Replicas != 0 {
			w.canary.Generation++
		}
		w.canary.Replicas = 0
	case canary.Absent:
		if w.canary != nil && w.canary.Total > 0 {
			broken = append(broken, fmt.Sprintf("the canary Deployment is deleted with %d pods", w.canary.Total))
		}
		w.canary = nil
	}
	if w.canary != nil && w.canary.Replicas < w.canary.Total { // scaling down is at once
		w.canary.Total, w.canary.Available = w.canary.Replicas, min(w.canary.Available, w.canary.Replicas)
	}
	w.servicesAsked = out.Services
	if !out.Services {
		w.services = false
	}
	r := canary.Route{Split: out.Split}
	if out.Split {
		r.StableWeight, r.CanaryWeight = out.StableWeight, out.CanaryWeight
	}
	if w.routed && (r.Split != w.route.Split || r.StableWeight != w.route.StableWeight || r.CanaryWeight != w.route.CanaryWeight) {
		w.route = r // a new generation, not accepted yet
	}
	if out.StableTemplate && w.stableRev != revision {
		w.stableRev, w.rolling = revision, 3
	}
	// What the route now sends, and where.
	if w.routed && w.route.Split {
		if !w.services {
			broken = append(broken, "the route names Services that are not observed")
		}
		need := int32(0)
		if cw := w.route.CanaryWeight; cw > 0 {
			need = max(1, (cw*w.stableFull+99)/100)
		}
		if avail := w.available(revision); avail < need {
			broken = append(broken, fmt.Sprintf("the route sends %d%% to a canary with %d available pods of the %d it needs", w.route.CanaryWeight, avail, need))
		}
		if w.route.StableWeight > 0 && w.stableAvailable == 0 {
			broken = append(broken, "the route sends traffic to a stable Deployment with no available pod")
		}
	}
	if w.routed && !w.route.Split && out.SelectsCanary {
		broken = append(broken, "the Service <name> selects the canary's pods while the route sends it all of its traffic")
	}
	return broken
}

func (w *world) available(revision string) int32 {
	if w.canary == nil || w.canaryRev != revision {
		return 0
	}
	return w.canary.Available
}

// tick lets a second pass.
func (w *world) tick() {
	if w.routed {
		w.route.Accepted = true
	}
	w.services = w.servicesAsked
	if c := w.canary; c != nil {
		c.Total = c.Replicas
		if c.Available < c.Replicas && c.ObservedGeneration == c.Generation {
			c.Available++
		}
		c.ObservedGeneration, w.pendingGeneration = w.pendingGeneration, c.Generation // a tick late
	}
	if w.rolling > 0 {
		w.rolling--
		w.stableAvailable = w.stableFull - 1
		if w.rolling == 0 {
			w.stableAvailable = w.stableFull
		}
	}
}

// TestSimulatedCanary runs canaries in the world model from the template change to their end,
// and checks at every second that the route never sends traffic to a Service with no ready pod,
// nor more to the canary than its available pods cover, and that the stable Deployment keeps its
// template until the canary has all the traffic.
func TestSimulatedCanary(t *testing.T) {
	tests := []struct {
		name     string
		routed   bool
		plan     *webappv1.Canary
		stable   int32
		promote  int // tick at which the promote annotation appears, 0 for never
		rollback int // tick at which the template goes back to the stable one
		phases   []webappv1.CanaryPhase
	}{
		{name: "three timed steps, routed", routed: true, stable: 4, plan: &webappv1.Canary{Steps: []webappv1.CanaryStep{
			{Weight: 10, PauseSeconds: ptr(int32(5))}, {Weight: 30, PauseSeconds: ptr(int32(5))}, {Weight: 60, PauseSeconds: ptr(int32(5))}}},
			phases: []webappv1.CanaryPhase{webappv1.CanaryProgressing, webappv1.CanaryPromoting, webappv1.CanaryPromoted}},
		{name: "a step that waits, promoted by hand", routed: true, stable: 10, promote: 40, plan: &webappv1.Canary{Steps: []webappv1.CanaryStep{
			{Weight: 5, PauseSeconds: ptr(int32(3))}, {Weight: 50}}},
			phases: []webappv1.CanaryPhase{webappv1.CanaryProgressing, webappv1.CanaryPaused, webappv1.CanaryPromoting, webappv1.CanaryPromoted}},
		{name: "rolled back at the second step", routed: true, stable: 4, rollback: 15, plan: &webappv1.Canary{Steps: []webappv1.CanaryStep{
			{Weight: 25, PauseSeconds: ptr(int32(5))}, {Weight: 50}}},
			phases: []webappv1.CanaryPhase{webappv1.CanaryProgressing, webappv1.CanaryPaused, webappv1.CanaryRolledBack}},
		{name: "without a route, by pod count", stable: 3, plan: &webappv1.Canary{Steps: []webappv1.CanaryStep{
			{Weight: 34, PauseSeconds: ptr(int32(2))}, {Weight: 67, PauseSeconds: ptr(int32(2))}}},
			phases: []webappv1.CanaryPhase{webappv1.CanaryProgressing, webappv1.CanaryPromoting, webappv1.CanaryPromoted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			webappv1.Default(&webappv1.WebAppSpec{Rollout: &webappv1.Rollout{Canary: tt.plan}})
			w := &world{stableRev: "old", stableAvailable: tt.stable, stableFull: tt.stable, routed: tt.routed, route: canary.Route{Accepted: true}}
			var last *webappv1.CanaryStatus
			var phases []webappv1.CanaryPhase
			var timeline []string
			var canaryWeight int32 // the route's, at the last second
			revision := "new"
			for i := 1; i <= 120; i++ {
				if i == tt.rollback {
					revision = "old"
				}
				in := w.input(tt.plan, last, revision, t0.Add(time.Duration(i)*time.Second))
				if tt.promote > 0 && i >= tt.promote {
					in.Promote = revision
				}
				out := canary.Next(in)
				for _, b := range w.apply(out, revision) {
					t.Errorf("second %d: %s", i, b)
				}
				if w.stableRev == revision && revision != "old" && (out.Status == nil || out.Status.Phase != webappv1.CanaryPromoting && out.Status.Phase != webappv1.CanaryPromoted) {
					t.Errorf("second %d: the stable Deployment took the template in phase %v", i, out.Status)
				}
				if serving := out.Serving && i != tt.rollback; serving && w.route.Split && w.route.CanaryWeight < canaryWeight {
					t.Errorf("second %d: the route's canary weight fell from %d to %d while the canary ran", i, canaryWeight, w.route.CanaryWeight)
				}
				if w.route.Split {
					canaryWeight = w.route.CanaryWeight
				}
				last = out.Status
				if last != nil && (len(phases) == 0 || phases[len(phases)-1] != last.Phase) {
					phases = append(phases, last.Phase)
				}
				if last != nil {
					timeline = append(timeline, fmt.Sprintf("%3ds %-11s step %d weights %3d/%-3d split %-5t replicas %d/%d", i, last.Phase, last.Step, w.route.StableWeight, w.route.CanaryWeight, w.route.Split, w.stableFull, last.Replicas))
				}
				w.tick()
				if last != nil && (last.Phase == webappv1.CanaryPromoted || last.Phase == webappv1.CanaryRolledBack) && w.canary == nil && !w.services {
					break
				}
			}
			if fmt.Sprint(phases) != fmt.Sprint(tt.phases) {
				t.Errorf("phases = %v; want %v\n%s", phases, tt.phases, strings.Join(timeline, "\n"))
			}
			if w.canary != nil || w.services || w.route.Split {
				t.Errorf("at the end: canary %+v, services %t, route %+v; want none, none, one backend\n%s", w.canary, w.services, w.route, strings.Join(timeline, "\n"))
			}
			if want := revision; w.stableRev != want {
				t.Errorf("the stable Deployment runs %q; want %q", w.stableRev, want)
			}
			if testing.Verbose() {
				t.Logf("timeline:\n%s", strings.Join(timeline, "\n"))
			}
		})
	}
}

package canary

import (
	webappv1 "github.com/example/webapp-operator/api/v1"
)

// Stage is where a canary stands within its phase, as the observations show it. A promotion
// and a retirement each go through stages that the status does not record: they are read off
// the observed children at every call, so that a restart loses nothing.
type Stage string

// The stages, in the order Stages lists them.
const (
	// AtStep: the canary runs its step's share of the pods, and the route gives it the weight
	// its available pods cover.
	AtStep Stage = "AtStep"
	// ScalingUp: promoting, the canary scales to the stable's full count, then takes all the
	// traffic.
	ScalingUp Stage = "ScalingUp"
	// TakingOver: promoting, the canary has had all the traffic for the scale-down delay, and
	// the stable Deployment takes the template and rolls.
	TakingOver Stage = "TakingOver"
	// HandingBack: promoting, the stable Deployment has rolled; the traffic goes back to it, and
	// the canary keeps its pods for the scale-down delay once the route is seen to.
	HandingBack Stage = "HandingBack"
	// Draining: promoting, the traffic is back on the stable Deployment; the canary scales to
	// zero.
	Draining Stage = "Draining"
	// WindingDown: no canary runs (none yet, or it ended), and the route still gives the canary
	// some weight: that goes to 0 first, the canary kept as it is until the scale-down delay has
	// passed since the route was seen at 0.
	WindingDown Stage = "WindingDown"
	// ScalingDown: no canary runs, and the route gives the canary nothing: the route goes back
	// to the Service <name>, and the canary scales to zero while its pods go.
	ScalingDown Stage = "ScalingDown"
	// Done: nothing of a canary runs. Its Deployment is deleted, or kept at zero after an abort,
	// so that its conditions and events tell why.
	Done Stage = "Done"
)

// StageRow is one row of Stages.
type StageRow struct {
	// Stage is the stage the row names.
	Stage Stage
	// In are the phases it belongs to.
	In []webappv1.CanaryPhase
	// When says whether the observations show it; nil always holds.
	When func(*state) bool
	// Children is what the children are in it.
	Children func(*state) Output
}

// retiring are the phases in which no canary runs.
var retiring = append([]webappv1.CanaryPhase{None}, ended...)

// Stages tells the stage of a canary from its phase (the one Transitions reached) and the
// observations, and what the children are in it: the first row whose phase and guard match.
var Stages = []StageRow{
	{Stage: AtStep, In: atAStep, Children: atStep},
	{Stage: ScalingUp, In: []webappv1.CanaryPhase{webappv1.CanaryPromoting}, When: not(stableTakesTemplate), Children: scalingUp},
	{Stage: TakingOver, In: []webappv1.CanaryPhase{webappv1.CanaryPromoting}, When: not(stableRolled), Children: takingOver},
	{Stage: HandingBack, In: []webappv1.CanaryPhase{webappv1.CanaryPromoting}, When: handingBackNow, Children: handingBack},
	{Stage: Draining, In: []webappv1.CanaryPhase{webappv1.CanaryPromoting}, Children: draining},
	{Stage: WindingDown, In: retiring, When: windingDownNow, Children: windingDown},
	{Stage: ScalingDown, In: retiring, When: canaryHasPods, Children: scalingDown},
	{Stage: Done, In: retiring, Children: done},
}

func not(f func(*state) bool) func(*state) bool { return func(s *state) bool { return !f(s) } }

func stableTakesTemplate(s *state) bool { return s.stableTakesTemplate() }

func stableRolled(s *state) bool { return s.stableRolled() }

func routeSplit(s *state) bool { return s.routeSplit() }

// canaryHasWeight: the observed route still sends the canary some of the traffic, by weight or
// by its header route.
func canaryHasWeight(s *state) bool {
	return s.in.Canary != nil && s.routeSplit() && (s.in.Route.CanaryWeight > 0 || s.in.Route.Header)
}

func canaryHasPods(s *state) bool { return s.in.Canary != nil && !s.in.Canary.ScaledDown }

// handingBackNow: the route still splits, or the canary keeps its pods for the scale-down delay.
func handingBackNow(s *state) bool { return routeSplit(s) || s.delayedScaleDown() }

// windingDownNow: the route still gives the canary some weight, or the canary keeps its pods for
// the scale-down delay.
func windingDownNow(s *state) bool { return canaryHasWeight(s) || s.delayedScaleDown() }

// What the children are in each stage.

func atStep(s *state) Output { return s.serve(s.replicasFor(s.target()), false) }

func scalingUp(s *state) Output { return s.serve(s.fullCount(), false) }

func takingOver(s *state) Output {
	o := s.serve(s.fullCount(), false)
	o.StableTemplate = true
	return o
}

func handingBack(s *state) Output {
	o := s.serve(s.fullCount(), true)
	o.StableTemplate = true
	return o
}

func draining(s *state) Output {
	o := handingBack(s)
	o.Form, o.Replicas = Zero, 0
	if s.in.Canary == nil {
		o.Form = Absent
	}
	return o
}

// retired is what the children are once no canary runs: the stable Deployment takes the
// template unless the canary of that template was aborted, and the Services stay while the
// route names them.
func retired(s *state) Output {
	return Output{StableTemplate: s.phase() != webappv1.CanaryAborted, Services: s.routeSplit()}
}

func windingDown(s *state) Output {
	o := retired(s)
	o.Split, o.StableWeight, o.CanaryWeight = true, 100, 0
	o.Form = Keep
	return o
}

func scalingDown(s *state) Output {
	o := retired(s)
	o.Form = Zero
	return o
}

func done(s *state) Output {
	o := retired(s)
	if s.in.Canary != nil && s.phase() == webappv1.CanaryAborted {
		o.Form = Zero
	}
	return o
}

// serve is what the children are while the canary runs with replicas pods: the route split
// between the Services by the weight the canary's available pods cover (none before they are
// observed), with the plan's header route once the canary has a pod available (at once when the
// WebApp is scaled to zero, as a weight is). back is true once
// the traffic goes back to the stable Deployment, in the last stages of a promotion. The Service
// <name> selects the canary's pods too only while the canary is asked for some weight: at a step
// of weight 0 no user reaches it. A blue-green release, once switched, keeps all the traffic.
func (s *state) serve(replicas int32, back bool) Output {
	in := s.in
	o := Output{Form: Run, Replicas: replicas, Serving: true}
	if in.Routed {
		o.Services = !back || s.routeSplit()
		if in.ServicesObserved && !back {
			w := s.safeWeight()
			if s.switched() {
				w = 100
			}
			o.Split, o.StableWeight, o.CanaryWeight = true, 100-w, w
			o.HeaderRoute = s.headerRoute() && s.runsRevision() && s.available() >= s.onePod()
		}
	}
	o.SelectsCanary = !back && (!in.Routed || s.routeSplit()) && s.target() > 0
	return o
}

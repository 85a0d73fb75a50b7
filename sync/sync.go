package sync

import (
	"fmt"
	"math"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/internal/english"
)

// FinalizeResyncSeconds is how soon Metacontroller is asked to call finalize again while a teardown
// waits, so that progress never depends on a watch event arriving.
const FinalizeResyncSeconds = 5

// Response is the answer to a sync or finalize hook. Its JSON form (MarshalJSON) has only the
// fields Metacontroller's strict decoding accepts: status, children, resyncAfterSeconds and, from
// Finalize only, finalized.
type Response struct {
	// Status replaces the WebApp's status whole.
	Status webappv1.WebAppStatus
	// Children is every child that should exist; an observed child that is missing here is
	// deleted. Each is a typed object the hook built (*appsv1.Deployment, *corev1.Service) or an
	// observed child kept unchanged (*unstructured.Unstructured). Nil encodes as [].
	Children []runtime.Object
	// ResyncAfterSeconds asks for one more call after this delay; 0 asks for none. From Sync, it
	// is set only while a canary's timer runs, when the first runs out.
	ResyncAfterSeconds float64
	// Timed is true when the answer holds only at the time of the call (canary.Output.Timed): a
	// later call may decide otherwise on the same request. Such an answer must not be replayed.
	// It is not part of the JSON answer.
	Timed bool
	// Finalized is set by Finalize only: true once no child is observed.
	Finalized *bool
}

// Sync answers the sync hook: the children a WebApp should have and its status, computed from the
// observed children only. now stamps a condition's lastTransitionTime when its status changes.
//
// With an invalid spec it returns phase Invalid and every observed child unchanged, so nothing
// running is deleted or altered. Children the hook does not build (other kinds, or children with
// another name) are also kept unchanged: deleting what it does not understand is never the hook's
// call. With a valid spec, the Service, the Ingress, the PodDisruptionBudget, the
// HorizontalPodAutoscaler and the HTTPRoute are desired only while the spec asks for them, so an
// observed one the spec no longer asks for is deleted. So are a canary's children, the canary
// Deployment and the Services <name>-canary and <name>-stable, once the canary's machine
// (canary.Next) no longer asks for them: the canary Deployment only once its pods are gone. Those
// are the only children a sync ever lets go. The HTTPRoute is desired only when the
// CompositeController manages HTTPRoutes (Request.Declares): without the
// metacontroller/gateway-api component there is none, and the Routed condition says so.
func Sync(req *Request, now time.Time) Response {
	p := &req.Parent

	// 1. Validate: an invalid spec changes nothing.
	if errs := Validate(p); len(errs) > 0 {
		invalid := report{phase: webappv1.PhaseInvalid, reason: webappv1.ReasonInvalidSpec, message: invalidMessage(errs)}
		invalid.canary = p.Canary // carried forward: a canary goes on where it was once the spec is valid
		return Response{Status: newStatus(req, observe(req), now, invalid), Children: keptAll(req.Children)}
	}

	// 2. Build the children as without a canary: those the spec asks for.
	obs := observe(req) // each observed child looked up once, here
	observed := obs.deploymentView()
	cfg := checkConfig(p, &req.Related, observed)
	labels, selector, podLabels := childLabels(p, observed)
	replicas := replicasFor(&p.Spec, observed)
	deployment := desiredDeployment(p, replicas, labels, selector, podLabels, cfg)
	var children []runtime.Object
	switch {
	case cfg.missing == nil:
		children = append(children, deployment)
	case obs.deployment != nil: // not rolled into pods that could not start
		children = append(children, keptForm(obs.deployment))
	}
	if p.Spec.Port != nil {
		children = append(children, desiredService(p, labels, podLabels))
	}
	if p.Spec.Ingress != nil {
		children = append(children, desiredIngress(p, labels))
	}
	if pdb := desiredDisruptionBudget(p, labels, selector); pdb != nil {
		children = append(children, pdb)
	}
	if p.Spec.Autoscaling != nil {
		children = append(children, desiredAutoscaler(p, labels))
	}
	if routed(req) { // else Routed says why there is none
		children = append(children, desiredRoute(p, labels))
	}

	// 3. The status, in one pass over what was observed.
	r := syncReport(req, &obs, deployment.Annotations[AnnotationSpecHash], *replicas, cfg)
	var resp Response

	// 4. A canary, when the WebApp has or had one, changes what was built, in one step.
	if d := decideCanary(req, &obs, deployment, *replicas, now); d != nil {
		children = withCanary(children, d, p, &obs, deployment, *replicas, podLabels, cfg)
		r = withCanaryReport(r, d, cfg.missing != nil)
		resp.ResyncAfterSeconds, resp.Timed = resyncSeconds(d.ResyncAfter), d.Timed
	}

	// 5. Every child the hook does not build, unchanged.
	for _, c := range obs.others {
		children = append(children, keptForm(c))
	}
	resp.Status, resp.Children = newStatus(req, obs, now, r), children
	return resp
}

// resyncSeconds is a duration as resyncAfterSeconds, rounded up to the second; 0 for none.
func resyncSeconds(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return math.Ceil(d.Seconds())
}

// routed reports whether the WebApp has an HTTPRoute: spec.route asks for one, and the
// CompositeController manages HTTPRoutes (the metacontroller/gateway-api component).
func routed(req *Request) bool { return req.Parent.Spec.Route != nil && req.Declares(RouteKind) }

// invalidMessage is the message of a WebApp whose spec is invalid for errs.
func invalidMessage(errs field.ErrorList) string {
	return "Invalid spec, children left unchanged: " + errorsMessage(errs) + "."
}

// errorsMessage joins the problems of a list, each in apimachinery's form
// ("spec.image: Required value"), with "; ".
func errorsMessage(errs field.ErrorList) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Finalize answers the finalize hook with an ordered teardown that is safe to repeat in any state:
//  1. while a Service (or any child that is not a Deployment: the Ingress, the HTTPRoute, the
//     budget) is observed, it is deleted and Deployments are kept unchanged, so traffic stops
//     before pods do;
//  2. then each Deployment is scaled to 0, and kept until its status shows no pods;
//  3. then the Deployment is deleted.
//
// Finalized is true only when no child is observed. The spec is not read: a WebApp with an
// invalid spec is torn down the same way.
func Finalize(req *Request, now time.Time) Response {
	// 1. Count what is left: the spec is not read, so there is nothing to validate.
	var children []runtime.Object
	var services, others, deployments, scaling, pods int
	for i := range req.Children {
		c := &req.Children[i]
		switch {
		case c.is(ServiceKind):
			services++
		case !c.is(DeploymentKind):
			others++
		}
	}
	// 2. The children: every Deployment, kept while anything else is left, then scaled to zero
	// until its pods are gone; every other child is let go.
	for i := range req.Children {
		c := &req.Children[i]
		if !c.is(DeploymentKind) {
			continue
		}
		deployments++
		switch {
		case services+others > 0:
			children = append(children, keptForm(c))
		case !c.Deployment.scaledDown():
			scaling++
			pods += int(c.Deployment.podsLeft())
			children = append(children, scaledToZero(c))
		}
	}

	// 3. The status, once.
	done := len(req.Children) == 0
	var msg string
	switch {
	case done:
		msg = "All children are deleted; the WebApp can go."
	case services+others > 0:
		what := english.Count(services, "Service")
		if others > 0 {
			what = english.Count(services+others, "child other than Deployments", "children other than Deployments")
		}
		msg = fmt.Sprintf("Deleting %s first so that traffic stops; %s %s.", what, english.Count(deployments, "Deployment"), english.Plural(deployments, "remains", "remain"))
	case scaling > 0:
		msg = fmt.Sprintf("Scaling %s to zero; %s left.", english.Count(scaling, "Deployment"), english.Count(pods, "pod"))
	default:
		msg = fmt.Sprintf("Deleting %s now that it has no pods.", english.Count(deployments, "Deployment"))
	}
	status := newStatus(req, observe(req), now, report{phase: webappv1.PhaseTerminating, reason: webappv1.ReasonTerminating, message: msg, canary: req.Parent.Canary})
	resp := Response{
		Status:    status,
		Children:  children,
		Finalized: &done,
	}
	if !done {
		resp.ResyncAfterSeconds = FinalizeResyncSeconds
	}
	return resp
}

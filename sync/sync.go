package sync

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
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
	// is set only while a canary's timer runs, and the answer holds only until it runs out.
	ResyncAfterSeconds float64
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
// observed one the spec no longer asks for is deleted; those are the only children a sync ever
// lets go. The HTTPRoute is desired only when the CompositeController manages HTTPRoutes
// (Request.Declares): without the metacontroller/gateway-api component there is none, and the
// Routed condition says so.
func Sync(req *Request, now time.Time) Response {
	p := &req.Parent

	// 1. Validate: an invalid spec changes nothing.
	if errs := Validate(p); len(errs) > 0 {
		invalid := report{phase: webappv1.PhaseInvalid, reason: webappv1.ReasonInvalidSpec, message: "Invalid spec, children left unchanged: " + errorsMessage(errs) + "."}
		status := newStatus(req, observe(req), now, invalid)
		status.Canary = p.Canary // carried forward: a canary goes on where it was once the spec is valid
		return Response{Status: status, Children: keptAll(req.Children)}
	}

	// 2. Build the children: those the spec asks for, then every child the hook does not build.
	obs := observe(req) // each observed child looked up once, here
	observed := obs.deploymentView()
	cfg := checkConfig(p, &req.Related, observed)
	labels, selector, podLabels := childLabels(p, observed)
	replicas := replicasFor(&p.Spec, observed)
	deployment := desiredDeployment(p, replicas, labels, selector, podLabels, cfg)
	plan := planCanary(req, &obs, deployment, *replicas, now) // nil without a canary
	var children []runtime.Object
	switch {
	case cfg.missing == nil && plan != nil && !plan.StableTemplate && obs.deployment != nil:
		children = append(children, withReplicas(obs.deployment, *replicas)) // its template held
	case cfg.missing == nil:
		children = append(children, deployment)
	case obs.deployment != nil: // not rolled into pods that could not start
		children = append(children, keptForm(obs.deployment))
	}
	if p.Spec.Port != nil {
		svc := desiredService(p, labels, podLabels)
		if plan != nil && plan.Relax {
			svc.Spec.Selector = relaxed(podLabels)
		}
		children = append(children, svc)
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
	if p.Spec.Route != nil && req.Declares(RouteKind) { // else Routed says why there is none
		route := desiredRoute(p, labels)
		if plan != nil && plan.Split {
			route.Spec.Rules[0].BackendRefs = splitBackends(p, plan.StableWeight, plan.CanaryWeight)
		}
		children = append(children, route)
	}
	if plan != nil {
		children = append(children, canaryChildren(p, &obs, plan, podLabels, cfg)...)
	}
	for _, c := range obs.others {
		children = append(children, keptForm(c))
	}

	// 3. Compute the status, in one pass over what was observed.
	r := syncReport(req, &obs, deployment.Annotations[AnnotationSpecHash], *replicas, cfg)
	if plan == nil {
		return Response{Status: newStatus(req, obs, now, r), Children: children}
	}
	if cr := canaryReport(plan); cr != nil && cfg.missing == nil {
		r.phase, r.reason, r.message = cr.phase, cr.reason, cr.message
	}
	if ro := p.Spec.Rollout; ro != nil && ro.Canary != nil {
		r.conditions = append(r.conditions, canaryCondition(plan))
	}
	status := newStatus(req, obs, now, r)
	status.Canary = plan.Status
	return Response{Status: status, Children: children, ResyncAfterSeconds: resyncSeconds(plan.ResyncAfter)}
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
		case !scaledDown(c):
			scaling++
			pods += podsLeft(c)
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
		what := count(services, "Service")
		if others > 0 {
			what = count(services+others, "child other than Deployments", "children other than Deployments")
		}
		msg = fmt.Sprintf("Deleting %s first so that traffic stops; %s %s.", what, count(deployments, "Deployment"), plural(deployments, "remain", "remains"))
	case scaling > 0:
		msg = fmt.Sprintf("Scaling %s to zero; %s left.", count(scaling, "Deployment"), count(pods, "pod"))
	default:
		msg = fmt.Sprintf("Deleting %s now that it has no pods.", count(deployments, "Deployment"))
	}
	status := newStatus(req, observe(req), now, report{phase: webappv1.PhaseTerminating, reason: webappv1.ReasonTerminating, message: msg})
	status.Canary = req.Parent.Canary
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

// scaledDown reports whether a Deployment asks for no pods and its controller has confirmed that
// none are left, terminating ones included.
func scaledDown(c *Child) bool {
	d := c.Deployment
	return replicasOf(d) == 0 && d.Status.ObservedGeneration >= d.Generation && podsLeft(c) == 0
}

// podsLeft counts a Deployment's pods, running and terminating.
func podsLeft(c *Child) int {
	st := c.Deployment.Status
	n := int(st.Replicas)
	if t := st.TerminatingReplicas; t != nil {
		n += int(*t)
	}
	return n
}

package sync

import (
	"maps"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// This file translates: the request into canary.Next's input, facts only, and its output into
// children. Every decision is canary's, or the reading of an observed child's (deployment.go,
// pods.go), or the status's (withCanaryReport).

// decideCanary returns canary.Next's decision for the request, or nil when there is no canary to
// decide (canary.Idle): then the children are built as without the feature. deployment is the
// stable Deployment as the spec asks for it, with desired replicas.
func decideCanary(req *Request, obs *observedChildren, deployment *appsv1.Deployment, desired int32, now time.Time) *canary.Output {
	p := &req.Parent
	plan := p.Spec.Rollout.Plan()
	if canary.Idle(plan, obs.canary != nil || obs.canaryService != nil || obs.stableService != nil) {
		return nil
	}
	revision := TemplateHash(&deployment.Spec.Template)
	in := canary.Input{
		Name:             p.Name,
		Plan:             plan,
		BlueGreen:        p.Spec.Rollout.IsBlueGreen(),
		Last:             p.Canary,
		Revision:         revision,
		StableReplicas:   desired,
		Routed:           routed(req),
		ServicesObserved: obs.canaryService != nil && obs.stableService != nil,
		Promote:          p.Promote,
		Abort:            p.Abort,
		PromoteStep:      p.PromoteStep,
		Retry:            p.Retry,
		Measurement:      req.Measurement,
		Measuring:        req.Measuring,
		Now:              now,
	}
	if c := obs.deployment; c != nil {
		d := c.Deployment
		in.Stable = &canary.Stable{
			Revision:  stableRevision(c, deployment, revision),
			Complete:  d.carries(deployment.Annotations[AnnotationSpecHash], desired) && d.rolledOut(desired),
			RolledOut: d.rolledOut(desired),
		}
	}
	if c := obs.canary; c != nil {
		d := c.Deployment
		in.Canary = &canary.Deployment{
			Revision:           d.Revision,
			Aborted:            d.Aborted,
			Promoting:          d.Promoting,
			Retries:            countOf(d.Retries),
			Attempt:            countOf(d.Attempt),
			Replicas:           replicasOf(d),
			Generation:         d.Generation,
			ObservedGeneration: d.Status.ObservedGeneration,
			Total:              d.Status.Replicas,
			Updated:            d.Status.UpdatedReplicas,
			Available:          d.Status.AvailableReplicas,
			ScaledDown:         d.scaledDown(),
			Failure:            failureSentence(c),
		}
		in.Pods = diagnoseCanary(&req.Related, c, d.Revision == revision, p.Spec.Image)
	}
	if r := obs.route; r != nil {
		in.Route = &canary.Route{Accepted: routeState(p, r.Route).ok, Header: headerRouted(p, r.Route)}
		in.Route.Split, in.Route.StableWeight, in.Route.CanaryWeight = routeSplit(p, r.Route)
	}
	out := canary.Next(in)
	return &out
}

// withCanary applies the decision d to the children built as without a canary, in one step:
// the stable Deployment keeps its observed template unless d gives it the spec's
// (d.StableTemplate), the Service <name> selects the canary's pods too while d says so, the
// route splits by d's weights, with the header route's rule first while d says so, and the
// canary's own children follow. deployment is the stable Deployment as the spec asks for it.
func withCanary(children []runtime.Object, d *canary.Output, p *Parent, obs *observedChildren, deployment *appsv1.Deployment, replicas int32, podLabels map[string]string, cfg configState) []runtime.Object {
	out := make([]runtime.Object, 0, len(children)+3)
	for _, c := range children {
		switch o := c.(type) {
		case *appsv1.Deployment:
			if o == deployment && !d.StableTemplate { // one is observed: its template held
				c = withReplicas(obs.deployment, replicas)
			}
		case *corev1.Service:
			if o.Name == p.Name && d.SelectsCanary {
				o.Spec.Selector = anyTrack(podLabels)
			}
		case *gatewayv1.HTTPRoute:
			if d.Split {
				o.Spec.Rules[0].BackendRefs = splitBackends(p, d.StableWeight, d.CanaryWeight)
			}
			if d.HeaderRoute {
				o.Spec.Rules = append([]gatewayv1.HTTPRouteRule{headerRule(p)}, o.Spec.Rules...)
			}
		}
		out = append(out, c)
	}
	return append(out, canaryChildren(p, obs, d, podLabels, cfg)...)
}

// canaryChildren returns the children d asks for beyond the stable Deployment and the Service
// <name>: the canary Deployment, and the Services <name>-canary and <name>-stable.
func canaryChildren(p *Parent, obs *observedChildren, d *canary.Output, podLabels map[string]string, cfg configState) []runtime.Object {
	var out []runtime.Object
	cl := canaryLabels(labelsFor(p.Name))
	switch d.Form {
	case canary.Run:
		if cfg.missing != nil { // not rolled into pods that could not start
			if obs.canary != nil {
				out = append(out, keptForm(obs.canary))
			}
			break
		}
		out = append(out, desiredCanary(p, d, cl, cfg))
	case canary.Keep, canary.Zero:
		if obs.canary == nil {
			break
		}
		var obj map[string]any
		if d.Form == canary.Zero {
			obj = withReplicas(obs.canary, 0).(*unstructured.Unstructured).Object
		} else {
			obj = keptObject(obs.canary)
		}
		annotate(obj, d.Annotations)
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
	if d.Services && p.Spec.Port != nil {
		canarySvc := desiredService(p, cl, cl)
		canarySvc.Name = p.Name + webappv1.CanarySuffix
		stable := desiredService(p, labelsFor(p.Name), podLabels)
		stable.Name = p.Name + webappv1.StableSuffix
		out = append(out, canarySvc, stable)
	}
	return out
}

// annotate sets annotations on the kept form of a child.
func annotate(obj map[string]any, annotations map[string]string) {
	for k, v := range annotations {
		_ = unstructured.SetNestedField(obj, v, "metadata", "annotations", k) // a kept form's metadata is an object
	}
}

// desiredCanary builds the canary Deployment: the stable Deployment the spec asks for, under
// the canary's name, labels and selector, with d's replicas and annotations, and
// webappv1.CanaryMinReadySeconds, so that a canary pod counts as available, and the route gives
// it weight, only once its endpoint has had time to reach the Gateway.
func desiredCanary(p *Parent, d *canary.Output, labels map[string]string, cfg configState) *appsv1.Deployment {
	n := d.Replicas
	selector := &metav1.LabelSelector{MatchLabels: labels}
	dep := desiredDeployment(p, &n, labels, selector, labels, cfg)
	dep.Name = p.Name + webappv1.CanarySuffix
	dep.Spec.MinReadySeconds = webappv1.CanaryMinReadySeconds
	hashed := dep.Spec
	dep.Annotations = map[string]string{AnnotationSpecHash: SpecHash(&hashed)}
	maps.Copy(dep.Annotations, d.Annotations)
	if cfg.partialHash != "" {
		dep.Annotations[AnnotationPartialConfigHash] = cfg.partialHash
	}
	return dep
}

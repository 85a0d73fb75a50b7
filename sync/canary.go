package sync

import (
	"fmt"
	"maps"
	"math"
	"strconv"
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

// This file translates: the request into canary.Next's input, and its output into children
// and status. Every decision is canary's.

// decideCanary returns canary.Next's decision for the request, or nil when the WebApp has no
// canary in its spec and neither a canary Deployment nor a canary's Service is observed: then
// there is no canary to wind down, the children are built as without the feature, and a WebApp
// that does not use it costs nothing more (a route left split, by hand or by an older hook, goes
// back to the Service <name> at once). deployment is the stable Deployment as the spec asks for
// it, with desired replicas.
func decideCanary(req *Request, obs *observedChildren, deployment *appsv1.Deployment, desired int32, now time.Time) *canary.Output {
	p := &req.Parent
	var plan *webappv1.Canary
	if ro := p.Spec.Rollout; ro != nil {
		plan = ro.Canary
	}
	if plan == nil && obs.canary == nil && obs.canaryService == nil && obs.stableService == nil {
		return nil
	}
	revision := TemplateHash(&deployment.Spec.Template)
	in := canary.Input{
		Name:             p.Name,
		Plan:             plan,
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
			Revision: stableRevision(c, deployment, revision),
			Complete: d.carries(deployment.Annotations[AnnotationSpecHash], desired) && d.rolledOut(desired),
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
			Failure:            canaryFailure(c),
		}
		if req.Related.Kinds[PodKind.Key()] {
			pods := trackPods(currentPods(&req.Related, d, c.Name, d.Revision == revision, p.Spec.Image))
			in.Pods = canary.Pods{Diagnosed: true, Restarts: restarts(pods)}
			if t := diagnose(pods); t != nil {
				in.Pods.Trouble = t.message()
			}
		}
	}
	if r := obs.route; r != nil {
		in.Route = &canary.Route{Accepted: routeState(p, r.Route).ok}
		for _, b := range r.Route.Backends {
			w := int32(1)
			if b.Weight != nil {
				w = *b.Weight
			}
			switch b.Name {
			case p.Name + webappv1.CanarySuffix:
				in.Route.Split, in.Route.CanaryWeight = true, w
			case p.Name + webappv1.StableSuffix:
				in.Route.StableWeight = w
			}
		}
	}
	out := canary.Next(in)
	return &out
}

// countOf is the canary Deployment's canary.AnnotationRetries or AnnotationAttempt as a number,
// 0 when it is absent or not a number from 0 to math.MaxInt32.
func countOf(v string) int32 {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0
	}
	return int32(n)
}

// canaryFailure is the failure the canary Deployment reports for its observed generation, as a
// sentence for its status; "" when none.
func canaryFailure(c *Child) string {
	switch f := c.Deployment.failure(); {
	case f == nil:
		return ""
	case f.deadline:
		return fmt.Sprintf("Deployment %s exceeded its progress deadline", c.Name)
	default:
		return fmt.Sprintf("Deployment %s cannot create pods (%s): %s", c.Name, f.reason, f.refused())
	}
}

// withCanary applies the decision d to the children built as without a canary, in one step:
// the stable Deployment keeps its observed template unless d gives it the spec's, the Service
// <name> selects the canary's pods too while d says so, the route splits by d's weights, and the
// canary's own children follow. deployment is the stable Deployment as the spec asks for it.
func withCanary(children []runtime.Object, d *canary.Output, p *Parent, obs *observedChildren, deployment *appsv1.Deployment, replicas int32, podLabels map[string]string, cfg configState) []runtime.Object {
	out := make([]runtime.Object, 0, len(children)+3)
	for _, c := range children {
		switch o := c.(type) {
		case *appsv1.Deployment:
			if o == deployment && !d.StableTemplate && obs.deployment != nil {
				c = withReplicas(obs.deployment, replicas) // its template held
			}
		case *corev1.Service:
			if o.Name == p.Name && d.SelectsCanary {
				o.Spec.Selector = anyTrack(podLabels)
			}
		case *gatewayv1.HTTPRoute:
			if d.Split {
				o.Spec.Rules[0].BackendRefs = splitBackends(p, d.StableWeight, d.CanaryWeight)
			}
		}
		out = append(out, c)
	}
	return append(out, canaryChildren(p, obs, d, podLabels, cfg)...)
}

// withCanaryReport is r with what the decision d says of the WebApp: its phase while the canary
// decides it (unless a ConfigMap or Secret is missing, which r tells), the Canary condition, and
// status.canary.
func withCanaryReport(r report, d *canary.Output, cfg configState) report {
	if cr := d.Report; cr != nil && cfg.missing == nil {
		r.phase, r.reason, r.message = cr.Phase, cr.Reason, cr.Message
	}
	if c := d.Condition; c != nil {
		r.conditions = append(r.conditions, statedCondition{webappv1.ConditionCanary, c.OK, c.Reason, c.Message})
	}
	r.canary = d.Status
	return r
}

// trackPods keeps the canary's pods (webappv1.LabelTrack) of pods, in a new slice: a template
// change that keeps the image (an environment variable, a ConfigMap's digest) leaves the stable
// pods running the spec's image too, and before the canary Deployment names its ReplicaSet,
// the image is all currentPods can tell them by.
func trackPods(pods []RelatedPod) []RelatedPod {
	var out []RelatedPod
	for _, p := range pods {
		if p.Labels[webappv1.LabelTrack] == webappv1.TrackCanary {
			out = append(out, p)
		}
	}
	return out
}

// stableRevision is the revision of the template the observed stable Deployment runs. When its
// spec hash is desired's, it runs desired's template: that is the usual case, and it costs
// nothing to tell. Otherwise it is the hash of the template Metacontroller last applied to it,
// which is the hook's own answer. A Deployment without one (adopted) runs desired's template when
// its spec hash is that of desired with the observed replicas; otherwise its revision cannot be
// told and is "". revision is desired's.
func stableRevision(c *Child, desired *appsv1.Deployment, revision string) string {
	if c.Deployment.SpecHash == desired.Annotations[AnnotationSpecHash] {
		return revision
	}
	if t, ok := AppliedTemplate(lastApplied(c)); ok {
		return TemplateHash(t)
	}
	spec := desired.Spec
	spec.Replicas = c.Deployment.Replicas
	if c.Deployment.SpecHash == SpecHash(&spec) {
		return revision
	}
	return ""
}

// canaryLabels are the labels of the canary's Deployment, its selector, its Service's selector
// and its pods: the WebApp's labels but webappv1.LabelName, which the stable Deployment and the
// Service <name>-stable select, and webappv1.LabelTrack. A new map each time.
func canaryLabels(labels map[string]string) map[string]string {
	out := anyTrack(labels)
	out[webappv1.LabelTrack] = webappv1.TrackCanary
	return out
}

// anyTrack is the pod labels but webappv1.LabelName, which only the stable pods carry: the
// selector of the Service <name> while a canary serves, which selects the pods of either track.
// A new map each time.
func anyTrack(podLabels map[string]string) map[string]string {
	out := make(map[string]string, len(podLabels))
	maps.Copy(out, podLabels)
	delete(out, webappv1.LabelName)
	return out
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

// RouteBackends are the Services of the route's one rule while a canary of WebApp name splits
// its traffic, in the order of its backendRefs: <name>-stable, then <name>-canary. A Gateway may
// number a backend's request metrics by its place (Traefik does).
func RouteBackends(name string) []string {
	return []string{name + webappv1.StableSuffix, name + webappv1.CanarySuffix}
}

// splitBackends are the route's backends while a canary splits the traffic (RouteBackends):
// stable to the Service <name>-stable, and canary to <name>-canary, each with its weight.
func splitBackends(p *Parent, stable, canaryWeight int32) []gatewayv1.HTTPBackendRef {
	group, kind, port := gatewayv1.Group(""), gatewayv1.Kind("Service"), gatewayv1.PortNumber(ServicePort)
	ref := func(name string, w int32) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Group: &group, Kind: &kind, Name: gatewayv1.ObjectName(name), Port: &port},
			Weight:                 &w,
		}}
	}
	names := RouteBackends(p.Name)
	return []gatewayv1.HTTPBackendRef{ref(names[0], stable), ref(names[1], canaryWeight)}
}

// resyncSeconds is a duration as resyncAfterSeconds, rounded up to the second; 0 for none.
func resyncSeconds(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return math.Ceil(d.Seconds())
}

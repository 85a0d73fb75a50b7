package sync

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/api/v1/validation"
	"github.com/example/webapp-operator/canary"
)

// AnnotationRevision records, on the canary Deployment, the revision of the pod template it
// runs (status.canary.revision).
const AnnotationRevision = "webapp.example.com/revision"

// AnnotationAborted records, on the canary Deployment of an aborted canary, the revision that was
// aborted. Aborting scales the canary to zero, which takes away the failures that aborted it, and
// Metacontroller may call with a status older than its last write: the annotation keeps such a
// call from starting the canary again.
const AnnotationAborted = "webapp.example.com/aborted"

// AnnotationPromoting records, on the canary Deployment of a canary being promoted, its
// revision: a promotion asked by annotation survives a status older than it, even once the
// annotation is gone.
const AnnotationPromoting = "webapp.example.com/promoting"

// canaryPlan is what Sync does for a canary: canary.Next's decision, with the revision it was
// made for.
type canaryPlan struct {
	canary.Output
	revision string
}

// planCanary fills in canary.Next's input from the request and returns its decision, or nil when
// the WebApp has no canary in its spec and none of a canary's children is observed: then nothing
// differs from a WebApp without the feature. deployment is the stable Deployment as the spec
// asks for it, with desired replicas.
func planCanary(req *Request, obs *observedChildren, deployment *appsv1.Deployment, desired int32, now time.Time) *canaryPlan {
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
		Name:           p.Name,
		Plan:           plan,
		Last:           p.Canary,
		Revision:       revision,
		StableReplicas: desired,
		Routed:         p.Spec.Route != nil && req.Declares(RouteKind),
		Now:            now,
	}
	if plan == nil {
		in.Last = nil
	}
	if d := obs.deployment; d != nil {
		in.HasStable = true
		in.StableRevision = stableRevision(d, deployment, revision)
		hash := deployment.Annotations[AnnotationSpecHash]
		phase, _, _ := rollout(p, d.Deployment, hash, desired, nil)
		in.StableRolled = in.StableRevision == revision && phase == webappv1.PhaseReady
	}
	if c := obs.canary; c != nil {
		d := c.Deployment
		in.Canary = &canary.Deployment{
			Replicas:           replicasOf(d),
			Current:            d.Revision == revision && d.Status.Replicas == d.Status.UpdatedReplicas,
			Generation:         d.Generation,
			ObservedGeneration: d.Status.ObservedGeneration,
			Aborted:            d.Aborted != "" && d.Aborted == revision,
			Promoting:          d.Promoting != "" && d.Promoting == revision,
			Total:              d.Status.Replicas,
			Available:          d.Status.AvailableReplicas,
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
	in.ServicesObserved = obs.canaryService != nil && obs.stableService != nil
	in.Promote = p.Promote != "" && p.Promote == revision
	in.Abort = p.Abort != "" && p.Abort == revision
	return &canaryPlan{Output: canary.Next(in), revision: revision}
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
	if last := lastApplied(c); last != "" {
		var applied struct {
			Spec struct {
				Template *corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		if json.Unmarshal([]byte(last), &applied) == nil && applied.Spec.Template != nil {
			return TemplateHash(applied.Spec.Template)
		}
	}
	spec := desired.Spec
	spec.Replicas = c.Deployment.Replicas
	if c.Deployment.SpecHash == SpecHash(&spec) {
		return revision
	}
	return ""
}

// canaryFailure is a sentence when the canary Deployment reports, for its current generation,
// that it cannot create pods or has exceeded its progress deadline; "" otherwise.
func canaryFailure(c *Child) string {
	st := c.Deployment.Status
	if st.ObservedGeneration < c.Deployment.Generation {
		return ""
	}
	if f := deploymentCondition(st, appsv1.DeploymentReplicaFailure); f != nil && f.Status == string(corev1.ConditionTrue) {
		return fmt.Sprintf("Deployment %s cannot create pods (%s): %s", c.Name, createFailureReason(f), sentence(validation.Cut(refusal(f.Message), maxQuotedMessage)))
	}
	if f := deploymentCondition(st, appsv1.DeploymentProgressing); f != nil && f.Reason == "ProgressDeadlineExceeded" {
		return fmt.Sprintf("Deployment %s exceeded its progress deadline", c.Name)
	}
	return ""
}

// canaryLabels are the labels of the canary's Deployment, its selector, its Service's selector
// and its pods: the WebApp's labels but webappv1.LabelName, which the stable Deployment and the
// Service <name>-stable select, and webappv1.LabelTrack. A new map each time.
func canaryLabels(labels map[string]string) map[string]string {
	out := relaxed(labels)
	out[webappv1.LabelTrack] = webappv1.TrackCanary
	return out
}

// relaxed is the selector of the Service <name> while a canary serves: the pod labels but
// webappv1.LabelName, so that it selects the canary's pods too.
func relaxed(podLabels map[string]string) map[string]string {
	out := make(map[string]string, len(podLabels))
	maps.Copy(out, podLabels)
	delete(out, webappv1.LabelName)
	return out
}

// canaryChildren returns the children plan asks for beyond the stable Deployment and the Service
// <name>: the canary Deployment, and the Services <name>-canary and <name>-stable.
func canaryChildren(p *Parent, obs *observedChildren, plan *canaryPlan, podLabels map[string]string, cfg configState) []runtime.Object {
	var out []runtime.Object
	cl := canaryLabels(labelsFor(p.Name))
	name := p.Name + webappv1.CanarySuffix
	switch plan.Canary {
	case canary.CanaryRun:
		if cfg.missing != nil { // not rolled into pods that could not start
			if obs.canary != nil {
				out = append(out, keptForm(obs.canary))
			}
			break
		}
		out = append(out, desiredCanary(p, plan, cl, cfg))
	case canary.CanaryKeep, canary.CanaryZero:
		if obs.canary == nil {
			break
		}
		var obj map[string]any
		if plan.Canary == canary.CanaryZero {
			obj = withReplicas(obs.canary, 0).(*unstructured.Unstructured).Object
		} else {
			obj = keptObject(obs.canary)
		}
		if st := plan.Status; st != nil && st.Phase == webappv1.CanaryAborted {
			markAborted(obj, st.Revision)
		}
		out = append(out, &unstructured.Unstructured{Object: obj})
	}
	if plan.Services && p.Spec.Port != nil {
		canarySvc := desiredService(p, cl, cl)
		canarySvc.Name = name
		stable := desiredService(p, labelsFor(p.Name), podLabels)
		stable.Name = p.Name + webappv1.StableSuffix
		out = append(out, canarySvc, stable)
	}
	return out
}

// markAborted sets AnnotationAborted to revision on the kept form of a canary Deployment.
func markAborted(obj map[string]any, revision string) {
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
		meta["annotations"] = annotations
	}
	annotations[AnnotationAborted] = revision
}

// desiredCanary builds the canary Deployment: the stable Deployment the spec asks for, under
// the canary's name, labels and selector, with the plan's replicas and the revision it runs.
func desiredCanary(p *Parent, plan *canaryPlan, labels map[string]string, cfg configState) *appsv1.Deployment {
	n := plan.CanaryReplicas
	selector := &metav1.LabelSelector{MatchLabels: labels}
	d := desiredDeployment(p, &n, labels, selector, labels, cfg)
	d.Name = p.Name + webappv1.CanarySuffix
	hashed := d.Spec
	d.Annotations = map[string]string{AnnotationSpecHash: SpecHash(&hashed), AnnotationRevision: plan.revision}
	if st := plan.Status; st != nil && st.Phase == webappv1.CanaryPromoting {
		d.Annotations[AnnotationPromoting] = plan.revision
	}
	if cfg.partialHash != "" {
		d.Annotations[AnnotationPartialConfigHash] = cfg.partialHash
	}
	return d
}

// splitBackends are the route's backends while a canary splits the traffic: stable to the
// Service <name>-stable, and canary to <name>-canary, each with its weight.
func splitBackends(p *Parent, stable, canaryWeight int32) []gatewayv1.HTTPBackendRef {
	group, kind, port := gatewayv1.Group(""), gatewayv1.Kind("Service"), gatewayv1.PortNumber(ServicePort)
	ref := func(name string, w int32) gatewayv1.HTTPBackendRef {
		return gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Group: &group, Kind: &kind, Name: gatewayv1.ObjectName(name), Port: &port},
			Weight:                 &w,
		}}
	}
	return []gatewayv1.HTTPBackendRef{ref(p.Name+webappv1.StableSuffix, stable), ref(p.Name+webappv1.CanarySuffix, canaryWeight)}
}

// resyncSeconds is a duration as resyncAfterSeconds, rounded up to the second; 0 for none.
func resyncSeconds(d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return math.Ceil(d.Seconds())
}

// canaryReport is the WebApp's report while a canary runs or after one was aborted, and nil when
// the stable Deployment's rollout tells the story (no canary, or one that ended otherwise).
func canaryReport(plan *canaryPlan) *report {
	st := plan.Status
	switch {
	case st == nil:
		return nil
	case plan.Serving:
		return &report{phase: webappv1.PhaseProgressing, reason: webappv1.ReasonCanaryProgressing, message: "Canary " + st.Revision + ": " + st.Message}
	case st.Phase == webappv1.CanaryAborted && st.Revision == plan.revision:
		return &report{phase: webappv1.PhaseDegraded, reason: webappv1.ReasonCanaryAborted, message: st.Message}
	}
	return nil
}

// canaryCondition is the Canary condition, while spec.rollout.canary is set.
func canaryCondition(plan *canaryPlan) statedCondition {
	st := plan.Status
	if st == nil {
		return statedCondition{webappv1.ConditionCanary, true, webappv1.ReasonCanaryIdle, "No canary has run: the stable Deployment runs the current pod template."}
	}
	return statedCondition{webappv1.ConditionCanary, st.Phase != webappv1.CanaryAborted, string(st.Phase), st.Message}
}

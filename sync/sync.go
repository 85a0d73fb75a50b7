package sync

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

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
	// ResyncAfterSeconds asks for one more call after this delay; 0 asks for none.
	ResyncAfterSeconds float64
	// Finalized is set by Finalize only: true once no child is observed.
	Finalized *bool
}

// Sync answers the sync hook: the children a WebApp should have and its status, computed from the
// observed children only. now stamps the Ready condition's lastTransitionTime when its status changes.
//
// With an invalid spec it returns phase Invalid and every observed child unchanged, so nothing
// running is deleted or altered. Children the hook does not build (other kinds, or children with
// another name) are also kept unchanged: deleting what it does not understand is never the hook's
// call. With a valid spec, the Service, the Ingress and the PodDisruptionBudget are desired only
// while the spec asks for them, so an observed one the spec no longer asks for is deleted; those
// are the only children a sync ever lets go.
func Sync(req *Request, now time.Time) Response {
	p := &req.Parent
	dep := req.observed(DeploymentKind)
	base := baseStatus(req)

	if errs := Validate(p); len(errs) > 0 {
		kept := make([]runtime.Object, 0, len(req.Children))
		for i := range req.Children {
			kept = append(kept, keptForm(&req.Children[i]))
		}
		msg := "Invalid spec, children left unchanged: " + errorsMessage(errs) + "."
		return Response{Status: withReady(base, p, now, webappv1.PhaseInvalid, webappv1.ReasonInvalidSpec, msg), Children: kept}
	}

	var observedDeployment *ObservedDeployment
	if dep != nil {
		observedDeployment = dep.Deployment
	}
	cfg := checkConfig(p, &req.Related, observedDeployment)
	labels, selector, pods := podLabels(p, observedDeployment)
	replicas := replicasFor(&p.Spec, observedDeployment)
	deployment := desiredDeployment(p, replicas, labels, selector, pods, cfg.hash)
	var children []runtime.Object
	switch {
	case cfg.missing == nil:
		children = append(children, deployment)
	case dep != nil: // not rolled into pods that could not start
		children = append(children, keptForm(dep))
	}
	if p.Spec.Port != nil {
		children = append(children, desiredService(p, labels, pods))
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
	for i := range req.Children {
		if c := &req.Children[i]; !owned(c, p) {
			children = append(children, keptForm(c))
		}
	}
	desired := *replicas
	var current []RelatedPod
	if observedDeployment != nil {
		specApplied := observedDeployment.SpecHash == deployment.Annotations[AnnotationSpecHash]
		current = currentPods(&req.Related, observedDeployment, dep.Name, specApplied, p.Spec.Image)
		base.Restarts = restarts(current)
	}
	var phase webappv1.Phase
	var reason, msg string
	if cfg.missing != nil {
		phase, reason, msg = cfg.missingMessage(p, dep != nil)
	} else {
		phase, reason, msg = rollout(p, observedDeployment, deployment.Annotations[AnnotationSpecHash], desired, diagnose(current))
	}
	status := withReady(base, p, now, phase, reason, msg)
	if p.Spec.Ingress != nil {
		status.Conditions = append(status.Conditions, ingressCondition(req, now))
	}
	if a := p.Spec.Autoscaling; a != nil {
		c, hpa := autoscalingCondition(req, now)
		status.Conditions = append(status.Conditions, c)
		if hpa != nil && hpa.DesiredReplicas > 0 {
			status.DesiredReplicas = &hpa.DesiredReplicas
		}
		status.Message += fmt.Sprintf(" The HorizontalPodAutoscaler sets the replicas, from %d to %d; spec.replicas is ignored.", *a.MinReplicas, a.MaxReplicas)
		if c.Status != metav1.ConditionTrue {
			status.Message += " " + c.Message
		}
	}
	if names := untrackedSecrets(p, &req.Related); len(names) > 0 {
		status.Conditions = append(status.Conditions, secretsCondition(p, now, names))
	}
	return Response{Status: status, Children: children}
}

// requests reports whether resources request name.
func requests(r *corev1.ResourceRequirements, name corev1.ResourceName) bool {
	if r == nil {
		return false
	}
	_, ok := r.Requests[name]
	return ok
}

// autoscalingCondition reports whether the WebApp's observed HorizontalPodAutoscaler can scale,
// with the autoscaler's own reason when it cannot, and returns that autoscaler (nil when none is
// observed). It also says when a utilization target has no resource request to be a percentage
// of: a LimitRange may still supply one, so that is not an invalid spec.
func autoscalingCondition(req *Request, now time.Time) (metav1.Condition, *ObservedAutoscaler) {
	p := &req.Parent
	var missing []string
	cpu, memory := p.Spec.Autoscaling.TargetCPUUtilizationPercentage, p.Spec.Autoscaling.TargetMemoryUtilizationPercentage
	for _, t := range []struct {
		name   corev1.ResourceName
		target *int32
		field  string
	}{{corev1.ResourceCPU, cpu, "targetCPUUtilizationPercentage"}, {corev1.ResourceMemory, memory, "targetMemoryUtilizationPercentage"}} {
		if t.target != nil && !requests(p.Spec.Resources, t.name) {
			missing = append(missing, fmt.Sprintf("spec.resources.requests has no %s for %s, so unless a LimitRange sets one, the autoscaler cannot measure it.", t.name, t.field))
		}
	}
	note := strings.Join(append([]string{""}, missing...), " ")
	c := req.observed(AutoscalerKind)
	if c == nil {
		return condition(p, now, webappv1.ConditionAutoscaling, false, webappv1.ReasonAutoscalerMissing, fmt.Sprintf("Waiting for HorizontalPodAutoscaler %s to be created.", p.Name)+note), nil
	}
	hpa := c.Autoscaler
	reported := false
	for _, t := range []autoscalingv2.HorizontalPodAutoscalerConditionType{autoscalingv2.AbleToScale, autoscalingv2.ScalingActive} {
		for _, hc := range hpa.Conditions {
			if hc.Type != string(t) {
				continue
			}
			reported = true
			if hc.Status == string(corev1.ConditionFalse) {
				return condition(p, now, webappv1.ConditionAutoscaling, false, cmp.Or(hc.Reason, string(t)),
					fmt.Sprintf("HorizontalPodAutoscaler %s cannot scale: %s", p.Name, sentence(hc.Message))+note), hpa
			}
		}
	}
	if !reported {
		return condition(p, now, webappv1.ConditionAutoscaling, false, webappv1.ReasonAutoscalerPending, fmt.Sprintf("HorizontalPodAutoscaler %s has not reported yet.", p.Name)+note), hpa
	}
	return condition(p, now, webappv1.ConditionAutoscaling, true, webappv1.ReasonScalingActive, fmt.Sprintf("HorizontalPodAutoscaler %s can scale.", p.Name)+note), hpa
}

// ingressCondition reports whether the WebApp's observed Ingress has a load-balancer address.
func ingressCondition(req *Request, now time.Time) metav1.Condition {
	p := &req.Parent
	c := req.observed(IngressKind)
	if c == nil {
		return condition(p, now, webappv1.ConditionIngressReady, false, webappv1.ReasonIngressMissing, fmt.Sprintf("Waiting for Ingress %s to be created.", p.Name))
	}
	var addresses []string
	for _, lb := range c.Ingress.LoadBalancer {
		if a := cmp.Or(lb.Hostname, lb.IP); a != "" {
			addresses = append(addresses, a)
		}
	}
	if len(addresses) == 0 {
		return condition(p, now, webappv1.ConditionIngressReady, false, webappv1.ReasonLoadBalancerPending, fmt.Sprintf("Ingress %s has no load-balancer address yet.", p.Name))
	}
	return condition(p, now, webappv1.ConditionIngressReady, true, webappv1.ReasonLoadBalancerReady, fmt.Sprintf("Ingress %s is served at %s.", p.Name, strings.Join(addresses, ", ")))
}

// Finalize answers the finalize hook with an ordered teardown that is safe to repeat in any state:
//  1. while a Service (or any child that is not a Deployment) is observed, it is deleted and
//     Deployments are kept unchanged, so traffic stops before pods do;
//  2. then each Deployment is scaled to 0, and kept until its status shows no pods;
//  3. then the Deployment is deleted.
//
// Finalized is true only when no child is observed. The spec is not read: a WebApp with an
// invalid spec is torn down the same way.
func Finalize(req *Request, now time.Time) Response {
	p := &req.Parent
	base := baseStatus(req)
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
	resp := Response{
		Status:    withReady(base, p, now, webappv1.PhaseTerminating, webappv1.ReasonTerminating, msg),
		Children:  children,
		Finalized: &done,
	}
	if !done {
		resp.ResyncAfterSeconds = FinalizeResyncSeconds
	}
	return resp
}

// owned reports whether a child is one the hook builds for p: of a kind the hook builds, named
// after p. Those are answered from the spec; every other child is kept as it is.
func owned(c *Child, p *Parent) bool {
	return c.Built && c.Name == p.Name && c.Namespace == p.Namespace
}

// observed returns the observed child of kind k that is named after the WebApp, in its
// namespace, or nil: the child the hook builds of that kind (owned), and no other.
func (r *Request) observed(k *Kind) *Child {
	for i := range r.Children {
		c := &r.Children[i]
		if c.is(k) && owned(c, &r.Parent) {
			return c
		}
	}
	return nil
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

// baseStatus fills in what is read straight from the observed children: the Deployment's counts,
// and the URL while the Service exists.
func baseStatus(req *Request) webappv1.WebAppStatus {
	p := &req.Parent
	s := webappv1.WebAppStatus{ObservedGeneration: p.Generation}
	if dep := req.observed(DeploymentKind); dep != nil {
		st := dep.Deployment.Status
		s.Replicas = st.Replicas
		s.UpdatedReplicas = st.UpdatedReplicas
		s.ReadyReplicas = st.ReadyReplicas
		s.AvailableReplicas = st.AvailableReplicas
		s.Selector = selectorString(dep.Deployment.Selector)
	}
	if req.observed(ServiceKind) != nil {
		s.Address = fmt.Sprintf("http://%s.%s.svc", p.Name, p.Namespace)
		s.URL = s.Address
	}
	if c := req.observed(IngressKind); c != nil {
		if url := ingressURL(c.Ingress); url != "" {
			s.URL = url
		}
	}
	return s
}

// selectorString renders an observed Deployment's selector as status.selector, the string form
// the scale subresource reports: "" for none or one that does not parse.
func selectorString(sel *metav1.LabelSelector) string {
	if sel == nil {
		return ""
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return ""
	}
	return s.String()
}

// ingressURL is where an observed Ingress serves its first rule: https://<host><path> when it has
// TLS for that host, http:// otherwise; "" when it has no host.
func ingressURL(ing *ObservedIngress) string {
	if len(ing.Rules) == 0 || ing.Rules[0].Host == "" {
		return ""
	}
	rule := ing.Rules[0]
	path := "/"
	if rule.HTTP != nil && len(rule.HTTP.Paths) > 0 && rule.HTTP.Paths[0].Path != "" {
		path = rule.HTTP.Paths[0].Path
	}
	scheme := "http"
	for _, tls := range ing.TLS {
		if slices.Contains(tls.Hosts, rule.Host) {
			scheme = "https"
		}
	}
	return scheme + "://" + rule.Host + path
}

// rollout decides phase, reason and message for a valid spec, following `kubectl rollout status`:
// ready only when the observed Deployment d carries the current spec (its spec hash and the desired
// replicas match), its controller has observed that generation, and every desired replica is
// updated and available with no old pod left. d is nil when no Deployment is observed. Pods of the
// current spec that cannot start (trouble, nil for none) make it Degraded with their reason at
// once, without waiting for the Deployment's progress deadline.
func rollout(p *Parent, d *ObservedDeployment, hash string, desired int32, trouble *podTrouble) (webappv1.Phase, string, string) {
	if d == nil {
		return webappv1.PhasePending, webappv1.ReasonDeploymentMissing, fmt.Sprintf("Waiting for Deployment %s to be created.", p.Name)
	}
	st := d.Status
	progressing := func(msg string) (webappv1.Phase, string, string) {
		return webappv1.PhaseProgressing, webappv1.ReasonRolloutInProgress, msg
	}
	if trouble != nil {
		return webappv1.PhaseDegraded, trouble.reason, trouble.message()
	}
	switch {
	case d.SpecHash != hash || replicasOf(d) != desired:
		return progressing(fmt.Sprintf("Waiting for Deployment %s to be updated to the current spec.", p.Name))
	case st.ObservedGeneration < d.Generation:
		return progressing(fmt.Sprintf("Waiting for Deployment %s's controller to observe generation %d.", p.Name, d.Generation))
	}
	if c := deploymentCondition(st, appsv1.DeploymentProgressing); c != nil && c.Reason == "ProgressDeadlineExceeded" {
		return webappv1.PhaseDegraded, webappv1.ReasonProgressDeadlineExceeded,
			fmt.Sprintf("Deployment %s exceeded its progress deadline: %s", p.Name, sentence(c.Message))
	}
	switch {
	case st.UpdatedReplicas < desired:
		return progressing(fmt.Sprintf("Rollout in progress: %d of %d new replicas updated.", st.UpdatedReplicas, desired))
	case st.Replicas > st.UpdatedReplicas:
		return progressing(fmt.Sprintf("Rollout in progress: %s pending termination.", count(int(st.Replicas-st.UpdatedReplicas), "old replica")))
	case st.AvailableReplicas < desired:
		return progressing(fmt.Sprintf("Rollout in progress: %d of %d updated replicas available.", st.AvailableReplicas, desired))
	case st.Replicas != desired || st.UpdatedReplicas != desired:
		return progressing(fmt.Sprintf("Rollout in progress: %d replicas running, %d desired.", st.Replicas, desired))
	case desired == 0:
		return webappv1.PhaseReady, webappv1.ReasonRolloutComplete, "Scaled to zero."
	}
	return webappv1.PhaseReady, webappv1.ReasonRolloutComplete, fmt.Sprintf("All %s available and up to date.", count(int(desired), "replica"))
}

// replicasOf is a Deployment's spec.replicas, 1 when omitted, as the apiserver defaults it.
func replicasOf(d *ObservedDeployment) int32 {
	if d.Replicas == nil {
		return 1
	}
	return *d.Replicas
}

// withReady completes a status with its phase, message, ready flag and Ready condition.
func withReady(s webappv1.WebAppStatus, p *Parent, now time.Time, phase webappv1.Phase, reason, msg string) webappv1.WebAppStatus {
	s.Phase = phase
	s.Ready = phase == webappv1.PhaseReady
	s.Message = msg
	s.Conditions = []metav1.Condition{condition(p, now, webappv1.ConditionReady, s.Ready, reason, msg)}
	return s
}

// condition makes a condition of p's generation. It keeps the previous lastTransitionTime of its
// type while its status does not change, and takes now otherwise.
func condition(p *Parent, now time.Time, conditionType string, ok bool, reason, msg string) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	transition := metav1.NewTime(now.UTC().Truncate(time.Second))
	for _, c := range p.Conditions {
		if c.Type == conditionType && c.Status == status && !c.LastTransitionTime.IsZero() {
			transition = c.LastTransitionTime
		}
	}
	return metav1.Condition{
		Type:               conditionType,
		Status:             status,
		ObservedGeneration: p.Generation,
		LastTransitionTime: transition,
		Reason:             reason,
		Message:            msg,
	}
}

func deploymentCondition(st ObservedDeploymentStatus, t appsv1.DeploymentConditionType) *ObservedCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == string(t) && st.Conditions[i].Status != string(corev1.ConditionUnknown) {
			return &st.Conditions[i]
		}
	}
	return nil
}

// count renders "1 replica" or "3 replicas"; an explicit plural form may follow the singular.
func count(n int, singular string, pluralForm ...string) string {
	p := singular + "s"
	if len(pluralForm) > 0 {
		p = pluralForm[0]
	}
	return fmt.Sprintf("%d %s", n, plural(n, p, singular))
}

func plural(n int, many, one string) string {
	if n == 1 {
		return one
	}
	return many
}

// sentence ends s with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}

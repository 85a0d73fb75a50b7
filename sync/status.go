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

	webappv1 "github.com/example/webapp-operator/api/v1"
)

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

func deploymentCondition(st ObservedDeploymentStatus, t appsv1.DeploymentConditionType) *ObservedCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == string(t) && st.Conditions[i].Status != string(corev1.ConditionUnknown) {
			return &st.Conditions[i]
		}
	}
	return nil
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

// requests reports whether resources request name.
func requests(r *corev1.ResourceRequirements, name corev1.ResourceName) bool {
	if r == nil {
		return false
	}
	_, ok := r.Requests[name]
	return ok
}

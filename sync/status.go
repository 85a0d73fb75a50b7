package sync

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
	"github.com/example/webapp-operator/internal/english"
)

// report is what a decision says of a WebApp, beyond what its observed children show: its phase
// with the reason and message of its Ready condition, its other conditions, and the figures only
// the decision knows. newStatus turns it into the status.
type report struct {
	phase   webappv1.Phase
	reason  string
	message string
	// notes follow message in status.message, and are not part of the Ready condition.
	notes []string
	// conditions follow the Ready condition, in this order.
	conditions []statedCondition
	// restarts and desiredReplicas are status.restarts and status.desiredReplicas; without
	// desiredReplicas, the status takes the observed Deployment's count.
	restarts        int32
	desiredReplicas *int32
	// canary is status.canary: the canary's state, carried from one call to the next.
	canary *webappv1.CanaryStatus
}

// statedCondition is a condition as a decision states it; newStatus gives it the WebApp's
// generation and the time of its last transition.
type statedCondition struct {
	conditionType   string
	ok              bool
	reason, message string
}

// newStatus puts a WebApp's status together, the one place it is: what the observed children
// show (the Deployment's counts and selector, the address while the Service exists, the
// Ingress's url, the HTTPRoute's once it is routed), then what the report says. now stamps a
// condition whose status changes; one that keeps its status keeps its previous
// lastTransitionTime.
func newStatus(req *Request, obs observedChildren, now time.Time, r report) webappv1.WebAppStatus {
	p := &req.Parent
	s := webappv1.WebAppStatus{
		ObservedGeneration: p.Generation,
		Phase:              r.phase,
		Ready:              r.phase == webappv1.PhaseReady,
		Message:            strings.Join(append([]string{r.message}, r.notes...), " "),
		Restarts:           r.restarts,
		DesiredReplicas:    r.desiredReplicas,
		Canary:             r.canary,
	}
	if dep := obs.deployment; dep != nil {
		st := dep.Deployment.Status
		s.Replicas = st.Replicas
		s.UpdatedReplicas = st.UpdatedReplicas
		s.ReadyReplicas = st.ReadyReplicas
		s.AvailableReplicas = st.AvailableReplicas
		s.Selector = selectorString(dep.Deployment.Selector)
		if s.DesiredReplicas == nil { // an invalid spec, a teardown: the Deployment's own count
			desired := int32(webappv1.DefaultReplicas) // the apiserver's default
			if r := dep.Deployment.Replicas; r != nil {
				desired = *r
			}
			s.DesiredReplicas = &desired
		}
	}
	if s.DesiredReplicas != nil {
		s.ReadyOfDesired = fmt.Sprintf("%d/%d", s.ReadyReplicas, *s.DesiredReplicas)
	}
	if obs.service != nil {
		s.Address = fmt.Sprintf("http://%s.%s.svc", p.Name, p.Namespace)
		s.URL = s.Address
	}
	if c := obs.ingress; c != nil {
		if url := ingressURL(c.Ingress); url != "" {
			s.URL = url
		}
	}
	if c := obs.route; c != nil { // once routed, it wins over the Ingress
		if url := routeURL(p, c.Route, req.Related.Gateways); url != "" {
			s.URL = url
		}
	}
	ready := statedCondition{webappv1.ConditionReady, s.Ready, r.reason, r.message}
	for _, c := range append([]statedCondition{ready}, r.conditions...) {
		s.Conditions = append(s.Conditions, condition(p, now, c))
	}
	return s
}

// condition makes a stated condition a condition of p's generation. It keeps the previous
// lastTransitionTime of its type while its status does not change, and takes now otherwise.
func condition(p *Parent, now time.Time, c statedCondition) metav1.Condition {
	status := metav1.ConditionFalse
	if c.ok {
		status = metav1.ConditionTrue
	}
	transition := metav1.NewTime(now.UTC().Truncate(time.Second))
	for _, prev := range p.Conditions {
		if prev.Type == c.conditionType && prev.Status == status && !prev.LastTransitionTime.IsZero() {
			transition = prev.LastTransitionTime
		}
	}
	return metav1.Condition{
		Type:               c.conditionType,
		Status:             status,
		ObservedGeneration: p.Generation,
		LastTransitionTime: transition,
		Reason:             c.reason,
		Message:            c.message,
	}
}

// syncReport is Sync's report for a valid spec whose Deployment's spec hashes to hash, with
// desired replicas: where the rollout stands (rollout), or the ConfigMap or Secret it waits for;
// why pods of the current spec cannot start; and the IngressReady, Routed, Autoscaling and
// SecretsTracked conditions when the spec has them.
func syncReport(req *Request, obs *observedChildren, hash string, desired int32, cfg configState) report {
	p := &req.Parent
	r := report{desiredReplicas: &desired}
	var observed *ObservedDeployment
	var current []RelatedPod
	if dep := obs.deployment; dep != nil {
		observed = dep.Deployment
		current = currentPods(&req.Related, observed, dep.Name, observed.SpecHash == hash, p.Spec.Image)
		r.restarts = restarts(current)
	}
	if cfg.missing != nil {
		r.phase, r.reason, r.message = cfg.missingMessage(p, observed != nil)
	} else {
		r.phase, r.reason, r.message = rollout(p, observed, hash, desired, diagnose(current))
	}
	if p.Spec.Ingress != nil {
		r.conditions = append(r.conditions, ingressCondition(p, obs.ingress))
	}
	if p.Spec.Route != nil {
		c := routeCondition(req, obs.route)
		r.conditions = append(r.conditions, c)
		if c.reason == webappv1.ReasonGatewayAPINotEnabled { // the install's to fix: say it up front
			r.notes = append(r.notes, c.message)
		}
	}
	if a := p.Spec.Autoscaling; a != nil {
		c, hpa := autoscalingCondition(p, obs.autoscaler)
		r.conditions = append(r.conditions, c)
		if hpa != nil && hpa.DesiredReplicas > 0 {
			n := hpa.DesiredReplicas
			r.desiredReplicas = &n
		}
		r.notes = append(r.notes, fmt.Sprintf("The HorizontalPodAutoscaler sets the replicas, from %d to %d; spec.replicas is ignored.", *a.MinReplicas, a.MaxReplicas))
		if !c.ok {
			r.notes = append(r.notes, c.message)
		}
	}
	if names := untrackedSecrets(p, &req.Related); len(names) > 0 {
		r.conditions = append(r.conditions, secretsCondition(names))
	}
	return r
}

// withCanaryReport is r with what the canary's decision d says of the WebApp: the phase, reason
// and message of d.Report while the canary tells the story, unless a ConfigMap or Secret the
// spec references is missing (missing), which r tells, as the canary's pods could not start
// either; the Canary condition after r's; and status.canary.
func withCanaryReport(r report, d *canary.Output, missing bool) report {
	if cr := d.Report; cr != nil && !missing {
		r.phase, r.reason, r.message = cr.Phase, cr.Reason, cr.Message
	}
	if c := d.Condition; c != nil {
		r.conditions = append(r.conditions, statedCondition{webappv1.ConditionCanary, c.OK, c.Reason, c.Message})
	}
	r.canary = d.Status
	return r
}

// selectorString renders an observed Deployment's selector as status.selector, the string form
// the scale subresource reports: "" for none or one that does not parse. The apiserver has
// validated the selector already, so the usual one, matchLabels only, is rendered without
// validating each label again (docs/performance.md says what that buys).
func selectorString(sel *metav1.LabelSelector) string {
	if sel == nil {
		return ""
	}
	if len(sel.MatchExpressions) == 0 {
		return labels.SelectorFromValidatedSet(sel.MatchLabels).String()
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
// once, without waiting for the Deployment's progress deadline; so does a Deployment of the
// current spec that reports ReplicaFailure, with the apiserver's reason (createFailureReason).
func rollout(p *Parent, d *ObservedDeployment, hash string, desired int32, trouble *podTrouble) (webappv1.Phase, string, string) {
	if d == nil {
		return webappv1.PhasePending, webappv1.ReasonDeploymentMissing, fmt.Sprintf("Waiting for Deployment %s to be created.", p.Name)
	}
	progressing := func(msg string) (webappv1.Phase, string, string) {
		return webappv1.PhaseProgressing, webappv1.ReasonRolloutInProgress, msg
	}
	if trouble != nil {
		return webappv1.PhaseDegraded, trouble.reason, trouble.message()
	}
	switch {
	case !d.carries(hash, desired):
		return progressing(fmt.Sprintf("Waiting for Deployment %s to be updated to the current spec.", p.Name))
	case !d.caughtUp():
		return progressing(fmt.Sprintf("Waiting for Deployment %s's controller to observe generation %d.", p.Name, d.Generation))
	}
	switch f := d.failure(); {
	case f != nil && f.deadline:
		return webappv1.PhaseDegraded, f.reason, fmt.Sprintf("Deployment %s exceeded its progress deadline: %s", p.Name, sentence(f.message))
	case f != nil:
		return webappv1.PhaseDegraded, f.reason, fmt.Sprintf("Deployment %s cannot create pods: %s", p.Name, f.refused())
	}
	switch {
	case !d.rolledOut(desired):
		return progressing(d.progress(desired))
	case desired == 0:
		return webappv1.PhaseReady, webappv1.ReasonRolloutComplete, "Scaled to zero."
	}
	return webappv1.PhaseReady, webappv1.ReasonRolloutComplete, fmt.Sprintf("All %s available and up to date.", english.Count(desired, "replica"))
}

// createFailureReason is the Ready reason for a Deployment's ReplicaFailure condition c: a finer
// reason when the apiserver's message shows one, else the condition's own (FailedCreate).
func createFailureReason(c *ObservedCondition) string {
	m := c.Message
	switch {
	case strings.Contains(m, "exceeded quota") || strings.Contains(m, "failed quota") || strings.Contains(m, "status unknown for quota"):
		return webappv1.ReasonQuotaExceeded
	case strings.Contains(m, "violates PodSecurity"):
		return webappv1.ReasonPodSecurityViolation
	case strings.Contains(m, "error looking up service account"):
		return webappv1.ReasonServiceAccountMissing
	}
	return cmp.Or(c.Reason, webappv1.ReasonFailedCreate)
}

// refusal is the apiserver's refusal of a pod without the pod's name, which changes with every
// attempt: `pods "web-5d8c7-x2kq" is forbidden: exceeded quota: …` becomes `exceeded quota: …`,
// so that the status stays the same from one call to the next.
func refusal(m string) string {
	if _, rest, ok := strings.Cut(m, " is forbidden: "); ok {
		return rest
	}
	return m
}

// ingressCondition reports whether the WebApp's observed Ingress, c (nil when none), has a
// load-balancer address.
func ingressCondition(p *Parent, c *Child) statedCondition {
	if c == nil {
		return statedCondition{webappv1.ConditionIngressReady, false, webappv1.ReasonIngressMissing, fmt.Sprintf("Waiting for Ingress %s to be created.", p.Name)}
	}
	var addresses []string
	for _, lb := range c.Ingress.LoadBalancer {
		if a := cmp.Or(lb.Hostname, lb.IP); a != "" {
			addresses = append(addresses, a)
		}
	}
	if len(addresses) == 0 {
		return statedCondition{webappv1.ConditionIngressReady, false, webappv1.ReasonLoadBalancerPending, fmt.Sprintf("Ingress %s has no load-balancer address yet.", p.Name)}
	}
	return statedCondition{webappv1.ConditionIngressReady, true, webappv1.ReasonLoadBalancerReady, fmt.Sprintf("Ingress %s is served at %s.", p.Name, strings.Join(addresses, ", "))}
}

// autoscalingCondition reports whether the WebApp's observed HorizontalPodAutoscaler, c (nil when
// none), can scale,
// with the autoscaler's own reason when it cannot, and returns that autoscaler (nil when none is
// observed). It also says when a utilization target has no resource request to be a percentage
// of: a LimitRange may still supply one, so that is not an invalid spec.
func autoscalingCondition(p *Parent, c *Child) (statedCondition, *ObservedAutoscaler) {
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
	if c == nil {
		return statedCondition{webappv1.ConditionAutoscaling, false, webappv1.ReasonAutoscalerMissing, fmt.Sprintf("Waiting for HorizontalPodAutoscaler %s to be created.", p.Name) + note}, nil
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
				return statedCondition{webappv1.ConditionAutoscaling, false, cmp.Or(hc.Reason, string(t)),
					fmt.Sprintf("HorizontalPodAutoscaler %s cannot scale: %s", p.Name, sentence(hc.Message)) + note}, hpa
			}
		}
	}
	if !reported {
		return statedCondition{webappv1.ConditionAutoscaling, false, webappv1.ReasonAutoscalerPending, fmt.Sprintf("HorizontalPodAutoscaler %s has not reported yet.", p.Name) + note}, hpa
	}
	return statedCondition{webappv1.ConditionAutoscaling, true, webappv1.ReasonScalingActive, fmt.Sprintf("HorizontalPodAutoscaler %s can scale.", p.Name) + note}, hpa
}

// requests reports whether resources request name.
func requests(r *corev1.ResourceRequirements, name corev1.ResourceName) bool {
	if r == nil {
		return false
	}
	_, ok := r.Requests[name]
	return ok
}

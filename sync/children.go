package sync

import (
	"errors"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// Names and annotations the hook puts on its children; the labels, which the spec may not set,
// are webappv1's (webappv1.LabelName and the others).
const (
	// ContainerName is the name of the single container in the pod template.
	ContainerName = "app"
	// PortName names the container port and the Service port.
	PortName = "http"
	// ServicePort is the port the Service listens on.
	ServicePort = 80
	// AnnotationSpecHash records, on the Deployment, a hash of the Deployment spec the hook asked for
	// (SpecHash of its apply form). Comparing it with the observed Deployment tells whether the
	// current spec has been applied yet.
	AnnotationSpecHash = "webapp.example.com/spec-hash"
	// AnnotationLastApplied is where Metacontroller keeps the apply form it last wrote to a child.
	AnnotationLastApplied = "metacontroller.k8s.io/last-applied-configuration"
)

// labelsFor returns the labels shared by the Deployment, its selector, its pod template and the Service.
func labelsFor(name string) map[string]string {
	return map[string]string{
		webappv1.LabelName:      webappv1.AppName,
		webappv1.LabelInstance:  name,
		webappv1.LabelManagedBy: webappv1.ManagedBy,
	}
}

// childMeta is the metadata every child the hook builds starts from: named after the WebApp, in
// its namespace, with labels (labelsFor's map, shared and never modified). A builder adds what its
// kind carries beyond that (the Deployment's spec hash, the Ingress's annotations).
func childMeta(p *Parent, labels map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: labels}
}

// childLabels returns the WebApp's labels, the Deployment selector and the pod labels. Normally all
// three are the one labelsFor(name) map.
// A Deployment's selector is immutable, so when the observed one has a different selector (it was
// adopted, or made by an older hook) that selector is kept and its matchLabels are added to the pod
// labels, which must match it. The Service selects the pod labels, so it always finds the pods.
func childLabels(p *Parent, observed *ObservedDeployment) (labels map[string]string, selector *metav1.LabelSelector, podLabels map[string]string) {
	labels = labelsFor(p.Name)
	selector = &metav1.LabelSelector{MatchLabels: labels}
	if observed == nil || observed.Selector == nil || sameSelector(observed.Selector, labels) {
		return labels, selector, labels
	}
	merged := make(map[string]string, len(labels)+len(observed.Selector.MatchLabels))
	maps.Copy(merged, labels)
	maps.Copy(merged, observed.Selector.MatchLabels)
	return labels, observed.Selector.DeepCopy(), merged
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

// sameSelector reports whether a selector is exactly matchLabels: labels.
func sameSelector(s *metav1.LabelSelector, labels map[string]string) bool {
	return len(s.MatchExpressions) == 0 && maps.Equal(s.MatchLabels, labels)
}

// desiredDeployment builds the Deployment for a valid, defaulted spec, with replicas, annotated
// with the hash of its spec. While autoscaling, the hash leaves replicas
// out: the autoscaler changes them, and that is not a new spec.
// cfg.hash, when not "", becomes the pod template's webappv1.AnnotationConfigHash, and cfg.partialHash,
// when not "", the Deployment's AnnotationPartialConfigHash.
func desiredDeployment(p *Parent, replicas *int32, labels map[string]string, selector *metav1.LabelSelector, podLabels map[string]string, cfg configState) *appsv1.Deployment {
	spec := &p.Spec
	d := &appsv1.Deployment{
		TypeMeta:   DeploymentKind.TypeMeta(),
		ObjectMeta: childMeta(p, labels),
		Spec: appsv1.DeploymentSpec{
			Replicas:                replicas,
			Selector:                selector,
			Template:                podTemplate(spec, selector, podLabels, cfg.hash),
			ProgressDeadlineSeconds: spec.ProgressDeadlineSeconds,
		},
	}
	if st := spec.Strategy; st != nil {
		d.Spec.Strategy = appsv1.DeploymentStrategy{
			Type:          appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: st.MaxSurge, MaxUnavailable: st.MaxUnavailable},
		}
	}
	hashed := d.Spec
	if spec.Autoscaling != nil {
		hashed.Replicas = nil
	}
	d.Annotations = map[string]string{AnnotationSpecHash: SpecHash(&hashed)}
	if cfg.partialHash != "" {
		d.Annotations[AnnotationPartialConfigHash] = cfg.partialHash
	}
	return d
}

// PodTemplate is the pod template Sync answers the stable Deployment of WebApp name with, for
// spec as it asks for it (a canary may hold the observed one instead): the one function of the
// spec that names a revision (TemplateHash). spec must be defaulted (webappv1.Default), as
// Parent.Spec is; it is validated as Sync validates it, and an invalid one is an error that says
// why, as the status would. stable is the observed stable Deployment, nil when there is none: a
// selector of its own is kept, and, as no ConfigMap or Secret is sent, so is its digest of them
// (checkConfig). The install's defaults (Defaults.Apply) are not applied.
func PodTemplate(name string, spec *webappv1.WebAppSpec, stable *ObservedDeployment) (*corev1.PodTemplateSpec, error) {
	p := &Parent{Name: name, Spec: *spec}
	if errs := Validate(p); len(errs) > 0 {
		return nil, errors.New(invalidMessage(errs))
	}
	_, selector, podLabels := childLabels(p, stable)
	t := podTemplate(&p.Spec, selector, podLabels, checkConfig(p, &Related{}, stable).hash)
	return &t, nil
}

// podTemplate is the Deployment's pod template for a valid, defaulted spec: its pods carry
// podLabels, spread against those of selector, and configHash, when not "", as their
// webappv1.AnnotationConfigHash.
func podTemplate(spec *webappv1.WebAppSpec, selector *metav1.LabelSelector, podLabels map[string]string, configHash string) corev1.PodTemplateSpec {
	container := corev1.Container{
		Name:    ContainerName,
		Image:   spec.Image,
		Command: spec.Command,
		Args:    spec.Args,
		EnvFrom: spec.EnvFrom,
		Env:     spec.Env,
	}
	if spec.Port != nil {
		container.Ports = []corev1.ContainerPort{{Name: PortName, ContainerPort: *spec.Port, Protocol: corev1.ProtocolTCP}}
	}
	if spec.Resources != nil {
		container.Resources = *spec.Resources
	}
	container.ReadinessProbe, container.StartupProbe = healthProbes(spec)
	container.LivenessProbe = spec.LivenessProbe
	container.Lifecycle = lifecycle(spec)
	container.SecurityContext = containerSecurityContext(spec)
	var volumes []corev1.Volume
	for _, v := range spec.Volumes {
		volumes = append(volumes, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{ConfigMap: v.ConfigMap, Secret: v.Secret, EmptyDir: v.EmptyDir}})
		container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: v.MountPath, ReadOnly: v.ReadOnly})
	}
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: templateLabels(podLabels, spec.PodLabels), Annotations: templateAnnotations(spec.PodAnnotations, configHash)},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{container},
			Volumes:                       volumes,
			ImagePullSecrets:              spec.ImagePullSecrets,
			ServiceAccountName:            spec.ServiceAccountName,
			AutomountServiceAccountToken:  automountToken(spec),
			SecurityContext:               podSecurityContext(spec),
			NodeSelector:                  spec.NodeSelector,
			Tolerations:                   spec.Tolerations,
			Affinity:                      spec.Affinity,
			TopologySpreadConstraints:     spreadConstraints(spec.TopologySpreadConstraints, selector),
			PriorityClassName:             spec.PriorityClassName,
			TerminationGracePeriodSeconds: spec.TerminationGracePeriodSeconds,
		},
	}
}

// templateLabels are the pod template's labels: the pod labels (which the Service selects) and
// spec.podLabels (extra), which validation.ValidateSpec keeps off the hook's own keys. It returns
// podLabels itself when there is no extra, and otherwise a new map, so that spec.podLabels never
// reach the Deployment's labels, its selector or the Service's.
func templateLabels(podLabels, extra map[string]string) map[string]string {
	if len(extra) == 0 {
		return podLabels
	}
	merged := make(map[string]string, len(podLabels)+len(extra))
	maps.Copy(merged, extra)
	maps.Copy(merged, podLabels)
	return merged
}

// templateAnnotations are the pod template's annotations: spec.podAnnotations and, when not "",
// configHash as webappv1.AnnotationConfigHash; nil when there are neither.
func templateAnnotations(extra map[string]string, configHash string) map[string]string {
	if len(extra) == 0 && configHash == "" {
		return nil
	}
	merged := make(map[string]string, len(extra)+1)
	maps.Copy(merged, extra)
	if configHash != "" {
		merged[webappv1.AnnotationConfigHash] = configHash
	}
	return merged
}

// spreadConstraints are the pod's topologySpreadConstraints: spec's, where each one without a
// labelSelector spreads the WebApp's own pods, those of selector, and of the same pod template
// (matchLabelKeys webappv1.LabelPodTemplateHash), so that a rollout's new pods spread among themselves
// rather than against the old ones that are about to go. It copies what it changes.
func spreadConstraints(spec []corev1.TopologySpreadConstraint, selector *metav1.LabelSelector) []corev1.TopologySpreadConstraint {
	if len(spec) == 0 {
		return nil
	}
	out := make([]corev1.TopologySpreadConstraint, len(spec))
	for i, c := range spec {
		if c.LabelSelector == nil {
			c.LabelSelector = selector.DeepCopy()
			if !slices.Contains(c.MatchLabelKeys, webappv1.LabelPodTemplateHash) {
				c.MatchLabelKeys = append(slices.Clip(c.MatchLabelKeys), webappv1.LabelPodTemplateHash)
			}
		}
		out[i] = c
	}
	return out
}

// lifecycle is the container's lifecycle: spec.lifecycle as given, or, with
// shutdownDelaySeconds, a preStop hook that sleeps that long, so that the endpoints drop a
// terminating pod before it gets SIGTERM; nil otherwise.
func lifecycle(spec *webappv1.WebAppSpec) *corev1.Lifecycle {
	if spec.Lifecycle != nil || spec.ShutdownDelaySeconds == nil {
		return spec.Lifecycle
	}
	return &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: int64(*spec.ShutdownDelaySeconds)}}}
}

// replicasFor is the replica count the Deployment is answered with. Without autoscaling it is
// spec.replicas. While autoscaling, the HorizontalPodAutoscaler owns the count: it is the
// observed Deployment's, kept within [minReplicas, maxReplicas], or minReplicas for a new one.
// So turning autoscaling on starts from the current count, and no answer ever sets a count that
// nobody asked for.
func replicasFor(spec *webappv1.WebAppSpec, observed *ObservedDeployment) *int32 {
	a := spec.Autoscaling
	if a == nil {
		return spec.Replicas
	}
	n := *a.MinReplicas
	if observed != nil {
		n = min(max(replicasOf(observed), n), a.MaxReplicas)
	}
	return &n
}

// StartupFailureThreshold and StartupPeriodSeconds give an app with a healthCheck 5 minutes to
// start before its startupProbe counts it as failed.
const (
	StartupFailureThreshold = 30
	StartupPeriodSeconds    = 10
)

// healthProbes returns the container's readiness and startup probes: the explicit ones, or those
// made from healthCheck (an HTTP GET of its path on its port), or nil.
func healthProbes(spec *webappv1.WebAppSpec) (readiness, startup *corev1.Probe) {
	readiness, startup = spec.ReadinessProbe, spec.StartupProbe
	h := spec.HealthCheck
	if h == nil {
		return readiness, startup
	}
	get := func() corev1.ProbeHandler {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: h.Path, Port: intstr.FromInt32(*h.Port)}}
	}
	if readiness == nil {
		readiness = &corev1.Probe{ProbeHandler: get()}
	}
	if startup == nil {
		startup = &corev1.Probe{ProbeHandler: get(), PeriodSeconds: StartupPeriodSeconds, FailureThreshold: StartupFailureThreshold}
	}
	return readiness, startup
}

// desiredService builds the ClusterIP Service that exposes spec.port on ServicePort, selecting
// the pod labels. Call it only when Port is set.
func desiredService(p *Parent, labels, podLabels map[string]string) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   ServiceKind.TypeMeta(),
		ObjectMeta: childMeta(p, labels),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: podLabels,
			Ports: []corev1.ServicePort{{
				Name:       PortName,
				Port:       ServicePort,
				TargetPort: intstr.FromString(PortName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

// desiredIngress builds the Ingress that routes spec.ingress's host and path to the Service's
// ServicePort, with TLS when asked for. Call it only when Ingress is set.
func desiredIngress(p *Parent, labels map[string]string) *networkingv1.Ingress {
	in := p.Spec.Ingress
	ing := &networkingv1.Ingress{
		TypeMeta:   IngressKind.TypeMeta(),
		ObjectMeta: childMeta(p, labels),
		Spec: networkingv1.IngressSpec{
			IngressClassName: in.ClassName,
			Rules: []networkingv1.IngressRule{{
				Host: in.Host,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{
						Path:     in.Path,
						PathType: in.PathType,
						Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
							Name: p.Name,
							Port: networkingv1.ServiceBackendPort{Number: ServicePort},
						}},
					}},
				}},
			}},
		},
	}
	ing.Annotations = in.Annotations // for its controller, as spec.ingress.annotations says
	if in.TLS != nil {
		ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{in.Host}, SecretName: in.TLS.SecretName}}
	}
	return ing
}

// MinReplicasForDisruptionBudget is the fewest desired replicas a PodDisruptionBudget exists for.
// With one replica, any budget that keeps a pod blocks a node drain forever
// (kubernetes/kubernetes#66811), so a single-replica WebApp gets none.
const MinReplicasForDisruptionBudget = 2

// desiredDisruptionBudget builds the PodDisruptionBudget over the Deployment's pods, or returns nil
// when spec.disruptionBudget is not set or fewer than MinReplicasForDisruptionBudget replicas are
// planned: spec.replicas, or minReplicas while autoscaling.
func desiredDisruptionBudget(p *Parent, labels map[string]string, selector *metav1.LabelSelector) *policyv1.PodDisruptionBudget {
	db := p.Spec.DisruptionBudget
	if db == nil || plannedReplicas(&p.Spec) < MinReplicasForDisruptionBudget {
		return nil
	}
	// A pod that is not Ready may always be evicted, so that a WebApp whose every pod crash-loops
	// cannot block a node drain, as the Kubernetes docs recommend.
	alwaysAllow := policyv1.AlwaysAllow
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   DisruptionBudgetKind.TypeMeta(),
		ObjectMeta: childMeta(p, labels),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable:             db.MaxUnavailable,
			Selector:                   selector,
			UnhealthyPodEvictionPolicy: &alwaysAllow,
		},
	}
}

// plannedReplicas is the fewest replicas the spec ever asks for: spec.replicas, or minReplicas
// while autoscaling.
func plannedReplicas(spec *webappv1.WebAppSpec) int32 {
	if spec.Autoscaling != nil {
		return *spec.Autoscaling.MinReplicas
	}
	return *spec.Replicas
}

// desiredAutoscaler builds the HorizontalPodAutoscaler that scales the Deployment within
// spec.autoscaling's bounds. Call it only when Autoscaling is set.
func desiredAutoscaler(p *Parent, labels map[string]string) *autoscalingv2.HorizontalPodAutoscaler {
	a := p.Spec.Autoscaling
	var metrics []autoscalingv2.MetricSpec
	for _, t := range []struct {
		name   corev1.ResourceName
		target *int32
	}{{corev1.ResourceCPU, a.TargetCPUUtilizationPercentage}, {corev1.ResourceMemory, a.TargetMemoryUtilizationPercentage}} {
		if t.target != nil {
			metrics = append(metrics, autoscalingv2.MetricSpec{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{Name: t.name, Target: autoscalingv2.MetricTarget{
					Type: autoscalingv2.UtilizationMetricType, AverageUtilization: t.target,
				}},
			})
		}
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   AutoscalerKind.TypeMeta(),
		ObjectMeta: childMeta(p, labels),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: DeploymentKind.APIVersion, Kind: DeploymentKind.Kind, Name: p.Name},
			MinReplicas:    a.MinReplicas,
			MaxReplicas:    a.MaxReplicas,
			Metrics:        metrics,
		},
	}
}

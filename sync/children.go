package sync

import (
	"fmt"
	"maps"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	webappv1 "github.com/example/webapp-operator/api/v1"
	jsonv2 "github.com/go-json-experiment/json"
)

// Labels, names and annotations the hook puts on its children.
const (
	// LabelName, LabelInstance and LabelManagedBy are the recommended Kubernetes labels. Together
	// they form the Deployment's selector, so they never change for the life of a WebApp.
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// AppName and ManagedBy are the values of LabelName and LabelManagedBy.
	AppName   = "webapp"
	ManagedBy = "webapp-hook"
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
		LabelName:      AppName,
		LabelInstance:  name,
		LabelManagedBy: ManagedBy,
	}
}

// podLabels returns the WebApp's labels, the Deployment selector and the pod labels. Normally all
// three are the one labelsFor(name) map.
// A Deployment's selector is immutable, so when the observed one has a different selector (it was
// adopted, or made by an older hook) that selector is kept and its matchLabels are added to the pod
// labels, which must match it. The Service selects the pod labels, so it always finds the pods.
func podLabels(p *Parent, observed *ObservedDeployment) (labels map[string]string, selector *metav1.LabelSelector, pods map[string]string) {
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

// sameSelector reports whether a selector is exactly matchLabels: labels.
func sameSelector(s *metav1.LabelSelector, labels map[string]string) bool {
	return len(s.MatchExpressions) == 0 && maps.Equal(s.MatchLabels, labels)
}

// desiredDeployment builds the Deployment for a valid, defaulted spec, with replicas, annotated
// with the hash of its spec. While autoscaling, the hash leaves replicas
// out: the autoscaler changes them, and that is not a new spec.
// configHash, when not "", becomes the pod template's AnnotationConfigHash.
func desiredDeployment(p *Parent, replicas *int32, labels map[string]string, selector *metav1.LabelSelector, pods map[string]string, configHash string) *appsv1.Deployment {
	spec := &p.Spec
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
	var volumes []corev1.Volume
	for _, v := range spec.Volumes {
		volumes = append(volumes, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{ConfigMap: v.ConfigMap, Secret: v.Secret, EmptyDir: v.EmptyDir}})
		container.VolumeMounts = append(container.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: v.MountPath, ReadOnly: v.ReadOnly})
	}
	d := &appsv1.Deployment{
		TypeMeta:   DeploymentKind.TypeMeta(),
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: replicas,
			Selector: selector,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: pods},
				Spec: corev1.PodSpec{
					Containers:         []corev1.Container{container},
					Volumes:            volumes,
					ImagePullSecrets:   spec.ImagePullSecrets,
					ServiceAccountName: spec.ServiceAccountName,
				},
			},
			ProgressDeadlineSeconds: spec.ProgressDeadlineSeconds,
		},
	}
	if configHash != "" {
		d.Spec.Template.Annotations = map[string]string{AnnotationConfigHash: configHash}
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
	return d
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
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: labels},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: DeploymentKind.APIVersion, Kind: DeploymentKind.Kind, Name: p.Name},
			MinReplicas:    a.MinReplicas,
			MaxReplicas:    a.MaxReplicas,
			Metrics:        metrics,
		},
	}
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
func desiredService(p *Parent, labels, pods map[string]string) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   ServiceKind.TypeMeta(),
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: labels},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: pods,
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
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: labels, Annotations: in.Annotations},
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
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   DisruptionBudgetKind.TypeMeta(),
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: labels},
		Spec:       policyv1.PodDisruptionBudgetSpec{MaxUnavailable: db.MaxUnavailable, Selector: selector},
	}
}

// isServerAnnotation reports annotations that the apiserver, controllers or clients write; they
// are not part of a child's apply form.
func isServerAnnotation(key string) bool {
	switch key {
	case AnnotationLastApplied, "kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision":
		return true
	}
	return false
}

// keptForm returns the apply form that leaves an observed child exactly as it is. It prefers the
// configuration Metacontroller last applied, because answering that again makes Metacontroller's
// three-way merge a no-op. A child without it (adopted, or created by other means) is returned as
// observed, less status and server-set metadata: every field it carries is what the apiserver
// stores, so it changes nothing and cannot make Metacontroller loop. It is encoded as it is, never
// pruned, and its numbers are int64 or float64 as unstructured objects hold them.
func keptForm(c *Child) runtime.Object {
	return &unstructured.Unstructured{Object: keptObject(c)}
}

// keptObject is keptForm's content.
func keptObject(c *Child) map[string]any {
	if last := lastApplied(c); last != "" {
		obj, err := decodeObject([]byte(last))
		if err == nil && sameIdentity(obj, c) {
			obj["metadata"].(map[string]any)["namespace"] = c.Namespace
			return obj
		}
	}
	observed, err := decodeObject(c.Raw)
	if err != nil {
		// DecodeRequest has already decoded the child as an object; this cannot fail.
		panic(fmt.Sprintf("decode observed %s %s: %v", c.Kind, c.Name, err))
	}
	// Identity comes from the decoded fields. encoding/json, which Metacontroller uses, matches
	// keys case-insensitively, so keys that only differ in case from these are dropped rather than
	// sent twice.
	out := map[string]any{"apiVersion": c.APIVersion, "kind": c.Kind}
	for k, v := range observed {
		switch strings.ToLower(k) {
		case "apiversion", "kind", "metadata", "status":
		default:
			out[k] = v
		}
	}
	meta, _ := observed["metadata"].(map[string]any)
	kept := map[string]any{"name": c.Name}
	if c.Namespace != "" {
		kept["namespace"] = c.Namespace
	}
	if labels, ok := meta["labels"].(map[string]any); ok && len(labels) > 0 {
		kept["labels"] = labels
	}
	if annotations, ok := meta["annotations"].(map[string]any); ok {
		own := map[string]any{}
		for k, v := range annotations {
			if !isServerAnnotation(k) {
				own[k] = v
			}
		}
		if len(own) > 0 {
			kept["annotations"] = own
		}
	}
	out["metadata"] = kept
	return out
}

// lastApplied reads the configuration Metacontroller last applied to a child, "" when it has none.
// Only that annotation is decoded: the rest of the child is passed over.
func lastApplied(c *Child) string {
	var obj struct {
		Metadata struct {
			Annotations struct {
				LastApplied string `json:"metacontroller.k8s.io/last-applied-configuration"` // AnnotationLastApplied
			} `json:"annotations"`
		} `json:"metadata"`
	}
	if jsonv2.Unmarshal(c.Raw, &obj, decodeOptions) != nil {
		return ""
	}
	return obj.Metadata.Annotations.LastApplied
}

// decodeObject decodes a JSON object as the apimachinery does for unstructured objects: keys
// match exactly, and numbers become int64 when they are integers, float64 otherwise.
func decodeObject(data []byte) (map[string]any, error) {
	var obj map[string]any
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("not an object")
	}
	return obj, nil
}

// sameIdentity reports whether an apply form names the same object as the observed child; a
// missing namespace is taken to be the child's.
func sameIdentity(obj map[string]any, c *Child) bool {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return false
	}
	name, _ := meta["name"].(string)
	namespace, _ := meta["namespace"].(string)
	return obj["apiVersion"] == c.APIVersion && obj["kind"] == c.Kind && name == c.Name &&
		(namespace == "" || namespace == c.Namespace)
}

// scaledToZero returns the kept form of an observed Deployment with spec.replicas set to 0.
func scaledToZero(c *Child) runtime.Object {
	obj := keptObject(c)
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	spec["replicas"] = int64(0)
	return &unstructured.Unstructured{Object: obj}
}

// plannedReplicas is the fewest replicas the spec ever asks for: spec.replicas, or minReplicas
// while autoscaling.
func plannedReplicas(spec *webappv1.WebAppSpec) int32 {
	if spec.Autoscaling != nil {
		return *spec.Autoscaling.MinReplicas
	}
	return *spec.Replicas
}

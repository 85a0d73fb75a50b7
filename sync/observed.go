package sync

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The decision reads a handful of fields of the children it builds. Observed children of those
// kinds are decoded into the views below, which hold exactly those fields, in the one pass that
// reads the request; every other member is skipped without being stored, and the child's full
// form stays in Child.Raw, the source of its kept form. Decoding them whole into their appsv1
// and corev1 types instead made BenchmarkDecodeRequest 72–78 µs rather than 50–55 µs, and a
// Deployment allocated five times as much.
//
// A view holds only what some decision reads. To read another field, add it here; a field that
// is not here was never decoded.

// ObservedDeployment is what the decision reads of an observed Deployment.
type ObservedDeployment struct {
	// Generation is metadata.generation.
	Generation int64
	// SpecHash is its AnnotationSpecHash annotation, "" when it has none.
	SpecHash string
	// Replicas is spec.replicas; nil means the apiserver's default of 1.
	Replicas *int32
	// Selector is spec.selector, nil when absent.
	Selector *metav1.LabelSelector
	// ConfigHash is the pod template's AnnotationConfigHash annotation, "" when it has none.
	ConfigHash string
	// Status is the Deployment controller's report.
	Status ObservedDeploymentStatus
}

// ObservedDeploymentStatus is what the decision reads of a Deployment's status: the fields of
// appsv1.DeploymentStatus it uses, with the same names.
type ObservedDeploymentStatus struct {
	ObservedGeneration  int64               `json:"observedGeneration"`
	Replicas            int32               `json:"replicas"`
	UpdatedReplicas     int32               `json:"updatedReplicas"`
	ReadyReplicas       int32               `json:"readyReplicas"`
	AvailableReplicas   int32               `json:"availableReplicas"`
	TerminatingReplicas *int32              `json:"terminatingReplicas"`
	Conditions          []ObservedCondition `json:"conditions"`
}

// ObservedCondition is what the decision reads of a condition of an observed child (a
// Deployment's or a HorizontalPodAutoscaler's); its times are not read.
type ObservedCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// ObservedIngress is what the decision reads of an observed Ingress: its rules and TLS hosts, for
// status.url, and its load-balancer addresses, for the IngressReady condition.
type ObservedIngress struct {
	// Rules are spec.rules.
	Rules []networkingv1.IngressRule
	// TLS is spec.tls.
	TLS []networkingv1.IngressTLS
	// LoadBalancer is status.loadBalancer.ingress, empty until a controller serves the Ingress.
	LoadBalancer []networkingv1.IngressLoadBalancerIngress
}

// ObservedAutoscaler is what the decision reads of an observed HorizontalPodAutoscaler's status.
type ObservedAutoscaler struct {
	// DesiredReplicas is status.desiredReplicas, 0 before the autoscaler has computed one.
	DesiredReplicas int32 `json:"desiredReplicas"`
	// Conditions are status.conditions.
	Conditions []ObservedCondition `json:"conditions"`
}

// deploymentView, ingressView, autoscalerView and identityView decode an observed child of a
// kind the hook builds (Kind.view) into its identity and view with decode, which decodes JSON
// into the value it is given. Members a view does not name are passed over unstored, whatever
// JSON they hold.
func deploymentView(decode func(any) error) (Child, error) {
	var w struct {
		observedHead `json:",inline"`
		Spec         deploymentSpecWire       `json:"spec"`
		Status       ObservedDeploymentStatus `json:"status"`
	}
	err := decode(&w)
	c := w.child()
	c.Deployment = &ObservedDeployment{
		Generation: w.Metadata.Generation,
		SpecHash:   w.Metadata.Annotations.SpecHash,
		Replicas:   w.Spec.Replicas,
		Selector:   w.Spec.Selector,
		ConfigHash: w.Spec.Template.Metadata.Annotations.ConfigHash,
		Status:     w.Status,
	}
	return c, err
}

func ingressView(decode func(any) error) (Child, error) {
	var w struct {
		observedHead `json:",inline"`
		Spec         struct {
			Rules []networkingv1.IngressRule `json:"rules"`
			TLS   []networkingv1.IngressTLS  `json:"tls"`
		} `json:"spec"`
		Status struct {
			LoadBalancer struct {
				Ingress []networkingv1.IngressLoadBalancerIngress `json:"ingress"`
			} `json:"loadBalancer"`
		} `json:"status"`
	}
	err := decode(&w)
	c := w.child()
	c.Ingress = &ObservedIngress{Rules: w.Spec.Rules, TLS: w.Spec.TLS, LoadBalancer: w.Status.LoadBalancer.Ingress}
	return c, err
}

func autoscalerView(decode func(any) error) (Child, error) {
	var w struct {
		observedHead `json:",inline"`
		Status       ObservedAutoscaler `json:"status"`
	}
	err := decode(&w)
	c := w.child()
	c.Autoscaler = &w.Status
	return c, err
}

// identityView is the view of a kind of which the decision reads nothing but the identity: a
// Service or a PodDisruptionBudget.
func identityView(decode func(any) error) (Child, error) {
	var w observedHead
	err := decode(&w)
	return w.child(), err
}

// observedHead is what the decision reads of every observed child of a kind the hook builds: its
// identity, and the annotation and generation a Deployment's view takes.
type observedHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string `json:"name"`
		Namespace   string `json:"namespace"`
		Generation  int64  `json:"generation"`
		Annotations struct {
			SpecHash string `json:"webapp.example.com/spec-hash"` // AnnotationSpecHash
		} `json:"annotations"`
	} `json:"metadata"`
}

// child returns the child's identity, as a child of a kind the hook builds.
func (h *observedHead) child() Child {
	return Child{APIVersion: h.APIVersion, Kind: h.Kind, Name: h.Metadata.Name, Namespace: h.Metadata.Namespace, Built: true}
}

// deploymentSpecWire is what the decision reads of a Deployment's spec.
type deploymentSpecWire struct {
	Replicas *int32                `json:"replicas"`
	Selector *metav1.LabelSelector `json:"selector"`
	Template struct {
		Metadata struct {
			Annotations struct {
				ConfigHash string `json:"webapp.example.com/config-hash"` // AnnotationConfigHash
			} `json:"annotations"`
		} `json:"metadata"`
	} `json:"template"`
}

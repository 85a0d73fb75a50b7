package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

//go:generate go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0 crd:crdVersions=v1 paths=./... output:crd:artifacts:config=../../crds

// Group, Version and Kind name the WebApp resource.
const (
	Group   = "example.com"
	Version = "v1"
	Kind    = "WebApp"
)

// Limits of WebAppSpec, enforced both by the CRD schema and by the hook's own validation.
const (
	// DefaultReplicas is used when spec.replicas is omitted.
	DefaultReplicas = 1
	// MaxReplicas is the largest accepted spec.replicas.
	MaxReplicas = 1000
	// MinPort and MaxPort bound spec.port.
	MinPort = 1
	MaxPort = 65535
)

// WebApp runs one container image as a Deployment and, when a port is given, exposes it with a ClusterIP Service.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=webapps,scope=Namespaced,shortName=wa,singular=webapp
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Image",type=string,JSONPath=`.spec.image`,description="Container image"
// +kubebuilder:printcolumn:name="Desired",type=integer,JSONPath=`.spec.replicas`,description="Desired replicas"
// +kubebuilder:printcolumn:name="Available",type=integer,JSONPath=`.status.availableReplicas`,description="Available replicas"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="Lifecycle phase"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the web application.
	// +required
	Spec WebAppSpec `json:"spec"`
	// status is the observed state of the web application, written by the webapp hook through Metacontroller.
	// +optional
	Status WebAppStatus `json:"status,omitzero"`
}

// WebAppSpec is the desired state of a WebApp. A zero Replicas means scaled to zero, not "use the default":
// the default of 1 applies only when the field is omitted, which the CRD schema and the hook both do.
type WebAppSpec struct {
	// image is the container image to run, as a reference such as "nginx:1.27" or
	// "registry.example.com/team/app@sha256:...". Changing it starts a rolling update.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Image string `json:"image"`

	// replicas is the number of pods to run. 0 scales the application to zero.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas *int32 `json:"replicas,omitempty"`

	// port is the TCP port the container listens on. When set, a ClusterIP Service named after the
	// WebApp exposes it on port 80 and status.url points at it.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`

	// env lists environment variables to set in the container.
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []corev1.EnvVar `json:"env,omitempty"`

	// resources are the compute resources (CPU, memory) the container requests and is limited to.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// Phase is a WebApp's lifecycle phase, one word for humans and printer columns. Use conditions for automation.
// +kubebuilder:validation:Enum=Pending;Progressing;Ready;Degraded;Invalid;Terminating
type Phase string

// The phases a WebApp can be in.
const (
	// PhasePending means no Deployment has been observed yet.
	PhasePending Phase = "Pending"
	// PhaseProgressing means the Deployment exists but does not yet run the current spec on every desired replica.
	PhaseProgressing Phase = "Progressing"
	// PhaseReady means the Deployment carries the current spec and its rollout is complete.
	PhaseReady Phase = "Ready"
	// PhaseDegraded means the Deployment reports ProgressDeadlineExceeded for the current spec.
	PhaseDegraded Phase = "Degraded"
	// PhaseInvalid means the spec is invalid; existing children are kept unchanged.
	PhaseInvalid Phase = "Invalid"
	// PhaseTerminating means the WebApp is being deleted and its children are being torn down in order.
	PhaseTerminating Phase = "Terminating"
)

// ConditionReady is the type of the one condition a WebApp carries.
const ConditionReady = "Ready"

// Reasons of the Ready condition, one per phase.
const (
	// ReasonRolloutComplete goes with PhaseReady.
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonRolloutInProgress goes with PhaseProgressing.
	ReasonRolloutInProgress = "RolloutInProgress"
	// ReasonDeploymentMissing goes with PhasePending.
	ReasonDeploymentMissing = "DeploymentMissing"
	// ReasonProgressDeadlineExceeded goes with PhaseDegraded.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonInvalidSpec goes with PhaseInvalid.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonTerminating goes with PhaseTerminating.
	ReasonTerminating = "Terminating"
)

// WebAppStatus is the observed state of a WebApp. It is computed only from the children observed
// when the hook was called, never from the desired ones, and it replaces the previous status whole.
type WebAppStatus struct {
	// observedGeneration is the metadata.generation of the WebApp this status was computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase summarises the state in one word: Pending, Progressing, Ready, Degraded, Invalid or Terminating.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// ready is true only when the observed Deployment carries the current spec and its rollout is complete.
	// +optional
	Ready bool `json:"ready"`

	// replicas is the number of pods the Deployment runs, old and new.
	// +optional
	Replicas int32 `json:"replicas"`

	// updatedReplicas is the number of pods that run the Deployment's current template.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// readyReplicas is the number of pods whose Ready condition is true.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// availableReplicas is the number of pods ready for at least the Deployment's minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`

	// url is the in-cluster address of the Service, http://<name>.<namespace>.svc, while that Service exists.
	// +optional
	URL string `json:"url,omitempty"`

	// message says in one plain sentence what is going on.
	// +optional
	Message string `json:"message,omitempty"`

	// conditions holds the Ready condition, with the reason and message of the current state.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

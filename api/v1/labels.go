package v1

// The labels and annotations the hook puts on a WebApp's pods, which spec.podLabels and
// spec.podAnnotations may not set. The CRD's rules on podLabels and podAnnotations (types.go)
// name the same keys, and TestOwnedKeysMatchCRD checks that they agree.
const (
	// LabelName, LabelInstance and LabelManagedBy are the recommended Kubernetes labels. Together
	// they form the Deployment's selector, so they never change for the life of a WebApp.
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// AppName and ManagedBy are the values of LabelName and LabelManagedBy.
	AppName   = "webapp"
	ManagedBy = "webapp-hook"
)

// LabelPodTemplateHash is the label the Deployment controller gives each ReplicaSet's pods, one
// value per pod template.
const LabelPodTemplateHash = "pod-template-hash"

// AnnotationConfigHash is put on the pod template, so that a change of the data of a ConfigMap or
// Secret the pods use rolls them: a digest of the digests of that data (the hook computes it), which tells
// nothing about the data itself.
const AnnotationConfigHash = "webapp.example.com/config-hash"

// OwnedPodLabels are the pod template labels the hook or the Deployment controller sets, which
// spec.podLabels may not: the selector and instance labels, and LabelPodTemplateHash. The CRD's
// rule on podLabels names the same keys (TestOwnedKeysMatchCRD).
var OwnedPodLabels = []string{LabelName, LabelInstance, LabelManagedBy, LabelPodTemplateHash}

// OwnedPodAnnotations are the pod template annotations the hook sets, which spec.podAnnotations
// may not. The CRD's rule on podAnnotations names the same keys.
var OwnedPodAnnotations = []string{AnnotationConfigHash}

// LabelTrack marks the pods of a canary, with the value TrackCanary: the canary's Deployment and
// Service select it. Canary pods carry the WebApp's pod labels but LabelName, so that the stable
// Deployment and the Service <name>-stable, which select LabelName, never select them. While a
// canary runs, spec.podLabels may not set it (validation).
const (
	LabelTrack  = "webapp.example.com/track"
	TrackCanary = "canary"
)

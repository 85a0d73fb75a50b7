package sync

import (
	corev1 "k8s.io/api/core/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// The pod and container security settings of the pod template: spec.podSecurityContext,
// spec.securityContext and spec.automountServiceAccountToken, over what spec.securityProfile
// sets. A field set explicitly wins over the profile's, field by field. Without a profile, each
// is the spec's own value, or nil, so that a WebApp that sets none of them keeps the pod template
// it had before these fields existed.

// CapabilityAll is the capability the restricted profile drops.
const CapabilityAll corev1.Capability = "ALL"

// restricted reports whether spec asks for the restricted profile, itself or through the
// install's default (Defaults.Apply has put that into the spec).
func restricted(spec *webappv1.WebAppSpec) bool {
	return spec.SecurityProfile == webappv1.SecurityProfileRestricted
}

// podSecurityContext is the pod's securityContext: spec.podSecurityContext, with runAsNonRoot
// true and the RuntimeDefault seccomp profile where the restricted profile applies and the spec
// sets neither. It never alters the spec's own value.
func podSecurityContext(spec *webappv1.WebAppSpec) *corev1.PodSecurityContext {
	if !restricted(spec) {
		return spec.PodSecurityContext
	}
	sc := spec.PodSecurityContext.DeepCopy()
	if sc == nil {
		sc = &corev1.PodSecurityContext{}
	}
	if sc.RunAsNonRoot == nil {
		yes := true
		sc.RunAsNonRoot = &yes
	}
	if sc.SeccompProfile == nil {
		sc.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	}
	return sc
}

// containerSecurityContext is the container's securityContext: spec.securityContext, with
// allowPrivilegeEscalation false and every capability dropped where the restricted profile
// applies and the spec sets neither. capabilities.add and capabilities.drop count as two fields,
// so that adding NET_BIND_SERVICE, which "restricted" allows, keeps the drop of ALL.
func containerSecurityContext(spec *webappv1.WebAppSpec) *corev1.SecurityContext {
	if !restricted(spec) {
		return spec.SecurityContext
	}
	sc := spec.SecurityContext.DeepCopy()
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	if sc.AllowPrivilegeEscalation == nil {
		no := false
		sc.AllowPrivilegeEscalation = &no
	}
	if sc.Capabilities == nil {
		sc.Capabilities = &corev1.Capabilities{}
	}
	if sc.Capabilities.Drop == nil {
		sc.Capabilities.Drop = []corev1.Capability{CapabilityAll}
	}
	return sc
}

// automountToken is the pod's automountServiceAccountToken: the spec's, or false where the
// restricted profile applies and the pods run as the namespace's default ServiceAccount, whose
// token an app seldom needs; nil lets the ServiceAccount decide.
func automountToken(spec *webappv1.WebAppSpec) *bool {
	if spec.AutomountServiceAccountToken != nil || !restricted(spec) || spec.ServiceAccountName != "" {
		return spec.AutomountServiceAccountToken
	}
	no := false
	return &no
}

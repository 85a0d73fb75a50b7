package v1

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Default fills in the defaults the CRD schema declares (+kubebuilder:default) for fields that are
// absent, so that a spec means the same whether or not the apiserver defaulted it: replicas 1,
// ingress path "/" and pathType Prefix, disruptionBudget maxUnavailable 1, autoscaling
// minReplicas 1. It never overwrites a
// value that is set, zero values included: replicas: 0 stays 0. Defaults that depend on other
// fields, such as healthCheck.port from port or the CPU target of 80 when no memory target is
// given, are not the schema's and are applied where they are used.
func Default(spec *WebAppSpec) {
	if spec.Replicas == nil {
		r := int32(DefaultReplicas)
		spec.Replicas = &r
	}
	if in := spec.Ingress; in != nil {
		if in.Path == "" {
			in.Path = "/"
		}
		if in.PathType == nil {
			t := networkingv1.PathTypePrefix
			in.PathType = &t
		}
	}
	if db := spec.DisruptionBudget; db != nil && db.MaxUnavailable == nil {
		one := intstr.FromInt32(1)
		db.MaxUnavailable = &one
	}
	if a := spec.Autoscaling; a != nil && a.MinReplicas == nil {
		one := int32(1)
		a.MinReplicas = &one
	}
}

package v1

// Default fills in the defaults the CRD schema declares (+kubebuilder:default) for fields that are
// absent, so that a spec means the same whether or not the apiserver defaulted it. It never
// overwrites a value that is set, zero values included: replicas: 0 stays 0.
func Default(spec *WebAppSpec) {
	if spec.Replicas == nil {
		r := int32(DefaultReplicas)
		spec.Replicas = &r
	}
}

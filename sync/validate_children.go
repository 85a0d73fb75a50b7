package sync

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// The sections of the spec that shape the Deployment's rollout and the other children, each
// checked by one function of ValidateSpec.

// validateStrategy reports rolling update bounds that are not counts or percentages, or that
// would let no rollout make progress.
func validateStrategy(st *webappv1.RolloutStrategy, fld *field.Path) field.ErrorList {
	if st == nil {
		return nil
	}
	errs := validateIntOrPercent(st.MaxSurge, fld.Child("maxSurge"))
	errs = append(errs, validateIntOrPercent(st.MaxUnavailable, fld.Child("maxUnavailable"))...)
	if isZero(st.MaxSurge) && isZero(st.MaxUnavailable) {
		errs = append(errs, field.Invalid(fld.Child("maxUnavailable"), st.MaxUnavailable.String(), "must not be 0 when maxSurge is 0: the rollout could not make progress"))
	}
	return errs
}

// validateIntOrPercent reports a count that is negative, or a percentage that is not "N%" with N
// between 0 and 100.
func validateIntOrPercent(v *intstr.IntOrString, fld *field.Path) field.ErrorList {
	switch {
	case v == nil:
	case v.Type == intstr.Int:
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(fld, v.IntVal, "must be greater than or equal to 0")}
		}
	default:
		n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
		if !strings.HasSuffix(v.StrVal, "%") || err != nil || n < 0 || n > 100 {
			return field.ErrorList{field.Invalid(fld, short(v.StrVal), `must be a count, or a percentage between 0% and 100% such as "25%"`)}
		}
	}
	return nil
}

// isZero reports whether a count or percentage is 0 or "0%"; absent is not zero.
func isZero(v *intstr.IntOrString) bool {
	return v != nil && (v.Type == intstr.Int && v.IntVal == 0 || v.Type == intstr.String && v.StrVal == "0%")
}

// validateIngress reports an Ingress that no controller could serve, or that has no Service to
// route to (hasPort false).
func validateIngress(in *webappv1.Ingress, hasPort bool, fld *field.Path) field.ErrorList {
	if in == nil {
		return nil
	}
	var errs field.ErrorList
	host := strings.TrimPrefix(in.Host, "*.")
	switch {
	case in.Host == "":
		errs = append(errs, field.Required(fld.Child("host"), ""))
	case len(validation.IsDNS1123Subdomain(host)) > 0:
		errs = append(errs, field.Invalid(fld.Child("host"), short(in.Host), validation.IsDNS1123Subdomain(host)[0]))
	case strings.Contains(host, "*"):
		errs = append(errs, field.Invalid(fld.Child("host"), short(in.Host), "a wildcard may only be the first label"))
	}
	if in.Path != "" && !strings.HasPrefix(in.Path, "/") {
		errs = append(errs, field.Invalid(fld.Child("path"), short(in.Path), "must start with /"))
	}
	pathTypes := []networkingv1.PathType{networkingv1.PathTypePrefix, networkingv1.PathTypeExact, networkingv1.PathTypeImplementationSpecific}
	if t := in.PathType; t != nil && !slices.Contains(pathTypes, *t) {
		errs = append(errs, field.NotSupported(fld.Child("pathType"), short(string(*t)), pathTypes))
	}
	if c := in.ClassName; c != nil {
		if msgs := validation.IsDNS1123Subdomain(*c); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Child("className"), short(*c), msgs[0]))
		}
	}
	if in.TLS != nil {
		errs = append(errs, validateObjectName(in.TLS.SecretName, fld.Child("tls", "secretName"))...)
	}
	for _, k := range slices.Sorted(maps.Keys(in.Annotations)) {
		if msgs := validation.IsQualifiedName(strings.ToLower(k)); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Child("annotations"), short(k), msgs[0]))
		}
	}
	if !hasPort {
		errs = append(errs, field.Invalid(fld, field.OmitValueType{}, "needs spec.port: the Ingress routes to the Service that port makes"))
	}
	return errs
}

// validateAutoscaling reports replica bounds and utilization targets out of range, and a
// maxReplicas below minReplicas.
func validateAutoscaling(a *webappv1.Autoscaling, fld *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	errs := validateRange(a.MinReplicas, 1, webappv1.MaxReplicas, fld.Child("minReplicas"))
	maxReplicas := fld.Child("maxReplicas")
	switch {
	case a.MaxReplicas < 1 || a.MaxReplicas > webappv1.MaxReplicas:
		errs = append(errs, validateRange(&a.MaxReplicas, 1, webappv1.MaxReplicas, maxReplicas)...)
	case a.MinReplicas != nil && a.MaxReplicas < *a.MinReplicas:
		errs = append(errs, field.Invalid(maxReplicas, a.MaxReplicas, fmt.Sprintf("must be greater than or equal to minReplicas (%d)", *a.MinReplicas)))
	}
	errs = append(errs, validateRange(a.TargetCPUUtilizationPercentage, 1, webappv1.MaxUtilizationPercentage, fld.Child("targetCPUUtilizationPercentage"))...)
	return append(errs, validateRange(a.TargetMemoryUtilizationPercentage, 1, webappv1.MaxUtilizationPercentage, fld.Child("targetMemoryUtilizationPercentage"))...)
}

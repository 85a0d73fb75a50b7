package validation

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// The rules of the workload as a whole: the WebApp's name, the spec section by section
// (ValidateSpec), and the sections that shape the Deployment's rollout, its disruption budget
// and its autoscaler.

// ValidateName reports whether a WebApp's name can name and label its children: the
// app.kubernetes.io/instance label value allows at most 63 characters, and when port is set the
// Service, named after the WebApp, needs a DNS-1035 label (no dots, starting with a letter).
// The apiserver accepts longer names and dots for the WebApp itself, so the hook must check.
// With spec.rollout.canary and port, the canary's Services, <name>-canary and <name>-stable, need
// one too, so the name is at most 56 characters. It reports at most one problem.
func ValidateName(name string, spec *webappv1.WebAppSpec) field.ErrorList {
	fld := field.NewPath("metadata", "name")
	if msgs := validation.IsValidLabelValue(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(fld, Short(name), "cannot label the pods: "+msgs[0])}
	}
	if spec.Port != nil {
		if msgs := validation.IsDNS1035Label(name); len(msgs) > 0 {
			return field.ErrorList{field.Invalid(fld, Short(name), "cannot name the Service that spec.port asks for: "+msgs[0])}
		}
		if ro := spec.Rollout; ro.Plan() != nil {
			way := "canary"
			if ro.IsBlueGreen() {
				way = "blueGreen"
			}
			if msgs := validation.IsDNS1035Label(name + webappv1.CanarySuffix); len(msgs) > 0 {
				return field.ErrorList{field.Invalid(fld, Short(name), "cannot name the Service "+name+webappv1.CanarySuffix+" that spec.rollout."+way+" asks for: "+msgs[0])}
			}
		}
	}
	return nil
}

// ValidateSpec reports what the CRD schema should have stopped but may not have: the schema can
// be older than the hook, or replaced, and Metacontroller passes on whatever the apiserver
// stored. fld is the spec's path, "spec". Every problem is reported, in a stable order: spec
// fields in declaration order, list entries by index, map entries by key. The order matters:
// the message becomes the WebApp's status, and a message that changed between calls would
// update the status forever. A nil Replicas is valid (the default applies).
func ValidateSpec(spec *webappv1.WebAppSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateImage(spec.Image, fld.Child("image"))...)
	errs = append(errs, validateRange(spec.Replicas, 0, webappv1.MaxReplicas, fld.Child("replicas"))...)
	errs = append(errs, validateRange(spec.Port, webappv1.MinPort, webappv1.MaxPort, fld.Child("port"))...)
	errs = append(errs, validateEnv(spec.Env, fld.Child("env"))...)
	errs = append(errs, validateResources(spec.Resources, fld.Child("resources"))...)
	errs = append(errs, validateEnvFrom(spec.EnvFrom, fld.Child("envFrom"))...)
	errs = append(errs, validateHealthCheck(spec.HealthCheck, spec.Port, fld.Child("healthCheck"))...)
	errs = append(errs, validateProbe(spec.ReadinessProbe, false, fld.Child("readinessProbe"))...)
	errs = append(errs, validateProbe(spec.LivenessProbe, true, fld.Child("livenessProbe"))...)
	errs = append(errs, validateProbe(spec.StartupProbe, true, fld.Child("startupProbe"))...)
	errs = append(errs, validateVolumes(spec.Volumes, fld.Child("volumes"))...)
	for i, ref := range spec.ImagePullSecrets {
		errs = append(errs, validateObjectName(ref.Name, fld.Child("imagePullSecrets").Index(i).Child("name"))...)
	}
	if name := spec.ServiceAccountName; name != "" {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Child("serviceAccountName"), Short(name), msgs[0]))
		}
	}
	errs = append(errs, validateSecurity(spec, fld)...)
	errs = append(errs, validateScheduling(spec, fld)...)
	errs = append(errs, validatePodMetadata(spec, fld)...)
	errs = append(errs, validateShutdown(spec, fld)...)
	errs = append(errs, validateStrategy(spec.Strategy, fld.Child("strategy"))...)
	if d := spec.ProgressDeadlineSeconds; d != nil && *d < 1 {
		errs = append(errs, field.Invalid(fld.Child("progressDeadlineSeconds"), *d, "must be greater than or equal to 1"))
	}
	errs = append(errs, validateIngress(spec.Ingress, spec.Port != nil, fld.Child("ingress"))...)
	errs = append(errs, validateRoute(spec.Route, spec.Port != nil, fld.Child("route"))...)
	if db := spec.DisruptionBudget; db != nil {
		errs = append(errs, validateIntOrPercent(db.MaxUnavailable, fld.Child("disruptionBudget", "maxUnavailable"))...)
	}
	errs = append(errs, validateAutoscaling(spec.Autoscaling, fld.Child("autoscaling"))...)
	errs = append(errs, validateRollout(spec, fld)...)
	return errs
}

// validateCount reports a list of n items at fld that is empty (Required, with the message
// required) or longer than most (TooMany); nothing for 1 to most.
func validateCount(n, most int, fld *field.Path, required string) field.ErrorList {
	switch {
	case n == 0:
		return field.ErrorList{field.Required(fld, required)}
	case n > most:
		return field.ErrorList{field.TooMany(fld, n, most)}
	}
	return nil
}

// validateRange reports a number, when set, outside [lo, hi].
func validateRange(v *int32, lo, hi int32, fld *field.Path) field.ErrorList {
	if v != nil && (*v < lo || *v > hi) {
		return field.ErrorList{field.Invalid(fld, *v, validation.InclusiveRangeError(int(lo), int(hi)))}
	}
	return nil
}

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
			return field.ErrorList{field.Invalid(fld, Short(v.StrVal), `must be a count, or a percentage between 0% and 100% such as "25%"`)}
		}
	}
	return nil
}

// isZero reports whether a count or percentage is 0 or "0%"; absent is not zero.
func isZero(v *intstr.IntOrString) bool {
	return v != nil && (v.Type == intstr.Int && v.IntVal == 0 || v.Type == intstr.String && v.StrVal == "0%")
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

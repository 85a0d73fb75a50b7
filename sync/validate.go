package sync

import (
	"regexp"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// Validate reports why a WebApp cannot be built, or nothing: the problems that kept its spec
// from decoding (Parent.SpecErrors), or else every problem of its name and its spec. Sync
// answers Invalid exactly when it reports one.
func Validate(p *Parent) field.ErrorList {
	if len(p.SpecErrors) > 0 {
		return p.SpecErrors
	}
	errs := ValidateName(p.Name, p.Spec.Port)
	return append(errs, ValidateSpec(&p.Spec, field.NewPath("spec"))...)
}

// ValidateName reports whether a WebApp's name can name and label its children: the
// app.kubernetes.io/instance label value allows at most 63 characters, and when port is set the
// Service, named after the WebApp, needs a DNS-1035 label (no dots, starting with a letter).
// The apiserver accepts longer names and dots for the WebApp itself, so the hook must check.
// It reports at most one problem.
func ValidateName(name string, port *int32) field.ErrorList {
	fld := field.NewPath("metadata", "name")
	if msgs := validation.IsValidLabelValue(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(fld, short(name), "cannot label the pods: "+msgs[0])}
	}
	if port != nil {
		if msgs := validation.IsDNS1035Label(name); len(msgs) > 0 {
			return field.ErrorList{field.Invalid(fld, short(name), "cannot name the Service that spec.port asks for: "+msgs[0])}
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
			errs = append(errs, field.Invalid(fld.Child("serviceAccountName"), short(name), msgs[0]))
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
	return errs
}

// validateImage reports an image that is empty or not an image reference.
func validateImage(image string, fld *field.Path) field.ErrorList {
	switch {
	case image == "":
		return field.ErrorList{field.Required(fld, "")}
	case !IsImageReference(image):
		return field.ErrorList{field.Invalid(fld, short(image), "must be an image reference such as nginx:1.27")}
	}
	return nil
}

// imageReference is the grammar of a container image reference, as in the distribution project's
// reference package: [domain[:port]/]path[:tag][@digest].
var imageReference = func() *regexp.Regexp {
	const (
		alnum      = `[a-z0-9]+`
		separator  = `(?:[._]|__|[-]+)`
		component  = alnum + `(?:` + separator + alnum + `)*`
		domainPart = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
		host       = `(?:` + domainPart + `(?:\.` + domainPart + `)*|\[[a-fA-F0-9:]+\])`
		domain     = host + `(?::[0-9]+)?`
		name       = `(?:` + domain + `/)?` + component + `(?:/` + component + `)*`
		tag        = `[\w][\w.-]{0,127}`
		digest     = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	)
	return regexp.MustCompile(`^(` + name + `)(?::` + tag + `)?(?:@` + digest + `)?$`)
}()

// maxImageNameLength is the longest repository name (without tag or digest) a registry accepts.
const maxImageNameLength = 255

// IsImageReference reports whether s is a valid container image reference such as "nginx",
// "nginx:1.27", "registry.example.com:5000/team/app@sha256:<64 hex>". Upper-case repository
// paths, spaces and empty tags are not valid.
func IsImageReference(s string) bool {
	m := imageReference.FindStringSubmatchIndex(s) // the name's bounds, without copying it
	return m != nil && m[3]-m[2] <= maxImageNameLength
}

// validateRange reports a number, when set, outside [lo, hi].
func validateRange(v *int32, lo, hi int32, fld *field.Path) field.ErrorList {
	if v != nil && (*v < lo || *v > hi) {
		return field.ErrorList{field.Invalid(fld, *v, validation.InclusiveRangeError(int(lo), int(hi)))}
	}
	return nil
}

package validation

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// The rules of the WebApp's one container: its image, environment, resources, probes, health
// check and lifecycle handlers, each checked by one function of ValidateSpec.

// validateImage reports an image that is empty or not an image reference.
func validateImage(image string, fld *field.Path) field.ErrorList {
	switch {
	case image == "":
		return field.ErrorList{field.Required(fld, "")}
	case !IsImageReference(image):
		return field.ErrorList{field.Invalid(fld, Short(image), "must be an image reference such as nginx:1.27")}
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

// validateEnv reports environment variables the kubelet would refuse: a bad or repeated name, or
// a valueFrom that is not exactly one source.
func validateEnv(env []corev1.EnvVar, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[string]bool, len(env))
	for i, e := range env {
		idx := fld.Index(i)
		if msgs := validation.IsRelaxedEnvVarName(e.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(idx.Child("name"), Short(e.Name), msgs[0]))
			continue
		}
		if seen[e.Name] {
			errs = append(errs, field.Duplicate(idx.Child("name"), Short(e.Name)))
		}
		seen[e.Name] = true
		if e.ValueFrom != nil {
			if e.Value != "" {
				errs = append(errs, field.Forbidden(idx.Child("valueFrom"), "may not be set when value is set"))
			}
			if n := envSources(e.ValueFrom); n != 1 {
				errs = append(errs, field.Invalid(idx.Child("valueFrom"), field.OmitValueType{}, fmt.Sprintf("must set exactly one source, got %d", n)))
			}
		}
	}
	return errs
}

// envSources counts the sources set in an env valueFrom; the apiserver accepts exactly one.
func envSources(s *corev1.EnvVarSource) int {
	return countSet(s.FieldRef != nil, s.ResourceFieldRef != nil, s.ConfigMapKeyRef != nil, s.SecretKeyRef != nil, s.FileKeyRef != nil)
}

// countSet counts which of several handlers (or sources) are set, each given as whether it is:
// the apiserver accepts a probe, a lifecycle handler or an env valueFrom with exactly one.
func countSet(set ...bool) int {
	n := 0
	for _, s := range set {
		if s {
			n++
		}
	}
	return n
}

// validateResources reports resource claims, which the pod template cannot declare, negative
// quantities, and requests above their limits, by resource name.
func validateResources(r *corev1.ResourceRequirements, fld *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	if len(r.Claims) > 0 {
		errs = append(errs, field.Forbidden(fld.Child("claims"), "the pod template declares no resource claims"))
	}
	for _, list := range []struct {
		name string
		l    corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for _, name := range slices.Sorted(maps.Keys(list.l)) {
			if q := list.l[name]; q.Sign() < 0 {
				errs = append(errs, field.Invalid(fld.Child(list.name).Key(string(name)), q.String(), "must be greater than or equal to 0"))
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		req := r.Requests[name]
		if limit, ok := r.Limits[name]; ok && req.Cmp(limit) > 0 {
			errs = append(errs, field.Invalid(fld.Child("requests").Key(string(name)), req.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", name, limit.String())))
		}
	}
	return errs
}

// validateEnvFrom reports envFrom entries without exactly one named source, and bad prefixes.
func validateEnvFrom(envFrom []corev1.EnvFromSource, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range envFrom {
		idx := fld.Index(i)
		switch {
		case (e.ConfigMapRef == nil) == (e.SecretRef == nil):
			errs = append(errs, field.Invalid(idx, field.OmitValueType{}, "needs exactly one of configMapRef or secretRef"))
		case e.ConfigMapRef != nil:
			errs = append(errs, validateObjectName(e.ConfigMapRef.Name, idx.Child("configMapRef", "name"))...)
		default:
			errs = append(errs, validateObjectName(e.SecretRef.Name, idx.Child("secretRef", "name"))...)
		}
		if e.Prefix != "" {
			if msgs := validation.IsEnvVarName(e.Prefix); len(msgs) > 0 {
				errs = append(errs, field.Invalid(idx.Child("prefix"), Short(e.Prefix), msgs[0]))
			}
		}
	}
	return errs
}

// validateHealthCheck reports a health check without an absolute path, or without a port to GET
// it on: its own, or spec.port (specPort), which Default copies into it.
func validateHealthCheck(h *webappv1.HealthCheck, specPort *int32, fld *field.Path) field.ErrorList {
	if h == nil {
		return nil
	}
	var errs field.ErrorList
	switch {
	case h.Path == "":
		errs = append(errs, field.Required(fld.Child("path"), ""))
	case !strings.HasPrefix(h.Path, "/"):
		errs = append(errs, field.Invalid(fld.Child("path"), Short(h.Path), "must start with /"))
	}
	if h.Port == nil && specPort == nil {
		return append(errs, field.Required(fld.Child("port"), "when spec.port is not set"))
	}
	return append(errs, validateRange(h.Port, webappv1.MinPort, webappv1.MaxPort, fld.Child("port"))...)
}

// validateProbe reports a probe that the kubelet could not run: no handler or several, a port
// out of range, negative timings, and for liveness and startup probes (successMustBeOne) a
// successThreshold other than 1. It also refuses a host on an httpGet or tcpSocket probe: the
// kubelet would then send requests to any address the author names, from the node, and Pod
// Security "baseline" refuses such pods.
func validateProbe(p *corev1.Probe, successMustBeOne bool, fld *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	if handlers := countSet(p.Exec != nil, p.HTTPGet != nil, p.TCPSocket != nil, p.GRPC != nil); handlers != 1 {
		errs = append(errs, field.Invalid(fld, field.OmitValueType{}, fmt.Sprintf("needs exactly one of exec, httpGet, tcpSocket or grpc, got %d", handlers)))
	}
	errs = append(errs, validateActions(p.Exec, p.HTTPGet, p.TCPSocket, "a probe checks the pod itself", fld)...)
	if g := p.GRPC; g != nil {
		errs = append(errs, validateRange(&g.Port, webappv1.MinPort, webappv1.MaxPort, fld.Child("grpc", "port"))...)
	}
	for _, n := range []struct {
		name string
		v    int32
	}{{"initialDelaySeconds", p.InitialDelaySeconds}, {"timeoutSeconds", p.TimeoutSeconds}, {"periodSeconds", p.PeriodSeconds}, {"successThreshold", p.SuccessThreshold}, {"failureThreshold", p.FailureThreshold}} {
		if n.v < 0 {
			errs = append(errs, field.Invalid(fld.Child(n.name), n.v, "must be greater than or equal to 0"))
		}
	}
	if successMustBeOne && p.SuccessThreshold > 1 {
		errs = append(errs, field.Invalid(fld.Child("successThreshold"), p.SuccessThreshold, "must be 1"))
	}
	return errs
}

// validateActions reports what the kubelet could not run of a probe's or a lifecycle hook's
// actions (fld is the handler's path): an exec without a command, a port that is neither a port
// number nor a port name, an httpGet path that does not start with "/" or an unknown scheme, and
// a host on httpGet or tcpSocket, which would have the kubelet call any address the author
// names, from the node; why says why the action may not.
func validateActions(exec *corev1.ExecAction, get *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction, why string, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if exec != nil && len(exec.Command) == 0 {
		errs = append(errs, field.Required(fld.Child("exec", "command"), ""))
	}
	if h := get; h != nil {
		errs = append(errs, validateProbePort(h.Port, fld.Child("httpGet", "port"))...)
		if h.Host != "" {
			errs = append(errs, field.Forbidden(fld.Child("httpGet", "host"), why))
		}
		if h.Path != "" && !strings.HasPrefix(h.Path, "/") {
			errs = append(errs, field.Invalid(fld.Child("httpGet", "path"), Short(h.Path), "must start with /"))
		}
		if schemes := []corev1.URIScheme{corev1.URISchemeHTTP, corev1.URISchemeHTTPS}; h.Scheme != "" && !slices.Contains(schemes, h.Scheme) {
			errs = append(errs, field.NotSupported(fld.Child("httpGet", "scheme"), Short(string(h.Scheme)), schemes))
		}
	}
	if t := tcp; t != nil {
		errs = append(errs, validateProbePort(t.Port, fld.Child("tcpSocket", "port"))...)
		if t.Host != "" {
			errs = append(errs, field.Forbidden(fld.Child("tcpSocket", "host"), why))
		}
	}
	return errs
}

// validateProbePort reports a probe port that is neither a port number nor a port name.
func validateProbePort(port intstr.IntOrString, fld *field.Path) field.ErrorList {
	if port.Type == intstr.String {
		if msgs := validation.IsValidPortName(port.StrVal); len(msgs) > 0 {
			return field.ErrorList{field.Invalid(fld, Short(port.StrVal), msgs[0])}
		}
		return nil
	}
	return validateRange(&port.IntVal, webappv1.MinPort, webappv1.MaxPort, fld)
}

// validateHandler reports a lifecycle handler, when set, without exactly one action, with an
// action the kubelet could not run or that names a host (validateActions), or with a sleep that
// is negative or outlasts the grace period.
func validateHandler(h *corev1.LifecycleHandler, grace int64, fld *field.Path) field.ErrorList {
	if h == nil {
		return nil
	}
	var errs field.ErrorList
	if n := countSet(h.Exec != nil, h.HTTPGet != nil, h.TCPSocket != nil, h.Sleep != nil); n != 1 {
		errs = append(errs, field.Invalid(fld, field.OmitValueType{}, fmt.Sprintf("needs exactly one of exec, httpGet, tcpSocket or sleep, got %d", n)))
	}
	errs = append(errs, validateActions(h.Exec, h.HTTPGet, h.TCPSocket, "a lifecycle hook calls the pod itself", fld)...)
	if s := h.Sleep; s != nil && (s.Seconds < 0 || s.Seconds > grace) {
		errs = append(errs, field.Invalid(fld.Child("sleep", "seconds"), s.Seconds, fmt.Sprintf("must be between 0 and terminationGracePeriodSeconds (%d)", grace)))
	}
	return errs
}

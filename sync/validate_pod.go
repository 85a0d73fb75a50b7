package sync

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// The sections of the spec that become the pod template, each checked by one function of
// ValidateSpec.

// validateEnv reports environment variables the kubelet would refuse: a bad or repeated name, or
// a valueFrom that is not exactly one source.
func validateEnv(env []corev1.EnvVar, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[string]bool, len(env))
	for i, e := range env {
		idx := fld.Index(i)
		if msgs := validation.IsRelaxedEnvVarName(e.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(idx.Child("name"), short(e.Name), msgs[0]))
			continue
		}
		if seen[e.Name] {
			errs = append(errs, field.Duplicate(idx.Child("name"), short(e.Name)))
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
	n := 0
	for _, set := range []bool{s.FieldRef != nil, s.ResourceFieldRef != nil, s.ConfigMapKeyRef != nil, s.SecretKeyRef != nil, s.FileKeyRef != nil} {
		if set {
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

// validateObjectName reports a reference to an object whose name is empty or not a DNS subdomain.
func validateObjectName(name string, fld *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fld, "")}
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(fld, short(name), msgs[0])}
	}
	return nil
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
				errs = append(errs, field.Invalid(idx.Child("prefix"), short(e.Prefix), msgs[0]))
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
		errs = append(errs, field.Invalid(fld.Child("path"), short(h.Path), "must start with /"))
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
	handlers := 0
	for _, set := range []bool{p.Exec != nil, p.HTTPGet != nil, p.TCPSocket != nil, p.GRPC != nil} {
		if set {
			handlers++
		}
	}
	if handlers != 1 {
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
			errs = append(errs, field.Invalid(fld.Child("httpGet", "path"), short(h.Path), "must start with /"))
		}
		if schemes := []corev1.URIScheme{corev1.URISchemeHTTP, corev1.URISchemeHTTPS}; h.Scheme != "" && !slices.Contains(schemes, h.Scheme) {
			errs = append(errs, field.NotSupported(fld.Child("httpGet", "scheme"), short(string(h.Scheme)), schemes))
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
			return field.ErrorList{field.Invalid(fld, short(port.StrVal), msgs[0])}
		}
		return nil
	}
	return validateRange(&port.IntVal, webappv1.MinPort, webappv1.MaxPort, fld)
}

// validateVolumes reports volumes without exactly one valid source, and names or mount paths
// that are not valid or repeat.
func validateVolumes(volumes []webappv1.Volume, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	names, paths := map[string]bool{}, map[string]bool{}
	for i, v := range volumes {
		idx := fld.Index(i)
		if msgs := validation.IsDNS1123Label(v.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(idx.Child("name"), short(v.Name), msgs[0]))
		} else if names[v.Name] {
			errs = append(errs, field.Duplicate(idx.Child("name"), v.Name))
		}
		names[v.Name] = true
		switch {
		case !path.IsAbs(v.MountPath):
			errs = append(errs, field.Invalid(idx.Child("mountPath"), short(v.MountPath), "must be an absolute path"))
		case paths[path.Clean(v.MountPath)]:
			errs = append(errs, field.Duplicate(idx.Child("mountPath"), short(v.MountPath)))
		}
		paths[path.Clean(v.MountPath)] = true
		sources := 0
		if c := v.ConfigMap; c != nil {
			sources++
			errs = append(errs, validateObjectName(c.Name, idx.Child("configMap", "name"))...)
			errs = append(errs, validateItems(c.Items, c.DefaultMode, idx.Child("configMap"))...)
		}
		if s := v.Secret; s != nil {
			sources++
			errs = append(errs, validateObjectName(s.SecretName, idx.Child("secret", "secretName"))...)
			errs = append(errs, validateItems(s.Items, s.DefaultMode, idx.Child("secret"))...)
		}
		if d := v.EmptyDir; d != nil {
			sources++
			if media := []corev1.StorageMedium{corev1.StorageMediumDefault, corev1.StorageMediumMemory}; !slices.Contains(media, d.Medium) {
				errs = append(errs, field.NotSupported(idx.Child("emptyDir", "medium"), short(string(d.Medium)), media))
			}
			if d.SizeLimit != nil && d.SizeLimit.Sign() < 0 {
				errs = append(errs, field.Invalid(idx.Child("emptyDir", "sizeLimit"), d.SizeLimit.String(), "must be greater than or equal to 0"))
			}
		}
		if sources != 1 {
			errs = append(errs, field.Invalid(idx, field.OmitValueType{}, fmt.Sprintf("needs exactly one of configMap, secret or emptyDir, got %d", sources)))
		}
	}
	return errs
}

// validateItems reports ConfigMap or Secret volume items (fld is the volume source's path) that
// would not make a file inside the volume, and file modes beyond 0777.
func validateItems(items []corev1.KeyToPath, defaultMode *int32, fld *field.Path) field.ErrorList {
	errs := validateMode(defaultMode, fld.Child("defaultMode"))
	for i, it := range items {
		idx := fld.Child("items").Index(i)
		if it.Key == "" {
			errs = append(errs, field.Required(idx.Child("key"), ""))
		}
		if it.Path == "" || path.IsAbs(it.Path) || slices.Contains(strings.Split(it.Path, "/"), "..") {
			errs = append(errs, field.Invalid(idx.Child("path"), short(it.Path), "must be a relative path without .."))
		}
		errs = append(errs, validateMode(it.Mode, idx.Child("mode"))...)
	}
	return errs
}

// validateMode reports a file mode, when set, beyond 0777.
func validateMode(m *int32, fld *field.Path) field.ErrorList {
	if m != nil && (*m < 0 || *m > 0o777) {
		return field.ErrorList{field.Invalid(fld, *m, "must be a file mode between 0 and 0777 (511)")}
	}
	return nil
}

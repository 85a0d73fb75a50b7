package sync

import (
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// FieldError is one problem with one field of a WebApp spec.
type FieldError struct {
	// Field is the JSON path of the field, for example "spec.env[2].name".
	Field string
	// Problem says what is wrong, for example "must not be empty".
	Problem string
}

// Error returns "field: problem".
func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// FieldErrors lists every problem found in a spec, in a stable order: spec fields in declaration
// order, list entries by index, map entries by key. The order matters: the message becomes the
// WebApp's status, and a message that changed between calls would update the status forever.
type FieldErrors []FieldError

// Error joins the problems with "; ".
func (es FieldErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// ValidateSpec reports what the CRD schema should have stopped but may not have: the schema can be
// older than the hook, or replaced, and Metacontroller passes on whatever the apiserver stored.
// It returns nil or a FieldErrors with one entry per problem. Replicas nil is valid (the default applies).
func ValidateSpec(spec webappv1.WebAppSpec) error {
	var errs FieldErrors
	switch {
	case spec.Image == "":
		errs = append(errs, FieldError{Field: "spec.image", Problem: "must not be empty"})
	case !IsImageReference(spec.Image):
		errs = append(errs, FieldError{Field: "spec.image", Problem: quote(spec.Image) + " is not a valid image reference"})
	}
	if spec.Replicas != nil && (*spec.Replicas < 0 || *spec.Replicas > webappv1.MaxReplicas) {
		errs = append(errs, FieldError{Field: "spec.replicas", Problem: rangeProblem(0, webappv1.MaxReplicas, fmt.Sprint(*spec.Replicas))})
	}
	if spec.Port != nil && (*spec.Port < webappv1.MinPort || *spec.Port > webappv1.MaxPort) {
		errs = append(errs, FieldError{Field: "spec.port", Problem: rangeProblem(webappv1.MinPort, webappv1.MaxPort, fmt.Sprint(*spec.Port))})
	}
	seen := make(map[string]bool, len(spec.Env))
	for i, e := range spec.Env {
		field := fmt.Sprintf("spec.env[%d]", i)
		if msgs := validation.IsRelaxedEnvVarName(e.Name); len(msgs) > 0 {
			errs = append(errs, FieldError{Field: field + ".name", Problem: fmt.Sprintf("%s is not a valid environment variable name: %s", quote(e.Name), msgs[0])})
			continue
		}
		if seen[e.Name] {
			errs = append(errs, FieldError{Field: field + ".name", Problem: fmt.Sprintf("%s is listed twice", quote(e.Name))})
		}
		seen[e.Name] = true
		if e.ValueFrom != nil {
			if e.Value != "" {
				errs = append(errs, FieldError{Field: field, Problem: "value and valueFrom are mutually exclusive"})
			}
			if n := sources(e.ValueFrom); n != 1 {
				errs = append(errs, FieldError{Field: field + ".valueFrom", Problem: fmt.Sprintf("must set exactly one source, got %d", n)})
			}
		}
	}
	if r := spec.Resources; r != nil {
		if len(r.Claims) > 0 {
			errs = append(errs, FieldError{Field: "spec.resources.claims", Problem: "is not supported: the pod template declares no resource claims"})
		}
		for _, list := range []struct {
			field string
			l     corev1.ResourceList
		}{{"spec.resources.limits", r.Limits}, {"spec.resources.requests", r.Requests}} {
			for _, name := range slices.Sorted(maps.Keys(list.l)) {
				if q := list.l[name]; q.Sign() < 0 {
					errs = append(errs, FieldError{Field: list.field + "." + string(name), Problem: fmt.Sprintf("must not be negative, got %s", q.String())})
				}
			}
		}
		for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
			req := r.Requests[name]
			if limit, ok := r.Limits[name]; ok && req.Cmp(limit) > 0 {
				errs = append(errs, FieldError{Field: "spec.resources.requests." + string(name), Problem: fmt.Sprintf("%s must be less than or equal to the limit %s", req.String(), limit.String())})
			}
		}
	}
	errs = validateWorkload(spec, errs)
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// validateWorkload checks the fields that shape the pods and the children beyond the first five,
// in declaration order, and appends what it finds to errs.
func validateWorkload(spec webappv1.WebAppSpec, errs FieldErrors) FieldErrors {
	add := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	for i, e := range spec.EnvFrom {
		field := fmt.Sprintf("spec.envFrom[%d]", i)
		switch {
		case (e.ConfigMapRef == nil) == (e.SecretRef == nil):
			add(field, "needs exactly one of configMapRef or secretRef")
		case e.ConfigMapRef != nil:
			errs = checkObjectName(field+".configMapRef.name", e.ConfigMapRef.Name, errs)
		default:
			errs = checkObjectName(field+".secretRef.name", e.SecretRef.Name, errs)
		}
		if e.Prefix != "" {
			if msgs := validation.IsEnvVarName(e.Prefix); len(msgs) > 0 {
				add(field+".prefix", "%s is not a valid environment variable prefix: %s", quote(e.Prefix), msgs[0])
			}
		}
	}
	if h := spec.HealthCheck; h != nil {
		switch {
		case h.Path == "":
			add("spec.healthCheck.path", "required")
		case !strings.HasPrefix(h.Path, "/"):
			add("spec.healthCheck.path", "must start with /, got %s", quote(h.Path))
		}
		switch {
		case h.Port != nil && (*h.Port < webappv1.MinPort || *h.Port > webappv1.MaxPort):
			add("spec.healthCheck.port", "%s", rangeProblem(webappv1.MinPort, webappv1.MaxPort, fmt.Sprint(*h.Port)))
		case h.Port == nil && spec.Port == nil:
			add("spec.healthCheck.port", "required when spec.port is not set")
		}
	}
	errs = checkProbe("spec.readinessProbe", spec.ReadinessProbe, false, errs)
	errs = checkProbe("spec.livenessProbe", spec.LivenessProbe, true, errs)
	errs = checkProbe("spec.startupProbe", spec.StartupProbe, true, errs)
	names, paths := map[string]bool{}, map[string]bool{}
	for i, v := range spec.Volumes {
		field := fmt.Sprintf("spec.volumes[%d]", i)
		if msgs := validation.IsDNS1123Label(v.Name); len(msgs) > 0 {
			add(field+".name", "%s is not a valid volume name: %s", quote(v.Name), msgs[0])
		} else if names[v.Name] {
			add(field+".name", "%s is listed twice", quote(v.Name))
		}
		names[v.Name] = true
		switch {
		case !path.IsAbs(v.MountPath):
			add(field+".mountPath", "must be an absolute path, got %s", quote(v.MountPath))
		case paths[path.Clean(v.MountPath)]:
			add(field+".mountPath", "%s is mounted twice", quote(v.MountPath))
		}
		paths[path.Clean(v.MountPath)] = true
		sources := 0
		if c := v.ConfigMap; c != nil {
			sources++
			errs = checkObjectName(field+".configMap.name", c.Name, errs)
			errs = checkItems(field+".configMap", c.Items, c.DefaultMode, errs)
		}
		if sec := v.Secret; sec != nil {
			sources++
			errs = checkObjectName(field+".secret.secretName", sec.SecretName, errs)
			errs = checkItems(field+".secret", sec.Items, sec.DefaultMode, errs)
		}
		if d := v.EmptyDir; d != nil {
			sources++
			if d.Medium != corev1.StorageMediumDefault && d.Medium != corev1.StorageMediumMemory {
				add(field+".emptyDir.medium", `must be "" or "Memory", got %s`, quote(string(d.Medium)))
			}
			if d.SizeLimit != nil && d.SizeLimit.Sign() < 0 {
				add(field+".emptyDir.sizeLimit", "must not be negative, got %s", d.SizeLimit.String())
			}
		}
		if sources != 1 {
			add(field, "needs exactly one of configMap, secret or emptyDir, got %d", sources)
		}
	}
	for i, ref := range spec.ImagePullSecrets {
		errs = checkObjectName(fmt.Sprintf("spec.imagePullSecrets[%d].name", i), ref.Name, errs)
	}
	if name := spec.ServiceAccountName; name != "" {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			add("spec.serviceAccountName", "%s is not a valid name: %s", quote(name), msgs[0])
		}
	}
	if st := spec.Strategy; st != nil {
		errs = checkIntOrPercent("spec.strategy.maxSurge", st.MaxSurge, errs)
		errs = checkIntOrPercent("spec.strategy.maxUnavailable", st.MaxUnavailable, errs)
		if isZero(st.MaxSurge) && isZero(st.MaxUnavailable) {
			add("spec.strategy.maxUnavailable", "must not be 0 when maxSurge is 0: the rollout could not make progress")
		}
	}
	if d := spec.ProgressDeadlineSeconds; d != nil && *d < 1 {
		add("spec.progressDeadlineSeconds", "must be at least 1, got %d", *d)
	}
	if in := spec.Ingress; in != nil {
		host := strings.TrimPrefix(in.Host, "*.")
		switch {
		case in.Host == "":
			add("spec.ingress.host", "required")
		case len(validation.IsDNS1123Subdomain(host)) > 0 || strings.Contains(host, "*"):
			add("spec.ingress.host", "%s is not a DNS name: %s", quote(in.Host), firstOr(validation.IsDNS1123Subdomain(host), "a wildcard may only be the first label"))
		}
		if in.Path != "" && !strings.HasPrefix(in.Path, "/") {
			add("spec.ingress.path", "must start with /, got %s", quote(in.Path))
		}
		if t := in.PathType; t != nil && *t != networkingv1.PathTypePrefix && *t != networkingv1.PathTypeExact && *t != networkingv1.PathTypeImplementationSpecific {
			add("spec.ingress.pathType", "must be Prefix, Exact or ImplementationSpecific, got %s", quote(string(*t)))
		}
		if c := in.ClassName; c != nil {
			if msgs := validation.IsDNS1123Subdomain(*c); len(msgs) > 0 {
				add("spec.ingress.className", "%s is not a valid IngressClass name: %s", quote(*c), msgs[0])
			}
		}
		if in.TLS != nil {
			errs = checkObjectName("spec.ingress.tls.secretName", in.TLS.SecretName, errs)
		}
		for _, k := range slices.Sorted(maps.Keys(in.Annotations)) {
			if msgs := validation.IsQualifiedName(strings.ToLower(k)); len(msgs) > 0 {
				add("spec.ingress.annotations", "%s is not a valid annotation name: %s", quote(k), msgs[0])
			}
		}
		if spec.Port == nil {
			add("spec.ingress", "needs spec.port: the Ingress routes to the Service that port makes")
		}
	}
	if db := spec.DisruptionBudget; db != nil {
		errs = checkIntOrPercent("spec.disruptionBudget.maxUnavailable", db.MaxUnavailable, errs)
	}
	if a := spec.Autoscaling; a != nil {
		if a.MinReplicas != nil && (*a.MinReplicas < 1 || *a.MinReplicas > webappv1.MaxReplicas) {
			add("spec.autoscaling.minReplicas", "%s", rangeProblem(1, webappv1.MaxReplicas, fmt.Sprint(*a.MinReplicas)))
		}
		switch {
		case a.MaxReplicas < 1 || a.MaxReplicas > webappv1.MaxReplicas:
			add("spec.autoscaling.maxReplicas", "%s", rangeProblem(1, webappv1.MaxReplicas, fmt.Sprint(a.MaxReplicas)))
		case a.MinReplicas != nil && a.MaxReplicas < *a.MinReplicas:
			add("spec.autoscaling.maxReplicas", "must be at least minReplicas (%d), got %d", *a.MinReplicas, a.MaxReplicas)
		}
		for _, t := range []struct {
			field  string
			target *int32
		}{{"targetCPUUtilizationPercentage", a.TargetCPUUtilizationPercentage}, {"targetMemoryUtilizationPercentage", a.TargetMemoryUtilizationPercentage}} {
			if t.target != nil && (*t.target < 1 || *t.target > webappv1.MaxUtilizationPercentage) {
				add("spec.autoscaling."+t.field, "%s", rangeProblem(1, webappv1.MaxUtilizationPercentage, fmt.Sprint(*t.target)))
			}
		}
	}
	return errs
}

// checkObjectName reports a reference to an object whose name is empty or not a DNS subdomain.
func checkObjectName(field, name string, errs FieldErrors) FieldErrors {
	if name == "" {
		return append(errs, FieldError{Field: field, Problem: "required"})
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return append(errs, FieldError{Field: field, Problem: fmt.Sprintf("%s is not a valid name: %s", quote(name), msgs[0])})
	}
	return errs
}

// checkItems reports ConfigMap or Secret volume items that would not make a file inside the
// volume, and file modes beyond 0777.
func checkItems(field string, items []corev1.KeyToPath, defaultMode *int32, errs FieldErrors) FieldErrors {
	mode := func(f string, m *int32) {
		if m != nil && (*m < 0 || *m > 0o777) {
			errs = append(errs, FieldError{Field: f, Problem: fmt.Sprintf("must be a file mode between 0 and 0777 (511), got %d", *m)})
		}
	}
	mode(field+".defaultMode", defaultMode)
	for i, it := range items {
		f := fmt.Sprintf("%s.items[%d]", field, i)
		if it.Key == "" {
			errs = append(errs, FieldError{Field: f + ".key", Problem: "required"})
		}
		if it.Path == "" || path.IsAbs(it.Path) || slices.Contains(strings.Split(it.Path, "/"), "..") {
			errs = append(errs, FieldError{Field: f + ".path", Problem: fmt.Sprintf("must be a relative path without .., got %s", quote(it.Path))})
		}
		mode(f+".mode", it.Mode)
	}
	return errs
}

// checkProbe reports a probe that the kubelet could not run: no handler or several, a port out of
// range, negative timings, and for liveness and startup probes a successThreshold other than 1. It
// also refuses a host on an httpGet or tcpSocket probe: the kubelet would then send requests to any
// address the author names, from the node, and Pod Security "baseline" refuses such pods.
func checkProbe(field string, p *corev1.Probe, successMustBeOne bool, errs FieldErrors) FieldErrors {
	if p == nil {
		return errs
	}
	add := func(f, format string, args ...any) {
		errs = append(errs, FieldError{Field: f, Problem: fmt.Sprintf(format, args...)})
	}
	handlers := 0
	for _, set := range []bool{p.Exec != nil, p.HTTPGet != nil, p.TCPSocket != nil, p.GRPC != nil} {
		if set {
			handlers++
		}
	}
	if handlers != 1 {
		add(field, "needs exactly one of exec, httpGet, tcpSocket or grpc, got %d", handlers)
	}
	if p.Exec != nil && len(p.Exec.Command) == 0 {
		add(field+".exec.command", "required")
	}
	if h := p.HTTPGet; h != nil {
		errs = checkProbePort(field+".httpGet.port", h.Port, errs)
		if h.Host != "" {
			add(field+".httpGet.host", "must not be set: a probe checks the pod itself, got %s", quote(h.Host))
		}
		if h.Path != "" && !strings.HasPrefix(h.Path, "/") {
			add(field+".httpGet.path", "must start with /, got %s", quote(h.Path))
		}
		if h.Scheme != "" && h.Scheme != corev1.URISchemeHTTP && h.Scheme != corev1.URISchemeHTTPS {
			add(field+".httpGet.scheme", "must be HTTP or HTTPS, got %s", quote(string(h.Scheme)))
		}
	}
	if t := p.TCPSocket; t != nil {
		errs = checkProbePort(field+".tcpSocket.port", t.Port, errs)
		if t.Host != "" {
			add(field+".tcpSocket.host", "must not be set: a probe checks the pod itself, got %s", quote(t.Host))
		}
	}
	if g := p.GRPC; g != nil && (g.Port < webappv1.MinPort || g.Port > webappv1.MaxPort) {
		add(field+".grpc.port", "%s", rangeProblem(webappv1.MinPort, webappv1.MaxPort, fmt.Sprint(g.Port)))
	}
	for _, n := range []struct {
		name string
		v    int32
	}{{"initialDelaySeconds", p.InitialDelaySeconds}, {"timeoutSeconds", p.TimeoutSeconds}, {"periodSeconds", p.PeriodSeconds}, {"successThreshold", p.SuccessThreshold}, {"failureThreshold", p.FailureThreshold}} {
		if n.v < 0 {
			add(field+"."+n.name, "must not be negative, got %d", n.v)
		}
	}
	if successMustBeOne && p.SuccessThreshold > 1 {
		add(field+".successThreshold", "must be 1, got %d", p.SuccessThreshold)
	}
	return errs
}

// checkProbePort reports a probe port that is neither a port number nor a port name.
func checkProbePort(field string, port intstr.IntOrString, errs FieldErrors) FieldErrors {
	if port.Type == intstr.String {
		if msgs := validation.IsValidPortName(port.StrVal); len(msgs) > 0 {
			return append(errs, FieldError{Field: field, Problem: fmt.Sprintf("%s is not a valid port name: %s", quote(port.StrVal), msgs[0])})
		}
		return errs
	}
	if port.IntVal < webappv1.MinPort || port.IntVal > webappv1.MaxPort {
		return append(errs, FieldError{Field: field, Problem: rangeProblem(webappv1.MinPort, webappv1.MaxPort, fmt.Sprint(port.IntVal))})
	}
	return errs
}

// checkIntOrPercent reports a count that is negative, or a percentage that is not "N%" with N
// between 0 and 100.
func checkIntOrPercent(field string, v *intstr.IntOrString, errs FieldErrors) FieldErrors {
	if v == nil {
		return errs
	}
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			return append(errs, FieldError{Field: field, Problem: fmt.Sprintf("must not be negative, got %d", v.IntVal)})
		}
		return errs
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if !strings.HasSuffix(v.StrVal, "%") || err != nil || n < 0 || n > 100 {
		return append(errs, FieldError{Field: field, Problem: fmt.Sprintf(`must be a count or a percentage such as "25%%", got %s`, quote(v.StrVal))})
	}
	return errs
}

// isZero reports whether a count or percentage is 0 or "0%"; absent is not zero.
func isZero(v *intstr.IntOrString) bool {
	return v != nil && (v.Type == intstr.Int && v.IntVal == 0 || v.Type == intstr.String && v.StrVal == "0%")
}

func firstOr(msgs []string, otherwise string) string {
	if len(msgs) > 0 {
		return msgs[0]
	}
	return otherwise
}

// ValidateName reports whether a WebApp's name can name and label its children: the
// app.kubernetes.io/instance label value allows at most 63 characters, and when port is set the
// Service, named after the WebApp, needs a DNS-1035 label (no dots, starting with a letter).
// The apiserver accepts longer names and dots for the WebApp itself, so the hook must check.
func ValidateName(name string, port *int32) error {
	if msgs := validation.IsValidLabelValue(name); len(msgs) > 0 {
		return &FieldError{Field: "metadata.name", Problem: fmt.Sprintf("%s cannot label the pods: %s", quote(name), msgs[0])}
	}
	if port != nil {
		if msgs := validation.IsDNS1035Label(name); len(msgs) > 0 {
			return &FieldError{Field: "metadata.name", Problem: fmt.Sprintf("%s cannot name the Service that spec.port asks for: %s", quote(name), msgs[0])}
		}
	}
	return nil
}

// sources counts the sources set in an env valueFrom; the apiserver accepts exactly one.
func sources(s *corev1.EnvVarSource) int {
	n := 0
	for _, set := range []bool{s.FieldRef != nil, s.ResourceFieldRef != nil, s.ConfigMapKeyRef != nil, s.SecretKeyRef != nil, s.FileKeyRef != nil} {
		if set {
			n++
		}
	}
	return n
}

// maxQuoted bounds how much of a user's value a message repeats, so that a status condition
// message stays far below the CRD's 32768-character limit whatever the input.
const maxQuoted = 80

// quote renders a user value for a message, shortened to maxQuoted characters.
func quote(s string) string {
	if r := []rune(s); len(r) > maxQuoted {
		return strconv.Quote(string(r[:maxQuoted])) + "…"
	}
	return strconv.Quote(s)
}

func rangeProblem(lo, hi int64, got string) string {
	return fmt.Sprintf("must be between %d and %d, got %s", lo, hi, got)
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

// quoteText renders a message from elsewhere (the kubelet, the scheduler) for a status, cut to
// maxQuoted characters, so that the status stays short and the same from one call to the next.
func quoteText(s string) string {
	if r := []rune(s); len(r) > maxQuoted {
		return string(r[:maxQuoted]) + "…"
	}
	return s
}

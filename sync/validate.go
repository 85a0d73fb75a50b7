package sync

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
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
	if len(errs) > 0 {
		return errs
	}
	return nil
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
	m := imageReference.FindStringSubmatch(s)
	return m != nil && len(m[1]) <= maxImageNameLength
}

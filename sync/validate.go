package sync

import (
	"fmt"
	"regexp"
	"strings"

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

func (e *FieldError) Error() string { return e.Field + ": " + e.Problem }

// FieldErrors lists every problem found in a spec, in field order.
type FieldErrors []FieldError

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
		errs = append(errs, FieldError{Field: "spec.image", Problem: fmt.Sprintf("%q is not a valid image reference", spec.Image)})
	}
	if spec.Replicas != nil && (*spec.Replicas < 0 || *spec.Replicas > webappv1.MaxReplicas) {
		errs = append(errs, FieldError{Field: "spec.replicas", Problem: rangeProblem(0, webappv1.MaxReplicas, fmt.Sprint(*spec.Replicas))})
	}
	if spec.Port != nil && (*spec.Port < webappv1.MinPort || *spec.Port > webappv1.MaxPort) {
		errs = append(errs, FieldError{Field: "spec.port", Problem: rangeProblem(webappv1.MinPort, webappv1.MaxPort, fmt.Sprint(*spec.Port))})
	}
	seen := make(map[string]bool, len(spec.Env))
	for i, e := range spec.Env {
		field := fmt.Sprintf("spec.env[%d].name", i)
		if msgs := validation.IsRelaxedEnvVarName(e.Name); len(msgs) > 0 {
			errs = append(errs, FieldError{Field: field, Problem: fmt.Sprintf("%q is not a valid environment variable name: %s", e.Name, msgs[0])})
			continue
		}
		if seen[e.Name] {
			errs = append(errs, FieldError{Field: field, Problem: fmt.Sprintf("%q is listed twice", e.Name)})
		}
		seen[e.Name] = true
		if e.Value != "" && e.ValueFrom != nil {
			errs = append(errs, FieldError{Field: fmt.Sprintf("spec.env[%d]", i), Problem: "value and valueFrom are mutually exclusive"})
		}
	}
	if r := spec.Resources; r != nil {
		for name, limit := range r.Limits {
			if req, ok := r.Requests[name]; ok && req.Cmp(limit) > 0 {
				errs = append(errs, FieldError{Field: "spec.resources.requests." + string(name), Problem: fmt.Sprintf("%s must be less than or equal to the limit %s", req.String(), limit.String())})
			}
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
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

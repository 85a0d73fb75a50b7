// Package sync decides, for one WebApp, which children should exist and what its status is, as pure functions of a Metacontroller hook request.
package sync

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// Request is one Metacontroller CompositeController hook request, reduced to what the decision reads.
// Build one with DecodeRequest; tests may also fill it in directly, with children made by DecodeChild.
type Request struct {
	// Parent is the observed WebApp.
	Parent Parent
	// Children are all observed children of every type, sorted by kind, namespace and name.
	// The keys Metacontroller files them under (v1: name, v2: namespace/name) are not kept.
	Children []Child
	// Finalizing is true when Metacontroller calls because the WebApp is being deleted.
	Finalizing bool
}

// Parent is the observed WebApp, reduced to what the decision reads.
type Parent struct {
	// Name and Namespace are the WebApp's; DecodeRequest requires both.
	Name      string
	Namespace string
	// Generation is metadata.generation, reported back as observedGeneration.
	Generation int64
	// Spec is the WebApp's spec as decoded. It is meaningful only when SpecError is nil.
	Spec webappv1.WebAppSpec
	// SpecError is set when parent.spec was present but did not fit the WebApp types, for example
	// a string where a number belongs. Such a spec is reported as Invalid, never as a bad request,
	// so that the user sees the problem on the WebApp and no child is touched.
	SpecError error
	// Conditions are the WebApp's previous status conditions, read only to keep lastTransitionTime.
	Conditions []metav1.Condition
}

// Child is one observed child object.
type Child struct {
	// APIVersion, Kind and Name identify the object; DecodeChild requires all three.
	APIVersion string
	Kind       string
	Name       string
	// Namespace is metadata.namespace; DecodeRequest defaults it to the parent's, as Metacontroller does.
	Namespace string
	// Generation is metadata.generation.
	Generation int64
	// Annotations are the child's metadata.annotations.
	Annotations map[string]string
	// Deployment holds the fields of an apps/v1 Deployment that the decision reads; nil for other kinds.
	Deployment *ObservedDeployment
	// Raw is the object exactly as observed. It is the source of the apply form when a child must be kept unchanged.
	Raw json.RawMessage
}

// ObservedDeployment holds what the decision reads from an observed Deployment.
type ObservedDeployment struct {
	// Replicas is spec.replicas, 1 when omitted as the apiserver defaults it.
	Replicas int32
	// Selector is spec.selector. It is immutable, so the hook keeps an observed one that differs from its own.
	Selector *metav1.LabelSelector
	// Status is the Deployment's status as reported by the Deployment controller.
	Status appsv1.DeploymentStatus
}

// RequestError reports a hook request that cannot be understood at all: not JSON, no parent,
// or a wrong type outside parent.spec. It is answered with 400 and nothing is applied.
type RequestError struct {
	// Field is the JSON path of the offending field, empty for the whole body.
	Field string
	// Problem says what is wrong with it.
	Problem string
}

// Error returns "field: problem", or the problem alone when the whole body is at fault.
func (e *RequestError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + ": " + e.Problem
}

// wireRequest is the request as sent; only the fields read are declared.
type wireRequest struct {
	Parent     *wireParent                           `json:"parent"`
	Children   map[string]map[string]json.RawMessage `json:"children"`
	Finalizing bool                                  `json:"finalizing"`
}

type wireParent struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   *wireMeta       `json:"metadata"`
	Spec       json.RawMessage `json:"spec"`
	Status     json.RawMessage `json:"status"`
}

type wireMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Generation  int64             `json:"generation"`
	Annotations map[string]string `json:"annotations"`
}

type wireSpec struct {
	Image     json.RawMessage `json:"image"`
	Replicas  json.RawMessage `json:"replicas"`
	Port      json.RawMessage `json:"port"`
	Env       json.RawMessage `json:"env"`
	Resources json.RawMessage `json:"resources"`
}

type wireChild struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Metadata   *wireMeta `json:"metadata"`
}

type wireDeployment struct {
	Spec struct {
		Replicas *int32                `json:"replicas"`
		Selector *metav1.LabelSelector `json:"selector"`
	} `json:"spec"`
	Status appsv1.DeploymentStatus `json:"status"`
}

// DecodeRequest decodes a Metacontroller sync or finalize request body, in either hook version.
// It returns a *RequestError when the body is not a JSON object, has no parent.metadata.name or namespace,
// or has a wrong type outside parent.spec. Problems inside parent.spec are not errors here: they are
// recorded in Parent.SpecError so that the decision can answer Invalid and keep every child.
func DecodeRequest(body []byte) (*Request, error) {
	var w wireRequest
	if err := decodeJSON(body, &w); err != nil {
		return nil, err
	}
	if w.Parent == nil {
		return nil, &RequestError{Field: "parent", Problem: "required"}
	}
	if w.Parent.Metadata == nil {
		return nil, &RequestError{Field: "parent.metadata", Problem: "required"}
	}
	if w.Parent.Metadata.Name == "" {
		return nil, &RequestError{Field: "parent.metadata.name", Problem: "required"}
	}
	if w.Parent.Metadata.Namespace == "" {
		return nil, &RequestError{Field: "parent.metadata.namespace", Problem: "required: WebApp is a namespaced resource"}
	}
	if w.Parent.Kind != "" && w.Parent.Kind != webappv1.Kind {
		return nil, &RequestError{Field: "parent.kind", Problem: fmt.Sprintf("must be %s, got %q", webappv1.Kind, w.Parent.Kind)}
	}
	req := &Request{
		Parent: Parent{
			Name:       w.Parent.Metadata.Name,
			Namespace:  w.Parent.Metadata.Namespace,
			Generation: w.Parent.Metadata.Generation,
		},
		Finalizing: w.Finalizing,
	}
	req.Parent.Spec, req.Parent.SpecError = decodeSpec(w.Parent.Spec)
	req.Parent.Conditions = previousConditions(w.Parent.Status)

	for group, objs := range w.Children {
		for key, raw := range objs {
			c, err := DecodeChild(raw)
			if err != nil {
				var re *RequestError
				if errors.As(err, &re) {
					re.Field = fmt.Sprintf("children[%q][%q]", group, key) + prefixDot(re.Field)
				}
				return nil, err
			}
			if c.Namespace == "" {
				c.Namespace = req.Parent.Namespace
			}
			req.Children = append(req.Children, c)
		}
	}
	sortChildren(req.Children)
	return req, nil
}

// DecodeChild decodes one observed child object. It returns a *RequestError when the object has
// no apiVersion, kind or metadata.name, or when a Deployment's spec.replicas or status has a wrong type.
func DecodeChild(raw []byte) (Child, error) {
	if isNull(raw) {
		return Child{}, &RequestError{Problem: "expected object, got JSON null"}
	}
	var w wireChild
	if err := decodeJSON(raw, &w); err != nil {
		return Child{}, err
	}
	switch {
	case w.APIVersion == "":
		return Child{}, &RequestError{Field: "apiVersion", Problem: "required"}
	case w.Kind == "":
		return Child{}, &RequestError{Field: "kind", Problem: "required"}
	case w.Metadata == nil || w.Metadata.Name == "":
		return Child{}, &RequestError{Field: "metadata.name", Problem: "required"}
	}
	c := Child{
		APIVersion:  w.APIVersion,
		Kind:        w.Kind,
		Name:        w.Metadata.Name,
		Namespace:   w.Metadata.Namespace,
		Generation:  w.Metadata.Generation,
		Annotations: w.Metadata.Annotations,
		Raw:         json.RawMessage(raw),
	}
	if c.isDeployment() {
		var d wireDeployment
		if err := decodeJSON(raw, &d); err != nil {
			return Child{}, err
		}
		c.Deployment = &ObservedDeployment{Replicas: 1, Selector: d.Spec.Selector, Status: d.Status}
		if d.Spec.Replicas != nil {
			c.Deployment.Replicas = *d.Spec.Replicas
		}
	}
	return c, nil
}

func (c *Child) isDeployment() bool { return c.APIVersion == "apps/v1" && c.Kind == "Deployment" }
func (c *Child) isService() bool    { return c.APIVersion == "v1" && c.Kind == "Service" }

// sortChildren orders children by kind, namespace and name, so that answers never depend on map order.
func sortChildren(cs []Child) {
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.APIVersion != b.APIVersion {
			return a.APIVersion < b.APIVersion
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}

// decodeJSON decodes data into v and turns encoding/json errors into a *RequestError naming the field.
func decodeJSON(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return &RequestError{Problem: "empty body: a JSON object is required"}
	}
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		return &RequestError{Field: fieldPath(typeErr.Field), Problem: fmt.Sprintf("expected %s, got JSON %s", jsonTypeName(typeErr.Type.Kind().String()), typeErr.Value)}
	case errors.As(err, &syntaxErr):
		return &RequestError{Problem: fmt.Sprintf("invalid JSON at byte %d: %v", syntaxErr.Offset, err)}
	default:
		return &RequestError{Problem: "invalid JSON: " + err.Error()}
	}
}

// fieldPath renders the path encoding/json reports, which may escape "/" as in a JSON pointer.
func fieldPath(f string) string {
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(f)
}

// jsonTypeName names a Go kind the way a JSON author thinks of it.
func jsonTypeName(kind string) string {
	switch kind {
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "integer"
	case "float32", "float64":
		return "number"
	}
	return kind
}

func prefixDot(field string) string {
	if field == "" {
		return ""
	}
	return "." + field
}

// decodeSpec decodes parent.spec field by field, so that a problem names its field and never
// hides the other fields. Defaults are applied as the CRD would apply them.
func decodeSpec(raw json.RawMessage) (webappv1.WebAppSpec, error) {
	spec := webappv1.WebAppSpec{}
	if isNull(raw) {
		return spec, &FieldError{Field: "spec", Problem: "required"}
	}
	var w wireSpec
	if err := json.Unmarshal(raw, &w); err != nil {
		return spec, &FieldError{Field: "spec", Problem: "must be an object"}
	}
	var errs FieldErrors
	if !isNull(w.Image) {
		if err := json.Unmarshal(w.Image, &spec.Image); err != nil {
			errs = append(errs, FieldError{Field: "spec.image", Problem: "must be a string, got " + quoteRaw(w.Image)})
		}
	}
	defaultReplicas := int32(webappv1.DefaultReplicas)
	spec.Replicas, errs = decodeInt32(w.Replicas, "spec.replicas", &defaultReplicas, 0, webappv1.MaxReplicas, errs)
	spec.Port, errs = decodeInt32(w.Port, "spec.port", nil, webappv1.MinPort, webappv1.MaxPort, errs)
	if !isNull(w.Env) {
		if err := json.Unmarshal(w.Env, &spec.Env); err != nil {
			errs = append(errs, FieldError{Field: "spec.env", Problem: "must be a list of {name, value, valueFrom}: " + problemOf(err)})
		}
	}
	if !isNull(w.Resources) {
		spec.Resources = &corev1.ResourceRequirements{}
		if err := json.Unmarshal(w.Resources, spec.Resources); err != nil {
			errs = append(errs, FieldError{Field: "spec.resources", Problem: "must be {limits, requests} of quantities: " + problemOf(err)})
		}
	}
	if len(errs) > 0 {
		return spec, errs
	}
	return spec, nil
}

// decodeInt32 reads an optional integer field that must lie in [lo, hi]. A number too large for
// int32 gets the same message as one outside the range, naming the field. def is used when the
// field is absent; nil def leaves it nil.
func decodeInt32(raw json.RawMessage, field string, def *int32, lo, hi int64, errs FieldErrors) (*int32, FieldErrors) {
	if isNull(raw) {
		return def, errs
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, append(errs, FieldError{Field: field, Problem: "must be an integer, got " + quoteRaw(raw)})
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		var numErr *strconv.NumError
		if !errors.As(err, &numErr) || numErr.Err != strconv.ErrRange {
			return nil, append(errs, FieldError{Field: field, Problem: "must be an integer, got " + quoteRaw(raw)})
		}
	}
	if err != nil || i < lo || i > hi {
		return nil, append(errs, FieldError{Field: field, Problem: rangeProblem(lo, hi, quoteRaw(raw))})
	}
	v := int32(i)
	return &v, errs
}

// previousConditions reads status.conditions leniently: a status the hook cannot read only means
// that lastTransitionTime starts afresh, so it is never an error.
func previousConditions(raw json.RawMessage) []metav1.Condition {
	if isNull(raw) {
		return nil
	}
	var s struct {
		Conditions []metav1.Condition `json:"conditions"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return s.Conditions
}

// quoteRaw renders a raw JSON value for a message, shortened like quote.
func quoteRaw(raw json.RawMessage) string {
	if r := []rune(string(raw)); len(r) > maxQuoted {
		return string(r[:maxQuoted]) + "…"
	}
	return string(raw)
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

func problemOf(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.Field != "" {
		return fmt.Sprintf("%s: expected %s, got JSON %s", fieldPath(typeErr.Field), jsonTypeName(typeErr.Type.Kind().String()), typeErr.Value)
	}
	return err.Error()
}

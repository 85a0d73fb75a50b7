// Package sync decides, for one WebApp, which children should exist and what its status is, as pure functions of a Metacontroller hook request.
package sync

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

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
	// specRaw is parent.spec as sent, which Memo keys on; nil when the request was not decoded.
	specRaw []byte
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
	// SpecHash is the child's AnnotationSpecHash annotation, empty when absent. Other annotations
	// are not decoded on every call; keptForm reads them from Raw when it needs them.
	SpecHash string
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
	Status DeploymentStatus
}

// DeploymentStatus is the part of an apps/v1 DeploymentStatus that the decision reads. Condition
// times are not decoded.
type DeploymentStatus struct {
	ObservedGeneration int64 `json:"observedGeneration"`
	Replicas           int32 `json:"replicas"`
	UpdatedReplicas    int32 `json:"updatedReplicas"`
	ReadyReplicas      int32 `json:"readyReplicas"`
	AvailableReplicas  int32 `json:"availableReplicas"`
	// TerminatingReplicas counts pods being deleted; nil when the cluster does not report it.
	TerminatingReplicas *int32                `json:"terminatingReplicas"`
	Conditions          []DeploymentCondition `json:"conditions"`
}

// DeploymentCondition is one status condition of a Deployment, without its times.
type DeploymentCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// specHashOnly decodes a metadata.annotations object keeping only AnnotationSpecHash; the others,
// Metacontroller's large last-applied configuration among them, are skipped without being copied.
type specHashOnly string

// UnmarshalJSONFrom implements json/v2's UnmarshalerFrom.
func (a *specHashOnly) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch k := dec.PeekKind(); k {
	case 'n':
		_, err := dec.ReadToken()
		return err
	case '{':
	default:
		return &jsonv2.SemanticError{JSONKind: k, JSONPointer: dec.StackPointer(), GoType: reflect.TypeFor[map[string]string]()}
	}
	dec.ReadToken()
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		if name.String() == AnnotationSpecHash {
			err = jsonv2.UnmarshalDecode(dec, (*string)(a))
		} else {
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
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

// repeatedNames lets a name repeat in an object, the last value winning, as in encoding/json.
var repeatedNames = jsontext.AllowDuplicateNames(true)

// The wire types hold only the fields the decision reads; everything else (managedFields, the
// controller, most of each child) is skipped by the decoder without being stored.
type wireParent struct {
	Kind     string         `json:"kind"`
	Metadata *wireMeta      `json:"metadata"`
	Spec     jsontext.Value `json:"spec"`
	Status   *struct {
		Conditions jsontext.Value `json:"conditions"`
	} `json:"status"`
}

type wireMeta struct {
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	Generation int64  `json:"generation"`
}

type wireSpec struct {
	Image     jsontext.Value `json:"image"`
	Replicas  jsontext.Value `json:"replicas"`
	Port      jsontext.Value `json:"port"`
	Env       jsontext.Value `json:"env"`
	Resources jsontext.Value `json:"resources"`
}

// wireChild is one observed child. It decodes itself in a single pass: the Deployment fields are
// decoded only when the kind, which Metacontroller sends before spec and status, says Deployment.
type wireChild struct {
	APIVersion string
	Kind       string
	Metadata   *struct {
		wireMeta
		Annotations specHashOnly `json:"annotations"`
	}
	Spec struct {
		Replicas *int32                `json:"replicas"`
		Selector *metav1.LabelSelector `json:"selector"`
	}
	Status DeploymentStatus
	// late holds spec and status when they came before kind, to decode once kind is known.
	late map[string]jsontext.Value
}

// UnmarshalJSONFrom implements json/v2's UnmarshalerFrom.
func (w *wireChild) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if dec.PeekKind() != '{' {
		return &jsonv2.SemanticError{JSONKind: dec.PeekKind(), JSONPointer: dec.StackPointer(), GoType: reflect.TypeFor[wireChild]()}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String() // a Token is void after the next decoder call
		switch name {
		case "apiVersion":
			err = jsonv2.UnmarshalDecode(dec, &w.APIVersion)
		case "kind":
			err = jsonv2.UnmarshalDecode(dec, &w.Kind)
		case "metadata":
			err = jsonv2.UnmarshalDecode(dec, &w.Metadata)
		case "spec", "status":
			switch {
			case w.Kind == "" || w.APIVersion == "": // not yet known whether this is a Deployment
				var v jsontext.Value
				if v, err = dec.ReadValue(); err == nil {
					if w.late == nil {
						w.late = map[string]jsontext.Value{}
					}
					w.late[name] = v.Clone()
				}
			case w.isDeployment() && name == "spec":
				err = jsonv2.UnmarshalDecode(dec, &w.Spec)
			case w.isDeployment():
				err = jsonv2.UnmarshalDecode(dec, &w.Status)
			default:
				err = dec.SkipValue()
			}
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	if w.isDeployment() {
		at := fieldPath(dec.StackPointer()) // the child's own path, to name fields decoded late
		if err := decodeField(w.late["spec"], memberPath(at, "spec"), &w.Spec); err != nil {
			return err
		}
		if err := decodeField(w.late["status"], memberPath(at, "status"), &w.Status); err != nil {
			return err
		}
	}
	return nil
}

// memberPath joins two parts of a field path with a dot; either may be empty.
func memberPath(path, name string) string {
	switch {
	case path == "":
		return name
	case name == "":
		return path
	}
	return path + "." + name
}

func (w *wireChild) isDeployment() bool { return w.APIVersion == "apps/v1" && w.Kind == "Deployment" }

// DecodeRequest decodes a Metacontroller sync or finalize request body, in either hook version,
// in one pass over the body. Names match exactly, strings must be valid UTF-8, and when a name
// repeats the last value wins. Each Child.Raw is a slice of body, which must not change afterwards.
// It returns a *RequestError when the body is not a JSON object, has no parent.metadata.name or
// namespace, or has a wrong type outside parent.spec. Problems inside parent.spec are not errors
// here: they are recorded in Parent.SpecError so that the decision can answer Invalid and keep
// every child.
func DecodeRequest(body []byte) (*Request, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, &RequestError{Problem: "empty body: a JSON object is required"}
	}
	req := &Request{}
	var parent *wireParent
	// A repeated name is not an error: the last value wins, as in encoding/json (which Metacontroller
	// and the apiserver use), so the hook reads a body the way its sender meant it. Tracking names
	// to reject repeats would cost a third of the decoding time.
	dec := jsontext.NewDecoder(bytes.NewBuffer(body), repeatedNames) // a bytes.Buffer is parsed in place
	err := func() error {
		if k := dec.PeekKind(); k != '{' {
			if k == 0 {
				_, err := dec.ReadToken()
				return err
			}
			return &jsonv2.SemanticError{JSONKind: k, JSONPointer: dec.StackPointer(), GoType: reflect.TypeFor[Request]()}
		}
		dec.ReadToken()
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return err
			}
			switch name.String() {
			case "parent":
				err = jsonv2.UnmarshalDecode(dec, &parent)
			case "finalizing":
				err = jsonv2.UnmarshalDecode(dec, &req.Finalizing)
			case "children":
				err = decodeChildren(dec, body, req)
			default:
				err = dec.SkipValue()
			}
			if err != nil {
				return err
			}
		}
		dec.ReadToken()
		_, err := dec.ReadToken() // anything after the object is an error
		if err == io.EOF {
			return nil
		}
		if err == nil {
			return &jsontext.SyntacticError{ByteOffset: dec.InputOffset(), Err: errors.New("unexpected data after the request object")}
		}
		return err
	}()
	if err != nil {
		return nil, requestError(err)
	}
	switch {
	case parent == nil:
		return nil, &RequestError{Field: "parent", Problem: "required"}
	case parent.Metadata == nil:
		return nil, &RequestError{Field: "parent.metadata", Problem: "required"}
	case parent.Metadata.Name == "":
		return nil, &RequestError{Field: "parent.metadata.name", Problem: "required"}
	case parent.Metadata.Namespace == "":
		return nil, &RequestError{Field: "parent.metadata.namespace", Problem: "required: WebApp is a namespaced resource"}
	case parent.Kind != "" && parent.Kind != webappv1.Kind:
		return nil, &RequestError{Field: "parent.kind", Problem: fmt.Sprintf("must be %s, got %q", webappv1.Kind, parent.Kind)}
	}
	req.Parent.Name = parent.Metadata.Name
	req.Parent.Namespace = parent.Metadata.Namespace
	req.Parent.Generation = parent.Metadata.Generation
	req.Parent.Spec, req.Parent.SpecError = decodeSpec(parent.Spec)
	req.Parent.specRaw = parent.Spec
	if parent.Status != nil {
		req.Parent.Conditions = previousConditions(parent.Status.Conditions)
	}
	for i := range req.Children {
		if req.Children[i].Namespace == "" {
			req.Children[i].Namespace = req.Parent.Namespace
		}
	}
	sortChildren(req.Children)
	return req, nil
}

// decodeChildren reads the children object: {"Kind.apiVersion": {key: object}}. The keys are
// never read; each object keeps its bytes in body as Child.Raw.
func decodeChildren(dec *jsontext.Decoder, body []byte, req *Request) error {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		return err
	}
	if k := dec.PeekKind(); k != '{' {
		return &jsonv2.SemanticError{JSONKind: k, JSONPointer: dec.StackPointer(), GoType: reflect.TypeFor[map[string]any]()}
	}
	dec.ReadToken()
	seen := map[string]int{} // identity to index in req.Children
	for dec.PeekKind() != '}' {
		if _, err := dec.ReadToken(); err != nil { // the child type, "Kind.apiVersion"
			return err
		}
		switch k := dec.PeekKind(); k {
		case 'n':
			dec.ReadToken()
			continue
		case '{':
		default:
			return &jsonv2.SemanticError{JSONKind: k, JSONPointer: dec.StackPointer(), GoType: reflect.TypeFor[map[string]any]()}
		}
		dec.ReadToken()
		for dec.PeekKind() != '}' {
			if _, err := dec.ReadToken(); err != nil { // the key: a name or namespace/name
				return err
			}
			start := dec.InputOffset()
			var w wireChild
			if err := jsonv2.UnmarshalDecode(dec, &w); err != nil {
				return err
			}
			raw := bytes.TrimLeft(body[start:dec.InputOffset()], " \t\r\n:")
			c, err := newChild(&w, raw)
			if err != nil {
				path := dec.StackPointer()
				return &RequestError{Field: memberPath(fieldPath(path), err.Field), Problem: err.Problem}
			}
			// The same object twice (a repeated key) is one child: the last one read wins.
			if i, ok := seen[c.identity()]; ok {
				req.Children[i] = c
				continue
			}
			seen[c.identity()] = len(req.Children)
			req.Children = append(req.Children, c)
		}
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

// newChild checks a decoded child's identity and keeps what the decision reads.
func newChild(w *wireChild, raw []byte) (Child, *RequestError) {
	switch {
	case w.APIVersion == "":
		return Child{}, &RequestError{Field: "apiVersion", Problem: "required"}
	case w.Kind == "":
		return Child{}, &RequestError{Field: "kind", Problem: "required"}
	case w.Metadata == nil || w.Metadata.Name == "":
		return Child{}, &RequestError{Field: "metadata.name", Problem: "required"}
	}
	c := Child{
		APIVersion: w.APIVersion,
		Kind:       w.Kind,
		Name:       w.Metadata.Name,
		Namespace:  w.Metadata.Namespace,
		Generation: w.Metadata.Generation,
		SpecHash:   string(w.Metadata.Annotations),
		Raw:        raw,
	}
	if w.isDeployment() {
		c.Deployment = &ObservedDeployment{Replicas: 1, Selector: w.Spec.Selector, Status: w.Status}
		if w.Spec.Replicas != nil {
			c.Deployment.Replicas = *w.Spec.Replicas
		}
	}
	return c, nil
}

// DecodeChild decodes one observed child object, as DecodeRequest does. It returns a
// *RequestError when the object has no apiVersion, kind or metadata.name, or when a Deployment's
// spec.replicas, spec.selector or status has a wrong type.
func DecodeChild(raw []byte) (Child, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return Child{}, &RequestError{Problem: "empty body: a JSON object is required"}
	}
	var w wireChild
	if err := requestError(jsonv2.Unmarshal(raw, &w, repeatedNames)); err != nil {
		return Child{}, err
	}
	c, err := newChild(&w, raw)
	if err != nil {
		return Child{}, err
	}
	return c, nil
}

// decodeField decodes an optional raw field, naming it in errors.
func decodeField(raw jsontext.Value, name string, v any) error {
	if isNull(raw) {
		return nil
	}
	err := requestError(jsonv2.Unmarshal(raw, v, repeatedNames))
	var re *RequestError
	if errors.As(err, &re) {
		re.Field = memberPath(name, re.Field)
	}
	return err
}

// identity names a child by apiVersion, kind, namespace and name.
func (c *Child) identity() string { return childID(c.APIVersion, c.Kind, c.Namespace, c.Name) }

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

// requestError turns a json/v2 error into a *RequestError naming the field; nil stays nil.
func requestError(err error) error {
	if err == nil {
		return nil
	}
	var syntaxErr *jsontext.SyntacticError
	var semanticErr *jsonv2.SemanticError
	var re *RequestError
	switch {
	case errors.As(err, &re):
		return re
	case errors.As(err, &syntaxErr):
		return &RequestError{Field: fieldPath(syntaxErr.JSONPointer), Problem: fmt.Sprintf("invalid JSON at byte %d: %v", syntaxErr.ByteOffset, syntaxErr.Err)}
	case errors.As(err, &semanticErr):
		got := "JSON " + kindName(semanticErr.JSONKind)
		if semanticErr.JSONKind == '0' && len(semanticErr.JSONValue) > 0 {
			got += " " + quoteRaw(semanticErr.JSONValue)
		}
		return &RequestError{Field: fieldPath(semanticErr.JSONPointer), Problem: fmt.Sprintf("expected %s, got %s", goTypeName(semanticErr.GoType), got)}
	}
	return &RequestError{Problem: "invalid JSON: " + err.Error()}
}

// maxPathDepth is how many levels of a JSON path an error message shows.
const maxPathDepth = 16

// fieldPath renders a JSON pointer as a path a person reads: /parent/metadata/name is
// parent.metadata.name, /children/Service.v1/web is children["Service.v1"]["web"], and list
// indexes are [n].
func fieldPath(p jsontext.Pointer) string {
	var b strings.Builder
	depth := 0
	for tok := range p.Tokens() {
		if depth++; depth > maxPathDepth {
			b.WriteString("…") // deeper paths only repeat; keep error messages short
			break
		}
		switch {
		case tok != "" && strings.Trim(tok, "0123456789") == "":
			b.WriteString("[" + tok + "]")
		case tok != "" && strings.Trim(tok, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
		default:
			b.WriteString("[" + strconv.Quote(tok) + "]")
		}
	}
	return b.String()
}

// kindName names a JSON kind the way a JSON author thinks of it.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	case 'n':
		return "null"
	case 't', 'f':
		return "bool"
	}
	return "value"
}

// goTypeName names the JSON a Go type expects.
func goTypeName(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	return t.Kind().String()
}

// decodeSpec decodes parent.spec field by field, so that a problem names its field and never
// hides the other fields. Defaults are applied as the CRD would apply them.
func decodeSpec(raw jsontext.Value) (webappv1.WebAppSpec, error) {
	spec := webappv1.WebAppSpec{}
	if isNull(raw) {
		return spec, &FieldError{Field: "spec", Problem: "required"}
	}
	var w wireSpec
	if err := jsonv2.Unmarshal(raw, &w, repeatedNames); err != nil {
		return spec, &FieldError{Field: "spec", Problem: "must be an object"}
	}
	var errs FieldErrors
	if !isNull(w.Image) {
		if err := jsonv2.Unmarshal(w.Image, &spec.Image, repeatedNames); err != nil {
			errs = append(errs, FieldError{Field: "spec.image", Problem: "must be a string, got " + quoteRaw(w.Image)})
		}
	}
	defaultReplicas := int32(webappv1.DefaultReplicas)
	spec.Replicas, errs = decodeInt32(w.Replicas, "spec.replicas", &defaultReplicas, 0, webappv1.MaxReplicas, errs)
	spec.Port, errs = decodeInt32(w.Port, "spec.port", nil, webappv1.MinPort, webappv1.MaxPort, errs)
	if !isNull(w.Env) {
		if err := jsonv2.Unmarshal(w.Env, &spec.Env, repeatedNames); err != nil {
			errs = append(errs, FieldError{Field: "spec.env", Problem: "must be a list of {name, value, valueFrom}: " + problemOf(err)})
		}
	}
	if !isNull(w.Resources) {
		spec.Resources = &corev1.ResourceRequirements{}
		if err := jsonv2.Unmarshal(w.Resources, spec.Resources, repeatedNames); err != nil {
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
func decodeInt32(raw jsontext.Value, field string, def *int32, lo, hi int64, errs FieldErrors) (*int32, FieldErrors) {
	if isNull(raw) {
		return def, errs
	}
	if raw.Kind() != '0' {
		return nil, append(errs, FieldError{Field: field, Problem: "must be an integer, got " + quoteRaw(raw)})
	}
	i, err := strconv.ParseInt(string(raw), 10, 64)
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
func previousConditions(raw jsontext.Value) []metav1.Condition {
	var conditions []metav1.Condition
	if isNull(raw) || jsonv2.Unmarshal(raw, &conditions, repeatedNames) != nil {
		return nil
	}
	return conditions
}

// quoteRaw renders a raw JSON value for a message, shortened like quote.
func quoteRaw(raw []byte) string {
	if r := []rune(string(raw)); len(r) > maxQuoted {
		return string(r[:maxQuoted]) + "…"
	}
	return string(raw)
}

func isNull(raw []byte) bool {
	return len(raw) == 0 || string(raw) == "null"
}

func problemOf(err error) string {
	return requestError(err).Error()
}

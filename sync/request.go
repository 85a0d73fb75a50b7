package sync

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// Request is one Metacontroller CompositeController hook request, reduced to what the decision
// reads. Build one with DecodeRequest; tests may also fill in Parent directly.
type Request struct {
	// Parent is the observed WebApp.
	Parent Parent
	// Children are all observed children of every type, sorted by kind, apiVersion, namespace and
	// name. The keys Metacontroller files them under (v1: name, v2: namespace/name) are not kept.
	Children []Child
	// Related holds the objects the customize hook asked Metacontroller to send along.
	Related Related
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
	// Spec is the WebApp's spec as decoded, with webappv1.Default applied. It is meaningful only
	// when SpecErrors is empty.
	Spec webappv1.WebAppSpec
	// SpecErrors are set when parent.spec was absent or did not fit the WebApp types, for example
	// a string where a number belongs: one per member at fault, naming its path. Such a spec is
	// reported as Invalid, never as a bad request, so that the user sees the problem on the
	// WebApp and no child is touched.
	SpecErrors field.ErrorList
	// Conditions are the WebApp's previous status conditions, read only to keep lastTransitionTime:
	// DecodeRequest fills in their type, status and lastTransitionTime only.
	Conditions []metav1.Condition
}

// Child is one observed child object.
type Child struct {
	// APIVersion, Kind and Name identify the object; DecodeRequest requires all three.
	APIVersion string
	Kind       string
	Name       string
	// Namespace is metadata.namespace; DecodeRequest defaults it to the parent's, as Metacontroller does.
	Namespace string
	// Built is true for the kinds the hook builds: Deployment, Service, Ingress,
	// PodDisruptionBudget and HorizontalPodAutoscaler. Only such a child, named after the WebApp,
	// is ever rebuilt or let go by a sync; any other child is kept as it is.
	Built bool
	// Deployment, Ingress and Autoscaler are what the decision reads of a child of that kind (see
	// observed.go), decoded from the request; nil for a child of any other kind.
	Deployment *ObservedDeployment
	Ingress    *ObservedIngress
	Autoscaler *ObservedAutoscaler
	// Raw is the object exactly as observed: the source of its apply form when it is kept
	// unchanged. It does not alias the request body.
	Raw json.RawMessage
}

// RequestError reports a hook request that cannot be understood at all: not JSON, no parent, a
// wrong type outside parent.spec, or a child without an identity. It is answered with 400 and
// nothing is applied.
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

// decodeOptions are those of every decode here. Names match exactly and strings must be valid
// UTF-8; a repeated name is not an error: the last value wins, as in encoding/json (which
// Metacontroller and the apiserver use), so the hook reads a body the way its sender meant it.
var decodeOptions = jsontext.AllowDuplicateNames(true)

// The wire types hold what the decision reads; every other member (the controller, related
// objects of other kinds, most of the parent) is passed over by the decoder without being stored,
// whatever JSON it holds.
type wireRequest struct {
	Parent     *wireParent                       `json:"parent"`
	Children   map[string]map[string]wireChild   `json:"children"`
	Related    map[string]map[string]wireRelated `json:"related"`
	Finalizing bool                              `json:"finalizing"`
}

type wireParent struct {
	Kind     string `json:"kind"`
	Metadata *struct {
		Name       string `json:"name"`
		Namespace  string `json:"namespace"`
		Generation int64  `json:"generation"`
	} `json:"metadata"`
	Spec   jsontext.Value `json:"spec"`
	Status wireStatus     `json:"status"`
}

// wireHead is what every observed child must carry, whatever its kind.
type wireHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   *struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// wireChild decodes one observed child where it stands in the request.
//
// Metacontroller files each child under its own type, "Kind.apiVersion", so a child filed under
// a kind the hook builds is decoded straight from the request into that kind's view (observed.go),
// in the one pass that reads the request, and must be of that kind; its Raw is then cut from the
// body by DecodeRequest, from the offsets recorded here. Any other child is read whole, kept as
// Raw, and decoded by what it says it is.
type wireChild struct {
	child Child
	// start and end are the input offsets around a child decoded in place, whose Raw is still to
	// be taken from the body: start is just after its member name, end just after its '}'.
	// Both are 0 when Raw is already set.
	start, end int64
}

// UnmarshalJSONFrom implements json/v2's UnmarshalerFrom.
func (w *wireChild) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*w = wireChild{} // a repeated key decodes into the same wireChild: the last one wins
	at := dec.StackPointer()
	if k := dec.PeekKind(); k != '{' {
		return &RequestError{Field: fieldPath(at), Problem: "expected object, got JSON " + kindName(k)}
	}
	group := at.Parent().LastToken()
	if k := kindByKey(group); k != nil && k.Built {
		w.start = dec.InputOffset()
		c, err := k.view(func(v any) error { return jsonv2.UnmarshalDecode(dec, v, decodeOptions) })
		if err != nil {
			return err
		}
		w.end = dec.InputOffset()
		if err := c.check(at); err != nil {
			return err
		}
		if c.Kind+"."+c.APIVersion != group {
			return &RequestError{Field: fieldPath(at), Problem: fmt.Sprintf("a %s %s is filed under %s", c.APIVersion, c.Kind, group)}
		}
		w.child = c
		return nil
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	raw := v.Clone()
	var h wireHead
	if err := jsonv2.Unmarshal(raw, &h, decodeOptions); err != nil {
		return requestError(err, fieldPath(at), raw)
	}
	w.child = Child{APIVersion: h.APIVersion, Kind: h.Kind}
	if h.Metadata != nil {
		w.child.Name, w.child.Namespace = h.Metadata.Name, h.Metadata.Namespace
	}
	if err := w.child.check(at); err != nil {
		return err
	}
	if k := kindByKey(h.Kind + "." + h.APIVersion); k != nil && k.Built { // a kind the hook builds, filed elsewhere
		c, err := k.view(func(v any) error { return jsonv2.Unmarshal(raw, v, decodeOptions) })
		if err != nil {
			return requestError(err, fieldPath(at), raw)
		}
		w.child = c
	}
	w.child.Raw = json.RawMessage(raw)
	return nil
}

// check reports a child without apiVersion, kind or metadata.name, found at at.
func (c *Child) check(at jsontext.Pointer) error {
	switch {
	case c.APIVersion == "":
		return &RequestError{Field: memberPath(fieldPath(at), "apiVersion"), Problem: "required"}
	case c.Kind == "":
		return &RequestError{Field: memberPath(fieldPath(at), "kind"), Problem: "required"}
	case c.Name == "":
		return &RequestError{Field: memberPath(fieldPath(at), "metadata.name"), Problem: "required"}
	}
	return nil
}

// DecodeRequest decodes a Metacontroller sync or finalize request body, in either hook version.
// Names match exactly, strings must be valid UTF-8, and when a name repeats the last value wins.
// It returns a *RequestError when the body is not one JSON object, has no parent.metadata.name or
// namespace, has a wrong type outside parent.spec, or has a child without apiVersion, kind or
// metadata.name, or of a kind the hook builds that does not fit its Go type. Problems inside
// parent.spec are not errors here: they are recorded in Parent.SpecErrors, so that the decision
// can answer Invalid and keep every child. The result does not alias body.
func DecodeRequest(body []byte) (*Request, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, &RequestError{Problem: "empty body: a JSON object is required"}
	}
	if k := jsontext.Value(trimmed).Kind(); k != '{' && k != 0 {
		return nil, &RequestError{Problem: "expected object, got JSON " + kindName(k)}
	}
	var w wireRequest
	if err := jsonv2.Unmarshal(body, &w, decodeOptions); err != nil {
		return nil, requestError(err, "", body)
	}
	p := w.Parent
	switch {
	case p == nil:
		return nil, &RequestError{Field: "parent", Problem: "required"}
	case p.Metadata == nil:
		return nil, &RequestError{Field: "parent.metadata", Problem: "required"}
	case p.Metadata.Name == "":
		return nil, &RequestError{Field: "parent.metadata.name", Problem: "required"}
	case p.Metadata.Namespace == "":
		return nil, &RequestError{Field: "parent.metadata.namespace", Problem: "required: WebApp is a namespaced resource"}
	case p.Kind != "" && p.Kind != webappv1.Kind:
		return nil, &RequestError{Field: "parent.kind", Problem: fmt.Sprintf("must be %s, got %q", webappv1.Kind, p.Kind)}
	}
	req := &Request{
		Parent: Parent{
			Name:       p.Metadata.Name,
			Namespace:  p.Metadata.Namespace,
			Generation: p.Metadata.Generation,
			Conditions: p.Status.conditions,
		},
		Finalizing: w.Finalizing,
	}
	req.Parent.Spec, req.Parent.SpecErrors = decodeSpec(p.Spec)
	req.Children = children(body, w.Children, req.Parent.Namespace)
	req.Related = related(w.Related, req.Parent.Namespace)
	return req, nil
}

// children turns the children object, {"Kind.apiVersion": {key: object}}, into a sorted list,
// taking from body the Raw of each child that was decoded in place.
// The keys are never read: the same object under two keys is one child, the last one read
// winning, and a child's namespace defaults to the parent's.
func children(body []byte, groups map[string]map[string]wireChild, namespace string) []Child {
	var out []Child
	seen := map[childKey]int{} // identity to index in out
	for _, group := range sortedKeys(groups) {
		for _, key := range sortedKeys(groups[group]) {
			w := groups[group][key]
			c := w.child
			if c.Raw == nil {
				c.Raw = bytes.Clone(bytes.TrimLeft(body[w.start:w.end], " \t\r\n:"))
			}
			if c.Namespace == "" {
				c.Namespace = namespace
			}
			id := childKey{c.APIVersion, c.Kind, c.Namespace, c.Name}
			if i, ok := seen[id]; ok {
				out[i] = c
				continue
			}
			seen[id] = len(out)
			out = append(out, c)
		}
	}
	sortChildren(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// childKey identifies a child: apiVersion, kind, namespace and name.
type childKey struct{ apiVersion, kind, namespace, name string }

// is reports whether c is of a kind the hook builds, k.
func (c *Child) is(k *Kind) bool { return c.Built && c.Kind == k.Kind && c.APIVersion == k.APIVersion }

// sortChildren orders children by kind, apiVersion, namespace and name, so that answers never
// depend on map order.
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

// decodeSpec decodes parent.spec into the WebApp types and applies their defaults. When it does
// not fit, every member that does not is reported, each naming its field path, so that one
// problem never hides another.
func decodeSpec(raw jsontext.Value) (webappv1.WebAppSpec, field.ErrorList) {
	var spec webappv1.WebAppSpec
	switch raw.Kind() {
	case 0, 'n':
		return spec, field.ErrorList{field.Required(field.NewPath("spec"), "")}
	case '{':
	default:
		return spec, field.ErrorList{field.TypeInvalid(field.NewPath("spec"), field.OmitValueType{}, "must be an object, got "+jsonValue(raw.Kind(), raw))}
	}
	if err := jsonv2.Unmarshal(raw, &spec, decodeOptions); err != nil {
		return spec, specErrors(raw)
	}
	webappv1.Default(&spec)
	return spec, nil
}

// specMembers lists the members of WebAppSpec in declaration order: JSON name and Go type.
var specMembers = func() []struct {
	name string
	typ  reflect.Type
} {
	var out []struct {
		name string
		typ  reflect.Type
	}
	t := reflect.TypeFor[webappv1.WebAppSpec]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "-" && name != "" {
			out = append(out, struct {
				name string
				typ  reflect.Type
			}{name, f.Type})
		}
	}
	return out
}()

// specErrors decodes each member of a spec that did not decode on its own, into its Go type, and
// reports every one that fails, in declaration order, as a field.ErrorTypeTypeInvalid naming its
// path: "spec.replicas: Invalid value: expected integer (32-bit), got JSON string "three"".
func specErrors(raw jsontext.Value) field.ErrorList {
	var members map[string]jsontext.Value
	if err := jsonv2.Unmarshal(raw, &members, decodeOptions); err != nil {
		return field.ErrorList{field.TypeInvalid(field.NewPath("spec"), field.OmitValueType{}, "must be an object")}
	}
	var errs field.ErrorList
	for _, m := range specMembers {
		v, ok := members[m.name]
		if !ok {
			continue
		}
		if err := jsonv2.Unmarshal(v, reflect.New(m.typ).Interface(), decodeOptions); err != nil {
			path, problem := jsonProblem(err, "spec."+m.name, v)
			errs = append(errs, &field.Error{Type: field.ErrorTypeTypeInvalid, Field: path, BadValue: field.OmitValueType{}, Detail: problem})
		}
	}
	if len(errs) == 0 { // cannot happen: the whole spec failed, so some member did
		return field.ErrorList{field.Invalid(field.NewPath("spec"), field.OmitValueType{}, "does not fit the WebApp spec")}
	}
	return errs
}

// wireStatus reads the parent's status.conditions leniently where they stand in the request: a
// status the hook cannot read only means that lastTransitionTime starts afresh, so it is never an
// error, and a time that does not parse counts as none for its condition alone. Of each
// condition only what condition() reads is kept: its type, status and lastTransitionTime.
type wireStatus struct{ conditions []metav1.Condition }

// UnmarshalJSONFrom implements json/v2's UnmarshalerFrom.
func (w *wireStatus) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*w = wireStatus{}
	if dec.PeekKind() != '{' {
		return dec.SkipValue()
	}
	var s struct {
		Conditions wireConditions `json:"conditions"`
	}
	if err := jsonv2.UnmarshalDecode(dec, &s); err != nil {
		return err // not JSON: a wrong type is never an error here
	}
	w.conditions = s.Conditions
	return nil
}

// wireConditions is wireStatus's conditions: nil when they do not fit.
type wireConditions []metav1.Condition

// UnmarshalJSONFrom implements json/v2's UnmarshalerFrom.
func (w *wireConditions) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*w = nil
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	var conditions []struct {
		Type               string                 `json:"type"`
		Status             metav1.ConditionStatus `json:"status"`
		LastTransitionTime string                 `json:"lastTransitionTime"`
	}
	if jsonv2.Unmarshal(v, &conditions, decodeOptions) != nil {
		return nil
	}
	for _, c := range conditions {
		var at metav1.Time
		if t, err := time.Parse(time.RFC3339, c.LastTransitionTime); err == nil {
			at = metav1.NewTime(t.Local()) // as metav1.Time decodes it
		}
		*w = append(*w, metav1.Condition{Type: c.Type, Status: c.Status, LastTransitionTime: at})
	}
	return nil
}

// requestError turns an error from decoding in into a *RequestError: the *RequestError of a
// wire type's own decoder as it is, else a json/v2 error as jsonProblem describes it.
func requestError(err error, at string, in []byte) *RequestError {
	if re, ok := errors.AsType[*RequestError](err); ok {
		return re
	}
	field, problem := jsonProblem(err, at, in)
	return &RequestError{Field: field, Problem: problem}
}

// jsonProblem describes a json/v2 error from decoding in: the JSON path of the problem below at,
// the path of in ("" for the whole body), and what it is, quoting the value at fault short.
func jsonProblem(err error, at string, in []byte) (field, problem string) {
	var syntaxErr *jsontext.SyntacticError
	var semanticErr *jsonv2.SemanticError
	switch {
	case errors.As(err, &syntaxErr):
		return memberPath(at, fieldPath(syntaxErr.JSONPointer)), fmt.Sprintf("invalid JSON at byte %d: %v", syntaxErr.ByteOffset, syntaxErr.Err)
	case errors.As(err, &semanticErr):
		got := semanticErr.JSONValue
		if len(got) == 0 {
			got = valueAt(in, semanticErr.ByteOffset, semanticErr.JSONKind)
		}
		problem := fmt.Sprintf("expected %s, got %s", goTypeName(semanticErr.GoType), jsonValue(semanticErr.JSONKind, got))
		if e := semanticErr.Err; e != nil && !isNumberSyntax(e) {
			problem += ": " + e.Error()
		}
		return memberPath(at, fieldPath(semanticErr.JSONPointer)), problem
	}
	return at, "invalid JSON: " + err.Error()
}

// maxQuotedBytes bounds the bytes of a request valueAt reads: maxQuoted characters of at most
// four bytes each, and the quotes around them.
const maxQuotedBytes = 4*maxQuoted + 2

// valueAt returns the JSON number or string of kind k that starts at byte off of in, for an error
// message to quote (jsonValue), or nil: for any other kind, which no message quotes, and when no
// such value starts there (an offset of an inner decode, relative to another text). It reads at
// most maxQuotedBytes of in and decodes nothing, so that an error about a large body costs no
// more than the body did: a string longer than that is returned cut, without its closing quote,
// which quoteRaw marks with "…".
func valueAt(in []byte, off int64, k jsontext.Kind) jsontext.Value {
	if off < 0 || off >= int64(len(in)) {
		return nil
	}
	window := in[off:min(int64(len(in)), off+maxQuotedBytes)]
	switch k {
	case '0':
		if c := window[0]; c != '-' && (c < '0' || c > '9') {
			return nil
		}
		n := 1
		for n < len(window) && strings.IndexByte("+-.0123456789eE", window[n]) >= 0 {
			n++
		}
		return window[:n]
	case '"':
		if window[0] != '"' {
			return nil
		}
		for i := 1; i < len(window); i++ {
			switch window[i] {
			case '\\':
				i++
			case '"':
				return window[:i+1]
			}
		}
		for range utf8.UTFMax - 1 { // never cut a character in two
			if r, size := utf8.DecodeLastRune(window); len(window) < 2 || r != utf8.RuneError || size > 1 {
				break
			}
			window = window[:len(window)-1]
		}
		return window
	}
	return nil
}

// isNumberSyntax reports json/v2's error for a number that is not an integer, which the
// "expected integer, got JSON number 1.5" message already says.
func isNumberSyntax(err error) bool { return err.Error() == "invalid syntax" }

// maxPathDepth is how many levels of a JSON path an error message shows.
const maxPathDepth = 16

// fieldPath renders a JSON pointer as a path a person reads: /parent/metadata/name is
// parent.metadata.name, /children/Service.v1/web is children["Service.v1"].web, and list
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

// memberPath joins two parts of a field path; either may be empty, and an index or quoted
// member ("[0]", `["a.b"]`) joins without a dot.
func memberPath(path, name string) string {
	switch {
	case path == "":
		return name
	case name == "":
		return path
	case name[0] == '[':
		return path + name
	}
	return path + "." + name
}

// jsonValue names what a JSON value was, for a message: its kind and, for a number or a short
// string, the value itself.
func jsonValue(k jsontext.Kind, raw []byte) string {
	got := "JSON " + kindName(k)
	if (k == '0' || k == '"') && len(raw) > 0 {
		got += " " + quoteRaw(raw)
	}
	return got
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
	switch t {
	case reflect.TypeFor[metav1.Time](), reflect.TypeFor[metav1.MicroTime]():
		return "a time"
	}
	switch t.PkgPath() + "." + t.Name() {
	case "k8s.io/apimachinery/pkg/api/resource.Quantity":
		return "a quantity"
	case "k8s.io/apimachinery/pkg/util/intstr.IntOrString":
		return "an integer or a string"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("integer (%d-bit)", t.Bits())
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	return t.Kind().String()
}

// quoteRaw renders a raw JSON value for a message as short does, reading at most
// maxQuotedBytes of it however large it is, and marks with "…" a string cut before its closing
// quote (valueAt) too.
func quoteRaw(raw []byte) string {
	s := short(string(raw[:min(len(raw), maxQuotedBytes)]))
	if len(raw) > 0 && raw[0] == '"' && !closedString(raw) && !strings.HasSuffix(s, "…") {
		s += "…"
	}
	return s
}

// closedString reports whether raw, a JSON string's text from its opening quote, also holds its
// closing quote: it ends in a quote that no backslash escapes.
func closedString(raw []byte) bool {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return false
	}
	backslashes := 0
	for i := len(raw) - 2; i > 0 && raw[i] == '\\'; i-- {
		backslashes++
	}
	return backslashes%2 == 0
}

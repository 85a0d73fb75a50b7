package wire

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

// DecodeRequest decodes a Metacontroller sync or finalize request body, in either hook version.
// Names match exactly, strings must be valid UTF-8, and when a name repeats the last value wins.
// It returns a *RequestError when the body is not one JSON object, has no parent.metadata.name or
// namespace, has a wrong type outside parent.spec, or has a child without apiVersion, kind or
// metadata.name, or of a kind the hook builds that does not fit its Go type. Problems inside
// parent.spec are not errors here: they are recorded in sync.Parent.SpecErrors, so that the decision
// can answer Invalid and keep every child. The result does not alias body.
func DecodeRequest(body []byte) (*sync.Request, error) {
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
	req := &sync.Request{
		Parent: sync.Parent{
			Name:        p.Metadata.Name,
			Namespace:   p.Metadata.Namespace,
			Generation:  p.Metadata.Generation,
			Conditions:  p.Status.conditions,
			Canary:      p.Status.canary,
			Promote:     p.Metadata.Annotations.Promote,
			Abort:       p.Metadata.Annotations.Abort,
			PromoteStep: p.Metadata.Annotations.PromoteStep,
			Retry:       p.Metadata.Annotations.Retry,
		},
		Finalizing: w.Finalizing,
	}
	req.Parent.Spec, req.Parent.SpecErrors = decodeSpec(p.Spec)
	req.Children = children(body, w.Children, req.Parent.Namespace)
	req.Related = related(w.Related, req.Parent.Namespace)
	req.ChildKinds = childKinds(body, w.Children, w.Controller)
	return req, nil
}

// decodeOptions are those of every decode here. Names match exactly and strings must be valid
// UTF-8; a repeated name is not an error: the last value wins, as in encoding/json (which
// Metacontroller and the apiserver use), so the hook reads a body the way its sender meant it.
var decodeOptions = jsontext.AllowDuplicateNames(true)

// The wire types hold what the decision reads; every other member (the controller, related
// objects of other kinds, most of the parent) is passed over by the decoder without being stored,
// whatever JSON it holds.
type wireRequest struct {
	Controller wireController                    `json:"controller"`
	Parent     *wireParent                       `json:"parent"`
	Children   map[string]map[string]wireChild   `json:"children"`
	Related    map[string]map[string]wireRelated `json:"related"`
	Finalizing bool                              `json:"finalizing"`
}

// wireController is the CompositeController a request carries, kept as it came. Only a request
// without children (a customize request) needs it, to tell the kinds of its childResources: a
// sync or finalize request has a children entry for every declared kind already. So it is
// only located, not decoded or copied, as the request is read: start and end are its input
// offsets in the body. That saves every sync decoding it (BenchmarkDecodeRequest).
type wireController struct {
	start, end int64
}

// UnmarshalJSONFrom implements json/v2's UnmarshalerFrom.
func (w *wireController) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	v, err := dec.ReadValue()
	if err != nil {
		return err // not JSON
	}
	w.end = dec.InputOffset()
	w.start = w.end - int64(len(v))
	return nil
}

// childResources are the kinds the childResources of the controller at w in body name, read
// leniently: a controller that does not fit (a test's "controller": {}, or none) names none, and
// is never an error.
func (w wireController) childResources(body []byte) []*sync.Kind {
	if w.end <= w.start || w.end > int64(len(body)) {
		return nil
	}
	var c struct {
		Spec struct {
			ChildResources []struct {
				APIVersion string `json:"apiVersion"`
				Resource   string `json:"resource"`
			} `json:"childResources"`
		} `json:"spec"`
	}
	if jsonv2.Unmarshal(body[w.start:w.end], &c, decodeOptions) != nil {
		return nil
	}
	var kinds []*sync.Kind
	for _, r := range c.Spec.ChildResources {
		if k := sync.KindByResource(r.APIVersion, r.Resource); k != nil && k.Built {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// childKinds is sync.Request.ChildKinds: the keys of the children object or, for a request without
// children, the kinds the hook builds among the controller's childResources; nil when there are
// neither.
func childKinds(body []byte, groups map[string]map[string]wireChild, c wireController) map[string]bool {
	if len(groups) > 0 {
		kinds := make(map[string]bool, len(groups))
		for key := range groups {
			kinds[key] = true
		}
		return kinds
	}
	declared := c.childResources(body)
	if len(declared) == 0 {
		return nil
	}
	kinds := make(map[string]bool, len(declared))
	for _, k := range declared {
		kinds[k.Key()] = true
	}
	return kinds
}

type wireParent struct {
	Kind     string `json:"kind"`
	Metadata *struct {
		Name        string `json:"name"`
		Namespace   string `json:"namespace"`
		Generation  int64  `json:"generation"`
		Annotations struct {
			Promote     string `json:"webapp.example.com/promote"`      // webappv1.AnnotationPromote
			Abort       string `json:"webapp.example.com/abort"`        // webappv1.AnnotationAbort
			PromoteStep string `json:"webapp.example.com/promote-step"` // webappv1.AnnotationPromoteStep
			Retry       string `json:"webapp.example.com/retry"`        // webappv1.AnnotationRetry
		} `json:"annotations"`
	} `json:"metadata"`
	Spec   jsontext.Value `json:"spec"`
	Status wireStatus     `json:"status"`
}

// children turns the children object, {"Kind.apiVersion": {key: object}}, into a sorted list,
// taking from body the Raw of each child that was decoded in place.
// The keys are never read: the same object under two keys is one child, the last one read
// winning, and a child's namespace defaults to the parent's.
func children(body []byte, groups map[string]map[string]wireChild, namespace string) []sync.Child {
	var out []sync.Child
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

// sortChildren orders children by kind, apiVersion, namespace and name, so that answers never
// depend on map order.
func sortChildren(cs []sync.Child) {
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

// wireStatus reads the parent's status.conditions and status.canary leniently where they stand in the request: a
// status the hook cannot read only means that lastTransitionTime starts afresh, so it is never an
// error, and a time that does not parse counts as none for its condition alone. Of each
// condition only what condition() reads is kept: its type, status and lastTransitionTime.
type wireStatus struct {
	conditions []metav1.Condition
	canary     *webappv1.CanaryStatus
}

// UnmarshalJSONFrom implements json/v2's UnmarshalerFrom.
func (w *wireStatus) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*w = wireStatus{}
	if dec.PeekKind() != '{' {
		return dec.SkipValue()
	}
	var s struct {
		Conditions wireConditions `json:"conditions"`
		Canary     wireCanary     `json:"canary"`
	}
	if err := jsonv2.UnmarshalDecode(dec, &s); err != nil {
		return err // not JSON: a wrong type is never an error here
	}
	w.conditions, w.canary = s.Conditions, s.Canary.status
	return nil
}

// wireCanary is wireStatus's canary: nil when absent or when it does not fit (a wrong type, no
// revision, a phase the hook does not know), in which case a canary that was running starts
// again from its first step (the stable pods are not touched).
type wireCanary struct{ status *webappv1.CanaryStatus }

// UnmarshalJSONFrom implements json/v2's UnmarshalerFrom.
func (w *wireCanary) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	w.status = nil
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	var st webappv1.CanaryStatus
	if v.Kind() != '{' || jsonv2.Unmarshal(v, &st, decodeOptions) != nil || st.Revision == "" || !slices.Contains(webappv1.CanaryPhases, st.Phase) {
		return nil
	}
	w.status = &st
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

package sync

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"

	"github.com/go-json-experiment/json/jsontext"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// wireResponse is the JSON form of a Response: only the fields Metacontroller's strict decoding
// accepts.
type wireResponse struct {
	Status             webappv1.WebAppStatus `json:"status"`
	Children           []json.RawMessage     `json:"children"`
	ResyncAfterSeconds float64               `json:"resyncAfterSeconds,omitempty"`
	Finalized          *bool                 `json:"finalized,omitempty"`
}

// MarshalJSON encodes r as Metacontroller reads it: status, children (never null),
// resyncAfterSeconds when set, and finalized when set. Each child the hook built is written in
// apply form (applyJSON); a child kept unchanged (*unstructured.Unstructured) is written exactly
// as it is. It fails only on a child that cannot be encoded, which the decision never builds.
func (r Response) MarshalJSON() ([]byte, error) {
	w := wireResponse{
		Status:             r.Status,
		Children:           make([]json.RawMessage, len(r.Children)),
		ResyncAfterSeconds: r.ResyncAfterSeconds,
		Finalized:          r.Finalized,
	}
	for i, c := range r.Children {
		b, err := encodeChild(c)
		if err != nil {
			return nil, fmt.Errorf("encode children[%d] (%T): %w", i, c, err)
		}
		w.Children[i] = b
	}
	return json.Marshal(w)
}

// encodeChild writes one child of an answer.
func encodeChild(c runtime.Object) ([]byte, error) {
	switch o := c.(type) {
	case *unstructured.Unstructured:
		return json.Marshal(o.Object)
	case *appsv1.Deployment:
		// A Deployment is written apiVersion, kind, metadata, spec: the order its answers have
		// always had, which the golden answers pin. Other kinds follow their Go type's order.
		return applyJSON(deploymentApplyForm{APIVersion: o.APIVersion, Kind: o.Kind, Metadata: o.ObjectMeta, Spec: o.Spec})
	}
	return applyJSON(c)
}

type deploymentApplyForm struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Metadata   metav1.ObjectMeta     `json:"metadata"`
	Spec       appsv1.DeploymentSpec `json:"spec"`
}

// applyJSON encodes a typed value in apply form, without zero-value noise: no
// creationTimestamp: null, no status: {}, no resources: {}. Such fields differ from what the
// apiserver stores and would make Metacontroller update the child on every sync. encoding/json
// already leaves out false, 0 and "" of omitempty fields; applyJSON also removes nulls and the
// objects and lists that are empty or become empty, recursively. It never drops false, 0 or "".
func applyJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return pruneJSON(b)
}

// SpecHash is a short, stable hash of a Deployment spec's apply form: encoding/json writes struct
// fields in order and map keys sorted, so equal specs always hash alike. A spec that cannot be
// encoded (never one the hook builds) hashes as "".
func SpecHash(spec *appsv1.DeploymentSpec) string {
	b, err := applyJSON(spec)
	if err != nil {
		return ""
	}
	h := fnv.New64a()
	h.Write(b)
	return fmt.Sprintf("%016x", h.Sum64())
}

// pruneJSON drops nulls, and objects and lists that are empty or become empty, recursively. It
// reads and writes compact JSON in one pass.
func pruneJSON(in []byte) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(in), jsontext.AllowDuplicateNames(true)) // the input is ours
	out, _, err := pruneValue(dec, make([]byte, 0, len(in)))
	return out, err
}

// pruneValue appends the pruned next value of dec to out; kept is false when nothing was appended.
func pruneValue(dec *jsontext.Decoder, out []byte) (_ []byte, kept bool, err error) {
	switch dec.PeekKind() {
	case 'n':
		_, err = dec.ReadToken()
		return out, false, err
	case '{', '[':
		open, err := dec.ReadToken()
		if err != nil {
			return out, false, err
		}
		start := len(out)
		out = append(out, byte(open.Kind()))
		closing := jsontext.Kind('}')
		if open.Kind() == '[' {
			closing = ']'
		}
		n := 0
		for dec.PeekKind() != closing {
			mark := len(out)
			if n > 0 {
				out = append(out, ',')
			}
			if closing == '}' {
				name, err := dec.ReadValue()
				if err != nil {
					return out, false, err
				}
				out = append(append(out, name...), ':')
			}
			var kept bool
			if out, kept, err = pruneValue(dec, out); err != nil {
				return out, false, err
			}
			if kept {
				n++
			} else {
				out = out[:mark]
			}
		}
		if _, err := dec.ReadToken(); err != nil {
			return out, false, err
		}
		if n == 0 {
			return out[:start], false, nil
		}
		return append(out, byte(closing)), true, nil
	}
	v, err := dec.ReadValue()
	return append(out, v...), err == nil, err
}

package sync

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// MarshalJSON encodes r as Metacontroller reads it: status, children (never null),
// resyncAfterSeconds when set, and finalized when set, the only fields its strict decoding
// accepts. Each child the hook built is written in apply form (applyJSON); a child kept unchanged
// (*unstructured.Unstructured) is written exactly as it is. It fails only on a child that cannot
// be encoded, which the decision never builds.
func (r Response) MarshalJSON() ([]byte, error) {
	children := make([]json.RawMessage, len(r.Children))
	for i, c := range r.Children {
		var err error
		if children[i], err = encodeChild(c); err != nil {
			return nil, fmt.Errorf("encode children[%d] (%T): %w", i, c, err)
		}
	}
	return json.Marshal(struct {
		Status             webappv1.WebAppStatus `json:"status"`
		Children           []json.RawMessage     `json:"children"`
		ResyncAfterSeconds float64               `json:"resyncAfterSeconds,omitempty"`
		Finalized          *bool                 `json:"finalized,omitempty"`
	}{r.Status, children, r.ResyncAfterSeconds, r.Finalized})
}

// encodeChild writes one child of an answer.
func encodeChild(c runtime.Object) ([]byte, error) {
	switch o := c.(type) {
	case *unstructured.Unstructured:
		return json.Marshal(o.Object)
	case *appsv1.Deployment:
		// apiVersion first: the order a Deployment's answers have always had, which the golden
		// answers pin. Other kinds follow their Go type's order, kind first.
		return applyJSON(deploymentFields{APIVersion: o.APIVersion, Kind: o.Kind, Metadata: o.ObjectMeta, Spec: o.Spec})
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	return pruneJSON(b, "status") // a child's status is its controller's to write, never the hook's
}

// deploymentFields is a Deployment as its answer writes it: no status.
type deploymentFields struct {
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
// It encodes with encoding/json, as Metacontroller and the apiserver decode.
func applyJSON(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return pruneJSON(b, "")
}

// SpecHash is a short, stable hash of a Deployment spec's apply form: encoding/json writes struct
// fields in order and map keys sorted, so equal specs always hash alike. A spec that cannot be
// encoded (never one the hook builds) hashes as "".
func SpecHash(spec *appsv1.DeploymentSpec) string {
	sum, ok := applyHash(spec)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%016x", sum)
}

// TemplateHash is a short, stable hash of a pod template's apply form, the revision that names
// it: equal templates hash alike, as for SpecHash. 10 hex digits, as status.canary.revision and
// the promote and abort annotations show it. A template that cannot be encoded (never one the
// hook builds) hashes as "".
func TemplateHash(t *corev1.PodTemplateSpec) string {
	sum, ok := applyHash(t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%010x", sum&(1<<40-1))
}

// applyHash is the 64-bit FNV-1a hash of v's apply form; false when v cannot be encoded.
func applyHash(v any) (uint64, bool) {
	b, err := applyJSON(v)
	if err != nil {
		return 0, false
	}
	h := fnv.New64a()
	h.Write(b)
	return h.Sum64(), true
}

// pruneJSON drops nulls, and objects and lists that are empty or become empty, recursively, from
// compact JSON as encoding/json writes it (no whitespace), and the top-level member named drop
// when drop is not "". It reads the bytes directly rather than through a tokenizer, which made
// the whole hook call markedly slower (docs/performance.md). A value it cannot read is an error.
// The result is a new slice; in is not modified.
func pruneJSON(in []byte, drop string) ([]byte, error) {
	out, end, _, err := pruneValue(in, 0, make([]byte, 0, len(in)), drop)
	if err == nil && end != len(in) {
		err = fmt.Errorf("prune JSON: unexpected byte %q at %d", in[end], end)
	}
	return out, err
}

// pruneValue appends the pruned value that starts at in[i] to out, and returns where it ends;
// kept is false when nothing was appended. If the value is an object, its member named drop (when
// drop is not "") is left out.
func pruneValue(in []byte, i int, out []byte, drop string) (_ []byte, end int, kept bool, err error) {
	if i >= len(in) {
		return out, i, false, fmt.Errorf("prune JSON: unexpected end")
	}
	switch c := in[i]; c {
	case 'n':
		if !bytes.HasPrefix(in[i:], []byte("null")) {
			return out, i, false, fmt.Errorf("prune JSON: unexpected byte %q at %d", c, i)
		}
		return out, i + 4, false, nil
	case '"':
		end, err := stringEnd(in, i)
		return append(out, in[i:end]...), end, err == nil, err
	case '{', '[':
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		start := len(out)
		out = append(out, c)
		i++
		n := 0
		for first := true; i < len(in) && in[i] != closing; first = false {
			if !first { // a comma comes before every member but the first
				if in[i] != ',' {
					return out, i, false, fmt.Errorf("prune JSON: unexpected byte %q at %d", in[i], i)
				}
				i++
			}
			mark := len(out)
			if n > 0 {
				out = append(out, ',')
			}
			dropped := false
			if closing == '}' {
				nameEnd, err := stringEnd(in, i)
				if err != nil || nameEnd >= len(in) || in[nameEnd] != ':' {
					return out, i, false, fmt.Errorf("prune JSON: bad member name at %d", i)
				}
				dropped = drop != "" && string(in[i+1:nameEnd-1]) == drop
				out = append(out, in[i:nameEnd+1]...)
				i = nameEnd + 1
			}
			var kept bool
			if out, i, kept, err = pruneValue(in, i, out, ""); err != nil {
				return out, i, false, err
			}
			if kept && !dropped {
				n++
			} else {
				out = out[:mark]
			}
		}
		if i >= len(in) {
			return out, i, false, fmt.Errorf("prune JSON: unexpected end")
		}
		if n == 0 {
			return out[:start], i + 1, false, nil
		}
		return append(out, closing), i + 1, true, nil
	}
	// A number, true or false: letters, digits and the signs, point and exponent of a number.
	j := i
	for j < len(in) && (in[j] >= 'a' && in[j] <= 'z' || in[j] >= '0' && in[j] <= '9' || bytes.IndexByte([]byte("+-.E"), in[j]) >= 0) {
		j++
	}
	return append(out, in[i:j]...), j, j > i, nil
}

// stringEnd returns the index just past the JSON string that starts at in[i].
func stringEnd(in []byte, i int) (int, error) {
	if i >= len(in) || in[i] != '"' {
		return i, fmt.Errorf("prune JSON: expected a string at %d", i)
	}
	for j := i + 1; j < len(in); j++ {
		switch in[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return len(in), fmt.Errorf("prune JSON: unterminated string at %d", i)
}

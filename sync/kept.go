package sync

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// keptForm returns the apply form that leaves an observed child exactly as it is. It prefers the
// configuration Metacontroller last applied, because answering that again makes Metacontroller's
// three-way merge a no-op. A child without it (adopted, or created by other means) is returned as
// observed, less status and server-set metadata: every field it carries is what the apiserver
// stores, so it changes nothing and cannot make Metacontroller loop. It is encoded as it is, never
// pruned, and its numbers are int64 or float64 as unstructured objects hold them.
func keptForm(c *Child) runtime.Object {
	return &unstructured.Unstructured{Object: keptObject(c)}
}

// keptAll returns the kept form of every child, in order.
func keptAll(children []Child) []runtime.Object {
	kept := make([]runtime.Object, 0, len(children))
	for i := range children {
		kept = append(kept, keptForm(&children[i]))
	}
	return kept
}

// keptObject is keptForm's content.
func keptObject(c *Child) map[string]any {
	if last := lastApplied(c); last != "" {
		obj, err := decodeObject([]byte(last))
		if err == nil && sameIdentity(obj, c) {
			obj["metadata"].(map[string]any)["namespace"] = c.Namespace
			return obj
		}
	}
	observed, err := decodeObject(c.Raw)
	if err != nil {
		// The request's decoder (sync/wire) has already decoded the child as an object; this cannot fail.
		panic(fmt.Sprintf("decode observed %s %s: %v", c.Kind, c.Name, err))
	}
	// Identity comes from the decoded fields. encoding/json, which Metacontroller uses, matches
	// keys case-insensitively, so keys that only differ in case from these are dropped rather than
	// sent twice.
	out := map[string]any{"apiVersion": c.APIVersion, "kind": c.Kind}
	for k, v := range observed {
		switch strings.ToLower(k) {
		case "apiversion", "kind", "metadata", "status":
		default:
			out[k] = v
		}
	}
	meta, _ := observed["metadata"].(map[string]any)
	kept := map[string]any{"name": c.Name}
	if c.Namespace != "" {
		kept["namespace"] = c.Namespace
	}
	if labels, ok := meta["labels"].(map[string]any); ok && len(labels) > 0 {
		kept["labels"] = labels
	}
	if annotations, ok := meta["annotations"].(map[string]any); ok {
		own := map[string]any{}
		for k, v := range annotations {
			if !isServerAnnotation(k) {
				own[k] = v
			}
		}
		if len(own) > 0 {
			kept["annotations"] = own
		}
	}
	out["metadata"] = kept
	return out
}

// lastApplied reads the configuration Metacontroller last applied to a child, "" when it has none.
// Only that annotation is decoded: the rest of the child is passed over. Keys match exactly, as
// in every decode of the request (sync/wire); c.Raw is valid JSON, which the request's decoder
// has checked.
func lastApplied(c *Child) string {
	var obj struct {
		Metadata struct {
			Annotations struct {
				LastApplied string `json:"metacontroller.k8s.io/last-applied-configuration"` // AnnotationLastApplied
			} `json:"annotations"`
		} `json:"metadata"`
	}
	if utiljson.Unmarshal(c.Raw, &obj) != nil {
		return ""
	}
	return obj.Metadata.Annotations.LastApplied
}

// AppliedTemplate is the pod template in last, a Deployment's AnnotationLastApplied: the
// template of the hook's answer that Metacontroller last applied to it. ok is false when last is
// empty, does not decode, or holds no template.
func AppliedTemplate(last string) (t *corev1.PodTemplateSpec, ok bool) {
	if last == "" {
		return nil, false
	}
	var applied struct {
		Spec struct {
			Template *corev1.PodTemplateSpec `json:"template"`
		} `json:"spec"`
	}
	if json.Unmarshal([]byte(last), &applied) != nil || applied.Spec.Template == nil {
		return nil, false
	}
	return applied.Spec.Template, true
}

// isServerAnnotation reports annotations that the apiserver, controllers or clients write; they
// are not part of a child's apply form.
func isServerAnnotation(key string) bool {
	switch key {
	case AnnotationLastApplied, "kubectl.kubernetes.io/last-applied-configuration", "deployment.kubernetes.io/revision":
		return true
	}
	return false
}

// decodeObject decodes a JSON object as the apimachinery does for unstructured objects: keys
// match exactly, and numbers become int64 when they are integers, float64 otherwise.
func decodeObject(data []byte) (map[string]any, error) {
	var obj map[string]any
	if err := utiljson.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("not an object")
	}
	return obj, nil
}

// sameIdentity reports whether an apply form names the same object as the observed child; a
// missing namespace is taken to be the child's.
func sameIdentity(obj map[string]any, c *Child) bool {
	meta, ok := obj["metadata"].(map[string]any)
	if !ok {
		return false
	}
	name, _ := meta["name"].(string)
	namespace, _ := meta["namespace"].(string)
	return obj["apiVersion"] == c.APIVersion && obj["kind"] == c.Kind && name == c.Name &&
		(namespace == "" || namespace == c.Namespace)
}

// scaledToZero returns the kept form of an observed Deployment with spec.replicas set to 0.
func scaledToZero(c *Child) runtime.Object { return withReplicas(c, 0) }

// withReplicas returns the kept form of an observed Deployment with spec.replicas set to
// replicas: how the stable Deployment keeps its template while a canary runs, and follows
// spec.replicas (or the autoscaler) all the same.
func withReplicas(c *Child, replicas int32) runtime.Object {
	obj := keptObject(c)
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	spec["replicas"] = int64(replicas)
	return &unstructured.Unstructured{Object: obj}
}

package sync

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// Object is one child in apply form, as JSON: only the fields the hook owns, as Metacontroller
// expects them.
type Object = json.RawMessage

// Labels, names and annotations the hook puts on its children.
const (
	// LabelName, LabelInstance and LabelManagedBy are the recommended Kubernetes labels. Together
	// they form the Deployment's selector, so they never change for the life of a WebApp.
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// AppName and ManagedBy are the values of LabelName and LabelManagedBy.
	AppName   = "webapp"
	ManagedBy = "webapp-hook"
	// ContainerName is the name of the single container in the pod template.
	ContainerName = "app"
	// PortName names the container port and the Service port.
	PortName = "http"
	// ServicePort is the port the Service listens on.
	ServicePort = 80
	// AnnotationSpecHash records, on the Deployment, a hash of the Deployment spec the hook asked for.
	// Comparing it with the observed Deployment tells whether the current spec has been applied yet.
	AnnotationSpecHash = "webapp.example.com/spec-hash"
	// AnnotationLastApplied is where Metacontroller keeps the apply form it last wrote to a child.
	AnnotationLastApplied = "metacontroller.k8s.io/last-applied-configuration"
)

// labelsFor returns the labels shared by the Deployment, its selector, its pod template and the Service.
func labelsFor(name string) map[string]string {
	return map[string]string{
		LabelName:      AppName,
		LabelInstance:  name,
		LabelManagedBy: ManagedBy,
	}
}

// podLabels returns the WebApp's labels, the Deployment selector and the pod labels. Normally all
// three are the one labelsFor(name) map.
// A Deployment's selector is immutable, so when the observed one has a different selector (it was
// adopted, or made by an older hook) that selector is kept and its matchLabels are added to the pod
// labels, which must match it. The Service selects the pod labels, so it always finds the pods.
func podLabels(p *Parent, observed *Child) (labels map[string]string, selector *metav1.LabelSelector, pods map[string]string) {
	labels = labelsFor(p.Name)
	selector = &metav1.LabelSelector{MatchLabels: labels}
	if observed == nil || observed.Deployment.Selector == nil || sameSelector(observed.Deployment.Selector, labels) {
		return labels, selector, labels
	}
	merged := make(map[string]string, len(labels)+len(observed.Deployment.Selector.MatchLabels))
	maps.Copy(merged, labels)
	maps.Copy(merged, observed.Deployment.Selector.MatchLabels)
	return labels, observed.Deployment.Selector, merged
}

// sameSelector reports whether a selector is exactly matchLabels: labels.
func sameSelector(s *metav1.LabelSelector, labels map[string]string) bool {
	return len(s.MatchExpressions) == 0 && maps.Equal(s.MatchLabels, labels)
}

// desiredDeployment builds the Deployment for a valid spec, in apply form, and the hash of its spec.
func desiredDeployment(p *Parent, labels map[string]string, selector *metav1.LabelSelector, pods map[string]string) (Object, string) {
	container := corev1.Container{
		Name:  ContainerName,
		Image: p.Spec.Image,
		Env:   p.Spec.Env,
	}
	if p.Spec.Port != nil {
		container.Ports = []corev1.ContainerPort{{Name: PortName, ContainerPort: *p.Spec.Port, Protocol: corev1.ProtocolTCP}}
	}
	if p.Spec.Resources != nil {
		container.Resources = *p.Spec.Resources
	}
	d := appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: p.Spec.Replicas,
			Selector: selector,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: pods},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{container}},
			},
		},
	}
	spec := applyJSON(&d.Spec)
	hash := specHash(spec)
	d.Annotations = map[string]string{AnnotationSpecHash: hash}
	return marshal(applyObject{APIVersion: d.APIVersion, Kind: d.Kind, Metadata: d.ObjectMeta, Spec: spec}), hash
}

// applyObject is a child in apply form whose spec is already pruned JSON. Its metadata has no
// zero-value noise of its own: creationTimestamp is omitzero.
type applyObject struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       json.RawMessage   `json:"spec"`
}

// desiredService builds the ClusterIP Service that exposes spec.port on ServicePort, selecting
// the pod labels. Call it only when Port is set.
func desiredService(p *Parent, labels, pods map[string]string) Object {
	s := corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, Labels: labels},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: pods,
			Ports: []corev1.ServicePort{{
				Name:       PortName,
				Port:       ServicePort,
				TargetPort: intstr.FromString(PortName),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
	return applyJSON(&s)
}

// applyJSON encodes a typed object in apply form, without zero-value noise: no status: {}, no
// resources: {}, no strategy: {}. Such fields differ from what the apiserver stores and would make
// Metacontroller update the child on every sync. encoding/json already leaves out false, 0 and ""
// of omitempty fields; pruneJSON removes the empty objects and lists it keeps.
func applyJSON(typed any) json.RawMessage {
	return pruneJSON(marshal(typed))
}

// marshal encodes a value built here from validated input; a failure is a programming error.
func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("encode %T: %v", v, err))
	}
	return b
}

// pruneJSON drops nulls, and objects and lists that are empty or become empty, recursively. It
// never drops false, 0 or "". It reads and writes compact JSON in one pass.
func pruneJSON(in []byte) []byte {
	dec := jsontext.NewDecoder(bytes.NewBuffer(in), jsontext.AllowDuplicateNames(true)) // the input is ours
	out, _, err := pruneValue(dec, make([]byte, 0, len(in)))
	if err != nil {
		panic(fmt.Sprintf("prune JSON: %v", err))
	}
	return out
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

// specHash is a short, stable hash of a Deployment spec in apply form: encoding/json writes struct
// fields in order and map keys sorted, so equal specs always hash alike.
func specHash(spec []byte) string {
	h := fnv.New64a()
	h.Write(spec)
	return fmt.Sprintf("%016x", h.Sum64())
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

// keptForm returns the apply form that leaves an observed child exactly as it is. It prefers the
// configuration Metacontroller last applied, because answering that again makes Metacontroller's
// three-way merge a no-op. A child without it (adopted, or created by other means) is returned as
// observed, less status and server-set metadata: every field it carries is what the apiserver
// stores, so it changes nothing and cannot make Metacontroller loop.
func keptForm(c *Child) Object {
	return marshal(keptObject(c))
}

// keptObject is keptForm before encoding.
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
		// DecodeChild has already decoded Raw as an object; this cannot fail.
		panic(fmt.Sprintf("decode observed %s %s: %v", c.Kind, c.Name, err))
	}
	// Identity comes from the decoded fields. encoding/json matches keys case-insensitively, so
	// keys that only differ in case from these are dropped rather than sent twice.
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

// lastApplied reads the configuration Metacontroller last applied to a child from its raw bytes.
func lastApplied(c *Child) string {
	var obj struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if jsonv2.Unmarshal(c.Raw, &obj) != nil {
		return ""
	}
	return obj.Metadata.Annotations[AnnotationLastApplied]
}

// decodeObject decodes a JSON object keeping numbers exact (as json.Number), so that a kept child
// is written back with the very numbers it was read with.
func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
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
func scaledToZero(c *Child) Object {
	obj := keptObject(c)
	spec, ok := obj["spec"].(map[string]any)
	if !ok {
		spec = map[string]any{}
		obj["spec"] = spec
	}
	spec["replicas"] = 0
	return marshal(obj)
}

// desiredReplicas is spec.replicas with the default applied.
func desiredReplicas(spec *webappv1.WebAppSpec) int32 {
	if spec.Replicas == nil {
		return webappv1.DefaultReplicas
	}
	return *spec.Replicas
}

package hooktest

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

// Answer is a hook answer as Metacontroller decodes it, children as plain JSON objects.
type Answer struct {
	Status             webappv1.WebAppStatus `json:"status"`
	Children           []map[string]any      `json:"children"`
	ResyncAfterSeconds float64               `json:"resyncAfterSeconds"`
	Finalized          *bool                 `json:"finalized"`
}

// CheckResponse checks that every child resp built (every child but those kept as observed, of
// type *unstructured.Unstructured) is of a kind the hook builds (sync.Kinds), with that kind's Go
// type, apiVersion and kind; then it encodes resp as the hook sends it and checks it with
// CheckAnswer.
func CheckResponse(req *sync.Request, resp sync.Response) error {
	for i, c := range resp.Children {
		if _, kept := c.(*unstructured.Unstructured); kept {
			continue
		}
		gvk := c.GetObjectKind().GroupVersionKind()
		k := builtKind(gvk.Kind + "." + gvk.GroupVersion().String())
		if k == nil || reflect.TypeOf(c) != reflect.TypeOf(k.Object) {
			return fmt.Errorf("children[%d] is a %T that says it is %s, not a kind the hook builds with its Go type", i, c, gvk)
		}
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return fmt.Errorf("encode: %v", err)
	}
	return CheckAnswer(req, b)
}

// CheckAnswer reports the first way an encoded answer breaks the hook contract for req, or nil.
// Tests, fuzz targets and the end-to-end suite hold every answer to it:
//   - children is a list, never null, and every child has apiVersion, kind, metadata.name and
//     metadata.namespace, and appears once, and is of a kind the request declares (a
//     component's kind, such as HTTPRoute, only when the CompositeController manages it);
//   - outside finalize, no observed child is dropped, but for the WebApp's own children of a kind
//     the hook builds other than the Deployment (sync.Kinds: the Service, Ingress,
//     PodDisruptionBudget or HorizontalPodAutoscaler named after it, in its namespace, and the
//     canary's Services <name>-canary and <name>-stable) when its spec is valid: the spec decides
//     whether those exist. The canary's Deployment, <name>-canary, may go too, but only once it
//     asks for no pod and has none. The Deployment and every other child always stay;
//   - finalized is set only by finalize, and is true only when no child is observed;
//   - the status has a known phase, a Ready condition that agrees with ready, and no condition
//     type twice; every condition has a reason and a lastTransitionTime.
func CheckAnswer(req *sync.Request, answer []byte) error {
	var raw struct {
		Children json.RawMessage `json:"children"`
	}
	if err := json.Unmarshal(answer, &raw); err != nil {
		return fmt.Errorf("answer: %v", err)
	}
	if string(raw.Children) == "null" || len(raw.Children) == 0 {
		return fmt.Errorf("children is %q; want a list", raw.Children)
	}
	var a Answer
	if err := json.Unmarshal(answer, &a); err != nil {
		return fmt.Errorf("answer: %v", err)
	}
	seen := map[string]bool{}
	for i, obj := range a.Children {
		apiVersion, kind, namespace, name := Identity(obj)
		if apiVersion == "" || kind == "" || name == "" || namespace == "" {
			return fmt.Errorf("children[%d]: apiVersion %q, kind %q, name %q and namespace %q must all be set", i, apiVersion, kind, name, namespace)
		}
		id := kind + "." + apiVersion + " " + namespace + "/" + name
		if seen[id] {
			return fmt.Errorf("children[%d]: %s appears twice", i, id)
		}
		seen[id] = true
		if k := builtKind(kind + "." + apiVersion); k != nil && !req.Declares(k) {
			return fmt.Errorf("children[%d]: a %s, which the CompositeController does not manage without the %s component: Metacontroller would fail the sync", i, kind, k.Component)
		}
	}
	if !req.Finalizing || a.Finalized == nil {
		if a.Finalized != nil {
			return fmt.Errorf("finalized is set in a sync answer")
		}
		p := &req.Parent
		valid := len(sync.Validate(p)) == 0
		for _, c := range req.Children {
			own := mayGo(&c, p)
			if !(valid && own) && !seen[c.Kind+"."+c.APIVersion+" "+c.Namespace+"/"+c.Name] {
				return fmt.Errorf("observed %s %s/%s is missing from the answer, so Metacontroller would delete it", c.Kind, c.Namespace, c.Name)
			}
		}
	} else if *a.Finalized && len(req.Children) > 0 {
		return fmt.Errorf("finalized is true while %d children are still observed", len(req.Children))
	}
	st := a.Status
	phases := []webappv1.Phase{webappv1.PhasePending, webappv1.PhaseProgressing, webappv1.PhaseReady, webappv1.PhaseDegraded, webappv1.PhaseInvalid, webappv1.PhaseTerminating}
	if !slices.Contains(phases, st.Phase) {
		return fmt.Errorf("status.phase %q is not a known phase", st.Phase)
	}
	types := map[string]bool{}
	for _, c := range st.Conditions {
		if types[c.Type] {
			return fmt.Errorf("status.conditions has %s twice", c.Type)
		}
		types[c.Type] = true
		if c.Reason == "" || c.LastTransitionTime.IsZero() || (c.Status != "True" && c.Status != "False" && c.Status != "Unknown") {
			return fmt.Errorf("condition %+v lacks a reason, a lastTransitionTime or a valid status", c)
		}
		if c.Type == webappv1.ConditionReady && (c.Status == "True") != st.Ready {
			return fmt.Errorf("the Ready condition %+v disagrees with ready=%v", c, st.Ready)
		}
	}
	if !types[webappv1.ConditionReady] {
		return fmt.Errorf("status.conditions = %v; want a Ready condition", st.Conditions)
	}
	return nil
}

// mayGo reports whether a valid spec may let the observed child c go: one of p's own children of
// a kind the hook builds other than its Deployment, or the canary's Deployment without pods.
func mayGo(c *sync.Child, p *sync.Parent) bool {
	k := builtKind(c.Kind + "." + c.APIVersion)
	if k == nil || c.Namespace != p.Namespace {
		return false
	}
	switch c.Name {
	case p.Name:
		return k != sync.DeploymentKind
	case p.Name + webappv1.CanarySuffix:
		if k == sync.DeploymentKind {
			d := c.Deployment
			return d != nil && d.Replicas != nil && *d.Replicas == 0 && d.Status.Replicas == 0
		}
		return k == sync.ServiceKind
	case p.Name + webappv1.StableSuffix:
		return k == sync.ServiceKind
	}
	return false
}

// builtKind returns the kind the hook builds that is filed under key ("Kind.apiVersion"), or nil.
func builtKind(key string) *sync.Kind {
	for _, k := range sync.Kinds {
		if k.Built && k.Key() == key {
			return k
		}
	}
	return nil
}

// Identity reads apiVersion, kind, metadata.namespace and metadata.name from a JSON object; each
// is "" when absent or not a string.
func Identity(obj map[string]any) (apiVersion, kind, namespace, name string) {
	apiVersion, _ = obj["apiVersion"].(string)
	kind, _ = obj["kind"].(string)
	namespace, _ = Field(obj, "metadata", "namespace").(string)
	name, _ = Field(obj, "metadata", "name").(string)
	return apiVersion, kind, namespace, name
}

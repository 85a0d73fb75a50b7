package hooktest

import (
	"encoding/json"
	"fmt"
	"slices"

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

// CheckResponse encodes resp as the hook sends it and checks it with CheckAnswer.
func CheckResponse(req *sync.Request, resp sync.Response) error {
	b, err := json.Marshal(resp)
	if err != nil {
		return fmt.Errorf("encode: %v", err)
	}
	return CheckAnswer(req, b)
}

// CheckAnswer reports the first way an encoded answer breaks the hook contract for req, or nil.
// Tests, fuzz targets and the end-to-end suite hold every answer to it:
//   - children is a list, never null, and every child has apiVersion, kind, metadata.name and
//     metadata.namespace, and appears once;
//   - outside finalize, no observed child is dropped, but for the WebApp's own Service when a valid
//     spec has no port (removing the port deletes the Service);
//   - finalized is set only by finalize, and is true only when no child is observed;
//   - the status has a known phase and exactly one Ready condition that agrees with ready.
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
	}
	if !req.Finalizing || a.Finalized == nil {
		if a.Finalized != nil {
			return fmt.Errorf("finalized is set in a sync answer")
		}
		p := &req.Parent
		portRemoved := sync.Validate(p) == nil && p.Spec.Port == nil
		for _, c := range req.Children {
			ownService := c.APIVersion == "v1" && c.Kind == "Service" && c.Name == p.Name && c.Namespace == p.Namespace
			if !(portRemoved && ownService) && !seen[c.Kind+"."+c.APIVersion+" "+c.Namespace+"/"+c.Name] {
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
	if len(st.Conditions) != 1 || st.Conditions[0].Type != webappv1.ConditionReady {
		return fmt.Errorf("status.conditions = %v; want exactly one Ready condition", st.Conditions)
	}
	if c := st.Conditions[0]; (c.Status == "True") != st.Ready || c.Reason == "" || c.LastTransitionTime.IsZero() {
		return fmt.Errorf("the Ready condition %+v disagrees with ready=%v or lacks reason or lastTransitionTime", c, st.Ready)
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

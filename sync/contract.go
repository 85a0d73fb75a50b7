package sync

import (
	"encoding/json"
	"fmt"
	"slices"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// CheckResponse reports the first way resp breaks the hook contract for req, or nil. Tests, fuzz
// targets and the end-to-end suite hold every answer to it:
//   - every child has apiVersion, kind, metadata.name and metadata.namespace, and appears once;
//   - outside finalize, no observed child is dropped, but for the WebApp's own Service when a valid
//     spec has no port (removing the port deletes the Service);
//   - finalized is set only by finalize, and is true only when no child is observed;
//   - the status has a known phase and exactly one Ready condition that agrees with ready.
func CheckResponse(req *Request, resp Response) error {
	seen := map[string]bool{}
	for i, raw := range resp.Children {
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil {
			return fmt.Errorf("children[%d]: %v", i, err)
		}
		meta, _ := obj["metadata"].(map[string]any)
		apiVersion, _ := obj["apiVersion"].(string)
		kind, _ := obj["kind"].(string)
		name, _ := meta["name"].(string)
		namespace, _ := meta["namespace"].(string)
		if apiVersion == "" || kind == "" || name == "" || namespace == "" {
			return fmt.Errorf("children[%d]: apiVersion %q, kind %q, name %q and namespace %q must all be set", i, apiVersion, kind, name, namespace)
		}
		id := childID(apiVersion, kind, namespace, name)
		if seen[id] {
			return fmt.Errorf("children[%d]: %s appears twice", i, id)
		}
		seen[id] = true
	}
	if !req.Finalizing || resp.Finalized == nil {
		if resp.Finalized != nil {
			return fmt.Errorf("finalized is set in a sync answer")
		}
		p := &req.Parent
		portRemoved := specError(p) == nil && p.Spec.Port == nil
		for i := range req.Children {
			c := &req.Children[i]
			mayDrop := portRemoved && c.isService() && owned(c, p)
			if !mayDrop && !seen[childID(c.APIVersion, c.Kind, c.Namespace, c.Name)] {
				return fmt.Errorf("observed %s %s/%s is missing from the answer, so Metacontroller would delete it", c.Kind, c.Namespace, c.Name)
			}
		}
	} else if *resp.Finalized && len(req.Children) > 0 {
		return fmt.Errorf("finalized is true while %d children are still observed", len(req.Children))
	}
	st := resp.Status
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

func childID(apiVersion, kind, namespace, name string) string {
	return kind + "." + apiVersion + " " + namespace + "/" + name
}

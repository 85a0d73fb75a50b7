//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

// relatedKinds maps the resources the stand-in's customize answer names to their kinds.
var relatedKinds = map[string]string{"configmaps": "ConfigMap", "secrets": "Secret", "gateways": "Gateway"}

// standInController is the CompositeController the stand-in's customize requests carry: one
// whose childResources are every kind the hook builds (childKinds), as with the
// metacontroller/gateway-api component.
func standInController() obj {
	var children []any
	for _, k := range sync.Kinds {
		if k.Built {
			children = append(children, obj{"apiVersion": k.APIVersion, "resource": k.Resource, "updateStrategy": obj{"method": "InPlace"}})
		}
	}
	return obj{"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController", "metadata": obj{"name": "webapp-controller"}, "spec": obj{"childResources": children}}
}

// related does what Metacontroller does with a customize hook, for the stand-in (the hook of
// TestMain, plain HTTP and without pod diagnosis, whose rules are all by name; its
// CompositeController manages HTTPRoutes, so Gateways are related too): it asks the hook
// which objects are related to the parent, gets each rule's objects from the apiserver, and files
// them like children, "Kind.apiVersion" then "namespace/name", a rule's kind present even when
// nothing matched. The real Metacontroller covers the pods (TestMetacontrollerPodDiagnosis).
func related(t *testing.T, parent obj) obj {
	t.Helper()
	body, _ := json.Marshal(obj{"controller": standInController(), "parent": parent})
	resp, err := http.Post(hook.URL+"/customize", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("/customize = %d %s", resp.StatusCode, out)
	}
	var answer sync.CustomizeResponse
	if err := json.Unmarshal(out, &answer); err != nil {
		t.Fatal(err)
	}
	groups := obj{}
	for _, rule := range answer.RelatedResources {
		kind := relatedKinds[rule.Resource]
		if kind == "" || len(rule.Names) == 0 {
			t.Fatalf("customize rule %+v; the stand-in follows rules by name of ConfigMaps, Secrets and Gateways only", rule)
		}
		group := obj{}
		groups[kind+"."+rule.APIVersion] = group
		for _, name := range rule.Names {
			o, err := client.get(rule.APIVersion, kind, rule.Namespace, name)
			if err != nil {
				t.Fatal(err)
			}
			if o != nil {
				group[rule.Namespace+"/"+name] = o
			}
		}
	}
	return groups
}

// readyCondition is the WebApp's Ready condition in an answer.
func readyCondition(st webappv1.WebAppStatus) (reason, message string) {
	for _, c := range st.Conditions {
		if c.Type == webappv1.ConditionReady {
			return c.Reason, c.Message
		}
	}
	return "", ""
}

func mustGet(t *testing.T, apiVersion, kind, ns, name string) obj {
	t.Helper()
	o, err := client.get(apiVersion, kind, ns, name)
	if err != nil || o == nil {
		t.Fatalf("get %s %s/%s: %v", kind, ns, name, err)
	}
	return o
}

//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

// relatedKinds maps the resources the customize hook asks for to their kinds.
var relatedKinds = map[string]string{"pods": "Pod", "configmaps": "ConfigMap", "secrets": "Secret"}

// related does what Metacontroller does with a customize hook: it asks the hook which objects are
// related to the parent, lists each rule's objects from the apiserver (by label selector, or by
// names), and files them like children, "Kind.apiVersion" then "namespace/name", a rule's kind
// present even when nothing matched.
func related(t *testing.T, parent obj) obj {
	t.Helper()
	body, _ := json.Marshal(obj{"controller": obj{}, "parent": parent})
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
		group := obj{}
		groups[kind+"."+rule.APIVersion] = group
		if len(rule.Names) > 0 {
			for _, name := range rule.Names {
				o, err := client.get(rule.APIVersion, kind, rule.Namespace, name)
				if err != nil {
					t.Fatal(err)
				}
				if o != nil {
					group[rule.Namespace+"/"+name] = o
				}
			}
			continue
		}
		var selector []string
		for k, v := range rule.LabelSelector.MatchLabels {
			selector = append(selector, k+"="+v)
		}
		p, err := client.path(rule.APIVersion, kind, rule.Namespace, "")
		if err != nil {
			t.Fatal(err)
		}
		b, err := client.do("GET", p+"?labelSelector="+url.QueryEscape(strings.Join(selector, ",")), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		list, _ := decode(b)
		items, _ := list["items"].([]any)
		for _, it := range items {
			o := it.(map[string]any)
			o["apiVersion"], o["kind"] = rule.APIVersion, kind // list items come without them
			_, _, ns, name := identity(o)
			group[ns+"/"+name] = o
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

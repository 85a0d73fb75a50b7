package wire_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/webapp-operator/canary"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/sync/wire"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// now is the fixed time of every decision these tests ask for.
var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// asJSON renders v as indented JSON, for comparing and showing values.
func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// joined is errs in one line, as a status message writes them.
func joined(errs field.ErrorList) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// TestDecodeRequestErrors checks that a request the hook cannot understand is a *RequestError
// naming the offending field, with a problem that says what is wrong.
func TestDecodeRequestErrors(t *testing.T) {
	const parent = `"parent": {"metadata": {"namespace": "n", "name": "a"}}`
	tests := []struct {
		name        string
		body        string
		wantField   string
		wantProblem string // a substring
	}{
		{"empty body", ``, "", "empty body"},
		{"not JSON", `hello`, "", "invalid JSON"},
		{"truncated", `{"parent": {`, "parent", "unexpected EOF"},
		{"data after the object", `{` + parent + `} {}`, "", "invalid JSON"},
		{"invalid UTF-8", "{\"parent\": {\"metadata\": {\"name\": \"\xff\", \"namespace\": \"n\"}}}", "parent.metadata.name", "invalid UTF-8"},
		{"names match exactly", `{"Parent": {"metadata": {"name": "a", "namespace": "n"}}}`, "parent", "required"},
		{"array", `[]`, "", "expected object, got JSON array"},
		{"no parent", `{"children": {}}`, "parent", "required"},
		{"null parent", `{"parent": null}`, "parent", "required"},
		{"parent not an object", `{"parent": "hello"}`, "parent", "expected object, got JSON string"},
		{"no metadata", `{"parent": {"spec": {}}}`, "parent.metadata", "required"},
		{"no name", `{"parent": {"metadata": {"namespace": "default"}}}`, "parent.metadata.name", "required"},
		{"no namespace", `{"parent": {"metadata": {"name": "a"}}}`, "parent.metadata.namespace", "WebApp is a namespaced resource"},
		{"name not a string", `{"parent": {"metadata": {"name": 7}}}`, "parent.metadata.name", "expected string, got JSON number 7"},
		{"generation not a number", `{"parent": {"metadata": {"namespace": "n", "name": "a", "generation": "1"}}}`, "parent.metadata.generation", "expected integer (64-bit), got JSON string"},
		{"number too large for a generation", `{"parent": {"metadata": {"namespace": "n", "name": "a", "generation": 1e40}}}`, "parent.metadata.generation", "expected integer (64-bit), got JSON number 1e40"},
		{"another kind", `{"parent": {"kind": "Pod", "metadata": {"namespace": "n", "name": "a"}}}`, "parent.kind", `must be WebApp, got "Pod"`},
		{"finalizing not a bool", `{` + parent + `, "finalizing": "yes"}`, "finalizing", "expected bool, got JSON string"},
		{"children not an object", `{` + parent + `, "children": []}`, "children", "expected object, got JSON array"},
		{"child group not an object", `{` + parent + `, "children": {"Deployment.apps/v1": 1}}`, `children["Deployment.apps/v1"]`, "expected object, got JSON number"},
		{"child null", `{` + parent + `, "children": {"Deployment.apps/v1": {"a": null}}}`, `children["Deployment.apps/v1"].a`, "expected object, got JSON null"},
		{"child without apiVersion", `{` + parent + `, "children": {"Deployment.apps/v1": {"a": {"kind": "Deployment", "metadata": {"name": "a"}}}}}`, `children["Deployment.apps/v1"].a.apiVersion`, "required"},
		{"child without kind", `{` + parent + `, "children": {"Deployment.apps/v1": {"a": {"apiVersion": "apps/v1", "metadata": {"namespace": "n", "name": "a"}}}}}`, `children["Deployment.apps/v1"].a.kind`, "required"},
		{"child without name", `{` + parent + `, "children": {"Service.v1": {"a": {"apiVersion": "v1", "kind": "Service", "metadata": {}}}}}`, `children["Service.v1"].a.metadata.name`, "required"},
		{"child name not a string", `{` + parent + `, "children": {"Service.v1": {"n/a": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": ["a"]}}}}}`, `children["Service.v1"]["n/a"].metadata.name`, "expected string, got JSON array"},
		{"deployment status of the wrong type", `{` + parent + `, "children": {"Deployment.apps/v1": {"a": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "n", "name": "a"}, "status": {"replicas": "3"}}}}}`, `children["Deployment.apps/v1"].a.status.replicas`, "expected integer (32-bit), got JSON string"},
		{"a child filed under another kind", `{` + parent + `, "children": {"Deployment.apps/v1": {"a": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}}}}}`, `children["Deployment.apps/v1"].a`, "a v1 Service is filed under Deployment.apps/v1"},
		{"ingress rules of the wrong type", `{` + parent + `, "children": {"Ingress.networking.k8s.io/v1": {"a": {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "a"}, "spec": {"rules": {}}}}}}`, `children["Ingress.networking.k8s.io/v1"].a.spec.rules`, "expected array, got JSON object"},
		{"spec hash of the wrong type", `{` + parent + `, "children": {"Deployment.apps/v1": {"a": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a", "annotations": {"webapp.example.com/spec-hash": 1}}}}}}`, `children["Deployment.apps/v1"].a.metadata.annotations["webapp.example.com/spec-hash"]`, "expected string, got JSON number 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wire.DecodeRequest([]byte(tt.body))
			var reqErr *wire.RequestError
			if !errors.As(err, &reqErr) {
				t.Fatalf("error = %v (%T); want a *wire.RequestError", err, err)
			}
			if reqErr.Field != tt.wantField {
				t.Errorf("field = %q; want %q (error %q)", reqErr.Field, tt.wantField, err)
			}
			if !strings.Contains(reqErr.Problem, tt.wantProblem) {
				t.Errorf("problem = %q; want it to contain %q", reqErr.Problem, tt.wantProblem)
			}
		})
	}
}

// TestDecodeRequestSpec checks that problems inside parent.spec never fail the request: they
// become SpecErrors, naming every field path at fault, so the answer is Invalid and every child
// is kept.
func TestDecodeRequestSpec(t *testing.T) {
	tests := []struct {
		name         string
		spec         string
		wantErr      string // empty: valid
		wantReplicas int32
	}{
		{"defaults", `{"image": "nginx"}`, "", 1},
		{"explicit zero", `{"image": "nginx", "replicas": 0}`, "", 0},
		{"everything", `{"image": "nginx", "replicas": 2, "port": 80, "env": [{"name": "A", "value": "b"}], "resources": {"limits": {"cpu": "1"}}}`, "", 2},
		{"unknown fields are ignored", `{"image": "nginx", "colour": "blue"}`, "", 1},
		{"missing spec", `null`, "spec: Required value", 0},
		{"spec not an object", `"nginx"`, `spec: Invalid value: must be an object, got JSON string "nginx"`, 0},
		{"image not a string", `{"image": 5}`, "spec.image: Invalid value: expected string, got JSON number 5", 1},
		{"replicas a string", `{"image": "nginx", "replicas": "three"}`, `spec.replicas: Invalid value: expected integer (32-bit), got JSON string "three"`, 0},
		{"replicas a fraction", `{"image": "nginx", "replicas": 1.5}`, "spec.replicas: Invalid value: expected integer (32-bit), got JSON number 1.5", 0},
		{"replicas above int32", `{"image": "nginx", "replicas": 4294967296}`, "spec.replicas: Invalid value: expected integer (32-bit), got JSON number 4294967296: value out of range", 0},
		{"port above range", `{"image": "nginx", "port": 70000}`, "spec.port: Invalid value: 70000: must be between 1 and 65535, inclusive", 1},
		{"env not a list", `{"image": "nginx", "env": {"A": "b"}}`, "spec.env: Invalid value: expected array, got JSON object", 1},
		{"env name not a string", `{"image": "nginx", "env": [{"name": "A"}, {"name": 5}]}`, "spec.env[1].name: Invalid value: expected string, got JSON number 5", 1},
		{"bad quantity", `{"image": "nginx", "resources": {"limits": {"cpu": "lots"}}}`, `spec.resources.limits.cpu: Invalid value: expected a quantity, got JSON string "lots": quantities must match`, 1},
		{"two problems at once, in declaration order", `{"port": "http", "image": 5}`, `spec.image: Invalid value: expected string, got JSON number 5; spec.port: Invalid value: expected integer (32-bit), got JSON string "http"`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := wire.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "a", "namespace": "n"}, "spec": ` + tt.spec + `}}`))
			if err != nil {
				t.Fatalf("DecodeRequest: %v; want a request with the spec problem recorded", err)
			}
			gotErr := joined(sync.Validate(&req.Parent))
			switch {
			case tt.wantErr == "" && gotErr != "":
				t.Fatalf("spec errors = %s; want none", gotErr)
			case tt.wantErr != "" && !strings.Contains(gotErr, tt.wantErr):
				t.Fatalf("spec errors = %s; want them to contain %q", gotErr, tt.wantErr)
			}
			if tt.wantErr == "" {
				if got := *req.Parent.Spec.Replicas; got != tt.wantReplicas {
					t.Errorf("replicas = %d; want %d", got, tt.wantReplicas)
				}
			}
			if got := sync.Sync(req, now).Status.Phase; (got == webappv1.PhaseInvalid) != (tt.wantErr != "") {
				t.Errorf("phase = %q; want Invalid exactly when the spec has a problem", got)
			}
		})
	}
}

// filled returns a value of type t with every field set, recursively: strings "x", numbers 1,
// booleans true, one element in every list and map. Quantities, times and int-or-strings get
// values of their own grammar.
func filled(t reflect.Type, depth int) reflect.Value {
	v := reflect.New(t).Elem()
	switch t {
	case reflect.TypeFor[resource.Quantity]():
		v.Set(reflect.ValueOf(resource.MustParse("250m")))
		return v
	case reflect.TypeFor[intstr.IntOrString]():
		v.Set(reflect.ValueOf(intstr.FromString("25%")))
		return v
	case reflect.TypeFor[metav1.Time]():
		v.Set(reflect.ValueOf(metav1.NewTime(now)))
		return v
	}
	if depth > 12 {
		return v
	}
	switch t.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		v.Set(filled(t.Elem(), depth+1).Addr())
	case reflect.Slice:
		v.Set(reflect.Append(v, filled(t.Elem(), depth+1)))
	case reflect.Map:
		v.Set(reflect.MakeMap(t))
		key := filled(t.Key(), depth+1)
		if t.Key().Kind() == reflect.String {
			key.SetString("cpu") // a valid resource name, and a fine key for any other map
		}
		v.SetMapIndex(key, filled(t.Elem(), depth+1))
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && f.Tag.Get("json") != "-" {
				v.Field(i).Set(filled(f.Type, depth+1))
			}
		}
	}
	return v
}

// TestEverySpecFieldDecodes fails whenever a field of webappv1.WebAppSpec, at any depth, is lost
// on the way through DecodeRequest: a spec with every field set, walked by reflection, must come
// out exactly as it went in.
func TestEverySpecFieldDecodes(t *testing.T) {
	spec := filled(reflect.TypeFor[webappv1.WebAppSpec](), 0).Interface().(webappv1.WebAppSpec)
	want, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	var members map[string]any
	json.Unmarshal(want, &members)
	st := reflect.TypeFor[webappv1.WebAppSpec]()
	for i := range st.NumField() {
		name, _, _ := strings.Cut(st.Field(i).Tag.Get("json"), ",")
		if _, ok := members[name]; !ok {
			t.Errorf("spec.%s is not set in the filled spec; the filler must cover every field", name)
		}
	}
	req, err := wire.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "a", "namespace": "n"}, "spec": ` + string(want) + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	if errs := req.Parent.SpecErrors; len(errs) > 0 {
		t.Fatalf("SpecErrors = %s; want none", joined(errs))
	}
	got, err := json.Marshal(req.Parent.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("decoded spec =\n%s\nwant\n%s", got, want)
	}
}

// TestSpecWrongTypes puts a value of the wrong JSON type at every path of a fully set spec, one at
// a time: each must give phase Invalid with a message naming that path, never a 400.
func TestSpecWrongTypes(t *testing.T) {
	full, err := json.Marshal(filled(reflect.TypeFor[webappv1.WebAppSpec](), 0).Interface())
	if err != nil {
		t.Fatal(err)
	}
	var paths [][]any
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		if len(path) > 0 {
			paths = append(paths, slices.Clone(path))
		}
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(e, append(path, k))
			}
		case []any:
			for i, e := range x {
				walk(e, append(path, i))
			}
		}
	}
	var spec any
	json.Unmarshal(full, &spec)
	walk(spec, nil)
	if len(paths) < 30 {
		t.Fatalf("only %d paths in a full spec", len(paths))
	}
	for _, path := range paths {
		var s any
		json.Unmarshal(full, &s)
		parent := hooktest.Field(s, path[:len(path)-1]...)
		var wrong any = true
		if _, ok := hooktest.Field(s, path...).(bool); ok {
			wrong = "yes"
		}
		switch k := path[len(path)-1].(type) {
		case string:
			parent.(map[string]any)[k] = wrong
		case int:
			parent.([]any)[k] = wrong
		}
		want := "spec"
		for _, p := range path {
			if i, ok := p.(int); ok {
				want += fmt.Sprintf("[%d]", i)
			} else {
				want += "." + p.(string)
			}
		}
		body, _ := json.Marshal(map[string]any{"parent": map[string]any{"metadata": map[string]any{"name": "a", "namespace": "n"}, "spec": s}})
		req, err := wire.DecodeRequest(body)
		if err != nil {
			t.Errorf("%s: DecodeRequest = %v; want the request decoded and the spec Invalid", want, err)
			continue
		}
		resp := sync.Sync(req, now)
		if resp.Status.Phase != webappv1.PhaseInvalid || !strings.Contains(resp.Status.Message, want+": ") {
			t.Errorf("%s: phase %q, message %q; want Invalid naming %s", want, resp.Status.Phase, resp.Status.Message, want)
		}
	}
}

// TestDecodeRequestRepeatedName checks that a repeated name is read as encoding/json reads it:
// the last value wins.
func TestDecodeRequestRepeatedName(t *testing.T) {
	req, err := wire.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "a", "name": "b", "namespace": "n"}, "spec": {"image": "x", "image": "nginx"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.Parent.Name != "b" || req.Parent.Spec.Image != "nginx" {
		t.Errorf("name, image = %q, %q; want the last values b, nginx", req.Parent.Name, req.Parent.Spec.Image)
	}
}

// TestDecodeRequestOrder checks that a Deployment's spec and status are read whatever the order of
// its members, and that a child sent twice under the same key counts once, the last one winning.
func TestDecodeRequestOrder(t *testing.T) {
	const late = `{"kind": "Deployment", "spec": {"replicas": 4}, "status": {"replicas": 4, "observedGeneration": 2}, "metadata": {"name": "hello"}, "apiVersion": "apps/v1"}`
	const early = `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hello"}, "spec": {"replicas": 2}}`
	req, err := wire.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "hello", "namespace": "n"}, "spec": {"image": "nginx"}}, "children": {"Deployment.apps/v1": {"hello": ` + early + `, "hello": ` + late + `}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Children) != 1 {
		t.Fatalf("%d children; want the repeated key to count once", len(req.Children))
	}
	d := req.Children[0].Deployment
	if d == nil || *d.Replicas != 4 || d.Status.Replicas != 4 || d.Status.ObservedGeneration != 2 {
		t.Errorf("deployment = %+v; want the last one, with replicas 4 and its status read after apiVersion came", d)
	}
	_, err = wire.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "hello", "namespace": "n"}}, "children": {"Deployment.apps/v1": {"web": {"spec": {"replicas": "x"}, "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}}}}`))
	if re := (*wire.RequestError)(nil); !errors.As(err, &re) || re.Field != `children["Deployment.apps/v1"].web.spec.replicas` {
		t.Errorf("error = %v; want a *wire.RequestError naming children[\"Deployment.apps/v1\"].web.spec.replicas", err)
	}
}

// TestDecodeRequestRaw checks that every child's Raw is exactly the object as sent, whether the
// hook decoded it in place (a kind it builds) or not, and that fields the decision does not read
// are carried as they are, not checked, whatever JSON they hold: a Service's odd ports stay the
// apiserver's business.
func TestDecodeRequestRaw(t *testing.T) {
	children := map[string]string{
		"Deployment.apps/v1":                     `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hello", "labels": 7, "managedFields": "x", "ownerReferences": {}, "annotations": {"a": "\u00e9\"x\""}}, "spec": {"strategy": 3, "template": {"spec": {"containers": 7}}}}`,
		"Service.v1":                             `{"kind":"Service","apiVersion":"v1","metadata":{"name":"hello"},"spec":{"ports":{}}}`,
		"PodDisruptionBudget.policy/v1":          `{"kind":"PodDisruptionBudget","apiVersion":"policy/v1","metadata":{"name":"hello"},"spec":5,"status":[1]}`,
		"HorizontalPodAutoscaler.autoscaling/v2": `{"kind":"HorizontalPodAutoscaler","apiVersion":"autoscaling/v2","metadata":{"name":"hello"},"spec":"x"}`,
		"ConfigMap.v1":                           "{\n  \"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"other\"}\n}",
	}
	body := `{"parent": {"metadata": {"name": "hello", "namespace": "n"}, "spec": {"image": "nginx"}}, "children": {`
	first := true
	for group, obj := range children {
		if !first {
			body += ",\n"
		}
		first = false
		body += fmt.Sprintf("%q:{ \"n/x\" :\t %s }", group, obj)
	}
	req, err := wire.DecodeRequest([]byte(body + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Children) != len(children) {
		t.Fatalf("%d children; want %d", len(req.Children), len(children))
	}
	for _, c := range req.Children {
		if want := children[c.Kind+"."+c.APIVersion]; string(c.Raw) != want {
			t.Errorf("%s Raw = %s; want %s", c.Kind, c.Raw, want)
		}
	}
}

// TestDecodeRequestViews checks that the views of observed children carry the fields the decision
// reads, the annotations included, whose names the views spell out in their struct tags.
func TestDecodeRequestViews(t *testing.T) {
	dep := `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hello", "generation": 3, "annotations": {"` + sync.AnnotationSpecHash + `": "abc", "other": "x",
		"` + canary.AnnotationRevision + `": "r2", "` + canary.AnnotationAborted + `": "r1", "` + canary.AnnotationPromoting + `": "r3", "` + canary.AnnotationRetries + `": "2", "` + canary.AnnotationAttempt + `": "3"}},
		"spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"annotations": {"` + webappv1.AnnotationConfigHash + `": "def"}}}},
		"status": {"observedGeneration": 3, "replicas": 2, "updatedReplicas": 2, "readyReplicas": 1, "availableReplicas": 1, "terminatingReplicas": 1,
			"conditions": [{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": "done", "lastUpdateTime": "2026-11-01T08:00:00Z"}]}}`
	hpa := `{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "hello"}, "status": {"desiredReplicas": 4, "conditions": [{"type": "AbleToScale", "status": "True"}]}}`
	ing := `{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "hello"}, "spec": {"rules": [{"host": "a.example.com"}], "tls": [{"hosts": ["a.example.com"]}]}, "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}}`
	req, err := wire.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "hello", "namespace": "n"}, "spec": {"image": "nginx"}}, "children": {
		"Deployment.apps/v1": {"n/hello": ` + dep + `}, "HorizontalPodAutoscaler.autoscaling/v2": {"n/hello": ` + hpa + `}, "Ingress.networking.k8s.io/v1": {"n/hello": ` + ing + `}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range req.Children {
		var got, want any
		switch c.Kind {
		case "Deployment":
			one, two := int32(1), int32(2)
			got, want = c.Deployment, &sync.ObservedDeployment{Generation: 3, SpecHash: "abc", Replicas: &two, Revision: "r2", Aborted: "r1", Promoting: "r3", Retries: "2", Attempt: "3",
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}, ConfigHash: "def",
				Status: sync.ObservedDeploymentStatus{ObservedGeneration: 3, Replicas: 2, UpdatedReplicas: 2, ReadyReplicas: 1, AvailableReplicas: 1, TerminatingReplicas: &one,
					Conditions: []sync.ObservedCondition{{Type: "Progressing", Status: "True", Reason: "NewReplicaSetAvailable", Message: "done"}}}}
		case "HorizontalPodAutoscaler":
			got, want = c.Autoscaler, &sync.ObservedAutoscaler{DesiredReplicas: 4, Conditions: []sync.ObservedCondition{{Type: "AbleToScale", Status: "True"}}}
		case "Ingress":
			got, want = c.Ingress, &sync.ObservedIngress{Rules: []networkingv1.IngressRule{{Host: "a.example.com"}}, TLS: []networkingv1.IngressTLS{{Hosts: []string{"a.example.com"}}},
				LoadBalancer: []networkingv1.IngressLoadBalancerIngress{{IP: "10.0.0.1"}}}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s view =\n%+v\nwant\n%+v", c.Kind, got, want)
		}
		if !c.Built {
			t.Errorf("%s: Built = false; want true for a kind the hook builds", c.Kind)
		}
	}
}

// TestDecodeRouteView: an HTTPRoute's view reads the weighted rule, the last, and the header
// route's rule before it, when there is one.
func TestDecodeRouteView(t *testing.T) {
	weighted := `{"matches": [{"path": {"type": "PathPrefix", "value": "/api"}}], "backendRefs": [{"name": "hello-stable", "weight": 90}, {"name": "hello-canary", "weight": 10}]}`
	header := `{"matches": [{"path": {"value": "/api"}, "headers": [{"type": "Exact", "name": "X-Canary", "value": "always"}]}, {"path": {"value": "/api"}, "headers": [{"name": "Cookie", "value": "canary=1"}]}],
		"backendRefs": [{"name": "hello-canary", "weight": 1}]}`
	ninety, ten, one := int32(90), int32(10), int32(1)
	split := []sync.RouteBackend{{Name: "hello-stable", Weight: &ninety}, {Name: "hello-canary", Weight: &ten}}
	exact := gatewayv1.HeaderMatchExact
	for _, tc := range []struct {
		name  string
		rules string
		want  *sync.ObservedRoute
	}{
		{"one rule", weighted, &sync.ObservedRoute{Generation: 2, Path: "/api", Backends: split}},
		{"the header route's rule, then the weighted one", header + ", " + weighted, &sync.ObservedRoute{Generation: 2, Path: "/api", Backends: split, HeaderRule: &sync.RouteRule{
			Matches: []sync.RouteMatch{
				{Path: "/api", Headers: []gatewayv1.HTTPHeaderMatch{{Type: &exact, Name: "X-Canary", Value: "always"}}},
				{Path: "/api", Headers: []gatewayv1.HTTPHeaderMatch{{Name: "Cookie", Value: "canary=1"}}},
			},
			Backends: []sync.RouteBackend{{Name: "hello-canary", Weight: &one}},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			route := `{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "hello", "generation": 2}, "spec": {"rules": [` + tc.rules + `]}}`
			req, err := wire.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "hello", "namespace": "n"}, "spec": {"image": "nginx"}}, "children": {"HTTPRoute.gateway.networking.k8s.io/v1": {"n/hello": ` + route + `}}}`))
			if err != nil {
				t.Fatal(err)
			}
			if len(req.Children) != 1 || !reflect.DeepEqual(req.Children[0].Route, tc.want) {
				t.Fatalf("route view =\n%s\nwant\n%s", asJSON(t, req.Children), asJSON(t, tc.want))
			}
		})
	}
}

// TestDeployment: a Deployment read on its own is the view DecodeRequest reads of the same
// Deployment as a child; one that does not fit names the field.
func TestDeployment(t *testing.T) {
	dep := `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hello", "generation": 3, "annotations": {"` + sync.AnnotationSpecHash + `": "abc", "` + canary.AnnotationRevision + `": "r2"}},
		"spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"annotations": {"` + webappv1.AnnotationConfigHash + `": "def"}}}},
		"status": {"observedGeneration": 3, "replicas": 2, "conditions": [{"type": "Progressing", "status": "True", "message": "done"}]}}`
	req, err := wire.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "hello", "namespace": "n"}, "spec": {"image": "nginx"}}, "children": {"Deployment.apps/v1": {"n/hello": ` + dep + `}}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := wire.Deployment([]byte(dep))
	if err != nil {
		t.Fatal(err)
	}
	if want := req.Children[0].Deployment; !reflect.DeepEqual(got, want) {
		t.Errorf("Deployment =\n%+v\nwant the request's view\n%+v", got, want)
	}
	if _, err := wire.Deployment([]byte(`{"spec": {"replicas": "two"}}`)); err == nil || !strings.Contains(err.Error(), "spec.replicas") {
		t.Errorf("Deployment of a wrong replicas: %v; want an error naming spec.replicas", err)
	}
}

// TestDecodeRequestKeys checks that hook v1 (keyed by name) and v2 (keyed by namespace/name)
// requests decode to the same children, and that garbage keys change nothing.
func TestDecodeRequestKeys(t *testing.T) {
	child := `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hello", "namespace": "default"}}`
	dep := `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hello", "namespace": "default", "generation": 2}, "spec": {"replicas": 4}, "status": {"replicas": 4, "observedGeneration": 2}}`
	parent := `{"parent": {"metadata": {"name": "hello", "namespace": "default"}, "spec": {"image": "nginx"}}, "children": `
	var got [][]string
	for _, children := range []string{
		`{"Service.v1": {"hello": ` + child + `}, "Deployment.apps/v1": {"hello": ` + dep + `}}`,
		`{"Service.v1": {"default/hello": ` + child + `}, "Deployment.apps/v1": {"default/hello": ` + dep + `}}`,
		`{"whatever": {"x": ` + child + `, "y": ` + dep + `}}`,
	} {
		req, err := wire.DecodeRequest([]byte(parent + children + `}`))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range req.Children {
			ids = append(ids, c.Kind+"/"+c.Namespace+"/"+c.Name)
			if d := c.Deployment; c.Kind == "Deployment" && (d == nil || *d.Replicas != 4 || d.Status.ObservedGeneration != 2 || d.Generation != 2) {
				t.Errorf("deployment = %+v; want replicas 4, generation 2 and observedGeneration 2", d)
			}
		}
		got = append(got, ids)
	}
	want := []string{"Deployment/default/hello", "Service/default/hello"}
	for i, ids := range got {
		if !slices.Equal(ids, want) {
			t.Errorf("request %d children = %v; want %v", i, ids, want)
		}
	}
}

// TestDecodeRequestErrorCost sends bodies of about 14 MB that are wrong in one small place, before
// and after their bulk, and checks that the error still names the field, quotes a short value,
// and that decoding allocated at most a small multiple of the body: no error path decodes the
// body again. (Quoting a value once decoded the whole body generically, 60 times its size for a
// body of small objects: 827 MB for 14 MB.) TotalAlloc counts every byte allocated in between,
// garbage included, so it bounds the peak from above whatever the collector does.
func TestDecodeRequestErrorCost(t *testing.T) {
	const size = 14 << 20
	large, err := os.ReadFile(filepath.Join("..", "..", "webhook", "testdata", "large.request.json"))
	if err != nil {
		t.Fatal(err)
	}
	withPods, err := hooktest.WithPods(large, 3000) // 13 MB of real-looking pods
	if err != nil {
		t.Fatal(err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(withPods, &members); err != nil {
		t.Fatal(err)
	}
	pods := string(members["related"])
	objects := "[" + strings.Repeat("{},", size/3) + "{}]" // what a generic decode costs most for
	numbers := "[" + strings.Repeat("0,", size/2) + "0]"
	badName := `"parent":{"metadata":{"name":{},"namespace":"n"}}`
	tests := []struct {
		name, body  string
		wantField   string
		wantProblem string // exactly
	}{
		{"name an object, before 13 MB of pods", `{` + badName + `,"related":` + pods + `}`, "parent.metadata.name", "expected string, got JSON object"},
		{"name an object, after 13 MB of pods", `{"related":` + pods + `,` + badName + `}`, "parent.metadata.name", "expected string, got JSON object"},
		{"name an object, after 14 MB of small objects", `{"controller":` + objects + `,` + badName + `}`, "parent.metadata.name", "expected string, got JSON object"},
		{"name a number, after 14 MB of numbers", `{"controller":` + numbers + `,"parent":{"metadata":{"name":-7.5e3,"namespace":"n"}}}`, "parent.metadata.name", "expected string, got JSON number -7.5e3"},
		{"generation a 14 MB string", `{"parent":{"metadata":{"name":"a","namespace":"n","generation":"` + strings.Repeat("é", size/2) + `"}}}`, "parent.metadata.generation", `expected integer (64-bit), got JSON string "` + strings.Repeat("é", 79) + "…"},
		{"a 14 MB child of another kind with a kind of the wrong type", `{"parent":{"metadata":{"name":"a","namespace":"n"}},"children":{"Other.v1":{"a":{"apiVersion":"v1","metadata":{"name":"a"},"data":` + objects + `,"kind":5}}}}`, `children["Other.v1"].a.kind`, "expected string, got JSON number 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(tt.body)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := wire.DecodeRequest(body)
			runtime.ReadMemStats(&after)
			var reqErr *wire.RequestError
			if !errors.As(err, &reqErr) {
				t.Fatalf("error = %v; want a *wire.RequestError", err)
			}
			if reqErr.Field != tt.wantField || reqErr.Problem != tt.wantProblem {
				t.Errorf("error = %q: %.200q; want %q: %.200q", reqErr.Field, reqErr.Problem, tt.wantField, tt.wantProblem)
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%.1f MB body: %.1f MB allocated (%.2f times the body)", float64(len(body))/1e6, float64(allocated)/1e6, float64(allocated)/float64(len(body)))
			if limit := 3 * allocationSlack * uint64(len(body)); allocated > limit {
				t.Errorf("decoding allocated %d bytes, %.1f times the %d-byte body; want at most %d times", allocated, float64(allocated)/float64(len(body)), len(body), 3*allocationSlack)
			}
		})
	}
}

// TestErrorQuotesShortValues checks how an error quotes the value at fault: numbers and strings
// as written, cut to 80 characters, never a character in two, and a string cut before its end
// marked so; other kinds by their kind alone.
func TestErrorQuotesShortValues(t *testing.T) {
	tests := []struct {
		name, name2 string // the JSON text of parent.metadata.name
		want        string
	}{
		{"number as written", `-7.5e3`, "expected string, got JSON number -7.5e3"},
		{"number before a space", `12 `, "expected string, got JSON number 12"},
		{"object", `{"a": "b"}`, "expected string, got JSON object"},
		{"array", `["a"]`, "expected string, got JSON array"},
		{"bool", `true`, "expected string, got JSON bool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wire.DecodeRequest([]byte(`{"parent": {"metadata": {"namespace": "n", "name": ` + tt.name2 + `}}}`))
			var reqErr *wire.RequestError
			if !errors.As(err, &reqErr) || reqErr.Field != "parent.metadata.name" || reqErr.Problem != tt.want {
				t.Errorf("error = %v; want parent.metadata.name: %s", err, tt.want)
			}
		})
	}
	strs := []struct {
		name, value string // the JSON text of parent.metadata.generation
		want        string
	}{
		{"short string", `"1"`, `"1"`},
		{"escapes kept", `"a\"b\\"`, `"a\"b\\"`},
		{"80 characters with its quotes", `"` + strings.Repeat("é", 78) + `"`, `"` + strings.Repeat("é", 78) + `"`},
		{"81 characters with its quotes", `"` + strings.Repeat("é", 79) + `"`, `"` + strings.Repeat("é", 79) + "…"},
		{"long string cut", `"` + strings.Repeat("é", 300) + `"`, `"` + strings.Repeat("é", 79) + "…"},
		{"four-byte characters cut whole", `"` + strings.Repeat("😀", 300) + `"`, `"` + strings.Repeat("😀", 79) + "…"},
	}
	for _, tt := range strs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wire.DecodeRequest([]byte(`{"parent": {"metadata": {"namespace": "n", "name": "a", "generation": ` + tt.value + `}}}`))
			want := "parent.metadata.generation: expected integer (64-bit), got JSON string " + tt.want
			if err == nil || err.Error() != want {
				t.Errorf("error = %v;\nwant %s", err, want)
			}
		})
	}
}

// TestDecodeRequestDoesNotAlias checks that nothing decoded refers to the body, so that the
// webhook may reuse a body's buffer as soon as the answer is written: every request decodes to
// the same Request after its body is overwritten.
func TestDecodeRequestDoesNotAlias(t *testing.T) {
	for _, r := range hooktest.RequestFiles(t, "*.json") {
		body := slices.Clone(r.Body)
		req, err := wire.DecodeRequest(r.Body)
		if err != nil {
			t.Fatalf("%s: %v", r.File, err)
		}
		before := asJSON(t, req)
		got, err := wire.DecodeRequest(body)
		if err != nil {
			t.Fatal(err)
		}
		for i := range body {
			body[i] = 'x'
		}
		if after := asJSON(t, got); after != before {
			t.Errorf("%s: the decoded request changed when its body was overwritten", filepath.Base(r.File))
		}
	}
}

// TestDecodeRequestPreviousConditions checks that the WebApp's previous conditions are read for
// their lastTransitionTime, and leniently: a status the hook cannot read is never an error, it
// only means the times start afresh.
func TestDecodeRequestPreviousConditions(t *testing.T) {
	at := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		status string
		want   []metav1.Condition
	}{
		{"conditions", `{"phase": "Ready", "conditions": [{"type": "Ready", "status": "True", "reason": "RolloutComplete", "lastTransitionTime": "2026-11-01T08:00:00Z"}], "message": {}}`,
			[]metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, LastTransitionTime: metav1.NewTime(at)}}},
		{"a time that does not parse", `{"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "yesterday"}]}`,
			[]metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue}}},
		{"conditions of the wrong type", `{"conditions": {"type": "Ready"}}`, nil},
		{"a condition of the wrong type", `{"conditions": [{"type": 7}]}`, nil},
		{"status not an object", `"Ready"`, nil},
		{"null", `null`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := wire.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "a", "namespace": "n"}, "spec": {"image": "nginx"}, "status": ` + tt.status + `}}`))
			if err != nil {
				t.Fatal(err)
			}
			got := req.Parent.Conditions
			if len(got) != len(tt.want) {
				t.Fatalf("conditions = %+v; want %+v", got, tt.want)
			}
			for i := range got {
				if got[i].Type != tt.want[i].Type || got[i].Status != tt.want[i].Status || !got[i].LastTransitionTime.Equal(&tt.want[i].LastTransitionTime) {
					t.Errorf("condition %d = %+v; want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// BenchmarkDecodeRequest measures decoding a realistic request: a Ready WebApp with its Deployment
// and Service as a real apiserver returned them, managedFields included.
func BenchmarkDecodeRequest(b *testing.B) {
	body, err := os.ReadFile("../../webhook/testdata/large.request.json")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := wire.DecodeRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDecodeCanaryState reads the state a canary carries in the WebApp: status.canary, as the
// hook wrote it, and the promote and abort annotations. A status.canary that does not fit is no
// error: the canary starts again, and the stable pods are not touched.
func TestDecodeCanaryState(t *testing.T) {
	tests := []struct {
		name                string
		metadata, status    string
		wantCanary          string // status.canary as JSON, "null" for none
		wantPromote, wantAb string
		wantStep, wantRetry string
	}{
		{"none", `{}`, `{}`, "null", "", "", "", ""},
		{"a canary at a step, and a promote annotation", `{"annotations": {"webapp.example.com/promote": "0a1b2c3d4e", "other": "x"}}`,
			`{"canary": {"revision": "0a1b2c3d4e", "phase": "Paused", "step": 2, "weight": 50, "replicas": 2, "pauseStartTime": "2026-12-01T12:00:00Z", "failedChecks": 1}}`,
			`{"revision":"0a1b2c3d4e","phase":"Paused","step":2,"weight":50,"replicas":2,"pauseStartTime":"2026-12-01T12:00:00Z","failedChecks":1}`, "0a1b2c3d4e", "", "", ""},
		{"an abort annotation", `{"annotations": {"webapp.example.com/abort": "0a1b2c3d4e"}}`, `{}`, "null", "", "0a1b2c3d4e", "", ""},
		{"promote-step and retry annotations", `{"annotations": {"` + webappv1.AnnotationPromoteStep + `": "0a1b2c3d4e/1", "` + webappv1.AnnotationRetry + `": "0a1b2c3d4e/2"}}`, `{}`, "null", "", "", "0a1b2c3d4e/1", "0a1b2c3d4e/2"},
		{"a canary of the wrong type", `{}`, `{"canary": "Progressing"}`, "null", "", "", "", ""},
		{"a canary with a field of the wrong type", `{}`, `{"canary": {"revision": "r", "step": "two"}}`, "null", "", "", "", ""},
		{"a canary without a revision", `{}`, `{"canary": {"phase": "Progressing"}}`, "null", "", "", "", ""},
		{"a canary of an unknown phase", `{}`, `{"canary": {"revision": "r", "phase": "Sleeping"}}`, "null", "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var meta map[string]any
			if err := json.Unmarshal([]byte(tt.metadata), &meta); err != nil {
				t.Fatal(err)
			}
			meta["name"], meta["namespace"] = "shop", "default"
			m, _ := json.Marshal(meta)
			body := `{"parent": {"metadata": ` + string(m) + `, "spec": {"image": "shop:1"}, "status": ` + tt.status + `}}`
			req, err := wire.DecodeRequest([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(req.Parent.Canary)
			if string(got) != tt.wantCanary {
				t.Errorf("canary = %s; want %s", got, tt.wantCanary)
			}
			if req.Parent.PromoteStep != tt.wantStep || req.Parent.Retry != tt.wantRetry {
				t.Errorf("promote-step, retry = %q, %q; want %q, %q", req.Parent.PromoteStep, req.Parent.Retry, tt.wantStep, tt.wantRetry)
			}
			if req.Parent.Promote != tt.wantPromote || req.Parent.Abort != tt.wantAb {
				t.Errorf("promote, abort = %q, %q; want %q, %q", req.Parent.Promote, req.Parent.Abort, tt.wantPromote, tt.wantAb)
			}
		})
	}
}

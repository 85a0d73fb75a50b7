package v1_test

import (
	"fmt"
	"os"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/example/webapp-operator/hooktest"
)

// crd loads the generated CustomResourceDefinition as plain maps.
func crd(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../../crds/example.com_webapps.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

var get = hooktest.Field

func TestCRD(t *testing.T) {
	c := crd(t)
	version := get(c, "spec", "versions", 0)
	spec := get(version, "schema", "openAPIV3Schema", "properties", "spec")
	tests := []struct {
		path []any
		want any
	}{
		{[]any{"spec", "group"}, "example.com"},
		{[]any{"spec", "scope"}, "Namespaced"},
		{[]any{"spec", "names", "kind"}, "WebApp"},
		{[]any{"spec", "names", "plural"}, "webapps"},
		{[]any{"spec", "names", "shortNames"}, []any{"wa"}},
		{[]any{"spec", "versions", 0, "name"}, "v1"},
		{[]any{"spec", "versions", 0, "served"}, true},
		{[]any{"spec", "versions", 0, "storage"}, true},
		{[]any{"spec", "versions", 0, "subresources", "status"}, map[string]any{}},
		{[]any{"spec", "versions", 0, "schema", "openAPIV3Schema", "required"}, []any{"spec"}},
	}
	for _, tt := range tests {
		if got := get(c, tt.path...); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%v = %#v; want %#v", tt.path, got, tt.want)
		}
	}
	fields := []struct {
		path []any
		want any
	}{
		{[]any{"required"}, []any{"image"}},
		{[]any{"properties", "image", "minLength"}, float64(1)},
		{[]any{"properties", "replicas", "default"}, float64(1)},
		{[]any{"properties", "replicas", "minimum"}, float64(0)},
		{[]any{"properties", "replicas", "maximum"}, float64(1000)},
		{[]any{"properties", "port", "minimum"}, float64(1)},
		{[]any{"properties", "port", "maximum"}, float64(65535)},
		{[]any{"properties", "env", "items", "required"}, []any{"name"}},
	}
	for _, tt := range fields {
		if got := get(spec, tt.path...); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("spec.%v = %#v; want %#v", tt.path, got, tt.want)
		}
	}
	// kubectl get webapps: READY as kubectl get deployments shows it (never spec.replicas, which
	// an autoscaler overrides), PHASE, REASON, URL, AGE; -o wide adds IMAGE and MESSAGE.
	var columns []string
	for _, col := range get(version, "additionalPrinterColumns").([]any) {
		priority, _ := get(col, "priority").(float64)
		columns = append(columns, fmt.Sprintf("%s %s %v", get(col, "name"), get(col, "jsonPath"), priority))
	}
	want := []string{
		"Ready .status.readyOfDesired 0",
		"Phase .status.phase 0",
		`Reason .status.conditions[?(@.type=="Ready")].reason 0`,
		"URL .status.url 0",
		"Canary .status.canary.weight 0",
		"Age .metadata.creationTimestamp 0",
		"Image .spec.image 1",
		"Message .status.message 1",
	}
	if !reflect.DeepEqual(columns, want) {
		t.Errorf("printer columns = %q; want %q", columns, want)
	}
}

// TestCRDDescriptions checks that every field under spec and status has a description, so that
// `kubectl explain webapp.spec` explains every field.
func TestCRDDescriptions(t *testing.T) {
	root := get(crd(t), "spec", "versions", 0, "schema", "openAPIV3Schema", "properties")
	var walk func(path string, schema any)
	walk = func(path string, schema any) {
		if d, _ := get(schema, "description").(string); d == "" {
			t.Errorf("%s has no description", path)
		}
		props, _ := get(schema, "properties").(map[string]any)
		for name, sub := range props {
			walk(path+"."+name, sub)
		}
		if items := get(schema, "items"); items != nil && get(items, "type") == "object" {
			walk(path+"[]", items) // a list of objects: its items' fields need descriptions too
		}
	}
	for _, top := range []string{"spec", "status"} {
		walk(top, get(root, top))
	}
}

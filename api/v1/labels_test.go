package v1_test

import (
	"regexp"
	"slices"
	"testing"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/hooktest"
)

// TestOwnedKeysMatchCRD checks that the CRD's rules on podLabels and podAnnotations name exactly
// the keys the hook refuses, so that the schema and the hook agree.
func TestOwnedKeysMatchCRD(t *testing.T) {
	spec := hooktest.Field(crd(t), "spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec", "properties")
	quoted := regexp.MustCompile(`'([^']*)'`)
	for field, keys := range map[string][]string{"podLabels": webappv1.OwnedPodLabels, "podAnnotations": webappv1.OwnedPodAnnotations} {
		rule, _ := hooktest.Field(spec, field, "x-kubernetes-validations", 0, "rule").(string)
		var got []string
		for _, m := range quoted.FindAllStringSubmatch(rule, -1) {
			got = append(got, m[1])
		}
		if !slices.Equal(got, keys) {
			t.Errorf("the CRD's rule for %s names %q; the hook refuses %q", field, got, keys)
		}
	}
}

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

// TestRevisionCountValues: the values the promote-step and retry annotations take read back as
// written, and a value that is not one is refused rather than read as another.
func TestRevisionCountValues(t *testing.T) {
	tests := []struct {
		v       string
		def     int32
		wantRev string
		wantN   int32
		wantOK  bool
	}{
		{webappv1.PromoteStepValue("c138f6851b", 2), -1, "c138f6851b", 2, true},
		{webappv1.PromoteStepValue("c138f6851b", 0), -1, "c138f6851b", 0, true},
		{webappv1.RetryValue("c138f6851b", 1), 1, "c138f6851b", 1, true},
		{webappv1.RetryValue("c138f6851b", 3), 1, "c138f6851b", 3, true},
		{"c138f6851b", -1, "c138f6851b", -1, true},
		{"c138f6851b/", 1, "", 0, false},
		{"c138f6851b/two", 1, "", 0, false},
		{"c138f6851b/-1", 1, "", 0, false},
		{"c138f6851b/99999999999", 1, "", 0, false},
		{"/2", 1, "", 0, false},
		{"", 1, "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.v, func(t *testing.T) {
			rev, n, ok := webappv1.ParseRevisionCount(tt.v, tt.def)
			if rev != tt.wantRev || n != tt.wantN || ok != tt.wantOK {
				t.Errorf("ParseRevisionCount(%q, %d) = %q, %d, %t; want %q, %d, %t", tt.v, tt.def, rev, n, ok, tt.wantRev, tt.wantN, tt.wantOK)
			}
		})
	}
}

package v1_test

import (
	"regexp"
	"slices"
	"strings"
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

// TestCanaryAnnotationValues: the values the canary annotations take read back as written, for
// every attempt, and a value that is not one is refused, saying the form it must have, rather
// than read as another.
func TestCanaryAnnotationValues(t *testing.T) {
	type target = webappv1.CanaryTarget
	tests := []struct {
		key, v  string
		want    target
		wantErr string
	}{
		{webappv1.AnnotationPromote, webappv1.AttemptValue("c138f6851b", 0), target{Revision: "c138f6851b", Retry: 1}, ""},
		{webappv1.AnnotationPromote, webappv1.AttemptValue("c138f6851b", 3), target{Revision: "c138f6851b", Attempt: 3, Retry: 1}, ""},
		{webappv1.AnnotationAbort, webappv1.AttemptValue("c138f6851b", webappv1.MaxAnnotationNumber), target{Revision: "c138f6851b", Attempt: webappv1.MaxAnnotationNumber, Retry: 1}, ""},
		{webappv1.AnnotationAbort, "c138f6851b@0", target{Revision: "c138f6851b", Retry: 1}, ""},
		{webappv1.AnnotationPromoteStep, webappv1.PromoteStepValue("c138f6851b", 0, 2), target{Revision: "c138f6851b", Step: 2, Retry: 1}, ""},
		{webappv1.AnnotationPromoteStep, webappv1.PromoteStepValue("c138f6851b", 4, 0), target{Revision: "c138f6851b", Attempt: 4, Retry: 1}, ""},
		{webappv1.AnnotationRetry, webappv1.RetryValue("c138f6851b", 0, 0), target{Revision: "c138f6851b", Retry: 1}, ""},
		{webappv1.AnnotationRetry, webappv1.RetryValue("c138f6851b", 0, 2), target{Revision: "c138f6851b", Retry: 3}, ""},
		{webappv1.AnnotationRetry, webappv1.RetryValue("c138f6851b", 5, 2), target{Revision: "c138f6851b", Attempt: 5, Retry: 1}, ""},
		// What the hook's earlier versions wrote reads as attempt 0.
		{webappv1.AnnotationRetry, "c138f6851b/1000000", target{Revision: "c138f6851b", Retry: 1000000}, ""},

		{webappv1.AnnotationPromote, "", target{}, "must be <revision>[@<attempt>]"},
		{webappv1.AnnotationPromote, "c138f6851b/1", target{}, "must be <revision>[@<attempt>]"},
		{webappv1.AnnotationPromote, "C138F6851B", target{}, "must be <revision>[@<attempt>]"},
		{webappv1.AnnotationPromote, "c138f6851b@", target{}, "must be <revision>[@<attempt>]"},
		{webappv1.AnnotationPromote, "c138f6851b@-1", target{}, "must be <revision>[@<attempt>]"},
		{webappv1.AnnotationPromote, "c138f6851b@10000000", target{}, "must be <revision>[@<attempt>]"},
		{webappv1.AnnotationPromote, "@2", target{}, "must be <revision>[@<attempt>]"},
		{webappv1.AnnotationPromote, strings.Repeat("a", 64), target{}, "must be <revision>[@<attempt>]"},
		{webappv1.AnnotationPromoteStep, "c138f6851b", target{}, "must be <revision>[@<attempt>]/<step>"},
		{webappv1.AnnotationPromoteStep, "c138f6851b/", target{}, "must be <revision>[@<attempt>]/<step>"},
		{webappv1.AnnotationPromoteStep, "c138f6851b/two", target{}, "must be <revision>[@<attempt>]/<step>"},
		{webappv1.AnnotationPromoteStep, "c138f6851b/1/2", target{}, "must be <revision>[@<attempt>]/<step>"},
		{webappv1.AnnotationRetry, "c138f6851b/0", target{}, "must be <revision>[@<attempt>] or <revision>/<n>"},
		{webappv1.AnnotationRetry, "c138f6851b@2/3", target{}, "must be <revision>[@<attempt>] or <revision>/<n>"},
		{webappv1.AnnotationRetry, "c138f6851b/99999999999", target{}, "must be <revision>[@<attempt>] or <revision>/<n>"},
		{"webapp.example.com/revision", "c138f6851b", target{}, "webapp.example.com/revision is not a canary annotation"},
	}
	for _, tt := range tests {
		t.Run(tt.key+"="+tt.v, func(t *testing.T) {
			got, err := webappv1.ParseCanaryAnnotation(tt.key, tt.v)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.wantErr || err == nil && got != tt.want {
				t.Errorf("ParseCanaryAnnotation(%q, %q) = %+v, %q; want %+v, %q", tt.key, tt.v, got, gotErr, tt.want, tt.wantErr)
			}
		})
	}
}

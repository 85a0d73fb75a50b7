package v1_test

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
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
		{[]any{"spec", "group"}, webappv1.Group},
		{[]any{"spec", "scope"}, "Namespaced"},
		{[]any{"spec", "names", "kind"}, webappv1.Kind},
		{[]any{"spec", "names", "plural"}, "webapps"},
		{[]any{"spec", "names", "shortNames"}, []any{"wa"}},
		{[]any{"spec", "versions", 0, "name"}, webappv1.Version},
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
		{[]any{"properties", "replicas", "default"}, float64(webappv1.DefaultReplicas)},
		{[]any{"properties", "replicas", "minimum"}, float64(0)},
		{[]any{"properties", "replicas", "maximum"}, float64(webappv1.MaxReplicas)},
		{[]any{"properties", "port", "minimum"}, float64(webappv1.MinPort)},
		{[]any{"properties", "port", "maximum"}, float64(webappv1.MaxPort)},
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
		"Analysis .status.canary.analysis.result 1",
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

// schemaOf returns the schema of a field of the CRD, given as a dotted path from the WebApp's
// root such as "spec.rollout.canary.steps[].weight" ("[]" steps into a list's items), or nil.
func schemaOf(c map[string]any, path string) any {
	n := get(c, "spec", "versions", 0, "schema", "openAPIV3Schema")
	for name := range strings.SplitSeq(path, ".") {
		n = get(n, "properties", strings.TrimSuffix(name, "[]"))
		if strings.HasSuffix(name, "[]") {
			n = get(n, "items")
		}
	}
	return n
}

// prose returns a field's description with its lines joined, as kubectl explain reflows it: the
// generator keeps the source comment's line breaks, which fall anywhere in a phrase.
func prose(schema any) string {
	d, _ := get(schema, "description").(string)
	return strings.Join(strings.Fields(d), " ")
}

// inWords says a duration as the CRD's text does: "10 seconds", "2 minutes", "a week", in the
// largest unit that divides it.
func inWords(d time.Duration) string {
	units := []struct {
		one, many string
		d         time.Duration
	}{
		{"a week", "weeks", 7 * 24 * time.Hour},
		{"a day", "days", 24 * time.Hour},
		{"an hour", "hours", time.Hour},
		{"a minute", "minutes", time.Minute},
		{"a second", "seconds", time.Second},
	}
	for _, u := range units {
		if d > 0 && d%u.d == 0 {
			if d == u.d {
				return u.one
			}
			return fmt.Sprintf("%d %s", d/u.d, u.many)
		}
	}
	return d.String()
}

// oneOf lists words as the CRD's text does: "a, b or c".
func oneOf[S ~string](words []S) string {
	s := make([]string, len(words))
	for i, w := range words {
		s[i] = string(w)
	}
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// enum returns values as the CRD's enum holds them.
func enum[S ~string](values ...S) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

// longest returns the greatest n, up to 1000, for which ok holds of a string of n letters:
// the bound an apimachinery check enforces without exporting it.
func longest(ok func(string) bool) int {
	n := 0
	for n < 1000 && ok(strings.Repeat("a", n+1)) {
		n++
	}
	return n
}

// TestCRDMatchesConstants holds the generated CRD to the Go constants that its markers and its
// text repeat. A +kubebuilder marker cannot name a constant, and a field's comment (the CRD's
// description) says its numbers in words, so each copy is checked here against the constant the
// hook enforces: changing one without the other fails this test. Bounds the hook takes from
// apimachinery's validation (DNS names, label keys and values) are tied to apimachinery's.
func TestCRDMatchesConstants(t *testing.T) {
	c := crd(t)
	grace := webappv1.DefaultTerminationGracePeriodSeconds
	// The longest name part of a label key (after the optional "prefix/"): apimachinery keeps it
	// unexported, so it is found from IsQualifiedName itself.
	keyName := longest(func(s string) bool { return len(validation.IsQualifiedName(s)) == 0 })
	labelKey := validation.DNS1123SubdomainMaxLength + len("/") + keyName

	markers := []struct {
		field, key string // the field's path from the WebApp's root, and the schema keyword
		want       any
		constant   string // what the value is tied to, for the failure message
	}{
		{"spec.replicas", "default", float64(webappv1.DefaultReplicas), "DefaultReplicas"},
		{"spec.replicas", "maximum", float64(webappv1.MaxReplicas), "MaxReplicas"},
		{"spec.port", "minimum", float64(webappv1.MinPort), "MinPort"},
		{"spec.port", "maximum", float64(webappv1.MaxPort), "MaxPort"},
		{"spec.healthCheck.port", "minimum", float64(webappv1.MinPort), "MinPort"},
		{"spec.healthCheck.port", "maximum", float64(webappv1.MaxPort), "MaxPort"},
		{"spec.route.parentRefs[].port", "minimum", float64(webappv1.MinPort), "MinPort"},
		{"spec.route.parentRefs[].port", "maximum", float64(webappv1.MaxPort), "MaxPort"},
		{"spec.autoscaling.minReplicas", "maximum", float64(webappv1.MaxReplicas), "MaxReplicas"},
		{"spec.autoscaling.maxReplicas", "maximum", float64(webappv1.MaxReplicas), "MaxReplicas"},
		{"spec.autoscaling.targetCPUUtilizationPercentage", "maximum", float64(webappv1.MaxUtilizationPercentage), "MaxUtilizationPercentage"},
		{"spec.autoscaling.targetMemoryUtilizationPercentage", "maximum", float64(webappv1.MaxUtilizationPercentage), "MaxUtilizationPercentage"},
		{"spec.shutdownDelaySeconds", "maximum", float64(webappv1.MaxShutdownDelaySeconds), "MaxShutdownDelaySeconds"},
		{"spec.route.hostnames", "maxItems", float64(webappv1.MaxRouteHostnames), "MaxRouteHostnames"},
		{"spec.route.path", "maxLength", float64(webappv1.MaxRoutePathLength), "MaxRoutePathLength"},
		{"spec.route.parentRefs", "maxItems", float64(webappv1.MaxRouteParentRefs), "MaxRouteParentRefs"},
		{"spec.route.pathType", "default", string(webappv1.RoutePathPrefix), "RoutePathPrefix"},
		{"spec.route.pathType", "enum", enum(webappv1.RoutePathPrefix, webappv1.RoutePathExact), "RoutePathPrefix, RoutePathExact"},
		{"spec.ingress.pathType", "default", string(networkingv1.PathTypePrefix), "networkingv1.PathTypePrefix, which Default sets"},
		{"spec.ingress.pathType", "enum", enum(networkingv1.PathTypePrefix, networkingv1.PathTypeExact, networkingv1.PathTypeImplementationSpecific), "the networkingv1.PathTypes the hook accepts"},
		{"spec.securityProfile", "enum", enum(webappv1.SecurityProfileRestricted, webappv1.SecurityProfileNone), "SecurityProfileRestricted, SecurityProfileNone"},
		{"spec.rollout.canary.steps", "maxItems", float64(webappv1.MaxCanarySteps), "MaxCanarySteps"},
		{"spec.rollout.canary.steps[].weight", "maximum", float64(webappv1.MaxCanaryWeight), "MaxCanaryWeight"},
		{"spec.rollout.canary.steps[].pauseSeconds", "maximum", float64(webappv1.MaxCanaryPauseSeconds), "MaxCanaryPauseSeconds"},
		{"spec.rollout.canary.maxFailedChecks", "default", float64(webappv1.DefaultMaxFailedChecks), "DefaultMaxFailedChecks"},
		{"spec.rollout.canary.maxFailedChecks", "maximum", float64(webappv1.MaxFailedChecksLimit), "MaxFailedChecksLimit"},
		{"spec.rollout.canary.scaleDownDelaySeconds", "default", float64(webappv1.DefaultScaleDownDelaySeconds), "DefaultScaleDownDelaySeconds"},
		{"spec.rollout.canary.scaleDownDelaySeconds", "maximum", float64(webappv1.MaxScaleDownDelaySeconds), "MaxScaleDownDelaySeconds"},
		{"spec.rollout.canary.headerRoute.matches", "maxItems", float64(webappv1.MaxHeaderRouteMatches), "MaxHeaderRouteMatches"},
		{"spec.rollout.canary.headerRoute.matches[].headers", "maxItems", float64(webappv1.MaxHeaderMatches), "MaxHeaderMatches"},
		{"spec.rollout.canary.headerRoute.matches[].headers[].name", "maxLength", float64(webappv1.MaxHeaderNameLength), "MaxHeaderNameLength"},
		{"spec.rollout.canary.headerRoute.matches[].headers[].value", "maxLength", float64(webappv1.MaxHeaderValueLength), "MaxHeaderValueLength"},
		{"spec.rollout.canary.headerRoute.matches[].headers[].type", "default", string(webappv1.HeaderMatchExact), "HeaderMatchExact"},
		{"spec.rollout.canary.headerRoute.matches[].headers[].type", "enum", enum(webappv1.HeaderMatchExact, webappv1.HeaderMatchRegularExpression), "HeaderMatchExact, HeaderMatchRegularExpression"},
		{"spec.rollout.canary.headerRoute.analysis", "default", string(webappv1.HeaderRouteInclude), "HeaderRouteInclude"},
		{"spec.rollout.canary.headerRoute.analysis", "enum", enum(webappv1.HeaderRouteInclude, webappv1.HeaderRouteExclude), "HeaderRouteInclude, HeaderRouteExclude"},
		{"spec.rollout.canary.rollbackWindow.revisions", "maximum", float64(webappv1.MaxRollbackWindowRevisions), "MaxRollbackWindowRevisions"},
		{"spec.rollout.blueGreen.scaleDownDelaySeconds", "default", float64(webappv1.DefaultBlueGreenScaleDownDelaySeconds), "DefaultBlueGreenScaleDownDelaySeconds"},
		{"spec.rollout.blueGreen.scaleDownDelaySeconds", "maximum", float64(webappv1.MaxScaleDownDelaySeconds), "MaxScaleDownDelaySeconds"},
		{"spec.rollout.blueGreen.maxFailedChecks", "default", float64(webappv1.DefaultMaxFailedChecks), "DefaultMaxFailedChecks"},
		{"spec.rollout.blueGreen.maxFailedChecks", "maximum", float64(webappv1.MaxFailedChecksLimit), "MaxFailedChecksLimit"},
		{"spec.rollout.blueGreen.autoPromotionSeconds", "maximum", float64(webappv1.MaxCanaryPauseSeconds), "MaxCanaryPauseSeconds"},
		{"spec.rollout.blueGreen.preview.matches", "maxItems", float64(webappv1.MaxHeaderRouteMatches), "MaxHeaderRouteMatches"},
		{"spec.rollout.blueGreen.preview.matches[].headers", "maxItems", float64(webappv1.MaxHeaderMatches), "MaxHeaderMatches"},
		{"spec.rollout.blueGreen.preview.matches[].headers[].type", "default", string(webappv1.HeaderMatchExact), "HeaderMatchExact"},
		{"spec.rollout.blueGreen.rollbackWindow.revisions", "maximum", float64(webappv1.MaxRollbackWindowRevisions), "MaxRollbackWindowRevisions"},
		{"status.canary.stableRevisions", "maxItems", float64(webappv1.MaxRollbackWindowRevisions + 1), "MaxRollbackWindowRevisions"},
		{"status.canary.stableRevisions[]", "maxLength", float64(webappv1.MaxRevisionLength), "MaxRevisionLength"},
		{"status.phase", "enum", enum(webappv1.PhasePending, webappv1.PhaseProgressing, webappv1.PhaseReady, webappv1.PhaseDegraded, webappv1.PhaseInvalid, webappv1.PhaseTerminating), "the Phase constants"},
		{"status.canary.phase", "enum", enum(webappv1.CanaryPhases...), "CanaryPhases"},
		{"spec.rollout.canary.analysis.intervalSeconds", "minimum", float64(webappv1.MinAnalysisIntervalSeconds), "MinAnalysisIntervalSeconds"},
		{"spec.rollout.canary.analysis.intervalSeconds", "maximum", float64(webappv1.MaxAnalysisIntervalSeconds), "MaxAnalysisIntervalSeconds"},
		{"spec.rollout.canary.analysis.windowSeconds", "minimum", float64(webappv1.MinAnalysisIntervalSeconds), "MinAnalysisIntervalSeconds"},
		{"spec.rollout.canary.analysis.windowSeconds", "maximum", float64(webappv1.MaxAnalysisIntervalSeconds), "MaxAnalysisIntervalSeconds"},
		{"spec.rollout.canary.analysis.minRequests", "maximum", float64(webappv1.MaxAnalysisMinRequests), "MaxAnalysisMinRequests"},
		{"spec.rollout.canary.analysis.metrics", "maxItems", float64(webappv1.MaxAnalysisMetrics), "MaxAnalysisMetrics"},
		{"spec.rollout.canary.analysis.onInconclusive.action", "enum", enum(webappv1.InconclusiveActions...), "InconclusiveActions"},
		{"spec.rollout.canary.analysis.onInconclusive.afterSeconds", "maximum", float64(webappv1.MaxCanaryPauseSeconds), "MaxCanaryPauseSeconds"},
		{"status.canary.analysis.result", "enum", enum(webappv1.CheckResults...), "CheckResults"},
		{"status.canary.attempt", "maximum", float64(webappv1.MaxAnnotationNumber), "MaxAnnotationNumber"},
		{"status.canary.ignoredAnnotations", "maxItems", float64(len(webappv1.CanaryAnnotations)), "CanaryAnnotations"},
		{"status.canary.analysis.metrics[].result", "enum", enum(webappv1.CheckResults...), "CheckResults"},
		// What the hook checks with apimachinery's validation.
		{"spec.serviceAccountName", "maxLength", float64(validation.DNS1123SubdomainMaxLength), "validation.DNS1123SubdomainMaxLength"},
		{"spec.priorityClassName", "maxLength", float64(validation.DNS1123SubdomainMaxLength), "validation.DNS1123SubdomainMaxLength"},
		{"spec.volumes[].name", "maxLength", float64(validation.DNS1123LabelMaxLength), "validation.DNS1123LabelMaxLength"},
		{"spec.ingress.host", "maxLength", float64(validation.DNS1123SubdomainMaxLength), "validation.DNS1123SubdomainMaxLength"},
		{"spec.ingress.className", "maxLength", float64(validation.DNS1123SubdomainMaxLength), "validation.DNS1123SubdomainMaxLength"},
		{"spec.ingress.tls.secretName", "maxLength", float64(validation.DNS1123SubdomainMaxLength), "validation.DNS1123SubdomainMaxLength"},
		{"spec.route.parentRefs[].name", "maxLength", float64(validation.DNS1123SubdomainMaxLength), "validation.DNS1123SubdomainMaxLength"},
	}
	for _, m := range markers {
		t.Run(m.field+"/"+m.key, func(t *testing.T) {
			if got := get(schemaOf(c, m.field), m.key); !reflect.DeepEqual(got, m.want) {
				t.Errorf("the CRD's %s of %s is %#v; %s says %#v", m.key, m.field, got, m.constant, m.want)
			}
		})
	}

	texts := []struct {
		field    string // the field whose description says it
		phrase   string
		constant string
	}{
		{"spec.port", fmt.Sprintf("on port %d", sync.ServicePort), "sync.ServicePort"},
		{"spec.ingress", fmt.Sprintf("the Service's port %d", sync.ServicePort), "sync.ServicePort"},
		{"spec.route", fmt.Sprintf("the Service's port %d", sync.ServicePort), "sync.ServicePort"},
		{"spec.healthCheck", "about " + inWords(sync.StartupFailureThreshold*sync.StartupPeriodSeconds*time.Second) + " to start", "sync.StartupFailureThreshold × sync.StartupPeriodSeconds"},
		{"spec.shutdownDelaySeconds", fmt.Sprintf("terminationGracePeriodSeconds (%d when unset)", grace), "DefaultTerminationGracePeriodSeconds"},
		{"spec.terminationGracePeriodSeconds", fmt.Sprintf("The pod's default is %d.", grace), "DefaultTerminationGracePeriodSeconds"},
		{"spec.securityProfile", fmt.Sprintf("%q opts out", webappv1.SecurityProfileNone), "SecurityProfileNone"},
		{"spec.autoscaling.targetCPUUtilizationPercentage", fmt.Sprintf("defaults to %d when no memory target", webappv1.DefaultTargetCPUUtilizationPercentage), "DefaultTargetCPUUtilizationPercentage"},
		{"spec.route.hostnames", fmt.Sprintf("at least one and at most %d", webappv1.MaxRouteHostnames), "MaxRouteHostnames"},
		{"spec.route.parentRefs", fmt.Sprintf("at most %d", webappv1.MaxRouteParentRefs), "MaxRouteParentRefs"},
		{"spec.route.pathType", fmt.Sprintf("%s (by path element", webappv1.RoutePathPrefix), "RoutePathPrefix"},
		{"spec.route.pathType", fmt.Sprintf("or %s.", webappv1.RoutePathExact), "RoutePathExact"},
		{"spec.rollout", "<name>" + webappv1.CanarySuffix + ",", "CanarySuffix"}, // the comma: "-can" is in "-canary" too
		{"spec.rollout.canary", "<name>" + webappv1.CanarySuffix + ",", "CanarySuffix"},
		{"spec.rollout.canary.steps[].weight", fmt.Sprintf("in percent, 1 to %d", webappv1.MaxCanaryWeight), "MaxCanaryWeight"},
		{"spec.rollout.canary.steps[].weight", fmt.Sprintf("stable replicas / %d)", webappv1.MaxCanaryWeight), "MaxCanaryWeight"},
		{"spec.rollout.canary.steps[].pauseSeconds", "0 to " + inWords(webappv1.MaxCanaryPauseSeconds*time.Second) + ".", "MaxCanaryPauseSeconds"},
		{"spec.rollout.canary.headerRoute.matches", fmt.Sprintf("1 to %d", webappv1.MaxHeaderRouteMatches), "MaxHeaderRouteMatches"},
		{"spec.rollout.canary.headerRoute.matches[].headers", fmt.Sprintf("1 to %d", webappv1.MaxHeaderMatches), "MaxHeaderMatches"},
		{"spec.rollout.canary.headerRoute.matches[].headers[].value", fmt.Sprintf("1 to %d printable", webappv1.MaxHeaderValueLength), "MaxHeaderValueLength"},
		{"spec.rollout.canary.rollbackWindow.revisions", fmt.Sprintf("1 to %d", webappv1.MaxRollbackWindowRevisions), "MaxRollbackWindowRevisions"},
		{"spec.rollout.canary.maxFailedChecks", fmt.Sprintf("%d (the default) to %d", webappv1.DefaultMaxFailedChecks, webappv1.MaxFailedChecksLimit), "DefaultMaxFailedChecks, MaxFailedChecksLimit"},
		{"spec.rollout.canary.scaleDownDelaySeconds", fmt.Sprintf("0 to %d (default %d)", webappv1.MaxScaleDownDelaySeconds, webappv1.DefaultScaleDownDelaySeconds), "MaxScaleDownDelaySeconds, DefaultScaleDownDelaySeconds"},
		{"spec.rollout.blueGreen.scaleDownDelaySeconds", fmt.Sprintf("0 to %d (default %d, as", webappv1.MaxScaleDownDelaySeconds, webappv1.DefaultBlueGreenScaleDownDelaySeconds), "MaxScaleDownDelaySeconds, DefaultBlueGreenScaleDownDelaySeconds"},
		{"spec.rollout.blueGreen.maxFailedChecks", fmt.Sprintf("%d (the default) to %d", webappv1.DefaultMaxFailedChecks, webappv1.MaxFailedChecksLimit), "DefaultMaxFailedChecks, MaxFailedChecksLimit"},
		{"spec.rollout.blueGreen.preview.matches", fmt.Sprintf("1 to %d", webappv1.MaxHeaderRouteMatches), "MaxHeaderRouteMatches"},
		{"spec.rollout.blueGreen", "<name>" + webappv1.CanarySuffix + ",", "CanarySuffix"},
		{"spec.rollout.canary.analysis.intervalSeconds", fmt.Sprintf("%d to %d (default %d)", webappv1.MinAnalysisIntervalSeconds, webappv1.MaxAnalysisIntervalSeconds, webappv1.DefaultAnalysisIntervalSeconds), "Min/Max/DefaultAnalysisIntervalSeconds"},
		{"spec.rollout.canary.analysis.minRequests", fmt.Sprintf("0 to %d (default %d)", webappv1.MaxAnalysisMinRequests, webappv1.DefaultAnalysisMinRequests), "MaxAnalysisMinRequests, DefaultAnalysisMinRequests"},
		{"spec.rollout.canary.analysis.onInconclusive.afterSeconds", fmt.Sprintf("(default %d)", webappv1.DefaultInconclusiveAfterSeconds), "DefaultInconclusiveAfterSeconds"},
		{"spec.rollout.canary.analysis.metrics", fmt.Sprintf("1 to %d", webappv1.MaxAnalysisMetrics), "MaxAnalysisMetrics"},
		{"spec.rollout.canary.analysis.metrics[].quantile", fmt.Sprintf("(default %v)", webappv1.DefaultLatencyQuantile), "DefaultLatencyQuantile"},
		{"spec.rollout.canary.maxFailedChecks", "at most once every " + inWords(webappv1.CanaryCheckInterval), "CanaryCheckInterval"},
		{"spec.rollout.canary.maxFailedChecks", "pauseSeconds plus " + inWords(webappv1.CanaryAvailabilityGrace), "CanaryAvailabilityGrace"},
		{"status.phase", oneOf([]webappv1.Phase{webappv1.PhasePending, webappv1.PhaseProgressing, webappv1.PhaseReady, webappv1.PhaseDegraded, webappv1.PhaseInvalid, webappv1.PhaseTerminating}), "the Phase constants"},
		{"status.canary.phase", oneOf(webappv1.CanaryPhases), "CanaryPhases"},
		{"status.canary.weight", "the Service <name>" + webappv1.CanarySuffix + ",", "CanarySuffix"},
		{"status.canary.failedChecks", "at most once every " + inWords(webappv1.CanaryCheckInterval), "CanaryCheckInterval"},
		{"spec.rollout.canary.analysis.intervalSeconds", "which comes " + inWords(webappv1.AnalysisFirstCheckDelay) + " after its weight is in place", "AnalysisFirstCheckDelay"},
		{"spec.podAnnotations", webappv1.AnnotationConfigHash, "AnnotationConfigHash"},
	}
	for _, k := range webappv1.OwnedPodLabels {
		texts = append(texts, struct{ field, phrase, constant string }{"spec.podLabels", k, "OwnedPodLabels"})
	}
	for _, tt := range texts {
		t.Run(tt.field+"/"+tt.phrase, func(t *testing.T) {
			if got := prose(schemaOf(c, tt.field)); !strings.Contains(got, tt.phrase) {
				t.Errorf("the description of %s does not say %q, as %s has it:\n%s", tt.field, tt.phrase, tt.constant, got)
			}
		})
	}

	// The CEL rules: each number or key they repeat, in the rule and in its message, for every
	// rule that states it.
	type rule struct{ rule, message string }
	rules := func(field string) []rule {
		var out []rule
		list, _ := get(schemaOf(c, field), "x-kubernetes-validations").([]any)
		for _, r := range list {
			out = append(out, rule{fmt.Sprint(get(r, "rule")), fmt.Sprint(get(r, "message"))})
		}
		return out
	}
	type tie struct {
		name          string            // what the rules repeat
		field         string            // whose rules
		about         func(r rule) bool // which of them state it
		want          int               // how many do
		rule, message string            // what each says
	}
	cel := []tie{
		{"DefaultTerminationGracePeriodSeconds", "spec",
			func(r rule) bool { return strings.Contains(r.rule, "self.terminationGracePeriodSeconds") }, 3,
			fmt.Sprintf("? self.terminationGracePeriodSeconds : %d)", grace), fmt.Sprintf("terminationGracePeriodSeconds (%d when unset)", grace)},
		{"LabelTrack", "spec",
			func(r rule) bool {
				return strings.Contains(r.rule, "self.rollout.canary") && strings.Contains(r.rule, "self.podLabels")
			}, 1,
			fmt.Sprintf("'%s' in self.podLabels", webappv1.LabelTrack), fmt.Sprintf("podLabels must not set %s with rollout.canary", webappv1.LabelTrack)},
		{"OwnedPodLabels", "spec.podLabels",
			func(r rule) bool { return strings.Contains(r.rule, "exists(k, k in self)") }, 1,
			"['" + strings.Join(webappv1.OwnedPodLabels, "', '") + "']", "must not set " + oneOf(webappv1.OwnedPodLabels) + ":"},
		{"OwnedPodAnnotations", "spec.podAnnotations",
			func(r rule) bool { return strings.Contains(r.rule, "exists(k, k in self)") }, 1,
			"['" + strings.Join(webappv1.OwnedPodAnnotations, "', '") + "']", "must not set " + oneOf(webappv1.OwnedPodAnnotations) + ":"},
	}
	for _, field := range []string{"spec.nodeSelector", "spec.podLabels"} {
		cel = append(cel,
			tie{"label keys: validation.DNS1123SubdomainMaxLength, /, and IsQualifiedName's name part", field,
				func(r rule) bool { return strings.Contains(r.message, "keys must be label keys") }, 1,
				fmt.Sprintf("k.size() <= %d && k.substring(k.lastIndexOf('/') + 1).size() <= %d", labelKey, keyName), fmt.Sprintf("then at most %d letters", keyName)},
			tie{"label values: validation.LabelValueMaxLength", field,
				func(r rule) bool { return strings.Contains(r.message, "values must be label values") }, 1,
				fmt.Sprintf("self[k].size() <= %d", validation.LabelValueMaxLength), fmt.Sprintf("at most %d characters", validation.LabelValueMaxLength)})
	}
	for _, tt := range cel {
		t.Run(tt.field+"/"+tt.name, func(t *testing.T) {
			n := 0
			for _, r := range rules(tt.field) {
				if !tt.about(r) {
					continue
				}
				n++
				if !strings.Contains(r.rule, tt.rule) {
					t.Errorf("a rule of %s does not say %q, as %s has it:\n%s", tt.field, tt.rule, tt.name, r.rule)
				}
				if !strings.Contains(r.message, tt.message) {
					t.Errorf("a rule's message of %s does not say %q, as %s has it:\n%s", tt.field, tt.message, tt.name, r.message)
				}
			}
			if n != tt.want {
				t.Errorf("%d rules of %s state %s; want %d", n, tt.field, tt.name, tt.want)
			}
		})
	}
}

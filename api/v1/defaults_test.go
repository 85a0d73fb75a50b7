package v1_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

func TestDefault(t *testing.T) {
	zero, two, port, other, seventy := int32(0), int32(2), int32(8080), int32(9000), int32(70)
	exact := networkingv1.PathTypeExact
	pct := intstr.FromString("25%")
	tests := []struct {
		name string
		spec webappv1.WebAppSpec
		want string // the defaulted spec as JSON
	}{
		{"nothing set", webappv1.WebAppSpec{Image: "x"}, `{"image":"x","replicas":1}`},
		{"an analysis: its interval, window, minRequests, onInconclusive and request-duration's quantile", webappv1.WebAppSpec{Image: "x", Rollout: &webappv1.Rollout{Canary: &webappv1.Canary{
			Steps: []webappv1.CanaryStep{{Weight: 10}},
			Analysis: &webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{
				{Name: webappv1.MetricRequestDuration, ThresholdRange: webappv1.ThresholdRange{Max: new(500.0)}},
				{Name: "errors", TemplateRef: &webappv1.MetricTemplateRef{Name: "errors"}, ThresholdRange: webappv1.ThresholdRange{Max: new(1.0)}},
			}},
		}}}, `{"image":"x","replicas":1,"rollout":{"canary":{"steps":[{"weight":10}],"maxFailedChecks":1,"scaleDownDelaySeconds":10,"analysis":{"intervalSeconds":30,"windowSeconds":30,"minRequests":10,"onInconclusive":{"afterSeconds":600,"action":"Hold"},"metrics":[{"name":"request-duration","quantile":0.99,"thresholdRange":{"max":500}},{"name":"errors","templateRef":{"name":"errors"},"thresholdRange":{"max":1}}]}}}}`},
		{"an analysis's window follows a set interval", webappv1.WebAppSpec{Image: "x", Rollout: &webappv1.Rollout{Canary: &webappv1.Canary{
			Steps:    []webappv1.CanaryStep{{Weight: 10}},
			Analysis: &webappv1.CanaryAnalysis{IntervalSeconds: new(int32(10)), MinRequests: new(int32(0)), Metrics: []webappv1.CanaryMetric{{Name: webappv1.MetricRequestSuccessRate, ThresholdRange: webappv1.ThresholdRange{Min: new(99.0)}}}},
		}}}, `{"image":"x","replicas":1,"rollout":{"canary":{"steps":[{"weight":10}],"maxFailedChecks":1,"scaleDownDelaySeconds":10,"analysis":{"intervalSeconds":10,"windowSeconds":10,"minRequests":0,"onInconclusive":{"afterSeconds":600,"action":"Hold"},"metrics":[{"name":"request-success-rate","thresholdRange":{"min":99}}]}}}}`},
		{"a header route: its analysis, and each header match's type", webappv1.WebAppSpec{Image: "x", Rollout: &webappv1.Rollout{Canary: &webappv1.Canary{
			Steps: []webappv1.CanaryStep{{Weight: 0}},
			HeaderRoute: &webappv1.CanaryHeaderRoute{Matches: []webappv1.HeaderRouteMatch{
				{Headers: []webappv1.HeaderMatch{{Name: "X-Canary", Value: "always"}}},
				{Headers: []webappv1.HeaderMatch{{Name: "Cookie", Value: "(^|; *)canary=always(;|$)", Type: webappv1.HeaderMatchRegularExpression}}},
			}},
		}}}, `{"image":"x","replicas":1,"rollout":{"canary":{"steps":[{"weight":0}],"maxFailedChecks":1,"scaleDownDelaySeconds":10,"headerRoute":{"matches":[{"headers":[{"type":"Exact","name":"X-Canary","value":"always"}]},{"headers":[{"type":"RegularExpression","name":"Cookie","value":"(^|; *)canary=always(;|$)"}]}],"analysis":"Include"}}}}`},
		{"a header route's analysis that is set stays", webappv1.WebAppSpec{Image: "x", Rollout: &webappv1.Rollout{Canary: &webappv1.Canary{
			Steps:          []webappv1.CanaryStep{{Weight: 10}},
			HeaderRoute:    &webappv1.CanaryHeaderRoute{Matches: []webappv1.HeaderRouteMatch{{Headers: []webappv1.HeaderMatch{{Name: "X-Canary", Value: "always"}}}}, Analysis: webappv1.HeaderRouteExclude},
			RollbackWindow: &webappv1.RollbackWindow{Revisions: 2},
		}}}, `{"image":"x","replicas":1,"rollout":{"canary":{"steps":[{"weight":10}],"maxFailedChecks":1,"scaleDownDelaySeconds":10,"headerRoute":{"matches":[{"headers":[{"type":"Exact","name":"X-Canary","value":"always"}]}],"analysis":"Exclude"},"rollbackWindow":{"revisions":2}}}}`},
		{"zero replicas stay zero", webappv1.WebAppSpec{Image: "x", Replicas: &zero}, `{"image":"x","replicas":0}`},
		{"ingress path and pathType", webappv1.WebAppSpec{Image: "x", Replicas: &two, Ingress: &webappv1.Ingress{Host: "a.example.com"}},
			`{"image":"x","replicas":2,"ingress":{"host":"a.example.com","path":"/","pathType":"Prefix"}}`},
		{"ingress values that are set stay", webappv1.WebAppSpec{Image: "x", Replicas: &two, Ingress: &webappv1.Ingress{Host: "a.example.com", Path: "/api", PathType: &exact}},
			`{"image":"x","replicas":2,"ingress":{"host":"a.example.com","path":"/api","pathType":"Exact"}}`},
		{"route path and pathType", webappv1.WebAppSpec{Image: "x", Replicas: &two, Route: &webappv1.Route{Hostnames: []gatewayv1.Hostname{"a.example.com"}}},
			`{"image":"x","replicas":2,"route":{"hostnames":["a.example.com"],"path":"/","pathType":"PathPrefix"}}`},
		{"route values that are set stay", webappv1.WebAppSpec{Image: "x", Replicas: &two, Route: &webappv1.Route{Hostnames: []gatewayv1.Hostname{"a.example.com"}, Path: "/api", PathType: webappv1.RoutePathExact}},
			`{"image":"x","replicas":2,"route":{"hostnames":["a.example.com"],"path":"/api","pathType":"Exact"}}`},
		{"route parentRefs get no default here", webappv1.WebAppSpec{Image: "x", Replicas: &two, Route: &webappv1.Route{Hostnames: []gatewayv1.Hostname{"a.example.com"}, ParentRefs: []webappv1.RouteParentRef{{Name: "public"}}}},
			`{"image":"x","replicas":2,"route":{"hostnames":["a.example.com"],"path":"/","pathType":"PathPrefix","parentRefs":[{"name":"public"}]}}`},
		{"disruptionBudget maxUnavailable", webappv1.WebAppSpec{Image: "x", Replicas: &two, DisruptionBudget: &webappv1.DisruptionBudget{}},
			`{"image":"x","replicas":2,"disruptionBudget":{"maxUnavailable":1}}`},
		{"autoscaling minReplicas", webappv1.WebAppSpec{Image: "x", Replicas: &two, Autoscaling: &webappv1.Autoscaling{MaxReplicas: 5}},
			`{"image":"x","replicas":2,"autoscaling":{"minReplicas":1,"maxReplicas":5,"targetCPUUtilizationPercentage":80}}`},
		{"a percentage stays", webappv1.WebAppSpec{Image: "x", Replicas: &two, DisruptionBudget: &webappv1.DisruptionBudget{MaxUnavailable: &pct}},
			`{"image":"x","replicas":2,"disruptionBudget":{"maxUnavailable":"25%"}}`},
		{"healthCheck port from spec.port", webappv1.WebAppSpec{Image: "x", Replicas: &two, Port: &port, HealthCheck: &webappv1.HealthCheck{Path: "/"}},
			`{"image":"x","replicas":2,"port":8080,"healthCheck":{"path":"/","port":8080}}`},
		{"healthCheck port of its own stays", webappv1.WebAppSpec{Image: "x", Replicas: &two, Port: &port, HealthCheck: &webappv1.HealthCheck{Path: "/", Port: &other}},
			`{"image":"x","replicas":2,"port":8080,"healthCheck":{"path":"/","port":9000}}`},
		{"healthCheck without any port stays without", webappv1.WebAppSpec{Image: "x", Replicas: &two, HealthCheck: &webappv1.HealthCheck{Path: "/"}},
			`{"image":"x","replicas":2,"healthCheck":{"path":"/"}}`},
		{"autoscaling with no target aims at CPU", webappv1.WebAppSpec{Image: "x", Replicas: &two, Autoscaling: &webappv1.Autoscaling{MinReplicas: &two, MaxReplicas: 5}},
			`{"image":"x","replicas":2,"autoscaling":{"minReplicas":2,"maxReplicas":5,"targetCPUUtilizationPercentage":80}}`},
		{"a memory target alone stays alone", webappv1.WebAppSpec{Image: "x", Replicas: &two, Autoscaling: &webappv1.Autoscaling{MinReplicas: &two, MaxReplicas: 5, TargetMemoryUtilizationPercentage: &seventy}},
			`{"image":"x","replicas":2,"autoscaling":{"minReplicas":2,"maxReplicas":5,"targetMemoryUtilizationPercentage":70}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			webappv1.Default(&spec)
			b, _ := json.Marshal(spec)
			if string(b) != tt.want {
				t.Errorf("Default = %s; want %s", b, tt.want)
			}
			webappv1.Default(&spec)
			if again, _ := json.Marshal(spec); string(again) != string(b) {
				t.Errorf("Default is not idempotent: %s, then %s", b, again)
			}
		})
	}
	t.Run("a default taken from another field is a copy", func(t *testing.T) {
		spec := webappv1.WebAppSpec{Image: "x", Port: &port, HealthCheck: &webappv1.HealthCheck{Path: "/"}}
		webappv1.Default(&spec)
		if spec.HealthCheck.Port == spec.Port {
			t.Error("healthCheck.port aliases spec.port")
		}
	})
}

// TestDefaultMatchesCRD holds Default to the defaults the generated CRD schema declares: every
// field with a schema default gets that value from Default when it is absent and its parent
// object present, and Default fills in no other field but those that depend on another one
// (here none: the spec has no port, and a memory target).
func TestDefaultMatchesCRD(t *testing.T) {
	spec := get(crd(t), "spec", "versions", 0, "schema", "openAPIV3Schema", "properties", "spec")
	schemaDefaults := map[string]any{} // by JSON path below spec, such as "ingress.pathType"
	var walk func(schema any, path string)
	walk = func(schema any, path string) {
		props, _ := get(schema, "properties").(map[string]any)
		for name, sub := range props {
			p := strings.TrimPrefix(path+"."+name, ".")
			// A default of "" (a probe's grpc.service, from the core types) is what an absent
			// string decodes to anyway: nothing for Default to do.
			if d := get(sub, "default"); d != nil && d != "" {
				schemaDefaults[p] = d
			}
			walk(sub, p)
		}
	}
	walk(spec, "")
	if len(schemaDefaults) == 0 {
		t.Fatal("the CRD declares no default at all")
	}
	// A spec with every object that holds a defaulted field present, and nothing else.
	var empty webappv1.WebAppSpec
	if err := json.Unmarshal([]byte(`{"ingress": {}, "route": {}, "disruptionBudget": {}, "autoscaling": {"targetMemoryUtilizationPercentage": 70}, "rollout": {"canary": {"headerRoute": {}}, "blueGreen": {"preview": {}}}}`), &empty); err != nil {
		t.Fatal(err)
	}
	webappv1.Default(&empty)
	b, _ := json.Marshal(empty)
	var defaulted map[string]any
	json.Unmarshal(b, &defaulted)
	got := map[string]any{}
	var leaves func(v any, path string)
	leaves = func(v any, path string) {
		if m, ok := v.(map[string]any); ok {
			for k, e := range m {
				leaves(e, strings.TrimPrefix(path+"."+k, "."))
			}
			return
		}
		got[path] = v
	}
	leaves(defaulted, "")
	delete(got, "image")                                         // required, left empty
	delete(got, "ingress.host")                                  // required, left empty
	delete(got, "route.hostnames")                               // required, left empty
	delete(got, "autoscaling.maxReplicas")                       // required, left 0
	delete(got, "autoscaling.targetMemoryUtilizationPercentage") // set by the test
	delete(got, "rollout.canary.steps")                          // required, left empty
	delete(got, "rollout.canary.headerRoute.matches")            // required, left empty
	delete(got, "rollout.blueGreen.preview.matches")             // required, left empty
	if !reflect.DeepEqual(got, schemaDefaults) {
		t.Errorf("Default fills in %v;\nthe CRD schema declares %v", got, schemaDefaults)
	}
}

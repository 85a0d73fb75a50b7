package v1_test

import (
	"encoding/json"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

func TestDefault(t *testing.T) {
	zero, two := int32(0), int32(2)
	exact := networkingv1.PathTypeExact
	pct := intstr.FromString("25%")
	tests := []struct {
		name string
		spec webappv1.WebAppSpec
		want string // the defaulted spec as JSON
	}{
		{"nothing set", webappv1.WebAppSpec{Image: "x"}, `{"image":"x","replicas":1}`},
		{"zero replicas stay zero", webappv1.WebAppSpec{Image: "x", Replicas: &zero}, `{"image":"x","replicas":0}`},
		{"ingress path and pathType", webappv1.WebAppSpec{Image: "x", Replicas: &two, Ingress: &webappv1.Ingress{Host: "a.example.com"}},
			`{"image":"x","replicas":2,"ingress":{"host":"a.example.com","path":"/","pathType":"Prefix"}}`},
		{"ingress values that are set stay", webappv1.WebAppSpec{Image: "x", Replicas: &two, Ingress: &webappv1.Ingress{Host: "a.example.com", Path: "/api", PathType: &exact}},
			`{"image":"x","replicas":2,"ingress":{"host":"a.example.com","path":"/api","pathType":"Exact"}}`},
		{"disruptionBudget maxUnavailable", webappv1.WebAppSpec{Image: "x", Replicas: &two, DisruptionBudget: &webappv1.DisruptionBudget{}},
			`{"image":"x","replicas":2,"disruptionBudget":{"maxUnavailable":1}}`},
		{"autoscaling minReplicas", webappv1.WebAppSpec{Image: "x", Replicas: &two, Autoscaling: &webappv1.Autoscaling{MaxReplicas: 5}},
			`{"image":"x","replicas":2,"autoscaling":{"minReplicas":1,"maxReplicas":5}}`},
		{"a percentage stays", webappv1.WebAppSpec{Image: "x", Replicas: &two, DisruptionBudget: &webappv1.DisruptionBudget{MaxUnavailable: &pct}},
			`{"image":"x","replicas":2,"disruptionBudget":{"maxUnavailable":"25%"}}`},
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
}

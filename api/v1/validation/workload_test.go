package validation

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

var spec = field.NewPath("spec")

func TestValidateName(t *testing.T) {
	port := new(int32(8080))
	canary := &webappv1.Rollout{Canary: &webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 10}}}}
	// The longest name whose canary Service, <name>-canary, is still a DNS-1035 label.
	longestCanary := validation.DNS1035LabelMaxLength - len(webappv1.CanarySuffix)
	tests := []struct {
		name   string
		webapp string
		spec   webappv1.WebAppSpec
		want   []fieldErr
	}{
		{"a plain name", "web", webappv1.WebAppSpec{}, nil},
		{"a name at the label value limit", strings.Repeat("a", validation.LabelValueMaxLength), webappv1.WebAppSpec{}, nil},
		{"a name past the label value limit", strings.Repeat("a", validation.LabelValueMaxLength+1), webappv1.WebAppSpec{},
			[]fieldErr{invalid("metadata.name").with("cannot label the pods")}},
		{"a name no label value can be", "-web", webappv1.WebAppSpec{}, []fieldErr{invalid("metadata.name").with("cannot label the pods")}},
		{"a long name is quoted short", strings.Repeat("a", 200), webappv1.WebAppSpec{},
			[]fieldErr{invalid("metadata.name").of(strings.Repeat("a", MaxQuoted) + "…")}},
		{"dots without a port", "web.v2", webappv1.WebAppSpec{}, nil},
		{"dots with a port", "web.v2", webappv1.WebAppSpec{Port: port}, []fieldErr{invalid("metadata.name").with("cannot name the Service that spec.port asks for")}},
		{"a leading digit without a port", "1web", webappv1.WebAppSpec{}, nil},
		{"a leading digit with a port", "1web", webappv1.WebAppSpec{Port: port}, []fieldErr{invalid("metadata.name").with("cannot name the Service")}},
		{"the longest name with a canary", strings.Repeat("a", longestCanary), webappv1.WebAppSpec{Port: port, Rollout: canary}, nil},
		{"one past the longest name with a canary", strings.Repeat("a", longestCanary+1), webappv1.WebAppSpec{Port: port, Rollout: canary},
			[]fieldErr{invalid("metadata.name").with(strings.Repeat("a", longestCanary+1) + webappv1.CanarySuffix)}},
		{"a long name with a canary but no port", strings.Repeat("a", longestCanary+1), webappv1.WebAppSpec{Rollout: canary}, nil},
		{"a long name with a rollout but no canary", strings.Repeat("a", longestCanary+1), webappv1.WebAppSpec{Port: port, Rollout: &webappv1.Rollout{}}, nil},
		{"at most one problem", strings.Repeat("A", 64), webappv1.WebAppSpec{Port: port, Rollout: canary}, []fieldErr{invalid("metadata.name").with("cannot label the pods")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, ValidateName(tt.webapp, &tt.spec), tt.want...)
		})
	}
}

func TestValidateRange(t *testing.T) {
	tests := []struct {
		v    *int32
		want []fieldErr
	}{
		{nil, nil},
		{new(int32(1)), nil},
		{new(int32(10)), nil},
		{new(int32(0)), []fieldErr{invalid("spec.n").of(int32(0)).with("between 1 and 10, inclusive")}},
		{new(int32(11)), []fieldErr{invalid("spec.n").of(int32(11))}},
	}
	for _, tt := range tests {
		name := "nil"
		if tt.v != nil {
			name = fmt.Sprint(*tt.v)
		}
		t.Run(name, func(t *testing.T) {
			checkErrs(t, validateRange(tt.v, 1, 10, spec.Child("n")), tt.want...)
		})
	}
}

// valid is a spec that passes, which the cases of TestValidateSpec change one field at a time.
func valid() webappv1.WebAppSpec {
	return webappv1.WebAppSpec{Image: "nginx:1.27", Replicas: new(int32(1)), Port: new(int32(8080))}
}

func TestValidateSpec(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*webappv1.WebAppSpec)
		want []fieldErr
	}{
		{"valid", func(*webappv1.WebAppSpec) {}, nil},
		{"no replicas: the default applies", func(s *webappv1.WebAppSpec) { s.Replicas = nil }, nil},
		{"no port", func(s *webappv1.WebAppSpec) { s.Port = nil }, nil},
		{"no image", func(s *webappv1.WebAppSpec) { s.Image = "" }, []fieldErr{required("spec.image")}},
		{"not an image", func(s *webappv1.WebAppSpec) { s.Image = "NGINX" }, []fieldErr{invalid("spec.image").of("NGINX")}},
		{"replicas 0", func(s *webappv1.WebAppSpec) { s.Replicas = new(int32(0)) }, nil},
		{"replicas at the limit", func(s *webappv1.WebAppSpec) { s.Replicas = new(int32(webappv1.MaxReplicas)) }, nil},
		{"replicas past the limit", func(s *webappv1.WebAppSpec) { s.Replicas = new(int32(webappv1.MaxReplicas + 1)) },
			[]fieldErr{invalid("spec.replicas").of(int32(webappv1.MaxReplicas + 1))}},
		{"replicas below 0", func(s *webappv1.WebAppSpec) { s.Replicas = new(int32(-1)) }, []fieldErr{invalid("spec.replicas")}},
		{"the lowest port", func(s *webappv1.WebAppSpec) { s.Port = new(int32(webappv1.MinPort)) }, nil},
		{"the highest port", func(s *webappv1.WebAppSpec) { s.Port = new(int32(webappv1.MaxPort)) }, nil},
		{"port below the range", func(s *webappv1.WebAppSpec) { s.Port = new(int32(webappv1.MinPort - 1)) }, []fieldErr{invalid("spec.port")}},
		{"port above the range", func(s *webappv1.WebAppSpec) { s.Port = new(int32(webappv1.MaxPort + 1)) }, []fieldErr{invalid("spec.port")}},
		{"an imagePullSecret without a name", func(s *webappv1.WebAppSpec) { s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "ok"}, {}} },
			[]fieldErr{required("spec.imagePullSecrets[1].name")}},
		{"an imagePullSecret that names nothing", func(s *webappv1.WebAppSpec) { s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "Not_A_Name"}} },
			[]fieldErr{invalid("spec.imagePullSecrets[0].name")}},
		{"a serviceAccountName at the limit", func(s *webappv1.WebAppSpec) {
			s.ServiceAccountName = strings.Repeat("a", validation.DNS1123SubdomainMaxLength)
		}, nil},
		{"a serviceAccountName past the limit", func(s *webappv1.WebAppSpec) {
			s.ServiceAccountName = strings.Repeat("a", validation.DNS1123SubdomainMaxLength+1)
		}, []fieldErr{invalid("spec.serviceAccountName")}},
		{"a serviceAccountName that names nothing", func(s *webappv1.WebAppSpec) { s.ServiceAccountName = "App_Account" }, []fieldErr{invalid("spec.serviceAccountName")}},
		{"progressDeadlineSeconds 1", func(s *webappv1.WebAppSpec) { s.ProgressDeadlineSeconds = new(int32(1)) }, nil},
		{"progressDeadlineSeconds 0", func(s *webappv1.WebAppSpec) { s.ProgressDeadlineSeconds = new(int32(0)) },
			[]fieldErr{invalid("spec.progressDeadlineSeconds").with("greater than or equal to 1")}},
		{"disruptionBudget of a percentage", func(s *webappv1.WebAppSpec) {
			s.DisruptionBudget = &webappv1.DisruptionBudget{MaxUnavailable: new(intstr.FromString("50%"))}
		}, nil},
		{"disruptionBudget without maxUnavailable", func(s *webappv1.WebAppSpec) { s.DisruptionBudget = &webappv1.DisruptionBudget{} }, nil},
		{"disruptionBudget below 0", func(s *webappv1.WebAppSpec) {
			s.DisruptionBudget = &webappv1.DisruptionBudget{MaxUnavailable: new(intstr.FromInt32(-1))}
		}, []fieldErr{invalid("spec.disruptionBudget.maxUnavailable")}},
		{"every section reports, in declaration order", func(s *webappv1.WebAppSpec) {
			*s = webappv1.WebAppSpec{
				Image:                   "",
				Replicas:                new(int32(-1)),
				Port:                    new(int32(0)),
				ServiceAccountName:      "A",
				SecurityProfile:         "baseline",
				PriorityClassName:       "P",
				PodLabels:               map[string]string{webappv1.LabelName: "x"},
				ShutdownDelaySeconds:    new(int32(0)),
				Strategy:                &webappv1.RolloutStrategy{MaxSurge: new(intstr.FromInt32(-1))},
				ProgressDeadlineSeconds: new(int32(0)),
				Ingress:                 &webappv1.Ingress{Host: "a.example.com"},
				Route:                   &webappv1.Route{Hostnames: nil, ParentRefs: []webappv1.RouteParentRef{{Name: "gw"}}, Path: "/"},
				DisruptionBudget:        &webappv1.DisruptionBudget{MaxUnavailable: new(intstr.FromString("x"))},
				Autoscaling:             &webappv1.Autoscaling{MaxReplicas: 0},
				Rollout:                 &webappv1.Rollout{Canary: &webappv1.Canary{}},
			}
		}, []fieldErr{
			required("spec.image"),
			invalid("spec.replicas"),
			invalid("spec.port"),
			invalid("spec.serviceAccountName"),
			notSupported("spec.securityProfile"),
			invalid("spec.priorityClassName"),
			forbidden("spec.podLabels[app.kubernetes.io/name]"),
			invalid("spec.shutdownDelaySeconds"),
			invalid("spec.strategy.maxSurge"),
			invalid("spec.progressDeadlineSeconds"),
			required("spec.route.hostnames"),
			invalid("spec.disruptionBudget.maxUnavailable"),
			invalid("spec.autoscaling.maxReplicas"),
			required("spec.rollout.canary.steps"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := valid()
			tt.mod(&s)
			checkErrs(t, ValidateSpec(&s, spec), tt.want...)
		})
	}
}

func TestValidateStrategy(t *testing.T) {
	count, pct := intstr.FromInt32, intstr.FromString
	tests := []struct {
		name string
		st   *webappv1.RolloutStrategy
		want []fieldErr
	}{
		{"none", nil, nil},
		{"empty", &webappv1.RolloutStrategy{}, nil},
		{"counts", &webappv1.RolloutStrategy{MaxSurge: new(count(1)), MaxUnavailable: new(count(0))}, nil},
		{"percentages at the bounds", &webappv1.RolloutStrategy{MaxSurge: new(pct("100%")), MaxUnavailable: new(pct("0%"))}, nil},
		{"a negative maxSurge", &webappv1.RolloutStrategy{MaxSurge: new(count(-1))}, []fieldErr{invalid("spec.strategy.maxSurge").of(int32(-1))}},
		{"a negative maxUnavailable", &webappv1.RolloutStrategy{MaxUnavailable: new(count(-1))}, []fieldErr{invalid("spec.strategy.maxUnavailable")}},
		{"a percentage past 100", &webappv1.RolloutStrategy{MaxUnavailable: new(pct("101%"))}, []fieldErr{invalid("spec.strategy.maxUnavailable").of("101%")}},
		{"a negative percentage", &webappv1.RolloutStrategy{MaxSurge: new(pct("-1%"))}, []fieldErr{invalid("spec.strategy.maxSurge")}},
		{"a string without %", &webappv1.RolloutStrategy{MaxSurge: new(pct("25"))}, []fieldErr{invalid("spec.strategy.maxSurge").with(`such as "25%"`)}},
		{"a percentage that is no number", &webappv1.RolloutStrategy{MaxSurge: new(pct("x%"))}, []fieldErr{invalid("spec.strategy.maxSurge")}},
		{"both 0", &webappv1.RolloutStrategy{MaxSurge: new(count(0)), MaxUnavailable: new(count(0))},
			[]fieldErr{invalid("spec.strategy.maxUnavailable").with("must not be 0 when maxSurge is 0")}},
		{"both 0, one as 0%", &webappv1.RolloutStrategy{MaxSurge: new(pct("0%")), MaxUnavailable: new(count(0))},
			[]fieldErr{invalid("spec.strategy.maxUnavailable").with("must not be 0 when maxSurge is 0")}},
		{"maxSurge 0, maxUnavailable absent", &webappv1.RolloutStrategy{MaxSurge: new(count(0))}, nil},
		{"maxUnavailable 0, maxSurge absent", &webappv1.RolloutStrategy{MaxUnavailable: new(pct("0%"))}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateStrategy(tt.st, spec.Child("strategy")), tt.want...)
		})
	}
}

func TestValidateAutoscaling(t *testing.T) {
	const most, pct = webappv1.MaxReplicas, webappv1.MaxUtilizationPercentage
	tests := []struct {
		name string
		a    *webappv1.Autoscaling
		want []fieldErr
	}{
		{"none", nil, nil},
		{"maxReplicas alone", &webappv1.Autoscaling{MaxReplicas: 5}, nil},
		{"the widest bounds", &webappv1.Autoscaling{MinReplicas: new(int32(1)), MaxReplicas: most}, nil},
		{"minReplicas equal to maxReplicas", &webappv1.Autoscaling{MinReplicas: new(int32(most)), MaxReplicas: most}, nil},
		{"minReplicas 0", &webappv1.Autoscaling{MinReplicas: new(int32(0)), MaxReplicas: 5}, []fieldErr{invalid("spec.autoscaling.minReplicas")}},
		{"minReplicas past the limit", &webappv1.Autoscaling{MinReplicas: new(int32(most + 1)), MaxReplicas: most},
			[]fieldErr{invalid("spec.autoscaling.minReplicas"), invalid("spec.autoscaling.maxReplicas").with("minReplicas")}},
		{"maxReplicas 0", &webappv1.Autoscaling{MaxReplicas: 0}, []fieldErr{invalid("spec.autoscaling.maxReplicas").with("between 1 and")}},
		{"maxReplicas past the limit", &webappv1.Autoscaling{MaxReplicas: most + 1}, []fieldErr{invalid("spec.autoscaling.maxReplicas")}},
		{"maxReplicas below minReplicas", &webappv1.Autoscaling{MinReplicas: new(int32(5)), MaxReplicas: 4},
			[]fieldErr{invalid("spec.autoscaling.maxReplicas").of(int32(4)).with("minReplicas (5)")}},
		{"maxReplicas out of range and below minReplicas: the range alone", &webappv1.Autoscaling{MinReplicas: new(int32(5)), MaxReplicas: 0},
			[]fieldErr{invalid("spec.autoscaling.maxReplicas").with("between 1 and")}},
		{"targets at the bounds", &webappv1.Autoscaling{MaxReplicas: 5, TargetCPUUtilizationPercentage: new(int32(1)), TargetMemoryUtilizationPercentage: new(int32(pct))}, nil},
		{"a CPU target of 0", &webappv1.Autoscaling{MaxReplicas: 5, TargetCPUUtilizationPercentage: new(int32(0))},
			[]fieldErr{invalid("spec.autoscaling.targetCPUUtilizationPercentage")}},
		{"a CPU target past the limit", &webappv1.Autoscaling{MaxReplicas: 5, TargetCPUUtilizationPercentage: new(int32(pct + 1))},
			[]fieldErr{invalid("spec.autoscaling.targetCPUUtilizationPercentage")}},
		{"a memory target of 0", &webappv1.Autoscaling{MaxReplicas: 5, TargetMemoryUtilizationPercentage: new(int32(0))},
			[]fieldErr{invalid("spec.autoscaling.targetMemoryUtilizationPercentage")}},
		{"a memory target past the limit", &webappv1.Autoscaling{MaxReplicas: 5, TargetMemoryUtilizationPercentage: new(int32(pct + 1))},
			[]fieldErr{invalid("spec.autoscaling.targetMemoryUtilizationPercentage")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateAutoscaling(tt.a, spec.Child("autoscaling")), tt.want...)
		})
	}
}

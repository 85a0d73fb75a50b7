package v1

import (
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DefaultTargetCPUUtilizationPercentage is the CPU target of an autoscaling spec that names no
// target at all.
const DefaultTargetCPUUtilizationPercentage = 80

// Default fills in every default of a spec, and is the one place they are written: the hook
// applies it to every spec it decodes, and its builders trust it. It fills in, for fields that
// are absent:
//   - those the CRD schema also declares (+kubebuilder:default, which TestDefaultMatchesCRD holds
//     to this function), so that a spec means the same whether or not the apiserver defaulted
//     it: replicas 1, ingress path "/" and pathType Prefix, route path "/" and pathType
//     PathPrefix, disruptionBudget maxUnavailable 1, autoscaling minReplicas 1, a canary's
//     maxFailedChecks 1, its headerRoute's analysis Include and each header match's type Exact;
//   - those that depend on other fields, which a schema cannot declare: healthCheck.port is
//     spec.port, when that is set; an autoscaling spec with neither target aims at
//     DefaultTargetCPUUtilizationPercentage of the CPU request.
//
// It never overwrites a value that is set, zero values included: replicas: 0 stays 0. It is
// idempotent, and copies what it takes from another field, so that the two never alias.
func Default(spec *WebAppSpec) {
	if spec.Replicas == nil {
		r := int32(DefaultReplicas)
		spec.Replicas = &r
	}
	if h := spec.HealthCheck; h != nil && h.Port == nil && spec.Port != nil {
		port := *spec.Port
		h.Port = &port
	}
	if in := spec.Ingress; in != nil {
		if in.Path == "" {
			in.Path = "/"
		}
		if in.PathType == nil {
			t := networkingv1.PathTypePrefix
			in.PathType = &t
		}
	}
	if r := spec.Route; r != nil {
		if r.Path == "" {
			r.Path = "/"
		}
		if r.PathType == "" {
			r.PathType = RoutePathPrefix
		}
	}
	if db := spec.DisruptionBudget; db != nil && db.MaxUnavailable == nil {
		one := intstr.FromInt32(1)
		db.MaxUnavailable = &one
	}
	if ro := spec.Rollout; ro != nil && ro.Canary != nil && ro.Canary.MaxFailedChecks == nil {
		n := int32(DefaultMaxFailedChecks)
		ro.Canary.MaxFailedChecks = &n
	}
	if ro := spec.Rollout; ro != nil && ro.Canary != nil && ro.Canary.ScaleDownDelaySeconds == nil {
		n := int32(DefaultScaleDownDelaySeconds)
		ro.Canary.ScaleDownDelaySeconds = &n
	}
	if ro := spec.Rollout; ro != nil && ro.Canary != nil && ro.Canary.Analysis != nil {
		defaultAnalysis(ro.Canary.Analysis)
	}
	if ro := spec.Rollout; ro != nil && ro.Canary != nil && ro.Canary.HeaderRoute != nil {
		defaultHeaderRoute(ro.Canary.HeaderRoute)
	}
	if ro := spec.Rollout; ro != nil && ro.BlueGreen != nil {
		defaultBlueGreen(ro.BlueGreen)
	}
	if a := spec.Autoscaling; a != nil {
		if a.MinReplicas == nil {
			one := int32(1)
			a.MinReplicas = &one
		}
		if a.TargetCPUUtilizationPercentage == nil && a.TargetMemoryUtilizationPercentage == nil {
			cpu := int32(DefaultTargetCPUUtilizationPercentage)
			a.TargetCPUUtilizationPercentage = &cpu
		}
	}
}

// defaultAnalysis fills in an analysis's interval, window (the interval), minRequests,
// onInconclusive and each request-duration metric's quantile.
func defaultAnalysis(a *CanaryAnalysis) {
	if a.IntervalSeconds == nil {
		n := int32(DefaultAnalysisIntervalSeconds)
		a.IntervalSeconds = &n
	}
	if a.WindowSeconds == nil {
		n := *a.IntervalSeconds
		a.WindowSeconds = &n
	}
	if a.MinRequests == nil {
		n := int32(DefaultAnalysisMinRequests)
		a.MinRequests = &n
	}
	if a.OnInconclusive == nil {
		a.OnInconclusive = &InconclusivePolicy{}
	}
	if p := a.OnInconclusive; p.AfterSeconds == nil {
		n := int32(DefaultInconclusiveAfterSeconds)
		p.AfterSeconds = &n
	}
	if p := a.OnInconclusive; p.Action == "" {
		p.Action = InconclusiveHold
	}
	for i := range a.Metrics {
		if m := &a.Metrics[i]; m.TemplateRef == nil && m.Name == MetricRequestDuration && m.Quantile == nil {
			q := DefaultLatencyQuantile
			m.Quantile = &q
		}
	}
}

// defaultHeaderRoute fills in a header route's analysis (Include) and each header match's type
// (Exact).
func defaultHeaderRoute(h *CanaryHeaderRoute) {
	if h.Analysis == "" {
		h.Analysis = HeaderRouteInclude
	}
	defaultHeaderMatches(h.Matches)
}

// defaultHeaderMatches fills in each header match's type, Exact.
func defaultHeaderMatches(matches []HeaderRouteMatch) {
	for i := range matches {
		for j := range matches[i].Headers {
			if hm := &matches[i].Headers[j]; hm.Type == "" {
				hm.Type = HeaderMatchExact
			}
		}
	}
}

// defaultBlueGreen fills in a blue-green release's maxFailedChecks, scaleDownDelaySeconds
// (DefaultBlueGreenScaleDownDelaySeconds, not the canary's), its analysis's defaults and its
// preview's match types.
func defaultBlueGreen(b *BlueGreen) {
	if b.MaxFailedChecks == nil {
		n := int32(DefaultMaxFailedChecks)
		b.MaxFailedChecks = &n
	}
	if b.ScaleDownDelaySeconds == nil {
		n := int32(DefaultBlueGreenScaleDownDelaySeconds)
		b.ScaleDownDelaySeconds = &n
	}
	if b.Analysis != nil {
		defaultAnalysis(b.Analysis)
	}
	defaultHeaderMatches(b.Preview.Matches)
}

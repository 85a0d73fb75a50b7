package sync_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
)

// autoscaled returns the test WebApp (replicas 3, a CPU request) scaling between lo and hi.
func autoscaled(lo, hi int32, mods ...func(*sync.Parent)) sync.Parent {
	return webapp(append([]func(*sync.Parent){func(p *sync.Parent) {
		p.Spec.Autoscaling = &webappv1.Autoscaling{MinReplicas: ptr(lo), MaxReplicas: hi}
		p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
	}}, mods...)...)
}

// scaled is d as the apiserver shows it once an autoscaler has set its replicas through the scale
// subresource: spec.replicas changes, its last-applied configuration does not.
func scaled(t *testing.T, d sync.Child, replicas int32, status appsv1.DeploymentStatus) sync.Child {
	t.Helper()
	var obj map[string]any
	roundTrip(t, d.Raw, &obj)
	obj["spec"].(map[string]any)["replicas"] = replicas
	var s any
	roundTrip(t, status, &s)
	obj["status"] = s
	return hooktest.Observe(t, obj)
}

// hpaStatus is a HorizontalPodAutoscaler's status with the given conditions, "Type=Status/Reason".
func hpaStatus(desired int32, conditions ...string) autoscalingv2.HorizontalPodAutoscalerStatus {
	st := autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: desired, DesiredReplicas: desired}
	for _, c := range conditions {
		typ, rest, _ := strings.Cut(c, "=")
		status, reason, _ := strings.Cut(rest, "/")
		st.Conditions = append(st.Conditions, autoscalingv2.HorizontalPodAutoscalerCondition{
			Type: autoscalingv2.HorizontalPodAutoscalerConditionType(typ), Status: corev1.ConditionStatus(status), Reason: reason,
			Message: "the HPA was unable to compute the replica count: unable to get metrics for resource cpu: no metrics returned from resource metrics API",
		})
	}
	return st
}

func TestSyncAutoscaling(t *testing.T) {
	p := autoscaled(2, 10)
	first := sync.Sync(&sync.Request{Parent: p}, now)
	dep, hpa := childOf[*appsv1.Deployment](first.Children), childOf[*autoscalingv2.HorizontalPodAutoscaler](first.Children)
	labels := map[string]string{webappv1.LabelName: webappv1.AppName, webappv1.LabelInstance: "hello", webappv1.LabelManagedBy: webappv1.ManagedBy}
	t.Run("the HorizontalPodAutoscaler", func(t *testing.T) {
		equal(t, "HorizontalPodAutoscaler", hpa, &autoscalingv2.HorizontalPodAutoscaler{
			TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default", Labels: labels},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "hello"},
				MinReplicas:    ptr(int32(2)),
				MaxReplicas:    10,
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr(int32(webappv1.DefaultTargetCPUUtilizationPercentage))},
				}}},
			},
		})
	})
	applied := observe(t, dep, 1, depStatus(1, 2, 2, 2, 2))
	able := "AbleToScale=True/ReadyForNewScale"
	tests := []struct {
		name          string
		parent        sync.Parent
		children      []sync.Child
		wantReplicas  int32
		wantPhase     webappv1.Phase
		wantCondition string // the Autoscaling condition, "Status/Reason"
		wantDesired   int32  // status.desiredReplicas: the autoscaler's count, or the one set before it reports
		wantMessage   string // a substring of status.message
	}{
		{"created: minReplicas, never spec.replicas", p, nil, 2, webappv1.PhasePending, "False/AutoscalerMissing", 2, "spec.replicas is ignored"},
		{"applied, autoscaler not reporting yet", p, []sync.Child{applied, observe(t, hpa, 1, nil)}, 2, webappv1.PhaseReady, "False/AutoscalerPending", 2, "has not reported yet"},
		{"the autoscaler scaled up: the answer follows", p, []sync.Child{scaled(t, applied, 7, depStatus(1, 7, 7, 7, 7)), observe(t, hpa, 1, hpaStatus(7, able, "ScalingActive=True/ValidMetricFound"))}, 7, webappv1.PhaseReady, "True/ScalingActive", 7, "All 7 replicas available"},
		{"above maxReplicas: clamped", p, []sync.Child{scaled(t, applied, 15, depStatus(1, 15, 15, 15, 15))}, 10, webappv1.PhaseProgressing, "False/AutoscalerMissing", 10, "to be updated to the current spec"},
		{"below minReplicas: clamped", p, []sync.Child{scaled(t, applied, 1, depStatus(1, 1, 1, 1, 1))}, 2, webappv1.PhaseProgressing, "False/AutoscalerMissing", 2, "to be updated to the current spec"},
		{"the autoscaler cannot get metrics", p, []sync.Child{applied, observe(t, hpa, 1, hpaStatus(2, able, "ScalingActive=False/FailedGetResourceMetric"))}, 2, webappv1.PhaseReady, "False/FailedGetResourceMetric", 2, "HorizontalPodAutoscaler hello cannot scale: the HPA was unable to compute the replica count"},
		{"no CPU request for the CPU target", autoscaled(2, 10, func(p *sync.Parent) { p.Spec.Resources = nil }), nil, 2, webappv1.PhasePending, "False/AutoscalerMissing", 2, "spec.resources.requests has no cpu for targetCPUUtilizationPercentage, so unless a LimitRange sets one, the autoscaler cannot measure it."},
		{"a memory target alone", autoscaled(1, 5, func(p *sync.Parent) {
			p.Spec.Autoscaling.TargetMemoryUtilizationPercentage = ptr(int32(70))
		}), nil, 1, webappv1.PhasePending, "False/AutoscalerMissing", 1, "spec.resources.requests has no memory for targetMemoryUtilizationPercentage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &sync.Request{Parent: tt.parent, Children: tt.children}
			resp := checkedSync(t, req)
			d := childOf[*appsv1.Deployment](resp.Children)
			if got := *d.Spec.Replicas; got != tt.wantReplicas {
				t.Errorf("Deployment replicas = %d; want %d", got, tt.wantReplicas)
			}
			if childOf[*autoscalingv2.HorizontalPodAutoscaler](resp.Children) == nil {
				t.Error("no HorizontalPodAutoscaler in the answer")
			}
			st := resp.Status
			if st.Phase != tt.wantPhase {
				t.Errorf("phase = %q; want %q (%s)", st.Phase, tt.wantPhase, st.Message)
			}
			if got := conditionOf(st, webappv1.ConditionAutoscaling); got != tt.wantCondition {
				t.Errorf("Autoscaling condition = %q; want %q", got, tt.wantCondition)
			}
			if st.DesiredReplicas == nil || *st.DesiredReplicas != tt.wantDesired || st.ReadyOfDesired != fmt.Sprintf("%d/%d", st.ReadyReplicas, tt.wantDesired) {
				t.Errorf("desiredReplicas = %v, readyOfDesired %q; want %d, of %d ready", st.DesiredReplicas, st.ReadyOfDesired, tt.wantDesired, st.ReadyReplicas)
			}
			if !strings.Contains(st.Message, tt.wantMessage) {
				t.Errorf("message = %q; want it to contain %q", st.Message, tt.wantMessage)
			}
		})
	}

	t.Run("two targets", func(t *testing.T) {
		p := autoscaled(1, 4, func(p *sync.Parent) {
			p.Spec.Autoscaling.TargetCPUUtilizationPercentage = ptr(int32(60))
			p.Spec.Autoscaling.TargetMemoryUtilizationPercentage = ptr(int32(70))
		})
		h := childOf[*autoscalingv2.HorizontalPodAutoscaler](sync.Sync(&sync.Request{Parent: p}, now).Children)
		var got []string
		for _, m := range h.Spec.Metrics {
			got = append(got, fmt.Sprintf("%s=%d", m.Resource.Name, *m.Resource.Target.AverageUtilization))
		}
		if want := []string{"cpu=60", "memory=70"}; !slices.Equal(got, want) {
			t.Errorf("metrics = %v; want %v", got, want)
		}
	})

	t.Run("a scale by the autoscaler is not a new spec", func(t *testing.T) {
		moved := sync.Sync(&sync.Request{Parent: p, Children: []sync.Child{scaled(t, applied, 7, depStatus(1, 7, 7, 7, 7))}}, now)
		if got, want := childOf[*appsv1.Deployment](moved.Children).Annotations[sync.AnnotationSpecHash], dep.Annotations[sync.AnnotationSpecHash]; got != want {
			t.Errorf("spec hash %s after the autoscaler scaled; want %s, unchanged", got, want)
		}
	})

	t.Run("PodDisruptionBudget follows minReplicas", func(t *testing.T) {
		for _, tt := range []struct {
			min  int32
			want bool
		}{{1, false}, {2, true}} {
			p := autoscaled(tt.min, 10, func(p *sync.Parent) { p.Spec.DisruptionBudget = &webappv1.DisruptionBudget{} })
			resp := sync.Sync(&sync.Request{Parent: p, Children: []sync.Child{scaled(t, applied, 6, depStatus(1, 6, 6, 6, 6))}}, now)
			if got := childOf[*policyv1.PodDisruptionBudget](resp.Children) != nil; got != tt.want {
				t.Errorf("minReplicas %d, 6 running: PodDisruptionBudget %v; want %v", tt.min, got, tt.want)
			}
		}
	})
}

// cluster plays the part of the apiserver and Metacontroller for one WebApp's Deployment: it
// applies each answer, and lets an autoscaler change replicas in between.
type cluster struct {
	t          *testing.T
	deployment *sync.Child
	generation int64
	// answered records spec.replicas of every Deployment the hook answered, in order.
	answered []int32
}

// sync answers p as the cluster stands, applies the answer's Deployment, and returns the answer.
func (c *cluster) sync(p sync.Parent) sync.Response {
	c.t.Helper()
	var children []sync.Child
	if c.deployment != nil {
		children = append(children, *c.deployment)
	}
	req := &sync.Request{Parent: p, Children: children}
	resp := sync.Sync(req, now)
	if err := hooktest.CheckResponse(req, resp); err != nil {
		c.t.Fatal(err)
	}
	d := childOf[*appsv1.Deployment](resp.Children)
	c.answered = append(c.answered, *d.Spec.Replicas)
	c.generation++
	n := *d.Spec.Replicas
	applied := observe(c.t, d, c.generation, depStatus(c.generation, n, n, n, n))
	c.deployment = &applied
	return resp
}

// autoscale changes the Deployment's replicas as an autoscaler does, through the scale subresource.
func (c *cluster) autoscale(n int32) {
	c.t.Helper()
	c.generation++
	moved := scaled(c.t, *c.deployment, n, depStatus(c.generation, n, n, n, n))
	c.deployment = &moved
}

// TestAutoscalingHandoff drives autoscaling on and off through sequences of answers, as
// Metacontroller would apply them, with an autoscaler scaling in between: every answer must carry
// a count somebody asked for, never 1 or the default on the way.
func TestAutoscalingHandoff(t *testing.T) {
	manual := webapp()        // replicas 3
	auto := autoscaled(2, 10) // the same, autoscaling between 2 and 10
	manual5 := webapp(func(p *sync.Parent) { p.Spec.Replicas = ptr(int32(5)) })
	tests := []struct {
		name  string
		steps func(c *cluster)
		want  []int32
	}{
		{"off, then on: starts from the current count", func(c *cluster) {
			c.sync(manual)
			c.sync(auto)
			c.sync(auto)
		}, []int32{3, 3, 3}},
		{"on: the autoscaler's changes are kept", func(c *cluster) {
			c.sync(auto)
			c.autoscale(6)
			c.sync(auto)
			c.autoscale(9)
			c.sync(auto)
			c.sync(auto)
			c.autoscale(4)
			c.sync(auto)
		}, []int32{2, 6, 9, 9, 4}},
		{"on, then off: back to spec.replicas at once", func(c *cluster) {
			c.sync(auto)
			c.autoscale(8)
			c.sync(auto)
			c.sync(manual5)
			c.sync(manual5)
		}, []int32{2, 8, 5, 5}},
		{"on with a count below minReplicas: raised to it", func(c *cluster) {
			c.sync(webapp(func(p *sync.Parent) { p.Spec.Replicas = ptr(int32(1)) }))
			c.sync(auto)
		}, []int32{1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &cluster{t: t}
			tt.steps(c)
			if !slices.Equal(c.answered, tt.want) {
				t.Errorf("Deployment replicas answered = %v; want %v", c.answered, tt.want)
			}
		})
	}
	t.Run("off removes the HorizontalPodAutoscaler in the same answer", func(t *testing.T) {
		hpa := childOf[*autoscalingv2.HorizontalPodAutoscaler](sync.Sync(&sync.Request{Parent: auto}, now).Children)
		dep, _ := desired(t, auto)
		req := &sync.Request{Parent: manual5, Children: []sync.Child{observe(t, dep, 1, depStatus(1, 2, 2, 2, 2)), observe(t, hpa, 1, nil)}}
		resp := checkedSync(t, req)
		if got := names(t, resp.Children); slices.Contains(got, "HorizontalPodAutoscaler/hello") {
			t.Errorf("children = %v; want the HorizontalPodAutoscaler gone", got)
		}
		if got := *childOf[*appsv1.Deployment](resp.Children).Spec.Replicas; got != 5 {
			t.Errorf("replicas = %d; want spec.replicas, 5", got)
		}
	})
}

// TestSyncInvalidAutoscaling checks the autoscaling rules: each is Invalid and keeps every child,
// the HorizontalPodAutoscaler included.
func TestSyncInvalidAutoscaling(t *testing.T) {
	p := autoscaled(2, 10)
	var observed []sync.Child
	for _, c := range sync.Sync(&sync.Request{Parent: p}, now).Children {
		observed = append(observed, observe(t, c, 1, nil))
	}
	tests := []struct {
		name        string
		mod         func(*webappv1.Autoscaling)
		wantMessage string
	}{
		{"min above max", func(a *webappv1.Autoscaling) { a.MinReplicas = ptr(int32(11)) }, "spec.autoscaling.maxReplicas: Invalid value: 10: must be greater than or equal to minReplicas (11)"},
		{"no max", func(a *webappv1.Autoscaling) { a.MaxReplicas = 0 }, "spec.autoscaling.maxReplicas: Invalid value: 0: must be between 1 and 1000, inclusive"},
		{"max above 1000", func(a *webappv1.Autoscaling) { a.MaxReplicas = 1001 }, "spec.autoscaling.maxReplicas: Invalid value: 1001: must be between 1 and 1000, inclusive"},
		{"min 0", func(a *webappv1.Autoscaling) { a.MinReplicas = ptr(int32(0)) }, "spec.autoscaling.minReplicas: Invalid value: 0: must be between 1 and 1000, inclusive"},
		{"a target of 0", func(a *webappv1.Autoscaling) { a.TargetCPUUtilizationPercentage = ptr(int32(0)) }, "spec.autoscaling.targetCPUUtilizationPercentage: Invalid value: 0: must be between 1 and 1000, inclusive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := autoscaled(2, 10, func(p *sync.Parent) { tt.mod(p.Spec.Autoscaling) })
			req := &sync.Request{Parent: bad, Children: observed}
			resp := checkedSync(t, req)
			if resp.Status.Phase != webappv1.PhaseInvalid || !strings.Contains(resp.Status.Message, tt.wantMessage) {
				t.Errorf("phase %q, message %q; want Invalid with %q", resp.Status.Phase, resp.Status.Message, tt.wantMessage)
			}
			if got := names(t, resp.Children); !slices.Contains(got, "HorizontalPodAutoscaler/hello") || len(got) != len(observed) {
				t.Errorf("children = %v; want every observed child, the HorizontalPodAutoscaler included", got)
			}
		})
	}
}

// TestFinalizeWithAutoscaler checks that the HorizontalPodAutoscaler goes first, with the
// Service, so that it cannot scale the Deployment back up while finalize scales it to 0.
func TestFinalizeWithAutoscaler(t *testing.T) {
	p := autoscaled(2, 10)
	var children []sync.Child
	for _, c := range sync.Sync(&sync.Request{Parent: p}, now).Children {
		var status any
		if _, ok := c.(*appsv1.Deployment); ok {
			status = depStatus(1, 2, 2, 2, 2)
		}
		children = append(children, observe(t, c, 1, status))
	}
	req := &sync.Request{Parent: p, Children: children, Finalizing: true}
	resp := checkedFinalize(t, req)
	if got := names(t, resp.Children); !slices.Equal(got, []string{"Deployment/hello"}) {
		t.Errorf("children = %v; want only the Deployment, kept while the HorizontalPodAutoscaler and the Service go", got)
	}
}

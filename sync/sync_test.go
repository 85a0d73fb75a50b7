package sync_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/sync/wire"
)

// TestSyncStatus covers every phase rule: what the observed children say, never what is desired.
func TestSyncStatus(t *testing.T) {
	p := webapp()
	dep, svc := desired(t, p)

	// stale is the Deployment as applied for an older spec (image nginx:1.26).
	stale, _ := desired(t, webapp(func(p *sync.Parent) { p.Spec.Image = "nginx:1.26" }))
	zero, _ := desired(t, webapp(func(p *sync.Parent) { p.Spec.Replicas = ptr(int32(0)) }))

	tests := []struct {
		name        string
		parent      sync.Parent
		children    []sync.Child
		wantPhase   webappv1.Phase
		wantReason  string
		wantMessage string // a substring
		wantCounts  [4]int32
	}{
		{
			name:        "nothing observed yet",
			parent:      p,
			wantPhase:   webappv1.PhasePending,
			wantReason:  webappv1.ReasonDeploymentMissing,
			wantMessage: "Waiting for Deployment hello to be created.",
		},
		{
			name:        "only the Service observed",
			parent:      p,
			children:    []sync.Child{observe(t, svc, 1, nil)},
			wantPhase:   webappv1.PhasePending,
			wantReason:  webappv1.ReasonDeploymentMissing,
			wantMessage: "to be created",
		},
		{
			name:        "just created, no status yet",
			parent:      p,
			children:    []sync.Child{observe(t, dep, 1, nil), observe(t, svc, 1, nil)},
			wantPhase:   webappv1.PhaseProgressing,
			wantReason:  webappv1.ReasonRolloutInProgress,
			wantMessage: "observe generation 1",
		},
		{
			name:        "rollout complete",
			parent:      p,
			children:    []sync.Child{observe(t, dep, 1, depStatus(1, 3, 3, 3, 3)), observe(t, svc, 1, nil)},
			wantPhase:   webappv1.PhaseReady,
			wantReason:  webappv1.ReasonRolloutComplete,
			wantMessage: "All 3 replicas available and up to date.",
			wantCounts:  [4]int32{3, 3, 3, 3},
		},
		{
			name:        "more available than desired is still complete",
			parent:      p,
			children:    []sync.Child{observe(t, dep, 1, depStatus(1, 3, 3, 3, 4))},
			wantPhase:   webappv1.PhaseReady,
			wantReason:  webappv1.ReasonRolloutComplete,
			wantMessage: "available and up to date",
			wantCounts:  [4]int32{3, 3, 3, 4},
		},
		{
			name:        "image changed, old pods all available",
			parent:      p,
			children:    []sync.Child{observe(t, stale, 1, depStatus(1, 3, 3, 3, 3))},
			wantPhase:   webappv1.PhaseProgressing,
			wantReason:  webappv1.ReasonRolloutInProgress,
			wantMessage: "to be updated to the current spec",
			wantCounts:  [4]int32{3, 3, 3, 3},
		},
		{
			name:        "scale requested, Deployment still has the old count",
			parent:      webapp(func(p *sync.Parent) { p.Spec.Replicas = ptr(int32(5)) }),
			children:    []sync.Child{observe(t, dep, 1, depStatus(1, 3, 3, 3, 3))},
			wantPhase:   webappv1.PhaseProgressing,
			wantReason:  webappv1.ReasonRolloutInProgress,
			wantMessage: "to be updated to the current spec",
			wantCounts:  [4]int32{3, 3, 3, 3},
		},
		{
			name:        "applied, controller has not observed the new generation",
			parent:      p,
			children:    []sync.Child{observe(t, dep, 2, depStatus(1, 3, 3, 3, 3))},
			wantPhase:   webappv1.PhaseProgressing,
			wantReason:  webappv1.ReasonRolloutInProgress,
			wantMessage: "observe generation 2",
			wantCounts:  [4]int32{3, 3, 3, 3},
		},
		{
			name:        "new ReplicaSet still scaling up",
			parent:      p,
			children:    []sync.Child{observe(t, dep, 2, depStatus(2, 4, 1, 3, 3))},
			wantPhase:   webappv1.PhaseProgressing,
			wantReason:  webappv1.ReasonRolloutInProgress,
			wantMessage: "1 of 3 new replicas updated",
			wantCounts:  [4]int32{4, 1, 3, 3},
		},
		{
			name:        "old pods pending termination",
			parent:      p,
			children:    []sync.Child{observe(t, dep, 2, depStatus(2, 4, 3, 4, 4))},
			wantPhase:   webappv1.PhaseProgressing,
			wantReason:  webappv1.ReasonRolloutInProgress,
			wantMessage: "1 old replica pending termination",
			wantCounts:  [4]int32{4, 3, 4, 4},
		},
		{
			name:        "updated but not yet available",
			parent:      p,
			children:    []sync.Child{observe(t, dep, 2, depStatus(2, 3, 3, 2, 2))},
			wantPhase:   webappv1.PhaseProgressing,
			wantReason:  webappv1.ReasonRolloutInProgress,
			wantMessage: "2 of 3 updated replicas available",
			wantCounts:  [4]int32{3, 3, 2, 2},
		},
		{
			name:        "progress deadline exceeded",
			parent:      p,
			children:    []sync.Child{observe(t, dep, 2, depStatus(2, 4, 1, 3, 3, deadlineExceeded))},
			wantPhase:   webappv1.PhaseDegraded,
			wantReason:  webappv1.ReasonProgressDeadlineExceeded,
			wantMessage: `exceeded its progress deadline: ReplicaSet "hello-5d8c7" has timed out progressing.`,
			wantCounts:  [4]int32{4, 1, 3, 3},
		},
		{
			name:        "deadline of an older spec does not count",
			parent:      p,
			children:    []sync.Child{observe(t, stale, 2, depStatus(2, 4, 1, 3, 3, deadlineExceeded))},
			wantPhase:   webappv1.PhaseProgressing,
			wantReason:  webappv1.ReasonRolloutInProgress,
			wantMessage: "to be updated to the current spec",
			wantCounts:  [4]int32{4, 1, 3, 3},
		},
		{
			name:        "scaled to zero",
			parent:      webapp(func(p *sync.Parent) { p.Spec.Replicas = ptr(int32(0)) }),
			children:    []sync.Child{observe(t, zero, 3, depStatus(3, 0, 0, 0, 0))},
			wantPhase:   webappv1.PhaseReady,
			wantReason:  webappv1.ReasonRolloutComplete,
			wantMessage: "Scaled to zero.",
		},
		{
			name:        "scaling to zero, pods still terminating",
			parent:      webapp(func(p *sync.Parent) { p.Spec.Replicas = ptr(int32(0)) }),
			children:    []sync.Child{observe(t, zero, 3, depStatus(3, 2, 0, 2, 2))},
			wantPhase:   webappv1.PhaseProgressing,
			wantReason:  webappv1.ReasonRolloutInProgress,
			wantMessage: "2 old replicas pending termination",
			wantCounts:  [4]int32{2, 0, 2, 2},
		},
		{
			name:        "invalid spec keeps the observed counts",
			parent:      webapp(func(p *sync.Parent) { p.Spec.Image = "" }),
			children:    []sync.Child{observe(t, dep, 1, depStatus(1, 3, 3, 3, 3))},
			wantPhase:   webappv1.PhaseInvalid,
			wantReason:  webappv1.ReasonInvalidSpec,
			wantMessage: "spec.image: Required value",
			wantCounts:  [4]int32{3, 3, 3, 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := sync.Sync(&sync.Request{Parent: tt.parent, Children: tt.children}, now)
			golden(t, resp)
			got := resp.Status
			if got.Phase != tt.wantPhase {
				t.Errorf("phase = %q; want %q (message %q)", got.Phase, tt.wantPhase, got.Message)
			}
			if wantReady := tt.wantPhase == webappv1.PhaseReady; got.Ready != wantReady {
				t.Errorf("ready = %v; want %v", got.Ready, wantReady)
			}
			if !strings.Contains(got.Message, tt.wantMessage) {
				t.Errorf("message = %q; want it to contain %q", got.Message, tt.wantMessage)
			}
			if gotCounts := [4]int32{got.Replicas, got.UpdatedReplicas, got.ReadyReplicas, got.AvailableReplicas}; gotCounts != tt.wantCounts {
				t.Errorf("replicas, updated, ready, available = %v; want %v", gotCounts, tt.wantCounts)
			}
			if got.ObservedGeneration != tt.parent.Generation {
				t.Errorf("observedGeneration = %d; want %d", got.ObservedGeneration, tt.parent.Generation)
			}
			if len(got.Conditions) != 1 {
				t.Fatalf("conditions = %v; want exactly one", got.Conditions)
			}
			c := got.Conditions[0]
			wantStatus := metav1.ConditionFalse
			if got.Ready {
				wantStatus = metav1.ConditionTrue
			}
			if c.Type != webappv1.ConditionReady || c.Status != wantStatus || c.Reason != tt.wantReason || c.Message != got.Message || c.ObservedGeneration != tt.parent.Generation {
				t.Errorf("condition = %+v; want Ready=%s reason %s with the status message and generation %d", c, wantStatus, tt.wantReason, tt.parent.Generation)
			}
			if !strings.HasSuffix(got.Message, ".") || strings.Count(got.Message, ". ") > 0 {
				t.Errorf("message = %q; want one sentence ending in a full stop", got.Message)
			}
		})
	}
}

// TestSyncChildren checks which children are desired and what they contain.
func TestSyncChildren(t *testing.T) {
	noPort := webapp(func(p *sync.Parent) { p.Spec.Port = nil })
	full := webapp(func(p *sync.Parent) {
		p.Spec.Env = []corev1.EnvVar{
			{Name: "GREETING", Value: "hello"},
			{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
		}
		p.Spec.Resources = &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		}
	})
	_, svc := desired(t, webapp())
	other, _ := desired(t, webapp(func(p *sync.Parent) { p.Name = "other" }))
	configMap := hooktest.Observe(t, map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "extra", "namespace": "default", "uid": "u1"},
		"data":     map[string]any{"k": "v"},
	})

	tests := []struct {
		name      string
		parent    sync.Parent
		children  []sync.Child
		wantNames []string
		wantURL   string
	}{
		{name: "port set: Deployment and Service", parent: webapp(), wantNames: []string{"Deployment/hello", "Service/hello"}},
		{name: "url once the Service exists", parent: webapp(), children: []sync.Child{observe(t, svc, 1, nil)}, wantNames: []string{"Deployment/hello", "Service/hello"}, wantURL: "http://hello.default.svc"},
		{name: "no port: Deployment only", parent: noPort, wantNames: []string{"Deployment/hello"}},
		{name: "port removed: the observed Service is deleted", parent: noPort, children: []sync.Child{observe(t, svc, 1, nil)}, wantNames: []string{"Deployment/hello"}, wantURL: "http://hello.default.svc"},
		{name: "unknown kinds are kept", parent: webapp(), children: []sync.Child{configMap}, wantNames: []string{"ConfigMap/extra", "Deployment/hello", "Service/hello"}},
		{name: "a Deployment with another name is kept", parent: webapp(), children: []sync.Child{observe(t, other, 1, nil)}, wantNames: []string{"Deployment/hello", "Deployment/other", "Service/hello"}},
		{name: "every optional field", parent: full, wantNames: []string{"Deployment/hello", "Service/hello"}},
		{name: "a dotted name is fine without a Service", parent: webapp(func(p *sync.Parent) { p.Name = "my.app"; p.Spec.Port = nil }), wantNames: []string{"Deployment/my.app"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &sync.Request{Parent: tt.parent, Children: tt.children}
			resp := checkedSync(t, req)
			if got := names(t, resp.Children); !slices.Equal(got, tt.wantNames) {
				t.Errorf("children = %v; want %v", got, tt.wantNames)
			}
			if resp.Status.URL != tt.wantURL {
				t.Errorf("url = %q; want %q", resp.Status.URL, tt.wantURL)
			}
			if resp.Finalized != nil {
				t.Errorf("finalized = %v; want it absent from a sync answer", *resp.Finalized)
			}
			for _, c := range sentChildren(t, resp) {
				assertApplyForm(t, c)
			}
		})
	}

	labels := map[string]string{webappv1.LabelName: webappv1.AppName, webappv1.LabelInstance: "hello", webappv1.LabelManagedBy: webappv1.ManagedBy}
	t.Run("deployment contents", func(t *testing.T) {
		got, _ := desired(t, full)
		want := &appsv1.Deployment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default", Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Replicas: ptr(int32(3)),
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name:      sync.ContainerName,
						Image:     "nginx:1.27",
						Ports:     []corev1.ContainerPort{{Name: sync.PortName, ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
						Env:       full.Spec.Env,
						Resources: *full.Spec.Resources,
					}}},
				},
			},
		}
		want.Annotations = map[string]string{sync.AnnotationSpecHash: sync.SpecHash(&want.Spec)}
		equal(t, "Deployment", got, want)
	})

	t.Run("service contents", func(t *testing.T) {
		_, got := desired(t, webapp())
		want := &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default", Labels: labels},
			Spec: corev1.ServiceSpec{
				Type:     corev1.ServiceTypeClusterIP,
				Selector: labels,
				Ports:    []corev1.ServicePort{{Name: sync.PortName, Port: sync.ServicePort, TargetPort: intstr.FromString(sync.PortName), Protocol: corev1.ProtocolTCP}},
			},
		}
		equal(t, "Service", got, want)
	})

	t.Run("default replicas", func(t *testing.T) {
		p := webapp(func(p *sync.Parent) { p.Spec.Replicas = nil })
		dep, _ := desired(t, p)
		if got := dep.Spec.Replicas; got != nil && *got != 1 {
			// nil Replicas means the apiserver default of 1; the hook must still ask for exactly 1.
			t.Errorf("spec.replicas = %v; want 1 or absent", *got)
		}
		st := sync.Sync(&sync.Request{Parent: p, Children: []sync.Child{observe(t, dep, 1, depStatus(1, 1, 1, 1, 1))}}, now).Status
		if st.Phase != webappv1.PhaseReady {
			t.Errorf("phase = %q; want Ready with one replica when replicas is omitted (%s)", st.Phase, st.Message)
		}
	})

	t.Run("adopted Deployment keeps its immutable selector", func(t *testing.T) {
		old, _ := desired(t, webapp())
		oldSelector := &metav1.LabelSelector{MatchLabels: map[string]string{webappv1.LabelName: webappv1.AppName, webappv1.LabelInstance: "hello"}}
		old.Spec.Selector = oldSelector
		resp := sync.Sync(&sync.Request{Parent: webapp(), Children: []sync.Child{observe(t, old, 1, nil)}}, now)
		dep, svc := resp.Children[0].(*appsv1.Deployment), resp.Children[1].(*corev1.Service)
		equal(t, "selector", dep.Spec.Selector, oldSelector)
		podLabels := dep.Spec.Template.Labels
		for k, v := range oldSelector.MatchLabels {
			if podLabels[k] != v {
				t.Errorf("template label %s = %v; want %v so the selector matches", k, podLabels[k], v)
			}
		}
		equal(t, "Service selector", svc.Spec.Selector, podLabels)
	})
}

// TestStatusSelector checks status.selector, which the scale subresource reports: the observed
// Deployment's selector in string form, sorted by key, with matchExpressions too, and "" for a
// selector that does not parse.
func TestStatusSelector(t *testing.T) {
	tests := []struct {
		name     string
		selector *metav1.LabelSelector
		want     string
	}{
		{"matchLabels", &metav1.LabelSelector{MatchLabels: map[string]string{"z": "1", "a": "2"}}, "a=2,z=1"},
		{"matchExpressions", &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}, MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"b", "a"}}}}, "app=web,tier in (a,b)"},
		{"an operator that does not parse", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Near"}}}, ""},
		{"empty", &metav1.LabelSelector{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dep, _ := desired(t, webapp())
			dep.Spec.Selector = tt.selector
			st := sync.Sync(&sync.Request{Parent: webapp(), Children: []sync.Child{observe(t, dep, 1, nil)}}, now).Status
			if st.Selector != tt.want {
				t.Errorf("selector = %q; want %q", st.Selector, tt.want)
			}
		})
	}
}

// TestSyncInvalidSpec checks that an invalid spec reports Invalid and keeps every child unchanged.
func TestSyncInvalidSpec(t *testing.T) {
	dep, svc := desired(t, webapp())
	observed := []sync.Child{observe(t, dep, 4, depStatus(4, 3, 3, 3, 3)), observe(t, svc, 1, nil)}

	tests := []struct {
		name        string
		mod         func(*sync.Parent)
		wantMessage string
	}{
		{"empty image", func(p *sync.Parent) { p.Spec.Image = "" }, "spec.image: Required value"},
		{"image with spaces", func(p *sync.Parent) { p.Spec.Image = "nginx 1.27" }, `spec.image: Invalid value: "nginx 1.27": must be an image reference`},
		{"upper-case image", func(p *sync.Parent) { p.Spec.Image = "NGINX" }, `spec.image: Invalid value: "NGINX": must be an image reference`},
		{"negative replicas", func(p *sync.Parent) { p.Spec.Replicas = ptr(int32(-1)) }, "spec.replicas: Invalid value: -1: must be between 0 and 1000, inclusive"},
		{"too many replicas", func(p *sync.Parent) { p.Spec.Replicas = ptr(int32(1001)) }, "spec.replicas: Invalid value: 1001: must be between 0 and 1000, inclusive"},
		{"port 0", func(p *sync.Parent) { p.Spec.Port = ptr(int32(0)) }, "spec.port: Invalid value: 0: must be between 1 and 65535, inclusive"},
		{"port 70000", func(p *sync.Parent) { p.Spec.Port = ptr(int32(70000)) }, "spec.port: Invalid value: 70000: must be between 1 and 65535, inclusive"},
		{"env name with =", func(p *sync.Parent) { p.Spec.Env = []corev1.EnvVar{{Name: "A=B", Value: "x"}} }, `spec.env[0].name: Invalid value: "A=B": a valid environment variable name`},
		{"empty env name", func(p *sync.Parent) { p.Spec.Env = []corev1.EnvVar{{Name: "OK"}, {Name: ""}} }, `spec.env[1].name: Invalid value: "": environment variable name must be non-empty`},
		{"duplicate env name", func(p *sync.Parent) { p.Spec.Env = []corev1.EnvVar{{Name: "A"}, {Name: "A"}} }, `spec.env[1].name: Duplicate value: "A"`},
		{"value and valueFrom", func(p *sync.Parent) {
			p.Spec.Env = []corev1.EnvVar{{Name: "A", Value: "x", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
		}, "spec.env[0].valueFrom: Forbidden: may not be set when value is set"},
		{"request above limit", func(p *sync.Parent) {
			p.Spec.Resources = &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
			}
		}, `spec.resources.requests[cpu]: Invalid value: "2": must be less than or equal to cpu limit of 1`},
		{"several problems", func(p *sync.Parent) { p.Spec.Image = ""; p.Spec.Port = ptr(int32(0)) }, "spec.image: Required value; spec.port: Invalid value: 0: must be between 1 and 65535, inclusive"},
		{"a canary without steps", func(p *sync.Parent) { p.Spec.Rollout = &webappv1.Rollout{Canary: &webappv1.Canary{}} }, "spec.rollout.canary.steps: Required value: a canary needs at least one step"},
		{"a canary step of weight 0", func(p *sync.Parent) {
			p.Spec.Rollout = &webappv1.Rollout{Canary: &webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 0}}}}
		}, "spec.rollout.canary.steps[0].weight: Invalid value: 0: must be between 1 and 100, inclusive"},
		{"canary weights that fall", func(p *sync.Parent) {
			p.Spec.Rollout = &webappv1.Rollout{Canary: &webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 50}, {Weight: 50}}}}
		}, "spec.rollout.canary.steps[1].weight: Invalid value: 50: must be greater than the weight of step 0 (50): weights rise strictly"},
		{"a negative pause", func(p *sync.Parent) {
			p.Spec.Rollout = &webappv1.Rollout{Canary: &webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 5, PauseSeconds: ptr(int32(-1))}}}}
		}, "spec.rollout.canary.steps[0].pauseSeconds: Invalid value: -1: must be between 0 and 604800, inclusive"},
		{"maxFailedChecks 0", func(p *sync.Parent) {
			p.Spec.Rollout = &webappv1.Rollout{Canary: &webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 5}}, MaxFailedChecks: ptr(int32(0))}}
		}, "spec.rollout.canary.maxFailedChecks: Invalid value: 0: must be between 1 and 100, inclusive"},
		{"the canary's label in podLabels", func(p *sync.Parent) {
			p.Spec.Rollout = &webappv1.Rollout{Canary: &webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 5}}}}
			p.Spec.PodLabels = map[string]string{webappv1.LabelTrack: "canary"}
		}, `spec.podLabels[webapp.example.com/track]: Invalid value: "canary": must not be set with rollout.canary: it marks the canary's pods`},
		{"a name too long for the canary's Service", func(p *sync.Parent) {
			p.Name = strings.Repeat("a", 57)
			p.Spec.Rollout = &webappv1.Rollout{Canary: &webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 5}}}}
		}, "cannot name the Service " + strings.Repeat("a", 57) + "-canary that spec.rollout.canary asks for: must be no more than 63 characters"},
		{"negative quantity", func(p *sync.Parent) {
			p.Spec.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("-1")}}
		}, `spec.resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0`},
		{"resource claims", func(p *sync.Parent) {
			p.Spec.Resources = &corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}
		}, "spec.resources.claims: Forbidden: the pod template declares no resource claims"},
		{"two env sources", func(p *sync.Parent) {
			p.Spec.Env = []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{
				FieldRef:        &corev1.ObjectFieldSelector{FieldPath: "metadata.name"},
				ConfigMapKeyRef: &corev1.ConfigMapKeySelector{Key: "k"},
			}}}
		}, "spec.env[0].valueFrom: Invalid value: must set exactly one source, got 2"},
		{"name too long for a label", func(p *sync.Parent) { p.Name = strings.Repeat("a", 64) }, `metadata.name: Invalid value: "aaaa`},
		{"dotted name with a port", func(p *sync.Parent) { p.Name = "my.app" }, `metadata.name: Invalid value: "my.app": cannot name the Service that spec.port asks for`},
		{"every request above its limit, in a stable order", func(p *sync.Parent) {
			p.Spec.Resources = &corev1.ResourceRequirements{
				Requests: corev1.ResourceList{"cpu": resource.MustParse("2"), "memory": resource.MustParse("2Gi"), "ephemeral-storage": resource.MustParse("2Gi")},
				Limits:   corev1.ResourceList{"cpu": resource.MustParse("1"), "memory": resource.MustParse("1Gi"), "ephemeral-storage": resource.MustParse("1Gi")},
			}
		}, `spec.resources.requests[cpu]: Invalid value: "2": must be less than or equal to cpu limit of 1; spec.resources.requests[ephemeral-storage]: Invalid value: "2Gi": must be less than or equal to ephemeral-storage limit of 1Gi; spec.resources.requests[memory]: Invalid value: "2Gi"`},
		{"a huge value is quoted short", func(p *sync.Parent) { p.Spec.Image = strings.Repeat("X", 100000) }, `spec.image: Invalid value: "` + strings.Repeat("X", 80) + `…": must be an image reference`},
		{"spec that did not decode", nil, `spec.replicas: Invalid value: expected integer (32-bit), got JSON string "three"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := webappJSON(`{"image": "nginx:1.27", "replicas": "three", "port": 8080}`)
			if tt.mod != nil {
				parent = webapp(tt.mod)
			}
			req := &sync.Request{Parent: parent, Children: observed}
			resp := sync.Sync(req, now)
			golden(t, resp)
			if resp.Status.Phase != webappv1.PhaseInvalid {
				t.Errorf("phase = %q; want Invalid", resp.Status.Phase)
			}
			if c := resp.Status.Conditions[0]; c.Reason != webappv1.ReasonInvalidSpec || c.Status != metav1.ConditionFalse {
				t.Errorf("condition = %s/%s; want False/InvalidSpec", c.Status, c.Reason)
			}
			if !strings.Contains(resp.Status.Message, tt.wantMessage) {
				t.Errorf("message = %q; want it to contain %q", resp.Status.Message, tt.wantMessage)
			}
			if n := len(resp.Status.Message); n > 4096 {
				t.Errorf("message is %d bytes; want it short whatever the input", n)
			}
			for range 10 {
				if again := sync.Sync(req, now).Status.Message; again != resp.Status.Message {
					t.Fatalf("message changed between calls, which would update the status forever:\n%s\n%s", resp.Status.Message, again)
				}
			}
			// Every observed child comes back exactly as Metacontroller last applied it.
			if got, want := asJSON(t, resp.Children), asJSON(t, []any{lastApplied(t, observed[0]), lastApplied(t, observed[1])}); got != want {
				t.Errorf("children =\n%s\nwant the observed children unchanged:\n%s", got, want)
			}
		})
	}

	t.Run("nothing observed", func(t *testing.T) {
		resp := sync.Sync(&sync.Request{Parent: webapp(func(p *sync.Parent) { p.Spec.Image = "" })}, now)
		if got := asJSON(t, resp.Children); len(resp.Children) != 0 || !strings.Contains(asJSON(t, resp), `"children": []`) {
			t.Errorf("children = %s; want an empty list, encoded as []", got)
		}
	})
}

func lastApplied(t *testing.T, c sync.Child) any {
	t.Helper()
	var obj struct {
		Metadata struct {
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(c.Raw, &obj); err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal([]byte(obj.Metadata.Annotations[sync.AnnotationLastApplied]), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSyncConditionTransition checks that lastTransitionTime moves only when the status changes.
func TestSyncConditionTransition(t *testing.T) {
	dep, _ := desired(t, webapp())
	ready := []sync.Child{observe(t, dep, 1, depStatus(1, 3, 3, 3, 3))}
	progressing := []sync.Child{observe(t, dep, 1, depStatus(1, 3, 1, 3, 3))}
	prev := func(status metav1.ConditionStatus) func(*sync.Parent) {
		return func(p *sync.Parent) {
			p.Conditions = []metav1.Condition{{Type: webappv1.ConditionReady, Status: status, LastTransitionTime: earlier, Reason: "X", Message: "x"}}
		}
	}
	tests := []struct {
		name     string
		parent   sync.Parent
		children []sync.Child
		want     metav1.Time
	}{
		{"first status", webapp(), ready, metav1.NewTime(now)},
		{"still ready", webapp(prev(metav1.ConditionTrue)), ready, earlier},
		{"became ready", webapp(prev(metav1.ConditionFalse)), ready, metav1.NewTime(now)},
		{"still not ready, other reason", webapp(prev(metav1.ConditionFalse)), progressing, earlier},
		{"became not ready", webapp(prev(metav1.ConditionTrue)), progressing, metav1.NewTime(now)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := sync.Sync(&sync.Request{Parent: tt.parent, Children: tt.children}, now).Status.Conditions[0].LastTransitionTime
			if !got.Equal(&tt.want) {
				t.Errorf("lastTransitionTime = %v; want %v", got, tt.want)
			}
		})
	}
}

// TestFinalize walks the ordered teardown: Service first, then scale to zero, then the Deployment.
func TestFinalize(t *testing.T) {
	p := webapp()
	dep, svc := desired(t, p)
	running := observe(t, dep, 2, depStatus(2, 3, 3, 3, 3))
	zero := dep.DeepCopy()
	zero.Spec.Replicas = ptr(int32(0))
	draining := observe(t, zero, 3, depStatus(2, 3, 3, 3, 3))
	drained := observe(t, zero, 3, depStatus(3, 0, 0, 0, 0))
	terminating := depStatus(3, 0, 0, 0, 0)
	terminating.TerminatingReplicas = ptr(int32(2))
	stillTerminating := observe(t, zero, 3, terminating)

	tests := []struct {
		name          string
		parent        sync.Parent
		children      []sync.Child
		wantNames     []string
		wantReplicas  any // spec.replicas of the returned Deployment, if any
		wantFinalized bool
		wantMessage   string
	}{
		{"service first", p, []sync.Child{running, observe(t, svc, 1, nil)}, []string{"Deployment/hello"}, int64(3), false, "Deleting 1 Service first so that traffic stops; 1 Deployment remains."},
		{"then scale to zero", p, []sync.Child{running}, []string{"Deployment/hello"}, int64(0), false, "Scaling 1 Deployment to zero; 3 pods left."},
		{"wait while pods remain", p, []sync.Child{draining}, []string{"Deployment/hello"}, int64(0), false, "Scaling 1 Deployment to zero; 3 pods left."},
		{"wait for terminating pods", p, []sync.Child{stillTerminating}, []string{"Deployment/hello"}, int64(0), false, "Scaling 1 Deployment to zero; 2 pods left."},
		{"then delete the Deployment", p, []sync.Child{drained}, nil, nil, false, "Deleting 1 Deployment now that it has no pods."},
		{"done", p, nil, nil, nil, true, "All children are deleted; the WebApp can go."},
		{"invalid spec is torn down alike", webapp(func(p *sync.Parent) { p.Spec.Image = "" }), []sync.Child{running}, []string{"Deployment/hello"}, int64(0), false, "Scaling"},
		{"other kinds go with the Service", p, []sync.Child{running, hooktest.Observe(t, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x"}})}, []string{"Deployment/hello"}, int64(3), false, "Deleting 1 child other than Deployments first"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &sync.Request{Parent: tt.parent, Children: tt.children, Finalizing: true}
			resp := checkedFinalize(t, req)
			if got := names(t, resp.Children); !slices.Equal(got, tt.wantNames) {
				t.Errorf("children = %v; want %v", got, tt.wantNames)
			}
			if len(resp.Children) > 0 {
				if got := hooktest.Field(sentChildren(t, resp)[0], "spec", "replicas"); fmt.Sprint(got) != fmt.Sprint(tt.wantReplicas) {
					t.Errorf("spec.replicas = %#v; want %#v", got, tt.wantReplicas)
				}
			}
			if resp.Finalized == nil || *resp.Finalized != tt.wantFinalized {
				t.Errorf("finalized = %v; want %v", resp.Finalized, tt.wantFinalized)
			}
			if wantResync := !tt.wantFinalized; (resp.ResyncAfterSeconds > 0) != wantResync {
				t.Errorf("resyncAfterSeconds = %v; want it set only while waiting", resp.ResyncAfterSeconds)
			}
			if resp.Status.Phase != webappv1.PhaseTerminating || resp.Status.Ready {
				t.Errorf("phase, ready = %q, %v; want Terminating, false", resp.Status.Phase, resp.Status.Ready)
			}
			if !strings.Contains(resp.Status.Message, tt.wantMessage) {
				t.Errorf("message = %q; want it to contain %q", resp.Status.Message, tt.wantMessage)
			}
		})
	}
}

// TestPure checks that the decision is idempotent and never mutates its input.
func TestPure(t *testing.T) {
	dep, svc := desired(t, webapp())
	for _, parent := range []sync.Parent{webapp(), webapp(func(p *sync.Parent) { p.Spec.Image = "" })} {
		for name, decide := range map[string]func(*sync.Request, time.Time) sync.Response{"sync": sync.Sync, "finalize": sync.Finalize} {
			t.Run(name+"/"+parent.Spec.Image, func(t *testing.T) {
				req := &sync.Request{Parent: parent, Children: []sync.Child{observe(t, dep, 1, depStatus(1, 3, 3, 3, 3)), observe(t, svc, 1, nil)}}
				before := asJSON(t, req)
				first := asJSON(t, decide(req, now))
				second := asJSON(t, decide(req, now))
				if first != second {
					t.Errorf("second answer differs from the first:\n%s\n%s", first, second)
				}
				if after := asJSON(t, req); after != before {
					t.Errorf("request was mutated:\n%s\nwant\n%s", after, before)
				}
			})
		}
	}
}

// assertApplyForm fails when an object carries zero-value noise or server-set fields, which would
// make Metacontroller see a difference on every sync.
func assertApplyForm(t *testing.T, obj map[string]any) {
	t.Helper()
	for _, k := range []string{"apiVersion", "kind"} {
		if s, _ := obj[k].(string); s == "" {
			t.Errorf("%s missing", k)
		}
	}
	if _, ok := obj["status"]; ok {
		t.Errorf("%s has a status", obj["kind"])
	}
	meta, _ := obj["metadata"].(map[string]any)
	for _, k := range []string{"creationTimestamp", "uid", "resourceVersion", "generation", "managedFields", "ownerReferences"} {
		if _, ok := meta[k]; ok {
			t.Errorf("%s has server-set metadata.%s", obj["kind"], k)
		}
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case nil:
			t.Errorf("%s is null", path)
		case map[string]any:
			if len(x) == 0 {
				t.Errorf("%s is {}", path)
			}
			for k, e := range x {
				walk(path+"."+k, e)
			}
		case []any:
			if len(x) == 0 {
				t.Errorf("%s is []", path)
			}
			for i, e := range x {
				walk(path+"["+string(rune('0'+i))+"]", e)
			}
		}
	}
	walk(obj["kind"].(string), obj)
}

// BenchmarkSync measures the decision alone on a decoded request with both children observed.
func BenchmarkSync(b *testing.B) { benchmarkSync(b, "../webhook/testdata/large.request.json") }

// BenchmarkSyncCanary measures the decision on a WebApp mid-canary (TestSyncCanary's sixth call,
// made by TestCanaryWalk: a split route, both Deployments and three Services observed), beside
// BenchmarkSync's.
func BenchmarkSyncCanary(b *testing.B) { benchmarkSync(b, "testdata/canary/step-06.request.json") }

// BenchmarkSyncCanaryAnalysis is BenchmarkSyncCanary's request with an analysis of two metrics
// whose check is due, given a measurement that passes: the cost of judging and recording a
// check, beside BenchmarkSyncCanary's. The measurement's I/O is the edge's, not measured here.
func BenchmarkSyncCanaryAnalysis(b *testing.B) {
	benchmarkSync(b, "testdata/canary/step-06.request.json", func(req *sync.Request) {
		req.Parent.Spec.Rollout.Canary.Analysis = &webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{
			{Name: webappv1.MetricRequestSuccessRate, ThresholdRange: webappv1.ThresholdRange{Min: ptr(99.0)}},
			{Name: webappv1.MetricRequestDuration, ThresholdRange: webappv1.ThresholdRange{Max: ptr(500.0)}},
		}}
		webappv1.Default(&req.Parent.Spec)
		// Its weight in place 30 s ago, so that a check is due now (canary.Due).
		st := *req.Parent.Canary
		st.PauseStartTime = ptr(metav1.NewTime(now.Add(-30 * time.Second)))
		req.Parent.Canary = &st
		span, ok := canary.Due(req.Parent.Spec.Rollout.Canary, req.Parent.Canary, now)
		if !ok {
			b.Fatal("no check is due")
		}
		buckets := []canary.Bucket{{UpperBound: 50, Count: 1100}, {UpperBound: 100, Count: 1199}, {UpperBound: 500, Count: 1200}, {UpperBound: math.Inf(1), Count: 1200}}
		req.Measurement = &canary.Measurement{Span: span, Window: 30 * time.Second, Canary: canary.Values{Requests: ptr(1200.0), Failed: ptr(1.0), Buckets: buckets}}
	})
}

// benchmarkSync measures Sync on the request in file, decoded once, and edited by edit.
func benchmarkSync(b *testing.B, file string, edit ...func(*sync.Request)) {
	body, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	req, err := wire.DecodeRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range edit {
		e(req)
	}
	b.ReportAllocs()
	for b.Loop() {
		sync.Sync(req, now)
	}
}

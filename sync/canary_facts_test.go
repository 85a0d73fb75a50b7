package sync

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// The decisions sync/canary.go reads beside canary.Next's: which template the stable Deployment
// runs, which pods are the canary's, what the route sends it, and whose report the WebApp tells.

func TestStableRevision(t *testing.T) {
	three, five := int32(3), int32(5)
	template := func(image string) corev1.PodTemplateSpec {
		return corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: ContainerName, Image: image}}}}
	}
	desired := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: &three, Template: template("shop:2")}}
	desired.Annotations = map[string]string{AnnotationSpecHash: SpecHash(&desired.Spec)}
	revision := TemplateHash(&desired.Spec.Template)
	scaled := desired.Spec
	scaled.Replicas = &five
	old := template("shop:1")
	applied := func(v any) json.RawMessage {
		last, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{AnnotationLastApplied: string(last)}}})
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	for _, tc := range []struct {
		name     string
		specHash string
		replicas *int32
		raw      json.RawMessage
		want     string
	}{
		{name: "it carries the spec: the spec's template", specHash: desired.Annotations[AnnotationSpecHash], replicas: &three, raw: applied(map[string]any{"spec": map[string]any{"template": old}}), want: revision},
		{name: "another spec: the template last applied", specHash: "other", replicas: &three, raw: applied(map[string]any{"spec": map[string]any{"template": old}}), want: TemplateHash(&old)},
		{name: "adopted, the spec's with its own replicas: the spec's template", specHash: SpecHash(&scaled), replicas: &five, raw: json.RawMessage(`{}`), want: revision},
		{name: "adopted, applied without a template, the spec's with its own replicas", specHash: SpecHash(&scaled), replicas: &five, raw: applied(map[string]any{"spec": map[string]any{}}), want: revision},
		{name: "adopted, another spec: cannot be told", specHash: "other", replicas: &five, raw: json.RawMessage(`{}`), want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Child{Name: "shop", Raw: tc.raw, Deployment: &ObservedDeployment{SpecHash: tc.specHash, Replicas: tc.replicas}}
			if got := stableRevision(c, desired, revision); got != tc.want {
				t.Errorf("stableRevision = %q; want %q", got, tc.want)
			}
		})
	}
}

func TestCanaryPods(t *testing.T) {
	canaryTrack := map[string]string{webappv1.LabelTrack: webappv1.TrackCanary}
	pod := func(name, image, rs string, labels map[string]string, edit func(*RelatedPod)) RelatedPod {
		p := RelatedPod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Images: map[string]string{ContainerName: image}}
		if rs != "" {
			yes := true
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: rs, Controller: &yes}}
		}
		if edit != nil {
			edit(&p)
		}
		return p
	}
	deleting := func(p *RelatedPod) { now := metav1.Now(); p.DeletionTimestamp = &now }
	stuck := func(p *RelatedPod) {
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: ContainerName, RestartCount: 2, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "rpc error: code = NotFound desc = shop:2 not found"}}}}
	}
	rel := &Related{Kinds: map[string]bool{PodKind.Key(): true}, Pods: []RelatedPod{
		pod("shop-canary-new-a", "shop:2", "shop-canary-new", canaryTrack, stuck),
		pod("shop-canary-old-b", "shop:2", "shop-canary-old", canaryTrack, nil),
		pod("shop-canary-new-c", "shop:2", "shop-canary-new", canaryTrack, deleting),
		pod("shop-canary-new-d", "shop:1", "shop-canary-new", canaryTrack, nil),
		pod("shop-new-e", "shop:2", "shop-new", nil, nil),
	}}
	c := &Child{Name: "shop-canary", Deployment: &ObservedDeployment{Generation: 2, Status: ObservedDeploymentStatus{ObservedGeneration: 2,
		Conditions: []ObservedCondition{{Type: "Progressing", Status: "True", Message: `ReplicaSet "shop-canary-new" is progressing.`}}}}}
	names := func(pods []RelatedPod) string {
		var out []string
		for _, p := range pods {
			out = append(out, p.Name)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		name         string
		runsRevision bool
		want         string
	}{
		{"it runs the revision: its ReplicaSet's pods of the image and the canary's track", true, "shop-canary-new-a"},
		{"it does not yet: the pods of the image and the canary's track", false, "shop-canary-new-a,shop-canary-old-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(canaryPods(rel, c, tc.runsRevision, "shop:2")); got != tc.want {
				t.Errorf("canaryPods = %s; want %s", got, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		rel  *Related
		want canary.Pods
	}{
		{"no pod diagnosis", &Related{Pods: rel.Pods}, canary.Pods{}},
		{"pod diagnosis", rel, canary.Pods{Diagnosed: true, Restarts: 2, Trouble: "1 of 1 current pod cannot start: ImagePullBackOff: shop:2 not found."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := diagnoseCanary(tc.rel, c, true, "shop:2"); got != tc.want {
				t.Errorf("diagnoseCanary = %+v; want %+v", got, tc.want)
			}
		})
	}
}

func TestRouteSplit(t *testing.T) {
	p := &Parent{Name: "shop"}
	w := func(n int32) *int32 { return &n }
	for _, tc := range []struct {
		name                 string
		backends             []RouteBackend
		split                bool
		stable, canaryWeight int32
	}{
		{"to the Service <name>", []RouteBackend{{Name: "shop", Weight: w(1)}}, false, 0, 0},
		{"split", []RouteBackend{{Name: "shop-stable", Weight: w(90)}, {Name: "shop-canary", Weight: w(10)}}, true, 90, 10},
		{"split, all to the stable", []RouteBackend{{Name: "shop-stable", Weight: w(100)}, {Name: "shop-canary", Weight: w(0)}}, true, 100, 0},
		{"weights left out: the Gateway API's 1", []RouteBackend{{Name: "shop-stable"}, {Name: "shop-canary"}}, true, 1, 1},
		{"the stable alone: not split", []RouteBackend{{Name: "shop-stable", Weight: w(100)}}, false, 100, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			split, stable, canaryWeight := routeSplit(p, &ObservedRoute{Backends: tc.backends})
			if split != tc.split || stable != tc.stable || canaryWeight != tc.canaryWeight {
				t.Errorf("routeSplit = %t, %d, %d; want %t, %d, %d", split, stable, canaryWeight, tc.split, tc.stable, tc.canaryWeight)
			}
		})
	}
}

func TestHeaderRouted(t *testing.T) {
	exact, regex := gatewayv1.HeaderMatchExact, gatewayv1.HeaderMatchRegularExpression
	p := &Parent{Name: "shop", Spec: webappv1.WebAppSpec{
		Route: &webappv1.Route{Path: "/api", PathType: webappv1.RoutePathPrefix},
		Rollout: &webappv1.Rollout{Canary: &webappv1.Canary{HeaderRoute: &webappv1.CanaryHeaderRoute{Matches: []webappv1.HeaderRouteMatch{
			{Headers: []webappv1.HeaderMatch{{Name: "X-Canary", Value: "always", Type: webappv1.HeaderMatchExact}}},
			{Headers: []webappv1.HeaderMatch{{Name: "Cookie", Value: "canary=always", Type: webappv1.HeaderMatchRegularExpression}}},
		}}}},
	}}
	toCanary := []RouteBackend{{Name: "shop-canary"}}
	asWritten := []RouteMatch{
		{Path: "/api", Headers: []gatewayv1.HTTPHeaderMatch{{Name: "X-Canary", Value: "always", Type: &exact}}},
		{Path: "/api", Headers: []gatewayv1.HTTPHeaderMatch{{Name: "Cookie", Value: "canary=always", Type: &regex}}},
	}
	edit := func(f func(m []RouteMatch)) []RouteMatch {
		m := []RouteMatch{{Path: "/api", Headers: slices.Clone(asWritten[0].Headers)}, {Path: "/api", Headers: slices.Clone(asWritten[1].Headers)}}
		f(m)
		return m
	}
	noHeaderRoute := *p
	noHeaderRoute.Spec.Rollout = &webappv1.Rollout{Canary: &webappv1.Canary{}}
	for _, tc := range []struct {
		name string
		p    *Parent
		rule *RouteRule
		want bool
	}{
		{"the rule as the hook writes it", p, &RouteRule{Matches: asWritten, Backends: toCanary}, true},
		{"an Exact type left out: the schema's default", p, &RouteRule{Matches: edit(func(m []RouteMatch) { m[0].Headers[0].Type = nil }), Backends: toCanary}, true},
		{"no rule before the weighted one", p, nil, false},
		{"the spec has no header route", &noHeaderRoute, &RouteRule{Matches: asWritten, Backends: toCanary}, false},
		{"to another Service", p, &RouteRule{Matches: asWritten, Backends: []RouteBackend{{Name: "shop"}}}, false},
		{"to the canary and the stable", p, &RouteRule{Matches: asWritten, Backends: []RouteBackend{{Name: "shop-canary"}, {Name: "shop-stable"}}}, false},
		{"a match fewer: the spec edited since", p, &RouteRule{Matches: asWritten[:1], Backends: toCanary}, false},
		{"another value", p, &RouteRule{Matches: edit(func(m []RouteMatch) { m[0].Headers[0].Value = "sometimes" }), Backends: toCanary}, false},
		{"another type", p, &RouteRule{Matches: edit(func(m []RouteMatch) { m[1].Headers[0].Type = &exact }), Backends: toCanary}, false},
		{"another path", p, &RouteRule{Matches: edit(func(m []RouteMatch) { m[1].Path = "/" }), Backends: toCanary}, false},
		{"a header more", p, &RouteRule{Matches: edit(func(m []RouteMatch) {
			m[1].Headers = append(m[1].Headers, gatewayv1.HTTPHeaderMatch{Name: "X-Team", Value: "a"})
		}), Backends: toCanary}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := headerRouted(tc.p, &ObservedRoute{HeaderRule: tc.rule}); got != tc.want {
				t.Errorf("headerRouted = %t; want %t", got, tc.want)
			}
		})
	}
}

func TestWithCanaryReport(t *testing.T) {
	missing := report{phase: webappv1.PhaseDegraded, reason: webappv1.ReasonConfigMapMissing, message: "ConfigMap shop does not exist."}
	rolled := report{phase: webappv1.PhaseReady, reason: "Ready", message: "Rolled out."}
	progressing := &canary.Report{Phase: webappv1.PhaseProgressing, Reason: webappv1.ReasonCanaryProgressing, Message: "Canary new: Step 1 of 3."}
	st := &webappv1.CanaryStatus{Phase: webappv1.CanaryProgressing, Revision: "new"}
	cond := &canary.Condition{OK: true, Reason: string(webappv1.CanaryProgressing), Message: "Step 1 of 3."}
	for _, tc := range []struct {
		name      string
		r         report
		d         canary.Output
		missing   bool
		wantPhase webappv1.Phase
		wantConds int
	}{
		{"the canary tells the story", rolled, canary.Output{Report: progressing, Condition: cond, Status: st}, false, webappv1.PhaseProgressing, 1},
		{"a missing ConfigMap beats the canary's report", missing, canary.Output{Report: progressing, Condition: cond, Status: st}, true, webappv1.PhaseDegraded, 1},
		{"the canary says nothing: the rollout tells it", rolled, canary.Output{Condition: cond}, false, webappv1.PhaseReady, 1},
		{"no canary asked: no condition", rolled, canary.Output{}, false, webappv1.PhaseReady, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := withCanaryReport(tc.r, &tc.d, tc.missing)
			if got.phase != tc.wantPhase || len(got.conditions) != tc.wantConds || got.canary != tc.d.Status {
				t.Errorf("phase %s, %d conditions, status.canary %v; want %s, %d, %v", got.phase, len(got.conditions), got.canary, tc.wantPhase, tc.wantConds, tc.d.Status)
			}
			if tc.wantPhase == tc.r.phase && got.message != tc.r.message {
				t.Errorf("message %q; want the report's own, %q", got.message, tc.r.message)
			}
		})
	}
}

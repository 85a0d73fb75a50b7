package sync_test

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

// TestPodTemplate holds PodTemplate, the template as a function of the spec, to the template of
// the Deployment Sync answers with for the same spec and stable Deployment.
func TestPodTemplate(t *testing.T) {
	withConfig := func(p *sync.Parent) {
		p.Spec.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "settings"}}}}
	}
	withPodMeta := func(p *sync.Parent) {
		p.Spec.PodLabels, p.Spec.PodAnnotations = map[string]string{"team": "shop"}, map[string]string{"note": "x"}
	}
	// stable is the observed stable Deployment Sync made for p, changed by edit.
	stable := func(p sync.Parent, edit func(*appsv1.Deployment)) *sync.Child {
		dep, _ := desired(t, p)
		if edit != nil {
			edit(dep)
		}
		c := observe(t, dep, 1, nil)
		return &c
	}
	adopted := func(d *appsv1.Deployment) {
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "legacy"}}
	}
	digested := func(d *appsv1.Deployment) {
		d.Spec.Template.Annotations = map[string]string{webappv1.AnnotationConfigHash: "0123456789abcdef"}
	}
	for _, tc := range []struct {
		name   string
		p      sync.Parent
		stable func(sync.Parent) *sync.Child
		holds  map[string]string // labels and annotations the template must hold
	}{
		{name: "a new WebApp", p: webapp()},
		{name: "its pod labels and annotations", p: webapp(withPodMeta)},
		{name: "a stable Deployment of the same spec", p: webapp(), stable: func(p sync.Parent) *sync.Child { return stable(p, nil) }},
		{name: "an adopted stable Deployment: its selector kept", p: webapp(withPodMeta), stable: func(p sync.Parent) *sync.Child { return stable(p, adopted) }, holds: map[string]string{"app": "legacy", "team": "shop"}},
		{name: "no ConfigMaps sent: the stable's digest kept", p: webapp(withConfig), stable: func(p sync.Parent) *sync.Child { return stable(p, digested) }, holds: map[string]string{webappv1.AnnotationConfigHash: "0123456789abcdef"}},
		{name: "no ConfigMaps sent, no stable: no digest", p: webapp(withConfig)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := &sync.Request{Parent: tc.p}
			var view *sync.ObservedDeployment
			if tc.stable != nil {
				c := tc.stable(tc.p)
				req.Children, view = []sync.Child{*c}, c.Deployment
			}
			var want *corev1.PodTemplateSpec
			for _, c := range validSync(t, req).Children {
				if d, ok := c.(*appsv1.Deployment); ok && d.Name == tc.p.Name {
					want = &d.Spec.Template
				}
			}
			got, err := sync.PodTemplate(tc.p.Name, &tc.p.Spec, view)
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "PodTemplate", asJSON(t, got), asJSON(t, want))
			for k, v := range tc.holds {
				if got.Labels[k] != v && got.Annotations[k] != v {
					t.Errorf("the template's labels %v and annotations %v; want %s=%s", got.Labels, got.Annotations, k, v)
				}
			}
		})
	}
	t.Run("an invalid spec: the status's message", func(t *testing.T) {
		p := webapp(func(p *sync.Parent) { p.Spec.Image = "" })
		resp := sync.Sync(&sync.Request{Parent: p}, now)
		if _, err := sync.PodTemplate(p.Name, &p.Spec, nil); err == nil || err.Error() != resp.Status.Message {
			t.Errorf("PodTemplate: %v; want the error %q", err, resp.Status.Message)
		}
	})
}

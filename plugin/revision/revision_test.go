package revision

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

// The revisions of examples/canary-paused.request.json: the canary's, as its status and canary
// Deployment say, and the stable Deployment's, the digest of the template Metacontroller
// last applied to it.
const (
	canaryRevision = "c138f6851b"
	stableImage    = "nginx:1.27"
)

// example reads the WebApp and its two Deployments from examples/canary-paused.request.json: a
// canary of nginx:1.28 paused at its last step, the stable Deployment on nginx:1.27.
func example(t *testing.T) (wa *webappv1.WebApp, stable, canaryDeployment *appsv1.Deployment) {
	t.Helper()
	b, err := os.ReadFile("../../examples/canary-paused.request.json")
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Parent   webappv1.WebApp
		Children struct {
			Deployments map[string]*appsv1.Deployment `json:"Deployment.apps/v1"`
		}
	}
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	return &req.Parent, req.Children.Deployments["default/shop"], req.Children.Deployments["default/shop-canary"]
}

func TestOf(t *testing.T) {
	_, stable, canaryDeployment := example(t)
	applied, ok := Applied(stable)
	if !ok {
		t.Fatal("Applied(stable) found no template")
	}
	if got := applied.Spec.Containers[0].Image; got != stableImage {
		t.Errorf("Applied(stable) runs %s; want %s", got, stableImage)
	}
	bare := stable.DeepCopy()
	delete(bare.Annotations, sync.AnnotationLastApplied)
	for _, tc := range []struct {
		name string
		d    *appsv1.Deployment
		want string
	}{
		{"the canary Deployment, by its annotation", canaryDeployment, canaryRevision},
		{"the stable Deployment, by the template applied to it", stable, sync.TemplateHash(&applied)},
		{"a Deployment without either", bare, ""},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Of(tc.d); got != tc.want {
				t.Errorf("Of = %q; want %q", got, tc.want)
			}
		})
	}
}

func TestDesired(t *testing.T) {
	wa, stable, _ := example(t)
	got, err := Desired(wa, stable)
	if err != nil {
		t.Fatal(err)
	}
	if got != canaryRevision {
		t.Errorf("Desired = %s; want the hook's own revision of the spec, %s (status.canary.revision)", got, canaryRevision)
	}
	wa.Spec.Image = stableImage
	if got, err := Desired(wa, stable); err != nil || got != Of(stable) {
		t.Errorf("Desired with the stable image = %s, %v; want the stable Deployment's revision %s", got, err, Of(stable))
	}
}

func TestPlan(t *testing.T) {
	for _, tc := range []struct {
		name        string
		edit        func(*webappv1.WebAppSpec)
		wantChanged []string
		wantErr     string // "mismatch" for a MismatchError
		wantFields  []string
	}{
		{name: "the image back", wantChanged: []string{"image"}},
		{name: "the image and an added variable back", edit: func(s *webappv1.WebAppSpec) {
			s.Env = []corev1.EnvVar{{Name: "LEVEL", Value: "debug"}}
			s.PodAnnotations = map[string]string{"team": "shop"}
		}, wantChanged: []string{"image", "env", "podAnnotations"}},
		{name: "nothing to undo: the spec asks for the stable template", edit: func(s *webappv1.WebAppSpec) {
			s.Image = stableImage
		}, wantChanged: nil},
		{name: "a probe changed too: not guessed at", edit: func(s *webappv1.WebAppSpec) {
			s.HealthCheck.Path = "/healthz"
		}, wantErr: "mismatch", wantFields: []string{"spec.template.spec.containers[0].readinessProbe", "spec.template.spec.containers[0].startupProbe"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wa, stable, _ := example(t)
			if tc.edit != nil {
				tc.edit(&wa.Spec)
			}
			r, err := Plan(wa, stable)
			if tc.wantErr != "" {
				var m *MismatchError
				if !errors.As(err, &m) {
					t.Fatalf("Plan: %v; want a MismatchError", err)
				}
				if m.Want != Of(stable) || !slices.Equal(m.Fields, tc.wantFields) {
					t.Errorf("MismatchError %+v; want revision %s and fields %v", m, Of(stable), tc.wantFields)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Changed, tc.wantChanged) {
				t.Errorf("Changed = %v; want %v", r.Changed, tc.wantChanged)
			}
			if r.To != Of(stable) {
				t.Errorf("To = %s; want %s", r.To, Of(stable))
			}
			rolled := *wa
			rolled.Spec = r.Spec
			if got, err := Desired(&rolled, stable); err != nil || got != r.To {
				t.Errorf("the planned spec asks for %s (%v); want %s", got, err, r.To)
			}
			if r.Spec.Image != stableImage || r.Spec.Env != nil || r.Spec.PodAnnotations != nil || r.Spec.Rollout == nil {
				t.Errorf("planned spec image %s, env %v, podAnnotations %v, rollout %v; want %s, none, none, the rollout kept", r.Spec.Image, r.Spec.Env, r.Spec.PodAnnotations, r.Spec.Rollout, stableImage)
			}
		})
	}
	t.Run("no template applied", func(t *testing.T) {
		wa, stable, _ := example(t)
		delete(stable.Annotations, sync.AnnotationLastApplied)
		if _, err := Plan(wa, stable); !errors.Is(err, ErrNoTemplate) {
			t.Errorf("Plan: %v; want ErrNoTemplate", err)
		}
	})
}

func TestPrevious(t *testing.T) {
	wa, stable, _ := example(t)
	// rs is a ReplicaSet of stable of its template with image, revision n, as the Deployment
	// controller made it: stable's annotations, Metacontroller's last-applied one of that image.
	rs := func(image, n string) appsv1.ReplicaSet {
		a := maps.Clone(stable.Annotations)
		a[sync.AnnotationLastApplied] = strings.ReplaceAll(a[sync.AnnotationLastApplied], stableImage, image)
		a[AnnotationDeploymentRevision] = n
		return appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "shop-" + n, Annotations: a}}
	}
	revisionOf := func(r appsv1.ReplicaSet) string {
		t, _ := sync.AppliedTemplate(r.Annotations[sync.AnnotationLastApplied])
		return sync.TemplateHash(t)
	}
	current, older, oldest := rs(stableImage, "3"), rs("nginx:1.26", "2"), rs("nginx:1.25", "1")
	bare := rs("nginx:1.24", "4")
	delete(bare.Annotations, sync.AnnotationLastApplied)
	unnumbered := rs("nginx:1.23", "x")
	for _, tc := range []struct {
		name      string
		sets      []appsv1.ReplicaSet
		want      string
		wantImage string // "" for ErrNoPrevious
	}{
		{"the newest template other than the one the stable Deployment runs", []appsv1.ReplicaSet{oldest, current, older}, "", "nginx:1.26"},
		{"the revision named, older", []appsv1.ReplicaSet{oldest, current, older}, revisionOf(oldest), "nginx:1.25"},
		{"a ReplicaSet without the hook's template, or without a number, is not read", []appsv1.ReplicaSet{oldest, bare, unnumbered}, "", "nginx:1.25"},
		{"the revision named, kept by none", []appsv1.ReplicaSet{oldest, current, older}, "0123456789", ""},
		{"only the one it runs", []appsv1.ReplicaSet{current}, "", ""},
		{"none", nil, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Previous(wa, stable, tc.sets, tc.want)
			if tc.wantImage == "" {
				if !errors.Is(err, ErrNoPrevious) {
					t.Fatalf("Previous = %+v, %v; want ErrNoPrevious", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.From != canaryRevision || got.Spec.Image != tc.wantImage || !slices.Equal(got.Changed, []string{"image"}) {
				t.Errorf("from %s, image %s, changed %q; want from %s, image %s, changed [image]", got.From, got.Spec.Image, got.Changed, canaryRevision, tc.wantImage)
			}
			if d, err := Desired(&webappv1.WebApp{ObjectMeta: wa.ObjectMeta, Spec: got.Spec}, stable); err != nil || d != got.To {
				t.Errorf("the rolled back spec asks for %s (%v); want To, %s", d, err, got.To)
			}
		})
	}
}

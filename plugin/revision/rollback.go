package revision

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

// Rollback is a spec edit that sets a WebApp's pod template back to the one its stable Deployment
// runs, as docs/canary.md's "Rollback: edit the template back" describes.
type Rollback struct {
	// Spec is the spec to write: the WebApp's, with the fields in Changed taken from the stable
	// Deployment's template.
	Spec webappv1.WebAppSpec
	// From is the revision the WebApp's spec asks for now, and To the stable Deployment's, the
	// revision Spec asks for.
	From, To string
	// Changed are the JSON names of the spec's fields that Spec changes, in the order of
	// RestoredFields; empty when the spec already asks for To.
	Changed []string
}

// RestoredFields are the spec fields Plan takes from the stable Deployment's template: those a
// release changes, each of which the template holds as the spec does. A template that differs in
// any other field is not guessed at: Plan says which.
var RestoredFields = []string{"image", "command", "args", "env", "envFrom", "resources", "podLabels", "podAnnotations"}

// ErrNoTemplate is Plan's error when the stable Deployment carries no template the hook applied
// (metacontroller.k8s.io/last-applied-configuration), so that its revision cannot be told.
var ErrNoTemplate = errors.New("the stable Deployment carries no template applied by Metacontroller (annotation " + sync.AnnotationLastApplied + "), so its revision cannot be told")

// MismatchError is Plan's error when the spec rebuilt from the stable Deployment's template does
// not ask for that template: the two differ in a field Plan does not restore, or the hook
// applies install defaults (--default-security-profile) that change the template.
type MismatchError struct {
	// Want is the stable Deployment's revision; Got the rebuilt spec's.
	Want, Got string
	// Fields are the paths, in the pod template, where the two differ.
	Fields []string
}

// Error says where the templates differ, and what to do.
func (e *MismatchError) Error() string {
	return fmt.Sprintf("setting %s back would ask for revision %s, not the stable Deployment's %s: the templates still differ in %s, which undo does not restore (or the hook applies install defaults such as --default-security-profile); edit the spec by hand",
		strings.Join(RestoredFields, ", "), e.Got, e.Want, strings.Join(e.Fields, ", "))
}

// Plan is the rollback of wa to the template stable, its stable Deployment, runs. It takes the
// RestoredFields from that template into wa's spec, and checks, with the hook's own code
// (Desired), that the result asks for stable's revision; a MismatchError says where it does
// not. When wa's spec already asks for stable's revision, Changed is empty.
func Plan(wa *webappv1.WebApp, stable *appsv1.Deployment) (*Rollback, error) {
	applied, ok := Applied(stable)
	if !ok {
		return nil, ErrNoTemplate
	}
	want := sync.TemplateHash(&applied)
	from, err := Desired(wa, stable)
	if err != nil {
		return nil, fmt.Errorf("the revision of the spec: %w", err)
	}
	r := &Rollback{From: from, To: want}
	spec, err := roundTrip(&wa.Spec)
	if err != nil {
		return nil, err
	}
	r.Spec = *spec
	if from == want {
		return r, nil
	}
	c := appContainer(&applied)
	if c == nil {
		return nil, fmt.Errorf("the stable Deployment's template has no container %s", sync.ContainerName)
	}
	s := &r.Spec
	s.Image, s.Command, s.Args, s.Env, s.EnvFrom = c.Image, c.Command, c.Args, c.Env, c.EnvFrom
	s.Resources = nil
	if !reflect.DeepEqual(c.Resources, corev1.ResourceRequirements{}) {
		s.Resources = &c.Resources
	}
	s.PodLabels = podLabels(applied.Labels, stable)
	s.PodAnnotations = without(applied.Annotations, webappv1.AnnotationConfigHash)

	built, err := build(wa, s, stable)
	if err != nil {
		return nil, fmt.Errorf("the spec rebuilt from the stable Deployment's template: %w", err)
	}
	if got := sync.TemplateHash(built); got != want {
		return nil, &MismatchError{Want: want, Got: got, Fields: differences(built, &applied)}
	}
	r.Changed = changed(&wa.Spec, s)
	return r, nil
}

// appContainer is the template's container the hook builds, nil when it has none.
func appContainer(t *corev1.PodTemplateSpec) *corev1.Container {
	for i := range t.Spec.Containers {
		if t.Spec.Containers[i].Name == sync.ContainerName {
			return &t.Spec.Containers[i]
		}
	}
	return nil
}

// podLabels are spec.podLabels as a template's labels hold them: those labels but the ones the
// hook or the Deployment controller sets (webappv1.OwnedPodLabels) and those of the stable
// Deployment's selector, which the hook adds to its pods; nil when none is left.
func podLabels(labels map[string]string, stable *appsv1.Deployment) map[string]string {
	owned := slices.Clone(webappv1.OwnedPodLabels)
	if s := stable.Spec.Selector; s != nil {
		owned = slices.AppendSeq(owned, maps.Keys(s.MatchLabels))
	}
	return without(labels, owned...)
}

// without is m less keys, nil when nothing is left.
func without(m map[string]string, keys ...string) map[string]string {
	var out map[string]string
	for k, v := range m {
		if slices.Contains(keys, k) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out
}

// changed lists the RestoredFields whose JSON differs between a and b.
func changed(a, b *webappv1.WebAppSpec) []string {
	am, bm := jsonMap(a), jsonMap(b)
	var out []string
	for _, f := range RestoredFields {
		if !reflect.DeepEqual(am[f], bm[f]) {
			out = append(out, f)
		}
	}
	return out
}

// differences lists the paths where two pod templates differ: the template's metadata and spec
// fields, and within the spec those of the hook's container.
func differences(a, b *corev1.PodTemplateSpec) []string {
	am, bm := jsonMap(a), jsonMap(b)
	var out []string
	for _, part := range []string{"metadata", "spec"} {
		ap, _ := am[part].(map[string]any)
		bp, _ := bm[part].(map[string]any)
		for _, k := range unionKeys(ap, bp) {
			if reflect.DeepEqual(ap[k], bp[k]) {
				continue
			}
			if part == "spec" && k == "containers" {
				ac, bc := first(ap[k]), first(bp[k])
				for _, ck := range unionKeys(ac, bc) {
					if !reflect.DeepEqual(ac[ck], bc[ck]) {
						out = append(out, "spec.template.spec.containers[0]."+ck)
					}
				}
				continue
			}
			out = append(out, "spec.template."+part+"."+k)
		}
	}
	return out
}

// jsonMap is v's JSON form as a map; nil when it does not encode as an object.
func jsonMap(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// first is the first element of a JSON list, as a map.
func first(v any) map[string]any {
	l, _ := v.([]any)
	if len(l) == 0 {
		return nil
	}
	m, _ := l[0].(map[string]any)
	return m
}

// unionKeys are the keys of a and b, sorted.
func unionKeys(a, b map[string]any) []string {
	keys := slices.Collect(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

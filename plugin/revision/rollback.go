package revision

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
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
	return planTo(wa, stable, applied)
}

// ErrNoPrevious is Previous's error when no ReplicaSet of the stable Deployment keeps a template
// the hook applied before the one it runs (or, named, the revision asked for).
var ErrNoPrevious = errors.New("no ReplicaSet of the stable Deployment keeps an earlier template the hook applied")

// AnnotationDeploymentRevision is the Deployment controller's number of a ReplicaSet's place in
// its Deployment's history: the newest has the highest.
const AnnotationDeploymentRevision = "deployment.kubernetes.io/revision"

// Previous is the rollback of wa to a revision its stable Deployment ran before the one it runs,
// as Plan's to the one it runs: want, when it is not "" (the rollback window's previous revision,
// status.canary.stableRevisions), else the newest other one. It reads replicaSets, those the
// stable Deployment owns: the Deployment controller copies the Deployment's annotations to the
// ReplicaSet it makes of a template, Metacontroller's last-applied one included, so each keeps the
// template the hook applied then (Applied). The newest by AnnotationDeploymentRevision is taken
// of those whose template is not the one stable runs, and is want when want is set; ErrNoPrevious
// when there is none. A MismatchError says where the spec rebuilt from it differs.
func Previous(wa *webappv1.WebApp, stable *appsv1.Deployment, replicaSets []appsv1.ReplicaSet, want string) (*Rollback, error) {
	current := Of(stable)
	var best *corev1.PodTemplateSpec
	bestAt := int64(-1)
	for i := range replicaSets {
		rs := &replicaSets[i]
		t, ok := sync.AppliedTemplate(rs.Annotations[sync.AnnotationLastApplied])
		if !ok {
			continue
		}
		r := sync.TemplateHash(t)
		if r == current || want != "" && r != want {
			continue
		}
		at, err := strconv.ParseInt(rs.Annotations[AnnotationDeploymentRevision], 10, 64)
		if err != nil {
			continue
		}
		if at > bestAt {
			best, bestAt = t, at
		}
	}
	if best == nil {
		return nil, ErrNoPrevious
	}
	return planTo(wa, stable, *best)
}

// planTo is the rollback of wa to the pod template applied, one the hook applied to its stable
// Deployment stable (now, or in an earlier revision).
func planTo(wa *webappv1.WebApp, stable *appsv1.Deployment, applied corev1.PodTemplateSpec) (*Rollback, error) {
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

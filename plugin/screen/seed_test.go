package screen

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/sync/wire"
)

// seedFlag rewrites the seeded stories.
var seedFlag = flag.Bool("seed", false, "write the stories of ../testdata/seeded from examples/ through the hook's own code")

// The stories the golden screens are drawn from: those an e2e run recorded (E2E_RECORD_SCREENS=1)
// in recordedDir, and, for a case none has recorded yet, the seed of seededDir, which the
// command tests of package plugin read too.
const (
	recordedDir = "../testdata/recorded"
	seededDir   = "../testdata/seeded"
)

// A seed is a story made before an e2e run records the real one: a request of examples/,
// edited to reach a phase, answered by the hook's own code (sync/wire and sync.Sync), the answer's
// status put on the WebApp beside the children the request observed.
type seed struct {
	name, example string
	// edit, when not nil, changes the request before the hook answers it, and says how.
	edit func(req map[string]any) string
	// answer is false to keep the request's own status, which an earlier answer wrote.
	answer bool
	// now is the time of the hook's call; measurement what the edge measured for a check due then.
	now         string
	measurement *canary.Measurement
}

// seeds are the stories of every canary phase, the analysis's three results, pods that cannot
// start, a header route (at the last step, and at a first step of weight 0, examples/canary-testers),
// a rollback within the rollback window (examples/canary-undo), and a blue-green release's preview
// and switch (examples/blue-green).
var seeds = []seed{
	{name: "progressing", example: "canary-paused", answer: true, now: "2026-11-29T10:03:00Z", edit: atStep2},
	{name: "paused", example: "canary-paused", answer: true, now: "2026-11-29T10:04:30Z"},
	{name: "promoting", example: "canary-paused", answer: true, now: "2026-11-29T10:05:50Z", edit: annotate(webappv1.AnnotationPromote)},
	{name: "promoted", example: "canary-paused", answer: true, now: "2026-11-29T10:06:55Z", edit: promotedChildren},
	{name: "aborted", example: "canary-paused", answer: true, now: "2026-11-29T10:05:50Z", edit: annotate(webappv1.AnnotationAbort)},
	{name: "rolledback", example: "canary-paused", answer: true, now: "2026-11-29T10:05:50Z", edit: imageBack},
	{name: "analysis-passed", example: "canary-analysis", now: "2026-11-29T11:59:40Z"},
	{name: "analysis-failed", example: "canary-analysis", answer: true, now: "2026-11-29T12:00:05Z", measurement: &canary.Measurement{
		Span: canary.Span{From: mustTime("2026-11-29T11:59:30Z"), To: mustTime("2026-11-29T12:00:00Z")}, Window: 30 * time.Second,
		Canary: canary.Values{Requests: ptr(1812.0), Failed: ptr(679.5)},
	}},
	{name: "analysis-inconclusive", example: "canary-analysis", answer: true, now: "2026-11-29T12:00:05Z"},
	{name: "image-pull-backoff", example: "image-pull-backoff", answer: true, now: "2026-11-29T09:07:00Z"},
	{name: "header-route", example: "canary-paused", answer: true, now: "2026-11-29T10:04:30Z", edit: headerRouted},
	{name: "testers", example: "canary-testers", answer: true, now: "2026-11-29T12:00:00Z"},
	{name: "rollback-window", example: "canary-undo", answer: true, now: "2026-11-29T12:00:35Z", edit: rolledBackInWindow},
	{name: "blue-green", example: "blue-green", answer: true, now: "2026-11-29T12:00:00Z"},
	{name: "blue-green-switch", example: "blue-green", answer: true, now: "2026-11-29T12:00:00Z", edit: annotate(webappv1.AnnotationPromote)},
}

// rolledBackInWindow applies the hook's answer to the request of examples/canary-undo, at its time
// (12:00:00): the stable Deployment takes the template of the revision gone back to, and has
// rolled back to it by 12:00:30 (its ReplicaSet of that template, shop-7c9d8f6b54, scaled up
// again); the WebApp's status is the one that answer wrote.
func rolledBackInWindow(req map[string]any) string {
	b, _ := json.Marshal(req)
	decoded, err := wire.DecodeRequest(b)
	if err != nil {
		panic(err)
	}
	resp := sync.Sync(decoded, mustTime("2026-11-29T12:00:00Z"))
	var desired *appsv1.Deployment
	for _, c := range resp.Children {
		if d, ok := c.(*appsv1.Deployment); ok && d.Name == "shop" {
			desired = d
		}
	}
	if desired == nil || resp.Status.Canary == nil || resp.Status.Canary.Phase != webappv1.CanaryRolledBack {
		panic("examples/canary-undo: the answer does not roll the stable Deployment back")
	}
	stable := child(req, "Deployment.apps/v1", "default/shop")
	old := stable["metadata"].(map[string]any)
	applied, _ := json.Marshal(desired)
	var obj map[string]any
	_ = roundTrip(desired, &obj)
	meta := obj["metadata"].(map[string]any)
	meta["annotations"].(map[string]any)[sync.AnnotationLastApplied] = string(applied)
	meta["generation"], meta["creationTimestamp"], meta["uid"] = 3, old["creationTimestamp"], old["uid"]
	obj["status"] = map[string]any{"observedGeneration": 3, "replicas": 4, "updatedReplicas": 4, "readyReplicas": 4, "availableReplicas": 4,
		"conditions": []any{map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": `ReplicaSet "shop-7c9d8f6b54" has successfully progressed.`, "lastUpdateTime": "2026-11-29T12:00:30Z", "lastTransitionTime": "2026-11-29T10:00:20Z"}}}
	req["children"].(map[string]any)["Deployment.apps/v1"].(map[string]any)["default/shop"] = obj
	var st map[string]any
	_ = roundTrip(resp.Status, &st)
	req["parent"].(map[string]any)["status"] = st
	return "the hook's answer at 12:00:00 applied (the stable Deployment back at nginx:1.27, rolled out by 12:00:30) and the status it wrote"
}

// headerRouted gives the canary a header route (X-Canary: always, or a cookie canary=always),
// and the route its rule, before the weighted one, as the hook writes it.
func headerRouted(req map[string]any) string {
	c := req["parent"].(map[string]any)["spec"].(map[string]any)["rollout"].(map[string]any)["canary"].(map[string]any)
	c["headerRoute"] = map[string]any{"matches": []any{
		map[string]any{"headers": []any{map[string]any{"name": "X-Canary", "value": "always"}}},
		map[string]any{"headers": []any{map[string]any{"name": "Cookie", "value": "(^|; *)canary=always(;|$)", "type": "RegularExpression"}}},
	}}
	path := map[string]any{"type": "PathPrefix", "value": "/"}
	route := child(req, "HTTPRoute.gateway.networking.k8s.io/v1", "default/shop")
	spec := route["spec"].(map[string]any)
	spec["rules"] = append([]any{map[string]any{
		"matches": []any{
			map[string]any{"path": path, "headers": []any{map[string]any{"type": "Exact", "name": "X-Canary", "value": "always"}}},
			map[string]any{"path": path, "headers": []any{map[string]any{"type": "RegularExpression", "name": "Cookie", "value": "(^|; *)canary=always(;|$)"}}},
		},
		"backendRefs": []any{map[string]any{"group": "", "kind": "Service", "name": "shop-canary", "port": 80, "weight": 1}},
	}}, spec["rules"].([]any)...)
	return "spec.rollout.canary.headerRoute X-Canary: always, or a cookie canary=always, and the route's rule for it before the weighted one"
}

func TestSeed(t *testing.T) {
	if !*seedFlag {
		t.Skip("-seed writes the seeded stories")
	}
	for _, s := range seeds {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join(seededDir, s.name+".json")
			rec := s.make(t)
			b, err := json.MarshalIndent(rec, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// make answers the seed's request, and returns the story.
func (s seed) make(t *testing.T) *Recording {
	t.Helper()
	b, err := os.ReadFile("../../examples/" + s.example + ".request.json")
	if err != nil {
		t.Fatal(err)
	}
	var req map[string]any
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	source := fmt.Sprintf("seeded from examples/%s.request.json", s.example)
	if s.edit != nil {
		source += ", " + s.edit(req)
	}
	parent := req["parent"].(map[string]any)
	if s.answer {
		b, _ = json.Marshal(req)
		decoded, err := wire.DecodeRequest(b)
		if err != nil {
			t.Fatal(err)
		}
		decoded.Measurement = s.measurement
		resp := sync.Sync(decoded, mustTime(s.now))
		parent["status"] = resp.Status
		source += fmt.Sprintf(", answered by sync.Sync at %s", s.now)
		if s.measurement != nil {
			source += fmt.Sprintf(" with a measurement of the check of %s", s.measurement.Span.To.Format(time.RFC3339))
		}
	} else {
		source += ", its status as the hook's earlier answer wrote it"
	}
	rec := &Recording{Story: Story{Now: mustTime(s.now)}}
	if err := roundTrip(parent, &rec.WebApp); err != nil {
		t.Fatal(err)
	}
	children, _ := req["children"].(map[string]any)
	deployments, _ := children["Deployment.apps/v1"].(map[string]any)
	for _, key := range sortedKeys(deployments) {
		var d appsv1.Deployment
		if err := roundTrip(deployments[key], &d); err != nil {
			t.Fatal(err)
		}
		rec.Deployments = append(rec.Deployments, d)
	}
	related, _ := req["related"].(map[string]any)
	if pods, ok := related["Pod.v1"].(map[string]any); ok {
		for _, key := range sortedKeys(pods) {
			var p corev1.Pod
			if err := roundTrip(pods[key], &p); err != nil {
				t.Fatal(err)
			}
			rec.Pods = append(rec.Pods, p)
		}
		source += "; pods as the request carries them"
	} else {
		for _, d := range rec.Deployments {
			rec.Pods = append(rec.Pods, podsOf(&d)...)
		}
		source += "; pods made up, one Running per available replica of each Deployment (the request carries none)"
	}
	rec.Source = source
	return rec
}

// atStep2 puts the request at step 2's pause, as the docs' timeline has it at 10:03:00: the route
// at 75/25, the canary Deployment at 1 pod, status.canary as the hook wrote it when the pause
// started.
func atStep2(req map[string]any) string {
	route := child(req, "HTTPRoute.gateway.networking.k8s.io/v1", "default/shop")
	refs := route["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)["backendRefs"].([]any)
	refs[0].(map[string]any)["weight"], refs[1].(map[string]any)["weight"] = 75, 25
	d := child(req, "Deployment.apps/v1", "default/shop-canary")
	d["spec"].(map[string]any)["replicas"] = 1
	st := d["status"].(map[string]any)
	for _, c := range st["conditions"].([]any) {
		c.(map[string]any)["lastUpdateTime"], c.(map[string]any)["lastTransitionTime"] = "2026-11-29T10:01:05Z", "2026-11-29T10:01:05Z"
	}
	for _, k := range []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"} {
		st[k] = 1
	}
	cs := req["parent"].(map[string]any)["status"].(map[string]any)["canary"].(map[string]any)
	cs["step"], cs["weight"], cs["replicas"] = 1, 25, 1
	cs["stepStartTime"], cs["pauseStartTime"] = "2026-11-29T10:02:10Z", "2026-11-29T10:02:15Z"
	cs["phase"] = string(webappv1.CanaryProgressing)
	return "at step 2's pause as the docs' timeline has it (route 75/25, the canary at 1 pod, status.canary step 2 paused from 10:02:15)"
}

// annotate sets the annotation key to the canary's revision.
func annotate(key string) func(map[string]any) string {
	return func(req map[string]any) string {
		meta := req["parent"].(map[string]any)["metadata"].(map[string]any)
		meta["annotations"] = map[string]any{key: "c138f6851b"}
		return "annotated " + key + "=c138f6851b"
	}
}

// imageBack sets the spec's image back to the stable one.
func imageBack(req map[string]any) string {
	req["parent"].(map[string]any)["spec"].(map[string]any)["image"] = "nginx:1.27"
	return "spec.image set back to nginx:1.27"
}

// promotedChildren makes the children those at the end of a promotion: the stable Deployment
// as the hook answers the spec without a canary, rolled out; no canary Deployment or Services;
// the route back to the Service shop; the status Promoting, as the hook wrote it before.
func promotedChildren(req map[string]any) string {
	parent := req["parent"].(map[string]any)
	spec := parent["spec"].(map[string]any)
	bare := map[string]any{}
	for k, v := range spec {
		if k != "rollout" {
			bare[k] = v
		}
	}
	b, _ := json.Marshal(map[string]any{"parent": map[string]any{"metadata": parent["metadata"], "spec": bare}})
	decoded, err := wire.DecodeRequest(b)
	if err != nil {
		panic(err)
	}
	var desired *appsv1.Deployment
	for _, c := range sync.Sync(decoded, time.Time{}).Children {
		if d, ok := c.(*appsv1.Deployment); ok {
			desired = d
		}
	}
	applied, _ := json.Marshal(desired)
	stable := child(req, "Deployment.apps/v1", "default/shop")
	var obj map[string]any
	_ = roundTrip(desired, &obj)
	meta := obj["metadata"].(map[string]any)
	meta["annotations"].(map[string]any)[sync.AnnotationLastApplied] = string(applied)
	meta["generation"], meta["creationTimestamp"], meta["uid"] = 3, stable["metadata"].(map[string]any)["creationTimestamp"], stable["metadata"].(map[string]any)["uid"]
	obj["status"] = map[string]any{"observedGeneration": 3, "replicas": 4, "updatedReplicas": 4, "readyReplicas": 4, "availableReplicas": 4,
		"conditions": []any{map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": `ReplicaSet "shop-6d5f7c8b9d" has successfully progressed.`, "lastUpdateTime": "2026-11-29T10:06:35Z", "lastTransitionTime": "2026-11-29T10:06:35Z"}}}
	children := req["children"].(map[string]any)
	children["Deployment.apps/v1"] = map[string]any{"default/shop": obj}
	services := children["Service.v1"].(map[string]any)
	delete(services, "default/shop-canary")
	delete(services, "default/shop-stable")
	route := child(req, "HTTPRoute.gateway.networking.k8s.io/v1", "default/shop")
	rule := route["spec"].(map[string]any)["rules"].([]any)[0].(map[string]any)
	rule["backendRefs"] = []any{map[string]any{"group": "", "kind": "Service", "name": "shop", "port": 80, "weight": 1}}
	cs := parent["status"].(map[string]any)["canary"].(map[string]any)
	cs["phase"], cs["weight"] = string(webappv1.CanaryPromoting), 0
	cs["allTrafficTime"], cs["noTrafficTime"] = nil, "2026-11-29T10:06:40Z"
	return "its children made those at the end of the promotion (the stable Deployment as the hook answers the spec, rolled out; the canary's Deployment and Services gone; the route back to shop) and status.canary Promoting"
}

// child is the request's child of group at key.
func child(req map[string]any, group, key string) map[string]any {
	return req["children"].(map[string]any)[group].(map[string]any)[key].(map[string]any)
}

// podsOf makes up a Running, ready pod for each available replica of d, of the ReplicaSet its
// Progressing condition names.
func podsOf(d *appsv1.Deployment) []corev1.Pod {
	rs := ""
	since := d.CreationTimestamp
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing {
			_, rest, _ := strings.Cut(c.Message, `"`)
			rs, _, _ = strings.Cut(rest, `"`)
			since = c.LastUpdateTime
		}
	}
	var pods []corev1.Pod
	for i := range d.Status.AvailableReplicas {
		labels := map[string]string{webappv1.LabelPodTemplateHash: strings.TrimPrefix(rs, d.Name+"-")}
		for k, v := range d.Spec.Template.Labels {
			labels[k] = v
		}
		image := imageOf(&d.Spec.Template)
		pods = append(pods, corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%c%c%c%c%c", rs, 'a'+i, 'k', 'x'+i%3, 'q', '2'+i), Namespace: d.Namespace, Labels: labels, CreationTimestamp: since},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: sync.ContainerName, Image: image}}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
				Name: sync.ContainerName, Image: image, Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: since}},
			}}},
		})
	}
	return pods
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func roundTrip(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func ptr[T any](v T) *T { return &v }

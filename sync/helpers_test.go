package sync_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

// now is the fixed clock of these tests; earlier is a time before it.
var (
	now     = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	earlier = metav1.NewTime(time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC))
)

func ptr[T any](v T) *T { return &v }

// webapp returns a valid parent (image nginx:1.27, 3 replicas, port 8080), changed by mods.
func webapp(mods ...func(*sync.Parent)) sync.Parent {
	p := sync.Parent{
		Name:       "hello",
		Namespace:  "default",
		Generation: 1,
		Spec: webappv1.WebAppSpec{
			Image:    "nginx:1.27",
			Replicas: ptr(int32(3)),
			Port:     ptr(int32(8080)),
		},
	}
	for _, m := range mods {
		m(&p)
	}
	return p
}

// desiredFor returns the children Sync asks for when nothing is observed yet, by kind.
func desiredFor(t *testing.T, p sync.Parent) map[string]map[string]any {
	t.Helper()
	resp := sync.Sync(&sync.Request{Parent: p}, now)
	out := map[string]map[string]any{}
	for _, c := range objects(t, resp.Children) {
		out[c["kind"].(string)] = c
	}
	return out
}

// objects decodes children for inspection.
func objects(t testing.TB, children []sync.Object) []map[string]any {
	t.Helper()
	out := make([]map[string]any, len(children))
	for i, c := range children {
		if err := json.Unmarshal(c, &out[i]); err != nil {
			t.Fatalf("children[%d]: %v", i, err)
		}
	}
	return out
}

// observe turns an apply-form object into what the apiserver would show Metacontroller afterwards:
// server-set metadata, Metacontroller's last-applied annotation and, when status is not nil, a status.
func observe(t *testing.T, applied map[string]any, generation int64, status any) sync.Child {
	t.Helper()
	var obj map[string]any
	roundTrip(t, applied, &obj)
	meta := obj["metadata"].(map[string]any)
	meta["generation"] = generation
	meta["uid"] = "0b7c1b51-5d1e-4f55-9b3c-5a4f8d5d2b11"
	meta["resourceVersion"] = "42"
	meta["creationTimestamp"] = "2026-11-01T08:00:00Z"
	meta["managedFields"] = []any{map[string]any{"manager": "metacontroller", "operation": "Update"}}
	last, err := json.Marshal(applied)
	if err != nil {
		t.Fatal(err)
	}
	annotations, _ := meta["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
	}
	annotations[sync.AnnotationLastApplied] = string(last)
	meta["annotations"] = annotations
	if status != nil {
		var s any
		roundTrip(t, status, &s)
		obj["status"] = s
	}
	return decodeChild(t, obj)
}

// decodeChild encodes obj and decodes it the way DecodeRequest does.
func decodeChild(t *testing.T, obj any) sync.Child {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sync.DecodeChild(raw)
	if err != nil {
		t.Fatalf("DecodeChild: %v", err)
	}
	return c
}

func roundTrip(t *testing.T, in, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

// depStatus is a Deployment status as the Deployment controller reports it.
func depStatus(observedGeneration int64, replicas, updated, ready, available int32, conds ...appsv1.DeploymentCondition) appsv1.DeploymentStatus {
	return appsv1.DeploymentStatus{
		ObservedGeneration: observedGeneration,
		Replicas:           replicas,
		UpdatedReplicas:    updated,
		ReadyReplicas:      ready,
		AvailableReplicas:  available,
		Conditions:         conds,
	}
}

var deadlineExceeded = appsv1.DeploymentCondition{
	Type:    appsv1.DeploymentProgressing,
	Status:  corev1.ConditionFalse,
	Reason:  "ProgressDeadlineExceeded",
	Message: `ReplicaSet "hello-5d8c7" has timed out progressing.`,
}

// names lists children as "Kind/name", sorted.
func names(t *testing.T, children []sync.Object) []string {
	out := make([]string, 0, len(children))
	for _, o := range objects(t, children) {
		meta, _ := o["metadata"].(map[string]any)
		out = append(out, fmt.Sprintf("%s/%s", o["kind"], meta["name"]))
	}
	sort.Strings(out)
	return out
}

// field walks a path of map keys and list indexes through an object.
func field(obj any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := obj.(map[string]any)
			if !ok {
				return nil
			}
			obj = m[k]
		case int:
			l, ok := obj.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			obj = l[k]
		}
	}
	return obj
}

// asJSON renders v canonically, for comparisons whose failure should be readable.
func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var update = flag.Bool("update", false, "rewrite the golden answers in testdata/answers")

// golden compares an answer with testdata/answers/<test name>.json. Run with -update to rewrite.
// The end-to-end suite sends every one of these answers to a real kube-apiserver: each child must
// pass a server-side dry-run apply and each status an update of the WebApp status subresource.
func golden(t *testing.T, resp sync.Response) {
	t.Helper()
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			return r
		}
		return '_'
	}, t.Name())
	path := filepath.Join("testdata", "answers", name+".json")
	got := asJSON(t, resp) + "\n"
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./sync -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("answer differs from %s (run go test ./sync -update if the change is intended):\n%s", path, got)
	}
}

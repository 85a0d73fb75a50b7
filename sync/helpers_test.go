package sync_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
)

// now is the fixed clock of these tests; earlier is a time before it.
var (
	now     = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	earlier = metav1.NewTime(time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC))
)

func ptr[T any](v T) *T { return &v }

// webapp returns a valid parent (image nginx:1.27, 3 replicas, port 8080), changed by mods, as
// the hook sees it: mods change the name, namespace, generation, spec and previous conditions of
// a WebApp, which is then sent in a request through sync.DecodeRequest, so that its spec is
// decoded and defaulted as in production. It panics when the request does not decode.
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
	parent := map[string]any{
		"apiVersion": webappv1.Group + "/" + webappv1.Version, "kind": webappv1.Kind,
		"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace, "generation": p.Generation},
		"spec":     p.Spec,
		"status":   map[string]any{"conditions": p.Conditions},
	}
	body, err := json.Marshal(map[string]any{"parent": parent})
	if err != nil {
		panic(err)
	}
	req, err := sync.DecodeRequest(body)
	if err != nil {
		panic(fmt.Sprintf("DecodeRequest: %v\n%s", err, body))
	}
	return req.Parent
}

// webappJSON returns the parent "hello" in "default", generation 1, with the spec whose JSON text
// is given, as sync.DecodeRequest decodes it: with Parent.SpecErrors set when it does not fit the
// WebApp types. It panics when the request does not decode.
func webappJSON(spec string) sync.Parent {
	req, err := sync.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "hello", "namespace": "default", "generation": 1}, "spec": ` + spec + `}}`))
	if err != nil {
		panic(err)
	}
	return req.Parent
}

// joined renders a list of field errors as the status message joins them: each as apimachinery
// writes it, separated by "; ".
func joined(errs field.ErrorList) string {
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// desired returns the Deployment and the Service Sync asks for when nothing is observed yet.
func desired(t *testing.T, p sync.Parent) (*appsv1.Deployment, *corev1.Service) {
	t.Helper()
	var dep *appsv1.Deployment
	var svc *corev1.Service
	for _, c := range sync.Sync(&sync.Request{Parent: p}, now).Children {
		switch o := c.(type) {
		case *appsv1.Deployment:
			dep = o
		case *corev1.Service:
			svc = o
		}
	}
	return dep, svc
}

// wire returns the children of an answer as the hook sends them: JSON objects.
func wire(t testing.TB, resp sync.Response) []map[string]any {
	t.Helper()
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var a hooktest.Answer
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	return a.Children
}

// observe returns an applied child as the apiserver shows it to Metacontroller afterwards: its
// apply form with server-set metadata, Metacontroller's last-applied annotation and, when status
// is not nil, a status.
func observe(t *testing.T, applied runtime.Object, generation int64, status any) sync.Child {
	t.Helper()
	form := wire(t, sync.Response{Children: []runtime.Object{applied}})[0]
	last, err := json.Marshal(form)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	roundTrip(t, form, &obj)
	meta := obj["metadata"].(map[string]any)
	meta["generation"] = generation
	meta["uid"] = "0b7c1b51-5d1e-4f55-9b3c-5a4f8d5d2b11"
	meta["resourceVersion"] = "42"
	meta["creationTimestamp"] = "2026-11-01T08:00:00Z"
	meta["managedFields"] = []any{map[string]any{"manager": "metacontroller", "operation": "Update"}}
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
	return hooktest.Observe(t, obj)
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
func names(t *testing.T, children []runtime.Object) []string {
	t.Helper()
	out := make([]string, 0, len(children))
	for _, c := range children {
		m, err := meta.Accessor(c)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s/%s", c.GetObjectKind().GroupVersionKind().Kind, m.GetName()))
	}
	sort.Strings(out)
	return out
}

// asJSON renders v canonically, for comparisons whose failure should be readable.
func asJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// equal fails the test when got and want are not semantically equal Kubernetes values, showing both.
func equal(t *testing.T, what string, got, want any) {
	t.Helper()
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("%s =\n%s\nwant\n%s", what, asJSON(t, got), asJSON(t, want))
	}
}

// conditionOf returns a status condition as "Status/Reason", or "" when the status has none of
// that type.
func conditionOf(st webappv1.WebAppStatus, conditionType string) string {
	for _, c := range st.Conditions {
		if c.Type == conditionType {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return ""
}

// checkedSync answers req with sync.Sync at now, compares the answer with the test's golden file
// and stops the test unless the answer passes hooktest.CheckResponse.
func checkedSync(t *testing.T, req *sync.Request) sync.Response {
	t.Helper()
	resp := sync.Sync(req, now)
	golden(t, resp)
	if err := hooktest.CheckResponse(req, resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

// validSync answers req with sync.Sync at now and stops the test unless the answer passes
// hooktest.CheckResponse: for the steps of a test before the answer that checkedSync records.
func validSync(t *testing.T, req *sync.Request) sync.Response {
	t.Helper()
	resp := sync.Sync(req, now)
	if err := hooktest.CheckResponse(req, resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

// invalidKeepsAll answers req with checkedSync and fails the test unless the WebApp is Invalid
// with wantMessage in its message and every observed child is answered exactly as it was applied.
func invalidKeepsAll(t *testing.T, req *sync.Request, wantMessage string) {
	t.Helper()
	resp := checkedSync(t, req)
	if resp.Status.Phase != webappv1.PhaseInvalid || !strings.Contains(resp.Status.Message, wantMessage) {
		t.Errorf("phase %q, message %q; want Invalid with %q", resp.Status.Phase, resp.Status.Message, wantMessage)
	}
	want := make([]any, len(req.Children))
	for i, c := range req.Children {
		want[i] = lastApplied(t, c)
	}
	if got := asJSON(t, resp.Children); got != asJSON(t, want) {
		t.Errorf("children =\n%s\nwant every observed child unchanged", got)
	}
}

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
	hooktest.Golden(t, filepath.Join("testdata", "answers", name+".json"), []byte(asJSON(t, resp)+"\n"))
}

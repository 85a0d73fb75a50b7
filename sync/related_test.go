package sync_test

import (
	"encoding/json"
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
	"k8s.io/apimachinery/pkg/types"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/sync/wire"
)

// relatedFixture decodes one of Metacontroller's recorded requests with a customize hook, or skips.
func relatedFixture(t *testing.T, name string) *sync.Request {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "shared", "fixtures", "metacontroller-4.17.2", "v2-related", name))
	if err != nil {
		t.Skip("no ../shared/fixtures beside the checkout; these real Metacontroller requests are not part of the repository")
	}
	req, err := wire.DecodeRequest(body)
	if err != nil {
		t.Fatalf("DecodeRequest: %v", err)
	}
	return req
}

// configHashOf is the config-hash annotation of the pod template an answer asks for.
func configHashOf(resp sync.Response) string {
	if d := childOf[*appsv1.Deployment](resp.Children); d != nil {
		return d.Spec.Template.Annotations[webappv1.AnnotationConfigHash]
	}
	return ""
}

// TestRelatedRequests answers every request Metacontroller 4.17.2 sent with a customize hook that
// asked for the pods, the ConfigMap and the Secret of a WebApp (see the fixtures' README).
func TestRelatedRequests(t *testing.T) {
	sharedFixtures(t) // skips the whole test, whose last checks compare the subtests', when absent
	t.Run("01 customize", func(t *testing.T) {
		req := relatedFixture(t, "01-customize.json")
		got := asJSON(t, sync.Customize(&req.Parent, sync.CustomizeOptions{Pods: true, Secrets: true}))
		want := asJSON(t, sync.CustomizeResponse{RelatedResources: []sync.RelatedResourceRule{
			{APIVersion: "v1", Resource: "pods", Namespace: "default", LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{webappv1.LabelInstance: "hello", webappv1.LabelManagedBy: webappv1.ManagedBy}}},
			{APIVersion: "v1", Resource: "configmaps", Namespace: "default", Names: []string{"app-config"}},
			{APIVersion: "v1", Resource: "secrets", Namespace: "default", Names: []string{"app-secret"}},
		}})
		if got != want {
			t.Errorf("customize =\n%s\nwant\n%s", got, want)
		}
	})
	hashes := map[string]string{}
	tests := []struct {
		file         string
		wantPhase    webappv1.Phase
		wantReason   string
		wantMessage  string
		wantRestarts int32
	}{
		{"02-create-config-related.sync.json", webappv1.PhasePending, webappv1.ReasonDeploymentMissing, "Waiting for Deployment hello to be created.", 0},
		{"03-two-pods-ready.sync.json", webappv1.PhaseProgressing, webappv1.ReasonRolloutInProgress, "to be updated to the current spec", 0},
		{"04-configmap-edited.sync.json", webappv1.PhaseProgressing, webappv1.ReasonRolloutInProgress, "to be updated to the current spec", 0},
		{"05-new-pod-image-pull-backoff.sync.json", webappv1.PhaseDegraded, "ImagePullBackOff", `1 of 1 current pod cannot start: ImagePullBackOff: Back-off pulling image "registry.invalid/missing:1.0": not found.`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			req := relatedFixture(t, tt.file)
			resp := checkedSync(t, req)
			st := resp.Status
			checkReady(t, st, tt.wantPhase, tt.wantReason, tt.wantMessage)
			if st.Restarts != tt.wantRestarts {
				t.Errorf("restarts = %d; want %d", st.Restarts, tt.wantRestarts)
			}
			hashes[tt.file] = configHashOf(resp)
			if hashes[tt.file] == "" {
				t.Error("no config-hash on the pod template; want one, for the ConfigMap and Secret envFrom names")
			}
		})
	}
	if hashes["03-two-pods-ready.sync.json"] == hashes["04-configmap-edited.sync.json"] {
		t.Error("the config hash did not change when the ConfigMap's data did")
	}
	if hashes["02-create-config-related.sync.json"] != hashes["03-two-pods-ready.sync.json"] {
		t.Error("the config hash changed while the ConfigMap and the Secret did not")
	}
	for _, tt := range []struct {
		file          string
		wantFinalized bool
	}{{"06-delete-children-present.finalize.json", false}, {"07-delete-children-gone.finalize.json", true}} {
		t.Run(tt.file, func(t *testing.T) {
			req := relatedFixture(t, tt.file)
			resp := sync.Finalize(req, now)
			if err := hooktest.CheckResponse(req, resp); err != nil {
				t.Fatal(err)
			}
			if *resp.Finalized != tt.wantFinalized {
				t.Errorf("finalized = %v; want %v", *resp.Finalized, tt.wantFinalized)
			}
		})
	}
}

// pod is one of the WebApp's pods as the apiserver shows it: of ReplicaSet rs, created at
// second s of the test's hour, with the given container status and pod conditions.
func pod(name, rs string, s int, image string, status corev1.ContainerStatus, conditions ...corev1.PodCondition) map[string]any {
	status.Name = sync.ContainerName
	status.Image = image
	p := corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(now.Add(time.Duration(s) * time.Second)),
			Labels:            map[string]string{webappv1.LabelInstance: "hello", webappv1.LabelName: webappv1.AppName, webappv1.LabelManagedBy: webappv1.ManagedBy},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: types.UID("uid-" + rs), Controller: ptr(true)}},
		},
		Spec:   corev1.PodSpec{Containers: []corev1.Container{{Name: sync.ContainerName, Image: image}}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: conditions, ContainerStatuses: []corev1.ContainerStatus{status}},
	}
	var m map[string]any
	b, _ := json.Marshal(p)
	json.Unmarshal(b, &m)
	return m
}

// configObject is a ConfigMap or Secret as the apiserver shows it.
func configObject(kind, name, uid string, data map[string]string, labels map[string]string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "default", "uid": uid, "labels": labels, "resourceVersion": fmt.Sprint(len(data) + len(labels))},
		"data":     data,
	}
}

// withRelated decodes a request for p with children and related objects, filed as Metacontroller
// files them; kinds lists the related kinds to send even when empty.
func withRelated(t *testing.T, p sync.Parent, children []json.RawMessage, kinds []string, objects ...map[string]any) *sync.Request {
	t.Helper()
	parent := map[string]any{"apiVersion": "example.com/v1", "kind": "WebApp", "metadata": map[string]any{"name": p.Name, "namespace": p.Namespace, "generation": p.Generation}, "spec": p.Spec}
	rel := map[string]map[string]any{}
	for _, k := range kinds {
		rel[k] = map[string]any{}
	}
	for _, o := range objects {
		apiVersion, kind, namespace, name := hooktest.Identity(o)
		if rel[kind+"."+apiVersion] == nil {
			rel[kind+"."+apiVersion] = map[string]any{}
		}
		rel[kind+"."+apiVersion][namespace+"/"+name] = o
	}
	groups := map[string]map[string]any{}
	for _, c := range children {
		var o map[string]any
		roundTrip(t, c, &o)
		apiVersion, kind, namespace, name := hooktest.Identity(o)
		if groups[kind+"."+apiVersion] == nil {
			groups[kind+"."+apiVersion] = map[string]any{}
		}
		groups[kind+"."+apiVersion][namespace+"/"+name] = o
	}
	body, err := json.Marshal(map[string]any{"parent": parent, "children": groups, "related": rel})
	if err != nil {
		t.Fatal(err)
	}
	req, err := wire.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// applied is what the apiserver shows of an answer's children once applied, the Deployment with
// its pods running (status) and the given conditions.
func applied(t *testing.T, resp sync.Response, replicas int32, conds ...appsv1.DeploymentCondition) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for _, c := range resp.Children {
		var status any
		if _, ok := c.(*appsv1.Deployment); ok {
			status = depStatus(1, replicas, replicas, 0, 0, conds...)
		}
		out = append(out, observe(t, c, 1, status).Raw)
	}
	return out
}

// TestDiagnosis checks that pods of the current spec that cannot start make the WebApp Degraded
// at once, with their reason and a stable message, that old pods still serving do not, and that
// the status recovers with the pods.
func TestDiagnosis(t *testing.T) {
	p := webapp(func(p *sync.Parent) { p.Spec.Image = "registry.example.com/app:v2" })
	kinds := []string{"Pod.v1"}
	// The Deployment controller names the ReplicaSet of the current spec in its Progressing
	// condition; the pods of that ReplicaSet are the current ones.
	progressing := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "ReplicaSetUpdated", Message: `ReplicaSet "hello-new" is progressing.`}
	children := applied(t, sync.Sync(&sync.Request{Parent: p}, now), 3, progressing)
	running := corev1.ContainerStatus{Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	waiting := func(reason, message string) corev1.ContainerStatus {
		return corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
	}
	crashing := corev1.ContainerStatus{RestartCount: 4,
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 40s restarting failed container=app pod=hello-new-1_default(uid)"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}
	crashingLater := crashing
	crashingLater.RestartCount = 5
	crashingLater.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 1m20s restarting failed container=app pod=hello-new-1_default(uid)"}
	unschedulable := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."}
	old := []map[string]any{pod("hello-old-1", "hello-old", 1, "registry.example.com/app:v1", running), pod("hello-old-2", "hello-old", 2, "registry.example.com/app:v1", running)}
	pull := waiting("ImagePullBackOff", `Back-off pulling image "registry.example.com/app:v2": ErrImagePull: failed to pull and unpack image "registry.example.com/app:v2": not found`)
	tests := []struct {
		name         string
		objects      []map[string]any
		wantPhase    webappv1.Phase
		wantReason   string
		wantMessage  string
		wantRestarts int32
	}{
		{"image pull back-off beside old pods still serving", append(slices.Clone(old), pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", pull)),
			webappv1.PhaseDegraded, "ImagePullBackOff", `1 of 1 current pod cannot start: ImagePullBackOff: Back-off pulling image "registry.example.com/app:v2": ErrImagePull: failed to pu….`, 0},
		{"2 of 3 new pods cannot pull", []map[string]any{pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", pull), pod("hello-new-2", "hello-new", 11, "registry.example.com/app:v2", pull), pod("hello-new-3", "hello-new", 12, "registry.example.com/app:v2", running)},
			webappv1.PhaseDegraded, "ImagePullBackOff", "2 of 3 current pods cannot start: ImagePullBackOff", 0},
		{"invalid image name", []map[string]any{pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", waiting("InvalidImageName", `couldn't parse image name "registry.example.com/app:v2": invalid reference format`))},
			webappv1.PhaseDegraded, "InvalidImageName", "InvalidImageName: couldn't parse image name", 0},
		{"err image pull", []map[string]any{pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", waiting("ErrImagePull", "rpc error: code = NotFound"))},
			webappv1.PhaseDegraded, "ErrImagePull", "ErrImagePull: rpc error: code = NotFound.", 0},
		// containerd's message, as the real node's kubelet passes it on: the gRPC prefix goes, so
		// that the quoted start names the image.
		{"err image pull from containerd", []map[string]any{pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", waiting("ErrImagePull",
			`rpc error: code = NotFound desc = failed to pull and unpack image "registry.example.com/app:v2": failed to resolve reference "registry.example.com/app:v2": registry.example.com/app:v2: not found`))},
			webappv1.PhaseDegraded, "ErrImagePull", `1 of 1 current pod cannot start: ErrImagePull: failed to pull and unpack image "registry.example.com/app:v2": failed to resolve….`, 0},
		{"crash loop: the last exit, not the back-off", []map[string]any{pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", crashing)},
			webappv1.PhaseDegraded, "CrashLoopBackOff", "1 of 1 current pod cannot start: CrashLoopBackOff: container app exited with code 1 (Error).", 4},
		{"a missing key in a ConfigMap", []map[string]any{pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", waiting("CreateContainerConfigError", `couldn't find key LEVEL in ConfigMap default/app-config`))},
			webappv1.PhaseDegraded, "CreateContainerConfigError", "couldn't find key LEVEL in ConfigMap default/app-config.", 0},
		{"create container error", []map[string]any{pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", waiting("CreateContainerError", "context deadline exceeded"))},
			webappv1.PhaseDegraded, "CreateContainerError", "CreateContainerError: context deadline exceeded.", 0},
		{"unschedulable", []map[string]any{pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", corev1.ContainerStatus{}, unschedulable)},
			webappv1.PhaseDegraded, "Unschedulable", "Unschedulable: 0/3 nodes are available: 3 Insufficient cpu.", 0},
		{"stuck old pods are not the new pods' problem", []map[string]any{pod("hello-old-1", "hello-old", 1, "registry.example.com/app:v1", crashing), pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", running)},
			webappv1.PhaseProgressing, webappv1.ReasonRolloutInProgress, "Rollout in progress", 0},
		{"recovered", []map[string]any{pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", running)},
			webappv1.PhaseProgressing, webappv1.ReasonRolloutInProgress, "Rollout in progress", 0},
		{"several reasons: the most common one", []map[string]any{pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", crashing), pod("hello-new-2", "hello-new", 11, "registry.example.com/app:v2", pull), pod("hello-new-3", "hello-new", 12, "registry.example.com/app:v2", pull)},
			webappv1.PhaseDegraded, "ImagePullBackOff", "2 of 3 current pods cannot start: ImagePullBackOff: Back-off pulling image \"registry.example.com/app:v2\": ErrImagePull: failed to pu…. 1 more pod cannot start for another reason.", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := withRelated(t, p, children, kinds, tt.objects...)
			resp := checkedSync(t, req)
			st := resp.Status
			checkReady(t, st, tt.wantPhase, tt.wantReason, tt.wantMessage)
			if st.Restarts != tt.wantRestarts {
				t.Errorf("restarts = %d; want %d", st.Restarts, tt.wantRestarts)
			}
		})
	}

	t.Run("the message stays the same while the back-off grows", func(t *testing.T) {
		first := sync.Sync(withRelated(t, p, children, kinds, pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", crashing)), now).Status
		later := sync.Sync(withRelated(t, p, children, kinds, pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", crashingLater)), now).Status
		if first.Message != later.Message {
			t.Errorf("message changed from %q to %q; want it stable", first.Message, later.Message)
		}
		if later.Restarts != 5 {
			t.Errorf("restarts = %d; want 5", later.Restarts)
		}
	})

	t.Run("before the Deployment carries the current spec, no pod is of it", func(t *testing.T) {
		stale := applied(t, sync.Sync(&sync.Request{Parent: webapp(func(p *sync.Parent) { p.Spec.Image = "registry.example.com/app:v1" })}, now), 3)
		st := sync.Sync(withRelated(t, p, stale, kinds, pod("hello-old-1", "hello-old", 1, "registry.example.com/app:v1", crashing)), now).Status
		if st.Phase != webappv1.PhaseProgressing || !strings.Contains(st.Message, "to be updated to the current spec") {
			t.Errorf("phase %q, message %q; want Progressing, waiting for the update", st.Phase, st.Message)
		}
	})

	t.Run("which pods are current", func(t *testing.T) {
		// An old pod on the current image: a rollback, or an edit that kept the image.
		sameImageOld := pod("hello-old-9", "hello-old", 1, "registry.example.com/app:v2", crashing)
		newPull := pod("hello-new-1", "hello-new", 10, "registry.example.com/app:v2", pull)
		behind := appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable", Message: `ReplicaSet "hello-old" has successfully progressed.`}
		for _, tt := range []struct {
			name     string
			children []json.RawMessage
			objects  []map[string]any
			want     string
		}{
			{"the named ReplicaSet's pods on the spec's image", children, []map[string]any{sameImageOld, newPull}, "1 of 1 current pod cannot start: ImagePullBackOff"},
			{"an old image is never current", children, []map[string]any{pod("hello-new-2", "hello-new", 10, "registry.example.com/app:v1", pull)}, "Rollout in progress"},
			{"no ReplicaSet named: the pods on the spec's image", applied(t, sync.Sync(&sync.Request{Parent: p}, now), 3), []map[string]any{sameImageOld, newPull}, "1 of 2 current pods cannot start"},
			{"a name not of this Deployment is not taken", applied(t, sync.Sync(&sync.Request{Parent: p}, now), 3, appsv1.DeploymentCondition{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Message: `ReplicaSet "other-1" is progressing.`}), []map[string]any{sameImageOld, newPull}, "1 of 2 current pods cannot start"},
			{"a Deployment controller behind the spec names an old ReplicaSet: not taken", observedAt(t, p, 2, 1, behind), []map[string]any{sameImageOld, newPull}, "1 of 2 current pods cannot start"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				st := sync.Sync(withRelated(t, p, tt.children, kinds, tt.objects...), now).Status
				if !strings.Contains(st.Message, tt.want) {
					t.Errorf("message %q; want it to contain %q", st.Message, tt.want)
				}
			})
		}
	})
}

// observedAt is the answer's Deployment for p as the apiserver shows it at generation, with the
// Deployment controller's status for observedGeneration.
func observedAt(t *testing.T, p sync.Parent, generation, observedGeneration int64, conds ...appsv1.DeploymentCondition) []json.RawMessage {
	t.Helper()
	d := childOf[*appsv1.Deployment](sync.Sync(&sync.Request{Parent: p}, now).Children)
	return []json.RawMessage{observe(t, d, generation, depStatus(observedGeneration, 3, 0, 0, 0, conds...)).Raw}
}

// TestConfig checks the config hash on the pod template and missing references.
func TestConfig(t *testing.T) {
	envFrom := func(mods ...func(*sync.Parent)) sync.Parent {
		return webapp(append([]func(*sync.Parent){func(p *sync.Parent) {
			p.Spec.EnvFrom = []corev1.EnvFromSource{
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}},
				{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-secret"}}},
			}
		}}, mods...)...)
	}
	kinds := []string{"ConfigMap.v1", "Secret.v1"}
	cm := configObject("ConfigMap", "app-config", "uid-cm", map[string]string{"LEVEL": "info"}, nil)
	secret := configObject("Secret", "app-secret", "uid-secret", map[string]string{"TOKEN": "c2VjcmV0"}, nil)
	hash := func(p sync.Parent, objects ...map[string]any) string {
		t.Helper()
		return configHashOf(sync.Sync(withRelated(t, p, nil, kinds, objects...), now))
	}
	base := hash(envFrom(), cm, secret)
	t.Run("the hash changes with the data, and only with it", func(t *testing.T) {
		for _, tt := range []struct {
			name    string
			objects []map[string]any
			same    bool
		}{
			{"same objects", []map[string]any{cm, secret}, true},
			{"a label on the ConfigMap", []map[string]any{configObject("ConfigMap", "app-config", "uid-cm", map[string]string{"LEVEL": "info"}, map[string]string{"team": "a"}), secret}, true},
			{"ConfigMap data", []map[string]any{configObject("ConfigMap", "app-config", "uid-cm", map[string]string{"LEVEL": "debug"}, nil), secret}, false},
			{"Secret data", []map[string]any{cm, configObject("Secret", "app-secret", "uid-secret", map[string]string{"TOKEN": "b3RoZXI="}, nil)}, false},
			{"a Secret made again under the same name", []map[string]any{cm, configObject("Secret", "app-secret", "uid-secret-2", map[string]string{"TOKEN": "c2VjcmV0"}, nil)}, false},
		} {
			if got := hash(envFrom(), tt.objects...); (got == base) != tt.same || got == "" {
				t.Errorf("%s: hash %q, before %q; want them %s", tt.name, got, base, map[bool]string{true: "equal", false: "different"}[tt.same])
			}
		}
	})
	t.Run("the hash says nothing of the data", func(t *testing.T) {
		if strings.Contains(base, "c2VjcmV0") || len(base) != 32 {
			t.Errorf("hash %q; want 32 hex digits", base)
		}
	})
	tests := []struct {
		name        string
		parent      sync.Parent
		kinds       []string
		objects     []map[string]any
		wantHash    bool
		wantPhase   webappv1.Phase
		wantReason  string
		wantMessage string
	}{
		{"both there", envFrom(), kinds, []map[string]any{cm, secret}, true, webappv1.PhasePending, webappv1.ReasonDeploymentMissing, ""},
		{"the ConfigMap is missing", envFrom(), kinds, []map[string]any{secret}, false, webappv1.PhasePending, webappv1.ReasonConfigMapMissing, "Waiting for ConfigMap app-config, which spec.envFrom[0].configMapRef names, to exist before creating Deployment hello."},
		{"the Secret is missing", envFrom(), kinds, []map[string]any{cm}, false, webappv1.PhasePending, webappv1.ReasonSecretMissing, "Secret app-secret, which spec.envFrom[1].secretRef names"},
		{"an optional one may be missing", envFrom(func(p *sync.Parent) { p.Spec.EnvFrom[1].SecretRef.Optional = ptr(true) }), kinds, []map[string]any{cm}, true, webappv1.PhasePending, webappv1.ReasonDeploymentMissing, ""},
		{"restartOnConfigChange false: no hash", envFrom(func(p *sync.Parent) { p.Spec.RestartOnConfigChange = ptr(false) }), kinds, []map[string]any{cm, secret}, false, webappv1.PhasePending, webappv1.ReasonDeploymentMissing, ""},
		{"no customize hook: nothing is missing", envFrom(), nil, nil, false, webappv1.PhasePending, webappv1.ReasonDeploymentMissing, ""},
		{"env valueFrom alone: no hash, so nothing rolls on upgrade", webapp(func(p *sync.Parent) {
			p.Spec.Env = []corev1.EnvVar{{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}, Key: "LEVEL"}}}}
		}), kinds, []map[string]any{cm}, false, webappv1.PhasePending, webappv1.ReasonDeploymentMissing, ""},
		{"env valueFrom with restartOnConfigChange true", webapp(func(p *sync.Parent) {
			p.Spec.Env = []corev1.EnvVar{{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}, Key: "LEVEL"}}}}
			p.Spec.RestartOnConfigChange = ptr(true)
		}), kinds, []map[string]any{cm}, true, webappv1.PhasePending, webappv1.ReasonDeploymentMissing, ""},
		{"a volume's Secret is missing", webapp(func(p *sync.Parent) {
			p.Spec.Volumes = []webappv1.Volume{{Name: "tls", MountPath: "/tls", Secret: &corev1.SecretVolumeSource{SecretName: "tls"}}}
		}), kinds, nil, false, webappv1.PhasePending, webappv1.ReasonSecretMissing, "Secret tls, which spec.volumes[0].secret names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := withRelated(t, tt.parent, nil, tt.kinds, tt.objects...)
			resp := checkedSync(t, req)
			if got := configHashOf(resp) != ""; got != tt.wantHash {
				t.Errorf("config hash present = %v; want %v", got, tt.wantHash)
			}
			st := resp.Status
			checkReady(t, st, tt.wantPhase, tt.wantReason, tt.wantMessage)
			if missing := tt.wantReason == webappv1.ReasonConfigMapMissing || tt.wantReason == webappv1.ReasonSecretMissing; missing == slices.Contains(names(t, resp.Children), "Deployment/hello") {
				t.Errorf("children %v; want a Deployment exactly when nothing is missing", names(t, resp.Children))
			}
		})
	}

	t.Run("a missing ConfigMap leaves the running Deployment as it is", func(t *testing.T) {
		running := applied(t, sync.Sync(withRelated(t, envFrom(), nil, kinds, cm, secret), now), 3)
		changed := envFrom(func(p *sync.Parent) { p.Spec.Image = "nginx:1.28" })
		req := withRelated(t, changed, running, kinds, secret)
		resp := checkedSync(t, req)
		var dep map[string]any
		for _, c := range sentChildren(t, resp) {
			if c["kind"] == "Deployment" {
				dep = c
			}
		}
		if got := hooktest.Field(dep, "spec", "template", "spec", "containers", 0, "image"); got != "nginx:1.27" {
			t.Errorf("Deployment image = %v; want the running nginx:1.27, left as it is", got)
		}
		if st := resp.Status; st.Phase != webappv1.PhaseDegraded || st.Conditions[0].Reason != webappv1.ReasonConfigMapMissing || !strings.Contains(st.Message, "Deployment hello is left as it is") {
			t.Errorf("phase %q, reason %q, message %q; want Degraded, ConfigMapMissing", st.Phase, st.Conditions[0].Reason, st.Message)
		}
	})

	// What Metacontroller sends: ConfigMaps with a customize hook, Secrets too over TLS.
	installs := []struct {
		name  string
		kinds []string
	}{
		{"TLS: ConfigMaps and Secrets sent", kinds},
		{"plain HTTP: ConfigMaps sent, Secrets not", []string{"ConfigMap.v1"}},
		{"Secrets sent, ConfigMaps not", []string{"Secret.v1"}},
		{"no customize hook: neither sent", nil},
	}
	// sent keeps the objects of the kinds an install sends.
	sent := func(kinds []string, objects ...map[string]any) []map[string]any {
		var out []map[string]any
		for _, o := range objects {
			if slices.Contains(kinds, o["kind"].(string)+".v1") {
				out = append(out, o)
			}
		}
		return out
	}
	cmEdited := configObject("ConfigMap", "app-config", "uid-cm", map[string]string{"LEVEL": "debug"}, nil)
	secretEdited := configObject("Secret", "app-secret", "uid-secret", map[string]string{"TOKEN": "b3RoZXI="}, nil)
	// steady is the Deployment an install settles on: made from the first answer, applied, synced
	// again; it checks that the second answer asks for the same pod template.
	steady := func(t *testing.T, kinds []string, objects ...map[string]any) ([]json.RawMessage, string) {
		t.Helper()
		first := validSync(t, withRelated(t, envFrom(), nil, kinds, sent(kinds, objects...)...))
		second := validSync(t, withRelated(t, envFrom(), applied(t, first, 3), kinds, sent(kinds, objects...)...))
		if a, b := configHashOf(first), configHashOf(second); a != b {
			t.Fatalf("config hash %q, then %q once applied; want a fixed point", a, b)
		}
		return applied(t, second, 3), configHashOf(second)
	}
	t.Run("each kind sent or not, each edited or not", func(t *testing.T) {
		for _, in := range installs {
			sendsCM, sendsSecret := slices.Contains(in.kinds, "ConfigMap.v1"), slices.Contains(in.kinds, "Secret.v1")
			running, hash := steady(t, in.kinds, cm, secret)
			if got, want := hash != "", sendsCM || sendsSecret; got != want {
				t.Errorf("%s: config hash %q; want one: %v", in.name, hash, want)
			}
			for _, edit := range []struct {
				name           string
				cm, secret     bool
				configMap, sec map[string]any
			}{
				{"nothing edited", false, false, cm, secret},
				{"the ConfigMap edited", true, false, cmEdited, secret},
				{"the Secret edited", false, true, cm, secretEdited},
				{"both edited", true, true, cmEdited, secretEdited},
			} {
				t.Run(in.name+"/"+edit.name, func(t *testing.T) {
					resp := checkedSync(t, withRelated(t, envFrom(), running, in.kinds, sent(in.kinds, edit.configMap, edit.sec)...))
					got := configHashOf(resp) != hash
					want := edit.cm && sendsCM || edit.secret && sendsSecret
					if got != want {
						t.Errorf("pods roll (config hash %q -> %q): %v; want %v: only the data of a kind sent rolls them", hash, configHashOf(resp), got, want)
					}
					tracked := conditionOf(resp.Status, webappv1.ConditionSecretsTracked)
					if (tracked != "") == sendsSecret {
						t.Errorf("SecretsTracked condition %q; want one exactly when no Secret is sent", tracked)
					}
					if r := resp.Status.Conditions[0].Reason; r != webappv1.ReasonRolloutInProgress && r != webappv1.ReasonRolloutComplete {
						t.Errorf("Ready reason %q; want the rollout's, the rest working", r)
					}
					if got {
						// The rolled Deployment, applied, is a fixed point: one roll per edit.
						again := validSync(t, withRelated(t, envFrom(), applied(t, resp, 3), in.kinds, sent(in.kinds, edit.configMap, edit.sec)...))
						if h := configHashOf(again); h != configHashOf(resp) {
							t.Errorf("config hash %q, then %q; want the rolled one kept", configHashOf(resp), h)
						}
					}
				})
			}
		}
	})

	t.Run("Secrets not sent: the status says which, and points to TLS", func(t *testing.T) {
		resp := checkedSync(t, withRelated(t, envFrom(), nil, []string{"ConfigMap.v1"}, cm))
		var got *metav1.Condition
		for i, c := range resp.Status.Conditions {
			if c.Type == webappv1.ConditionSecretsTracked {
				got = &resp.Status.Conditions[i]
			}
		}
		if got == nil || got.Status != metav1.ConditionFalse || got.Reason != webappv1.ReasonSecretsNeedTLS || !strings.Contains(got.Message, "Secret app-secret do not roll the pods") || !strings.Contains(got.Message, "metacontroller/secure") {
			t.Errorf("SecretsTracked = %+v; want False, SecretsNeedTLS, naming the Secret and the TLS install", got)
		}
	})

	t.Run("a change of install or of hook", func(t *testing.T) {
		plain, tls := installs[1].kinds, installs[0].kinds
		for _, tt := range []struct {
			name     string
			from, to []string
			// older: the Deployment was made by a hook without AnnotationPartialConfigHash.
			older bool
			want  bool // the pods roll once
		}{
			{"an upgrade of the hook over plain HTTP", plain, plain, true, false},
			{"TLS to plain HTTP", tls, plain, false, false},
			{"plain HTTP to TLS: the hash covers the Secrets too", plain, tls, false, true},
			{"the customize hook removed", tls, nil, false, false},
		} {
			t.Run(tt.name, func(t *testing.T) {
				running, hash := steady(t, tt.from, cm, secret)
				if tt.older {
					running, hash = steady(t, nil, cm, secret) // what the older hook made: no hash at all
				}
				resp := checkedSync(t, withRelated(t, envFrom(), running, tt.to, sent(tt.to, cm, secret)...))
				if got := configHashOf(resp) != hash; got != tt.want {
					t.Errorf("config hash %q -> %q: pods roll %v; want %v", hash, configHashOf(resp), got, tt.want)
				}
				// Then, on the new install, a ConfigMap edit rolls the pods, once.
				running = applied(t, resp, 3)
				before := configHashOf(resp)
				edited := validSync(t, withRelated(t, envFrom(), running, tt.to, sent(tt.to, cmEdited, secret)...))
				if rolled := configHashOf(edited) != before; rolled != (tt.to != nil) {
					t.Errorf("after the change, a ConfigMap edit: config hash %q -> %q; want a roll: %v", before, configHashOf(edited), tt.to != nil)
				}
			})
		}
	})

	t.Run("the partial digest is on the Deployment only while some tracked kinds are sent and some not", func(t *testing.T) {
		for _, in := range installs {
			resp := validSync(t, withRelated(t, envFrom(), nil, in.kinds, sent(in.kinds, cm, secret)...))
			d := childOf[*appsv1.Deployment](resp.Children)
			_, got := d.Annotations[sync.AnnotationPartialConfigHash]
			if want := in.name == installs[1].name || in.name == installs[2].name; got != want {
				t.Errorf("%s: Deployment annotations %v; want %s: %v", in.name, d.Annotations, sync.AnnotationPartialConfigHash, want)
			}
			if _, ok := d.Spec.Template.Annotations[sync.AnnotationPartialConfigHash]; ok {
				t.Errorf("%s: pod template annotations %v; want no %s there", in.name, d.Spec.Template.Annotations, sync.AnnotationPartialConfigHash)
			}
		}
	})

	t.Run("without a customize hook the pod template keeps its hash", func(t *testing.T) {
		running := applied(t, sync.Sync(withRelated(t, envFrom(), nil, kinds, cm, secret), now), 3)
		got := configHashOf(sync.Sync(withRelated(t, envFrom(), running, nil), now))
		if got != base {
			t.Errorf("config hash %q; want the observed %q, kept", got, base)
		}
	})
}

// TestCustomize checks the customize answer: narrow rules, names from every reference, nothing
// but the parent read.
func TestCustomize(t *testing.T) {
	p := webapp(func(p *sync.Parent) {
		p.Namespace = "shop"
		p.Spec.Env = []corev1.EnvVar{
			{Name: "A", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "z-config"}, Key: "a"}}},
			{Name: "B", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "b"}}},
		}
		p.Spec.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "a-config"}}}}
		p.Spec.Volumes = []webappv1.Volume{
			{Name: "c", MountPath: "/c", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "a-config"}}},
			{Name: "s", MountPath: "/s", Secret: &corev1.SecretVolumeSource{SecretName: "certs"}},
		}
	})
	for _, tt := range []struct {
		name string
		opts sync.CustomizeOptions
		want []string
	}{
		{"over plain HTTP: the ConfigMaps it references, by name, and no Secret", sync.CustomizeOptions{}, []string{"v1 configmaps [a-config z-config]"}},
		{"over TLS: the Secrets too", sync.CustomizeOptions{Secrets: true}, []string{"v1 configmaps [a-config z-config]", "v1 secrets [certs db]"}},
		{"with pod diagnosis: its pods too", sync.CustomizeOptions{Pods: true, Secrets: true}, []string{"v1 pods []", "v1 configmaps [a-config z-config]", "v1 secrets [certs db]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rules []string
			for _, r := range sync.Customize(&p, tt.opts).RelatedResources {
				if r.Namespace != "shop" {
					t.Errorf("rule %+v; want the WebApp's namespace, never all of them", r)
				}
				if (r.LabelSelector != nil) == (len(r.Names) > 0) {
					t.Errorf("rule %+v; want a label selector or names, not both, not neither", r)
				}
				rules = append(rules, fmt.Sprintf("%s %s %v", r.APIVersion, r.Resource, r.Names))
			}
			if !slices.Equal(rules, tt.want) {
				t.Errorf("rules = %v; want %v", rules, tt.want)
			}
		})
	}
	invalid := webappJSON(`{"image": "nginx", "envFrom": [{"configMapRef": {"name": 7}}]}`)
	if got := len(sync.Customize(&invalid, sync.CustomizeOptions{Pods: true}).RelatedResources); got != 1 {
		t.Errorf("%d rules for a spec that did not decode, with pod diagnosis; want the pods only", got)
	}
	for _, tt := range []struct {
		opts sync.CustomizeOptions
		want string
	}{
		{sync.CustomizeOptions{}, `{"relatedResources":[]}`},
		{sync.CustomizeOptions{Pods: true}, `{"relatedResources":[{"apiVersion":"v1","resource":"pods","namespace":"n","labelSelector":{"matchLabels":`},
	} {
		plain := webapp(func(p *sync.Parent) { p.Name, p.Namespace = "a", "n" })
		b, _ := json.Marshal(sync.Customize(&plain, tt.opts))
		if !strings.HasPrefix(string(b), tt.want) {
			t.Errorf("customize answer with %+v = %s; want it to start %s", tt.opts, b, tt.want)
		}
	}
}

// TestChildInAnotherNamespace checks that a child named after the WebApp but in another namespace
// is not taken for the WebApp's own: with a ConfigMap missing, the Deployment in the WebApp's
// namespace is the one kept, and the other is kept as it is, once (the fuzzer found it kept twice).
func TestChildInAnotherNamespace(t *testing.T) {
	body := `{"parent": {"metadata": {"name": "hello", "namespace": "a"}, "spec": {"image": "nginx", "envFrom": [{"configMapRef": {"name": "cfg"}}]}},
		"children": {"Deployment.apps/v1": {"b/hello": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hello", "namespace": "b"}}}},
		"related": {"ConfigMap.v1": {}}}`
	req, err := wire.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	resp := sync.Sync(req, now)
	if err := hooktest.CheckResponse(req, resp); err != nil {
		t.Fatal(err)
	}
	if got := len(resp.Children); got != 1 {
		t.Errorf("%d children; want the Deployment in namespace b kept once", got)
	}
	if got := resp.Status.Conditions[0].Reason; got != webappv1.ReasonConfigMapMissing {
		t.Errorf("reason = %q; want %q", got, webappv1.ReasonConfigMapMissing)
	}
}

// checkReady checks a status's phase, its Ready condition's reason, and that its message contains
// message.
func checkReady(t *testing.T, st webappv1.WebAppStatus, phase webappv1.Phase, reason, message string) {
	t.Helper()
	if st.Phase != phase || st.Conditions[0].Reason != reason || !strings.Contains(st.Message, message) {
		t.Errorf("phase %q, reason %q, message %q; want %q, %q, %q", st.Phase, st.Conditions[0].Reason, st.Message, phase, reason, message)
	}
}

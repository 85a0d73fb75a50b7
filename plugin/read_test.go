package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/plugin/screen"
)

// storyHarness serves the seeded story name: its WebApp, Deployments and pods.
func storyHarness(t *testing.T, name string) (*harness, *screen.Recording) {
	t.Helper()
	rec := seeded(t, name)
	var objs []runtime.Object
	for i := range rec.Deployments {
		objs = append(objs, &rec.Deployments[i])
	}
	for i := range rec.Pods {
		objs = append(objs, &rec.Pods[i])
	}
	h := newHarness(t, []*webappv1.WebApp{&rec.WebApp}, objs...)
	h.now = rec.Now
	return h, rec
}

// render is the screen of a story.
func render(t *testing.T, s *screen.Story) string {
	t.Helper()
	var b bytes.Buffer
	if err := screen.Render(&b, s, screen.Options{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestGet: get reads the WebApp, its two Deployments and its pods, and shows the screen of
// what it read; what RBAC keeps from the user, the screen says it cannot show.
func TestGet(t *testing.T) {
	for _, name := range []string{"progressing", "paused", "promoting", "promoted", "aborted", "rolledback", "analysis-failed", "image-pull-backoff", "testers", "rollback-window"} {
		t.Run(name, func(t *testing.T) {
			h, rec := storyHarness(t, name)
			code, stdout, stderr := h.run("get", rec.WebApp.Name)
			if code != ExitOK || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if want := render(t, &rec.Story); stdout != want {
				t.Errorf("get shows:\n%s\nwant the screen of the story:\n%s", stdout, want)
			}
		})
	}
	t.Run("Deployments and pods forbidden", func(t *testing.T) {
		h, rec := storyHarness(t, "paused")
		h.refuse("get", "deployments", forbiddenErr("apps", "deployments", "get"))
		h.refuse("list", "pods", forbiddenErr("", "pods", "list"))
		code, stdout, stderr := h.run("get", "shop")
		if code != ExitOK || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		s := rec.Story
		s.Deployments, s.Pods = nil, nil
		s.Unread = map[string]string{
			"deployments": `you may not get deployments in namespace default: deployments.apps "shop" is forbidden: User "bob" cannot get resource "deployments" in API group "apps" in the namespace "default"`,
			"pods":        `you may not list pods in namespace default: pods "shop" is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"`,
		}
		if want := render(t, &s); stdout != want {
			t.Errorf("get shows:\n%s\nwant:\n%s", stdout, want)
		}
		for _, want := range []string{"Revisions: the Deployments cannot be read", "Pods: cannot be read", "Canary c138f6851b: Paused at step 3 of 3"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("get shows:\n%s\nwant it to hold %q", stdout, want)
			}
		}
	})
	for _, tc := range []struct {
		name     string
		args     []string
		refuse   *refusalOf
		wantCode int
		want     string // in stdout, or in stderr for an error
	}{
		{name: "-o json", args: []string{"get", "shop", "-o", "json"}, want: `"kind": "WebApp"`},
		{name: "-o yaml", args: []string{"get", "shop", "-o", "yaml"}, want: "kind: WebApp\n"},
		{name: "-o xml", args: []string{"get", "shop", "-o", "xml"}, wantCode: ExitUsage, want: `error: --output must be json or yaml, not "xml"`},
		{name: "not found", args: []string{"get", "cart"}, wantCode: ExitError, want: "error: webapp cart not found in namespace default\n"},
		{name: "the WebApp forbidden", args: []string{"get", "shop"}, refuse: &refusalOf{"get", "webapps", forbiddenErr("example.com", "webapps", "get")},
			wantCode: ExitForbidden, want: "error: you may not get webapps in namespace default: "},
		{name: "two names", args: []string{"get", "shop", "cart"}, wantCode: ExitUsage, want: "error: accepts 1 arg(s), received 2\n"},
		{name: "an unknown flag", args: []string{"get", "shop", "--frob"}, wantCode: ExitUsage, want: "error: unknown flag: --frob\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := storyHarness(t, "paused")
			if r := tc.refuse; r != nil {
				h.refuse(r.verb, r.resource, r.err)
			}
			code, stdout, stderr := h.run(tc.args...)
			out := stdout
			if tc.wantCode != ExitOK {
				out = stderr
			}
			if code != tc.wantCode || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout, stderr, tc.wantCode, tc.want)
			}
		})
	}
}

// TestGetWatch: get -w shows the screen, and again, after the separator, when the WebApp, a
// Deployment or a pod changes, until it is interrupted; then it exits 0.
func TestGetWatch(t *testing.T) {
	h, rec := storyHarness(t, "progressing")
	var stdout, stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	go func() { done <- h.main(&stdout, &stderr, "get", "shop", "-w").Run(ctx) }()

	screens := func() []string { return strings.Split(stdout.String(), Separator+"\n") }
	waitFor := func(what string, n int, holds string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if s := screens(); len(s) >= n && strings.Contains(s[n-1], holds) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no screen %d with %q (%s) in 10 s; stdout:\n%s\nstderr: %s", n, holds, what, stdout.String(), stderr.String())
			}
		}
	}
	waitFor("the first screen", 1, "held, 1m15s left")
	if first := screens()[0]; first != render(t, &rec.Story) {
		t.Errorf("first screen:\n%s\nwant:\n%s", first, render(t, &rec.Story))
	}

	// The hook moves the canary on: its WebApp changes.
	wa := rec.WebApp
	wa.Status.Canary.Step, wa.Status.Canary.PauseStartTime = 2, nil
	if _, err := h.dyn.Resource(WebApps).Namespace("default").Update(ctx, unstructuredOf(t, &wa), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the WebApp at step 3", 2, ">  3     50%     until promoted  weight moving into place")

	// A canary pod cannot start: a pod changes.
	var pod *corev1.Pod
	for i := range rec.Pods {
		if rec.Pods[i].Labels[webappv1.LabelTrack] == webappv1.TrackCanary {
			pod = rec.Pods[i].DeepCopy()
		}
	}
	pod.Name = "shop-canary-5b7f9c4d86-zzzzz"
	pod.Status.ContainerStatuses[0].Ready = false
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "nginx:1.28"`}}
	if _, err := h.kube.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the pod that cannot start", 3, "canary  shop-canary-5b7f9c4d86-zzzzz  0/1    ImagePullBackOff")

	// The canary Deployment scales: a Deployment changes.
	d, err := h.kube.AppsV1().Deployments("default").Get(ctx, "shop-canary", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d.Status.ReadyReplicas, d.Spec.Replicas = 0, ptr(int32(2))
	if _, err := h.kube.AppsV1().Deployments("default").Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the canary Deployment scaled", 4, "canary  c138f6851b  nginx:1.28  0/2 ready")

	cancel()
	select {
	case code := <-done:
		if code != ExitOK {
			t.Errorf("exit %d after the interrupt; want %d (stderr %q)", code, ExitOK, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("get -w did not end 10 s after its context did")
	}
	if n := len(screens()); n != 4 {
		t.Errorf("%d screens; want one for each change, 4:\n%s", n, stdout.String())
	}
}

// TestGetWatchTerminal: on a terminal, get -w clears the screen before each, with no separator.
func TestGetWatchTerminal(t *testing.T) {
	h, _ := storyHarness(t, "paused")
	var stdout, stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	m := h.main(&stdout, &stderr, "get", "shop", "-w")
	m.Terminal, m.NoColor = true, true
	done := make(chan int)
	go func() { done <- m.Run(ctx) }()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stdout.String(), "Pods"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no screen in 10 s: %q", stdout.String())
		}
	}
	cancel()
	<-done
	out := stdout.String()
	if !strings.HasPrefix(out, "\x1b[H\x1b[2J") || strings.Contains(out, Separator) || strings.Contains(out, "\x1b[3") {
		t.Errorf("terminal output %q; want the screen cleared first, no separator, no colour with NoColor", out[:min(len(out), 80)])
	}
}

func TestList(t *testing.T) {
	shop := webAppOf(t, "paused", nil)
	hello := webAppOf(t, "image-pull-backoff", nil)
	cart := webAppOf(t, "aborted", func(wa *webappv1.WebApp) { wa.Name, wa.Namespace = "cart", "prod" })
	for _, tc := range []struct {
		name     string
		args     []string
		refuse   *refusalOf
		wantCode int
		want     string // stdout, whole; stderr's start for an error
	}{
		{name: "the namespace's", args: []string{"list"}, want: `NAME   READY  PHASE        CANARY  STEP  WEIGHT  ANALYSIS  AGE
hello  3/3    Degraded     -       -     -       -         64m
shop   4/4    Progressing  Paused  3/3   50%     -         4m30s
`},
		{name: "all namespaces", args: []string{"list", "-A"}, want: `NAMESPACE  NAME   READY  PHASE        CANARY   STEP  WEIGHT  ANALYSIS  AGE
default    hello  3/3    Degraded     -        -     -       -         64m
default    shop   4/4    Progressing  Paused   3/3   50%     -         4m30s
prod       cart   4/4    Degraded     Aborted  3/3   50%     -         4m30s
`},
		{name: "another namespace", args: []string{"ls", "-n", "prod"}, want: `NAME  READY  PHASE     CANARY   STEP  WEIGHT  ANALYSIS  AGE
cart  4/4    Degraded  Aborted  3/3   50%     -         4m30s
`},
		{name: "an empty namespace", args: []string{"list", "-n", "empty"}, want: "No WebApps in namespace empty.\n"},
		{name: "forbidden", args: []string{"list", "-A"}, refuse: &refusalOf{"list", "webapps", forbiddenErr("example.com", "webapps", "list")},
			wantCode: ExitForbidden, want: "error: you may not list webapps in all namespaces: "},
		{name: "an argument", args: []string{"list", "shop"}, wantCode: ExitUsage, want: "error: accepts 0 arg(s), received 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, []*webappv1.WebApp{shop, hello, cart})
			if r := tc.refuse; r != nil {
				h.refuse(r.verb, r.resource, r.err)
			}
			code, stdout, stderr := h.run(tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit %d; want %d (stderr %q)", code, tc.wantCode, stderr)
			}
			if tc.wantCode == ExitOK && stdout != tc.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tc.want)
			}
			if tc.wantCode != ExitOK && !strings.HasPrefix(stderr, tc.want) {
				t.Errorf("stderr %q; want it to start with %q", stderr, tc.want)
			}
		})
	}
	t.Run("-o yaml", func(t *testing.T) {
		h := newHarness(t, []*webappv1.WebApp{shop})
		code, stdout, _ := h.run("list", "-o", "yaml")
		if code != ExitOK || !strings.Contains(stdout, "kind: WebAppList") || !strings.Contains(stdout, "name: shop") {
			t.Errorf("exit %d, stdout:\n%s\nwant a WebAppList holding shop", code, stdout)
		}
	})
}

func TestVersion(t *testing.T) {
	hook := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: HookDeployment, Namespace: HookNamespace},
		Spec: appsv1.DeploymentSpec{Replicas: ptr(int32(2)), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "hook", Image: "ghcr.io/example/webapp-hook@sha256:0123"}, {Name: "sidecar", Image: "busybox"},
		}}}},
		Status: appsv1.DeploymentStatus{ReadyReplicas: 2},
	}
	inChart := hook.DeepCopy()
	inChart.Namespace = "webapp-operator"
	for _, tc := range []struct {
		name    string
		objects []runtime.Object
		refuse  *refusalOf
		args    []string
		want    string
	}{
		{name: "the hook's image", objects: []runtime.Object{hook}, args: []string{"version"},
			want: "kubectl-webapp v0.1.0-test\nwebapp-hook ghcr.io/example/webapp-hook@sha256:0123 (Deployment webapp-system/webapp-hook, 2/2 ready)\n"},
		{name: "a Helm release's namespace", objects: []runtime.Object{inChart}, args: []string{"version", "--hook-namespace", "webapp-operator"},
			want: "kubectl-webapp v0.1.0-test\nwebapp-hook ghcr.io/example/webapp-hook@sha256:0123 (Deployment webapp-operator/webapp-hook, 2/2 ready)\n"},
		{name: "no hook there", args: []string{"version"},
			want: "kubectl-webapp v0.1.0-test\nwebapp-hook unknown: no Deployment webapp-hook in namespace webapp-system (a Helm release elsewhere? --hook-namespace)\n"},
		{name: "forbidden", objects: []runtime.Object{hook}, refuse: &refusalOf{"get", "deployments", forbiddenErr("apps", "deployments", "get")}, args: []string{"version"},
			want: "kubectl-webapp v0.1.0-test\nwebapp-hook unknown: you may not get deployments in namespace webapp-system: deployments.apps \"shop\" is forbidden: User \"bob\" cannot get resource \"deployments\" in API group \"apps\" in the namespace \"default\"\n"},
		{name: "the client only", objects: []runtime.Object{hook}, args: []string{"version", "--client"}, want: "kubectl-webapp v0.1.0-test\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil, tc.objects...)
			if r := tc.refuse; r != nil {
				h.refuse(r.verb, r.resource, r.err)
			}
			code, stdout, stderr := h.run(tc.args...)
			if code != ExitOK || stdout != tc.want || stderr != "" {
				t.Errorf("exit %d, stdout:\n%s\nstderr %q; want exit 0 and:\n%s", code, stdout, stderr, tc.want)
			}
		})
	}
	t.Run("unstamped: the build information", func(t *testing.T) {
		if v := pluginVersion(""); v == "" || v == "unknown" {
			t.Errorf("pluginVersion(\"\") = %q; want the build information's", v)
		}
	})
}

// TestCompletion: the WebApp names of the namespace complete the NAME of every command that
// takes one, and the shells' scripts are there.
func TestCompletion(t *testing.T) {
	shop, hello := webAppOf(t, "paused", nil), webAppOf(t, "image-pull-backoff", nil)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "get", ""}, "hello\nshop\n:4\n"},
		{[]string{"__complete", "promote", "s"}, "shop\n:4\n"},
		{[]string{"__complete", "undo", "-n", "prod", ""}, ":4\n"},
		{[]string{"__complete", "set", "image", "h"}, "hello\n:4\n"},
		{[]string{"__complete", "abort", "shop", ""}, ":4\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			h := newHarness(t, []*webappv1.WebApp{shop, hello})
			code, stdout, _ := h.run(tc.args...)
			if code != ExitOK || stdout != tc.want {
				t.Errorf("exit %d, stdout %q; want %q", code, stdout, tc.want)
			}
		})
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		t.Run(shell, func(t *testing.T) {
			code, stdout, _ := newHarness(t, nil).run("completion", shell)
			if code != ExitOK || !strings.Contains(stdout, "kubectl-webapp") {
				t.Errorf("completion %s: exit %d, %d bytes", shell, code, len(stdout))
			}
		})
	}
}

// TestExitCode: each kind of error has its code, wrapped or not.
func TestExitCode(t *testing.T) {
	gr := schema.GroupResource{Group: "example.com", Resource: "webapps"}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{refuse("nothing"), ExitRefused},
		{fmt.Errorf("undo: %w", refuse("nothing")), ExitRefused},
		{&usageError{errors.New("bad")}, ExitUsage},
		{&apiError{"patch", "webapps", "default", "shop", apierrors.NewForbidden(gr, "shop", errors.New("no"))}, ExitForbidden},
		{fmt.Errorf("undo reads: %w", &apiError{"get", "deployments", "default", "shop", apierrors.NewForbidden(gr, "shop", errors.New("no"))}), ExitForbidden},
		{&apiError{"get", "webapps", "default", "shop", apierrors.NewNotFound(gr, "shop")}, ExitError},
		{apierrors.NewForbidden(gr, "shop", errors.New("not ours")), ExitError}, // a Forbidden only counts from a call it names
		{errors.New("boom"), ExitError},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d; want %d", tc.err, got, tc.want)
		}
	}
}

// TestHelp: every command has help with examples, and exits 0.
func TestHelp(t *testing.T) {
	for _, cmd := range [][]string{{}, {"get"}, {"list"}, {"promote"}, {"abort"}, {"retry"}, {"undo"}, {"set", "image"}, {"version"}} {
		t.Run(strings.Join(cmd, " "), func(t *testing.T) {
			code, stdout, _ := newHarness(t, nil).run(append(cmd, "--help")...)
			if code != ExitOK || !strings.Contains(stdout, "Examples:\n  kubectl webapp ") {
				t.Errorf("exit %d, help:\n%s\nwant examples", code, stdout)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

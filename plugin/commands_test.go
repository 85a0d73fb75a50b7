package plugin

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// A commandCase runs one changing command against a WebApp of a seeded story.
type commandCase struct {
	name string
	// story names the seeded story whose WebApp, Deployments and pods the cluster holds; edit
	// changes its WebApp first.
	story string
	edit  func(*webappv1.WebApp)
	// noDeployments leaves the story's Deployments out of the cluster.
	noDeployments bool
	// refuse makes the API server refuse a verb on a resource with an error.
	refuse *refusalOf
	args   []string
	// wantCode is the exit code; wantStdout what is printed, whole; wantStderr a part of the
	// error's message; wantPatch the bodies of the patches sent, whole (none for a refusal).
	wantCode   int
	wantStdout string
	wantStderr string
	wantPatch  []string
}

// refusalOf is the API server's refusal of verb on resource.
type refusalOf struct {
	verb, resource string
	err            error
}

func (tc commandCase) run(t *testing.T) {
	t.Helper()
	rec := seeded(t, tc.story)
	wa := rec.WebApp
	if tc.edit != nil {
		tc.edit(&wa)
	}
	var objs []runtime.Object
	if !tc.noDeployments {
		for i := range rec.Deployments {
			objs = append(objs, &rec.Deployments[i])
		}
	}
	h := newHarness(t, []*webappv1.WebApp{&wa}, objs...)
	h.now = rec.Now
	if r := tc.refuse; r != nil {
		h.refuse(r.verb, r.resource, r.err)
	}
	code, stdout, stderr := h.run(tc.args...)
	if code != tc.wantCode {
		t.Errorf("exit code %d; want %d (stderr %q)", code, tc.wantCode, stderr)
	}
	if stdout != tc.wantStdout {
		t.Errorf("stdout:\n%q\nwant:\n%q", stdout, tc.wantStdout)
	}
	if !strings.Contains(stderr, tc.wantStderr) || (tc.wantStderr == "") != (stderr == "") {
		t.Errorf("stderr:\n%q\nwant it to hold:\n%q", stderr, tc.wantStderr)
	}
	if got := h.patches(); strings.Join(got, "\n") != strings.Join(tc.wantPatch, "\n") {
		t.Errorf("patches sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.wantPatch, "\n"))
	}
}

func stale(wa *webappv1.WebApp) { wa.Generation = wa.Status.ObservedGeneration + 1 }

func annotated(kv ...string) func(*webappv1.WebApp) {
	return func(wa *webappv1.WebApp) {
		if wa.Annotations == nil {
			wa.Annotations = map[string]string{}
		}
		for i := 0; i+1 < len(kv); i += 2 {
			wa.Annotations[kv[i]] = kv[i+1]
		}
	}
}

func TestPromote(t *testing.T) {
	for _, tc := range []commandCase{
		{name: "at step 2 of 3: on to step 3", story: "progressing", args: []string{"promote", "shop"},
			wantStdout: "webapp/shop: revision c138f6851b goes on to step 3 of 3 (50%): step 2 skipped\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/1"}}}`}},
		{name: "at the last step: promoted", story: "paused", args: []string{"promote", "shop"},
			wantStdout: "webapp/shop: promoting revision c138f6851b (step 3 of 3, the last, skipped)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/2"}}}`}},
		{name: "--full at step 2 of 3", story: "progressing", args: []string{"promote", "shop", "--full"},
			wantStdout: "webapp/shop: promoting revision c138f6851b fully (steps 2 to 3 of 3 skipped)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote":"c138f6851b"}}}`}},
		{name: "--full at the last step", story: "paused", args: []string{"promote", "--full", "shop"},
			wantStdout: "webapp/shop: promoting revision c138f6851b fully (step 3 of 3 skipped)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote":"c138f6851b"}}}`}},
		{name: "a leftover promote-step of another step does not stop it", story: "paused", edit: annotated(webappv1.AnnotationPromoteStep, "c138f6851b/1"), args: []string{"promote", "shop"},
			wantStdout: "webapp/shop: promoting revision c138f6851b (step 3 of 3, the last, skipped)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/2"}}}`}},
		{name: "in another namespace", story: "paused", edit: func(wa *webappv1.WebApp) { wa.Namespace = "prod" }, args: []string{"promote", "shop", "-n", "prod"},
			wantStdout: "webapp/shop: promoting revision c138f6851b (step 3 of 3, the last, skipped)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/2"}}}`}},

		{name: "refused: the step is already asked to end", story: "paused", edit: annotated(webappv1.AnnotationPromoteStep, "c138f6851b/2"), args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: step 3 of revision c138f6851b of webapp/shop is already asked to end (webapp.example.com/promote-step=c138f6851b/2); the hook has not acted on it yet\n"},
		{name: "refused: --full already asked", story: "paused", edit: annotated(webappv1.AnnotationPromote, "c138f6851b"), args: []string{"promote", "shop", "--full"},
			wantCode: ExitRefused, wantStderr: "refused: revision c138f6851b of webapp/shop is already asked to be promoted (webapp.example.com/promote=c138f6851b); the hook has not acted on it yet\n"},
		{name: "refused: being promoted", story: "promoting", args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: revision c138f6851b of webapp/shop is already being promoted: nothing to promote\n"},
		{name: "refused: promoted", story: "promoted", args: []string{"promote", "shop", "--full"},
			wantCode: ExitRefused, wantStderr: "refused: revision c138f6851b of webapp/shop is already promoted: nothing to promote (kubectl webapp set image starts a new canary)\n"},
		{name: "refused: aborted", story: "aborted", args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: revision c138f6851b of webapp/shop was aborted: nothing to promote (kubectl webapp retry shop starts it again)\n"},
		{name: "refused: rolled back", story: "rolledback", args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: revision c138f6851b of webapp/shop was rolled back: nothing to promote\n"},
		{name: "refused: the status is of an older spec", story: "paused", edit: stale, args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop's status is of generation 2 of its spec, which is at generation 3: the hook has not answered for the latest spec yet, and another revision may be on its way; try again in a moment\n"},
		{name: "refused: no canary in the spec", story: "image-pull-backoff", args: []string{"promote", "hello"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/hello has no canary: its spec asks for none (spec.rollout.canary)\n"},
		{name: "refused: no canary has started", story: "paused", edit: func(wa *webappv1.WebApp) { wa.Status.Canary = nil }, args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop has no canary yet: none has started (a new pod template starts one)\n"},
		{name: "refused: the spec asks for no canary any more", story: "paused", edit: func(wa *webappv1.WebApp) { wa.Spec.Rollout = nil }, args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop's spec asks for no canary any more (spec.rollout.canary): nothing to act on\n"},

		{name: "forbidden by RBAC", story: "paused", refuse: &refusalOf{"patch", "webapps", forbiddenErr("example.com", "webapps", "patch")}, args: []string{"promote", "shop"},
			wantCode: ExitForbidden, wantStderr: `error: you may not patch webapps in namespace default: webapps.example.com "shop" is forbidden: User "bob" cannot patch resource "webapps" in API group "example.com" in the namespace "default"` + "\n",
			wantPatch: []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/2"}}}`}},
		{name: "no such WebApp", story: "paused", args: []string{"promote", "cart"},
			wantCode: ExitError, wantStderr: "error: webapp cart not found in namespace default\n"},
		{name: "no name", story: "paused", args: []string{"promote"},
			wantCode: ExitUsage, wantStderr: "error: accepts 1 arg(s), received 0\n"},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestAbort(t *testing.T) {
	promotingWith := func(allTraffic time.Duration) func(*webappv1.WebApp) {
		return func(wa *webappv1.WebApp) {
			at := metav1.NewTime(time.Date(2026, 11, 29, 10, 5, 50, 0, time.UTC).Add(-allTraffic))
			w := int32(100)
			wa.Status.Canary.AllTrafficTime, wa.Status.Canary.Weight = &at, &w
		}
	}
	for _, tc := range []commandCase{
		{name: "at a timed step", story: "progressing", args: []string{"abort", "shop"},
			wantStdout: "webapp/shop: aborting revision c138f6851b (at step 2 of 3)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"}}}`}},
		{name: "paused", story: "paused", args: []string{"abort", "shop"},
			wantStdout: "webapp/shop: aborting revision c138f6851b (at step 3 of 3)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"}}}`}},
		{name: "promoting, before the canary has all the traffic", story: "promoting", args: []string{"abort", "shop"},
			wantStdout: "webapp/shop: aborting revision c138f6851b (while promoting)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"}}}`}},
		{name: "promoting, all the traffic for less than scaleDownDelaySeconds", story: "promoting", edit: promotingWith(5 * time.Second), args: []string{"abort", "shop"},
			wantStdout: "webapp/shop: aborting revision c138f6851b (while promoting)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"}}}`}},

		{name: "refused: promoting, past the point of abort", story: "promoting", edit: promotingWith(10 * time.Second), args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: revision c138f6851b of webapp/shop is being promoted past the point of abort: the canary has all the traffic and the stable Deployment takes its template (a new pod template starts a new canary)\n"},
		{name: "refused: already aborted", story: "aborted", args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: revision c138f6851b of webapp/shop is already aborted\n"},
		{name: "refused: already asked", story: "paused", edit: annotated(webappv1.AnnotationAbort, "c138f6851b"), args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: revision c138f6851b of webapp/shop is already asked to abort (webapp.example.com/abort=c138f6851b); the hook has not acted on it yet\n"},
		{name: "refused: promoted", story: "promoted", args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: revision c138f6851b of webapp/shop is already promoted: nothing to abort (kubectl webapp set image starts a new canary)\n"},
		{name: "refused: rolled back", story: "rolledback", args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: revision c138f6851b of webapp/shop was rolled back: nothing to abort\n"},
		{name: "refused: the status is of an older spec", story: "paused", edit: stale, args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "the hook has not answered for the latest spec yet"},
		{name: "forbidden by RBAC", story: "paused", refuse: &refusalOf{"patch", "webapps", forbiddenErr("example.com", "webapps", "patch")}, args: []string{"abort", "shop"},
			wantCode: ExitForbidden, wantStderr: "error: you may not patch webapps in namespace default: ",
			wantPatch: []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"}}}`}},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestRetry(t *testing.T) {
	retried := func(wa *webappv1.WebApp) { wa.Status.Canary.Retries = 1 }
	for _, tc := range []commandCase{
		{name: "the first retry, the leftover annotations removed", story: "aborted", args: []string{"retry", "shop"},
			wantStdout: "webapp/shop: retrying revision c138f6851b from step 1 (retry 1); removed the leftover webapp.example.com/abort\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":null,"webapp.example.com/promote":null,"webapp.example.com/promote-step":null,"webapp.example.com/retry":"c138f6851b"}}}`}},
		{name: "the second retry", story: "aborted", edit: func(wa *webappv1.WebApp) {
			retried(wa)
			annotated(webappv1.AnnotationRetry, "c138f6851b", webappv1.AnnotationPromote, "c138f6851b")(wa)
		}, args: []string{"retry", "shop"},
			wantStdout: "webapp/shop: retrying revision c138f6851b from step 1 (retry 2); removed the leftover webapp.example.com/abort, webapp.example.com/promote\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":null,"webapp.example.com/promote":null,"webapp.example.com/promote-step":null,"webapp.example.com/retry":"c138f6851b/2"}}}`}},
		{name: "aborted by failed checks: no leftover", story: "aborted", edit: func(wa *webappv1.WebApp) { wa.Annotations = nil }, args: []string{"retry", "shop"},
			wantStdout: "webapp/shop: retrying revision c138f6851b from step 1 (retry 1)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":null,"webapp.example.com/promote":null,"webapp.example.com/promote-step":null,"webapp.example.com/retry":"c138f6851b"}}}`}},

		{name: "refused: already asked", story: "aborted", edit: annotated(webappv1.AnnotationRetry, "c138f6851b"), args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: retry 1 of revision c138f6851b of webapp/shop is already asked for (webapp.example.com/retry=c138f6851b); the hook has not acted on it yet\n"},
		{name: "refused: not aborted", story: "paused", args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: revision c138f6851b of webapp/shop is Paused, not Aborted: nothing to retry\n"},
		{name: "refused: promoted", story: "promoted", args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: revision c138f6851b of webapp/shop is Promoted, not Aborted: nothing to retry\n"},
		{name: "refused: the status is of an older spec", story: "aborted", edit: stale, args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "the hook has not answered for the latest spec yet"},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestUndo(t *testing.T) {
	for _, tc := range []commandCase{
		{name: "mid-canary: the image back", story: "paused", args: []string{"undo", "shop"},
			wantStdout: "webapp/shop: rolling back from revision c138f6851b to b5751e67ae, the stable Deployment's (image nginx:1.28 -> nginx:1.27)\n",
			wantPatch:  []string{`{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.27"}}`}},
		{name: "aborted, an added variable too", story: "aborted", edit: func(wa *webappv1.WebApp) {
			wa.Spec.Env = append(wa.Spec.Env, envVar("LEVEL", "debug"))
		}, args: []string{"undo", "shop"},
			wantStdout: "webapp/shop: rolling back from revision 3bd98425bd to b5751e67ae, the stable Deployment's (image nginx:1.28 -> nginx:1.27; env)\n",
			wantPatch:  []string{`{"metadata":{"resourceVersion":"2053"},"spec":{"env":null,"image":"nginx:1.27"}}`}},

		{name: "refused: promoted, the spec asks for the stable template", story: "promoted", args: []string{"undo", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: nothing to undo: webapp/shop's spec already asks for revision c138f6851b, the template its stable Deployment runs\n"},
		{name: "refused: rolled back already", story: "rolledback", args: []string{"undo", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: nothing to undo: webapp/shop's spec already asks for revision b5751e67ae, the template its stable Deployment runs\n"},
		{name: "refused: a field undo does not restore differs", story: "paused", edit: func(wa *webappv1.WebApp) { wa.Spec.HealthCheck.Path = "/healthz" }, args: []string{"undo", "shop"},
			wantCode: ExitRefused, wantStderr: "the templates still differ in spec.template.spec.containers[0].readinessProbe, spec.template.spec.containers[0].startupProbe, which undo does not restore"},
		{name: "refused: no stable Deployment", story: "paused", noDeployments: true, args: []string{"undo", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop has no stable Deployment yet: nothing to roll back to\n"},
		{name: "forbidden: the stable Deployment cannot be read", story: "paused", refuse: &refusalOf{"get", "deployments", forbiddenErr("apps", "deployments", "get")}, args: []string{"undo", "shop"},
			wantCode: ExitForbidden, wantStderr: `error: undo reads the template the stable Deployment runs: you may not get deployments in namespace default: deployments.apps "shop" is forbidden`},
		{name: "the WebApp changed meanwhile", story: "paused", refuse: &refusalOf{"patch", "webapps", apierrors.NewConflict(schema.GroupResource{Group: "example.com", Resource: "webapps"}, "shop", nil)}, args: []string{"undo", "shop"},
			wantCode: ExitError, wantStderr: "error: webapp shop changed while this command read it; run it again to act on what it is now",
			wantPatch: []string{`{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.27"}}`}},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestSetImage(t *testing.T) {
	for _, tc := range []commandCase{
		{name: "a release with a canary", story: "promoted", args: []string{"set", "image", "shop", "nginx:1.29"},
			wantStdout: "webapp/shop: image nginx:1.28 -> nginx:1.29; a canary of the new template starts (kubectl webapp get shop -w follows it)\n",
			wantPatch:  []string{`{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.29"}}`}},
		{name: "a release without a canary", story: "image-pull-backoff", args: []string{"set", "image", "hello", "registry.example.com/shop:v2.4.1"},
			wantStdout: "webapp/hello: image registry.example.com/shop:v2.4.0 -> registry.example.com/shop:v2.4.1\n",
			wantPatch:  []string{`{"metadata":{"resourceVersion":"1200"},"spec":{"image":"registry.example.com/shop:v2.4.1"}}`}},
		{name: "refused: the same image", story: "promoted", args: []string{"set", "image", "shop", "nginx:1.28"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop's spec asks for image nginx:1.28 already: nothing to set\n"},
		{name: "forbidden by the admission policy", story: "promoted", refuse: &refusalOf{"patch", "webapps", apierrors.NewForbidden(schema.GroupResource{Group: "example.com", Resource: "webapps"}, "shop", errors.New("ValidatingAdmissionPolicy 'webapp-no-escalation' with binding 'webapp-no-escalation' denied request: …"))}, args: []string{"set", "image", "shop", "nginx:1.29"},
			wantCode: ExitForbidden, wantStderr: "error: you may not patch webapps in namespace default: webapps.example.com \"shop\" is forbidden: ValidatingAdmissionPolicy 'webapp-no-escalation'",
			wantPatch: []string{`{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.29"}}`}},
		{name: "no image", story: "promoted", args: []string{"set", "image", "shop"},
			wantCode: ExitUsage, wantStderr: "error: accepts 2 arg(s), received 1\n"},
		{name: "no field", story: "promoted", args: []string{"set"},
			wantCode: ExitUsage, wantStderr: "error: set needs a field: kubectl webapp set image NAME IMAGE\n"},
	} {
		t.Run(tc.name, tc.run)
	}
}

func envVar(name, value string) corev1.EnvVar { return corev1.EnvVar{Name: name, Value: value} }

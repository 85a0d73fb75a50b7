package plugin

import (
	"errors"
	"maps"
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

func ptrTo[T any](v T) *T { return &v }

// A commandCase runs one changing command against a WebApp of a seeded story.
type commandCase struct {
	name string
	// story names the seeded story whose WebApp, Deployments and pods the cluster holds; edit
	// changes its WebApp first.
	story string
	edit  func(*webappv1.WebApp)
	// noDeployments leaves the story's Deployments out of the cluster; objects adds to it.
	noDeployments bool
	objects       func(t *testing.T, rec *screen.Recording) []runtime.Object
	// refuse makes the API server refuse a verb on a resource with an error.
	refuse *refusalOf
	// conflict, when set, makes the first patch fail with a 409, the WebApp changed by it
	// meanwhile (harness.conflictOnce).
	conflict func(*webappv1.WebApp)
	args     []string
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
	if tc.objects != nil {
		objs = append(objs, tc.objects(t, rec)...)
	}
	h := newHarness(t, []*webappv1.WebApp{&wa}, objs...)
	h.now = rec.Now
	if r := tc.refuse; r != nil {
		h.refuse(r.verb, r.resource, r.err)
	}
	if tc.conflict != nil {
		h.conflictOnce(t, tc.conflict)
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

// attempt makes the WebApp's canary attempt n of its revision.
func attempt(n int32) func(*webappv1.WebApp) {
	return func(wa *webappv1.WebApp) { wa.Status.Canary.Attempt = n }
}

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
		{name: "blue-green at its preview: the switch", story: "blue-green", args: []string{"promote", "shop"},
			wantStdout: "webapp/shop in namespace default: promoting revision c138f6851b: all the traffic switches to it at once\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/0"},"resourceVersion":"5120"}}`}},
		{name: "blue-green, --full at its preview: the same switch", story: "blue-green", args: []string{"promote", "shop", "--full"},
			wantStdout: "webapp/shop in namespace default: promoting revision c138f6851b: all the traffic switches to it at once\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote":"c138f6851b"},"resourceVersion":"5120"}}`}},
		{name: "at step 2 of 3: on to step 3", story: "progressing", args: []string{"promote", "shop"},
			wantStdout: "webapp/shop in namespace default: revision c138f6851b goes on to step 3 of 3 (50%): step 2 skipped\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/1"},"resourceVersion":"2053"}}`}},
		{name: "at the last step: promoted", story: "paused", args: []string{"promote", "shop"},
			wantStdout: "webapp/shop in namespace default: promoting revision c138f6851b (step 3 of 3, the last, skipped)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/2"},"resourceVersion":"2053"}}`}},
		{name: "--full at step 2 of 3", story: "progressing", args: []string{"promote", "shop", "--full"},
			wantStdout: "webapp/shop in namespace default: promoting revision c138f6851b fully (steps 2 to 3 of 3 skipped)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote":"c138f6851b"},"resourceVersion":"2053"}}`}},
		{name: "--full at the last step", story: "paused", args: []string{"promote", "--full", "shop"},
			wantStdout: "webapp/shop in namespace default: promoting revision c138f6851b fully (step 3 of 3 skipped)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote":"c138f6851b"},"resourceVersion":"2053"}}`}},
		{name: "a leftover promote-step of another step does not stop it", story: "paused", edit: annotated(webappv1.AnnotationPromoteStep, "c138f6851b/1"), args: []string{"promote", "shop"},
			wantStdout: "webapp/shop in namespace default: promoting revision c138f6851b (step 3 of 3, the last, skipped)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/2"},"resourceVersion":"2053"}}`}},
		{name: "in another namespace", story: "paused", edit: func(wa *webappv1.WebApp) { wa.Namespace = "prod" }, args: []string{"promote", "shop", "-n", "prod"},
			wantStdout: "webapp/shop in namespace prod: promoting revision c138f6851b (step 3 of 3, the last, skipped)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/2"},"resourceVersion":"2053"}}`}},
		{name: "a later attempt of the revision: the values name it", story: "progressing", edit: attempt(2), args: []string{"promote", "shop"},
			wantStdout: "webapp/shop in namespace default: revision c138f6851b, attempt 2 goes on to step 3 of 3 (50%): step 2 skipped\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b@2/1"},"resourceVersion":"2053"}}`}},
		{name: "--full, a later attempt", story: "paused", edit: attempt(2), args: []string{"promote", "shop", "--full"},
			wantStdout: "webapp/shop in namespace default: promoting revision c138f6851b, attempt 2 fully (step 3 of 3 skipped)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote":"c138f6851b@2"},"resourceVersion":"2053"}}`}},
		{name: "the promote of an earlier attempt does not stop --full", story: "paused", edit: func(wa *webappv1.WebApp) {
			attempt(1)(wa)
			annotated(webappv1.AnnotationPromote, "c138f6851b")(wa)
		}, args: []string{"promote", "shop", "--full"},
			wantStdout: "webapp/shop in namespace default: promoting revision c138f6851b, attempt 1 fully (step 3 of 3 skipped)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/promote":"c138f6851b@1"},"resourceVersion":"2053"}}`}},
		{name: "the status written meanwhile, the step the same: the same patch again, on the new resourceVersion", story: "progressing",
			conflict: func(wa *webappv1.WebApp) { wa.Status.Canary.Message += " (written again)" }, args: []string{"promote", "shop"},
			wantStdout: "webapp/shop in namespace default: revision c138f6851b goes on to step 3 of 3 (50%): step 2 skipped\n",
			wantPatch: []string{
				`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/1"},"resourceVersion":"2053"}}`,
				`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/1"},"resourceVersion":"2054"}}`,
			}},

		{name: "refused: the canary moved on to the next step after it was read", story: "progressing",
			conflict: func(wa *webappv1.WebApp) { wa.Status.Canary.Step = 2 }, args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: the canary moved from step 2 to step 3 since it was read; nothing was changed: run the command again to act on it as it is now\n",
			wantPatch: []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/1"},"resourceVersion":"2053"}}`}},
		{name: "refused: promoted by someone else after it was read", story: "paused",
			conflict: func(wa *webappv1.WebApp) {
				wa.Status.Canary.Phase = webappv1.CanaryPromoting
				annotated(webappv1.AnnotationPromote, "c138f6851b")(wa)
			}, args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: the canary went from Paused to Promoting, and webapp.example.com/promote changed from \"\" to \"c138f6851b\" since it was read; nothing was changed: run the command again to act on it as it is now\n",
			wantPatch: []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/2"},"resourceVersion":"2053"}}`}},
		{name: "refused: the step is already asked to end", story: "paused", edit: annotated(webappv1.AnnotationPromoteStep, "c138f6851b/2"), args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: step 3 of revision c138f6851b is already asked to end (webapp.example.com/promote-step=c138f6851b/2); the hook has not acted on it yet\n"},
		{name: "refused: --full already asked", story: "paused", edit: annotated(webappv1.AnnotationPromote, "c138f6851b"), args: []string{"promote", "shop", "--full"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b is already asked to be promoted (webapp.example.com/promote=c138f6851b); the hook has not acted on it yet\n"},
		{name: "refused: being promoted", story: "promoting", args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b is already being promoted: nothing to promote\n"},
		{name: "refused: promoted", story: "promoted", args: []string{"promote", "shop", "--full"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b is already promoted: nothing to promote (kubectl webapp set image starts a new canary)\n"},
		{name: "refused: aborted", story: "aborted", args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b was aborted: nothing to promote (kubectl webapp retry shop starts it again)\n"},
		{name: "refused: rolled back", story: "rolledback", args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b was rolled back: nothing to promote\n"},
		{name: "refused: rolled back within the rollback window, no canary ran", story: "rollback-window", args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: no canary: the stable Deployment went back to revision b5751e67ae within the rollback window: nothing to promote (kubectl webapp set image starts a new canary)\n"},
		{name: "refused: the status is of an older spec", story: "paused", edit: stale, args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: its status is of generation 2 of its spec, which is at generation 3: the hook has not answered for the latest spec yet, and another revision may be on its way; try again in a moment\n"},
		{name: "refused: no canary in the spec", story: "image-pull-backoff", args: []string{"promote", "hello"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/hello in namespace default: no canary: its spec asks for none (spec.rollout.canary)\n"},
		{name: "refused: no canary has started", story: "paused", edit: func(wa *webappv1.WebApp) { wa.Status.Canary = nil }, args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: no canary yet: none has started (a new pod template starts one)\n"},
		{name: "refused: the spec asks for no canary any more", story: "paused", edit: func(wa *webappv1.WebApp) { wa.Spec.Rollout = nil }, args: []string{"promote", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: its spec asks for no canary any more (spec.rollout.canary): nothing to act on\n"},

		{name: "forbidden by RBAC", story: "paused", refuse: &refusalOf{"patch", "webapps", forbiddenErr("example.com", "webapps", "patch")}, args: []string{"promote", "shop"},
			wantCode: ExitForbidden, wantStderr: `error: you may not patch webapps in namespace default: webapps.example.com "shop" is forbidden: User "bob" cannot patch resource "webapps" in API group "example.com" in the namespace "default"` + "\n",
			wantPatch: []string{`{"metadata":{"annotations":{"webapp.example.com/promote-step":"c138f6851b/2"},"resourceVersion":"2053"}}`}},
		{name: "no such WebApp", story: "paused", args: []string{"promote", "cart"},
			wantCode: ExitError, wantStderr: "error: webapp cart not found in namespace default\n"},
		{name: "no name", story: "paused", args: []string{"promote"},
			wantCode: ExitUsage, wantStderr: "error: accepts 1 arg(s), received 0\n"},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestAbort(t *testing.T) {
	// switchedFor is promotingWith for the blue-green stories, seeded at 12:00:00.
	switchedFor := func(allTraffic time.Duration) func(*webappv1.WebApp) {
		return func(wa *webappv1.WebApp) {
			at := metav1.NewTime(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).Add(-allTraffic))
			w := int32(100)
			wa.Status.Canary.AllTrafficTime, wa.Status.Canary.Weight = &at, &w
		}
	}
	promotingWith := func(allTraffic time.Duration) func(*webappv1.WebApp) {
		return func(wa *webappv1.WebApp) {
			at := metav1.NewTime(time.Date(2026, 11, 29, 10, 5, 50, 0, time.UTC).Add(-allTraffic))
			w := int32(100)
			wa.Status.Canary.AllTrafficTime, wa.Status.Canary.Weight = &at, &w
		}
	}
	for _, tc := range []commandCase{
		{name: "blue-green at its preview", story: "blue-green", args: []string{"abort", "shop"},
			wantStdout: "webapp/shop in namespace default: aborting revision c138f6851b (at its preview)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"},"resourceVersion":"5120"}}`}},
		{name: "blue-green, switched for less than its scaleDownDelaySeconds (30): back at once", story: "blue-green-switch", edit: switchedFor(29 * time.Second), args: []string{"abort", "shop"},
			wantStdout: "webapp/shop in namespace default: aborting revision c138f6851b (while promoting: all the traffic goes back to the stable Deployment at once)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"},"resourceVersion":"5120"}}`}},
		{name: "refused: blue-green, switched for its scaleDownDelaySeconds", story: "blue-green-switch", edit: switchedFor(30 * time.Second), args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "is being promoted past the point of abort"},
		{name: "at a timed step", story: "progressing", args: []string{"abort", "shop"},
			wantStdout: "webapp/shop in namespace default: aborting revision c138f6851b (at step 2 of 3)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"},"resourceVersion":"2053"}}`}},
		{name: "paused", story: "paused", args: []string{"abort", "shop"},
			wantStdout: "webapp/shop in namespace default: aborting revision c138f6851b (at step 3 of 3)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"},"resourceVersion":"2053"}}`}},
		{name: "promoting, before the canary has all the traffic", story: "promoting", args: []string{"abort", "shop"},
			wantStdout: "webapp/shop in namespace default: aborting revision c138f6851b (while promoting)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"},"resourceVersion":"2053"}}`}},
		{name: "promoting, all the traffic for less than scaleDownDelaySeconds", story: "promoting", edit: promotingWith(5 * time.Second), args: []string{"abort", "shop"},
			wantStdout: "webapp/shop in namespace default: aborting revision c138f6851b (while promoting)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"},"resourceVersion":"2053"}}`}},

		{name: "refused: promoted by someone else after it was read", story: "paused",
			conflict: func(wa *webappv1.WebApp) { wa.Status.Canary.Phase = webappv1.CanaryPromoting }, args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: the canary went from Paused to Promoting since it was read; nothing was changed: run the command again to act on it as it is now\n",
			wantPatch: []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"},"resourceVersion":"2053"}}`}},
		{name: "refused: promoting, past the point of abort", story: "promoting", edit: promotingWith(10 * time.Second), args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b is being promoted past the point of abort: the canary has all the traffic and the stable Deployment takes its template (a new pod template starts a new canary)\n"},
		{name: "refused: already aborted", story: "aborted", args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b is already aborted\n"},
		{name: "refused: already asked", story: "paused", edit: annotated(webappv1.AnnotationAbort, "c138f6851b"), args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b is already asked to abort (webapp.example.com/abort=c138f6851b); the hook has not acted on it yet\n"},
		{name: "refused: promoted", story: "promoted", args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b is already promoted: nothing to abort (kubectl webapp set image starts a new canary)\n"},
		{name: "refused: rolled back", story: "rolledback", args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b was rolled back: nothing to abort\n"},
		{name: "refused: rolled back within the rollback window, no canary ran", story: "rollback-window", args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: no canary: the stable Deployment went back to revision b5751e67ae within the rollback window: nothing to abort (kubectl webapp set image starts a new canary)\n"},
		{name: "refused: the status is of an older spec", story: "paused", edit: stale, args: []string{"abort", "shop"},
			wantCode: ExitRefused, wantStderr: "the hook has not answered for the latest spec yet"},
		{name: "forbidden by RBAC", story: "paused", refuse: &refusalOf{"patch", "webapps", forbiddenErr("example.com", "webapps", "patch")}, args: []string{"abort", "shop"},
			wantCode: ExitForbidden, wantStderr: "error: you may not patch webapps in namespace default: ",
			wantPatch: []string{`{"metadata":{"annotations":{"webapp.example.com/abort":"c138f6851b"},"resourceVersion":"2053"}}`}},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestRetry(t *testing.T) {
	retried := func(wa *webappv1.WebApp) { wa.Status.Canary.Retries = 1 }
	for _, tc := range []commandCase{
		{name: "the first retry, the abort that names the aborted attempt removed", story: "aborted", args: []string{"retry", "shop"},
			wantStdout: "webapp/shop in namespace default: retrying revision c138f6851b from step 1 (retry 1); removed what the aborted attempt left: webapp.example.com/abort=c138f6851b\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":null,"webapp.example.com/retry":"c138f6851b"},"resourceVersion":"2053"}}`}},
		{name: "a second retry, as the hook's earlier versions counted it: /2", story: "aborted", edit: func(wa *webappv1.WebApp) {
			retried(wa)
			annotated(webappv1.AnnotationRetry, "c138f6851b", webappv1.AnnotationPromote, "c138f6851b", webappv1.AnnotationPromoteStep, "c138f6851b/1")(wa)
		}, args: []string{"retry", "shop"},
			wantStdout: "webapp/shop in namespace default: retrying revision c138f6851b from step 1 (retry 2); removed what the aborted attempt left: webapp.example.com/abort=c138f6851b, webapp.example.com/promote=c138f6851b, webapp.example.com/promote-step=c138f6851b/1\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":null,"webapp.example.com/promote":null,"webapp.example.com/promote-step":null,"webapp.example.com/retry":"c138f6851b/2"},"resourceVersion":"2053"}}`}},
		{name: "a later attempt: what names it is removed, what names an earlier one or another revision is left", story: "aborted", edit: func(wa *webappv1.WebApp) {
			attempt(1)(wa)
			wa.Status.Canary.Retries = 1
			annotated(webappv1.AnnotationAbort, "c138f6851b@1", webappv1.AnnotationPromote, "c138f6851b", webappv1.AnnotationPromoteStep, "b5751e67ae/0", webappv1.AnnotationRetry, "c138f6851b")(wa)
		}, args: []string{"retry", "shop"},
			wantStdout: "webapp/shop in namespace default: retrying revision c138f6851b, attempt 1 from step 1 (retry 2); removed what the aborted attempt left: webapp.example.com/abort=c138f6851b@1\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/abort":null,"webapp.example.com/retry":"c138f6851b@1"},"resourceVersion":"2053"}}`}},
		{name: "after a retry a hand wrote, webapp.example.com/retry=c138f6851b/1000000: the next names attempt 1, and reads back", story: "aborted", edit: func(wa *webappv1.WebApp) {
			attempt(1)(wa)
			wa.Status.Canary.Retries = 1000000
			annotated(webappv1.AnnotationRetry, "c138f6851b/1000000")(wa)
		}, args: []string{"retry", "shop"},
			wantStdout: "webapp/shop in namespace default: retrying revision c138f6851b, attempt 1 from step 1 (retry 1000001)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/retry":"c138f6851b@1"},"resourceVersion":"2053"}}`}},
		{name: "aborted by failed checks: nothing to remove", story: "aborted", edit: func(wa *webappv1.WebApp) { wa.Annotations = nil }, args: []string{"retry", "shop"},
			wantStdout: "webapp/shop in namespace default: retrying revision c138f6851b from step 1 (retry 1)\n",
			wantPatch:  []string{`{"metadata":{"annotations":{"webapp.example.com/retry":"c138f6851b"},"resourceVersion":"2053"}}`}},

		{name: "refused: already asked", story: "aborted", edit: annotated(webappv1.AnnotationRetry, "c138f6851b"), args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: retry 1 of revision c138f6851b is already asked for (webapp.example.com/retry=c138f6851b); the hook has not acted on it yet\n"},
		{name: "refused: already asked, in the form that names attempt 0", story: "aborted", edit: annotated(webappv1.AnnotationRetry, "c138f6851b@0"), args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: retry 1 of revision c138f6851b is already asked for (webapp.example.com/retry=c138f6851b@0); the hook has not acted on it yet\n"},
		{name: "refused: not aborted", story: "paused", args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b is Paused, not Aborted: nothing to retry\n"},
		{name: "refused: promoted", story: "promoted", args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b is Promoted, not Aborted: nothing to retry\n"},
		{name: "refused: rolled back within the rollback window, no canary ran", story: "rollback-window", args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: no canary: the stable Deployment went back to revision b5751e67ae within the rollback window: nothing to retry (kubectl webapp set image starts a new canary)\n"},
		{name: "refused: the status is of an older spec", story: "aborted", edit: stale, args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "the hook has not answered for the latest spec yet"},
		{name: "refused: as many attempts as a value can name", story: "aborted", edit: attempt(webappv1.MaxAnnotationNumber), args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: revision c138f6851b, attempt 9999999 has had 9999999 attempts, the most there may be: a new pod template starts a new canary\n"},
		{name: "refused: a retry count the value could not hold (one a hand wrote, webapp.example.com/retry=c138f6851b/9999999)", story: "aborted",
			edit: func(wa *webappv1.WebApp) { wa.Status.Canary.Retries = webappv1.MaxAnnotationNumber }, args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: webapp.example.com/retry=c138f6851b/10000000 would not be read: must be <revision>[@<attempt>] or <revision>/<n>\n"},
		{name: "refused: a new template started after it was read", story: "aborted",
			conflict: func(wa *webappv1.WebApp) {
				wa.Generation, wa.Status.ObservedGeneration = 3, 3
				wa.Status.Canary.Revision, wa.Status.Canary.Phase, wa.Status.Canary.Step = "5e0c7a9d21", webappv1.CanaryProgressing, 0
			}, args: []string{"retry", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: its spec changed (generation 2, now 3), and the canary went from revision c138f6851b to revision 5e0c7a9d21 since it was read; nothing was changed: run the command again to act on it as it is now\n",
			wantPatch: []string{`{"metadata":{"annotations":{"webapp.example.com/abort":null,"webapp.example.com/retry":"c138f6851b"},"resourceVersion":"2053"}}`}},
	} {
		t.Run(tc.name, tc.run)
	}
}

// history are the ReplicaSets of the stable Deployment of the story rec, as the Deployment
// controller keeps them after the promotion of the canary-paused example: revision 1 of the
// template it ran before (the paused story's, nginx:1.27), revision 2 of the one it runs; each
// carries the Deployment's annotations as they were when it was made, Metacontroller's
// last-applied one included.
func history(t *testing.T, rec *screen.Recording) []runtime.Object {
	t.Helper()
	before := seeded(t, "paused").Deployments[0]
	stable := rec.Deployments[0]
	rs := func(d appsv1.Deployment, n string, hash string) *appsv1.ReplicaSet {
		annotations := maps.Clone(d.Annotations)
		annotations["deployment.kubernetes.io/revision"] = n
		return &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: "shop-" + hash, Namespace: "default", Labels: stable.Spec.Template.Labels, Annotations: annotations,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "shop", UID: stable.UID, Controller: ptrTo(true)}}},
			Spec: appsv1.ReplicaSetSpec{Template: d.Spec.Template},
		}
	}
	other := rs(before, "3", "0ther0wner") // another owner's, newer: never read
	other.OwnerReferences[0].UID = "another"
	return []runtime.Object{rs(before, "1", "7c9d8f6b54"), rs(stable, "2", "6d5f7c8b9d"), other}
}

func TestUndo(t *testing.T) {
	window := func(revisions ...string) func(*webappv1.WebApp) {
		return func(wa *webappv1.WebApp) {
			wa.Spec.Rollout.Canary.RollbackWindow = &webappv1.RollbackWindow{Revisions: 1}
			wa.Status.Canary.StableRevisions = revisions
		}
	}
	for _, tc := range []commandCase{
		{name: "promoted: back to the revision the stable Deployment ran before, a canary of it", story: "promoted", objects: history, args: []string{"undo", "shop"},
			wantStdout: "webapp/shop in namespace default: rolling back from revision c138f6851b to b5751e67ae, the stable Deployment's before it (image nginx:1.28 -> nginx:1.27); a canary of it starts (spec.rollout.canary.rollbackWindow would skip it)\n",
			wantPatch:  []string{`{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.27"}}`}},
		{name: "promoted, within the rollback window: back without a canary", story: "promoted", objects: history, edit: window("c138f6851b", "b5751e67ae"), args: []string{"undo", "shop"},
			wantStdout: "webapp/shop in namespace default: rolling back from revision c138f6851b to b5751e67ae, the stable Deployment's before it (image nginx:1.28 -> nginx:1.27); within spec.rollout.canary.rollbackWindow: the stable Deployment goes back to it without a canary\n",
			wantPatch:  []string{`{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.27"}}`}},
		{name: "promoted, a rollback window set since: the revision before is outside it", story: "promoted", objects: history, edit: window("c138f6851b"), args: []string{"undo", "shop"},
			wantStdout: "webapp/shop in namespace default: rolling back from revision c138f6851b to b5751e67ae, the stable Deployment's before it (image nginx:1.28 -> nginx:1.27); outside spec.rollout.canary.rollbackWindow: a canary of it starts\n",
			wantPatch:  []string{`{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.27"}}`}},
		{name: "refused: the window's previous revision kept by no ReplicaSet", story: "promoted", objects: history, edit: window("c138f6851b", "0123456789"), args: []string{"undo", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: nothing to undo: its spec already asks for revision c138f6851b, the template its stable Deployment runs, and none of its ReplicaSets keeps an earlier template the hook applied\n"},
		{name: "forbidden: the ReplicaSets cannot be listed", story: "promoted", refuse: &refusalOf{"list", "replicasets", forbiddenErr("apps", "replicasets", "list")}, args: []string{"undo", "shop"},
			wantCode: ExitForbidden, wantStderr: "error: undo reads the templates the stable Deployment ran before, in its ReplicaSets: you may not list replicasets in namespace default"},
		{name: "mid-canary: the image back", story: "paused", args: []string{"undo", "shop"},
			wantStdout: "webapp/shop in namespace default: rolling back from revision c138f6851b to b5751e67ae, the stable Deployment's (image nginx:1.28 -> nginx:1.27)\n",
			wantPatch:  []string{`{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.27"}}`}},
		{name: "aborted, an added variable too", story: "aborted", edit: func(wa *webappv1.WebApp) {
			wa.Spec.Env = append(wa.Spec.Env, envVar("LEVEL", "debug"))
		}, args: []string{"undo", "shop"},
			wantStdout: "webapp/shop in namespace default: rolling back from revision 3bd98425bd to b5751e67ae, the stable Deployment's (image nginx:1.28 -> nginx:1.27; env)\n",
			wantPatch:  []string{`{"metadata":{"resourceVersion":"2053"},"spec":{"env":null,"image":"nginx:1.27"}}`}},

		{name: "refused: promoted, the spec asks for the stable template, and no ReplicaSet keeps an earlier one", story: "promoted", args: []string{"undo", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: nothing to undo: its spec already asks for revision c138f6851b, the template its stable Deployment runs, and none of its ReplicaSets keeps an earlier template the hook applied\n"},
		{name: "refused: rolled back already, and no ReplicaSet keeps an earlier template", story: "rolledback", args: []string{"undo", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: nothing to undo: its spec already asks for revision b5751e67ae, the template its stable Deployment runs, and none of its ReplicaSets keeps an earlier template the hook applied\n"},
		{name: "refused: a field undo does not restore differs", story: "paused", edit: func(wa *webappv1.WebApp) { wa.Spec.HealthCheck.Path = "/healthz" }, args: []string{"undo", "shop"},
			wantCode: ExitRefused, wantStderr: "the templates still differ in spec.template.spec.containers[0].readinessProbe, spec.template.spec.containers[0].startupProbe, which undo does not restore"},
		{name: "refused: no stable Deployment", story: "paused", noDeployments: true, args: []string{"undo", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: no stable Deployment yet: nothing to roll back to\n"},
		{name: "forbidden: the stable Deployment cannot be read", story: "paused", refuse: &refusalOf{"get", "deployments", forbiddenErr("apps", "deployments", "get")}, args: []string{"undo", "shop"},
			wantCode: ExitForbidden, wantStderr: `error: undo reads the template the stable Deployment runs: you may not get deployments in namespace default: deployments.apps "shop" is forbidden`},
		{name: "refused: the image changed after it was read", story: "paused", conflict: func(wa *webappv1.WebApp) { wa.Generation, wa.Spec.Image = 3, "nginx:1.29" }, args: []string{"undo", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: its spec changed (generation 2, now 3) since it was read; nothing was changed: run the command again to act on it as it is now\n",
			wantPatch: []string{`{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.27"}}`}},
		{name: "refused: it changed, again and again, while the command wrote it", story: "paused", refuse: &refusalOf{"patch", "webapps", apierrors.NewConflict(schema.GroupResource{Group: "example.com", Resource: "webapps"}, "shop", nil)}, args: []string{"undo", "shop"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: it changed 4 times while this command wrote it (resourceVersion 2053, now 2053); nothing was changed: run the command again\n",
			wantPatch: []string{
				`{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.27"}}`, `{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.27"}}`,
				`{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.27"}}`, `{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.27"}}`,
			}},
	} {
		t.Run(tc.name, tc.run)
	}
}

func TestSetImage(t *testing.T) {
	for _, tc := range []commandCase{
		{name: "a release with a canary", story: "promoted", args: []string{"set", "image", "shop", "nginx:1.29"},
			wantStdout: "webapp/shop in namespace default: image nginx:1.28 -> nginx:1.29; a canary of the new template starts (kubectl webapp get shop -w follows it)\n",
			wantPatch:  []string{`{"metadata":{"resourceVersion":"2053"},"spec":{"image":"nginx:1.29"}}`}},
		{name: "a blue-green release", story: "blue-green", args: []string{"set", "image", "shop", "nginx:1.29"},
			wantStdout: "webapp/shop in namespace default: image nginx:1.28 -> nginx:1.29; the new template's preview starts, at full size (kubectl webapp get shop -w follows it)\n",
			wantPatch:  []string{`{"metadata":{"resourceVersion":"5120"},"spec":{"image":"nginx:1.29"}}`}},
		{name: "a release without a canary", story: "image-pull-backoff", args: []string{"set", "image", "hello", "registry.example.com/shop:v2.4.1"},
			wantStdout: "webapp/hello in namespace default: image registry.example.com/shop:v2.4.0 -> registry.example.com/shop:v2.4.1\n",
			wantPatch:  []string{`{"metadata":{"resourceVersion":"1200"},"spec":{"image":"registry.example.com/shop:v2.4.1"}}`}},
		{name: "refused: the same image", story: "promoted", args: []string{"set", "image", "shop", "nginx:1.28"},
			wantCode: ExitRefused, wantStderr: "refused: webapp/shop in namespace default: its spec asks for image nginx:1.28 already: nothing to set\n"},
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

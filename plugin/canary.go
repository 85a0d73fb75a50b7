package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/spf13/cobra"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// The commands that act on a canary by an annotation of api/v1 that names its attempt:
// promote (webappv1.AnnotationPromoteStep, or AnnotationPromote with --full), abort
// (AnnotationAbort) and retry (AnnotationRetry). Each reads the WebApp, decides from it alone
// (a pure function: promotion, abortion, retrial), and patches its annotations once (change),
// on the condition that the WebApp is still the one it decided on.

// action is what a changing command decided: the merge patch to send, without the
// resourceVersion that change adds, and what to print once it is applied.
type action struct {
	patch map[string]any
	done  string
}

// annotations is the merge patch that sets annotations (a nil value removes one).
func annotations(a map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"annotations": a}}
}

// who names the WebApp wa in every message: "webapp/<name> in namespace <namespace>", as the get
// screen's first line does.
func who(wa *webappv1.WebApp) string {
	return "webapp/" + wa.Name + " in namespace " + wa.Namespace
}

// refuseOn is a refusal about wa: its message starts with who.
func refuseOn(wa *webappv1.WebApp, format string, args ...any) error {
	return refuse("%s: %s", who(wa), fmt.Sprintf(format, args...))
}

// maxRereads is how many times change reads the WebApp again after a conflict that left what it
// decided as it was (Metacontroller wrote the status meanwhile, say), and sends the same patch
// again, before it refuses.
const maxRereads = 3

// change runs a changing command on the WebApp name: it reads it, decides with decide (which may
// read more through the clients), sends the one patch with the resourceVersion it read
// (metadata.resourceVersion: the API server refuses it, 409, when the WebApp changed since), and
// prints what it did. After a conflict it reads the WebApp again and decides again: the same
// decision (the same patch, and the same account of it: the same step of the same revision, the
// same image replaced) is sent again with the new resourceVersion, up to maxRereads times; any
// other decision, or a refusal, is a refusal (exit 3) that says what changed since the first read.
func (r *runner) change(ctx context.Context, name string, decide func(context.Context, *Clients, *webappv1.WebApp) (*action, error)) error {
	c, err := r.clients()
	if err != nil {
		return err
	}
	read, err := c.webApp(ctx, name)
	if err != nil {
		return err
	}
	a, err := decide(ctx, c, read)
	if err != nil {
		return err
	}
	wa := read
	for rereads := 0; ; rereads++ {
		err := c.patch(ctx, name, preconditioned(a.patch, wa.ResourceVersion))
		if err == nil {
			_, err = fmt.Fprintln(r.m.Stdout, a.done)
			return err
		}
		if !conflict(err) {
			return err
		}
		now, err := c.webApp(ctx, name)
		if err != nil {
			return err
		}
		b, err := decide(ctx, c, now)
		var refused *refusal
		switch {
		case err != nil && !errors.As(err, &refused):
			return err
		case err != nil || !samePatch(a.patch, b.patch) || b.done != a.done:
			return refuseOn(now, "%s since it was read; nothing was changed: run the command again to act on it as it is now", strings.Join(changes(read, now), ", and "))
		case rereads == maxRereads:
			return refuseOn(now, "it changed %d times while this command wrote it (resourceVersion %s, now %s); nothing was changed: run the command again", maxRereads+1, read.ResourceVersion, now.ResourceVersion)
		}
		wa, a = now, b
	}
}

// preconditioned is patch with metadata.resourceVersion set to rv, in a copy: the API server
// applies it only to that version of the WebApp.
func preconditioned(patch map[string]any, rv string) map[string]any {
	out := maps.Clone(patch)
	meta, _ := out["metadata"].(map[string]any)
	meta = maps.Clone(meta)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["resourceVersion"] = rv
	out["metadata"] = meta
	return out
}

// samePatch reports whether two patches are the same, as sent.
func samePatch(a, b map[string]any) bool {
	x, errX := json.Marshal(a)
	y, errY := json.Marshal(b)
	return errX == nil && errY == nil && bytes.Equal(x, y)
}

// changes says what changed of the WebApp from was to now that a command decides from: its spec's
// generation, its canary's revision, attempt, phase and step, and its canary annotations; at
// least its resourceVersion.
func changes(was, now *webappv1.WebApp) []string {
	var out []string
	if was.Generation != now.Generation {
		out = append(out, fmt.Sprintf("its spec changed (generation %d, now %d)", was.Generation, now.Generation))
	}
	a, b := was.Status.Canary, now.Status.Canary
	switch {
	case a == nil && b != nil:
		out = append(out, "a canary started ("+canaryName(b)+")")
	case a != nil && b == nil:
		out = append(out, "its canary status went")
	case a != nil && (a.Revision != b.Revision || a.Attempt != b.Attempt):
		out = append(out, fmt.Sprintf("the canary went from %s to %s", canaryName(a), canaryName(b)))
	case a != nil:
		if a.Phase != b.Phase {
			out = append(out, fmt.Sprintf("the canary went from %s to %s", a.Phase, b.Phase))
		}
		if a.Step != b.Step {
			out = append(out, fmt.Sprintf("the canary moved from step %d to step %d", a.Step+1, b.Step+1))
		}
	}
	for _, k := range webappv1.CanaryAnnotations {
		if v, w := was.Annotations[k], now.Annotations[k]; v != w {
			out = append(out, fmt.Sprintf("%s changed from %q to %q", k, v, w))
		}
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("it changed (resourceVersion %s, now %s)", was.ResourceVersion, now.ResourceVersion))
	}
	return out
}

// canaryName names a canary in a message: "revision <revision>", and its attempt when not 0.
func canaryName(cs *webappv1.CanaryStatus) string {
	if cs.Attempt == 0 {
		return "revision " + cs.Revision
	}
	return fmt.Sprintf("revision %s, attempt %d", cs.Revision, cs.Attempt)
}

// names reports whether the WebApp's annotation key names the attempt of cs (and, for
// AnnotationPromoteStep, its step step; for AnnotationRetry, the retry retry), read as the hook
// reads it.
func names(wa *webappv1.WebApp, key string, cs *webappv1.CanaryStatus, step, retry int32) bool {
	v, ok := wa.Annotations[key]
	if !ok {
		return false
	}
	t, err := webappv1.ParseCanaryAnnotation(key, v)
	return err == nil && t.Revision == cs.Revision && t.Attempt == cs.Attempt && t.Step == step && t.Retry == retry
}

// value is the value v of the annotation key that a command writes, checked to read back as the
// hook reads it: a refusal when it would not.
func value(wa *webappv1.WebApp, key, v string) (string, error) {
	if _, err := webappv1.ParseCanaryAnnotation(key, v); err != nil {
		return "", refuseOn(wa, "%s=%s would not be read: %v", key, v, err)
	}
	return v, nil
}

// canaryCmd is a command NAME that annotates with decide.
func (r *runner) canaryCmd(use, short, long, example string, decide func(*webappv1.WebApp, time.Time) (*action, error)) *cobra.Command {
	return &cobra.Command{
		Use:               use + " NAME",
		Short:             short,
		Long:              long,
		Example:           example,
		Args:              exactArgs(1),
		ValidArgsFunction: r.complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.change(cmd.Context(), args[0], func(_ context.Context, _ *Clients, wa *webappv1.WebApp) (*action, error) {
				return decide(wa, r.m.Now())
			})
		},
	}
}

func (r *runner) promoteCmd() *cobra.Command {
	var full bool
	cmd := r.canaryCmd("promote",
		"End the canary's current step, or with --full promote it now",
		`End the canary's current step, its pause and its wait for a passing check, as Argo Rollouts'
promote does: the canary moves to the next step, or is promoted from the last one. It sets the
annotation `+webappv1.AnnotationPromoteStep+`=<attempt>/<step>, which acts once, on that step
of that attempt; <attempt> is the canary's revision, and @<n> after it when status.canary.attempt
is n, not 0.

With --full, promote the canary now, skipping every remaining step: the annotation
`+webappv1.AnnotationPromote+`=<attempt>.

It refuses (exit 3) when the canary is not at a step (Progressing or Paused), when the same
promotion is already asked for and the hook has not acted on it yet, when the hook has not
answered for the latest spec yet (another revision may be on its way), and when the WebApp
changed since it was read so that it would decide otherwise: the patch carries the
resourceVersion it read.`,
		`  kubectl webapp promote shop          # step 2 of 3 ends: on to step 3
  kubectl webapp promote shop --full   # steps 2 and 3 skipped: promoted now`,
		func(wa *webappv1.WebApp, _ time.Time) (*action, error) { return promotion(wa, full) })
	cmd.Flags().BoolVar(&full, "full", false, "skip every remaining step: promote the canary now")
	return cmd
}

func (r *runner) abortCmd() *cobra.Command {
	return r.canaryCmd("abort",
		"Abort the canary: its traffic and pods go, the stable Deployment untouched",
		`Abort the running canary, as failed checks would: the route's canary weight goes to 0, the
canary scales to 0 once the route is seen, and the stable Deployment is never touched. It sets
the annotation `+webappv1.AnnotationAbort+`=<attempt> (the canary's revision, and @<n> after it
when status.canary.attempt is n, not 0).

It refuses (exit 3) when there is no canary running, when the canary is being promoted past
the point where the stable Deployment takes its template, when the abort is already asked for,
when the hook has not answered for the latest spec yet, and when the WebApp changed since it was
read so that it would decide otherwise.`,
		`  kubectl webapp abort shop
  kubectl webapp retry shop    # later: the same revision again, from step 1`,
		abortion)
}

func (r *runner) retryCmd() *cobra.Command {
	return r.canaryCmd("retry",
		"Start an aborted canary again from its first step",
		`Start an aborted canary of the same revision again, from its first step, its failed checks at
0, as a new attempt. It sets the annotation `+webappv1.AnnotationRetry+` to the aborted attempt
(the revision, and @<n> after it when status.canary.attempt is n, not 0; for attempt 0 after
earlier retries, <revision>/<retries+1>, as earlier versions wrote it), and removes in the same
patch the `+webappv1.AnnotationAbort+`, `+webappv1.AnnotationPromote+` and `+webappv1.AnnotationPromoteStep+`
annotations that name the aborted attempt; those that name another are left as they are.

It refuses (exit 3) when the canary is not Aborted, when the retry is already asked for, when
the hook has not answered for the latest spec yet, and when the WebApp changed since it was read
so that it would decide otherwise.`,
		`  kubectl webapp retry shop`,
		retrial)
}

// canaryOf is wa's canary status, or a refusal when there is no canary to act on: none in the
// spec or the status, or a status of an older spec than the latest.
func canaryOf(wa *webappv1.WebApp) (*webappv1.CanaryStatus, error) {
	st := &wa.Status
	cs := st.Canary
	planned := wa.Spec.Rollout.Plan() != nil
	switch {
	case wa.Generation > st.ObservedGeneration:
		return nil, refuseOn(wa, "its status is of generation %d of its spec, which is at generation %d: the hook has not answered for the latest spec yet, and another revision may be on its way; try again in a moment", st.ObservedGeneration, wa.Generation)
	case !planned && cs == nil:
		return nil, refuseOn(wa, "no canary: its spec asks for none (spec.rollout.canary)")
	case !planned:
		return nil, refuseOn(wa, "its spec asks for no canary any more (spec.rollout.canary): nothing to act on")
	case cs == nil:
		return nil, refuseOn(wa, "no canary yet: none has started (a new pod template starts one)")
	}
	return cs, nil
}

// atStep is the index of the step a canary is at (canary.StepIndex), and its number of steps.
func atStep(wa *webappv1.WebApp, cs *webappv1.CanaryStatus) (cur, n int) {
	plan := wa.Spec.Rollout.Plan()
	return canary.StepIndex(plan, cs), len(plan.Steps)
}

// notAtStep is the refusal of an action that needs the canary at a step, in a phase that is not.
func notAtStep(wa *webappv1.WebApp, cs *webappv1.CanaryStatus, what string) error {
	if err := noCanaryRan(wa, cs, what); err != nil {
		return err
	}
	rev := canaryName(cs)
	switch cs.Phase {
	case webappv1.CanaryPromoting:
		return refuseOn(wa, "%s is already being promoted: nothing to %s", rev, what)
	case webappv1.CanaryPromoted:
		return refuseOn(wa, "%s is already promoted: nothing to %s (kubectl webapp set image starts a new canary)", rev, what)
	case webappv1.CanaryAborted:
		return refuseOn(wa, "%s was aborted: nothing to %s (kubectl webapp retry %s starts it again)", rev, what, wa.Name)
	case webappv1.CanaryRolledBack:
		return refuseOn(wa, "%s was rolled back: nothing to %s", rev, what)
	}
	return refuseOn(wa, "%s is %s: nothing to %s", rev, cs.Phase, what)
}

// noCanaryRan is the refusal of an action on a canary when the status is a rollback within the
// rollback window (canary.RolledBackWithinWindow), whose revision is the one the stable
// Deployment went back to, no canary's; nil for any other status.
func noCanaryRan(wa *webappv1.WebApp, cs *webappv1.CanaryStatus, what string) error {
	if !canary.RolledBackWithinWindow(cs) {
		return nil
	}
	return refuseOn(wa, "no canary: the stable Deployment went back to revision %s within the rollback window: nothing to %s (kubectl webapp set image starts a new canary)", cs.Revision, what)
}

// promotion decides promote: the current step ends (AnnotationPromoteStep), or with full the
// canary is promoted (AnnotationPromote).
func promotion(wa *webappv1.WebApp, full bool) (*action, error) {
	cs, err := canaryOf(wa)
	if err != nil {
		return nil, err
	}
	if !canary.AtAStep(cs.Phase) {
		return nil, notAtStep(wa, cs, "promote")
	}
	cur, n := atStep(wa, cs)
	rev := canaryName(cs)
	if full {
		v, err := value(wa, webappv1.AnnotationPromote, webappv1.AttemptValue(cs.Revision, cs.Attempt))
		if err != nil {
			return nil, err
		}
		if names(wa, webappv1.AnnotationPromote, cs, 0, 1) {
			return nil, refuseOn(wa, "%s is already asked to be promoted (%s=%s); the hook has not acted on it yet", rev, webappv1.AnnotationPromote, wa.Annotations[webappv1.AnnotationPromote])
		}
		skipped := fmt.Sprintf("step %d of %d skipped", cur+1, n)
		if cur+1 < n {
			skipped = fmt.Sprintf("steps %d to %d of %d skipped", cur+1, n, n)
		}
		done := fmt.Sprintf("%s: promoting %s fully (%s)", who(wa), rev, skipped)
		if wa.Spec.Rollout.IsBlueGreen() {
			done = switchDone(wa, rev)
		}
		return &action{patch: annotations(map[string]any{webappv1.AnnotationPromote: v}), done: done}, nil
	}
	v, err := value(wa, webappv1.AnnotationPromoteStep, webappv1.PromoteStepValue(cs.Revision, cs.Attempt, cs.Step))
	if err != nil {
		return nil, err
	}
	if names(wa, webappv1.AnnotationPromoteStep, cs, cs.Step, 1) {
		return nil, refuseOn(wa, "step %d of %s is already asked to end (%s=%s); the hook has not acted on it yet", cur+1, rev, webappv1.AnnotationPromoteStep, wa.Annotations[webappv1.AnnotationPromoteStep])
	}
	done := fmt.Sprintf("%s: promoting %s (step %d of %d, the last, skipped)", who(wa), rev, cur+1, n)
	switch {
	case wa.Spec.Rollout.IsBlueGreen():
		done = switchDone(wa, rev)
	case cur+1 < n:
		done = fmt.Sprintf("%s: %s goes on to step %d of %d (%d%%): step %d skipped", who(wa), rev, cur+2, n, wa.Spec.Rollout.Plan().Steps[cur+1].Weight, cur+1)
	}
	return &action{patch: annotations(map[string]any{webappv1.AnnotationPromoteStep: v}), done: done}, nil
}

// switchDone is what promote says of a blue-green release at its preview: the one switch.
func switchDone(wa *webappv1.WebApp, rev string) string {
	return fmt.Sprintf("%s: promoting %s: all the traffic switches to it at once", who(wa), rev)
}

// abortion decides abort, at now.
func abortion(wa *webappv1.WebApp, now time.Time) (*action, error) {
	cs, err := canaryOf(wa)
	if err != nil {
		return nil, err
	}
	rev := canaryName(cs)
	switch {
	case canary.AbortTooLate(wa.Spec.Rollout.Plan(), wa.Spec.Route != nil, cs, now):
		return nil, refuseOn(wa, "%s is being promoted past the point of abort: the canary has all the traffic and the stable Deployment takes its template (a new pod template starts a new canary)", rev)
	case cs.Phase == webappv1.CanaryAborted:
		return nil, refuseOn(wa, "%s is already aborted", rev)
	case !canary.AtAStep(cs.Phase) && cs.Phase != webappv1.CanaryPromoting:
		return nil, notAtStep(wa, cs, "abort")
	}
	v, err := value(wa, webappv1.AnnotationAbort, webappv1.AttemptValue(cs.Revision, cs.Attempt))
	if err != nil {
		return nil, err
	}
	if names(wa, webappv1.AnnotationAbort, cs, 0, 1) {
		return nil, refuseOn(wa, "%s is already asked to abort (%s=%s); the hook has not acted on it yet", rev, webappv1.AnnotationAbort, wa.Annotations[webappv1.AnnotationAbort])
	}
	cur, n := atStep(wa, cs)
	where := fmt.Sprintf("at step %d of %d", cur+1, n)
	switch {
	case cs.Phase == webappv1.CanaryPromoting && wa.Spec.Rollout.IsBlueGreen():
		where = "while promoting: all the traffic goes back to the stable Deployment at once"
	case cs.Phase == webappv1.CanaryPromoting:
		where = "while promoting"
	case wa.Spec.Rollout.IsBlueGreen():
		where = "at its preview"
	}
	return &action{
		patch: annotations(map[string]any{webappv1.AnnotationAbort: v}),
		done:  fmt.Sprintf("%s: aborting %s (%s)", who(wa), rev, where),
	}, nil
}

// leftovers are the annotations a retry removes when they name the aborted attempt: an older hook
// would have them abort or promote the canary as soon as it starts again. Those that name another
// attempt or revision do nothing, and are left as they are.
var leftovers = []string{webappv1.AnnotationAbort, webappv1.AnnotationPromote, webappv1.AnnotationPromoteStep}

// retrial decides retry.
func retrial(wa *webappv1.WebApp, _ time.Time) (*action, error) {
	cs, err := canaryOf(wa)
	if err != nil {
		return nil, err
	}
	if err := noCanaryRan(wa, cs, "retry"); err != nil {
		return nil, err
	}
	rev := canaryName(cs)
	if cs.Phase != webappv1.CanaryAborted {
		return nil, refuseOn(wa, "%s is %s, not Aborted: nothing to retry", rev, cs.Phase)
	}
	if cs.Attempt >= webappv1.MaxAnnotationNumber {
		return nil, refuseOn(wa, "%s has had %d attempts, the most there may be: a new pod template starts a new canary", rev, webappv1.MaxAnnotationNumber)
	}
	n := cs.Retries + 1
	v, err := value(wa, webappv1.AnnotationRetry, webappv1.RetryValue(cs.Revision, cs.Attempt, cs.Retries))
	if err != nil {
		return nil, err
	}
	if t, err := webappv1.ParseCanaryAnnotation(webappv1.AnnotationRetry, v); err == nil && names(wa, webappv1.AnnotationRetry, cs, 0, t.Retry) {
		return nil, refuseOn(wa, "retry %d of %s is already asked for (%s=%s); the hook has not acted on it yet", n, rev, webappv1.AnnotationRetry, wa.Annotations[webappv1.AnnotationRetry])
	}
	set := map[string]any{webappv1.AnnotationRetry: v}
	var removed []string
	for _, k := range leftovers {
		if names(wa, k, cs, stepOf(wa, k), 1) {
			set[k] = nil
			removed = append(removed, k+"="+wa.Annotations[k])
		}
	}
	a := &action{patch: annotations(set)}
	a.done = fmt.Sprintf("%s: retrying %s from step 1 (retry %d)", who(wa), rev, n)
	if len(removed) > 0 {
		a.done += "; removed what the aborted attempt left: " + strings.Join(removed, ", ")
	}
	return a, nil
}

// stepOf is the step the WebApp's annotation key names: for AnnotationPromoteStep its step, 0
// otherwise and when it does not read.
func stepOf(wa *webappv1.WebApp, key string) int32 {
	t, _ := webappv1.ParseCanaryAnnotation(key, wa.Annotations[key])
	return t.Step
}

package plugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// The commands that act on a canary by an annotation of api/v1 that names its revision:
// promote (webappv1.AnnotationPromoteStep, or AnnotationPromote with --full), abort
// (AnnotationAbort) and retry (AnnotationRetry). Each reads the WebApp, decides from it alone
// (a pure function: promotion, abortion, retrial), and patches its annotations once (change).

// action is what a changing command decided: the merge patch to send, and what to print once it
// is applied.
type action struct {
	patch map[string]any
	done  string
}

// annotations is the merge patch that sets annotations (a nil value removes one).
func annotations(a map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"annotations": a}}
}

// change runs a changing command on the WebApp name: it reads it, decides with decide (which may
// read more through the clients), sends the one patch, and prints what it did.
func (r *runner) change(ctx context.Context, name string, decide func(context.Context, *Clients, *webappv1.WebApp) (*action, error)) error {
	c, err := r.clients()
	if err != nil {
		return err
	}
	wa, err := c.webApp(ctx, name)
	if err != nil {
		return err
	}
	a, err := decide(ctx, c, wa)
	if err != nil {
		return err
	}
	if err := c.patch(ctx, name, a.patch); err != nil {
		return err
	}
	_, err = fmt.Fprintln(r.m.Stdout, a.done)
	return err
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
annotation `+webappv1.AnnotationPromoteStep+`=<revision>/<step>, which acts once, on that step
of that revision.

With --full, promote the canary now, skipping every remaining step: the annotation
`+webappv1.AnnotationPromote+`=<revision>.

It refuses (exit 3) when the canary is not at a step (Progressing or Paused), when the same
promotion is already asked for and the hook has not acted on it yet, and when the hook has not
answered for the latest spec yet (another revision may be on its way).`,
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
the annotation `+webappv1.AnnotationAbort+`=<revision>.

It refuses (exit 3) when there is no canary running, when the canary is being promoted past
the point where the stable Deployment takes its template, when the abort is already asked for,
and when the hook has not answered for the latest spec yet.`,
		`  kubectl webapp abort shop
  kubectl webapp retry shop    # later: the same revision again, from step 1`,
		abortion)
}

func (r *runner) retryCmd() *cobra.Command {
	return r.canaryCmd("retry",
		"Start an aborted canary again from its first step",
		`Start an aborted canary of the same revision again, from its first step, its failed checks at
0. It sets the annotation `+webappv1.AnnotationRetry+` to the revision and the retry's number
(status.canary.retries + 1), and removes in the same patch any leftover
`+webappv1.AnnotationAbort+`, `+webappv1.AnnotationPromote+` and `+webappv1.AnnotationPromoteStep+`
annotations, which would abort or promote the canary as soon as it started again.

It refuses (exit 3) when the canary is not Aborted, when the retry is already asked for, and
when the hook has not answered for the latest spec yet.`,
		`  kubectl webapp retry shop`,
		retrial)
}

// canaryOf is wa's canary status, or a refusal when there is no canary to act on: none in the
// spec or the status, or a status of an older spec than the latest.
func canaryOf(wa *webappv1.WebApp) (*webappv1.CanaryStatus, error) {
	st := &wa.Status
	cs := st.Canary
	planned := wa.Spec.Rollout != nil && wa.Spec.Rollout.Canary != nil
	switch {
	case wa.Generation > st.ObservedGeneration:
		return nil, refuse("webapp/%s's status is of generation %d of its spec, which is at generation %d: the hook has not answered for the latest spec yet, and another revision may be on its way; try again in a moment", wa.Name, st.ObservedGeneration, wa.Generation)
	case !planned && cs == nil:
		return nil, refuse("webapp/%s has no canary: its spec asks for none (spec.rollout.canary)", wa.Name)
	case !planned:
		return nil, refuse("webapp/%s's spec asks for no canary any more (spec.rollout.canary): nothing to act on", wa.Name)
	case cs == nil:
		return nil, refuse("webapp/%s has no canary yet: none has started (a new pod template starts one)", wa.Name)
	}
	return cs, nil
}

// atStep is a canary's step index among steps (the last one when the steps were edited to
// fewer), and its number of steps.
func atStep(wa *webappv1.WebApp, cs *webappv1.CanaryStatus) (cur, n int) {
	n = len(wa.Spec.Rollout.Canary.Steps)
	return min(int(cs.Step), n-1), n
}

// notAtStep is the refusal of an action that needs the canary at a step, in a phase that is not.
func notAtStep(wa *webappv1.WebApp, cs *webappv1.CanaryStatus, what string) error {
	rev := "revision " + cs.Revision + " of webapp/" + wa.Name
	switch cs.Phase {
	case webappv1.CanaryPromoting:
		return refuse("%s is already being promoted: nothing to %s", rev, what)
	case webappv1.CanaryPromoted:
		return refuse("%s is already promoted: nothing to %s (kubectl webapp set image starts a new canary)", rev, what)
	case webappv1.CanaryAborted:
		return refuse("%s was aborted: nothing to %s (kubectl webapp retry %s starts it again)", rev, what, wa.Name)
	case webappv1.CanaryRolledBack:
		return refuse("%s was rolled back: nothing to %s", rev, what)
	}
	return refuse("%s is %s: nothing to %s", rev, cs.Phase, what)
}

// promotion decides promote: the current step ends (AnnotationPromoteStep), or with full the
// canary is promoted (AnnotationPromote).
func promotion(wa *webappv1.WebApp, full bool) (*action, error) {
	cs, err := canaryOf(wa)
	if err != nil {
		return nil, err
	}
	if cs.Phase != webappv1.CanaryProgressing && cs.Phase != webappv1.CanaryPaused {
		return nil, notAtStep(wa, cs, "promote")
	}
	cur, n := atStep(wa, cs)
	if full {
		if wa.Annotations[webappv1.AnnotationPromote] == cs.Revision {
			return nil, refuse("revision %s of webapp/%s is already asked to be promoted (%s=%s); the hook has not acted on it yet", cs.Revision, wa.Name, webappv1.AnnotationPromote, cs.Revision)
		}
		skipped := fmt.Sprintf("step %d of %d skipped", cur+1, n)
		if cur+1 < n {
			skipped = fmt.Sprintf("steps %d to %d of %d skipped", cur+1, n, n)
		}
		return &action{
			patch: annotations(map[string]any{webappv1.AnnotationPromote: cs.Revision}),
			done:  fmt.Sprintf("webapp/%s: promoting revision %s fully (%s)", wa.Name, cs.Revision, skipped),
		}, nil
	}
	v := webappv1.PromoteStepValue(cs.Revision, cs.Step)
	if wa.Annotations[webappv1.AnnotationPromoteStep] == v {
		return nil, refuse("step %d of revision %s of webapp/%s is already asked to end (%s=%s); the hook has not acted on it yet", cur+1, cs.Revision, wa.Name, webappv1.AnnotationPromoteStep, v)
	}
	done := fmt.Sprintf("webapp/%s: promoting revision %s (step %d of %d, the last, skipped)", wa.Name, cs.Revision, cur+1, n)
	if cur+1 < n {
		done = fmt.Sprintf("webapp/%s: revision %s goes on to step %d of %d (%d%%): step %d skipped", wa.Name, cs.Revision, cur+2, n, wa.Spec.Rollout.Canary.Steps[cur+1].Weight, cur+1)
	}
	return &action{patch: annotations(map[string]any{webappv1.AnnotationPromoteStep: v}), done: done}, nil
}

// abortion decides abort, at now.
func abortion(wa *webappv1.WebApp, now time.Time) (*action, error) {
	cs, err := canaryOf(wa)
	if err != nil {
		return nil, err
	}
	switch cs.Phase {
	case webappv1.CanaryProgressing, webappv1.CanaryPaused:
	case webappv1.CanaryPromoting:
		if tooLate(wa, cs, now) {
			return nil, refuse("revision %s of webapp/%s is being promoted past the point of abort: the canary has all the traffic and the stable Deployment takes its template (a new pod template starts a new canary)", cs.Revision, wa.Name)
		}
	case webappv1.CanaryAborted:
		return nil, refuse("revision %s of webapp/%s is already aborted", cs.Revision, wa.Name)
	default:
		return nil, notAtStep(wa, cs, "abort")
	}
	if wa.Annotations[webappv1.AnnotationAbort] == cs.Revision {
		return nil, refuse("revision %s of webapp/%s is already asked to abort (%s=%s); the hook has not acted on it yet", cs.Revision, wa.Name, webappv1.AnnotationAbort, cs.Revision)
	}
	cur, n := atStep(wa, cs)
	where := fmt.Sprintf("at step %d of %d", cur+1, n)
	if cs.Phase == webappv1.CanaryPromoting {
		where = "while promoting"
	}
	return &action{
		patch: annotations(map[string]any{webappv1.AnnotationAbort: cs.Revision}),
		done:  fmt.Sprintf("webapp/%s: aborting revision %s (%s)", wa.Name, cs.Revision, where),
	}, nil
}

// tooLate reports whether a canary being promoted is past the point where an abort acts: the
// stable Deployment takes the template once the canary has all the traffic, with a route
// scaleDownDelaySeconds after the route was seen to give it all (allTrafficTime), without one
// at once.
func tooLate(wa *webappv1.WebApp, cs *webappv1.CanaryStatus, now time.Time) bool {
	if wa.Spec.Route == nil {
		return cs.Weight != nil && *cs.Weight == 100
	}
	if cs.AllTrafficTime == nil {
		return false
	}
	delay := time.Duration(webappv1.DefaultScaleDownDelaySeconds) * time.Second
	if d := wa.Spec.Rollout.Canary.ScaleDownDelaySeconds; d != nil {
		delay = time.Duration(*d) * time.Second
	}
	return !now.Before(cs.AllTrafficTime.Add(delay))
}

// leftovers are the annotations a retry removes: one left from the aborted run would abort or
// promote the canary as soon as it starts again.
var leftovers = []string{webappv1.AnnotationAbort, webappv1.AnnotationPromote, webappv1.AnnotationPromoteStep}

// retrial decides retry.
func retrial(wa *webappv1.WebApp, _ time.Time) (*action, error) {
	cs, err := canaryOf(wa)
	if err != nil {
		return nil, err
	}
	if cs.Phase != webappv1.CanaryAborted {
		return nil, refuse("revision %s of webapp/%s is %s, not Aborted: nothing to retry", cs.Revision, wa.Name, cs.Phase)
	}
	n := cs.Retries + 1
	v := webappv1.RetryValue(cs.Revision, n)
	if wa.Annotations[webappv1.AnnotationRetry] == v {
		return nil, refuse("retry %d of revision %s of webapp/%s is already asked for (%s=%s); the hook has not acted on it yet", n, cs.Revision, wa.Name, webappv1.AnnotationRetry, v)
	}
	set := map[string]any{webappv1.AnnotationRetry: v}
	var removed []string
	for _, k := range leftovers {
		set[k] = nil
		if _, ok := wa.Annotations[k]; ok {
			removed = append(removed, k)
		}
	}
	a := &action{patch: annotations(set)}
	a.done = fmt.Sprintf("webapp/%s: retrying revision %s from step 1 (retry %d)", wa.Name, cs.Revision, n)
	if len(removed) > 0 {
		a.done += "; removed the leftover " + strings.Join(removed, ", ")
	}
	return a, nil
}

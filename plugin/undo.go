package plugin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
	"github.com/example/webapp-operator/plugin/revision"
)

func (r *runner) undoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "undo NAME",
		Short: "Set the WebApp's pod template back to the one its stable Deployment runs",
		Long: `Roll back by editing the spec, as docs/canary.md's "Rollback: edit the template back" does:
the fields of the spec that a release changes (` + strings.Join(revision.RestoredFields, ", ") + `) are
set back to what the stable Deployment's template holds. Before it patches, it checks with the
hook's own code that the edited spec asks for the stable Deployment's revision, and refuses,
saying where they differ, when it would not. The patch carries the WebApp's resourceVersion, so
that it never overwrites an edit it did not read.

A canary at a step, aborted, or being promoted until the stable Deployment takes its template,
ends RolledBack, and no stable pod rolls.

When the spec already asks for the stable Deployment's template (after a promotion, the new
one), undo goes back to the revision the stable Deployment ran before it: the one
spec.rollout.canary.rollbackWindow lists (status.canary.stableRevisions), or else the newest
other template of its ReplicaSets, each of which keeps the template the hook applied. Within the
rollback window the stable Deployment goes back to it without a canary; outside it, or without
one, a canary of it runs, as for any new template. It refuses (exit 3) when no ReplicaSet keeps
an earlier template. It reads the stable Deployment, and then its ReplicaSets, and so needs get
on deployments and list on replicasets.`,
		Example:           `  kubectl webapp undo shop`,
		Args:              exactArgs(1),
		ValidArgsFunction: r.complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.change(cmd.Context(), args[0], func(ctx context.Context, c *Clients, wa *webappv1.WebApp) (*action, error) {
				stable, err := c.deployment(ctx, wa.Name)
				if err != nil {
					return nil, fmt.Errorf("undo reads the template the stable Deployment runs: %w", err)
				}
				older := func() ([]appsv1.ReplicaSet, error) {
					rs, err := c.replicaSets(ctx, stable)
					if err != nil {
						return nil, fmt.Errorf("undo reads the templates the stable Deployment ran before, in its ReplicaSets: %w", err)
					}
					return rs, nil
				}
				return rollback(wa, stable, older)
			})
		},
	}
}

// rollback decides undo for wa, whose stable Deployment is stable (nil when there is none): the
// merge patch of the spec's fields it changes (change preconditions it on wa's resourceVersion).
// When the spec asks for the stable Deployment's revision already, it goes back to the one the
// stable Deployment ran before (previous), reading its ReplicaSets with older.
func rollback(wa *webappv1.WebApp, stable *appsv1.Deployment, older func() ([]appsv1.ReplicaSet, error)) (*action, error) {
	if stable == nil {
		return nil, refuseOn(wa, "no stable Deployment yet: nothing to roll back to")
	}
	plan, err := revision.Plan(wa, stable)
	if err == nil && len(plan.Changed) == 0 {
		return previous(wa, stable, plan.To, older)
	}
	if err := planError(wa, err); err != nil {
		return nil, err
	}
	return rollbackAction(wa, plan, fmt.Sprintf("rolling back from revision %s to %s, the stable Deployment's", plan.From, plan.To)), nil
}

// previous decides undo for wa when its spec asks for current, the revision the stable Deployment
// runs: the rollback to the one it ran before (revision.Previous), the first other one its
// rollback window lists when it has one. The message says whether the stable Deployment goes
// back to it without a canary (canary.WithinRollbackWindow) or a canary of it runs.
func previous(wa *webappv1.WebApp, stable *appsv1.Deployment, current string, older func() ([]appsv1.ReplicaSet, error)) (*action, error) {
	plan := wa.Spec.Rollout.Plan()
	want := ""
	if st := wa.Status.Canary; st != nil && plan != nil && plan.RollbackWindow != nil {
		for _, r := range st.StableRevisions {
			if r != current {
				want = r
				break
			}
		}
	}
	replicaSets, err := older()
	if err != nil {
		return nil, err
	}
	back, err := revision.Previous(wa, stable, replicaSets, want)
	if errors.Is(err, revision.ErrNoPrevious) {
		return nil, refuseOn(wa, "nothing to undo: its spec already asks for revision %s, the template its stable Deployment runs, and none of its ReplicaSets keeps an earlier template the hook applied", current)
	}
	if err := planError(wa, err); err != nil {
		return nil, err
	}
	var how string
	switch {
	case plan == nil:
		how = "the stable Deployment rolls to it"
	case canary.WithinRollbackWindow(plan, wa.Status.Canary, current, back.To):
		how = "within spec.rollout.canary.rollbackWindow: the stable Deployment goes back to it without a canary"
	case plan.RollbackWindow != nil:
		how = "outside spec.rollout.canary.rollbackWindow: a canary of it starts"
	default:
		how = "a canary of it starts (spec.rollout.canary.rollbackWindow would skip it)"
	}
	return rollbackAction(wa, back, fmt.Sprintf("rolling back from revision %s to %s, the stable Deployment's before it", back.From, back.To), how), nil
}

// planError is the error of a rollback's plan err: a refusal when the stable Deployment's
// template cannot be told or the rebuilt spec does not ask for it; nil for none.
func planError(wa *webappv1.WebApp, err error) error {
	var mismatch *revision.MismatchError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, revision.ErrNoTemplate), errors.As(err, &mismatch):
		return refuseOn(wa, "%v", err)
	}
	return fmt.Errorf("%s: %w", who(wa), err)
}

// rollbackAction is the merge patch of the fields plan changes, and the message that says so:
// what, then the changed fields, then each of then.
func rollbackAction(wa *webappv1.WebApp, plan *revision.Rollback, what string, then ...string) *action {
	fields := specFields(&plan.Spec)
	spec := map[string]any{}
	var changed []string
	for _, f := range plan.Changed {
		spec[f] = fields[f] // nil removes it
		if f == "image" {
			changed = append(changed, fmt.Sprintf("image %s -> %s", wa.Spec.Image, plan.Spec.Image))
		} else {
			changed = append(changed, f)
		}
	}
	done := fmt.Sprintf("%s: %s (%s)", who(wa), what, strings.Join(changed, "; "))
	for _, t := range then {
		done += "; " + t
	}
	return &action{patch: map[string]any{"spec": spec}, done: done}
}

// specFields is a spec's JSON form, by field.
func specFields(spec *webappv1.WebAppSpec) map[string]any {
	b, _ := json.Marshal(spec)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

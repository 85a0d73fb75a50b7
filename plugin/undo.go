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
ends RolledBack, and no stable pod rolls. It refuses (exit 3) when the spec already asks for the
stable Deployment's template: after a promotion, that is the new one (set image starts a canary
of another). It reads the stable Deployment, and so needs get on deployments.`,
		Example:           `  kubectl webapp undo shop`,
		Args:              exactArgs(1),
		ValidArgsFunction: r.complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			return r.change(cmd.Context(), args[0], func(ctx context.Context, c *Clients, wa *webappv1.WebApp) (*action, error) {
				stable, err := c.deployment(ctx, wa.Name)
				if err != nil {
					return nil, fmt.Errorf("undo reads the template the stable Deployment runs: %w", err)
				}
				return rollback(wa, stable)
			})
		},
	}
}

// rollback decides undo for wa, whose stable Deployment is stable (nil when there is none): the
// merge patch of the spec's fields it changes (change preconditions it on wa's resourceVersion).
func rollback(wa *webappv1.WebApp, stable *appsv1.Deployment) (*action, error) {
	if stable == nil {
		return nil, refuseOn(wa, "no stable Deployment yet: nothing to roll back to")
	}
	plan, err := revision.Plan(wa, stable)
	var mismatch *revision.MismatchError
	switch {
	case errors.Is(err, revision.ErrNoTemplate):
		return nil, refuseOn(wa, "%v", err)
	case errors.As(err, &mismatch):
		return nil, refuseOn(wa, "%v", err)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", who(wa), err)
	case len(plan.Changed) == 0:
		return nil, refuseOn(wa, "nothing to undo: its spec already asks for revision %s, the template its stable Deployment runs", plan.To)
	}
	fields := specFields(&plan.Spec)
	spec := map[string]any{}
	var what []string
	for _, f := range plan.Changed {
		spec[f] = fields[f] // nil removes it
		if f == "image" {
			what = append(what, fmt.Sprintf("image %s -> %s", wa.Spec.Image, plan.Spec.Image))
		} else {
			what = append(what, f)
		}
	}
	return &action{
		patch: map[string]any{"spec": spec},
		done:  fmt.Sprintf("%s: rolling back from revision %s to %s, the stable Deployment's (%s)", who(wa), plan.From, plan.To, strings.Join(what, "; ")),
	}, nil
}

// specFields is a spec's JSON form, by field.
func specFields(spec *webappv1.WebAppSpec) map[string]any {
	b, _ := json.Marshal(spec)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

package plugin

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

func (r *runner) setCmd() *cobra.Command {
	set := &cobra.Command{
		Use:   "set",
		Short: "Set a field of a WebApp's spec",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return &usageError{errors.New("set needs a field: kubectl webapp set image NAME IMAGE")}
		},
	}
	set.AddCommand(&cobra.Command{
		Use:   "image NAME IMAGE",
		Short: "Set the WebApp's image: a release in one line",
		Long: `Set spec.image: a release. With spec.rollout.canary it starts a canary of the new pod template;
without, the Deployment rolls it out. The patch carries the WebApp's resourceVersion, so that
it never overwrites an edit it did not read.

It refuses (exit 3) when the spec asks for that image already.`,
		Example: `  kubectl webapp set image shop nginx:1.28
  kubectl webapp set image shop registry.example.com/shop@sha256:…`,
		Args:              exactArgs(2),
		ValidArgsFunction: r.complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, image := args[0], args[1]
			if image == "" {
				return &usageError{errors.New("the image must not be empty")}
			}
			return r.change(cmd.Context(), name, func(_ context.Context, _ *Clients, wa *webappv1.WebApp) (*action, error) {
				return imageChange(wa, image)
			})
		},
	})
	return set
}

// imageChange decides set image: the merge patch of spec.image (change preconditions it on wa's
// resourceVersion).
func imageChange(wa *webappv1.WebApp, image string) (*action, error) {
	if wa.Spec.Image == image {
		return nil, refuseOn(wa, "its spec asks for image %s already: nothing to set", image)
	}
	a := &action{
		patch: map[string]any{"spec": map[string]any{"image": image}},
		done:  fmt.Sprintf("%s: image %s -> %s", who(wa), wa.Spec.Image, image),
	}
	switch {
	case wa.Spec.Rollout.IsBlueGreen():
		a.done += fmt.Sprintf("; the new template's preview starts, at full size (kubectl webapp get %s -w follows it)", wa.Name)
	case wa.Spec.Rollout.Plan() != nil:
		a.done += fmt.Sprintf("; a canary of the new template starts (kubectl webapp get %s -w follows it)", wa.Name)
	}
	return a, nil
}

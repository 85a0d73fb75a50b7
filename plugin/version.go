package plugin

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The hook's Deployment, as metacontroller/base and the Helm chart name it.
const (
	// HookDeployment is the name of the hook's Deployment, and hookContainer of its container.
	HookDeployment = "webapp-hook"
	hookContainer  = "hook"
	// HookNamespace is the namespace metacontroller/ installs the hook in; the Helm chart's is
	// the release's.
	HookNamespace = "webapp-system"
)

func (r *runner) versionCmd() *cobra.Command {
	var client bool
	var hookNamespace string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the plugin's version and, when readable, the hook's",
		Long: `Print the plugin's version and, when it can be read, the hook's: the image of the Deployment
webapp-hook in --hook-namespace (webapp-system, where metacontroller/ installs it; a Helm
release's namespace otherwise). When it cannot be read, it says why; that is not an error.`,
		Example: `  kubectl webapp version
  kubectl webapp version --hook-namespace webapp-operator
  kubectl webapp version --client`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(r.m.Stdout, "kubectl-webapp", pluginVersion(r.m.Version))
			if client {
				return nil
			}
			_, err := fmt.Fprintln(r.m.Stdout, "webapp-hook", r.hookVersion(cmd.Context(), hookNamespace))
			return err
		},
	}
	cmd.Flags().BoolVar(&client, "client", false, "print the plugin's version only")
	cmd.Flags().StringVar(&hookNamespace, "hook-namespace", HookNamespace, "the namespace of the hook's Deployment, "+HookDeployment)
	return cmd
}

// pluginVersion is the plugin's version: stamped, or else the module version and VCS revision
// of the build information.
func pluginVersion(stamped string) string {
	if stamped != "" {
		return stamped
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		v += " revision " + rev
		if settings["vcs.modified"] == "true" {
			v += " (modified)"
		}
	}
	return v + " " + info.GoVersion
}

// hookVersion describes the hook as its Deployment in ns shows it, or says why it is unknown.
func (r *runner) hookVersion(ctx context.Context, ns string) string {
	c, err := r.clients()
	if err != nil {
		return "unknown: " + err.Error()
	}
	d, err := c.Apps.Deployments(ns).Get(ctx, HookDeployment, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Sprintf("unknown: no Deployment %s in namespace %s (a Helm release elsewhere? --hook-namespace)", HookDeployment, ns)
	case err != nil:
		return "unknown: " + (&apiError{"get", "deployments", ns, HookDeployment, err}).Error()
	}
	return describeHook(d)
}

// describeHook is the hook's image and readiness, from its Deployment.
func describeHook(d *appsv1.Deployment) string {
	var images []string
	for _, ct := range d.Spec.Template.Spec.Containers {
		if ct.Name == hookContainer || len(d.Spec.Template.Spec.Containers) == 1 {
			images = append(images, ct.Image)
		}
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return fmt.Sprintf("%s (Deployment %s/%s, %d/%d ready)", strings.Join(images, ", "), d.Namespace, d.Name, d.Status.ReadyReplicas, want)
}

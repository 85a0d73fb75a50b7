package plugin

import (
	"bytes"
	"context"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/plugin/screen"
)

func (r *runner) listCmd() *cobra.Command {
	var all, follow bool
	var output string
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List WebApps with their canary's phase, step and weight",
		Long: `List the WebApps of the namespace (or of all, with -A): each with its ready pods, its phase,
and its canary's phase, step and weight and the result of its latest check. A phase marked *
is of an older spec: the hook has not answered for the latest one yet.

With -w it lists them again on every change of a WebApp, until interrupted. With -o json or
-o yaml it prints the list object instead.`,
		Example: `  kubectl webapp list
  kubectl webapp list -A -w`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			c, err := r.clients()
			if err != nil {
				return err
			}
			ns := c.Namespace
			if all {
				ns = ""
			}
			show := func(ctx context.Context) (string, error) {
				l, err := c.Dynamic.Resource(WebApps).Namespace(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					return "", &apiError{"list", "webapps", ns, "", err}
				}
				if output != "" {
					return encode(l.UnstructuredContent(), output)
				}
				if len(l.Items) == 0 {
					if all {
						return "No WebApps in any namespace.\n", nil
					}
					return "No WebApps in namespace " + ns + ".\n", nil
				}
				apps := make([]webappv1.WebApp, 0, len(l.Items))
				for i := range l.Items {
					wa, err := decodeWebApp(&l.Items[i])
					if err != nil {
						return "", err
					}
					apps = append(apps, *wa)
				}
				var b bytes.Buffer
				err = screen.List(&b, apps, r.m.Now(), all, r.options())
				return b.String(), err
			}
			return r.display(cmd.Context(), follow, []watchSource{func(ctx context.Context) (watch.Interface, error) {
				return c.Dynamic.Resource(WebApps).Namespace(ns).Watch(ctx, metav1.ListOptions{})
			}}, show, output)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the WebApps of every namespace")
	cmd.Flags().BoolVarP(&follow, "watch", "w", false, "list them again on every change, until interrupted")
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml: print the list object instead of the table")
	return cmd
}

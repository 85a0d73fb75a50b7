package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	gosync "sync"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/yaml"

	"github.com/example/webapp-operator/plugin/screen"
)

func (r *runner) getCmd() *cobra.Command {
	var follow bool
	var output string
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show a WebApp's whole story on one screen",
		Long: `Show a WebApp's whole story on one screen: its phase, reason and URL; the stable and canary
revisions with their images and ready pods; the canary's steps, the current one marked with the
pause it has left and the weight it asks for against the weight the route carries; the latest
check of the analysis, metric by metric; the failed checks against maxFailedChecks; the
conditions, and under them the latest Events on the WebApp (the notifier's, when it runs); and
the pods by track, with why any cannot start.

With -w it shows the screen again on every change of the WebApp, its Deployments, its pods or its Events,
until interrupted: on a terminal in place, and otherwise each screen after a line "---". The
Deployments, pods and Events need get, list and watch on them (the view role has them); without, the
screen says so where they would be.

With -o json or -o yaml it prints the WebApp object instead; with -w, again on every change.`,
		Example: `  kubectl webapp get shop
  kubectl webapp get shop -w
  kubectl webapp get shop -o yaml -n prod`,
		Args:              exactArgs(1),
		ValidArgsFunction: r.complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			c, err := r.clients()
			if err != nil {
				return err
			}
			name := args[0]
			show := func(ctx context.Context) (string, error) {
				if output != "" {
					u, err := c.Dynamic.Resource(WebApps).Namespace(c.Namespace).Get(ctx, name, metav1.GetOptions{})
					if err != nil {
						return "", &apiError{"get", "webapps", c.Namespace, name, err}
					}
					return encode(u.Object, output)
				}
				s, err := c.story(ctx, name, r.m.Now())
				if err != nil {
					return "", err
				}
				var b bytes.Buffer
				err = screen.Render(&b, s, r.options())
				return b.String(), err
			}
			ns := c.Namespace
			sources := []watchSource{
				func(ctx context.Context) (watch.Interface, error) {
					return c.Dynamic.Resource(WebApps).Namespace(ns).Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
				},
			}
			if output == "" {
				sources = append(sources,
					func(ctx context.Context) (watch.Interface, error) {
						return c.Apps.Deployments(ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector(name)})
					},
					func(ctx context.Context) (watch.Interface, error) {
						return c.Core.Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: selector(name)})
					},
					func(ctx context.Context) (watch.Interface, error) {
						return c.Core.Events(ns).Watch(ctx, metav1.ListOptions{FieldSelector: eventsOf(name)})
					})
			}
			return r.display(cmd.Context(), follow, sources, show, output)
		},
	}
	cmd.Flags().BoolVarP(&follow, "watch", "w", false, "show the screen again on every change, until interrupted")
	cmd.Flags().StringVarP(&output, "output", "o", "", "json or yaml: print the WebApp object instead of the screen")
	return cmd
}

// encode is an object as JSON (indented) or YAML.
func encode(obj any, output string) (string, error) {
	if output == "yaml" {
		b, err := yaml.Marshal(obj)
		return string(b), err
	}
	b, err := json.MarshalIndent(obj, "", "    ")
	return string(b) + "\n", err
}

// watchSource starts a watch of what a screen shows.
type watchSource func(context.Context) (watch.Interface, error)

// Separator is the line between two screens of get -w and list -w when Stdout is not a
// terminal, and between two objects of -o yaml -w: a YAML document separator.
const Separator = "---"

// display shows the output of show once, or with follow as follow does.
func (r *runner) display(ctx context.Context, follow bool, sources []watchSource, show func(context.Context) (string, error), output string) error {
	if follow {
		return r.follow(ctx, sources, show, output)
	}
	out, err := show(ctx)
	if err == nil {
		_, err = io.WriteString(r.m.Stdout, out)
	}
	return err
}

// follow shows the output of show, and again on every event of the sources, until ctx ends:
// on a terminal in place (and every second, so that a pause counts down), otherwise after
// Separator (none between JSON objects) and only when it changed. A source the user may not
// watch is left alone, as one whose object is gone is read as gone: the screen says so.
func (r *runner) follow(ctx context.Context, sources []watchSource, show func(context.Context) (string, error), output string) error {
	ctx, cancel := context.WithCancel(ctx)
	changed := make(chan struct{}, 1)
	var wg gosync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	for _, s := range sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keepWatching(ctx, s, changed)
		}()
	}
	var tick <-chan time.Time
	if r.m.Terminal && output == "" {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	last, shown := "", false
	for {
		out, err := show(ctx)
		var a *apiError
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &a) && apierrors.IsNotFound(a.err):
			out = err.Error() + " (deleted, or not made yet)\n"
		case err != nil:
			return err
		}
		if out != last {
			switch {
			case r.m.Terminal && output == "":
				fmt.Fprint(r.m.Stdout, "\x1b[H\x1b[2J")
			case shown && output != "json":
				fmt.Fprintln(r.m.Stdout, Separator)
			}
			fmt.Fprint(r.m.Stdout, out)
			last, shown = out, true
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
			settle(ctx, changed)
		case <-tick:
		}
	}
}

// settleTime is how long follow waits after an event for those that come with it (a write of
// the hook's answer changes the WebApp and its children together), to show them in one screen.
const settleTime = 100 * time.Millisecond

// settle waits settleTime, taking the events that come meanwhile.
func settle(ctx context.Context, changed <-chan struct{}) {
	t := time.NewTimer(settleTime)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			return
		case <-changed:
		}
	}
}

// keepWatching watches with start until ctx ends, starting again whenever the watch ends, and
// signals every event on changed without blocking. It gives up on a watch the user may not make.
func keepWatching(ctx context.Context, start watchSource, changed chan<- struct{}) {
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	for ctx.Err() == nil {
		w, err := start(ctx)
		if apierrors.IsForbidden(err) {
			return
		}
		if err == nil {
			stop := context.AfterFunc(ctx, w.Stop)
			for range w.ResultChan() {
				notify()
			}
			stop()
			w.Stop()
			notify() // what changed while no watch ran
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

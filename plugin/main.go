package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/example/webapp-operator/plugin/screen"
)

// Main is one run of kubectl webapp: its command line, its streams, what it connects to the
// cluster with, and its clock.
type Main struct {
	// Args are the arguments after the program's name.
	Args []string
	// Stdout gets what a command shows; Stderr its errors and refusals.
	Stdout, Stderr io.Writer
	// Terminal says that Stdout is a terminal: get -w then clears the screen between screens
	// and counts a pause down every second, and the screens are in colour unless NoColor.
	Terminal bool
	// NoColor turns colour off on a terminal too, as NO_COLOR asks.
	NoColor bool
	// Width is the terminal's width in columns; 0 draws screens at screen.DefaultWidth.
	Width int
	// Version is the plugin's version as the build stamped it (-ldflags -X); "" reads the
	// build information.
	Version string
	// Connect makes the clients from kubectl's flags; nil connects to the cluster they name.
	Connect func(*genericclioptions.ConfigFlags) (*Clients, error)
	// Now is the clock; nil is time.Now.
	Now func() time.Time
}

// Run parses the command line, runs the command until it is done or ctx ends (get -w and list
// -w run until then), prints what went wrong on Stderr, and returns the exit code (ExitCode).
func (m Main) Run(ctx context.Context) int {
	if m.Connect == nil {
		m.Connect = Connect
	}
	if m.Now == nil {
		m.Now = time.Now
	}
	r := &runner{m: m, flags: genericclioptions.NewConfigFlags(true)}
	root := r.root()
	root.SetArgs(m.Args)
	root.SetOut(m.Stdout)
	root.SetErr(m.Stderr)
	err := root.ExecuteContext(ctx)
	if err != nil && !r.ran {
		err = &usageError{err} // cobra's own: an unknown command or flag, a wrong count of arguments
	}
	code := ExitCode(err)
	switch code {
	case ExitOK:
	case ExitRefused:
		fmt.Fprintf(m.Stderr, "refused: %v\n", err)
	case ExitUsage:
		fmt.Fprintf(m.Stderr, "error: %v\nSee 'kubectl webapp --help'.\n", err)
	default:
		fmt.Fprintf(m.Stderr, "error: %v\n", err)
	}
	return code
}

// runner is a Main running: kubectl's flags, and whether a command's own code ran.
type runner struct {
	m     Main
	flags *genericclioptions.ConfigFlags
	// ran is set once the command line is parsed and a command starts.
	ran bool
}

// clients connects with the parsed flags.
func (r *runner) clients() (*Clients, error) {
	c, err := r.m.Connect(r.flags)
	if err != nil {
		return nil, fmt.Errorf("connect to the cluster: %w", err)
	}
	return c, nil
}

// options are how screens are drawn on Stdout.
func (r *runner) options() screen.Options {
	return screen.Options{Width: r.m.Width, Color: r.m.Terminal && !r.m.NoColor}
}

func (r *runner) root() *cobra.Command {
	root := &cobra.Command{
		Use:   "kubectl-webapp",
		Short: "Follow and steer WebApps and their canaries",
		Long: `kubectl webapp follows a WebApp (example.com/v1) and steers its canary, with your own
credentials: RBAC decides what you may do.

Each command that changes something patches the WebApp once, naming the attempt it acts on
(status.canary.revision, and status.canary.attempt when not 0), on the condition that the WebApp
is as it read it (its resourceVersion), and refuses when there is nothing to act on.

Exit codes: 0 done; 1 an error; 2 a wrong command line; 3 refused, nothing to act on, or the
WebApp changed since it was read (nothing was changed); 4 forbidden by the API server.`,
		Example: `  kubectl webapp get shop -w              # the whole story, refreshed on every change
  kubectl webapp set image shop nginx:1.28 # a release: starts a canary
  kubectl webapp promote shop             # end the current step
  kubectl webapp promote shop --full      # skip every remaining step
  kubectl webapp abort shop
  kubectl webapp retry shop               # the aborted revision again, from step 1
  kubectl webapp undo shop                # back to the stable Deployment's template, or the one before it`,
		Annotations:      map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl webapp"},
		SilenceErrors:    true,
		SilenceUsage:     true,
		PersistentPreRun: func(*cobra.Command, []string) { r.ran = true },
	}
	r.flags.AddFlags(root.PersistentFlags())
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &usageError{err} })
	root.AddCommand(r.getCmd(), r.listCmd(), r.promoteCmd(), r.abortCmd(), r.retryCmd(), r.undoCmd(), r.setCmd(), r.versionCmd())
	return root
}

// exactArgs is cobra.ExactArgs, its error a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return &usageError{err}
		}
		return nil
	}
}

// errOutput is the error of an -o that is neither json nor yaml.
var errOutput = errors.New(`--output must be json or yaml`)

// checkOutput checks -o's value.
func checkOutput(o string) error {
	switch o {
	case "", "json", "yaml":
		return nil
	}
	return &usageError{fmt.Errorf("%w, not %q", errOutput, o)}
}

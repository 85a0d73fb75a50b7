// Command kubectl-webapp is the kubectl plugin of the WebApp resource: kubectl webapp get, list,
// promote, abort, retry, undo, set image and version (package plugin). Put it on the PATH and
// kubectl finds it.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/example/webapp-operator/plugin"
)

// version is the plugin's version, stamped by make plugin (-ldflags -X main.version=...);
// empty, the build information says.
var version string

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	fd := int(os.Stdout.Fd())
	m := plugin.Main{
		Args:     os.Args[1:],
		Stdout:   os.Stdout,
		Stderr:   os.Stderr,
		Terminal: term.IsTerminal(fd),
		NoColor:  os.Getenv("NO_COLOR") != "",
		Version:  version,
	}
	if m.Terminal {
		m.Width, _, _ = term.GetSize(fd)
	}
	code := m.Run(ctx)
	stop()
	os.Exit(code)
}

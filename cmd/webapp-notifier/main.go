// Command webapp-notifier tells the life of WebApps: for each transition of a WebApp's canary and
// phase it records a Kubernetes Event on the WebApp and sends the notifications its
// subscriptions ask for, through notifications-engine, configured by the platform's ConfigMap
// and Secret in the notifier's namespace (docs/notifications.md). It never writes a WebApp.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stderr))
}

// run runs the notifier until ctx ends and returns the exit code: 0 done, 1 failed, 2 bad usage.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	m := NewMain(stderr)
	if err := m.ParseFlags(args, getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, err)
		return 2
	}
	if err := m.Run(ctx); err != nil {
		m.Logger.Error("notifier stopped", "error", err.Error())
		return 1
	}
	return 0
}

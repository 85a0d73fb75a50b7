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
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// run runs one command line and returns the exit code: 0 done, 1 failed, 2 bad usage.
// "render" and "sync" answer offline (see offline.go); anything else configures the server.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "render":
			return runRender(args[1:], stdin, stdout, stderr)
		case "sync":
			return runSync(args[1:], stdin, stdout, stderr)
		}
	}
	m := NewMain(stderr)
	if err := m.ParseFlags(args, getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, err)
		return 2
	}
	if m.showVersion {
		fmt.Fprintln(stdout, version())
		return 0
	}
	if err := m.Run(ctx); err != nil {
		m.Logger.Error("exit", "err", err)
		return 1
	}
	return 0
}

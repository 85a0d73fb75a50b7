// Command webapp-hook serves Metacontroller's sync and finalize hooks for the WebApp resource,
// its health checks, and its Prometheus metrics on a listener of their own.
//
// Usage:
//
//	webapp-hook [flags]                 serve (every flag also reads an environment variable)
//	webapp-hook render -f webapp.yaml   print the children a new WebApp would get
//	webapp-hook sync < request.json     answer one hook request from standard input
//	webapp-hook --help                  list the flags, their variables and defaults
//
// Each file has one job: main.go dispatches a command line (run); config.go is the
// configuration (Config, which embeds the webhook.Options its flags set, and ParseFlags);
// version.go what --version prints; lifecycle.go the server's life (Main: open, serve, reload
// the token, TLS and analysis files, shut down gracefully); offline.go the render and sync subcommands.
package main

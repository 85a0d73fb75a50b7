// Package webhook serves Metacontroller's sync and finalize hooks over HTTP, with health checks,
// and the hook's Prometheus metrics on a handler of their own.
//
// The HTTP layer is thin. Each route says which hook it serves (hook), and serveHook answers a
// call in named steps: admit (content type, length, read deadline, in-flight budget) and read
// the body; answer (the answer cache, then wire.DecodeRequest, the install's defaults, the
// measurement of a canary's analysis check that is due, from Options.Analysis, and sync.Sync,
// sync.Finalize or sync.Customize, encoded once, and cached unless it runs a timer or judged a
// measurement); writeAnswer (ETag, 304, the log
// line). Handlers return errors and one function,
// writeError, maps them to status codes and JSON bodies; details go to the log, never to the
// client. The answer cache (cache.go) answers a request that comes again byte for byte from
// memory; docs/performance.md lists it with the few other things done for speed, and why each
// stays.
package webhook

// Package webhook serves Metacontroller's sync and finalize hooks over HTTP, with health checks,
// and the hook's Prometheus metrics on a handler of their own.
//
// The HTTP layer is thin: a route reads the body, sync.DecodeRequest and sync.Sync or
// sync.Finalize decide, and the answer is encoded once. Handlers return errors and one function,
// writeError, maps them to status codes and JSON bodies; details go to the log, never to the
// client. The answer cache (cache.go) answers a request that comes again byte for byte from
// memory; docs/performance.md lists it with the few other things done for speed, and why each
// stays.
package webhook

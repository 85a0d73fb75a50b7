// Package analysis measures a canary's analysis from Prometheus: the edge's half of
// spec.rollout.canary.analysis, whose other half, deciding from a measurement, is the pure
// machine of package canary.
//
// Its one job is to turn a check that canary.Due says is due into a canary.Measurement. For each
// check it renders one PromQL expression that yields every value the check needs as a series of
// its own (the requests since the step began, those answered 5xx, the histogram of their
// durations, templates' values), told apart by the labels value, metric and track that
// label_replace adds, joined with "or" (Query); it evaluates that expression as one instant query
// at the check's time, so that every replica of the hook gets the same answer; and it reads the
// series back into canary.Values (read).
//
// The values come from the Gateway's own request metrics (the built-ins, Gateway says whose) or
// from templates the platform team wrote (Templates). A WebApp names no URL and no PromQL: only a
// built-in metric or a template by name, and every name of it a query holds is escaped as a
// label value (Label), so that a query selects only that WebApp's own backends.
//
// Prometheus is bounded (Prometheus.Measure): a query has at most MaxQueryTimeout, waiting for
// one of the MaxConcurrentQueries slots included; a WebApp's check is queried once per interval
// however often Metacontroller calls (the measurement cache, with calls in flight shared); a
// Prometheus that is slow, down or wrong makes a measurement whose Error says so in a sentence
// that names no URL, token or query, and the check inconclusive, never failed. The details go to
// the log. The edge is bounded too: no redirect is followed (the token goes to the configured URL
// only), an answer over MaxAnswerBytes is refused, a value that is not a finite number is no
// data, and each caller gets a measurement of its own. A token, CA or templates file that cannot
// be used never stops the hook: the checks that need it say so until a Reload takes up a good
// one (New).
//
// Prometheus's jobs are apart, a file each: files.go re-reads the token, CA and templates files
// (internal/reload, as the hook's own token and TLS files are) and puts what is taken up of them
// in force at once; client.go sends a query with the token and through the transport in force,
// refuses redirects and bounds the answer; measure.go measures a check (Lookup for a sync call,
// Measure for a caller that can wait) through the cache (cache.go), one query per check in
// flight, and the slots.
package analysis

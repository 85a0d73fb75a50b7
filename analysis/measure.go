package analysis

import (
	"context"
	"errors"
	"fmt"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"golang.org/x/sync/singleflight"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// The measuring: a check's measurement from memory when one is kept (cache.go), else from one
// query per check however many calls ask (the flights), at most Config.MaxConcurrentQueries of
// them in flight (the slots), each bounded by the query timeout.

// Measure measures the check of analysis a of parent's canary over span (canary.Due's). It never
// fails: what goes wrong is the measurement's Error, a sentence for the status. The measurement is
// the caller's own: its maps, slices and counts are shared with no other caller, nor with the
// cache. The first call for a check queries Prometheus once, with every value in one query
// (Query), evaluated at span.To; calls for the same check (the same parent, span and analysis)
// made meanwhile wait for that query, and later ones get its measurement from memory for two
// intervals. No call waits longer than ctx allows nor longer than the query timeout: the wait for
// a free slot counts against the same deadline, and a check whose query could not start or end
// within it is an Error. A call whose ctx ends first gets an Error too, which is not kept.
func (p *Prometheus) Measure(ctx context.Context, parent Parent, a *webappv1.CanaryAnalysis, span canary.Span) canary.Measurement {
	key := cacheKey(parent, a, span)
	if m, ok := p.cache.get(key, p.now()); ok { // a copy of its own
		p.metrics.lookups.WithLabelValues("hit").Inc()
		return m
	}
	select {
	case r := <-p.flight(key, parent, a, span, nil):
		return p.landed(r)
	case <-ctx.Done():
		p.metrics.lookups.WithLabelValues("canceled").Inc()
		return canary.Measurement{Span: span, Window: a.Window(), Error: "the hook call ended before Prometheus answered"}
	}
}

// Lookup is Measure for a sync call, which waits on Prometheus wait at most (0: not at all):
// the measurement of the check of analysis a of parent's canary over span, and true, when one is
// kept from an earlier query, when no query can measure it (unaskable), or when the query this
// call starts, or finds in flight, ends within wait; otherwise false, and the query goes on in
// the background (once, however many calls ask meanwhile), bounded by the query timeout and the
// slots as Measure's is, and is kept when it ends, error or not, so that a later call gets it.
// With false comes the latest measurement kept of an earlier check of the same step (the same
// span.From), for canary.StandsIn to judge whether it may stand in for the one due, or a zero
// Measurement when none is kept. A Prometheus that is slow or down so holds a call no longer
// than wait: the caller judges the step's earlier check, or, with none, leaves the check due and
// asks for another call shortly (canary.Input.Measuring); the measurement, once the query ends or
// times out, says what it found. A healthy Prometheus, which answers within wait, costs no
// second call. What Lookup hands out is the caller's own copy.
func (p *Prometheus) Lookup(parent Parent, a *webappv1.CanaryAnalysis, span canary.Span, wait time.Duration) (canary.Measurement, bool) {
	key := cacheKey(parent, a, span)
	if m, ok := p.cache.get(key, p.now()); ok {
		p.metrics.lookups.WithLabelValues("hit").Inc()
		return m, true
	}
	pl, m, unaskable := p.prepare(parent, a, span)
	if unaskable { // nothing to wait for: said at once
		p.cache.put(key, m, expiry(a, span), p.now())
		return m, true
	}
	// The earlier check is read before the flight starts, so that what is offered never depends
	// on whether the flight, which may answer at once, lands before this line or after it.
	earlier, hasEarlier := p.latest.get(stepKey(parent, a, span.From), p.now())
	ch := p.flight(key, parent, a, span, &pl) // its channel is buffered: nobody need read it
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case r := <-ch:
			return p.landed(r), true
		case <-t.C:
		}
	}
	p.metrics.lookups.WithLabelValues("measuring").Inc()
	if hasEarlier && earlier.Span.To.Before(span.To) {
		return earlier, false
	}
	return canary.Measurement{}, false
}

// LatestKept is how long past two intervals the latest measured check of a step is kept for
// Lookup to offer: longer than a resync period (60 s as shipped), which brings the next call of
// a canary whose checks are inconclusive.
const LatestKept = 5 * time.Minute

// flight is the query of the check key names, started unless one is in flight, with plan pl
// (nil: prepared here): its measurement, once measure returns, is kept when it may be (until
// expiry) and sent on the channel, which is buffered, so that a caller that stops waiting leaves
// it to land in the cache.
func (p *Prometheus) flight(key string, parent Parent, a *webappv1.CanaryAnalysis, span canary.Span, pl *plan) <-chan singleflight.Result {
	return p.flights.DoChan(key, func() (any, error) {
		m, keep := canary.Measurement{}, true
		if pl == nil {
			q, said, unaskable := p.prepare(parent, a, span)
			if unaskable {
				m = said
			} else {
				pl = &q
			}
		}
		if pl != nil {
			m, keep = p.measure(parent, a, span, *pl)
		}
		if keep {
			now := p.now()
			p.cache.put(key, m, expiry(a, span), now)
			p.latest.putLater(stepKey(parent, a, span.From), m, span.To.Add(2*a.Interval()+LatestKept), now)
		}
		return m, nil
	})
}

// landed is a caller's own copy of the measurement a flight it waited for brought, counted as a
// miss, or as shared when another call started the flight.
func (p *Prometheus) landed(r singleflight.Result) canary.Measurement {
	if r.Shared {
		p.metrics.lookups.WithLabelValues("shared").Inc()
	} else {
		p.metrics.lookups.WithLabelValues("miss").Inc()
	}
	return clone(r.Val.(canary.Measurement)) // every caller that shared the flight gets a copy of its own
}

// expiry is when a measurement of the check of a over span leaves the cache: two intervals after
// its time.
func expiry(a *webappv1.CanaryAnalysis, span canary.Span) time.Time {
	return span.To.Add(2 * a.Interval())
}

// prepare is the plan of the check's one query, with the files in force; or, when no query can
// measure the check, its measurement and unaskable true: the files it needs are unusable (logged,
// and counted, by Reload), or its plan says why its series cannot be told apart (Query). It asks
// nothing of Prometheus, so that Lookup can answer such a check at once, and the plan it makes is
// the one the query then sends.
func (p *Prometheus) prepare(parent Parent, a *webappv1.CanaryAnalysis, span canary.Span) (pl plan, m canary.Measurement, unaskable bool) {
	in := p.files.inForce()
	pl = makePlan(p.gateway, in.templates, parent, p.cfg.EntryPoints, a, span.Duration())
	m = canary.Measurement{Span: span, Window: a.Window()}
	switch {
	case in.unusable != "":
		m.Error = in.unusable
	case pl.err != nil:
		m.Error = pl.err.Error()
	default:
		return pl, canary.Measurement{}, false
	}
	return pl, m, true
}

// measure queries Prometheus for the check with plan pl (prepare's, askable), bounded by the
// query timeout from now, and reports whether the measurement may be kept for other calls.
func (p *Prometheus) measure(parent Parent, a *webappv1.CanaryAnalysis, span canary.Span, pl plan) (canary.Measurement, bool) {
	at := span.To
	m := canary.Measurement{Span: span, Window: a.Window()}
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.QueryTimeout)
	defer cancel()
	log := p.cfg.Logger.With("parent", parent.String(), "check_time", at.UTC().Format(time.RFC3339))

	acquired := false
	select {
	case p.slots <- struct{}{}:
		acquired = true
		defer func() { <-p.slots }()
	case <-ctx.Done():
	}
	if deadline, _ := ctx.Deadline(); !acquired || !time.Now().Before(deadline) { // a slot freed as the deadline passes is too late
		p.metrics.queries.WithLabelValues(outcomeBusy).Inc()
		m.Error = fmt.Sprintf("the hook had %d queries to Prometheus in flight, and this one could not start within %s", cap(p.slots), p.cfg.QueryTimeout)
		log.Warn("analysis query not sent: every slot busy", "max_concurrent_queries", cap(p.slots), "timeout", p.cfg.QueryTimeout.String())
		return m, true
	}

	var code int
	start := time.Now()
	v, warnings, _, err := p.api.Query(context.WithValue(ctx, statusKey{}, &code), pl.query, at)
	p.metrics.duration.Observe(time.Since(start).Seconds())
	if err != nil {
		sentence, outcome := describe(err, ctx, code, p.cfg.QueryTimeout)
		p.metrics.queries.WithLabelValues(outcome).Inc()
		attrs := []any{"err", err, "outcome", outcome}
		var perr *promv1.Error
		if errors.As(err, &perr) && perr.Detail != "" {
			attrs = append(attrs, "detail", cut(perr.Detail, 512))
		}
		log.Warn("analysis query failed", attrs...)
		log.Debug("analysis query", "query", pl.query)
		m.Error = sentence
		return m, true
	}
	if len(warnings) > 0 {
		log.Debug("analysis query warnings", "warnings", []string(warnings))
	}
	canaryValues, stableValues, err := read(v, p.gateway.Scale)
	if err != nil {
		p.metrics.queries.WithLabelValues(outcomeBadResult).Inc()
		log.Warn("analysis query result unreadable", "err", err)
		m.Error = "Prometheus answered something other than the series asked for"
		return m, true
	}
	p.metrics.queries.WithLabelValues(outcomeOK).Inc()
	m.Canary, m.Stable = canaryValues, stableValues
	m.Canary.Errors = merge(m.Canary.Errors, pl.canaryErrors)
	m.Stable.Errors = merge(m.Stable.Errors, pl.stableErrors)
	return m, true
}

// merge adds b's entries to a.
func merge(a, b map[string]string) map[string]string {
	for k, v := range b {
		a = set(a, k, v)
	}
	return a
}

// cut is s, cut to n bytes.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

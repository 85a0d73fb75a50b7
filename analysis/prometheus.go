package analysis

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"golang.org/x/sync/singleflight"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// Parent names the WebApp whose canary is measured.
type Parent struct {
	Namespace, Name string
}

// String is "namespace/name".
func (p Parent) String() string { return p.Namespace + "/" + p.Name }

// Prometheus measures canaries' analyses from a Prometheus server. It is safe for concurrent
// use.
type Prometheus struct {
	cfg     Config
	gateway *Gateway
	api     promv1.API
	// slots bounds the queries in flight (Config.MaxConcurrentQueries).
	slots   chan struct{}
	flights singleflight.Group
	cache   *measurements
	metrics *metrics
	// now is the clock of the cache's expiry; time.Now but in tests.
	now func() time.Time

	mu        stdsync.RWMutex
	token     string // "" without a token file
	transport *http.Transport
	templates *TemplateSet
	sums      [3][sha256.Size]byte // of the token, CA and templates files, as taken up
	loaded    bool

	reloadErrors atomic.Uint64
	// base is the transport the CA's transports are cloned from; tests replace it.
	base *http.Transport
	// roundTripper, when set (tests), is used in place of the transports.
	roundTripper http.RoundTripper
}

// New returns a Prometheus for c, its files read. It fails when c is not valid (Config.Validate)
// or a file cannot be read or used: with nothing read before, there is nothing to fall back on.
func New(c Config) (*Prometheus, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return newPrometheus(c.withDefaults(), nil)
}

// newPrometheus is New with a round tripper of the tests' in place of the network; nil for the
// network.
func newPrometheus(c Config, rt http.RoundTripper) (*Prometheus, error) {
	p := &Prometheus{
		cfg:          c,
		gateway:      Gateways[c.Gateway],
		slots:        make(chan struct{}, c.MaxConcurrentQueries),
		cache:        newMeasurements(maxCached),
		metrics:      newMetrics(),
		now:          time.Now,
		base:         http.DefaultTransport.(*http.Transport).Clone(),
		roundTripper: rt,
	}
	if _, err := p.Reload(); err != nil {
		return nil, err
	}
	client, err := api.NewClient(api.Config{Address: c.URL, RoundTripper: roundTripper{p}})
	if err != nil {
		return nil, errors.New("URL: not a URL")
	}
	p.api = promv1.NewAPI(client)
	return p, nil
}

// Reload re-reads the token, CA and templates files and reports whether the content of any
// changed since those in force were taken up (a SHA-256 of their bytes, never their size or
// time); if so, they are in force from now on: the next query sends the new token, trusts the new
// CA, and renders the new templates. When a file cannot be read or used (a CA file with no
// certificate, a templates file that does not parse), what was in force stays, the error is
// returned and counted (ReloadErrors), and the next Reload tries again. A measurement cached
// before a change is kept until it expires.
func (p *Prometheus) Reload() (changed bool, err error) {
	changed, err = p.reload()
	if err != nil {
		p.reloadErrors.Add(1)
		p.metrics.reloadErrors.Inc()
	}
	return changed, err
}

func (p *Prometheus) reload() (bool, error) {
	var data [3][]byte
	var sums [3][sha256.Size]byte
	for i, f := range []string{p.cfg.TokenFile, p.cfg.CAFile, p.cfg.TemplatesFile} {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return false, fmt.Errorf("analysis: %w", err) // names the file, never its content
		}
		data[i], sums[i] = b, sha256.Sum256(b)
	}
	p.mu.RLock()
	same := p.loaded && sums == p.sums
	p.mu.RUnlock()
	if same {
		return false, nil
	}
	transport := p.base.Clone()
	if p.cfg.CAFile != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(data[1]) {
			return false, fmt.Errorf("analysis: no PEM certificate in the CA file %s", p.cfg.CAFile)
		}
		if transport.TLSClientConfig == nil {
			transport.TLSClientConfig = &tls.Config{}
		}
		transport.TLSClientConfig.RootCAs = pool
		transport.TLSClientConfig.MinVersion = tls.VersionTLS12
	}
	templates := &TemplateSet{}
	if p.cfg.TemplatesFile != "" {
		var err error
		if templates, err = ParseTemplates(data[2]); err != nil {
			return false, fmt.Errorf("analysis: %s: %w", p.cfg.TemplatesFile, err)
		}
	}
	p.mu.Lock()
	old := p.transport
	p.token, p.transport, p.templates = strings.TrimSpace(string(data[0])), transport, templates
	p.sums, p.loaded = sums, true
	p.mu.Unlock()
	if old != nil {
		old.CloseIdleConnections()
	}
	return true, nil
}

// ReloadErrors counts the Reloads that failed.
func (p *Prometheus) ReloadErrors() uint64 { return p.reloadErrors.Load() }

// Templates are the names of the templates in force, sorted.
func (p *Prometheus) Templates() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.templates.Names()
}

// roundTripper sends a query with the token in force, through the transport in force, and
// records the answer's status code for the error sentence (statusOf).
type roundTripper struct{ p *Prometheus }

// RoundTrip implements http.RoundTripper.
func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	rt.p.mu.RLock()
	token, transport := rt.p.token, rt.p.transport
	rt.p.mu.RUnlock()
	if token != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+token)
	}
	var next http.RoundTripper = transport
	if rt.p.roundTripper != nil {
		next = rt.p.roundTripper
	}
	resp, err := next.RoundTrip(req)
	if code, ok := req.Context().Value(statusKey{}).(*int); ok && resp != nil {
		*code = resp.StatusCode
	}
	return resp, err
}

// statusKey is the context key of the *int a query's status code is recorded in.
type statusKey struct{}

// Measure measures the check of analysis a of parent's canary over span (canary.Due's). It never
// fails: what goes wrong is the measurement's Error, a sentence for the status. The first call
// for a check queries Prometheus once, with every value in one query (Query), evaluated at
// span.To; calls for the same check (the same parent, span and analysis) made meanwhile wait for
// that query, and later ones get its measurement from memory for two intervals. No call waits longer than ctx allows
// nor longer than the query timeout: the wait for a free slot counts against the same deadline,
// and a check whose query could not start or end within it is an Error. A call whose ctx ends
// first gets an Error too, which is not kept.
func (p *Prometheus) Measure(ctx context.Context, parent Parent, a *webappv1.CanaryAnalysis, span canary.Span) canary.Measurement {
	key := cacheKey(parent, a, span)
	at := span.To
	if m, ok := p.cache.get(key, p.now()); ok {
		p.metrics.lookups.WithLabelValues("hit").Inc()
		return m
	}
	ch := p.flights.DoChan(key, func() (any, error) {
		m, keep := p.measure(parent, a, span)
		if keep {
			p.cache.put(key, m, at.Add(2*a.Interval()), p.now())
		}
		return m, nil
	})
	select {
	case r := <-ch:
		if r.Shared {
			p.metrics.lookups.WithLabelValues("shared").Inc()
		} else {
			p.metrics.lookups.WithLabelValues("miss").Inc()
		}
		return r.Val.(canary.Measurement)
	case <-ctx.Done():
		p.metrics.lookups.WithLabelValues("canceled").Inc()
		return canary.Measurement{Span: span, Window: a.Window(), Error: "the hook call ended before Prometheus answered"}
	}
}

// Lookup is Measure for a sync call, which never waits on Prometheus: the measurement of the
// check of analysis a of parent's canary over span, and true, when one is kept from an earlier
// query; otherwise false, and the query is started in the background (once, however many calls
// ask meanwhile), bounded by the query timeout and the slots as Measure's is, and kept when it
// ends, error or not, so that a call a moment later gets it. A Prometheus that is slow or down so
// holds no call: the check stays due, the machine asks for another call shortly
// (canary.Input.Measuring), and the measurement, once the query ends or times out, says what it
// found. What Lookup hands out is the caller's own copy.
func (p *Prometheus) Lookup(parent Parent, a *webappv1.CanaryAnalysis, span canary.Span) (canary.Measurement, bool) {
	key := cacheKey(parent, a, span)
	if m, ok := p.cache.get(key, p.now()); ok {
		p.metrics.lookups.WithLabelValues("hit").Inc()
		return m, true
	}
	p.metrics.lookups.WithLabelValues("measuring").Inc()
	p.flights.DoChan(key, func() (any, error) { // its channel is buffered: nobody need read it
		m, keep := p.measure(parent, a, span)
		if keep {
			p.cache.put(key, m, span.To.Add(2*a.Interval()), p.now())
		}
		return m, nil
	})
	return canary.Measurement{}, false
}

// measure queries Prometheus for the check, bounded by the query timeout from now, and reports
// whether the measurement may be kept for other calls.
func (p *Prometheus) measure(parent Parent, a *webappv1.CanaryAnalysis, span canary.Span) (canary.Measurement, bool) {
	at := span.To
	m := canary.Measurement{Span: span, Window: a.Window()}
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.QueryTimeout)
	defer cancel()
	p.mu.RLock()
	pl := makePlan(p.gateway, p.templates, parent.Namespace, parent.Name, a, span.Duration())
	p.mu.RUnlock()
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

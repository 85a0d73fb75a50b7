package analysis

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
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

// Parent names the WebApp whose canary is measured, and the HTTPRoute that carries its requests.
type Parent struct {
	Namespace, Name string
	// Route is what the Gateway's selector reads of the WebApp's HTTPRoute.
	Route Route
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

	// reloading serializes Reloads; mu guards what they put in force.
	reloading stdsync.Mutex
	mu        stdsync.RWMutex
	token     string // "" without a token file
	transport *http.Transport
	templates *TemplateSet
	// unusable, when not "", is why no query can be sent: a token or CA file that was never
	// read and used (New tolerates it), as a sentence for the status.
	unusable string
	files    [numFiles]file

	reloadErrors atomic.Uint64
	// base is the transport the CA's transports are cloned from; tests replace it.
	base *http.Transport
	// roundTripper, when set (tests), is used in place of the transports.
	roundTripper http.RoundTripper
}

// The files a Prometheus reads, as indexes of Prometheus.files.
const (
	fileToken = iota
	fileCA
	fileTemplates
	numFiles
)

// file is what is in force of one of the files: the SHA-256 of the bytes taken up, when some
// were.
type file struct {
	sum    [sha256.Size]byte
	loaded bool
	// pool is the CA file's certificates, as taken up.
	pool *x509.CertPool
}

// New returns a Prometheus for c, its files read. It fails only when c is not valid
// (Config.Validate). A file that cannot be read or used is logged and counted (ReloadErrors), as a
// Reload's is, and the hook goes on without it until a Reload takes up a good one: a templates
// file that does not parse makes every metric that names a template say so in the status (the
// built-ins are measured); a token or CA file makes every check say so, and no query is sent,
// so that none goes out without its token or to a server its CA would not trust. A bad file
// thus never stops the hook, which syncs every WebApp whatever its analysis.
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
		c.Logger.Error("analysis files: going on without what cannot be used, until a reload takes up a good file; checks that need it say so in the status", "err", err, "reload_errors", p.ReloadErrors())
	}
	client, err := api.NewClient(api.Config{Address: c.URL, Client: &http.Client{
		Transport: roundTripper{p},
		// The round tripper refuses a redirect already; this is the same refusal, should a
		// round tripper ever answer one.
		CheckRedirect: func(*http.Request, []*http.Request) error { return errRedirect },
	}})
	if err != nil {
		return nil, errors.New("URL: not a URL")
	}
	p.api = promv1.NewAPI(client)
	return p, nil
}

// Reload re-reads the token, CA and templates files and reports whether the content of any
// changed since what is in force was taken up (a SHA-256 of their bytes, never their size or
// time); a changed file that can be used is in force from now on: the next query sends the new
// token, trusts the new CA, and renders the new templates. When a file cannot be read or used (a
// CA file with no certificate, a templates file that does not parse), what was in force of that
// file stays (the others are taken up), the error is returned and counted (ReloadErrors), and the
// next Reload tries again; with nothing of it taken up yet, the checks that need it say why in
// the status, as New says. A measurement cached before a change is kept until it expires: it is
// of a check already measured.
func (p *Prometheus) Reload() (changed bool, err error) {
	changed, err = p.reload()
	if err != nil {
		p.reloadErrors.Add(1)
		p.metrics.reloadErrors.Inc()
	}
	return changed, err
}

func (p *Prometheus) reload() (bool, error) {
	p.reloading.Lock()
	defer p.reloading.Unlock()
	p.mu.RLock()
	files, token, templates, haveTransport := p.files, p.token, p.templates, p.transport != nil
	p.mu.RUnlock()
	var errs []error
	var unusable [numFiles]string // why a file never taken up cannot be
	changed := false
	for i, path := range [numFiles]string{p.cfg.TokenFile, p.cfg.CAFile, p.cfg.TemplatesFile} {
		if path == "" {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, fmt.Errorf("analysis: %w", err)) // names the file, never its content
			unusable[i] = "cannot be read"
			continue
		}
		sum := sha256.Sum256(b)
		if files[i].loaded && sum == files[i].sum {
			continue
		}
		switch i {
		case fileToken:
			token = strings.TrimSpace(string(b))
		case fileCA:
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(b) {
				errs = append(errs, fmt.Errorf("analysis: no PEM certificate in the CA file %s", path))
				unusable[i] = "holds no PEM certificate"
				continue
			}
			files[i].pool = pool
		case fileTemplates:
			set, err := ParseTemplates(b)
			if err != nil {
				errs = append(errs, fmt.Errorf("analysis: %s: %w", path, err))
				unusable[i] = statusOf(err)
				continue
			}
			templates = set
		}
		files[i].sum, files[i].loaded = sum, true
		changed = true
	}
	if templates == nil || templates.bad != "" { // no good templates file taken up yet
		templates = &TemplateSet{}
		if p.cfg.TemplatesFile != "" {
			templates.bad = "the hook's analysis templates file " + unusable[fileTemplates]
		}
	}
	why := ""
	switch {
	case p.cfg.TokenFile != "" && !files[fileToken].loaded:
		why = "the hook's Prometheus token file " + unusable[fileToken]
	case p.cfg.CAFile != "" && !files[fileCA].loaded:
		why = "the hook's Prometheus CA file " + unusable[fileCA]
	}
	var transport *http.Transport
	if changed || !haveTransport {
		transport = p.base.Clone()
		if pool := files[fileCA].pool; pool != nil {
			if transport.TLSClientConfig == nil {
				transport.TLSClientConfig = &tls.Config{}
			}
			transport.TLSClientConfig.RootCAs = pool
			transport.TLSClientConfig.MinVersion = tls.VersionTLS12
		}
	}
	p.mu.Lock()
	old := p.transport
	if transport != nil {
		p.transport = transport
	}
	p.token, p.templates, p.files, p.unusable = token, templates, files, why
	p.mu.Unlock()
	if transport != nil && old != nil {
		old.CloseIdleConnections()
	}
	return changed, errors.Join(errs...)
}

// ReloadErrors counts the Reloads that failed.
func (p *Prometheus) ReloadErrors() uint64 { return p.reloadErrors.Load() }

// Templates are the names of the templates in force, sorted.
func (p *Prometheus) Templates() []string {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.templates.Names()
}

// MaxAnswerBytes bounds Prometheus's answer to a query, its body as read (decompressed): an
// answer over it is refused, and the check is inconclusive ("Prometheus's answer was over 1
// MiB"). A check's query yields a few series, a few hundred bytes each, so only a Prometheus
// that answers something else comes near it; the bound keeps such an answer from costing the
// hook its memory.
const MaxAnswerBytes = 1 << 20

// errRedirect is a 3xx answer: the hook follows no redirect, so that the token goes to the
// configured URL only, never to wherever an answer points, over whatever scheme.
var errRedirect = errors.New("the hook follows no redirect")

// errTooLarge is an answer over MaxAnswerBytes.
var errTooLarge = fmt.Errorf("the answer is over %d bytes", MaxAnswerBytes)

// roundTripper sends a query with the token in force, through the transport in force, and
// records the answer's status code for the error sentence (describe). It refuses an answer that
// redirects (errRedirect), so that no request follows it with the token, and bounds the answer's
// body (errTooLarge).
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
	if err != nil {
		return nil, err
	}
	if code, ok := req.Context().Value(statusKey{}).(*int); ok {
		*code = resp.StatusCode
	}
	switch {
	case resp.StatusCode/100 == 3:
		resp.Body.Close()
		return nil, errRedirect
	case resp.ContentLength > MaxAnswerBytes:
		resp.Body.Close()
		return nil, errTooLarge
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: MaxAnswerBytes}
	return resp, nil
}

// boundedBody is an answer's body that fails with errTooLarge once more than left bytes are read.
type boundedBody struct {
	io.ReadCloser
	left int64
}

// Read implements io.Reader.
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte more than allowed tells an answer of exactly the bound from a longer one
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, errTooLarge
	}
	return n, err
}

// statusKey is the context key of the *int a query's status code is recorded in.
type statusKey struct{}

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
	at := span.To
	if m, ok := p.cache.get(key, p.now()); ok { // a copy of its own
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
		return clone(r.Val.(canary.Measurement)) // every caller that shared the flight gets a copy of its own
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
// slots as Measure's is, and is kept when it ends, error or not, so that a call a moment later
// gets it. A Prometheus that is slow or down so holds a call no longer than wait: the check stays
// due, the machine asks for another call shortly (canary.Input.Measuring), and the measurement,
// once the query ends or times out, says what it found. A healthy Prometheus, which answers
// within wait, costs no second call. What Lookup hands out is the caller's own copy.
func (p *Prometheus) Lookup(parent Parent, a *webappv1.CanaryAnalysis, span canary.Span, wait time.Duration) (canary.Measurement, bool) {
	key := cacheKey(parent, a, span)
	if m, ok := p.cache.get(key, p.now()); ok {
		p.metrics.lookups.WithLabelValues("hit").Inc()
		return m, true
	}
	if m, ok := p.unaskable(parent, a, span); ok { // nothing to wait for: said at once
		p.cache.put(key, m, span.To.Add(2*a.Interval()), p.now())
		return m, true
	}
	ch := p.flights.DoChan(key, func() (any, error) { // its channel is buffered: nobody need read it
		m, keep := p.measure(parent, a, span)
		if keep {
			p.cache.put(key, m, span.To.Add(2*a.Interval()), p.now())
		}
		return m, nil
	})
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case r := <-ch:
			if r.Shared {
				p.metrics.lookups.WithLabelValues("shared").Inc()
			} else {
				p.metrics.lookups.WithLabelValues("miss").Inc()
			}
			return clone(r.Val.(canary.Measurement)), true
		case <-t.C:
		}
	}
	p.metrics.lookups.WithLabelValues("measuring").Inc()
	return canary.Measurement{}, false
}

// unaskable is the measurement of a check that no query can measure, and true: the files it
// needs are unusable, or its plan says why its series cannot be told apart (Query). It asks
// nothing of Prometheus, so that Lookup can answer at once.
func (p *Prometheus) unaskable(parent Parent, a *webappv1.CanaryAnalysis, span canary.Span) (canary.Measurement, bool) {
	p.mu.RLock()
	pl := makePlan(p.gateway, p.templates, parent, p.cfg.EntryPoints, a, span.Duration())
	unusable := p.unusable
	p.mu.RUnlock()
	m := canary.Measurement{Span: span, Window: a.Window()}
	switch {
	case unusable != "":
		m.Error = unusable
	case pl.err != nil:
		m.Error = pl.err.Error()
	default:
		return canary.Measurement{}, false
	}
	return m, true
}

// measure queries Prometheus for the check, bounded by the query timeout from now, and reports
// whether the measurement may be kept for other calls.
func (p *Prometheus) measure(parent Parent, a *webappv1.CanaryAnalysis, span canary.Span) (canary.Measurement, bool) {
	at := span.To
	m := canary.Measurement{Span: span, Window: a.Window()}
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.QueryTimeout)
	defer cancel()
	p.mu.RLock()
	pl := makePlan(p.gateway, p.templates, parent, p.cfg.EntryPoints, a, span.Duration())
	unusable := p.unusable
	p.mu.RUnlock()
	if unusable != "" { // logged, and counted, by Reload
		m.Error = unusable
		return m, true
	}
	log := p.cfg.Logger.With("parent", parent.String(), "check_time", at.UTC().Format(time.RFC3339))
	if pl.err != nil {
		m.Error = pl.err.Error()
		return m, true
	}

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

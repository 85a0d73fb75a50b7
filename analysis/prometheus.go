package analysis

import (
	"net/http"
	"sync/atomic"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"golang.org/x/sync/singleflight"
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
// use. Its jobs are apart, one file each: files.go re-reads the token, CA and templates files and
// holds what is in force of them; client.go asks Prometheus's HTTP API with the token and
// transport in force, follows no redirect and bounds the answer; measure.go measures a check
// (Measure, Lookup) through the cache, the flights and the slots.
type Prometheus struct {
	cfg     Config
	gateway *Gateway
	metrics *metrics

	// files are the token, CA and templates files, and what is in force of them (files.go).
	files        *files
	reloadErrors atomic.Uint64

	// api asks Prometheus through the client (client.go).
	api promv1.API

	// The measuring (measure.go). slots bounds the queries in flight
	// (Config.MaxConcurrentQueries); flights shares a check's query among the calls that ask for
	// it meanwhile; cache keeps its measurement, and latest the latest measured check of each
	// step, by stepKey, which Lookup offers while the due one is still being measured.
	slots   chan struct{}
	flights singleflight.Group
	cache   *measurements
	latest  *measurements
	// now is the clock of the cache's expiry; time.Now but in tests.
	now func() time.Time
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
		cfg:     c,
		gateway: Gateways[c.Gateway],
		metrics: newMetrics(),
		files:   newFiles(c),
		slots:   make(chan struct{}, c.MaxConcurrentQueries),
		cache:   newMeasurements(maxCached),
		latest:  newMeasurements(maxCached / 2),
		now:     time.Now,
	}
	if _, err := p.Reload(); err != nil {
		c.Logger.Error("analysis files: going on without what cannot be used, until a reload takes up a good file; checks that need it say so in the status", "err", err, "reload_errors", p.ReloadErrors())
	}
	var err error
	if p.api, err = newAPI(c.URL, p.files, rt); err != nil {
		return nil, err
	}
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
	changed, err = p.files.reload()
	if err != nil {
		p.reloadErrors.Add(1)
		p.metrics.reloadErrors.Inc()
	}
	return changed, err
}

// ReloadErrors counts the Reloads that failed.
func (p *Prometheus) ReloadErrors() uint64 { return p.reloadErrors.Load() }

// Templates are the names of the templates in force, sorted.
func (p *Prometheus) Templates() []string { return p.files.inForce().templates.Names() }

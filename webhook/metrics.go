package webhook

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the handler's Prometheus metrics, on a registry of its own so that handlers (and
// tests) never share counters.
type metrics struct {
	registry  *prometheus.Registry
	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	decisions *prometheus.CounterVec
	inFlight  prometheus.Gauge
	panics    prometheus.Counter
	// cacheHits and cacheMisses count answer cache lookups.
	cacheHits, cacheMisses prometheus.Counter
	// tokenRequests counts the calls allowed by each token, by its Fingerprint.
	tokenRequests *prometheus.CounterVec
}

// newMetrics registers the handler's metrics; c is its answer cache, nil when disabled; tokens
// and tlsFiles, either of which may be nil, are reported by fingerprint; measurer's metrics are
// registered too when it is a prometheus.Collector.
func newMetrics(c *answerCache, tokens *TokenFile, tlsFiles *TLSFiles, measurer Measurer) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webapp_hook_requests_total",
			Help: "Hook calls by route (sync, finalize) and HTTP status code.",
		}, []string{"hook", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "webapp_hook_request_duration_seconds",
			Help:    "Time to answer a hook call, from the first byte read to the last written, by route.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}, []string{"hook"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webapp_hook_decisions_total",
			Help: "Answers by the hook that decided them (sync, finalize) and the WebApp phase they report.",
		}, []string{"hook", "phase"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "webapp_hook_requests_in_flight",
			Help: "Hook calls being answered now.",
		}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "webapp_hook_panics_total",
			Help: "Panics recovered into a 500; any is a bug.",
		}),
		tokenRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webapp_hook_token_requests_total",
			Help: "Hook calls allowed, by the fingerprint of the bearer token they carried (webhook.Fingerprint).",
		}, []string{"token"}),
	}
	lookups := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "webapp_hook_answer_cache_requests_total",
		Help: "Hook calls looked up in the answer cache, by result: hit (answered from memory) or miss.",
	}, []string{"result"})
	m.cacheHits, m.cacheMisses = lookups.WithLabelValues("hit"), lookups.WithLabelValues("miss")
	m.registry.MustRegister(m.requests, m.duration, m.decisions, m.inFlight, m.panics, lookups,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "webapp_hook_answer_cache_bytes",
			Help: "Bytes of answers held by the answer cache; at most --cache-bytes.",
		}, func() float64 { return float64(c.stats().bytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "webapp_hook_answer_cache_entries",
			Help: "Answers held by the answer cache.",
		}, func() float64 { return float64(c.stats().entries) }),
		m.tokenRequests, credentials{tokens, tlsFiles},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if col, ok := measurer.(prometheus.Collector); ok {
		m.registry.MustRegister(col)
	}
	return m
}

// credentials reports the tokens and the certificate in force at each scrape, by fingerprint, so
// that a rotation can ask every replica whether it took up a new one.
type credentials struct {
	tokens   *TokenFile // nil without tokens
	tlsFiles *TLSFiles  // nil without TLS
}

var (
	tokenDesc = prometheus.NewDesc("webapp_hook_tokens",
		"1 for each bearer token the hook accepts now, by its fingerprint (webhook.Fingerprint).",
		[]string{"token"}, nil)
	certificateDesc = prometheus.NewDesc("webapp_hook_tls_certificate_expiry_timestamp_seconds",
		"When the certificate the hook serves now expires, in Unix seconds, by the SHA-256 of its DER encoding.",
		[]string{"sha256"}, nil)
	reloadErrorsDesc = prometheus.NewDesc("webapp_hook_credential_reload_errors_total",
		"Reloads of the token file (file=\"token\") or the TLS files (file=\"tls\") that failed, keeping what was in force.",
		[]string{"file"}, nil)
)

// Describe sends the descriptions of the credential metrics.
func (c credentials) Describe(ch chan<- *prometheus.Desc) {
	ch <- tokenDesc
	ch <- certificateDesc
	ch <- reloadErrorsDesc
}

// Collect sends one webapp_hook_tokens series per accepted token (none when the token file lists
// none) and, with TLS, the served certificate's expiry; and, for each of the two that is
// configured, how many of its reloads failed.
func (c credentials) Collect(ch chan<- prometheus.Metric) {
	if c.tokens != nil {
		for _, fp := range c.tokens.Fingerprints() {
			ch <- prometheus.MustNewConstMetric(tokenDesc, prometheus.GaugeValue, 1, fp)
		}
		ch <- prometheus.MustNewConstMetric(reloadErrorsDesc, prometheus.CounterValue, float64(c.tokens.ReloadErrors()), "token")
	}
	if c.tlsFiles != nil {
		sum, notAfter := c.tlsFiles.Certificate()
		ch <- prometheus.MustNewConstMetric(certificateDesc, prometheus.GaugeValue, float64(notAfter.Unix()), sum)
		ch <- prometheus.MustNewConstMetric(reloadErrorsDesc, prometheus.CounterValue, float64(c.tlsFiles.ReloadErrors()), "tls")
	}
}

// instrument returns the outermost middleware of hook hk's route: it counts, times and tracks
// its calls. It is written out rather than made of promhttp's instrumentation, whose delegating
// writer and label lookups cost 8 % of an answer from the answer cache (docs/performance.md).
func (m *metrics) instrument(hk hook) func(http.Handler) http.Handler {
	duration, ok := m.duration.WithLabelValues(hk.String()), m.requests.WithLabelValues(hk.String(), "200")
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m.inFlight.Inc()
			defer m.inFlight.Dec()
			start := time.Now()
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			duration.Observe(time.Since(start).Seconds())
			if sw.code == http.StatusOK {
				ok.Inc()
			} else {
				m.requests.WithLabelValues(hk.String(), strconv.Itoa(sw.code)).Inc()
			}
		})
	}
}

// statusWriter remembers the status code written through it; 200 when none was set explicitly.
type statusWriter struct {
	http.ResponseWriter
	code int
}

// WriteHeader records the first code written.
func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write records 200 when no code was written before.
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap returns the ResponseWriter written through, so that an http.ResponseController can
// reach the connection's deadlines (admit sets the body's).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serveMetrics handles GET /metrics in the Prometheus text format.
func (m *metrics) serveMetrics() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

package analysis

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are a Prometheus's own metrics; it is a prometheus.Collector of them.
type metrics struct {
	queries      *prometheus.CounterVec
	duration     prometheus.Histogram
	lookups      *prometheus.CounterVec
	reloadErrors prometheus.Counter
}

func newMetrics() *metrics {
	m := &metrics{
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webapp_hook_analysis_queries_total",
			Help: "Queries of canary analyses to Prometheus, one per check, by outcome: ok, timeout, busy (no slot within the timeout), http_error, refused (Prometheus's own error), unreachable, bad_result, too_large (an answer over 1 MiB).",
		}, []string{"outcome"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "webapp_hook_analysis_query_duration_seconds",
			Help:    "Time Prometheus took to answer a canary analysis query, or to fail.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2},
		}),
		lookups: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "webapp_hook_analysis_measurements_total",
			Help: "Measurements of due checks asked for, by how they were got: hit (kept from an earlier query), miss (queried, and answered within the call's wait), shared (a query in flight for the same check, answered within it), measuring (not within it: the query goes on, and the call does not wait longer), canceled (a call that waits for it ended first).",
		}, []string{"result"}),
		reloadErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "webapp_hook_analysis_reload_errors_total",
			Help: "Reloads of the Prometheus token, CA or templates files that failed, keeping what was in force.",
		}),
	}
	for _, o := range outcomes {
		m.queries.WithLabelValues(o)
	}
	for _, r := range []string{"miss", "shared", "hit", "canceled", "measuring"} {
		m.lookups.WithLabelValues(r)
	}
	return m
}

// Describe implements prometheus.Collector: a Prometheus's metrics, for the hook's registry.
func (p *Prometheus) Describe(ch chan<- *prometheus.Desc) {
	p.metrics.queries.Describe(ch)
	p.metrics.duration.Describe(ch)
	p.metrics.lookups.Describe(ch)
	p.metrics.reloadErrors.Describe(ch)
}

// Collect implements prometheus.Collector.
func (p *Prometheus) Collect(ch chan<- prometheus.Metric) {
	p.metrics.queries.Collect(ch)
	p.metrics.duration.Collect(ch)
	p.metrics.lookups.Collect(ch)
	p.metrics.reloadErrors.Collect(ch)
}

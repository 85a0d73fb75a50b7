package notifier

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the notifier's counters. A service label is the name of a service the platform
// defined, never a recipient, a URL or a token.
type Metrics struct {
	// Sent counts notifications a service accepted, by service.
	Sent *prometheus.CounterVec
	// Failed counts attempts a service refused or did not answer, by service; each is retried
	// with backoff.
	Failed *prometheus.CounterVec
	// Retried counts attempts after a failed one.
	Retried prometheus.Counter
	// Refused counts subscriptions that name a trigger or a service the platform did not
	// define, by what ("trigger", "service"), once per transition they would have told:
	// nothing is sent for them.
	Refused *prometheus.CounterVec
	// Events counts the Events of transitions, by result: created, existed (recorded before,
	// by this replica or another) or failed.
	Events *prometheus.CounterVec
}

// NewMetrics returns the notifier's metrics, registered with reg when it is not nil.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Sent: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "webapp_notifier_notifications_sent_total",
			Help: "Notifications a service accepted, by service."}, []string{"service"}),
		Failed: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "webapp_notifier_notifications_failed_total",
			Help: "Notification attempts that failed, by service; each is retried with backoff."}, []string{"service"}),
		Retried: prometheus.NewCounter(prometheus.CounterOpts{Name: "webapp_notifier_notifications_retried_total",
			Help: "Notification attempts after a failed one."}),
		Refused: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "webapp_notifier_subscriptions_refused_total",
			Help: "Subscriptions that name a trigger or a service the platform did not define, by what: nothing was sent."}, []string{"what"}),
		Events: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "webapp_notifier_events_total",
			Help: "Events of transitions, by result: created, existed or failed."}, []string{"result"}),
	}
	for _, r := range []string{"created", "existed", "failed"} {
		m.Events.WithLabelValues(r)
	}
	for _, w := range []string{"trigger", "service"} {
		m.Refused.WithLabelValues(w)
	}
	if reg != nil {
		reg.MustRegister(m.Sent, m.Failed, m.Retried, m.Refused, m.Events)
	}
	return m
}

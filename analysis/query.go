package analysis

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// The labels that tell the series of a check's one query apart, added by label_replace.
const (
	// labelValue is "requests" for a version's request count, "failed" for those of them answered
	// 5xx, "buckets" for its histogram of durations (a series per le), "metric" for a template
	// metric's value.
	labelValue = "value"
	// labelMetric is the metric's name, on a "metric" series.
	labelMetric = "metric"
	// labelTrack is "canary" or "stable": the version measured.
	labelTrack = "track"

	valueRequests = "requests"
	valueFailed   = "failed"
	valueBuckets  = "buckets"
	valueMetric   = "metric"
	trackCanary   = "canary"
	trackStable   = "stable"
)

// Quote writes s as a PromQL double-quoted string literal, quotes included. PromQL reads string
// literals with Go's escapes, so strconv.Quote's output reads back as s exactly, whatever s holds:
// a quote, a backslash, a newline or "}" stays inside the literal.
func Quote(s string) string { return strconv.Quote(s) }

// escape is s escaped for inside a PromQL double-quoted string: Quote without its quotes.
func escape(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// Label is a name a query is given (a namespace, a WebApp's name, a Service's), for use inside a
// double-quoted label matcher of a template. Printed ({{.Name}}), it is escaped for an equality
// matcher (= and !=): name="{{.Name}}". Its Regex ({{.Name.Regex}}) is also regexp-quoted, for a
// regular-expression matcher (=~ and !~), in which Prometheus anchors the whole value:
// service=~"{{.Namespace.Regex}}-.+". Either way the value cannot end the string it is in, nor
// match more than itself.
type Label string

// String is l escaped for inside a double-quoted PromQL string.
func (l Label) String() string { return escape(string(l)) }

// Regex is l regexp-quoted (regexp.QuoteMeta), then escaped for inside a double-quoted PromQL
// string: it matches l and nothing else.
func (l Label) Regex() string { return escape(regexp.QuoteMeta(string(l))) }

// Window writes d as a PromQL duration in whole seconds, "60s"; at least "1s".
func Window(d time.Duration) string {
	return strconv.FormatInt(max(int64(d/time.Second), 1), 10) + "s"
}

// Gateway is one Gateway implementation's request metrics, from which the built-in metrics are
// measured.
type Gateway struct {
	// Name is what --analysis-gateway calls it.
	Name string
	// Requests is the counter of requests, with a label for the response's status code.
	Requests string
	// Code is the status code label of Requests.
	Code string
	// Buckets is the histogram of request durations, its _bucket series.
	Buckets string
	// Scale turns the histogram's unit into milliseconds: 1000 for seconds.
	Scale float64
	// Selector is the label matchers, without braces, that select the requests of b, one route's
	// one backend, and no other's; or, when the Gateway's series cannot be told apart for b, an
	// error whose text says so in a sentence for the status.
	Selector func(b *Backend) (string, error)
}

// Istio is Istio's standard metrics, as the destination's proxy reports them. Its selector
// matches the Service's namespace and name exactly, each a label of its own: the requests any
// client sent to that Service, through the route or not, and so whichever rule of the route sent
// them: a canary whose header route's requests are left out cannot be measured.
var Istio = Gateway{
	Name:     "istio",
	Requests: "istio_requests_total",
	Code:     "response_code",
	Buckets:  "istio_request_duration_milliseconds_bucket",
	Scale:    1,
	Selector: func(b *Backend) (string, error) {
		if r := b.Route; r != nil && len(r.HeaderMatches) > 0 && !r.CountHeaderRoute {
			return "", errors.New("Istio counts a Service's requests whatever rule of the route sent them, so the header route's cannot be left out (headerRoute.analysis Exclude): not measured")
		}
		return `reporter="destination", destination_service_namespace=` + Quote(b.Namespace) + `, destination_service_name=` + Quote(b.Service), nil
	},
}

// Gateways are the Gateway implementations whose metrics the built-ins read, by name.
var Gateways = map[string]*Gateway{Traefik.Name: &Traefik, Istio.Name: &Istio}

// target is what a query measures: a WebApp's version, the span of the built-in metrics (since
// the step began) and the window of a template's, each ending at the check.
type target struct {
	namespace, name string
	// service is the Service of the version measured: <name>-canary or <name>-stable.
	service string
	span    time.Duration
	// selector is the Gateway's label matchers of service's requests (Gateway.Selector).
	selector string
	window   time.Duration
}

// requests is the PromQL of the requests the version had in the span.
func (g *Gateway) requests(t target) string {
	return fmt.Sprintf("sum(increase(%s{%s}[%s]))", g.Requests, t.selector, Window(t.span))
}

// failed is the PromQL of the requests the version had in the span that were answered 5xx; no
// series when none was.
func (g *Gateway) failed(t target) string {
	return fmt.Sprintf(`sum(increase(%s{%s, %s=~"5.."}[%s]))`, g.Requests, t.selector, g.Code, Window(t.span))
}

// buckets is the PromQL of the version's histogram of request durations in the span: a series
// per bucket (le), cumulative, in the Gateway's unit.
func (g *Gateway) buckets(t target) string {
	return fmt.Sprintf("sum by (le) (increase(%s{%s}[%s]))", g.Buckets, t.selector, Window(t.span))
}

// part is one series of a check's query.
type part struct {
	value, metric, track string
	expr                 string
}

// labelled is p's expression with its labels added by label_replace. The expression stands on
// lines of its own, in parentheses, so that a template's trailing comment cannot swallow them.
func (p part) labelled() string {
	e := "(\n" + p.expr + "\n)"
	for _, l := range [][2]string{{labelValue, p.value}, {labelMetric, p.metric}, {labelTrack, p.track}} {
		if l[1] == "" {
			continue
		}
		// The replacement expands $1 and ${name}: $$ is a literal $.
		e = fmt.Sprintf("label_replace(%s, %s, %s, \"\", \"\")", e, Quote(l[0]), Quote(strings.ReplaceAll(l[1], "$", "$$")))
	}
	return e
}

// plan is a check's query and what could not be asked.
type plan struct {
	// query is the one PromQL expression of the check; its series are told apart by labels.
	query string
	// canaryErrors and stableErrors say, by metric name, why a metric could not be asked for:
	// its template is not defined, or fails to render.
	canaryErrors, stableErrors map[string]string
	// err, when set, is why there is no query: the Gateway's selector cannot select a version's
	// requests alone. Its text is a sentence for the status.
	err error
}

// Query is the one PromQL expression that measures a check of analysis a of the WebApp parent,
// whose built-in metrics judge the requests of span (since the step began):
// every value the check needs, each a series of its own, joined with "or". The series are the
// canary's requests in the span ({value="requests", track="canary"}); with request-success-rate,
// those of them answered 5xx ({value="failed"}); with request-duration, the histogram of their
// durations ({value="buckets"}, a series per le); each template metric's value over the
// analysis's window ({value="metric", metric=<name>}); and, when a metric is compared with the
// stable version, the same of the stable version's requests (track="stable"). errs says, by
// metric name, why a metric is left out of the query (an unknown template, a built-in name that
// is not one); the query asks for the requests whatever it lacks.
// A built-in metric is measured from g's metrics, selected by g's Selector from parent's route
// and Traefik's entry points eps. err, a sentence for the status, says why there is no query at
// all: g cannot select the versions' requests alone (Gateway.Selector).
func Query(g *Gateway, templates *TemplateSet, parent Parent, eps EntryPoints, a *webappv1.CanaryAnalysis, span time.Duration) (query string, errs map[string]string, err error) {
	p := makePlan(g, templates, parent, eps, a, span)
	return p.query, p.canaryErrors, p.err
}

// makePlan is Query, with the stable version's errors too.
func makePlan(g *Gateway, templates *TemplateSet, parent Parent, eps EntryPoints, a *webappv1.CanaryAnalysis, span time.Duration) plan {
	var p plan
	version := func(service string) target {
		// A template's window never reaches before the step began: the canary's Service, and so its
		// series, has the same name whatever the revision, and an earlier window would count the
		// requests of a canary aborted just before this one (found by TestAnalysis, proof 7).
		t := target{namespace: parent.Namespace, name: parent.Name, service: service, span: span, window: min(a.Window(), max(span, time.Second))}
		if p.err == nil {
			t.selector, p.err = g.Selector(&Backend{Namespace: parent.Namespace, Name: parent.Name, Service: service, Route: &parent.Route, EntryPoints: eps})
		}
		return t
	}
	canary := version(parent.Name + webappv1.CanarySuffix)
	stable := target{service: parent.Name + webappv1.StableSuffix}
	if slices.ContainsFunc(a.Metrics, func(m webappv1.CanaryMetric) bool { return m.Stable != nil }) {
		stable = version(stable.service)
	}
	if p.err != nil {
		return p
	}
	// What each track needs of the built-ins: the 5xx count, the histogram.
	need := map[string]map[string]bool{trackCanary: {}, trackStable: {}}
	var templated []part
	for i := range a.Metrics {
		m := &a.Metrics[i]
		tracks := []string{trackCanary}
		if m.Stable != nil {
			tracks = append(tracks, trackStable)
		}
		for _, track := range tracks {
			if m.TemplateRef == nil {
				switch m.Name {
				case webappv1.MetricRequestSuccessRate:
					need[track][valueFailed] = true
				case webappv1.MetricRequestDuration:
					need[track][valueBuckets] = true
				default:
					p.addError(track, m.Name, fmt.Sprintf("%q is not a built-in metric, and names no template", m.Name))
					continue
				}
				need[track][valueRequests] = true
				continue
			}
			t := canary
			if track == trackStable {
				t = stable
			}
			expr, err := templates.render(m.TemplateRef.Name, t)
			if err != nil {
				p.addError(track, m.Name, err.Error())
				continue
			}
			need[track][valueRequests] = true
			templated = append(templated, part{value: valueMetric, metric: m.Name, track: track, expr: expr})
		}
	}
	need[trackCanary][valueRequests] = true // whatever the check lacks, it says how many requests
	var parts []part
	for _, track := range []string{trackCanary, trackStable} {
		t := canary
		if track == trackStable {
			t = stable
		}
		for _, v := range []struct {
			value string
			expr  func(target) string
		}{{valueRequests, g.requests}, {valueFailed, g.failed}, {valueBuckets, g.buckets}} {
			if need[track][v.value] {
				parts = append(parts, part{value: v.value, track: track, expr: v.expr(t)})
			}
		}
	}
	parts = append(parts, templated...)
	exprs := make([]string, len(parts))
	for i, pt := range parts {
		exprs[i] = pt.labelled()
	}
	p.query = strings.Join(exprs, "\nor\n")
	return p
}

// addError records why metric could not be asked for, of track.
func (p *plan) addError(track, metric, err string) {
	if track == trackCanary {
		p.canaryErrors = set(p.canaryErrors, metric, err)
	} else {
		p.stableErrors = set(p.stableErrors, metric, err)
	}
}

func set(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

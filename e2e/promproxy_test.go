//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	gosync "sync"
	"testing"
	"time"
)

// promHold is the delay of a promProxy rule that never answers: it holds the request until the
// client gives up.
const promHold = time.Duration(-1)

// promProxy is a proxy in front of a Prometheus, in the test's own process, that the hook's
// --prometheus-url names, so that a test can make Prometheus slow for some WebApps or for all:
// it forwards each request at once, or, for a query whose PromQL names the text of a rule (the
// namespace of a test's WebApps; "" for every query), after the rule's delay, or never (promHold:
// it holds the connection, answering nothing, until the client gives up). A request whose client
// gives up while it waits is dropped, unanswered. stop closes its port, as a stopped Prometheus
// would, and start opens it again.
type promProxy struct {
	port     string
	upstream *httputil.ReverseProxy

	mu     gosync.Mutex
	srv    *http.Server
	quit   chan struct{}            // closed by stop: the requests waiting end
	rules  map[string]time.Duration // by the text a query names
	counts map[string]int           // "<rule> <what was done>" (count)
}

// startPromProxy starts a promProxy to the Prometheus at upstream (its base URL) on a free
// loopback port, forwarding everything, until the test ends.
func startPromProxy(t testing.TB, upstream string) *promProxy {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p := &promProxy{port: freePort(), upstream: httputil.NewSingleHostReverseProxy(u), rules: map[string]time.Duration{}, counts: map[string]int{}}
	// A client that gives up while its query is forwarded (the hook, at its query timeout) is
	// counted, not logged; Prometheus unreachable is a 502, as a proxy answers.
	p.upstream.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		if r.Context().Err() != nil {
			text, _ := r.Context().Value(ruleKey{}).(string)
			p.tally(text, "gave up when forwarded")
			return
		}
		w.WriteHeader(http.StatusBadGateway)
	}
	p.start(t)
	t.Cleanup(p.stop)
	return p
}

// url is the proxy's base URL, for the hook's --prometheus-url.
func (p *promProxy) url() string { return "http://127.0.0.1:" + p.port }

// start opens the proxy's port (again, after stop).
func (p *promProxy) start(t testing.TB) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:"+p.port)
	if err != nil {
		t.Fatalf("the proxy in front of Prometheus: %v", err)
	}
	p.mu.Lock()
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	p.quit = make(chan struct{})
	srv := p.srv
	p.mu.Unlock()
	go srv.Serve(l)
}

// stop closes the proxy's port and every connection to it; the requests waiting end unanswered.
// Later calls do nothing.
func (p *promProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv == nil {
		return
	}
	close(p.quit)
	p.srv.Close()
	p.srv = nil
}

// slow makes the queries that name text wait d before they are forwarded (promHold: never
// forwarded, held until the client gives up; 0: forwarded at once, as without a rule). Text ""
// names every query.
func (p *promProxy) slow(text string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d == 0 {
		delete(p.rules, text)
		return
	}
	p.rules[text] = d
}

// count is how many requests of the rule of text met what: "forwarded" (at once), "answered
// late" (forwarded after the delay), "gave up" (the client, before the delay was over), "gave up
// when forwarded" (the client, before Prometheus answered), "held".
func (p *promProxy) count(text, what string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[text+" "+what]
}

// rule is the rule a query q falls under, the longest text it names, and its delay; "", 0 when
// none.
func (p *promProxy) rule(q string) (string, time.Duration, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	texts := make([]string, 0, len(p.rules))
	for text := range p.rules {
		texts = append(texts, text)
	}
	slices.SortFunc(texts, func(a, b string) int { return len(b) - len(a) })
	for _, text := range texts {
		if strings.Contains(q, text) {
			return text, p.rules[text], p.quit
		}
	}
	return "", 0, p.quit
}

// ruleKey is the context key of the text of the rule a forwarded request fell under.
type ruleKey struct{}

func (p *promProxy) tally(text, what string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[text+" "+what]++
}

// ServeHTTP forwards r, after its rule's delay. The query is read from the URL or from the
// form-encoded body (client_golang POSTs it), and the body is forwarded as it came.
func (p *promProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	r.Body.Close()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	q := r.URL.Query().Get("query")
	if form, err := url.ParseQuery(string(body)); err == nil && form.Get("query") != "" {
		q = form.Get("query")
	}
	text, d, quit := p.rule(q)
	r = r.WithContext(context.WithValue(r.Context(), ruleKey{}, text))
	switch {
	case q == "" || d == 0:
		p.tally(text, "forwarded")
	case d == promHold:
		p.tally(text, "held")
		select {
		case <-r.Context().Done():
		case <-quit:
		}
		panic(http.ErrAbortHandler) // nothing answered: the connection is closed
	default:
		select {
		case <-time.After(d):
			p.tally(text, "answered late")
		case <-r.Context().Done():
			p.tally(text, "gave up")
			panic(http.ErrAbortHandler)
		case <-quit:
			panic(http.ErrAbortHandler)
		}
	}
	p.upstream.ServeHTTP(w, r)
}

// scrapeBuckets reads the cumulative buckets of histogram metric (its _bucket series) from a
// Prometheus text page, of the series whose labels hold match (`hook="sync"`), summed by le; +Inf
// is math.Inf(1).
func scrapeBuckets(pageURL, metric, match string) map[float64]float64 {
	out := map[float64]float64{}
	scrapeLines(pageURL, func(line string, v float64) {
		if !strings.HasPrefix(line, metric+"_bucket{") || !strings.Contains(line, match) {
			return
		}
		i := strings.Index(line, `le="`)
		if i < 0 {
			return
		}
		rest := line[i+4:]
		if le, err := strconv.ParseFloat(rest[:strings.IndexByte(rest, '"')], 64); err == nil { // ParseFloat reads "+Inf"
			out[le] += v
		}
	})
	return out
}

// latencies is a histogram's counts over an interval: the difference of two scrapeBuckets.
type latencies map[float64]float64

// minus is l − before, bucket by bucket.
func (l latencies) minus(before latencies) latencies {
	out := latencies{}
	for le, v := range l {
		out[le] = v - before[le]
	}
	return out
}

// count is the number of observations (the +Inf bucket).
func (l latencies) count() float64 { return l[math.Inf(1)] }

// over is the number of observations above le, a bucket's bound.
func (l latencies) over(le float64) float64 { return l.count() - l[le] }

// quantile is the q-quantile of the observations, interpolated within its bucket as Prometheus's
// histogram_quantile does (from 0 for the first bucket); +Inf when it falls in the +Inf bucket,
// NaN with no observation.
func (l latencies) quantile(q float64) float64 {
	total := l.count()
	if total == 0 {
		return math.NaN()
	}
	bounds := make([]float64, 0, len(l))
	for le := range l {
		bounds = append(bounds, le)
	}
	sort.Float64s(bounds)
	rank, lower, below := q*total, 0.0, 0.0
	for _, le := range bounds {
		if l[le] >= rank {
			if math.IsInf(le, 1) {
				return le
			}
			if l[le] == below {
				return le
			}
			return lower + (le-lower)*(rank-below)/(l[le]-below)
		}
		lower, below = le, l[le]
	}
	return math.Inf(1)
}

// String says the count, the p99 and the largest bucket reached, in milliseconds.
func (l latencies) String() string {
	if l.count() == 0 {
		return "no call"
	}
	p99 := l.quantile(0.99)
	p := fmt.Sprintf("%.1f ms", 1000*p99)
	if math.IsInf(p99, 1) {
		p = "over the largest bucket"
	}
	return fmt.Sprintf("%.0f calls, p99 %s, %.0f over 50 ms, %.0f over 1 s", l.count(), p, l.over(0.05), l.over(1))
}

// syncLatencies are the hook's sync calls by duration so far (webapp_hook_request_duration_seconds).
func (h *hookProcess) syncLatencies() latencies {
	return scrapeBuckets("http://"+h.metricsAddr+"/metrics", "webapp_hook_request_duration_seconds", `hook="sync"`)
}

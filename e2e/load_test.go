//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	gosync "sync"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// loadResult is one request of the load: when it was sent, how long it took, its status code (0
// on a transport error), the test app's version that answered ("" when none did: Traefik's own
// 502 or 503, an error), and the body.
type loadResult struct {
	at      time.Time
	took    time.Duration
	code    int
	version string
	body    string
	err     error
	client  int
}

// failed reports whether the request did not get a 200.
func (r loadResult) failed() bool { return r.err != nil || r.code != http.StatusOK }

func (r loadResult) String() string {
	if r.err != nil {
		return fmt.Sprintf("%s client %d: %v after %s", r.at.Format("15:04:05.000"), r.client, r.err, r.took.Round(time.Millisecond))
	}
	return fmt.Sprintf("%s client %d: %d %q after %s", r.at.Format("15:04:05.000"), r.client, r.code, r.body, r.took.Round(time.Millisecond))
}

// loadStep is an interval of the load: from its start to the next one's.
type loadStep struct {
	name   string
	weight int32 // the canary's weight on the route in it; -1 for none
	from   time.Time
}

// load is a set of clients sending GET / through Traefik's entry point, with the route's
// hostname, the whole time, until stop; each request's result is kept, and step cuts the time into
// intervals that tallies counts apart.
type load struct {
	tr      *traefik
	host    string      // the Host header: the route's hostname
	header  http.Header // more headers every request carries (a header route's), nil for none
	stopCh  chan struct{}
	wg      gosync.WaitGroup
	mu      gosync.Mutex
	results []loadResult
	steps   []loadStep
	stopped time.Time
}

// loadLimit ends a load that a failed test forgot to stop.
const loadLimit = 20 * time.Minute

// startLoad starts clients that each send a request through Traefik, wait every, and send the
// next, until stop (every 0: back to back). Each client keeps its connection to Traefik alive, as
// a browser would. The first interval is named "start".
func startLoad(tr *traefik, clients int, every time.Duration) *load {
	return startLoadTo(tr, traefikHost, clients, every)
}

// startLoadTo is startLoad for the route of hostname host.
func startLoadTo(tr *traefik, host string, clients int, every time.Duration) *load {
	return startLoadWith(tr, host, nil, clients, every)
}

// startLoadWith is startLoadTo with header on every request: a tester's, say, that a canary's
// header route matches.
func startLoadWith(tr *traefik, host string, header http.Header, clients int, every time.Duration) *load {
	l := &load{tr: tr, host: host, header: header, stopCh: make(chan struct{}), steps: []loadStep{{name: "start", weight: -1, from: time.Now()}}}
	deadline := time.Now().Add(loadLimit)
	for c := range clients {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}}
			defer hc.CloseIdleConnections()
			for time.Now().Before(deadline) {
				r := l.send(hc)
				r.client = c
				l.mu.Lock()
				l.results = append(l.results, r)
				l.mu.Unlock()
				select {
				case <-l.stopCh:
					return
				case <-time.After(every):
				}
			}
		}()
	}
	return l
}

// send sends one request.
func (l *load) send(hc *http.Client) loadResult {
	req, _ := http.NewRequest("GET", "http://127.0.0.1:"+l.tr.port+"/", nil)
	req.Host = l.host
	for k, v := range l.header {
		req.Header[k] = v
	}
	r := loadResult{at: time.Now()}
	resp, err := hc.Do(req)
	if err != nil {
		r.took, r.err = time.Since(r.at), err
		return r
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	r.took, r.code, r.body, r.err = time.Since(r.at), resp.StatusCode, strings.TrimSpace(string(b)), err
	if f := strings.Fields(r.body); len(f) > 1 && f[0] == "testapp" {
		r.version = f[1]
	}
	return r
}

// step starts a new interval now, named name, with the canary's weight (-1 for none).
func (l *load) step(name string, weight int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.steps = append(l.steps, loadStep{name: name, weight: weight, from: time.Now()})
}

// stop ends the clients, waits for their last requests, and returns every result, in the order
// they were sent.
func (l *load) stop() []loadResult {
	select {
	case <-l.stopCh:
	default:
		close(l.stopCh)
		l.wg.Wait()
		l.mu.Lock()
		l.stopped = time.Now()
		l.mu.Unlock()
	}
	return l.snapshot()
}

// snapshot is every result so far, in the order they were sent.
func (l *load) snapshot() []loadResult {
	l.mu.Lock()
	out := slices.Clone(l.results)
	l.mu.Unlock()
	slices.SortStableFunc(out, func(a, b loadResult) int { return a.at.Compare(b.at) })
	return out
}

// failures are the requests that did not get a 200, in order.
func (l *load) failures() []loadResult {
	var out []loadResult
	for _, r := range l.snapshot() {
		if r.failed() {
			out = append(out, r)
		}
	}
	return out
}

// loadTally counts the requests sent in one interval.
type loadTally struct {
	loadStep
	to       time.Time
	sent     int
	failed   int            // not a 200
	versions map[string]int // the 200s, by version
	codes    map[string]int // every request, by "code version" ("502", "500 v2", "error")
	slowest  time.Duration
}

// share is the share of the interval's 200s that version answered; NaN when there were none.
func (t loadTally) share(version string) float64 {
	ok := t.sent - t.failed
	if ok == 0 {
		return float64(0) / float64(ok)
	}
	return float64(t.versions[version]) / float64(ok)
}

// tallies counts the requests of each interval, by the time they were sent.
func (l *load) tallies() []loadTally {
	results := l.snapshot()
	l.mu.Lock()
	steps := slices.Clone(l.steps)
	end := l.stopped
	l.mu.Unlock()
	if end.IsZero() {
		end = time.Now()
	}
	out := make([]loadTally, len(steps))
	for i, s := range steps {
		out[i] = loadTally{loadStep: s, to: end, versions: map[string]int{}, codes: map[string]int{}}
		if i+1 < len(steps) {
			out[i].to = steps[i+1].from
		}
	}
	i := 0
	for _, r := range results {
		for i+1 < len(out) && !r.at.Before(out[i+1].from) {
			i++
		}
		t := &out[i]
		t.sent++
		t.slowest = max(t.slowest, r.took)
		k := "error"
		if r.err == nil {
			k = strings.TrimSpace(fmt.Sprint(r.code, " ", r.version))
		}
		t.codes[k]++
		if r.failed() {
			t.failed++
		} else {
			t.versions[r.version]++
		}
	}
	return out
}

// tallyTable prints tallies one interval a line: its name, its length, the canary's weight, the
// requests sent and failed, and the share of the 200s that canaryVersion answered.
func tallyTable(tallies []loadTally, canaryVersion string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-44s %7s %6s %6s %6s %7s  %s\n", "step", "length", "weight", "sent", "failed", "canary", "answers")
	for _, t := range tallies {
		w := "-"
		if t.weight >= 0 {
			w = fmt.Sprint(t.weight)
		}
		share := "-"
		if t.sent > t.failed {
			share = fmt.Sprintf("%.3f", t.share(canaryVersion))
		}
		fmt.Fprintf(&b, "%-44s %6.1fs %6s %6d %6d %7s  %v\n", t.name, t.to.Sub(t.from).Seconds(), w, t.sent, t.failed, share, t.codes)
	}
	return b.String()
}

// summarize counts results by answer: status and version, or error.
func summarize(results []loadResult) string {
	counts := map[string]int{}
	for _, r := range results {
		k := fmt.Sprint(r.code)
		if r.err != nil {
			k = "error"
		} else if r.version != "" {
			k += " " + r.version
		}
		counts[k]++
	}
	return fmt.Sprintf("%d requests: %v", len(results), counts)
}

// canaryFollower polls a WebApp's canary, and starts an interval of its load at each change of
// the canary's phase and step or of the route's backends, named after them.
type canaryFollower struct {
	stopCh chan struct{}
	done   chan struct{}
	mu     gosync.Mutex
	marks  []followMark
}

// followMark is one change the follower saw.
type followMark struct {
	at   time.Time
	what string
}

// followCanary starts following the WebApp ns/name's canary for l, every 100 ms, until stop.
func followCanary(l *load, ns, name string) *canaryFollower {
	f := &canaryFollower{stopCh: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(f.done)
		last := ""
		for {
			label, weight, ok := canaryLabel(ns, name)
			if ok && label != last {
				last = label
				l.step(label, weight)
				f.mu.Lock()
				f.marks = append(f.marks, followMark{time.Now(), label})
				f.mu.Unlock()
			}
			select {
			case <-f.stopCh:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return f
}

// stop ends the following and returns the changes it saw.
func (f *canaryFollower) stop() []followMark {
	select {
	case <-f.stopCh:
	default:
		close(f.stopCh)
	}
	<-f.done
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.marks)
}

// canaryLabel names the canary's state as an interval of the load: its phase and step, and the
// route's backends (stable/canary weights when split), with the canary's weight on the route.
func canaryLabel(ns, name string) (string, int32, bool) {
	route, err := client.get(routeAPI, "HTTPRoute", ns, name)
	if err != nil {
		return "", 0, false
	}
	wa, err := client.get("example.com/v1", "WebApp", ns, name)
	if err != nil || wa == nil {
		return "", 0, false
	}
	var st webappv1.WebAppStatus
	if b, err := json.Marshal(wa["status"]); err == nil {
		json.Unmarshal(b, &st)
	}
	phase := "no canary"
	if c := st.Canary; c != nil {
		phase = fmt.Sprintf("%s step %d", c.Phase, c.Step+1)
	}
	weight := int32(-1)
	form := "none"
	if sw, cw, ok := splitWeights(route, name); ok {
		form, weight = fmt.Sprintf("%d/%d", sw, cw), cw
	} else if route != nil {
		form = backendsString(route)
	}
	return phase + ", route " + form, weight, true
}

// clusters groups failures that follow one another within gap, for the report of a window.
func clusters(failures []loadResult, gap time.Duration) [][]loadResult {
	var out [][]loadResult
	for _, r := range failures {
		if n := len(out); n > 0 && r.at.Sub(out[n-1][len(out[n-1])-1].at) <= gap {
			out[n-1] = append(out[n-1], r)
			continue
		}
		out = append(out, []loadResult{r})
	}
	return out
}

// countsString prints a map of counts sorted by key.
func countsString(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

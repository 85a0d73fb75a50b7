package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/example/webapp-operator/analysis"
	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/api/v1/validation"
	"github.com/example/webapp-operator/canary"
	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/sync/wire"
)

// DefaultMaxBodyBytes is the largest request body accepted when Options.MaxBodyBytes is 0. With pod
// diagnosis (PodDiagnosis), a request carries the WebApp's pods, about 4.5 KB each (hooktest.WithPods, and
// the pods Metacontroller sent in ../shared/fixtures): a WebApp with 1,000 pods sends 4.6 MB, and
// 16 MiB leaves room for pods three times that size.
const DefaultMaxBodyBytes = 16 << 20

// DefaultMaxInflightBodyBytes is the bound of Options.MaxInflightBodyBytes when it is 0: the
// bodies of two 1,000-pod WebApps, or of thousands of small ones, at once. Answering a request takes
// about three times its size at its peak, so this keeps the hook within its 128Mi container.
const DefaultMaxInflightBodyBytes = 16 << 20

// DefaultInflightWait is how long a hook call waits for its share of the in-flight body budget
// when Options.InflightWait is 0. A call still waiting then is answered 503 with Retry-After:
// Metacontroller retries it with backoff, and the wait stays well inside its 10 s hook timeout.
// An ordinary sync waits microseconds; 2 s is room for one 1,000-pod request ahead of it to be
// answered (about 40 ms) many times over.
const DefaultInflightWait = 2 * time.Second

// DefaultBodyTimeout is how long after its headers a hook call's body may take to arrive when
// Options.BodyTimeout is 0, the wait for the in-flight budget included. A client that sends its
// body more slowly is cut off with 408, and gives its share of the budget back. It is half of
// Metacontroller's 10 s hook timeout: in the cluster a 16 MiB body arrives in well under a second.
const DefaultBodyTimeout = 5 * time.Second

// maxLoggedPath bounds the characters of a request path (or a parent's name) that a log line or
// an error repeats (validation.Cut): a path may be as long as the 64 KiB of headers the server
// accepts.
const maxLoggedPath = 256

// DefaultCacheBytes is the size of the answer cache that the webapp-hook command uses by default.
// A sync answer for a WebApp with a Deployment and a Service measures about 1.6 KB (1.1 to 1.9 KB
// for the examples and Metacontroller's recorded requests) and its entry about 2.1 KB with its
// bookkeeping, so 1 MiB holds the answers of about 500 WebApps. docs/performance.md says how to
// size it.
const DefaultCacheBytes = 1 << 20

// Options configure a Handler. The zero value is usable.
type Options struct {
	// Logger receives one line per hook call. Nil discards logs.
	Logger *slog.Logger
	// MaxBodyBytes limits request bodies; larger ones get 413. 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxInflightBodyBytes bounds the bytes of request bodies answered at once, by their
	// Content-Length; a call that would go over waits its turn, first come first served, for at
	// most InflightWait. 0 means DefaultMaxInflightBodyBytes; a negative value means no bound.
	MaxInflightBodyBytes int64
	// InflightWait bounds how long a call waits for its share of MaxInflightBodyBytes before it
	// is answered 503 with a Retry-After header. 0 means DefaultInflightWait.
	InflightWait time.Duration
	// BodyTimeout bounds how long a call's body may take to arrive, counted from the end of its
	// headers and including the wait for the budget; a body still arriving then is cut off with
	// 408. 0 means DefaultBodyTimeout. It needs a ResponseWriter that can set read deadlines
	// (http.ResponseController), as net/http's server gives; with another, such as an
	// httptest.ResponseRecorder, the body is not timed.
	BodyTimeout time.Duration
	// Now is the clock for condition transition times. Nil means time.Now.
	Now func() time.Time
	// CacheBytes bounds the answers kept for requests that come again byte for byte, as every
	// resync of an unchanged WebApp does; such a request is answered from memory, identically.
	// 0 disables the cache.
	CacheBytes int
	// Tokens, when set, are the bearer tokens the hook routes require; a call without one gets
	// 401. Health checks and metrics stay open.
	Tokens *TokenFile
	// TLS, when set, is what the server serves TLS from. The handler does not terminate TLS; it
	// reports the certificate in force in its metrics, and only with it does the customize answer
	// ask for Secrets (sync.CustomizeOptions.Secrets), which must not cross the network in
	// cleartext.
	TLS *TLSFiles
	// RequireClientCert makes the hook routes answer 401 unless the TLS connection presented a
	// verified client certificate (see TLSFiles). Health checks and metrics stay open.
	RequireClientCert bool
	// ClientCertNames, when set with RequireClientCert, are the only names a client certificate
	// may be issued to: one of its DNS subject alternative names must equal one of them, ignoring
	// case (a wildcard name matches only the same wildcard). A certificate the CA issued to any
	// other name, or with no DNS name, gets 401; its subject's common name is never read. Empty
	// accepts any certificate the CA signed.
	ClientCertNames []string
	// PodDiagnosis makes the customize answer ask for each WebApp's pods, so that the status says
	// why pods of the current spec cannot start (sync.CustomizeOptions.Pods).
	PodDiagnosis bool
	// Defaults are the install's defaults, applied to every decoded WebApp spec before it is
	// customized, synced or finalized (sync.Defaults.Apply). The zero value applies none.
	Defaults sync.Defaults
	// Analysis, when set, measures the check of a canary's analysis that canary.Due says is due
	// at a sync call, before the call is decided (sync.Request.Measurement), waiting for it
	// MeasureWait at most. Nil measures nothing: a due check is then inconclusive, and its status
	// says the hook has no Prometheus to ask. If it is also a prometheus.Collector
	// (analysis.Prometheus is), its metrics are served with the handler's.
	Analysis Measurer
	// MeasureWait is the longest a sync call waits for its check's measurement; 0 means
	// DefaultMeasureWait.
	MeasureWait time.Duration
}

// Measurer measures a check of a canary's analysis: analysis.Prometheus does. Lookup returns
// within wait: what it measured of parent's canary for the check over span (canary.Due's) of
// analysis a, or a Measurement whose Error says why nothing could be measured, and true; or false
// while the measurement is still to come, which it then starts or leaves running, with the
// latest measurement it keeps of an earlier check of the same step (zero when none), which may
// stand in for it (canary.StandsIn). It never fails.
type Measurer interface {
	Lookup(parent analysis.Parent, a *webappv1.CanaryAnalysis, span canary.Span, wait time.Duration) (canary.Measurement, bool)
}

// DefaultMeasureWait is the longest a sync call waits for the measurement of its canary's check,
// by default (Options.MeasureWait): a healthy Prometheus answers within it (a few milliseconds a
// query), so that the check is judged at the call that found it due; a slow one holds no call
// longer: the call judges the step's earlier check in its stead, and with none, the check is
// judged at a call a second later (canary.MeasuringRetry).
const DefaultMeasureWait = 25 * time.Millisecond

// Handler routes hook and health requests. Its metrics are served by another handler,
// MetricsHandler, so that they can listen on a port of their own. It is safe for concurrent use.
type Handler struct {
	opts     Options
	ready    atomic.Bool
	router   chi.Router
	cache    *answerCache // nil when disabled
	inflight *budget      // nil when unbounded
	metrics  *metrics
}

// New returns a Handler that reports ready.
func New(opts Options) *Handler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MeasureWait <= 0 {
		opts.MeasureWait = DefaultMeasureWait
	}
	if opts.MaxInflightBodyBytes == 0 {
		opts.MaxInflightBodyBytes = DefaultMaxInflightBodyBytes
	}
	if opts.InflightWait <= 0 {
		opts.InflightWait = DefaultInflightWait
	}
	if opts.BodyTimeout <= 0 {
		opts.BodyTimeout = DefaultBodyTimeout
	}
	h := &Handler{opts: opts, cache: newAnswerCache(opts.CacheBytes), inflight: newBudget(opts.MaxInflightBodyBytes)}
	h.metrics = newMetrics(h.cache, opts.Tokens, opts.TLS, opts.Analysis)
	h.ready.Store(true)

	r := chi.NewRouter()
	r.Group(func(r chi.Router) {
		// Every hook call goes through one stack, outermost first: counted and timed by its hook,
		// a panic recovered into a 500 (which is counted too), then the client certificate and
		// the bearer token checked, when they are asked for.
		for _, hk := range hooks {
			r.With(h.metrics.instrument(hk), h.recoverPanics, h.requireClientCert, h.requireToken).
				Post(hk.path(), h.handle(func(w http.ResponseWriter, r *http.Request) error { return h.serveHook(w, r, hk) }))
		}
	})
	r.Get("/healthz", h.serveHealthz)
	r.Get("/readyz", h.serveReadyz)
	r.NotFound(h.handle(routeError(http.StatusNotFound)))
	r.MethodNotAllowed(h.handle(routeError(http.StatusMethodNotAllowed)))
	h.router = r
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.router.ServeHTTP(w, r) }

// MetricsHandler serves this handler's metrics, in the Prometheus text format, on any path.
func (h *Handler) MetricsHandler() http.Handler { return h.metrics.serveMetrics() }

// SetReady sets what GET /readyz reports. The server sets it to false when it starts shutting down.
func (h *Handler) SetReady(ready bool) { h.ready.Store(ready) }

// Error is the one error type of a hook call that is not answered 200: its HTTP status code,
// the message the client is told, and the cause, which only the log sees. Every handler returns
// one or wraps one (errors.As finds it); writeError answers any other error as a 500 whose detail
// goes to the log only.
type Error struct {
	// Code is the HTTP status code.
	Code int
	// Message is sent to the client as {"error": Message}; it must not hold internal details.
	Message string
	// RetryAfter, when positive, is sent as a Retry-After header, in whole seconds rounded up.
	RetryAfter time.Duration
	// Err is the cause, logged and never sent; nil when Message says it all.
	Err error
}

// Error returns the cause's message, or Message when there is no cause.
func (e *Error) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// routeError answers a request for no route (404) or with a method its route does not take
// (405), as code says. The client is told the method and the path, cut to maxLoggedPath characters; the log
// line names them already, so the cause logged is the status text alone.
func routeError(code int) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		msg := fmt.Sprintf("no route %s %s", r.Method, validation.Cut(r.URL.Path, maxLoggedPath))
		if code == http.StatusMethodNotAllowed {
			msg = fmt.Sprintf("method %s not allowed on %s", r.Method, validation.Cut(r.URL.Path, maxLoggedPath))
		}
		return &Error{Code: code, Message: msg, Err: errors.New(http.StatusText(code))}
	}
}

// badRequest is the answer to a request whose body the hook cannot read as a hook request.
func badRequest(err error) *Error {
	return &Error{Code: http.StatusBadRequest, Message: err.Error(), Err: err}
}

// tooLarge is the answer to a request whose body is, or says it is, larger than limit.
func tooLarge(limit int64, err error) *Error {
	return &Error{Code: http.StatusRequestEntityTooLarge, Message: fmt.Sprintf("request body is larger than %d bytes", limit), Err: err}
}

// errorBody is the JSON body of every non-200 answer.
type errorBody struct {
	Error string `json:"error"`
}

// hook is the hook a route serves; each route says which (hooks), so that nothing downstream
// compares names.
type hook int

const (
	// hookSync is POST /sync. A request with "finalizing": true is answered as finalize, so that
	// one URL may serve both hooks as Metacontroller allows.
	hookSync hook = iota
	// hookFinalize is POST /finalize, whatever the request's "finalizing" field says.
	hookFinalize
	// hookCustomize is POST /customize: the related objects Metacontroller should send along
	// (sync.Customize), from the parent alone.
	hookCustomize
)

// hooks are the hook routes, in the order they are registered.
var hooks = []hook{hookSync, hookFinalize, hookCustomize}

// String returns the hook's name, as its route, its metrics and its log lines name it.
func (hk hook) String() string {
	switch hk {
	case hookFinalize:
		return "finalize"
	case hookCustomize:
		return "customize"
	}
	return "sync"
}

// path is the hook's route: "/sync", "/finalize", "/customize".
func (hk hook) path() string { return "/" + hk.String() }

// serveHook answers one hook call in three steps: admit and read its body (admit, read), decide
// (answer, from the cache or from the decision), and write the answer (writeAnswer).
func (h *Handler) serveHook(w http.ResponseWriter, r *http.Request, hk hook) error {
	start := time.Now()
	release, err := h.admit(w, r, hk, start)
	if err != nil {
		return err
	}
	defer release()
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			bodyBuffers.Put(buf)
		}
	}()
	body, err := h.read(buf, w, r, hk)
	if err != nil {
		return err
	}
	e, cached, err := h.answer(r.Context(), r.URL.Path, body, hk)
	if err != nil {
		return err
	}
	h.writeAnswer(w, r, e, start, cached)
	return nil
}

// admit settles what a call may cost before any of its body is read: it must declare its length
// (411 without, 413 over MaxBodyBytes), its body must arrive BodyTimeout after its headers (the
// read deadline set here; 408 after), and it waits at most InflightWait for that many bytes of
// the in-flight budget (503 and Retry-After after). release gives the budget back.
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, hk hook, start time.Time) (release func(), err error) {
	if ct := r.Header.Get("Content-Type"); !jsonContentType(ct) {
		return nil, &Error{Code: http.StatusUnsupportedMediaType, Message: fmt.Sprintf("content type %q is not supported: send application/json", ct)}
	}
	size := r.ContentLength
	switch {
	case size < 0: // chunked, or HTTP/2 without the header: its cost would be unknown until read
		return nil, &Error{Code: http.StatusLengthRequired, Message: "a Content-Length is required"}
	case size > h.opts.MaxBodyBytes:
		return nil, tooLarge(h.opts.MaxBodyBytes, fmt.Errorf("%s request declares %d bytes", hk, size))
	}
	if err := http.NewResponseController(w).SetReadDeadline(start.Add(h.opts.BodyTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return nil, fmt.Errorf("set the deadline of the %s request body: %w", hk, err)
	}
	wait, cancel := context.WithTimeout(r.Context(), h.opts.InflightWait)
	release, err = h.inflight.acquire(wait, size)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("wait for %d bytes of the in-flight budget for a %s request: %w", size, hk, &Error{
			Code:       http.StatusServiceUnavailable,
			Message:    fmt.Sprintf("busy: other requests hold the in-flight body budget; retry in %s", h.opts.InflightWait),
			RetryAfter: h.opts.InflightWait,
		})
	}
	return release, nil
}

// read reads an admitted call's body into buf (readBody), answering a body over MaxBodyBytes
// with 413, one that did not arrive by the deadline admit set with 408, and one cut short with
// 400; then it lifts the deadline, whose passing would now only cancel r's context.
func (h *Handler) read(buf *bytes.Buffer, w http.ResponseWriter, r *http.Request, hk hook) ([]byte, error) {
	body, err := readBody(buf, w, r, h.opts.MaxBodyBytes)
	var maxBytes *http.MaxBytesError
	switch {
	case errors.As(err, &maxBytes):
		return nil, tooLarge(maxBytes.Limit, fmt.Errorf("read %s request: %w", hk, err))
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil, fmt.Errorf("read %s request, %d of %d bytes: %w", hk, len(body), r.ContentLength, &Error{
			Code:    http.StatusRequestTimeout,
			Message: fmt.Sprintf("the request body did not arrive within %s", h.opts.BodyTimeout),
		})
	case err != nil: // a body cut short: the client's fault, never a bug here
		return nil, badRequest(fmt.Errorf("read %s request: %w", hk, err))
	}
	if err := http.NewResponseController(w).SetReadDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return nil, fmt.Errorf("lift the deadline of the %s request body: %w", hk, err)
	}
	return body, nil
}

// answer decides a call to hook hk at path with body: from the answer cache when the same
// request came before (cached true), else decoded (sync/wire), defaulted (Options.Defaults),
// measured when a check of its canary's analysis is due (measure), decided (sync.Sync,
// sync.Finalize or sync.Customize), encoded once and cached, unless it runs a timer or a check
// was due. A body that is not a hook request is a 400.
func (h *Handler) answer(ctx context.Context, path string, body []byte, hk hook) (e *cacheEntry, cached bool, err error) {
	var key cacheKey
	if h.cache != nil {
		key = h.cache.key(path, body)
		if e := h.cache.get(key); e != nil {
			h.metrics.cacheHits.Inc()
			return e, true, nil
		}
		h.metrics.cacheMisses.Inc()
	}
	req, err := wire.DecodeRequest(body)
	if err != nil { // every error of DecodeRequest is the request's fault (a *wire.RequestError)
		return nil, false, badRequest(fmt.Errorf("decode %s request: %w", hk, err))
	}
	h.opts.Defaults.Apply(&req.Parent)
	if hk == hookSync && req.Finalizing {
		hk = hookFinalize
	}
	e = &cacheEntry{key: key, hook: hk, parent: validation.Cut(req.Parent.Namespace+"/"+req.Parent.Name, maxLoggedPath)}
	var out []byte
	var timed bool // not cached (answerCache says why)
	switch hk {
	case hookCustomize:
		resp := sync.Customize(&req.Parent, sync.CustomizeOptions{Pods: h.opts.PodDiagnosis, Secrets: h.opts.TLS != nil, Gateways: req.Declares(sync.RouteKind)})
		out, err = json.Marshal(resp)
		e.children = len(resp.RelatedResources)
	default:
		var resp sync.Response
		now := h.opts.Now()
		if hk == hookFinalize {
			resp = sync.Finalize(req, now)
		} else {
			due := h.measure(req, now)
			resp = sync.Sync(req, now)
			// It holds only now: a canary's timer runs, or it judged a measurement of now.
			timed = resp.Timed || due
		}
		out, err = resp.MarshalJSON() // the encoding itself: json.Marshal would check and copy it once more
		e.phase, e.children = string(resp.Status.Phase), len(resp.Children)
	}
	if err != nil {
		return nil, false, fmt.Errorf("encode %s response: %w", hk, err)
	}
	e.answer = append(out, '\n')
	e.etag = etag(e.answer)
	if !timed {
		h.cache.put(e)
	}
	return e, false, nil
}

// measure sets req.Measurement to Options.Analysis's measurement of the check of its canary's
// analysis that canary.Due says is due at now, if one is, and reports whether one is; or, while
// that measurement is still to come after Options.MeasureWait, sets req.Measurement to the step's
// earlier check the Measurer offers when canary.StandsIn says it may stand in, and else
// req.Measuring: the call waits on Prometheus no longer, and the machine judges the earlier
// check or asks for another call shortly. A WebApp with no check due, or an invalid spec, is
// never measured; without Options.Analysis nothing is, and the machine says so.
func (h *Handler) measure(req *sync.Request, now time.Time) (due bool) {
	p := &req.Parent
	if len(p.SpecErrors) > 0 || p.Spec.Rollout == nil {
		return false
	}
	plan := p.Spec.Rollout.Plan()
	span, due := canary.Due(plan, p.Canary, now)
	if !due || h.opts.Analysis == nil {
		return due
	}
	m, ready := h.opts.Analysis.Lookup(analysis.Parent{Namespace: p.Namespace, Name: p.Name, Route: analysisRoute(req)}, plan.Analysis, span, h.opts.MeasureWait)
	if ready || canary.StandsIn(p.Canary, span, m.Span) {
		req.Measurement = &m
		return true
	}
	req.Measuring = true
	return true
}

// writeAnswer writes a hook answer with its ETag, or 304 Not Modified with no body when the
// request's If-None-Match names that ETag (Metacontroller then reuses the answer it cached), and
// logs one line.
func (h *Handler) writeAnswer(w http.ResponseWriter, r *http.Request, e *cacheEntry, start time.Time, cached bool) {
	w.Header().Set("ETag", e.etag)
	notModified := etagMatches(r.Header.Get("If-None-Match"), e.etag)
	if notModified {
		w.WriteHeader(http.StatusNotModified)
	} else {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if _, err := w.Write(e.answer); err != nil {
			h.opts.Logger.Warn("write response", "hook", e.hook.String(), "err", err)
		}
	}
	if e.hook != hookCustomize {
		h.metrics.decisions.WithLabelValues(e.hook.String(), e.phase).Inc()
	}
	logger := h.opts.Logger
	if !logger.Enabled(r.Context(), slog.LevelInfo) {
		return
	}
	// The record is made here, without the caller's program counter, which slog.Logger.LogAttrs
	// looks up even when no source is logged (docs/performance.md says what that costs).
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "hook", 0)
	rec.AddAttrs(slog.String("hook", e.hook.String()), slog.String("parent", e.parent))
	if fp := tokenFingerprint(r.Context()); fp != "" {
		rec.AddAttrs(slog.String("token", fp))
	}
	if e.hook == hookCustomize {
		rec.AddAttrs(slog.Int("rules", e.children))
	} else {
		rec.AddAttrs(slog.String("phase", e.phase), slog.Int("children", e.children))
	}
	rec.AddAttrs(slog.Bool("cached", cached), slog.Bool("not_modified", notModified), slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000))
	_ = logger.Handler().Handle(r.Context(), rec)
}

// etag is a strong validator of an answer: the first 128 bits of the SHA-256 of its exact bytes,
// in hex and quoted. It is the same in every replica, so Metacontroller may reach any of them.
func etag(answer []byte) string {
	sum := sha256.Sum256(answer)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// etagMatches reports whether an If-None-Match header names etag: "*", or a list of entity tags
// compared weakly, as RFC 9110 asks for If-None-Match.
func etagMatches(header, etag string) bool {
	for tag := range strings.SplitSeq(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
			return true
		}
	}
	return false
}

// maxPresized bounds the buffer reserved for a body from its Content-Length alone.
const maxPresized = 64 << 10

// jsonContentType accepts what Metacontroller sends (application/json), no content type at all,
// and application/x-www-form-urlencoded, which is what `curl -d` sends, so that the README's
// curl examples work as written. The body is parsed as JSON whatever it says.
func jsonContentType(ct string) bool {
	if ct == "" {
		return true
	}
	mediaType, _, err := mime.ParseMediaType(ct)
	return err == nil && (mediaType == "application/json" || mediaType == "application/x-www-form-urlencoded")
}

// bodyBuffers holds request body buffers between calls. Nothing decoded from a body refers to
// it (wire.DecodeRequest copies what it keeps), so a buffer goes back as soon as the answer is
// written, if it is at most maxPooledBody.
var bodyBuffers = stdsync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 64 << 10

// readBody reads a request body of at most limit bytes into buf. The buffer is grown from
// Content-Length when the client sent one, up to maxPresized, so that a false claim cannot make
// the hook reserve memory before anything arrives; larger bodies grow it as they come.
func readBody(buf *bytes.Buffer, w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if r.ContentLength > 0 {
		// ReadFrom keeps MinRead bytes free to see EOF.
		buf.Grow(int(min(r.ContentLength, limit, maxPresized)) + bytes.MinRead)
	}
	if r.ContentLength > maxPresized {
		// A large body (a WebApp with many pods) comes in two steps: its first maxPresized bytes,
		// then, once they came, the rest into a buffer grown once to hold it, rather than doubled
		// again and again.
		if _, err := io.CopyN(buf, body, maxPresized); err != nil {
			return buf.Bytes(), err
		}
		buf.Grow(int(min(r.ContentLength, limit)) - buf.Len() + bytes.MinRead)
	}
	_, err := buf.ReadFrom(body)
	return buf.Bytes(), err
}

// serveHealthz handles GET /healthz, the liveness check: 200 while the process serves HTTP.
func (h *Handler) serveHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// serveReadyz handles GET /readyz, the readiness check: 503 once shutdown has begun.
func (h *Handler) serveReadyz(w http.ResponseWriter, r *http.Request) {
	if !h.ready.Load() {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handle adapts a handler that returns an error, writing the error with writeError.
func (h *Handler) handle(fn func(http.ResponseWriter, *http.Request) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			h.writeError(w, r, err)
		}
	}
}

// writeError is the one place that turns errors into status codes and JSON bodies: an *Error
// (found with errors.As) is its own code and message, with Retry-After when it says so, and
// anything else is 500 with a generic message while the detail goes to the log only. The log
// line, at warn for 4xx and 503 and at error for other 5xx, names the path once, cut to
// maxLoggedPath. An answer that leaves the body unread (408, 411, 413) closes the connection, so
// that the server does not read the rest of it to reuse the connection.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code, msg := http.StatusInternalServerError, "internal error"
	var e *Error
	if errors.As(err, &e) {
		code, msg = e.Code, e.Message
		if e.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.FormatInt(int64((e.RetryAfter+time.Second-1)/time.Second), 10))
		}
	}
	switch code {
	case http.StatusRequestTimeout, http.StatusLengthRequired, http.StatusRequestEntityTooLarge:
		w.Header().Set("Connection", "close")
	}
	level := slog.LevelWarn
	if code >= 500 && code != http.StatusServiceUnavailable { // a 503 is load, not a fault here
		level = slog.LevelError
	}
	h.opts.Logger.Log(r.Context(), level, "request failed", "method", r.Method, "path", validation.Cut(r.URL.Path, maxLoggedPath), "code", code, "err", err)
	writeJSON(w, code, errorBody{Error: msg})
}

// recoverPanics turns a panic in a hook call into a 500 and one log line, with the stack, through
// writeError, and counts it; the server keeps serving. It is the one recovery: the health checks
// and the 404 and 405 answers write constants.
func (h *Handler) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				h.metrics.panics.Inc()
				h.writeError(w, r, fmt.Errorf("panic: %v\n%s", v, debug.Stack()))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v) // v is always a string map or errorBody
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

package webhook

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/example/webapp-operator/sync"
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
	// MaxInflightBodyBytes bounds the bytes of request bodies answered at once (by their
	// Content-Length, or MaxBodyBytes without one); a call that would go over waits its turn. 0
	// means DefaultMaxInflightBodyBytes; a negative value means no bound.
	MaxInflightBodyBytes int64
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
	// PodDiagnosis makes the customize answer ask for each WebApp's pods, so that the status says
	// why pods of the current spec cannot start (sync.CustomizeOptions.Pods).
	PodDiagnosis bool
}

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
	if opts.MaxInflightBodyBytes == 0 {
		opts.MaxInflightBodyBytes = DefaultMaxInflightBodyBytes
	}
	h := &Handler{opts: opts, cache: newAnswerCache(opts.CacheBytes), inflight: newBudget(opts.MaxInflightBodyBytes)}
	h.metrics = newMetrics(h.cache, opts.Tokens, opts.TLS)
	h.ready.Store(true)

	r := chi.NewRouter()
	r.Use(h.recoverPanics)
	// Hook routes recover inside their instrumentation, so that a panic is counted as a 500.
	r.Method(http.MethodPost, "/sync", h.metrics.instrument("sync", h.requireClientCert(h.requireToken(h.recoverPanics(h.handle(h.serveSync))))))
	r.Method(http.MethodPost, "/finalize", h.metrics.instrument("finalize", h.requireClientCert(h.requireToken(h.recoverPanics(h.handle(h.serveFinalize))))))
	r.Method(http.MethodPost, "/customize", h.metrics.instrument("customize", h.requireClientCert(h.requireToken(h.recoverPanics(h.handle(h.serveCustomize))))))
	r.Get("/healthz", h.serveHealthz)
	r.Get("/readyz", h.serveReadyz)
	r.NotFound(h.handle(func(w http.ResponseWriter, r *http.Request) error {
		return &Error{Code: http.StatusNotFound, Message: fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)}
	}))
	r.MethodNotAllowed(h.handle(func(w http.ResponseWriter, r *http.Request) error {
		return &Error{Code: http.StatusMethodNotAllowed, Message: fmt.Sprintf("method %s not allowed on %s", r.Method, r.URL.Path)}
	}))
	h.router = r
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.router.ServeHTTP(w, r) }

// MetricsHandler serves this handler's metrics, in the Prometheus text format, on any path.
func (h *Handler) MetricsHandler() http.Handler { return h.metrics.serveMetrics() }

// SetReady sets what GET /readyz reports. The server sets it to false when it starts shutting down.
func (h *Handler) SetReady(ready bool) { h.ready.Store(ready) }

// Error is an error with the HTTP status code and the message a client may see.
type Error struct {
	// Code is the HTTP status code.
	Code int
	// Message is sent to the client as {"error": Message}; it must not hold internal details.
	Message string
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// errorBody is the JSON body of every non-200 answer.
type errorBody struct {
	Error string `json:"error"`
}

// serveSync handles POST /sync. A request with "finalizing": true is answered as finalize, so that
// one URL may serve both hooks as Metacontroller allows.
func (h *Handler) serveSync(w http.ResponseWriter, r *http.Request) error {
	return h.serveHook(w, r, "sync")
}

// serveFinalize handles POST /finalize, whatever the request's "finalizing" field says.
func (h *Handler) serveFinalize(w http.ResponseWriter, r *http.Request) error {
	return h.serveHook(w, r, "finalize")
}

// serveCustomize handles POST /customize: the related objects Metacontroller should send along
// (sync.Customize), from the parent alone.
func (h *Handler) serveCustomize(w http.ResponseWriter, r *http.Request) error {
	return h.serveHook(w, r, "customize")
}

func (h *Handler) serveHook(w http.ResponseWriter, r *http.Request, hook string) error {
	start := time.Now()
	if ct := r.Header.Get("Content-Type"); !jsonContentType(ct) {
		return &Error{Code: http.StatusUnsupportedMediaType, Message: fmt.Sprintf("content type %q is not supported: send application/json", ct)}
	}
	size := r.ContentLength
	if size < 0 {
		size = h.opts.MaxBodyBytes
	}
	release, err := h.inflight.acquire(r.Context(), size)
	if err != nil {
		return fmt.Errorf("wait to read %s request: %w", hook, err)
	}
	defer release()
	buf := bodyBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			bodyBuffers.Put(buf)
		}
	}()
	body, err := readBody(buf, w, r, h.opts.MaxBodyBytes)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return fmt.Errorf("read %s request: %w", hook, err)
	case err != nil: // a body cut short: the client's fault, never a bug here
		return &Error{Code: http.StatusBadRequest, Message: fmt.Sprintf("read %s request: %v", hook, err)}
	}
	var key cacheKey
	if h.cache != nil {
		key = h.cache.key(r.URL.Path, body)
		if e := h.cache.get(key); e != nil {
			h.metrics.cacheHits.Inc()
			h.writeAnswer(w, r, e, start, true)
			return nil
		}
		h.metrics.cacheMisses.Inc()
	}
	req, err := sync.DecodeRequest(body)
	if err != nil {
		return fmt.Errorf("decode %s request: %w", hook, err)
	}
	e := &cacheEntry{key: key, hook: hook, parent: req.Parent.Namespace + "/" + req.Parent.Name}
	var out []byte
	switch {
	case hook == "customize":
		resp := sync.Customize(&req.Parent, sync.CustomizeOptions{Pods: h.opts.PodDiagnosis, Secrets: h.opts.TLS != nil})
		out, err = json.Marshal(resp)
		e.children = len(resp.RelatedResources)
	default:
		var resp sync.Response
		if hook == "finalize" || req.Finalizing {
			e.hook = "finalize"
			resp = sync.Finalize(req, h.opts.Now())
		} else {
			resp = sync.Sync(req, h.opts.Now())
		}
		out, err = resp.MarshalJSON() // the encoding itself: json.Marshal would check and copy it once more
		e.phase, e.children = string(resp.Status.Phase), len(resp.Children)
	}
	if err != nil {
		return fmt.Errorf("encode %s response: %w", e.hook, err)
	}
	e.answer = append(out, '\n')
	e.etag = etag(e.answer)
	h.cache.put(e)
	h.writeAnswer(w, r, e, start, false)
	return nil
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
			h.opts.Logger.Warn("write response", "hook", e.hook, "err", err)
		}
	}
	if e.hook != "customize" {
		h.metrics.decisions.WithLabelValues(e.hook, e.phase).Inc()
	}
	logger := h.opts.Logger
	if !logger.Enabled(r.Context(), slog.LevelInfo) {
		return
	}
	// The record is made here, without the caller's program counter, which slog.Logger.Info
	// looks up even when no source is logged: 1 % of a call.
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "hook", 0)
	rec.AddAttrs(slog.String("hook", e.hook), slog.String("parent", e.parent))
	if fp := tokenFingerprint(r.Context()); fp != "" {
		rec.AddAttrs(slog.String("token", fp))
	}
	if e.hook == "customize" {
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
// it (sync.DecodeRequest copies what it keeps), so a buffer goes back as soon as the answer is
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

// writeError is the one place that maps errors to status codes and JSON bodies:
// *sync.RequestError is 400 with its message, an oversized body is 413, *Error is its own code,
// and anything else is 500 with a generic message while the detail goes to the log only.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var (
		reqErr  *sync.RequestError
		sizeErr *http.MaxBytesError
		httpErr *Error
		code    int
		msg     string
	)
	switch {
	case errors.As(err, &sizeErr):
		code, msg = http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", sizeErr.Limit)
	case errors.As(err, &reqErr):
		code, msg = http.StatusBadRequest, err.Error()
	case errors.As(err, &httpErr):
		code, msg = httpErr.Code, httpErr.Message
	default:
		code, msg = http.StatusInternalServerError, "internal error"
	}
	level := slog.LevelWarn
	if code >= 500 {
		level = slog.LevelError
	}
	h.opts.Logger.Log(r.Context(), level, "request failed", "method", r.Method, "path", r.URL.Path, "code", code, "err", err)
	writeJSON(w, code, errorBody{Error: msg})
}

// recoverPanics turns a panic in a handler into a 500 and one log line, with the stack, through
// writeError; the server keeps serving.
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

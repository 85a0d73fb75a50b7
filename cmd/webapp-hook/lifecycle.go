package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"golang.org/x/net/netutil"

	"github.com/example/webapp-operator/analysis"
	"github.com/example/webapp-operator/webhook"
)

// The server's lifecycle: Main opens the listeners, serves, reloads the token and TLS files,
// and shuts down gracefully.

// Server timeouts. Metacontroller's default hook timeout is 10s; a sync takes well under a millisecond.
const (
	readHeaderTimeout = 5 * time.Second
	readTimeout       = 15 * time.Second
	writeTimeout      = 15 * time.Second
	// idleTimeout closes a kept-alive connection that carries no request for this long, so that
	// idle connections cannot hold the --max-connections slots for long. Metacontroller's
	// workers call every few seconds while WebApps change, and a connection it finds closed costs
	// it one new connection.
	idleTimeout    = 30 * time.Second
	maxHeaderBytes = 64 << 10
	// defaultMaxConnections bounds the hook listener's connections (--max-connections).
	// Metacontroller calls with one connection per busy worker (--workers, 5 by default, per
	// controller), the kubelet's probes open one each, and bench/load.sh drives 16: 128 is eight
	// times what the load benchmark needs. Each connection costs a goroutine and its buffers,
	// about 25 KiB idle and 40 KiB over TLS (measured), so 128 of them hold at most about 5 MiB,
	// beside the in-flight body budget.
	defaultMaxConnections = 128
	// reloadInterval is how often a token file is checked for rotation: a mounted Secret changes
	// within about a minute of its update, so a few seconds more do not matter.
	reloadInterval = 5 * time.Second
	// defaultShutdownDelay covers the time endpoints take to drop a terminating pod, and
	// defaultShutdownTimeout the drain of in-flight requests after that. Together they stay below
	// Kubernetes' default terminationGracePeriodSeconds of 30.
	defaultShutdownDelay   = 5 * time.Second
	defaultShutdownTimeout = 20 * time.Second
)

// Main is the program: it parses its configuration, listens, serves and shuts down gracefully.
// Tests use it to start the real server on "127.0.0.1:0".
type Main struct {
	// Config is set by NewMain to the defaults and by ParseFlags from flags and environment.
	Config Config
	// Logger writes JSON lines to stderr; ParseFlags sets its level.
	Logger *slog.Logger

	stderr          io.Writer
	listener        net.Listener
	metricsListener net.Listener // nil when MetricsAddr is empty
	server          *http.Server
	metricsServer   *http.Server
	handler         *webhook.Handler
	serveErr        chan error
	// stopReload ends the reload goroutine, through stopReloading.
	stopReload     chan struct{}
	stopReloadOnce sync.Once

	showVersion bool

	// waitDelay waits out Config.ShutdownDelay in Close; nil means time.Sleep. It is a test seam
	// only: TestGracefulShutdown holds the delay open until it has looked at the server during it,
	// and ends it when it is done, so that it depends on no machine's speed.
	waitDelay func(time.Duration)

	closeOnce sync.Once
	closeErr  error
}

// NewMain returns a Main with the default configuration, logging JSON to stderr.
func NewMain(stderr io.Writer) *Main {
	return &Main{Config: defaultConfig(), stderr: stderr}
}

// Open listens on Config.Addr and starts serving in the background. Listening first means the
// address is bound (and Addr known) when Open returns.
func (m *Main) Open() error {
	if m.Logger == nil {
		m.Logger = slog.New(slog.NewJSONHandler(m.stderr, nil))
	}
	var tokens *webhook.TokenFile
	if m.Config.TokenFile != "" {
		var err error
		if tokens, err = webhook.LoadTokenFile(m.Config.TokenFile); err != nil {
			return err
		}
		if len(tokens.Fingerprints()) == 0 {
			m.Logger.Warn("the token file lists no token: every hook call is refused until it does", "file", m.Config.TokenFile)
		}
	}
	var tlsFiles *webhook.TLSFiles
	if m.Config.TLSCertFile != "" {
		var err error
		if tlsFiles, err = webhook.LoadTLSFiles(m.Config.TLSCertFile, m.Config.TLSKeyFile, m.Config.ClientCAFile); err != nil {
			return err
		}
	}
	defaults, err := newDefaults(m.Config.DefaultSecurityProfile, m.Config.DefaultGateway)
	if err != nil {
		return err
	}
	var prom *analysis.Prometheus
	if m.Config.Prometheus.URL != "" {
		pc := m.Config.Prometheus
		pc.Logger = m.Logger
		if prom, err = analysis.New(pc); err != nil {
			return fmt.Errorf("canary analysis: %w", err)
		}
		m.Logger.Info("canary analysis from Prometheus", "gateway", pc.Gateway, "entrypoints", pc.EntryPoints.String(), "templates", prom.Templates(), "query_timeout", pc.QueryTimeout.String(), "max_concurrent_queries", pc.MaxConcurrentQueries)
	}
	ln, err := net.Listen("tcp", m.Config.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", m.Config.Addr, err)
	}
	var metricsLn net.Listener
	if m.Config.MetricsAddr != "" {
		if metricsLn, err = net.Listen("tcp", m.Config.MetricsAddr); err != nil {
			ln.Close()
			return fmt.Errorf("listen on %s for metrics: %w", m.Config.MetricsAddr, err)
		}
	}
	if m.Config.MaxConnections > 0 {
		// Below TLS, so that handshakes count too; a connection past the bound waits in the
		// kernel's accept queue until one closes.
		ln = netutil.LimitListener(ln, m.Config.MaxConnections)
	}
	if tlsFiles != nil {
		ln = tls.NewListener(ln, tlsFiles.Config())
	}
	m.listener, m.metricsListener = ln, metricsLn
	opts := m.Config.Options // the flags' values, completed here
	opts.Logger, opts.Defaults, opts.Tokens, opts.TLS = m.Logger, defaults, tokens, tlsFiles
	opts.RequireClientCert = tlsFiles != nil && tlsFiles.VerifiesClients()
	if prom != nil { // never a nil *Prometheus in the interface: that would not be nil
		opts.Analysis = prom
	}
	m.handler = webhook.New(opts)
	m.stopReload = make(chan struct{})
	if tokens != nil || tlsFiles != nil || prom != nil {
		go m.reload(tokens, tlsFiles, prom)
	}
	m.server = m.newServer(m.handler)
	m.serveErr = make(chan error, 2)
	go func() { m.serveErr <- m.server.Serve(ln) }()
	m.Logger.Info("serving", "addr", ln.Addr().String())
	if metricsLn != nil {
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", m.handler.MetricsHandler())
		m.metricsServer = m.newServer(mux)
		go func() { m.serveErr <- m.metricsServer.Serve(metricsLn) }()
		m.Logger.Info("serving metrics", "addr", metricsLn.Addr().String())
	}
	return nil
}

// newServer returns the server of one listener, the hooks' or the metrics': both have the same
// timeouts and header limit, and log the server's own errors through Logger at warn.
func (m *Main) newServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: m.Config.ReadHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       m.Config.IdleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(m.Logger.Handler(), slog.LevelWarn),
	}
}

// stopReloading ends the reload goroutine; it may be called more than once.
func (m *Main) stopReloading() {
	m.stopReloadOnce.Do(func() { close(m.stopReload) })
}

// reload re-reads the token and TLS files, and the analysis's token, CA and templates files,
// every ReloadInterval until Close; any may be nil. It logs what is in force after a change by
// fingerprint or name, never a token or a key.
func (m *Main) reload(tokens *webhook.TokenFile, tlsFiles *webhook.TLSFiles, prom *analysis.Prometheus) {
	tick := time.NewTicker(m.Config.ReloadInterval)
	defer tick.Stop()
	for {
		select {
		case <-m.stopReload:
			return
		case <-tick.C:
			if tokens != nil {
				switch changed, err := tokens.Reload(); {
				case err != nil:
					m.Logger.Error("reload tokens; the previous ones stay in force", "err", err, "reload_errors", tokens.ReloadErrors())
				case changed && len(tokens.Fingerprints()) == 0:
					m.Logger.Warn("tokens reloaded: the file lists no token, every hook call is refused", "tokens", []string{})
				case changed:
					m.Logger.Info("tokens reloaded", "tokens", tokens.Fingerprints())
				}
			}
			if tlsFiles != nil {
				switch changed, err := tlsFiles.Reload(); {
				case err != nil:
					m.Logger.Error("reload TLS files; the previous ones stay in force", "err", err, "reload_errors", tlsFiles.ReloadErrors())
				case changed:
					sum, notAfter := tlsFiles.Certificate()
					m.Logger.Info("TLS files reloaded", "certificate_sha256", sum, "not_after", notAfter)
				}
			}
			if prom != nil {
				switch changed, err := prom.Reload(); {
				case err != nil:
					m.Logger.Error("reload the analysis files; the previous ones stay in force", "err", err, "reload_errors", prom.ReloadErrors())
				case changed:
					m.Logger.Info("analysis files reloaded", "templates", prom.Templates())
				}
			}
		}
	}
}

// Addr is the bound listen address of the hooks; nil before Open.
func (m *Main) Addr() net.Addr {
	if m.listener == nil {
		return nil
	}
	return m.listener.Addr()
}

// MetricsAddr is the bound listen address of the metrics; nil before Open or without metrics.
func (m *Main) MetricsAddr() net.Addr {
	if m.metricsListener == nil {
		return nil
	}
	return m.metricsListener.Addr()
}

// Run opens the server and serves until ctx is done, then closes it gracefully.
func (m *Main) Run(ctx context.Context) error {
	if err := m.Open(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return m.Close()
	case err := <-m.serveErr:
		// One server failed: stop the other too, at once, and exit so that Kubernetes restarts us.
		m.stopReloading()
		m.server.Close()
		if m.metricsServer != nil {
			m.metricsServer.Close()
		}
		return fmt.Errorf("serve: %w", err)
	}
}

// Close stops the server: /readyz turns 503 while it keeps serving for Config.ShutdownDelay, then
// the listener closes and in-flight requests drain for up to Config.ShutdownTimeout. It is safe to
// call more than once, concurrently, or on a Main that never opened; every call returns the first
// call's result.
func (m *Main) Close() error {
	m.closeOnce.Do(func() { m.closeErr = m.shutdown() })
	return m.closeErr
}

func (m *Main) shutdown() error {
	if m.server == nil {
		return nil
	}
	m.stopReloading()
	m.handler.SetReady(false)
	m.Logger.Info("shutting down", "delay", m.Config.ShutdownDelay.String(), "timeout", m.Config.ShutdownTimeout.String())
	if m.waitDelay != nil {
		m.waitDelay(m.Config.ShutdownDelay)
	} else {
		time.Sleep(m.Config.ShutdownDelay)
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.Config.ShutdownTimeout)
	defer cancel()
	err := m.server.Shutdown(ctx)
	servers := 1
	if m.metricsServer != nil {
		// Metrics are served to the end, so that the shutdown itself can be scraped.
		err = errors.Join(err, m.metricsServer.Shutdown(ctx))
		servers++
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	for range servers {
		if err := <-m.serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
	}
	return nil
}

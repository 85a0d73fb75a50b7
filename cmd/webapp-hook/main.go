package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/netutil"

	webappv1 "github.com/example/webapp-operator/api/v1"
	webappsync "github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/webhook"
)

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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr))
}

// run runs one command line and returns the exit code: 0 done, 1 failed, 2 bad usage.
// "render" and "sync" answer offline (see offline.go); anything else configures the server.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "render":
			return runRender(args[1:], stdin, stdout, stderr)
		case "sync":
			return runSync(args[1:], stdin, stdout, stderr)
		}
	}
	m := NewMain(stderr)
	if err := m.ParseFlags(args, getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, err)
		return 2
	}
	if m.showVersion {
		fmt.Fprintln(stdout, version())
		return 0
	}
	if err := m.Run(ctx); err != nil {
		m.Logger.Error("exit", "err", err)
		return 1
	}
	return 0
}

// Set with -ldflags -X by builds without VCS stamping, such as the image's (hack/image), which
// builds with -buildvcs=false so that the binary's bytes depend on the commit alone and the
// Dockerfile, which has no .git to read, can stamp the same way.
var (
	// buildVersion is the module version, a tag or a pseudo-version such as
	// v0.0.0-20260101120000-0123456789ab (with +dirty for a modified tree).
	buildVersion string
	// buildRevision is the commit the binary was built from.
	buildRevision string
	// buildTime is the commit's time, in RFC 3339.
	buildTime string
	// buildModified is "true" when the tree differed from the commit.
	buildModified string
)

// version describes the binary from its build information: module version, VCS revision and
// time, and whether the tree was modified; "(devel)" and "unknown" where the build did not record them.
func version() string {
	info, _ := debug.ReadBuildInfo() // nil when the binary carries none
	return describeVersion(info, map[string]string{
		"version": buildVersion, "vcs.revision": buildRevision, "vcs.time": buildTime, "vcs.modified": buildModified,
	})
}

// describeVersion is version's text for a binary's build information (nil: none) and the values
// stamped with -ldflags, keyed as the VCS settings of build information; stamped values stand in
// for the ones the build information lacks.
func describeVersion(info *debug.BuildInfo, stamped map[string]string) string {
	if info == nil && stamped["vcs.revision"] == "" {
		return "webapp-hook unknown"
	}
	settings := map[string]string{}
	mainVersion, goVersion := "(devel)", "unknown"
	if info != nil {
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
		mainVersion, goVersion = info.Main.Version, info.GoVersion
	}
	if settings["vcs.revision"] == "" && stamped["vcs.revision"] != "" {
		for _, k := range []string{"vcs.revision", "vcs.time", "vcs.modified"} {
			settings[k] = stamped[k]
		}
		if v := stamped["version"]; v != "" {
			mainVersion = v
		}
	}
	v := "webapp-hook " + mainVersion
	if rev := settings["vcs.revision"]; rev != "" {
		v += " revision " + rev
		if settings["vcs.modified"] == "true" {
			v += " (modified)"
		}
		if t := settings["vcs.time"]; t != "" {
			v += " " + t
		}
	}
	return v + " " + goVersion
}

// Config is the service configuration, from flags and environment variables.
type Config struct {
	// Addr is the listen address of the hooks and health checks, for example ":8080" or "127.0.0.1:0".
	Addr string
	// MetricsAddr is the listen address of GET /metrics, apart from the hooks so that a network
	// policy can admit Prometheus there and only Metacontroller to Addr. Empty serves no metrics.
	MetricsAddr string
	// MaxBodyBytes limits hook request bodies.
	MaxBodyBytes int64
	// MaxInflightBodyBytes bounds the bytes of request bodies answered at once; negative: no bound.
	MaxInflightBodyBytes int64
	// InflightWait bounds a call's wait for its share of MaxInflightBodyBytes; then it gets 503.
	InflightWait time.Duration
	// BodyTimeout bounds how long after its headers a call's body may arrive; then it gets 408.
	BodyTimeout time.Duration
	// MaxConnections bounds the hook listener's open connections; more wait to be accepted.
	// Negative: no bound.
	MaxConnections int
	// CacheBytes bounds the answers kept for repeated requests; 0 disables the cache.
	CacheBytes int
	// PodDiagnosis has the customize hook ask for each WebApp's pods (webhook.Options).
	PodDiagnosis bool
	// DefaultSecurityProfile applies to WebApps that set no securityProfile
	// (sync.Defaults.SecurityProfile); "" applies none.
	DefaultSecurityProfile string
	// DefaultGateway, "namespace/name" or "namespace/name/section", is the Gateway of routes that
	// name none (sync.Defaults.Gateway); "" names none.
	DefaultGateway string
	// ShutdownDelay is how long the server keeps serving after SIGTERM, with /readyz at 503, so
	// that Kubernetes removes the pod from the Service's endpoints before the listener closes.
	ShutdownDelay time.Duration
	// ShutdownTimeout bounds the graceful drain of in-flight requests that follows.
	ShutdownTimeout time.Duration
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// TokenFile, when set, names a file of bearer tokens (one per line) that hook calls must carry.
	TokenFile string
	// TLSCertFile and TLSKeyFile, set together, serve HTTPS; ClientCAFile, which needs them,
	// makes hook calls present a client certificate signed by that CA.
	TLSCertFile, TLSKeyFile, ClientCAFile string
	// ClientCertNames, comma-separated, which needs ClientCAFile, are the DNS names a client
	// certificate must carry one of (webhook.Options.ClientCertNames). Empty: any the CA signed.
	ClientCertNames string

	// ReadHeaderTimeout bounds how long a client may take to send its headers; a client that
	// sends them slowly is cut off. It has no flag: tests shorten it.
	ReadHeaderTimeout time.Duration
	// ReloadInterval is how often files named by flags are checked for changes. It has no flag:
	// tests shorten it.
	ReloadInterval time.Duration
	// IdleTimeout closes a kept-alive connection with no request for this long, on both
	// listeners. It has no flag: tests shorten it.
	IdleTimeout time.Duration
}

// newDefaults makes the install's defaults from the values of --default-security-profile and
// --default-gateway, which the server and its offline subcommands share; "" sets none.
func newDefaults(profile, gateway string) (webappsync.Defaults, error) {
	d := webappsync.Defaults{SecurityProfile: webappv1.SecurityProfile(profile)}
	switch d.SecurityProfile {
	case "", webappv1.SecurityProfileRestricted, webappv1.SecurityProfileNone:
	default:
		return d, fmt.Errorf("-default-security-profile must be restricted, none or empty, got %q", profile)
	}
	if gateway != "" {
		var err error
		if d.Gateway, err = webappsync.ParseGateway(gateway); err != nil {
			return d, fmt.Errorf("-default-gateway: %w", err)
		}
	}
	return d, nil
}

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

	closeOnce sync.Once
	closeErr  error
}

// NewMain returns a Main with the default configuration, logging JSON to stderr.
func NewMain(stderr io.Writer) *Main {
	return &Main{
		Config: Config{
			Addr:                 ":8080",
			MetricsAddr:          ":9090",
			MaxBodyBytes:         webhook.DefaultMaxBodyBytes,
			MaxInflightBodyBytes: webhook.DefaultMaxInflightBodyBytes,
			InflightWait:         webhook.DefaultInflightWait,
			BodyTimeout:          webhook.DefaultBodyTimeout,
			MaxConnections:       defaultMaxConnections,
			CacheBytes:           webhook.DefaultCacheBytes,
			ShutdownDelay:        defaultShutdownDelay,
			ShutdownTimeout:      defaultShutdownTimeout,
			LogLevel:             "info",

			ReadHeaderTimeout: readHeaderTimeout,
			ReloadInterval:    reloadInterval,
			IdleTimeout:       idleTimeout,
		},
		stderr: stderr,
	}
}

// ParseFlags reads the configuration. Each flag may also be set by the environment variable named in
// its help; a flag given on the command line wins over the environment.
func (m *Main) ParseFlags(args []string, getenv func(string) string) error {
	fs := flag.NewFlagSet("webapp-hook", flag.ContinueOnError)
	fs.SetOutput(m.stderr)
	c := &m.Config
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address of the hooks and health checks (env ADDR)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", c.MetricsAddr, "listen address of GET /metrics; empty: no metrics (env METRICS_ADDR)")
	fs.Int64Var(&c.MaxBodyBytes, "max-body-bytes", c.MaxBodyBytes, "largest accepted request body in bytes; larger ones get 413 (env MAX_BODY_BYTES)")
	fs.Int64Var(&c.MaxInflightBodyBytes, "max-inflight-body-bytes", c.MaxInflightBodyBytes, "bytes of request bodies answered at once; more wait their turn; -1: no bound (env MAX_INFLIGHT_BODY_BYTES)")
	fs.DurationVar(&c.InflightWait, "inflight-wait", c.InflightWait, "how long a call waits for its turn under -max-inflight-body-bytes before it gets 503 and Retry-After (env INFLIGHT_WAIT)")
	fs.DurationVar(&c.BodyTimeout, "body-timeout", c.BodyTimeout, "how long after its headers a call's body may take to arrive, the wait for its turn included; then 408 (env BODY_TIMEOUT)")
	fs.IntVar(&c.MaxConnections, "max-connections", c.MaxConnections, "open connections to the hook port at most; more wait to be accepted; -1: no bound (env MAX_CONNECTIONS)")
	fs.IntVar(&c.CacheBytes, "cache-bytes", c.CacheBytes, "memory for answers to requests that come again byte for byte, as resyncs do; 0 disables (env CACHE_BYTES)")
	fs.BoolVar(&c.PodDiagnosis, "pod-diagnosis", c.PodDiagnosis, "have the customize hook ask for each WebApp's pods, to say why they cannot start; Metacontroller then watches every pod of the cluster (env POD_DIAGNOSIS)")
	fs.StringVar(&c.DefaultSecurityProfile, "default-security-profile", c.DefaultSecurityProfile, "securityProfile of WebApps that set none: restricted, or empty for none; turning it on rolls their pods once (env DEFAULT_SECURITY_PROFILE)")
	fs.StringVar(&c.DefaultGateway, "default-gateway", c.DefaultGateway, "namespace/name[/section] of the Gateway that WebApps' spec.route attaches to when it names no parentRefs; empty: none, and such a route is invalid (env DEFAULT_GATEWAY)")
	fs.DurationVar(&c.ShutdownDelay, "shutdown-delay", c.ShutdownDelay, "how long to keep serving after SIGTERM with /readyz failing, so endpoints drop the pod first (env SHUTDOWN_DELAY)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", c.ShutdownTimeout, "how long to then drain in-flight requests (env SHUTDOWN_TIMEOUT)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error (env LOG_LEVEL)")
	fs.StringVar(&c.TLSCertFile, "tls-cert-file", c.TLSCertFile, "PEM certificate (chain) to serve HTTPS with; re-read when it changes (env TLS_CERT_FILE)")
	fs.StringVar(&c.TLSKeyFile, "tls-key-file", c.TLSKeyFile, "PEM private key of --tls-cert-file (env TLS_KEY_FILE)")
	fs.StringVar(&c.ClientCAFile, "client-ca-file", c.ClientCAFile, "PEM CA bundle; hook calls must present a client certificate it signed (mTLS); needs TLS (env CLIENT_CA_FILE)")
	fs.StringVar(&c.ClientCertNames, "client-cert-names", c.ClientCertNames, "comma-separated DNS names; a client certificate must carry one of them as a DNS SAN (401 otherwise); needs -client-ca-file; empty: any the CA signed (env CLIENT_CERT_NAMES)")
	fs.StringVar(&c.TokenFile, "token-file", c.TokenFile, "file of bearer tokens, one per line, that hook calls must carry; re-read when its content changes; a file with no token accepts none; unset: no authentication (env TOKEN_FILE)")

	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage:
  webapp-hook [flags]                 serve the sync and finalize hooks, and metrics
  webapp-hook render -f webapp.yaml   print, as YAML, the children a new WebApp would get
  webapp-hook sync < request.json     answer one hook request from standard input

Every flag may also be set by the environment variable named after it; a flag wins.

Flags:
`)
		fs.PrintDefaults()
	}

	var err error
	fs.VisitAll(func(f *flag.Flag) {
		key := strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := getenv(key); v != "" && err == nil {
			if setErr := fs.Set(f.Name, v); setErr != nil {
				err = fmt.Errorf("environment %s=%q: %w", key, v, setErr)
			}
		}
	})
	if err != nil {
		return err
	}
	// Registered after the environment is read: a VERSION variable must not turn the server off.
	fs.BoolVar(&m.showVersion, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if c.MaxBodyBytes <= 0 {
		return fmt.Errorf("-max-body-bytes must be positive, got %d", c.MaxBodyBytes)
	}
	if (c.TLSCertFile == "") != (c.TLSKeyFile == "") {
		return fmt.Errorf("-tls-cert-file and -tls-key-file go together")
	}
	if c.ClientCAFile != "" && c.TLSCertFile == "" {
		return fmt.Errorf("-client-ca-file needs -tls-cert-file and -tls-key-file")
	}
	if c.ClientCertNames != "" {
		if c.ClientCAFile == "" {
			return fmt.Errorf("-client-cert-names needs -client-ca-file")
		}
		if len(clientCertNames(c.ClientCertNames)) == 0 {
			return fmt.Errorf("-client-cert-names %q names no DNS name", c.ClientCertNames)
		}
	}
	if _, err := newDefaults(c.DefaultSecurityProfile, c.DefaultGateway); err != nil {
		return err
	}
	if c.MaxInflightBodyBytes == 0 {
		return fmt.Errorf("-max-inflight-body-bytes must not be 0: give a bound, or -1 for none")
	}
	if c.BodyTimeout <= 0 || c.BodyTimeout > readTimeout {
		return fmt.Errorf("-body-timeout must be positive and at most the server's read timeout of %s, got %s", readTimeout, c.BodyTimeout)
	}
	if c.InflightWait <= 0 || c.InflightWait >= c.BodyTimeout {
		return fmt.Errorf("-inflight-wait must be positive and shorter than -body-timeout (%s), got %s", c.BodyTimeout, c.InflightWait)
	}
	if c.MaxConnections == 0 {
		return fmt.Errorf("-max-connections must not be 0: give a bound, or -1 for none")
	}
	if c.CacheBytes < 0 {
		return fmt.Errorf("-cache-bytes must not be negative, got %d", c.CacheBytes)
	}
	if c.ShutdownDelay < 0 {
		return fmt.Errorf("-shutdown-delay must not be negative, got %s", c.ShutdownDelay)
	}
	if c.ShutdownTimeout <= 0 {
		return fmt.Errorf("-shutdown-timeout must be positive, got %s", c.ShutdownTimeout)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	m.Logger = slog.New(slog.NewJSONHandler(m.stderr, &slog.HandlerOptions{Level: level}))
	return nil
}

// clientCertNames splits a -client-cert-names value at commas, trims each name and drops empty ones.
func clientCertNames(list string) []string {
	var names []string
	for n := range strings.SplitSeq(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names
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
	m.handler = webhook.New(webhook.Options{
		Logger:               m.Logger,
		MaxBodyBytes:         m.Config.MaxBodyBytes,
		MaxInflightBodyBytes: m.Config.MaxInflightBodyBytes,
		InflightWait:         m.Config.InflightWait,
		BodyTimeout:          m.Config.BodyTimeout,
		CacheBytes:           m.Config.CacheBytes,
		PodDiagnosis:         m.Config.PodDiagnosis,
		Defaults:             defaults,
		Tokens:               tokens,
		TLS:                  tlsFiles,
		RequireClientCert:    tlsFiles != nil && tlsFiles.VerifiesClients(),
		ClientCertNames:      clientCertNames(m.Config.ClientCertNames),
	})
	m.stopReload = make(chan struct{})
	if tokens != nil || tlsFiles != nil {
		go m.reload(tokens, tlsFiles)
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

// reload re-reads the token and TLS files every ReloadInterval until Close; either may be nil.
// It logs what is in force after a change by fingerprint, never a token or a key.
func (m *Main) reload(tokens *webhook.TokenFile, tlsFiles *webhook.TLSFiles) {
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
	time.Sleep(m.Config.ShutdownDelay)
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

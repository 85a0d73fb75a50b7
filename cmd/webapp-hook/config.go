package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/example/webapp-operator/analysis"
	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/internal/envflag"
	webappsync "github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/webhook"
)

// The configuration of the server: Config, its defaults, and ParseFlags, which reads it from
// flags and environment variables and checks it.

// Config is the service configuration, from flags and environment variables.
type Config struct {
	// Addr is the listen address of the hooks and health checks, for example ":8080" or "127.0.0.1:0".
	Addr string
	// MetricsAddr is the listen address of GET /metrics, apart from the hooks so that a network
	// policy can admit Prometheus there and only Metacontroller to Addr. Empty serves no metrics.
	MetricsAddr string
	// Options are the hook handler's, as the flags set them: MaxBodyBytes,
	// MaxInflightBodyBytes (negative: no bound), InflightWait, BodyTimeout, CacheBytes (0
	// disables the cache), PodDiagnosis and ClientCertNames (-client-cert-names, split at
	// commas). Open completes them with what needs the files read and the logger: Logger,
	// Defaults, Tokens, TLS and RequireClientCert.
	webhook.Options
	// MaxConnections bounds the hook listener's open connections; more wait to be accepted.
	// Negative: no bound.
	MaxConnections int
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

	// Prometheus configures the canary analysis's Prometheus (--prometheus-url and the
	// --analysis-* flags); with no URL, the hook asks no Prometheus, and every check that is due
	// is inconclusive. Open makes the analysis.Prometheus, with the logger, and Options.Analysis.
	Prometheus analysis.Config

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

// defaultConfig is the configuration before flags and environment.
func defaultConfig() Config {
	return Config{
		Addr:        ":8080",
		MetricsAddr: ":9090",
		Options: webhook.Options{
			MaxBodyBytes:         webhook.DefaultMaxBodyBytes,
			MaxInflightBodyBytes: webhook.DefaultMaxInflightBodyBytes,
			InflightWait:         webhook.DefaultInflightWait,
			BodyTimeout:          webhook.DefaultBodyTimeout,
			CacheBytes:           webhook.DefaultCacheBytes,
		},
		Prometheus: analysis.Config{
			Gateway:              analysis.DefaultGateway,
			QueryTimeout:         analysis.DefaultQueryTimeout,
			MaxConcurrentQueries: analysis.DefaultMaxConcurrentQueries,
		},
		MaxConnections:  defaultMaxConnections,
		ShutdownDelay:   defaultShutdownDelay,
		ShutdownTimeout: defaultShutdownTimeout,
		LogLevel:        "info",

		ReadHeaderTimeout: readHeaderTimeout,
		ReloadInterval:    reloadInterval,
		IdleTimeout:       idleTimeout,
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
	var certNames string // as given, for its errors
	fs.Func("client-cert-names", "comma-separated DNS names; a client certificate must carry one of them as a DNS SAN (401 otherwise); needs -client-ca-file; empty: any the CA signed (env CLIENT_CERT_NAMES)", func(v string) error {
		certNames, c.ClientCertNames = v, clientCertNames(v)
		return nil
	})
	fs.StringVar(&c.TokenFile, "token-file", c.TokenFile, "file of bearer tokens, one per line, that hook calls must carry; re-read when its content changes; a file with no token accepts none; unset: no authentication (env TOKEN_FILE)")
	pc := &c.Prometheus
	fs.StringVar(&pc.URL, "prometheus-url", pc.URL, "base URL of the Prometheus that canary analyses are measured from, http or https, with no credentials in it; unset: none, and every check is inconclusive (env PROMETHEUS_URL)")
	fs.StringVar(&pc.TokenFile, "prometheus-token-file", pc.TokenFile, "file whose content is sent to Prometheus as a bearer token; re-read when it changes; needs -prometheus-url (env PROMETHEUS_TOKEN_FILE)")
	fs.StringVar(&pc.CAFile, "prometheus-ca-file", pc.CAFile, "PEM CA bundle that Prometheus's certificate must chain to, in place of the system's; re-read when it changes; needs -prometheus-url (env PROMETHEUS_CA_FILE)")
	fs.StringVar(&pc.Gateway, "analysis-gateway", pc.Gateway, "the Gateway implementation whose request metrics the built-in metrics read: "+strings.Join(analysis.GatewayNames(), " or ")+" (env ANALYSIS_GATEWAY)")
	fs.Func("analysis-entrypoints", "Traefik's entry points and their ports, as name=port,name=port (web=8000,websecure=8443): Traefik names a route's series after the entry point of each Gateway listener's port; unset: checks through Traefik are not measured, as their series cannot be told from other routes' (env ANALYSIS_ENTRYPOINTS)", func(v string) (err error) {
		pc.EntryPoints, err = analysis.ParseEntryPoints(v)
		return err
	})
	fs.StringVar(&pc.TemplatesFile, "analysis-templates", pc.TemplatesFile, "YAML file of the metric templates WebApps may name (templateRef); re-read when it changes; needs -prometheus-url (env ANALYSIS_TEMPLATES)")
	fs.DurationVar(&pc.QueryTimeout, "analysis-query-timeout", pc.QueryTimeout, "how long a check's query to Prometheus may take, the wait for a slot included; at most 2s (env ANALYSIS_QUERY_TIMEOUT)")
	fs.IntVar(&pc.MaxConcurrentQueries, "analysis-max-concurrent-queries", pc.MaxConcurrentQueries, "queries to Prometheus in flight at once; more wait, within -analysis-query-timeout (env ANALYSIS_MAX_CONCURRENT_QUERIES)")

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

	if err := envflag.Set(fs, getenv); err != nil {
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
	if certNames != "" {
		if c.ClientCAFile == "" {
			return fmt.Errorf("-client-cert-names needs -client-ca-file")
		}
		if len(c.ClientCertNames) == 0 {
			return fmt.Errorf("-client-cert-names %q names no DNS name", certNames)
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
	if err := checkPrometheus(c.Prometheus); err != nil {
		return err
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

// checkPrometheus checks the analysis flags, naming the flag at fault: those that refine
// -prometheus-url need it, and analysis.Config.Validate's rules hold.
func checkPrometheus(c analysis.Config) error {
	if c.URL == "" {
		for flag, v := range map[string]string{"-prometheus-token-file": c.TokenFile, "-prometheus-ca-file": c.CAFile, "-analysis-templates": c.TemplatesFile, "-analysis-entrypoints": c.EntryPoints.String()} {
			if v != "" {
				return fmt.Errorf("%s needs -prometheus-url", flag)
			}
		}
	}
	if c.QueryTimeout <= 0 || c.QueryTimeout > analysis.MaxQueryTimeout {
		return fmt.Errorf("-analysis-query-timeout must be positive and at most %s, got %s", analysis.MaxQueryTimeout, c.QueryTimeout)
	}
	if c.MaxConcurrentQueries <= 0 {
		return fmt.Errorf("-analysis-max-concurrent-queries must be positive, got %d", c.MaxConcurrentQueries)
	}
	if c.URL == "" {
		c.URL = "http://unset" // the rest is checked alike with or without a URL
	}
	err := c.Validate()
	if err == nil {
		return nil
	}
	for field, flag := range map[string]string{"URL: ": "-prometheus-url: ", "Gateway: ": "-analysis-gateway: ", "EntryPoints: ": "-analysis-entrypoints: "} {
		if rest, ok := strings.CutPrefix(err.Error(), field); ok {
			return errors.New(flag + rest)
		}
	}
	return err
}

package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/example/webapp-operator/internal/envflag"
)

// Config is the notifier's configuration, from flags and environment variables (each flag reads
// the variable of its name in capitals, - as _: --namespace, NAMESPACE).
type Config struct {
	// Kubeconfig is a kubeconfig file; empty uses the pod's service account.
	Kubeconfig string
	// Namespace is the notifier's own: its ConfigMap, Secret, records and Lease. Required.
	Namespace string
	// ConfigMap and Secret name the platform's notifications configuration (services,
	// templates, triggers; the services' tokens), as Argo CD's argocd-notifications-cm.
	ConfigMap, Secret string
	// MetricsAddr serves /metrics and /healthz; empty serves none.
	MetricsAddr string
	// Workers is how many WebApps are told at once.
	Workers int
	// LeaderElect makes replicas elect one, which alone tells, with a Lease named LeaseName.
	LeaderElect bool
	LeaseName   string
	// Identity names this replica in the Lease and in its Events' reportingInstance.
	Identity string
	// RetryMin and RetryMax bound the backoff of a WebApp whose notifications could not all be sent.
	RetryMin, RetryMax time.Duration
	// KubeQPS and KubeBurst bound the notifier's requests to the API server (client-go's
	// rest.Config QPS and Burst): a notification costs about three writes (the Event, the
	// record), so client-go's default of 5 a second told 1,000 canary starts in about ten
	// minutes. The defaults are controller-runtime's.
	KubeQPS   float64
	KubeBurst int
	// LogLevel is debug, info, warn or error.
	LogLevel string
}

func defaultConfig() Config {
	host, _ := os.Hostname()
	return Config{
		ConfigMap: "webapp-notifications-cm", Secret: "webapp-notifications-secret",
		MetricsAddr: ":9090", Workers: 2, LeaderElect: true, LeaseName: "webapp-notifier",
		Identity: host, RetryMin: time.Second, RetryMax: 5 * time.Minute, KubeQPS: 20, KubeBurst: 30, LogLevel: "info",
	}
}

// ParseFlags reads the configuration from args and getenv (a flag wins over its variable) and
// checks it; flag.ErrHelp after --help.
func (m *Main) ParseFlags(args []string, getenv func(string) string) error {
	c := &m.Config
	fs := flag.NewFlagSet("webapp-notifier", flag.ContinueOnError)
	fs.SetOutput(m.stderr)
	fs.StringVar(&c.Kubeconfig, "kubeconfig", c.Kubeconfig, "kubeconfig file; empty: the pod's service account")
	fs.StringVar(&c.Namespace, "namespace", c.Namespace, "the notifier's namespace: its ConfigMap, Secret, records and Lease (POD_NAMESPACE too)")
	fs.StringVar(&c.ConfigMap, "configmap", c.ConfigMap, "the ConfigMap of services, templates and triggers")
	fs.StringVar(&c.Secret, "secret", c.Secret, "the Secret the services' settings name as $key")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", c.MetricsAddr, "listen address of /metrics and /healthz; empty: none")
	fs.IntVar(&c.Workers, "workers", c.Workers, "WebApps told at once")
	fs.BoolVar(&c.LeaderElect, "leader-elect", c.LeaderElect, "elect one replica with a Lease; only it tells")
	fs.StringVar(&c.LeaseName, "lease-name", c.LeaseName, "the Lease of the leader election")
	fs.StringVar(&c.Identity, "identity", c.Identity, "this replica's name in the Lease and its Events (POD_NAME too)")
	fs.DurationVar(&c.RetryMin, "retry-min", c.RetryMin, "first backoff of a WebApp whose notifications failed")
	fs.DurationVar(&c.RetryMax, "retry-max", c.RetryMax, "longest backoff")
	fs.Float64Var(&c.KubeQPS, "kube-api-qps", c.KubeQPS, "requests a second to the API server, at most")
	fs.IntVar(&c.KubeBurst, "kube-api-burst", c.KubeBurst, "requests to the API server in a burst, at most")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "debug, info, warn or error")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: webapp-notifier [flags]\n\nEvery flag also reads the environment variable of its name (--metrics-addr: METRICS_ADDR).")
		fs.PrintDefaults()
	}
	if v := getenv("POD_NAMESPACE"); v != "" {
		c.Namespace = v
	}
	if v := getenv("POD_NAME"); v != "" {
		c.Identity = v
	}
	if err := envflag.Set(fs, getenv); err != nil {
		return err
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	switch {
	case c.Namespace == "":
		return fmt.Errorf("-namespace is required (or POD_NAMESPACE)")
	case c.ConfigMap == "" || c.Secret == "":
		return fmt.Errorf("-configmap and -secret must name something")
	case c.Workers < 1:
		return fmt.Errorf("-workers must be at least 1, got %d", c.Workers)
	case c.LeaderElect && (c.LeaseName == "" || c.Identity == ""):
		return fmt.Errorf("-leader-elect needs -lease-name and -identity")
	case !(c.KubeQPS > 0) || c.KubeBurst < 1:
		return fmt.Errorf("-kube-api-qps must be positive and -kube-api-burst at least 1, got %g and %d", c.KubeQPS, c.KubeBurst)
	case c.RetryMin <= 0 || c.RetryMax < c.RetryMin:
		return fmt.Errorf("-retry-min must be positive and at most -retry-max, got %s and %s", c.RetryMin, c.RetryMax)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return fmt.Errorf("-log-level: %w", err)
	}
	m.Logger = slog.New(slog.NewJSONHandler(m.stderr, &slog.HandlerOptions{Level: level}))
	return nil
}

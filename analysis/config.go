package analysis

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Defaults and bounds of a Config.
const (
	// DefaultQueryTimeout is Config.QueryTimeout when it is 0, and MaxQueryTimeout its bound: a
	// check's query, the wait for a slot included, ends by then, so that a slow Prometheus holds
	// no hook call long (Metacontroller's own timeout is 10 s).
	DefaultQueryTimeout = 2 * time.Second
	MaxQueryTimeout     = 2 * time.Second
	// DefaultMaxConcurrentQueries is Config.MaxConcurrentQueries when it is 0: queries to
	// Prometheus at once, from one replica of the hook.
	DefaultMaxConcurrentQueries = 8
	// DefaultGateway is Config.Gateway when it is "".
	DefaultGateway = "traefik"
)

// Config configures a Prometheus.
type Config struct {
	// URL is Prometheus's base URL, http or https, as "http://prometheus.monitoring:9090"; its
	// HTTP API is under /api/v1. It must hold no user or password: a token goes in TokenFile.
	URL string
	// TokenFile, when set, names a file whose content, spaces around it trimmed, is sent as a
	// bearer token. It is re-read by Reload.
	TokenFile string
	// CAFile, when set, names a PEM bundle that Prometheus's certificate must chain to, in place
	// of the system's roots. It is re-read by Reload.
	CAFile string
	// TemplatesFile, when set, names a YAML file of metric templates (TemplatesFile). It is
	// re-read by Reload.
	TemplatesFile string
	// Gateway names the Gateway implementation whose metrics the built-in metrics read, a key of
	// Gateways; "" means DefaultGateway.
	Gateway string
	// EntryPoints are Traefik's entry points and their ports (--analysis-entrypoints), which
	// Traefik names a route's series after. Without them, every check of a WebApp measured
	// through Traefik says that its series cannot be told from others', and is not measured.
	EntryPoints EntryPoints
	// QueryTimeout bounds each query, the wait for a slot included: 0 means DefaultQueryTimeout;
	// more than MaxQueryTimeout is an error.
	QueryTimeout time.Duration
	// MaxConcurrentQueries bounds the queries in flight at once: 0 means
	// DefaultMaxConcurrentQueries; negative is an error.
	MaxConcurrentQueries int
	// Logger receives the details of failed queries and reloads, never a token. Nil discards.
	Logger *slog.Logger
}

// withDefaults is c with its zero values defaulted.
func (c Config) withDefaults() Config {
	if c.Gateway == "" {
		c.Gateway = DefaultGateway
	}
	if c.QueryTimeout == 0 {
		c.QueryTimeout = DefaultQueryTimeout
	}
	if c.MaxConcurrentQueries == 0 {
		c.MaxConcurrentQueries = DefaultMaxConcurrentQueries
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate checks c without reading its files: a URL that is absolute http or https with a host
// and no user or password, https when a token is sent (but to a loopback host), a known gateway,
// and bounds kept. Its errors name the Config field.
func (c Config) Validate() error {
	c = c.withDefaults()
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return fmt.Errorf("URL: required")
	case err != nil:
		return fmt.Errorf("URL: not a URL") // url's error repeats the URL, which may hold a secret
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("URL: the scheme must be http or https, got %q", u.Scheme)
	case u.Host == "":
		return fmt.Errorf("URL: no host")
	case u.User != nil:
		return fmt.Errorf("URL: must hold no user or password; give a bearer token in a file instead")
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("URL: must have no query or fragment")
	}
	if c.TokenFile != "" && u.Scheme == "http" && !loopback(u.Hostname()) {
		return fmt.Errorf("TokenFile: a bearer token must not cross the network in cleartext: give an https URL (http is accepted for a loopback host only)")
	}
	if _, ok := Gateways[c.Gateway]; !ok {
		return fmt.Errorf("Gateway: %q is not one of %s", c.Gateway, strings.Join(GatewayNames(), ", "))
	}
	if err := c.EntryPoints.validate(); err != nil {
		return fmt.Errorf("EntryPoints: %w", err)
	}
	if c.QueryTimeout < 0 || c.QueryTimeout > MaxQueryTimeout {
		return fmt.Errorf("QueryTimeout: must be positive and at most %s, got %s", MaxQueryTimeout, c.QueryTimeout)
	}
	if c.MaxConcurrentQueries < 0 {
		return fmt.Errorf("MaxConcurrentQueries: must be positive, got %d", c.MaxConcurrentQueries)
	}
	return nil
}

// loopback reports whether host names the machine itself: localhost, or a loopback address.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// GatewayNames are the keys of Gateways, sorted.
func GatewayNames() []string {
	var names []string
	for n := range Gateways {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

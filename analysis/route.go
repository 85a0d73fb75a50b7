package analysis

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Route is what a selector knows of the HTTPRoute that carries a WebApp's requests: the route as
// the hook writes it from spec.route (with the install's --default-gateway), and the listeners of
// the Gateways it attaches to, as Metacontroller sent them along. It is plain data: the webhook
// fills it in from the request; the zero value is a route the hook knows nothing of, which no
// Traefik selector can pin (Istio's needs none of it).
type Route struct {
	// Hostnames are spec.hostnames, in order.
	Hostnames []string
	// Path and PathType are the path match of the route's one rule: "/" and "PathPrefix", say.
	Path, PathType string
	// Parents are spec.parentRefs, each namespace defaulted to the route's.
	Parents []RouteParent
	// Backends are the Services of the route's weighted rule, in order, while a canary splits its
	// traffic: a Gateway may number a backend's series by its place here (Traefik does).
	Backends []string
	// HeaderMatches are the matches of the canary's header route, each its headers, when the
	// WebApp's canary has one: their rule, to the canary's Service alone, goes before the
	// weighted rule, which is then the route's second (a Gateway may number a rule's series by
	// its place: Traefik does). Nil without one.
	HeaderMatches [][]HeaderMatch
	// CountHeaderRoute is true when the canary's requests include those its header route sends
	// it (spec.rollout.canary.headerRoute.analysis Include); false, the weighted rule's alone.
	CountHeaderRoute bool
}

// HeaderMatch is one header of a header route's match.
type HeaderMatch struct {
	Name, Value string
	// Regex is true for a RegularExpression match, false for an Exact one.
	Regex bool
}

// weightedRule is the index of the route's weighted rule: 1 behind a header route's, else 0.
func (r *Route) weightedRule() int {
	if len(r.HeaderMatches) > 0 {
		return 1
	}
	return 0
}

// RouteParent is one parentRef of a Route, to a Gateway, with that Gateway's listeners.
type RouteParent struct {
	// Namespace and Name are the Gateway's; Namespace is never "".
	Namespace, Name string
	// SectionName, when not "", is the one listener it attaches to; Port, when not 0, the port
	// of those it attaches to.
	SectionName string
	Port        int32
	// Seen is whether the hook was sent the Gateway (a related object); Listeners are then its
	// spec.listeners. Unseen, which of its listeners serve the route cannot be told.
	Seen      bool
	Listeners []Listener
}

// Listener is what a selector reads of one listener of a Gateway.
type Listener struct {
	Name string
	// Hostname is "" when the listener has none (it serves every hostname).
	Hostname string
	Port     int32
	// Protocol is "HTTP", "HTTPS", "TLS", "TCP" or "UDP": an HTTPRoute attaches to the first two
	// only.
	Protocol string
}

// Backend is the requests a selector selects: those a WebApp's route sends to one Service.
type Backend struct {
	// Namespace and Name are the WebApp's, and its HTTPRoute's; Service is in Namespace.
	Namespace, Name, Service string
	// Route is the HTTPRoute.
	Route *Route
	// EntryPoints are Traefik's entry points (Config.EntryPoints).
	EntryPoints EntryPoints
}

// EntryPoints are a Traefik's entry points, by name, each with the port of its address: Traefik
// serves a Gateway's listener on the entry point whose address has the listener's port, and names
// the routers of the routes it serves after that entry point (--analysis-entrypoints).
type EntryPoints map[string]int32

// ParseEntryPoints reads "name=port,name=port", as --analysis-entrypoints takes them: each name
// once, each port 1 to 65535. "" is none.
func ParseEntryPoints(s string) (EntryPoints, error) {
	if s == "" {
		return nil, nil
	}
	eps := EntryPoints{}
	for item := range strings.SplitSeq(s, ",") {
		name, port, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q is not name=port", item)
		}
		p, err := strconv.ParseInt(port, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%q: the port is not a number", item)
		}
		if _, dup := eps[name]; dup {
			return nil, fmt.Errorf("entry point %q given twice", name)
		}
		eps[name] = int32(p)
	}
	return eps, eps.validate()
}

// validate checks that every name is set and every port is 1 to 65535.
func (eps EntryPoints) validate() error {
	for _, name := range eps.names() {
		if name == "" {
			return fmt.Errorf("an entry point has no name")
		}
		if p := eps[name]; p < 1 || p > 65535 {
			return fmt.Errorf("entry point %q: port %d is not 1 to 65535", name, p)
		}
	}
	return nil
}

// names are the entry points' names, sorted.
func (eps EntryPoints) names() []string {
	names := make([]string, 0, len(eps))
	for n := range eps {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// at are the names of the entry points on port, sorted: Traefik serves a listener on that port on
// one of them (which one, when several, Traefik does not say).
func (eps EntryPoints) at(port int32) []string {
	var names []string
	for _, n := range eps.names() {
		if eps[n] == port {
			names = append(names, n)
		}
	}
	return names
}

// String is eps as ParseEntryPoints reads them, sorted by name.
func (eps EntryPoints) String() string {
	var b strings.Builder
	for i, n := range eps.names() {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%d", n, eps[n])
	}
	return b.String()
}

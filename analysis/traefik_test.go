package analysis

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testEntryPoints are the entry points of the tests' Traefik: web, on port 8000.
var testEntryPoints = EntryPoints{"web": 8000}

// testRoute is WebApp name's route as the tests' hook knows it: hostname <name>.example.com, every
// path, to Gateway infra/public, whose one listener, http, is on port 8000.
func testRoute(name string) Route {
	return Route{
		Hostnames: []string{name + ".example.com"}, Path: "/", PathType: "PathPrefix",
		Parents:  []RouteParent{{Namespace: "infra", Name: "public", Seen: true, Listeners: []Listener{{Name: "http", Port: 8000, Protocol: "HTTP"}}}},
		Backends: []string{name + "-stable", name + "-canary"},
	}
}

// parent is WebApp shop/name, with testRoute.
func parent(name string) Parent { return Parent{Namespace: "shop", Name: name, Route: testRoute(name)} }

// The tests' own implementation of Traefik v3.7.13's naming (pkg/provider/kubernetes/gateway:
// httproute.go's loadHTTPRoute, buildMatchRule and loadService, kubernetes.go's makeRouterName
// and findMatchingHostnames; pkg/provider/configuration.go's Normalize), written apart from
// traefik.go's so that each checks the other.

// simNormalize is provider.Normalize: runs of what is neither a letter nor a digit become one
// '-', trimmed at both ends.
func simNormalize(s string) string {
	return strings.Trim(regexp.MustCompile(`[^\p{L}\p{N}]+`).ReplaceAllString(s, "-"), "-")
}

// simRule is the rule of the router of hostnames and a path match.
func simRule(hostnames []string, path, pathType string) string {
	var hr []string
	for _, h := range hostnames {
		if strings.Count(h, "*") == 0 {
			hr = append(hr, fmt.Sprintf("Host(%q)", h))
		} else {
			hr = append(hr, fmt.Sprintf("HostRegexp(%q)", "^"+strings.Replace(regexp.QuoteMeta(h), `\*\.`, `[a-z0-9-\.]+\.`, 1)+"$"))
		}
	}
	var pr string
	switch {
	case pathType == "Exact":
		pr = fmt.Sprintf("Path(%q)", path)
	case pathType == "PathPrefix" && path == "/", pathType != "PathPrefix":
		pr = `PathPrefix("/")`
	default:
		pv := strings.TrimSuffix(path, "/")
		pr = fmt.Sprintf("(Path(%q) || PathPrefix(%q))", pv, pv+"/")
	}
	switch len(hr) {
	case 0:
		return pr
	case 1:
		return hr[0] + " && " + pr
	default:
		return fmt.Sprintf("(%s) && %s", strings.Join(hr, " || "), pr)
	}
}

// simRouter is the name of the router of rule index rule, ruleText, of route ns/route on a
// listener of Gateway gwNS/gw served on entry point ep.
func simRouter(ns, route, gwNS, gw, ep string, rule int, ruleText string) string {
	h := sha256.New()
	for _, c := range []string{ns, route, gwNS, gw, ep, strconv.Itoa(rule)} {
		fmt.Fprintf(h, "%d:%s", len(c), c)
	}
	h.Write([]byte(ruleText))
	return fmt.Sprintf("%s-%.10x", simNormalize(fmt.Sprintf("%s-%s-%s-gw-%s-%s-ep-%s-%d", "httproute", ns, route, gwNS, gw, ep, rule)), h.Sum(nil))
}

// simService is the name of backend index, Service backendNS/backend, of router, as Traefik's
// metrics label it.
func simService(router, backendNS, backend string, index int) string {
	return fmt.Sprintf("%s-svc-%s-%s-%d", router, backendNS, backend, index) + "@kubernetesgateway"
}

// simHostnames is findMatchingHostnames: the hostnames a route's router on a listener matches.
func simHostnames(listener string, route []string) ([]string, bool) {
	if listener == "" {
		return route, true
	}
	if len(route) == 0 {
		return []string{listener}, true
	}
	match := func(h1, h2 string) string {
		if h1 == h2 {
			return h1
		}
		if !strings.HasPrefix(h1, "*.") || !strings.HasSuffix(h2, h1[1:]) {
			return ""
		}
		return h2
	}
	var out []string
	for _, h := range route {
		if m := match(listener, h); m != "" {
			out = append(out, m)
		} else if m := match(h, listener); m != "" {
			out = append(out, m)
		}
	}
	return out, len(out) > 0
}

// simWorld is a cluster as Traefik's provider sees it: its entry points (one per port), the
// Gateways, and HTTPRoutes, each parentRef's namespace defaulted.
type simWorld struct {
	entryPoints EntryPoints
	gateways    []simGateway
	routes      []simRoute
}

type simGateway struct {
	ns, name  string
	listeners []Listener
}

type simRoute struct {
	ns, name  string
	hostnames []string
	parents   []RouteParent
	rules     []simRouteRule
	// webApp marks a route the hook wrote for WebApp ns/name: one rule, backends RouteBackends.
	webApp bool
}

type simRouteRule struct {
	path, pathType string
	// headers, when set, make the rule one match per entry, each the path and those headers.
	headers  [][]HeaderMatch
	backends []simBackend
}

// simHeaders is what a match's headers add to its rule (buildHeaderRules), each " && " then its
// matcher.
func simHeaders(headers []HeaderMatch) string {
	out := ""
	for _, h := range headers {
		if h.Regex {
			out += fmt.Sprintf(" && HeaderRegexp(%q,%q)", h.Name, h.Value)
		} else {
			out += fmt.Sprintf(" && Header(%q,%q)", h.Name, h.Value)
		}
	}
	return out
}

type simBackend struct{ ns, name string }

// owner is a backend of a route: the route's index, the rule's, the backend's.
type owner struct{ route, rule, backend int }

// series are the service names Traefik gives every backend of every route, each with the
// backends it names: more than one when Traefik names two alike (and keeps one of them).
func (w *simWorld) series() map[string][]owner {
	out := map[string][]owner{}
	for ri, r := range w.routes {
		for _, ref := range r.parents {
			for _, g := range w.gateways {
				if g.ns != ref.Namespace || g.name != ref.Name {
					continue
				}
				for _, l := range g.listeners {
					if l.Protocol != "HTTP" && l.Protocol != "HTTPS" || ref.SectionName != "" && ref.SectionName != l.Name || ref.Port != 0 && ref.Port != l.Port {
						continue
					}
					hosts, ok := simHostnames(l.Hostname, r.hostnames)
					if !ok {
						continue
					}
					ep := ""
					for name, port := range w.entryPoints {
						if port == l.Port {
							ep = name
						}
					}
					if ep == "" {
						continue // no entry point: Traefik does not attach the listener
					}
					for rule, rr := range r.rules {
						matches := rr.headers
						if len(matches) == 0 {
							matches = [][]HeaderMatch{nil} // one match: the path
						}
						for _, m := range matches {
							router := simRouter(r.ns, r.name, g.ns, g.name, ep, rule, simRule(hosts, rr.path, rr.pathType)+simHeaders(m))
							for bi, b := range rr.backends {
								ns := b.ns
								if ns == "" {
									ns = r.ns
								}
								s := simService(router, ns, b.name, bi)
								o := owner{ri, rule, bi}
								if !slices.Contains(out[s], o) {
									out[s] = append(out[s], o)
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// backend is what the hook knows of backend index of WebApp route r (webApp), as the webhook
// fills it in.
func (w *simWorld) backend(r *simRoute, index int) *Backend {
	rt := Route{Hostnames: r.hostnames, Path: r.rules[0].path, PathType: r.rules[0].pathType}
	for _, b := range r.rules[0].backends {
		rt.Backends = append(rt.Backends, b.name)
	}
	for _, ref := range r.parents {
		for _, g := range w.gateways {
			if g.ns == ref.Namespace && g.name == ref.Name {
				ref.Seen, ref.Listeners = true, g.listeners
			}
		}
		rt.Parents = append(rt.Parents, ref)
	}
	return &Backend{Namespace: r.ns, Name: r.name, Service: rt.Backends[index], Route: &rt, EntryPoints: w.entryPoints}
}

// selectorMatcher compiles a Traefik selector, service="x" or service=~"re", into a matcher of
// label values, anchored as Prometheus anchors =~.
func selectorMatcher(t *testing.T, sel string) func(string) bool {
	t.Helper()
	if v, ok := strings.CutPrefix(sel, "service="); ok && !strings.HasPrefix(v, "~") {
		lit, err := strconv.Unquote(v)
		if err != nil {
			t.Fatalf("selector %s: %v", sel, err)
		}
		return func(s string) bool { return s == lit }
	}
	v, ok := strings.CutPrefix(sel, "service=~")
	if !ok {
		t.Fatalf("selector %s: not one service matcher", sel)
	}
	re, err := strconv.Unquote(v)
	if err != nil {
		t.Fatalf("selector %s: %v", sel, err)
	}
	rx := regexp.MustCompile("^(?:" + re + ")$")
	return rx.MatchString
}

// webAppRoute is the route the hook writes for WebApp ns/name: one rule to <name>-stable and
// <name>-canary.
func webAppRoute(ns, name string, hostnames []string, path, pathType string, parents ...RouteParent) simRoute {
	return simRoute{ns: ns, name: name, hostnames: hostnames, parents: parents, webApp: true,
		rules: []simRouteRule{{path: path, pathType: pathType, backends: []simBackend{{name: name + "-stable"}, {name: name + "-canary"}}}}}
}

// checkWorld checks, for each backend of each WebApp route of w, that its selector matches the
// series Traefik gives that backend, and no other series of w; and returns how many matched
// series Traefik gives another route's backend too (alike names) and how many selectors were
// refused.
func checkWorld(t *testing.T, w *simWorld) (alike, refused int) {
	t.Helper()
	series := w.series()
	for ri := range w.routes {
		r := &w.routes[ri]
		if !r.webApp {
			continue
		}
		for bi := range r.rules[0].backends {
			b := w.backend(r, bi)
			sel, err := Traefik.Selector(b)
			if err != nil {
				refused++
				continue
			}
			match := selectorMatcher(t, sel)
			own := 0
			for s, owners := range series {
				want := slices.Contains(owners, owner{ri, 0, bi})
				if got := match(s); got != want {
					t.Fatalf("route %s/%s, backend %s: the selector %s matches %s: %v; Traefik gives it to %v (routes %+v)", r.ns, r.name, b.Service, sel, s, got, owners, w.routes)
				}
				if want {
					own++
					if len(owners) > 1 {
						alike++
					}
				}
			}
			if own == 0 {
				t.Fatalf("route %s/%s, backend %s: the selector %s matches no series of Traefik's", r.ns, r.name, b.Service, sel)
			}
		}
	}
	return alike, refused
}

// TestTraefikNaming checks the names against Traefik's: the rules against the router names of
// Traefik v3.7.9's own tests (pkg/provider/kubernetes/gateway/kubernetes_test.go), which hashed
// the rule alone, and a whole service name against one that Traefik v3.7.13 gave a WebApp's
// canary in make gateway-e2e (docs/development.md).
func TestTraefikNaming(t *testing.T) {
	for _, tc := range []struct {
		hostnames      []string
		path, pathType string
		rule, hash     string
	}{
		{[]string{"foo.com"}, "/bar", "Exact", `Host("foo.com") && Path("/bar")`, "af329269dd38031b03e3"},
		{[]string{"foo.com", "bar.com"}, "/", "PathPrefix", `(Host("foo.com") || Host("bar.com")) && PathPrefix("/")`, "68ef33b73c758387c1f3"},
		{[]string{"foo.com", "*.bar.com"}, "/", "PathPrefix", `(Host("foo.com") || HostRegexp("^[a-z0-9-\\.]+\\.bar\\.com$")) && PathPrefix("/")`, "e9a5f9c29d35e93ffeef"},
		{[]string{"example.com"}, "/foo", "PathPrefix", `Host("example.com") && (Path("/foo") || PathPrefix("/foo/"))`, "1fc167f18269cb272259"},
		{[]string{"example.org"}, "/", "PathPrefix", `Host("example.org") && PathPrefix("/")`, "3be6c6c1abd7a2aec50c"},
		{nil, "/", "PathPrefix", `PathPrefix("/")`, "fc344df89b6d773f1900"},
	} {
		rule := traefikRule(tc.hostnames, tc.path, tc.pathType)
		if rule != tc.rule || simRule(tc.hostnames, tc.path, tc.pathType) != tc.rule {
			t.Errorf("%v %s %s: rule %s (test's %s); want %s", tc.hostnames, tc.pathType, tc.path, rule, simRule(tc.hostnames, tc.path, tc.pathType), tc.rule)
		}
		if got := fmt.Sprintf("%.10x", sha256.Sum256([]byte(rule))); got != tc.hash {
			t.Errorf("%s: hash %s; want %s", rule, got, tc.hash)
		}
	}

	const e2e = "httproute-traefik-c035d4-shop-gw-traefik-c035d4-public-ep-web-0-4ee4a599a750cf1f68be-svc-traefik-c035d4-shop-canary-1@kubernetesgateway"
	route := Route{Hostnames: []string{"shop.example.com"}, Path: "/", PathType: "PathPrefix",
		Parents:  []RouteParent{{Namespace: "traefik-c035d4", Name: "public", Seen: true, Listeners: []Listener{{Name: "http", Port: 41234, Protocol: "HTTP"}}}},
		Backends: []string{"shop-stable", "shop-canary"}}
	got, err := traefikNames(&Backend{Namespace: "traefik-c035d4", Name: "shop", Service: "shop-canary", Route: &route, EntryPoints: EntryPoints{"web": 41234}})
	if err != nil || len(got) != 1 || got[0] != e2e {
		t.Errorf("names %q, %v; want Traefik's %s", got, err, e2e)
	}
	rule := simRule(route.Hostnames, "/", "PathPrefix")
	if sim := simService(simRouter("traefik-c035d4", "shop", "traefik-c035d4", "public", "web", 0, rule), "traefik-c035d4", "shop-canary", 1); sim != e2e {
		t.Errorf("the test's naming: %s; want Traefik's %s", sim, e2e)
	}

	// Rules with headers, and their routers' names, as Traefik v3.7.13's own test of an
	// HTTPRoute of several rules has them (kubernetes_test.go, "Simple HTTPRoute, with several
	// rules"): rule 0 of two Exact headers, rule 1 of one.
	for _, tc := range []struct {
		path, pathType string
		index          int
		headers        []HeaderMatch
		rule, router   string
	}{
		{"/bar", "PathPrefix", 0, []HeaderMatch{{Name: "my-header", Value: "foo"}, {Name: "my-header2", Value: "bar"}},
			`Host("foo.com") && (Path("/bar") || PathPrefix("/bar/")) && Header("my-header","foo") && Header("my-header2","bar")`,
			"httproute-default-http-app-1-gw-default-my-gateway-ep-web-0-cbebdedef34a6261eced"},
		{"/bar", "Exact", 1, []HeaderMatch{{Name: "my-header", Value: "bar"}},
			`Host("foo.com") && Path("/bar") && Header("my-header","bar")`,
			"httproute-default-http-app-1-gw-default-my-gateway-ep-web-1-d4501fe0597184abd40e"},
	} {
		rule := traefikRule([]string{"foo.com"}, tc.path, tc.pathType) + traefikHeaders(tc.headers)
		if sim := simRule([]string{"foo.com"}, tc.path, tc.pathType) + simHeaders(tc.headers); rule != tc.rule || sim != tc.rule {
			t.Errorf("rule %s (test's %s); want %s", rule, sim, tc.rule)
		}
		if got := traefikRouter("default", "http-app-1", "default", "my-gateway", "web", tc.index, rule); got != tc.router {
			t.Errorf("router %s; want Traefik's %s", got, tc.router)
		}
	}
	if got, want := traefikHeaders([]HeaderMatch{{Name: "Cookie", Value: `(^|; *)canary="a\b"`, Regex: true}}), ` && HeaderRegexp("Cookie","(^|; *)canary=\"a\\b\"")`; got != want {
		t.Errorf("a RegularExpression: %s; want %s, Go-quoted as Traefik writes it", got, want)
	}
}

// TestTraefikHeaderRoute: behind a canary's header route, the weighted rule is rule 1, and the
// canary's selector takes the header route's series (rule 0, one router per match, the canary's
// Service its one backend) when the analysis counts them, and not otherwise; the stable
// version's never. Another WebApp through the same Gateway, with and without a header route of
// the same headers, shares no series with it.
func TestTraefikHeaderRoute(t *testing.T) {
	gw := RouteParent{Namespace: "infra", Name: "public"}
	headers := [][]HeaderMatch{{{Name: "X-Canary", Value: "always"}}, {{Name: "Cookie", Value: "(^|; *)canary=always(;|$)", Regex: true}}}
	withHeaderRoute := func(r simRoute) simRoute {
		header := simRouteRule{path: r.rules[0].path, pathType: r.rules[0].pathType, headers: headers, backends: []simBackend{{name: r.name + "-canary"}}}
		r.rules = append([]simRouteRule{header}, r.rules...)
		return r
	}
	w := &simWorld{
		entryPoints: EntryPoints{"web": 8000},
		gateways:    []simGateway{{ns: "infra", name: "public", listeners: []Listener{{Name: "http", Port: 8000, Protocol: "HTTP"}}}},
		routes: []simRoute{
			withHeaderRoute(webAppRoute("shop", "web", []string{"web.example.com"}, "/", "PathPrefix", gw)),
			withHeaderRoute(webAppRoute("shop", "api", []string{"web.example.com"}, "/", "PathPrefix", gw)),
			webAppRoute("shop2", "web", []string{"web.example.com"}, "/", "PathPrefix", gw),
		},
	}
	series := w.series()
	for _, tc := range []struct {
		name    string
		service string
		count   bool
		want    []owner // of route 0
	}{
		{"the canary, with the header route's requests: a router per match", "web-canary", true, []owner{{0, 0, 0}, {0, 0, 0}, {0, 1, 1}}},
		{"the canary, without them", "web-canary", false, []owner{{0, 1, 1}}},
		{"the stable version, counted or not", "web-stable", true, []owner{{0, 1, 0}}},
		{"the stable version, not counted", "web-stable", false, []owner{{0, 1, 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := w.backend(&w.routes[2], 0) // WebApp shop2/web's parents, seen, for shop/web
			b.Namespace, b.Name, b.Service = "shop", "web", tc.service
			b.Route.Hostnames, b.Route.Backends = []string{"web.example.com"}, []string{"web-stable", "web-canary"}
			b.Route.HeaderMatches, b.Route.CountHeaderRoute = headers, tc.count
			sel, err := Traefik.Selector(b)
			if err != nil {
				t.Fatal(err)
			}
			match := selectorMatcher(t, sel)
			var got []owner
			for s, owners := range series {
				if match(s) {
					if len(owners) != 1 {
						t.Fatalf("%s names %v alike", s, owners)
					}
					got = append(got, owners[0])
				}
			}
			slices.SortFunc(got, func(a, b owner) int { return a.rule*10 + a.backend - b.rule*10 - b.backend })
			if !slices.Equal(got, tc.want) {
				t.Errorf("the selector %s matches the series of %v; want %v", sel, got, tc.want)
			}
			if tc.count && tc.service == "web-canary" && strings.Count(sel, "|") != 2 {
				t.Errorf("the selector %s; want three names: the weighted rule's, and one per header match", sel)
			}
		})
	}
}

func TestTraefikSelector(t *testing.T) {
	name := func(ep, svc string, index int) string {
		return simService(simRouter("shop", "web", "infra", "public", ep, 0, `Host("web.example.com") && PathPrefix("/")`), "shop", svc, index)
	}
	withRoute := func(f func(r *Route)) *Route {
		r := testRoute("web")
		r.Parents = slices.Clone(r.Parents)
		r.Parents[0].Listeners = slices.Clone(r.Parents[0].Listeners)
		f(&r)
		return &r
	}
	for _, tc := range []struct {
		name    string
		service string
		route   *Route
		eps     EntryPoints
		want    string // the selector, or the error's text
		wantErr bool
	}{
		{name: "the canary: one exact name", service: "web-canary",
			want: `service="` + name("web", "web-canary", 1) + `"`},
		{name: "the stable version, backend 0", service: "web-stable",
			want: `service="` + name("web", "web-stable", 0) + `"`},
		{name: "two entry points on the listener's port: either name", service: "web-canary", eps: EntryPoints{"web": 8000, "alt": 8000, "websecure": 8443},
			want: `service=~"` + strings.Join([]string{regexp.QuoteMeta(name("alt", "web-canary", 1)), regexp.QuoteMeta(name("web", "web-canary", 1))}, "|") + `"`},
		{name: "an entry point's name: normalized in the text, as it is in the hash", service: "web-canary", eps: EntryPoints{"Web_Secure": 8000},
			want: `service="` + name("Web_Secure", "web-canary", 1) + `"`},
		{name: "an HTTPS listener, and a TLS one the route does not attach to", service: "web-canary", eps: EntryPoints{"web": 8000, "websecure": 8443},
			route: withRoute(func(r *Route) {
				r.Parents[0].Listeners = append(r.Parents[0].Listeners, Listener{Name: "https", Port: 8443, Protocol: "HTTPS"}, Listener{Name: "tls", Port: 9000, Protocol: "TLS"})
			}),
			want: `service=~"` + regexp.QuoteMeta(name("web", "web-canary", 1)) + "|" + regexp.QuoteMeta(name("websecure", "web-canary", 1)) + `"`},
		{name: "sectionName picks one listener", service: "web-canary", eps: EntryPoints{"web": 8000, "websecure": 8443},
			route: withRoute(func(r *Route) {
				r.Parents[0].Listeners = append(r.Parents[0].Listeners, Listener{Name: "https", Port: 8443, Protocol: "HTTPS"})
				r.Parents[0].SectionName = "https"
			}),
			want: `service="` + name("websecure", "web-canary", 1) + `"`},
		{name: "a listener whose hostname lets none of the route's through", service: "web-canary",
			route: withRoute(func(r *Route) {
				r.Parents[0].Listeners = append(r.Parents[0].Listeners, Listener{Name: "other", Port: 9000, Hostname: "*.other.org", Protocol: "HTTP"})
			}),
			want: `service="` + name("web", "web-canary", 1) + `"`},
		{name: "no entry point is known", service: "web-canary", eps: EntryPoints{}, wantErr: true,
			want: "the Gateway's series names cannot tell this route from others (Traefik names them after its entry points, and the hook's --analysis-entrypoints names none): not measured"},
		{name: "no entry point on the listener's port", service: "web-canary", eps: EntryPoints{"websecure": 8443}, wantErr: true,
			want: "the Gateway's series names cannot tell this route from others (--analysis-entrypoints names no entry point on port 8000, that of listener http of Gateway infra/public): not measured"},
		{name: "the Gateway was not sent", service: "web-canary", wantErr: true,
			route: withRoute(func(r *Route) { r.Parents[0].Seen, r.Parents[0].Listeners = false, nil }),
			want:  "the Gateway's series names cannot tell this route from others (the hook was not sent Gateway infra/public, so which of its listeners serve the route is unknown): not measured"},
		{name: "no listener serves the route", service: "web-canary", wantErr: true,
			route: withRoute(func(r *Route) { r.Parents[0].SectionName = "nope" }),
			want:  "no listener of the Gateways of HTTPRoute web can serve it: not measured"},
		{name: "the route does not send to the Service", service: "web", wantErr: true,
			want: "HTTPRoute web sends no request to Service web: not measured"},
		{name: "no route", service: "web-canary", route: &Route{}, wantErr: true,
			want: "the hook knows no HTTPRoute of web: not measured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Backend{Namespace: "shop", Name: "web", Service: tc.service, Route: tc.route, EntryPoints: tc.eps}
			if b.Route == nil {
				b.Route = withRoute(func(*Route) {})
			}
			if b.EntryPoints == nil {
				b.EntryPoints = testEntryPoints
			}
			got, err := Traefik.Selector(b)
			if tc.wantErr {
				if err == nil || err.Error() != tc.want {
					t.Errorf("got %s, %v; want the error %q", got, err, tc.want)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got  %s, %v\nwant %s", got, err, tc.want)
			}
		})
	}
}

// TestTraefikSelectorIssueNames is issue 43's case: WebApps c-gw-1-a-svc-a-c in namespace a and
// z-1-a-svc-a-c in namespace a-c-gw-b, through the same Gateway and entry point as WebApp a/c,
// with the same hostnames and path even, have canary series that a/c's old selector matched and
// its selector does not; and the other way round.
func TestTraefikSelectorIssueNames(t *testing.T) {
	gw := RouteParent{Namespace: "b", Name: "gw"}
	w := &simWorld{
		entryPoints: EntryPoints{"web": 8000},
		gateways:    []simGateway{{ns: "b", name: "gw", listeners: []Listener{{Name: "http", Port: 8000, Protocol: "HTTP"}}}},
		routes: []simRoute{
			webAppRoute("a", "c", []string{"app.example.com"}, "/", "PathPrefix", gw),
			webAppRoute("a", "c-gw-1-a-svc-a-c", []string{"app.example.com"}, "/", "PathPrefix", gw),
			webAppRoute("a-c-gw-b", "z-1-a-svc-a-c", []string{"app.example.com"}, "/", "PathPrefix", gw),
		},
	}
	old := regexp.MustCompile(`^(?:httproute-a-c-gw-.+-ep-.+-[0-9]+-[0-9a-f]+-svc-a-c-canary-[0-9]+@kubernetesgateway)$`)
	oldMatched := 0
	for s, owners := range w.series() {
		if owners[0].route != 0 && old.MatchString(s) {
			oldMatched++
		}
	}
	if oldMatched != 2 {
		t.Errorf("the old selector of a/c matched %d series of the other two WebApps' canaries; the issue says 2", oldMatched)
	}
	if alike, refused := checkWorld(t, w); alike != 0 || refused != 0 {
		t.Errorf("%d series named alike, %d selectors refused; want none", alike, refused)
	}
}

// TestTraefikNamesRejoined is the case that only the hash tells apart. Route team-a/shop and
// route team/a-shop join to the same text, and so do their backends shop-canary and
// a-shop-canary: through the same Gateway, with the same hostnames and path, their service names
// differ only in the router's hash, over the names length-prefixed and the entry point. So the
// selector pins the hash, which needs the entry point's name: a selector that left either to a
// pattern (the entry point as a run of letters and digits, the hash as 20 hex digits) would
// match the other route's canary, on the same entry point or another.
func TestTraefikNamesRejoined(t *testing.T) {
	public := simGateway{ns: "infra", name: "public", listeners: []Listener{{Name: "http", Port: 8000, Protocol: "HTTP"}, {Name: "https", Port: 8443, Protocol: "HTTPS"}}}
	eps := EntryPoints{"web": 8000, "websecure": 8443}
	hosts := []string{"shop.example.com"}
	for _, other := range []string{"https", "http"} {
		w := &simWorld{entryPoints: eps, gateways: []simGateway{public}, routes: []simRoute{
			webAppRoute("team-a", "shop", hosts, "/", "PathPrefix", RouteParent{Namespace: "infra", Name: "public", SectionName: "https"}),
			webAppRoute("team", "a-shop", hosts, "/", "PathPrefix", RouteParent{Namespace: "infra", Name: "public", SectionName: other}),
		}}
		if alike, refused := checkWorld(t, w); alike != 0 || refused != 0 {
			t.Errorf("other route on %s: %d series named alike, %d refused; want none", other, alike, refused)
		}
		pattern := regexp.MustCompile(`^(?:` + regexp.QuoteMeta("httproute-team-a-shop-gw-infra-public-ep-") + `[A-Za-z0-9]+-0-[0-9a-f]{20}` +
			regexp.QuoteMeta("-svc-team-a-shop-canary-1@kubernetesgateway") + `)$`)
		caught := false
		for s, owners := range w.series() {
			if owners[0].route == 1 && pattern.MatchString(s) {
				caught = true
			}
		}
		if !caught {
			t.Errorf("other route on %s: a pattern for the entry point and the hash would not have matched its canary: this test no longer shows why they are pinned", other)
		}
	}
}

// TestTraefikSelectorProperty generates clusters of random valid names, skewed to the tokens
// Traefik's names are made of ("gw", "ep", "svc", digits, hex, '-' and "--"), with WebApps'
// routes, other tenants' routes of any shape, and routes that re-split a WebApp's names, and
// checks every WebApp backend's selector against every series Traefik names: it matches its
// own and no other, and no two backends share a name.
func TestTraefikSelectorProperty(t *testing.T) {
	worlds := 1000
	if testing.Short() {
		worlds = 200
	}
	r := rand.New(rand.NewPCG(43, 1))
	var alike, refused, backends, oldCaught int
	for range worlds {
		w := randomWorld(r)
		a, f := checkWorld(t, w)
		alike, refused = alike+a, refused+f
		series := w.series()
		for ri, rt := range w.routes {
			if !rt.webApp {
				continue
			}
			backends += 2
			// The selector before issue 43, which the generator must catch out.
			svc := rt.name + "-canary"
			old := regexp.MustCompile("^(?:httproute-" + regexp.QuoteMeta(normalize(rt.ns)+"-"+normalize(rt.name)) + "-gw-.+-ep-.+-[0-9]+-[0-9a-f]+" +
				"-svc-" + regexp.QuoteMeta(rt.ns) + "-" + regexp.QuoteMeta(svc) + "-[0-9]+@kubernetesgateway)$")
			for s, owners := range series {
				if !slices.Contains(owners, owner{ri, 0, 1}) && old.MatchString(s) {
					oldCaught++
				}
			}
		}
	}
	t.Logf("%d worlds, %d WebApp backends: %d selectors refused (a listener on a port with no entry point, or none serving), %d series Traefik names alike for two routes, %d series of others the old selector matched", worlds, backends, refused, alike, oldCaught)
	if alike != 0 {
		t.Errorf("%d series that Traefik names alike for two backends; since v3.7.10 its router hash keeps routes apart", alike)
	}
	if refused > backends/2 || oldCaught == 0 {
		t.Error("the generator no longer tests much: too many selectors refused, or no series of others that the old selector matched")
	}
}

// tokens are what random names are made of: Traefik's own words, digits, hex.
var tokens = []string{"a", "b", "c", "z", "0", "1", "12", "gw", "ep", "svc", "web", "canary", "stable", "httproute", "0123456789abcdef0123", "af329269dd38031b03e3"}

// randomLabel is a DNS label of 1 to n tokens joined by '-' or "--", at most max characters,
// starting with a letter when letter is set.
func randomLabel(r *rand.Rand, n, max int, letter bool) string {
	for {
		var b strings.Builder
		for i := range 1 + r.IntN(n) {
			if i > 0 {
				b.WriteString([]string{"-", "-", "-", "--"}[r.IntN(4)])
			}
			b.WriteString(tokens[r.IntN(len(tokens))])
		}
		s := b.String()
		if len(s) <= max && (!letter || s[0] >= 'a' && s[0] <= 'z') {
			return s
		}
	}
}

// randomSubdomain is a DNS subdomain of one or two labels.
func randomSubdomain(r *rand.Rand) string {
	s := randomLabel(r, 3, 63, false)
	if r.IntN(4) == 0 {
		s += "." + randomLabel(r, 2, 63, false)
	}
	return s
}

var (
	hostnamePool = []string{"a.example.com", "b.example.com", "*.example.com", "a.b.example.com"}
	listenerHost = []string{"", "", "*.example.com", "a.example.com", "*.b.example.com"}
	portPool     = []int32{8000, 8443, 9000, 7000}
	epNames      = []string{"web", "websecure", "web-secure", "web_secure", "Web_2", "ep", "gw", "svc", "0", "a.b"}
)

func randomHostnames(r *rand.Rand) []string {
	var hs []string
	for _, i := range r.Perm(len(hostnamePool))[:1+r.IntN(2)] {
		hs = append(hs, hostnamePool[i])
	}
	return hs
}

func randomPath(r *rand.Rand) (string, string) {
	return []string{"/", "/api", "/api/"}[r.IntN(3)], []string{"PathPrefix", "Exact"}[r.IntN(2)]
}

// randomWorld is a cluster: an entry point on each of three ports (none on 7000, so that a
// listener there is not served), one to three Gateways, WebApps' routes, other routes, and a re-split twin of a
// WebApp's route now and then.
func randomWorld(r *rand.Rand) *simWorld {
	w := &simWorld{entryPoints: EntryPoints{}}
	for i := range 3 {
		for {
			name := epNames[r.IntN(len(epNames))]
			if _, dup := w.entryPoints[name]; dup {
				continue
			}
			w.entryPoints[name] = portPool[i]
			break
		}
	}
	for range 1 + r.IntN(3) {
		g := simGateway{ns: randomLabel(r, 3, 63, false), name: randomSubdomain(r)}
		for range 1 + r.IntN(3) {
			g.listeners = append(g.listeners, Listener{
				Name: randomLabel(r, 1, 63, false), Port: portPool[r.IntN(3)],
				Hostname: listenerHost[r.IntN(len(listenerHost))], Protocol: []string{"HTTP", "HTTP", "HTTPS", "TLS"}[r.IntN(4)],
			})
			if r.IntN(20) == 0 {
				g.listeners[len(g.listeners)-1].Port = 7000 // no entry point's: Traefik does not serve it
			}
		}
		w.gateways = append(w.gateways, g)
	}
	parents := func() []RouteParent {
		var ps []RouteParent
		for range 1 + r.IntN(2) {
			g := w.gateways[r.IntN(len(w.gateways))]
			p := RouteParent{Namespace: g.ns, Name: g.name}
			switch r.IntN(4) {
			case 0:
				p.SectionName = g.listeners[r.IntN(len(g.listeners))].Name
			case 1:
				p.Port = g.listeners[r.IntN(len(g.listeners))].Port
			}
			ps = append(ps, p)
		}
		return ps
	}
	for range 1 + r.IntN(3) {
		path, pathType := randomPath(r)
		w.routes = append(w.routes, webAppRoute(randomLabel(r, 3, 63, false), randomLabel(r, 3, 56, true), randomHostnames(r), path, pathType, parents()...))
	}
	for range r.IntN(5) {
		rt := simRoute{ns: randomLabel(r, 3, 63, false), name: randomSubdomain(r), hostnames: randomHostnames(r), parents: parents()}
		for range 1 + r.IntN(2) {
			path, pathType := randomPath(r)
			rule := simRouteRule{path: path, pathType: pathType}
			for range 1 + r.IntN(3) {
				b := simBackend{name: randomLabel(r, 3, 63, true)}
				if r.IntN(4) == 0 {
					b.ns = randomLabel(r, 3, 63, false)
				}
				rule.backends = append(rule.backends, b)
			}
			rt.rules = append(rt.rules, rule)
		}
		w.routes = append(w.routes, rt)
	}
	// A twin: a WebApp's namespace and name split elsewhere (team-a/shop, team/a-shop), with
	// its hostnames and path, through its Gateways or others.
	if r.IntN(2) == 0 {
		orig := w.routes[0]
		joined := orig.ns + "-" + orig.name
		var cuts []int
		for i := 1; i < len(joined)-1; i++ {
			if joined[i] == '-' && i != len(orig.ns) && joined[i-1] != '-' && joined[i+1] != '-' {
				cuts = append(cuts, i)
			}
		}
		if len(cuts) > 0 {
			i := cuts[r.IntN(len(cuts))]
			ns, name := joined[:i], joined[i+1:]
			if len(ns) <= 63 && len(name) <= 56 && name[0] >= 'a' && name[0] <= 'z' {
				ps := orig.parents
				if r.IntN(2) == 0 {
					ps = parents()
				}
				w.routes = append(w.routes, webAppRoute(ns, name, orig.hostnames, orig.rules[0].path, orig.rules[0].pathType, ps...))
			}
		}
	}
	return w
}

// TestEntryPoints checks ParseEntryPoints.
func TestEntryPoints(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "", want: ""},
		{in: "web=8000,websecure=8443", want: "web=8000,websecure=8443"},
		{in: "websecure=8443, web=8000", want: "web=8000,websecure=8443"},
		{in: "web", err: `"web" is not name=port`},
		{in: "web=http", err: `"web=http": the port is not a number`},
		{in: "web=8000,web=8001", err: `entry point "web" given twice`},
		{in: "web=0", err: `entry point "web": port 0 is not 1 to 65535`},
		{in: "=80", err: `"=80" is not name=port`},
		{in: "web-secure=8443,web_secure=8443", want: "web-secure=8443,web_secure=8443"},
	} {
		eps, err := ParseEntryPoints(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v; want %s", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || eps.String() != tc.want {
			t.Errorf("%q: %q, %v; want %q", tc.in, eps.String(), err, tc.want)
		}
	}
	if !errors.Is(ambiguous("x"), errAmbiguous) {
		t.Error("ambiguous does not wrap errAmbiguous")
	}
}

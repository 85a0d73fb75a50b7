package analysis

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Traefik is Traefik v3's Gateway API provider (kubernetesgateway), as Traefik v3.7.10 and later
// name its metrics. The label service of a backend of an HTTPRoute is
//
//	<router>-svc-<backend namespace>-<backend name>-<backend index>@kubernetesgateway
//
// (pkg/provider/kubernetes/gateway/httproute.go, loadService), the backend's part as it is, its
// index its place in the rule's backendRefs; and <router>, the router of one match of rule
// <rule index> on one listener (kubernetes.go, makeRouterName), is
//
//	normalize("httproute-<route ns>-<route>-gw-<Gateway ns>-<Gateway>-ep-<entry point>-<rule index>")
//	  + "-" + hex(SHA-256(for each of route ns, route, Gateway ns, Gateway, entry point and rule
//	                      index: "<length>:<it>"; then the router's rule)[:10])
//
// normalize being Traefik's provider.Normalize (pkg/provider/configuration.go), the entry point
// the one whose address has the listener's port, and the rule Traefik's matcher for the route's
// hostnames that the listener's hostname lets through, and the match (httproute.go,
// buildMatchRule). The hash tells apart what the normalized text does not (route b-c in namespace
// a from route c in namespace a-b). The hook's route has one weighted rule of one path match, so
// one router per listener: rule 0, or rule 1 behind a canary's header route, whose rule 0 has a
// router per match (the path's matcher and its headers') and the canary's Service alone, backend
// 0. So Traefik tells the header route's requests from the weighted ones, and the canary's
// selector takes them or not (Route.CountHeaderRoute). The hook knows every part: the entry point
// from the listener's port and --analysis-entrypoints; so the selector is the exact names, one per
// listener and rule that can serve the route.
var Traefik = Gateway{
	Name:     "traefik",
	Requests: "traefik_service_requests_total",
	Code:     "code",
	Buckets:  "traefik_service_request_duration_seconds_bucket",
	Scale:    1000,
	Selector: traefikSelector,
}

// traefikSelector is the label matcher of the exact service names Traefik gives b's requests:
// service="name" for one, service=~"name|name" for more, each regexp-quoted.
func traefikSelector(b *Backend) (string, error) {
	names, err := traefikNames(b)
	if err != nil {
		return "", err
	}
	if len(names) == 1 {
		return "service=" + Quote(names[0]), nil
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return "service=~" + Quote(strings.Join(quoted, "|")), nil
}

// errAmbiguous is the cause of a selector that cannot be made exact: what the hook cannot know
// follows in parentheses.
var errAmbiguous = errors.New("the Gateway's series names cannot tell this route from others")

// ambiguous is errAmbiguous, saying why, for the measurement's Error.
func ambiguous(format string, args ...any) error {
	return fmt.Errorf("%w (%s): not measured", errAmbiguous, fmt.Sprintf(format, args...))
}

// traefikNames are the service names, sorted and each once, that Traefik gives b's backend on the
// listeners of b's route's Gateways that can serve it: those of protocol HTTP or HTTPS that its
// parentRef's sectionName and port select, whose hostname lets one of the route's through. It
// fails, with a sentence for the status, when the route does not send to the Service, when a
// Gateway was not sent along (its listeners are unknown), when a listener's port is no entry
// point's in b.EntryPoints, and when no listener can serve the route.
func traefikNames(b *Backend) ([]string, error) {
	r := b.Route
	if r == nil || len(r.Parents) == 0 {
		return nil, fmt.Errorf("the hook knows no HTTPRoute of %s: not measured", b.Name)
	}
	index := slices.Index(r.Backends, b.Service)
	if index < 0 {
		return nil, fmt.Errorf("HTTPRoute %s sends no request to Service %s: not measured", b.Name, b.Service)
	}
	if len(b.EntryPoints) == 0 {
		return nil, ambiguous("Traefik names them after its entry points, and the hook's --analysis-entrypoints names none")
	}
	var names []string
	for _, parent := range r.Parents {
		if !parent.Seen {
			return nil, ambiguous("the hook was not sent Gateway %s/%s, so which of its listeners serve the route is unknown", parent.Namespace, parent.Name)
		}
		for _, l := range parent.Listeners {
			if !serves(&parent, &l) {
				continue
			}
			hostnames, ok := traefikHostnames(l.Hostname, r.Hostnames)
			if !ok {
				continue
			}
			eps := b.EntryPoints.at(l.Port)
			if len(eps) == 0 {
				return nil, ambiguous("--analysis-entrypoints names no entry point on port %d, that of listener %s of Gateway %s/%s", l.Port, l.Name, parent.Namespace, parent.Name)
			}
			rule := traefikRule(hostnames, r.Path, r.PathType)
			for _, ep := range eps {
				router := traefikRouter(b.Namespace, b.Name, parent.Namespace, parent.Name, ep, r.weightedRule(), rule)
				names = append(names, router+"-svc-"+b.Namespace+"-"+b.Service+"-"+strconv.Itoa(index)+"@kubernetesgateway")
				if !r.CountHeaderRoute || index != len(r.Backends)-1 { // the canary's, the weighted rule's last
					continue
				}
				for _, m := range r.HeaderMatches {
					router := traefikRouter(b.Namespace, b.Name, parent.Namespace, parent.Name, ep, 0, rule+traefikHeaders(m))
					names = append(names, router+"-svc-"+b.Namespace+"-"+b.Service+"-0@kubernetesgateway")
				}
			}
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no listener of the Gateways of HTTPRoute %s can serve it: not measured", b.Name)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// serves reports whether an HTTPRoute attached by parent attaches to listener l: l is HTTP or
// HTTPS, and parent's sectionName and port, when set, are l's.
func serves(parent *RouteParent, l *Listener) bool {
	return (l.Protocol == "HTTP" || l.Protocol == "HTTPS") &&
		(parent.SectionName == "" || parent.SectionName == l.Name) &&
		(parent.Port == 0 || parent.Port == l.Port)
}

// traefikHostnames are the hostnames a route's router on a listener matches, as Traefik finds
// them: the route's, for a listener without a hostname; else, for each of the route's in order,
// the more specific of it and the listener's when one covers the other (equal, or a "*." wildcard
// whose suffix the other ends with). ok is false when none is left: the route is not served there.
func traefikHostnames(listener string, route []string) (hostnames []string, ok bool) {
	if listener == "" {
		return route, true
	}
	if len(route) == 0 {
		return []string{listener}, true
	}
	covers := func(wildcard, name string) bool {
		suffix, ok := strings.CutPrefix(wildcard, "*")
		return wildcard == name || ok && strings.HasPrefix(wildcard, "*.") && strings.HasSuffix(name, suffix)
	}
	for _, h := range route {
		switch {
		case covers(listener, h):
			hostnames = append(hostnames, h)
		case covers(h, listener):
			hostnames = append(hostnames, listener)
		}
	}
	return hostnames, len(hostnames) > 0
}

// traefikRule is the rule of Traefik's router for hostnames and the path match: a Host matcher
// per hostname (HostRegexp for a wildcard's), or'd in parentheses when there are several, and
// the path's matcher, joined with " && ". Strings are Go-quoted, as Traefik writes them.
func traefikRule(hostnames []string, path, pathType string) string {
	var hosts []string
	for _, h := range hostnames {
		if !strings.Contains(h, "*") {
			hosts = append(hosts, "Host("+strconv.Quote(h)+")")
			continue
		}
		re := strings.Replace(regexp.QuoteMeta(h), `\*\.`, `[a-z0-9-\.]+\.`, 1)
		hosts = append(hosts, "HostRegexp("+strconv.Quote("^"+re+"$")+")")
	}
	var pathRule string
	switch {
	case pathType == "Exact":
		pathRule = "Path(" + strconv.Quote(path) + ")"
	case pathType == "PathPrefix" && path != "/":
		p := strings.TrimSuffix(path, "/")
		pathRule = "(Path(" + strconv.Quote(p) + ") || PathPrefix(" + strconv.Quote(p+"/") + "))"
	default: // "/", and a type Traefik does not know
		pathRule = `PathPrefix("/")`
	}
	switch len(hosts) {
	case 0:
		return pathRule
	case 1:
		return hosts[0] + " && " + pathRule
	}
	return "(" + strings.Join(hosts, " || ") + ") && " + pathRule
}

// traefikHeaders is what a match's headers add to its router's rule, after the path's matcher:
// " && Header(name,value)" for each Exact one, " && HeaderRegexp(name,value)" for each
// RegularExpression one, in order, Go-quoted and with no space after the comma, as Traefik writes
// them (httproute.go, buildHeaderRules).
func traefikHeaders(headers []HeaderMatch) string {
	var b strings.Builder
	for _, h := range headers {
		matcher := "Header"
		if h.Regex {
			matcher = "HeaderRegexp"
		}
		b.WriteString(" && " + matcher + "(" + strconv.Quote(h.Name) + "," + strconv.Quote(h.Value) + ")")
	}
	return b.String()
}

// traefikRouter is the name of the router of rule index of route ns/name on a listener of
// Gateway gwNS/gw served on entry point ep, whose rule is rule: the normalized text of those
// names, and the first 10 bytes, in lower-case hex, of a SHA-256 of each name length-prefixed and
// the rule.
func traefikRouter(ns, name, gwNS, gw, ep string, index int, rule string) string {
	ruleIndex := strconv.Itoa(index)
	h := sha256.New()
	for _, part := range []string{ns, name, gwNS, gw, ep, ruleIndex} {
		h.Write([]byte(strconv.Itoa(len(part)) + ":" + part))
	}
	h.Write([]byte(rule))
	return normalize("httproute-"+ns+"-"+name+"-gw-"+gwNS+"-"+gw+"-ep-"+ep+"-"+ruleIndex) + "-" + hex.EncodeToString(h.Sum(nil)[:10])
}

// normalize is Traefik's provider.Normalize: every run of characters other than letters and
// digits becomes one '-', and none is left at either end.
func normalize(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsNumber(c) }), "-")
}

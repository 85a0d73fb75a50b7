package sync

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/api/v1/validation"
	"github.com/example/webapp-operator/internal/english"
)

// routeCondition reports, while spec.route is set, whether the Gateways the observed HTTPRoute
// attaches to, c (nil when none is observed), have accepted it (routeState), or why there is no HTTPRoute to report on: the
// CompositeController does not manage HTTPRoutes, or the route is not observed yet.
func routeCondition(req *Request, c *Child) statedCondition {
	p := &req.Parent
	if !req.Declares(RouteKind) {
		return statedCondition{webappv1.ConditionRouted, false, webappv1.ReasonGatewayAPINotEnabled,
			"spec.route asks for an HTTPRoute, but the CompositeController does not manage HTTPRoutes, so there is none: install the Gateway API CRDs (standard channel), then the metacontroller/" + GatewayAPIComponent + " component."}
	}
	if c == nil {
		return statedCondition{webappv1.ConditionRouted, false, webappv1.ReasonRouteMissing, fmt.Sprintf("Waiting for HTTPRoute %s to be created.", p.Name)}
	}
	st := routeState(p, c.Route)
	return statedCondition{webappv1.ConditionRouted, st.ok, st.reason, st.message}
}

// routeReport is what the Gateways say of an observed HTTPRoute.
type routeReport struct {
	ok              bool
	reason, message string
	// accepted are the parentRefs whose Gateways accepted the route, when ok.
	accepted []gatewayv1.ParentReference
}

// The condition types a Gateway reports on a route, in the order they are read.
var routeConditionTypes = []gatewayv1.RouteConditionType{gatewayv1.RouteConditionAccepted, gatewayv1.RouteConditionResolvedRefs}

// routeState reads the route's status.parents. Only the entries of the route's own parentRefs
// count, in the order of those: the route is routed when at least one has answered and each that
// has reports Accepted and ResolvedRefs True for the route's current generation. Otherwise the
// first condition that is not True gives the reason and message (quoted short); a condition
// missing or of an earlier generation is Pending, as is a route no Gateway has answered.
func routeState(p *Parent, r *ObservedRoute) routeReport {
	var answered []gatewayv1.RouteParentStatus
	for _, ref := range r.ParentRefs {
		for _, ps := range r.Parents {
			if sameParent(ps.ParentRef, ref, p.Namespace) {
				answered = append(answered, ps)
				break
			}
		}
	}
	if len(answered) == 0 {
		what := "the Gateway it attaches to"
		if len(r.ParentRefs) > 0 {
			what = "Gateway " + parentName(r.ParentRefs[0], p.Namespace)
		}
		return routeReport{reason: webappv1.ReasonRoutePending, message: fmt.Sprintf("HTTPRoute %s waits for %s to accept it.", p.Name, what)}
	}
	var accepted []gatewayv1.ParentReference
	var names []string
	for _, ps := range answered {
		gw := parentName(ps.ParentRef, p.Namespace)
		for _, t := range routeConditionTypes {
			c := findCondition(ps.Conditions, string(t))
			switch {
			case c == nil:
				return routeReport{reason: webappv1.ReasonRoutePending, message: fmt.Sprintf("Gateway %s has not reported %s for HTTPRoute %s yet.", gw, t, p.Name)}
			case c.ObservedGeneration < r.Generation:
				return routeReport{reason: webappv1.ReasonRoutePending, message: fmt.Sprintf("Gateway %s has not reported on generation %d of HTTPRoute %s yet.", gw, r.Generation, p.Name)}
			case c.Status != metav1.ConditionTrue:
				what := "does not accept"
				if t == gatewayv1.RouteConditionResolvedRefs {
					what = "cannot resolve the backend of"
				}
				msg := fmt.Sprintf("Gateway %s %s HTTPRoute %s", gw, what, p.Name)
				if c.Message != "" {
					msg += ": " + sentence(validation.Short(c.Message))
				} else {
					msg += "."
				}
				return routeReport{reason: cmp.Or(c.Reason, c.Type), message: msg}
			}
		}
		accepted = append(accepted, ps.ParentRef)
		names = append(names, gw)
	}
	return routeReport{ok: true, reason: webappv1.ReasonRouteAccepted, accepted: accepted,
		message: fmt.Sprintf("HTTPRoute %s is accepted by %s %s.", p.Name, english.Plural(len(names), "Gateway", "Gateways"), strings.Join(names, ", "))}
}

// routeSplit is what the observed route r sends to a canary of p: split is true when one of its
// backends is the Service <name>-canary, and stable and canaryWeight are the weights of
// <name>-stable and <name>-canary, 0 for one it does not name (a backend without a weight has
// the Gateway API's default, 1).
func routeSplit(p *Parent, r *ObservedRoute) (split bool, stable, canaryWeight int32) {
	for _, b := range r.Backends {
		w := int32(1)
		if b.Weight != nil {
			w = *b.Weight
		}
		switch b.Name {
		case p.Name + webappv1.CanarySuffix:
			split, canaryWeight = true, w
		case p.Name + webappv1.StableSuffix:
			stable = w
		}
	}
	return split, stable, canaryWeight
}

// findCondition returns the condition of type t, or nil.
func findCondition(conditions []metav1.Condition, t string) *metav1.Condition {
	for i := range conditions {
		if conditions[i].Type == t {
			return &conditions[i]
		}
	}
	return nil
}

// sameParent reports whether a Gateway's status entry is about ref: the same group, kind,
// namespace, name, sectionName and port, an omitted group, kind or namespace meaning the
// Gateway API's default (a Gateway in the route's namespace).
func sameParent(a, b gatewayv1.ParentReference, namespace string) bool {
	group := func(g *gatewayv1.Group) gatewayv1.Group {
		if g == nil {
			return gatewayv1.GroupName
		}
		return *g
	}
	kind := func(k *gatewayv1.Kind) gatewayv1.Kind {
		if k == nil {
			return "Gateway"
		}
		return *k
	}
	ns := func(n *gatewayv1.Namespace) string {
		if n == nil || *n == "" {
			return namespace
		}
		return string(*n)
	}
	section := func(s *gatewayv1.SectionName) gatewayv1.SectionName {
		if s == nil {
			return ""
		}
		return *s
	}
	port := func(p *gatewayv1.PortNumber) gatewayv1.PortNumber {
		if p == nil {
			return 0
		}
		return *p
	}
	return group(a.Group) == group(b.Group) && kind(a.Kind) == kind(b.Kind) && a.Name == b.Name &&
		ns(a.Namespace) == ns(b.Namespace) && section(a.SectionName) == section(b.SectionName) && port(a.Port) == port(b.Port)
}

// parentName names a parentRef for a message: "namespace/name", with "/section" when it names a
// listener. Names are quoted short: they come from the cluster.
func parentName(ref gatewayv1.ParentReference, namespace string) string {
	ns := namespace
	if ref.Namespace != nil && *ref.Namespace != "" {
		ns = string(*ref.Namespace)
	}
	s := validation.Short(ns + "/" + string(ref.Name))
	if ref.SectionName != nil && *ref.SectionName != "" {
		s += "/" + validation.Short(string(*ref.SectionName))
	}
	return s
}

// routeURL is where an observed HTTPRoute serves, once routed: <scheme>://<first hostname><path>,
// https when a listener that serves the route (of a Gateway that accepted it, sent along as a
// related object, whatever its namespace) is HTTPS, http otherwise, and the listener's port after
// the host when it is not the scheme's. It is "" while the route is not routed or has no
// hostname, and also when no listener that serves it can be seen (the Gateway was not sent: a
// CompositeController without the customize hook, say), rather than claim a scheme it cannot see.
func routeURL(p *Parent, r *ObservedRoute, gateways []RelatedGateway) string {
	st := routeState(p, r)
	if !st.ok || len(r.Hostnames) == 0 {
		return ""
	}
	host := string(r.Hostnames[0])
	var best *RelatedListener // the first HTTPS listener, or else the first HTTP one
	for _, ref := range st.accepted {
		for _, l := range servingListeners(ref, host, p.Namespace, gateways) {
			if best == nil || l.Protocol == gatewayv1.HTTPSProtocolType && best.Protocol != gatewayv1.HTTPSProtocolType {
				best = &l
			}
		}
	}
	if best == nil {
		return ""
	}
	scheme, port := strings.ToLower(string(best.Protocol)), best.Port
	if scheme == "https" && port != 443 || scheme == "http" && port != 80 {
		host += ":" + strconv.Itoa(int(port))
	}
	return scheme + "://" + host + cmp.Or(r.Path, "/")
}

// servingListeners returns the HTTP and HTTPS listeners of the related Gateway ref names (in
// namespace, the route's, when ref names none; none when it was not sent) that serve the route
// for host: those ref's sectionName and port select, whose hostname, if any, intersects host.
func servingListeners(ref gatewayv1.ParentReference, host, namespace string, gateways []RelatedGateway) []RelatedListener {
	if ref.Namespace != nil && *ref.Namespace != "" {
		namespace = string(*ref.Namespace)
	}
	var out []RelatedListener
	for _, g := range gateways {
		if g.Namespace != namespace || g.Name != string(ref.Name) {
			continue
		}
		for _, l := range g.Listeners {
			switch {
			case l.Protocol != gatewayv1.HTTPProtocolType && l.Protocol != gatewayv1.HTTPSProtocolType:
			case ref.SectionName != nil && *ref.SectionName != "" && *ref.SectionName != l.Name:
			case ref.Port != nil && *ref.Port != l.Port:
			case l.Hostname != nil && *l.Hostname != "" && !hostnamesIntersect(string(*l.Hostname), host):
			default:
				out = append(out, l)
			}
		}
	}
	return out
}

// hostnamesIntersect reports whether a listener's hostname and a route's match a request for
// some host, by the Gateway API's rules: equal, or a wildcard ("*.example.com", one label or
// more) on either side that covers the other.
func hostnamesIntersect(listener, route string) bool {
	covers := func(wildcard, name string) bool {
		suffix, ok := strings.CutPrefix(wildcard, "*")
		return ok && strings.HasSuffix(name, suffix) && len(name) > len(suffix)
	}
	return listener == route || covers(listener, route) || covers(route, listener)
}

package sync

import (
	"cmp"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// desiredRoute builds the HTTPRoute that attaches spec.route's hostnames, path and pathType to
// its parentRefs (Defaults.Apply has filled in the install's Gateway), sending them to the
// Service's ServicePort. Call it only when Route is set and the CompositeController manages
// HTTPRoutes (Request.Declares).
//
// It writes what the HTTPRoute schema would otherwise default (a parentRef's group and kind, a
// backendRef's group, kind and weight) explicitly: Metacontroller replaces a list whose items
// have no name, such as rules, with the answer's as it is, so an answer without the defaults
// would differ from the stored route on every sync and update it forever.
func desiredRoute(p *Parent, labels map[string]string) *gatewayv1.HTTPRoute {
	r := p.Spec.Route
	refs := make([]gatewayv1.ParentReference, len(r.ParentRefs))
	for i, ref := range r.ParentRefs {
		group, kind := gatewayv1.Group(gatewayv1.GroupName), gatewayv1.Kind("Gateway")
		refs[i] = gatewayv1.ParentReference{Group: &group, Kind: &kind, Name: gatewayv1.ObjectName(ref.Name), Namespace: ref.Namespace, SectionName: ref.SectionName, Port: ref.Port}
	}
	pathType, path := gatewayv1.PathMatchType(r.PathType), r.Path
	return &gatewayv1.HTTPRoute{
		TypeMeta:   RouteKind.TypeMeta(),
		ObjectMeta: childMeta(p, labels),
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: refs},
			Hostnames:       r.Hostnames,
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches:     []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: &pathType, Value: &path}}},
				BackendRefs: serviceBackends([]string{p.Name}, 1),
			}},
		},
	}
}

// serviceBackends are the backendRefs of the route's rule: to the ServicePort of each Service of
// names, with the weight of the same place in weights, their group and kind written out.
func serviceBackends(names []string, weights ...int32) []gatewayv1.HTTPBackendRef {
	group, kind, port := gatewayv1.Group(""), gatewayv1.Kind("Service"), gatewayv1.PortNumber(ServicePort)
	out := make([]gatewayv1.HTTPBackendRef, len(names))
	for i, name := range names {
		out[i] = gatewayv1.HTTPBackendRef{BackendRef: gatewayv1.BackendRef{
			BackendObjectReference: gatewayv1.BackendObjectReference{Group: &group, Kind: &kind, Name: gatewayv1.ObjectName(name), Port: &port},
			Weight:                 &weights[i],
		}}
	}
	return out
}

// RouteBackends are the Services of the route's one rule while a canary of WebApp name splits
// its traffic, in the order of its backendRefs: <name>-stable, then <name>-canary. A Gateway may
// number a backend's request metrics by its place (Traefik does).
func RouteBackends(name string) []string {
	return []string{name + webappv1.StableSuffix, name + webappv1.CanarySuffix}
}

// splitBackends are the route's backends while a canary splits the traffic (RouteBackends):
// stable to the Service <name>-stable, and canary to <name>-canary, each with its weight.
func splitBackends(p *Parent, stable, canaryWeight int32) []gatewayv1.HTTPBackendRef {
	return serviceBackends(RouteBackends(p.Name), stable, canaryWeight)
}

// headerRule is the route's rule for spec.rollout.canary.headerRoute, which goes before the
// weighted one while the canary serves: for each of the header route's matches, the route's path
// match and the match's headers, each header's type written out (the HTTPRoute schema's default,
// which the answer would otherwise differ from on every sync), to the Service <name>-canary
// alone, its weight written out. Call it only with a header route.
func headerRule(p *Parent) gatewayv1.HTTPRouteRule {
	r := p.Spec.Route
	plan := p.Spec.Rollout.Plan()
	matches := make([]gatewayv1.HTTPRouteMatch, len(plan.HeaderRoute.Matches))
	for i, m := range plan.HeaderRoute.Matches {
		pathType, path := gatewayv1.PathMatchType(r.PathType), r.Path
		headers := make([]gatewayv1.HTTPHeaderMatch, len(m.Headers))
		for j, h := range m.Headers {
			t := gatewayv1.HeaderMatchType(h.Type)
			headers[j] = gatewayv1.HTTPHeaderMatch{Type: &t, Name: gatewayv1.HTTPHeaderName(h.Name), Value: h.Value}
		}
		matches[i] = gatewayv1.HTTPRouteMatch{Path: &gatewayv1.HTTPPathMatch{Type: &pathType, Value: &path}, Headers: headers}
	}
	return gatewayv1.HTTPRouteRule{Matches: matches, BackendRefs: serviceBackends([]string{p.Name + webappv1.CanarySuffix}, 1)}
}

// headerRouted reports whether the observed route r sends the requests that match the spec's
// header route to the Service <name>-canary alone, as headerRule writes it now: a header route
// edited since is not in place until the route carries the edit. False without a header route.
func headerRouted(p *Parent, r *ObservedRoute) bool {
	h := r.HeaderRule
	plan := p.Spec.Rollout.Plan()
	if h == nil || plan == nil || plan.HeaderRoute == nil || p.Spec.Route == nil {
		return false
	}
	if len(h.Backends) != 1 || h.Backends[0].Name != p.Name+webappv1.CanarySuffix {
		return false
	}
	want := headerRule(p).Matches
	if len(h.Matches) != len(want) {
		return false
	}
	for i, m := range h.Matches {
		if m.Path != *want[i].Path.Value || len(m.Headers) != len(want[i].Headers) {
			return false
		}
		for j, got := range m.Headers {
			w := want[i].Headers[j]
			if got.Name != w.Name || got.Value != w.Value || cmp.Or(ptrValue(got.Type), gatewayv1.HeaderMatchExact) != *w.Type {
				return false
			}
		}
	}
	return true
}

// ptrValue is *p, or the zero value when p is nil.
func ptrValue[T any](p *T) T {
	var v T
	if p != nil {
		v = *p
	}
	return v
}

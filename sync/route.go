package sync

import (
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
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
	group, kind, port, weight := gatewayv1.Group(""), gatewayv1.Kind("Service"), gatewayv1.PortNumber(ServicePort), int32(1)
	return &gatewayv1.HTTPRoute{
		TypeMeta:   RouteKind.TypeMeta(),
		ObjectMeta: childMeta(p, labels),
		Spec: gatewayv1.HTTPRouteSpec{
			CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: refs},
			Hostnames:       r.Hostnames,
			Rules: []gatewayv1.HTTPRouteRule{{
				Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: &pathType, Value: &path}}},
				BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
					BackendObjectReference: gatewayv1.BackendObjectReference{Group: &group, Kind: &kind, Name: gatewayv1.ObjectName(p.Name), Port: &port},
					Weight:                 &weight,
				}}},
			}},
		},
	}
}

package webhook

import (
	"github.com/example/webapp-operator/analysis"
	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

// analysisRoute is what the Gateway's selector reads of the HTTPRoute of req's WebApp: the route
// as the hook writes it (desiredRoute, from the defaulted spec.route: hostnames, path, and
// parentRefs, their namespace defaulted to the WebApp's), its backends while a canary splits
// its traffic (sync.RouteBackends), the canary's header route, its rule before the weighted one,
// and whether the analysis counts its requests (spec.rollout.canary.headerRoute), and the
// listeners of each Gateway Metacontroller sent along. A WebApp without spec.route has the zero
// Route.
func analysisRoute(req *sync.Request) analysis.Route {
	p := &req.Parent
	r := p.Spec.Route
	if r == nil {
		return analysis.Route{}
	}
	out := analysis.Route{Path: r.Path, PathType: string(r.PathType), Backends: sync.RouteBackends(p.Name)}
	if plan := p.Spec.Rollout.Plan(); plan != nil && plan.HeaderRoute != nil {
		h := plan.HeaderRoute
		for _, m := range h.Matches {
			headers := make([]analysis.HeaderMatch, len(m.Headers))
			for i, hm := range m.Headers {
				headers[i] = analysis.HeaderMatch{Name: hm.Name, Value: hm.Value, Regex: hm.Type == webappv1.HeaderMatchRegularExpression}
			}
			out.HeaderMatches = append(out.HeaderMatches, headers)
		}
		out.CountHeaderRoute = h.Counted()
	}
	for _, h := range r.Hostnames {
		out.Hostnames = append(out.Hostnames, string(h))
	}
	for _, ref := range r.ParentRefs {
		parent := analysis.RouteParent{Namespace: p.Namespace, Name: ref.Name}
		if ref.Namespace != nil && *ref.Namespace != "" {
			parent.Namespace = string(*ref.Namespace)
		}
		if ref.SectionName != nil {
			parent.SectionName = string(*ref.SectionName)
		}
		if ref.Port != nil {
			parent.Port = *ref.Port
		}
		for _, g := range req.Related.Gateways {
			if g.Namespace != parent.Namespace || g.Name != parent.Name {
				continue
			}
			parent.Seen = true
			for _, l := range g.Listeners {
				listener := analysis.Listener{Name: string(l.Name), Port: int32(l.Port), Protocol: string(l.Protocol)}
				if l.Hostname != nil {
					listener.Hostname = string(*l.Hostname)
				}
				parent.Listeners = append(parent.Listeners, listener)
			}
		}
		out.Parents = append(out.Parents, parent)
	}
	return out
}

package sync

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CustomizeResponse is the answer to the customize hook: the related objects Metacontroller
// should watch and send with every sync and finalize of the WebApp. Its JSON form has only the
// field Metacontroller's strict decoding accepts.
type CustomizeResponse struct {
	// RelatedResources are the rules, each selecting objects of one kind. Never nil.
	RelatedResources []RelatedResourceRule `json:"relatedResources"`
}

// RelatedResourceRule selects related objects of one kind in one namespace, by a label selector or
// by names (Metacontroller refuses a rule with both).
type RelatedResourceRule struct {
	// APIVersion and Resource name the kind: "v1" and "pods", say (Kind.APIVersion, Kind.Resource).
	APIVersion string `json:"apiVersion"`
	Resource   string `json:"resource"`
	// Namespace is the namespace to look in, never empty: without it, Metacontroller would look
	// in every namespace. It is the WebApp's, but for the Gateways of another namespace that
	// spec.route names, which a v2 customize hook may relate.
	Namespace string `json:"namespace"`
	// LabelSelector selects by labels; nil for a rule by names.
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	// Names selects by name; empty for a rule by labels.
	Names []string `json:"names,omitempty"`
}

// CustomizeOptions are the choices of an install that shape the customize answer.
type CustomizeOptions struct {
	// Pods asks for the WebApp's pods, to tell why pods of the current spec cannot start (the
	// hook's --pod-diagnosis). Metacontroller then watches and caches every pod of the cluster,
	// and matches each pod event against every WebApp: docs/performance.md gives the cost.
	Pods bool
	// Secrets asks for the Secrets the spec references. Set it only when the hook is served over
	// TLS: Metacontroller sends every related Secret, data and all, with every sync and resync, so
	// over plain HTTP they would cross the network in cleartext. Without it, the status says which
	// Secrets are not tracked (webappv1.ConditionSecretsTracked).
	Secrets bool
	// Gateways asks for the Gateways a route attaches to, by namespace and name, to tell
	// status.url's scheme from their listeners. Set it only when the CompositeController manages HTTPRoutes (the
	// customize request Declares RouteKind, as with the metacontroller/gateway-api component):
	// the Gateway API is installed then, and a related rule naming a kind the cluster does not
	// serve would fail the WebApp's sync. Related objects cost Metacontroller for every event of
	// their kind, so they are asked for only for a WebApp with a route.
	Gateways bool
}

// Customize answers the customize hook for a WebApp. It depends only on the parent's name,
// namespace and spec, as Metacontroller requires (it caches the answer by the WebApp's uid and
// generation), and on opts, and asks for:
//   - with opts.Pods, its pods, by the instance and managed-by labels its pod template always
//     carries, in its namespace;
//   - by name, the ConfigMaps and (with opts.Secrets) the Secrets its spec references
//     (env[].valueFrom, envFrom, volumes), in its namespace: to roll the pods when their data
//     changes, and to notice a missing one;
//   - with opts.Gateways, by namespace and name, the Gateways of spec.route's parentRefs (after
//     the install's Defaults): one rule for those of its own namespace, first, then one for each
//     other namespace, in order. The CompositeController's customize hook is v2, for which
//     Metacontroller relates a namespaced parent to objects of any namespace that a rule names
//     (a v1 hook may name only the parent's own); a platform team's Gateway usually has a
//     namespace of its own.
//
// A spec that did not decode references nothing; the pods are still asked for with opts.Pods.
// RelatedResources is empty, never nil, when nothing is asked for: Metacontroller then watches
// nothing for the WebApp.
func Customize(p *Parent, opts CustomizeOptions) CustomizeResponse {
	rules := []RelatedResourceRule{}
	if opts.Pods {
		selector := &metav1.LabelSelector{MatchLabels: map[string]string{LabelInstance: p.Name, LabelManagedBy: ManagedBy}}
		rules = append(rules, RelatedResourceRule{APIVersion: PodKind.APIVersion, Resource: PodKind.Resource, Namespace: p.Namespace, LabelSelector: selector})
	}
	if len(p.SpecErrors) > 0 {
		return CustomizeResponse{RelatedResources: rules}
	}
	names := map[*Kind][]string{}
	for _, ref := range configRefs(p) {
		if !slices.Contains(names[ref.kind], ref.Name) {
			names[ref.kind] = append(names[ref.kind], ref.Name)
		}
	}
	for _, k := range []*Kind{ConfigMapKind, SecretKind} {
		if n := names[k]; len(n) > 0 && (k != SecretKind || opts.Secrets) {
			slices.Sort(n)
			rules = append(rules, RelatedResourceRule{APIVersion: k.APIVersion, Resource: k.Resource, Namespace: p.Namespace, Names: n})
		}
	}
	if r := p.Spec.Route; r != nil && opts.Gateways {
		gateways := map[string][]string{} // names by namespace
		for _, ref := range r.ParentRefs {
			ns := p.Namespace
			if ref.Namespace != nil && *ref.Namespace != "" {
				ns = string(*ref.Namespace)
			}
			if !slices.Contains(gateways[ns], ref.Name) {
				gateways[ns] = append(gateways[ns], ref.Name)
			}
		}
		namespaces := slices.Sorted(maps.Keys(gateways))
		if i := slices.Index(namespaces, p.Namespace); i > 0 {
			namespaces = append(append([]string{p.Namespace}, namespaces[:i]...), namespaces[i+1:]...)
		}
		for _, ns := range namespaces {
			names := gateways[ns]
			slices.Sort(names)
			rules = append(rules, RelatedResourceRule{APIVersion: GatewayKind.APIVersion, Resource: GatewayKind.Resource, Namespace: ns, Names: names})
		}
	}
	return CustomizeResponse{RelatedResources: rules}
}

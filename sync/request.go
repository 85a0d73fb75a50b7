package sync

import (
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// Request is one Metacontroller CompositeController hook request, reduced to what the decision
// reads. Build one with wire.DecodeRequest; tests may also fill in Parent directly.
type Request struct {
	// Parent is the observed WebApp.
	Parent Parent
	// Children are all observed children of every type, sorted by kind, apiVersion, namespace and
	// name. The keys Metacontroller files them under (v1: name, v2: namespace/name) are not kept.
	Children []Child
	// Related holds the objects the customize hook asked Metacontroller to send along.
	Related Related
	// ChildKinds are the child kinds the CompositeController manages, as "Kind.apiVersion": the
	// keys of the request's children, which Metacontroller sends for every kind of its
	// childResources even when it observes no object of that kind, or, for a request without
	// children (a customize request), the kinds the hook builds among the childResources of the
	// controller the request carries. Nil when the request shows neither; read it through
	// Declares.
	ChildKinds map[string]bool
	// Finalizing is true when Metacontroller calls because the WebApp is being deleted.
	Finalizing bool
	// Measurement is what the edge measured for the check of the canary's analysis that
	// canary.Due says is due now; nil when none was measured. It is not part of Metacontroller's
	// request: the edge fetches it (webhook), and tests give it.
	Measurement *canary.Measurement
	// Measuring is true when a check is due and the edge's measurement of it is still to come:
	// the check stays due, and the answer asks for another call shortly (canary.Input.Measuring).
	Measuring bool
}

// Parent is the observed WebApp, reduced to what the decision reads.
type Parent struct {
	// Name and Namespace are the WebApp's; wire.DecodeRequest requires both.
	Name      string
	Namespace string
	// Generation is metadata.generation, reported back as observedGeneration.
	Generation int64
	// Spec is the WebApp's spec as decoded, with webappv1.Default applied. It is meaningful only
	// when SpecErrors is empty.
	Spec webappv1.WebAppSpec
	// SpecErrors are set when parent.spec was absent or did not fit the WebApp types, for example
	// a string where a number belongs: one per member at fault, naming its path. Such a spec is
	// reported as Invalid, never as a bad request, so that the user sees the problem on the
	// WebApp and no child is touched.
	SpecErrors field.ErrorList
	// Conditions are the WebApp's previous status conditions, read only to keep lastTransitionTime:
	// wire.DecodeRequest fills in their type, status and lastTransitionTime only.
	Conditions []metav1.Condition
	// Canary is the WebApp's previous status.canary, the state its canary carries from one call
	// to the next; nil when there is none or it did not decode.
	Canary *webappv1.CanaryStatus
	// Promote and Abort are the values of its webappv1.AnnotationPromote and AnnotationAbort
	// annotations, "" when absent.
	Promote, Abort string
	// PromoteStep and Retry are the values of its webappv1.AnnotationPromoteStep and
	// AnnotationRetry annotations, "" when absent.
	PromoteStep, Retry string
}

// Child is one observed child object.
type Child struct {
	// APIVersion, Kind and Name identify the object; wire.DecodeRequest requires all three.
	APIVersion string
	Kind       string
	Name       string
	// Namespace is metadata.namespace; wire.DecodeRequest defaults it to the parent's, as Metacontroller does.
	Namespace string
	// Built is true for the kinds the hook builds (Kinds): Deployment, Service, Ingress,
	// PodDisruptionBudget, HorizontalPodAutoscaler and HTTPRoute. Only such a child, named after
	// the WebApp, or a canary's (the Deployment and Service <name>-canary, the Service
	// <name>-stable: owned), is ever rebuilt or let go by a sync; any other child is kept as it is.
	Built bool
	// Deployment, Ingress, Autoscaler and Route are what the decision reads of a child of that
	// kind (see the views below), decoded from the request; nil for a child of any other kind.
	Deployment *ObservedDeployment
	Ingress    *ObservedIngress
	Autoscaler *ObservedAutoscaler
	Route      *ObservedRoute
	// Raw is the object exactly as observed: the source of its apply form when it is kept
	// unchanged. It does not alias the request body.
	Raw json.RawMessage
}

// Declares reports whether the CompositeController manages children of kind k: always for a kind
// of the base install (Kind.Component ""), and for a component's kind only when the request
// declares it (ChildKinds), which is how the hook knows that the component is in use. A Request
// built without ChildKinds declares no component's kind.
func (r *Request) Declares(k *Kind) bool {
	return k.Component == "" || r.ChildKinds[k.Key()]
}

// is reports whether c is of a kind the hook builds, k.
func (c *Child) is(k *Kind) bool { return c.Built && c.Kind == k.Kind && c.APIVersion == k.APIVersion }

// observedChildren are the observed children as Sync and the status read them, sorted out in one
// pass over the request (observe): the child of each kind the hook builds for the WebApp, nil
// until it exists, and every child the hook does not build, which is kept as it is.
type observedChildren struct {
	deployment, service, ingress, autoscaler, route *Child
	// canary, canaryService and stableService are the canary's Deployment and Service,
	// <name>-canary, and the Service <name>-stable, nil until they exist.
	canary, canaryService, stableService *Child
	// others are the children that are not the hook's to build (not owned), in request order.
	others []*Child
}

// observe sorts out req's children in one pass: each child the hook builds for the WebApp
// (owned) by its kind, and the others. A built kind with no field here (the
// PodDisruptionBudget) is read by no decision: it is neither kept nor looked up.
func observe(req *Request) observedChildren {
	var o observedChildren
	for i := range req.Children {
		c := &req.Children[i]
		if !owned(c, &req.Parent) {
			o.others = append(o.others, c)
			continue
		}
		var slot **Child
		switch {
		case c.Name != req.Parent.Name: // a canary's child (owned)
			switch {
			case c.is(DeploymentKind):
				slot = &o.canary
			case c.is(ServiceKind) && c.Name == req.Parent.Name+webappv1.CanarySuffix:
				slot = &o.canaryService
			case c.is(ServiceKind):
				slot = &o.stableService
			}
		case c.is(DeploymentKind):
			slot = &o.deployment
		case c.is(ServiceKind):
			slot = &o.service
		case c.is(IngressKind):
			slot = &o.ingress
		case c.is(AutoscalerKind):
			slot = &o.autoscaler
		case c.is(RouteKind):
			slot = &o.route
		}
		if slot != nil && *slot == nil { // the first one, as children are sorted
			*slot = c
		}
	}
	return o
}

// deploymentView is the observed Deployment's view, nil until it exists.
func (o *observedChildren) deploymentView() *ObservedDeployment {
	if o.deployment == nil {
		return nil
	}
	return o.deployment.Deployment
}

// owned reports whether a child is one the hook builds for p: of a kind the hook builds, named
// after p, or the canary's Deployment or Service (<name>-canary) or the Service <name>-stable.
// Those are answered from the spec; every other child is kept as it is.
func owned(c *Child, p *Parent) bool {
	if !c.Built || c.Namespace != p.Namespace {
		return false
	}
	switch c.Name {
	case p.Name:
		return true
	case p.Name + webappv1.CanarySuffix:
		return c.is(DeploymentKind) || c.is(ServiceKind)
	case p.Name + webappv1.StableSuffix:
		return c.is(ServiceKind)
	}
	return false
}

// The decision reads a handful of fields of the children it builds. Observed children of those
// kinds are decoded into the views below, which hold exactly those fields, in the one pass that
// reads the request (sync/wire); every other member is passed over without being
// stored, and the child's full form stays in Child.Raw, the source of its kept form.
//
// A view holds only what some decision reads. To read another field, add it here; a field that
// is not here was never decoded.

// ObservedDeployment is what the decision reads of an observed Deployment.
type ObservedDeployment struct {
	// Generation is metadata.generation.
	Generation int64
	// SpecHash is its AnnotationSpecHash annotation, "" when it has none.
	SpecHash string
	// Replicas is spec.replicas; nil means the apiserver's default of 1.
	Replicas *int32
	// Selector is spec.selector, nil when absent.
	Selector *metav1.LabelSelector
	// ConfigHash is the pod template's webappv1.AnnotationConfigHash annotation, "" when it has none.
	ConfigHash string
	// PartialConfigHash is its own AnnotationPartialConfigHash annotation, "" when it has none.
	PartialConfigHash string
	// Revision is its AnnotationRevision annotation, which only a canary Deployment carries: the
	// revision of the template it runs. "" when it has none.
	Revision string
	// Aborted is its AnnotationAborted annotation, which only an aborted canary Deployment
	// carries: the revision that was aborted. "" when it has none.
	Aborted string
	// Promoting is its AnnotationPromoting annotation, which only the canary Deployment of a
	// canary being promoted carries: its revision. "" when it has none.
	Promoting string
	// Retries is its AnnotationRetries annotation, which only the canary Deployment of a canary
	// started again by the retry annotation carries. "" when it has none.
	Retries string
	// Attempt is its AnnotationAttempt annotation, which only the canary Deployment of a canary
	// of an attempt other than 0 carries. "" when it has none.
	Attempt string
	// Status is the Deployment controller's report.
	Status ObservedDeploymentStatus
}

// replicasOf is a Deployment's spec.replicas, 1 when omitted, as the apiserver defaults it.
func replicasOf(d *ObservedDeployment) int32 {
	if d.Replicas == nil {
		return 1
	}
	return *d.Replicas
}

// ObservedDeploymentStatus is what the decision reads of a Deployment's status: the fields of
// appsv1.DeploymentStatus it uses, with the same names.
type ObservedDeploymentStatus struct {
	ObservedGeneration  int64               `json:"observedGeneration"`
	Replicas            int32               `json:"replicas"`
	UpdatedReplicas     int32               `json:"updatedReplicas"`
	ReadyReplicas       int32               `json:"readyReplicas"`
	AvailableReplicas   int32               `json:"availableReplicas"`
	TerminatingReplicas *int32              `json:"terminatingReplicas"`
	Conditions          []ObservedCondition `json:"conditions"`
}

// ObservedCondition is what the decision reads of a condition of an observed child (a
// Deployment's or a HorizontalPodAutoscaler's); its times are not read.
type ObservedCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// ObservedIngress is what the decision reads of an observed Ingress: its rules and TLS hosts, for
// status.url, and its load-balancer addresses, for the IngressReady condition.
type ObservedIngress struct {
	// Rules are spec.rules.
	Rules []networkingv1.IngressRule
	// TLS is spec.tls.
	TLS []networkingv1.IngressTLS
	// LoadBalancer is status.loadBalancer.ingress, empty until a controller serves the Ingress.
	LoadBalancer []networkingv1.IngressLoadBalancerIngress
}

// ObservedAutoscaler is what the decision reads of an observed HorizontalPodAutoscaler's status.
type ObservedAutoscaler struct {
	// DesiredReplicas is status.desiredReplicas, 0 before the autoscaler has computed one.
	DesiredReplicas int32 `json:"desiredReplicas"`
	// Conditions are status.conditions.
	Conditions []ObservedCondition `json:"conditions"`
}

// ObservedRoute is what the decision reads of an observed HTTPRoute: its generation, the
// hostnames, path and parentRefs it was applied with, and the Gateways' reports in
// status.parents, for the Routed condition and status.url.
type ObservedRoute struct {
	// Generation is metadata.generation, which a Gateway's up-to-date report carries as its
	// conditions' observedGeneration.
	Generation int64
	// Hostnames are spec.hostnames.
	Hostnames []gatewayv1.Hostname
	// ParentRefs are spec.parentRefs: the Gateways whose reports count.
	ParentRefs []gatewayv1.ParentReference
	// Path is the path value of the first match of the first rule, "" when there is none.
	Path string
	// Backends are the backendRefs of its last rule, the weighted one: the only one the hook
	// writes, but while a canary's header route goes before it.
	Backends []RouteBackend
	// HeaderRule is the rule before the last, when the route has more than one: the one a
	// canary's header route makes (headerRule). Nil otherwise.
	HeaderRule *RouteRule
	// Parents are status.parents, one entry per Gateway (or listener) that has reported on the
	// route, each with its controller's conditions; empty until a Gateway controller answers.
	Parents []gatewayv1.RouteParentStatus
}

// RouteRule is what the decision reads of a route's rule other than its last.
type RouteRule struct {
	// Matches are its matches: each one's path value and headers.
	Matches []RouteMatch
	// Backends are its backendRefs.
	Backends []RouteBackend
}

// RouteMatch is what the decision reads of one match of a route's rule.
type RouteMatch struct {
	// Path is its path's value, "" when it has none.
	Path string
	// Headers are its header matches.
	Headers []gatewayv1.HTTPHeaderMatch
}

// RouteBackend is what the decision reads of one of a route's backendRefs.
type RouteBackend struct {
	// Name is the Service's name.
	Name string `json:"name"`
	// Weight is its weight; nil means the Gateway API's default, 1.
	Weight *int32 `json:"weight"`
}

// Related holds the related objects the decision reads: those the customize hook asked for, as
// Metacontroller sent them along with the request. Pods, ConfigMaps and Secrets outside the
// parent's namespace are left out; Gateways are kept whatever their namespace, as the customize
// hook asks for those of spec.route's parentRefs wherever they are.
type Related struct {
	// Kinds are the related kinds the request carried, as "Kind.apiVersion", even those with no
	// object. A kind that is not here was not asked for (Metacontroller runs no customize hook, or
	// an older one), which is not the same as no such object existing.
	Kinds map[string]bool
	// Pods are the WebApp's pods, sorted by name.
	Pods []RelatedPod
	// Config has one entry per ConfigMap or Secret sent: a digest of its data keyed with its uid
	// (configDigest). The data itself is never kept.
	Config map[ConfigRef]string
	// Gateways are the Gateways the route attaches to, of any namespace (a platform team's Gateway
	// is usually in a namespace of its own), sorted by namespace and name: what their listeners
	// serve tells status.url's scheme.
	Gateways []RelatedGateway
}

// RelatedGateway is what the decision reads of a Gateway: its namespace, its name and its
// listeners.
type RelatedGateway struct {
	// Namespace is its metadata.namespace.
	Namespace string
	// Name is its metadata.name.
	Name string
	// Listeners are spec.listeners, each reduced to what decides which routes it serves and how.
	Listeners []RelatedListener
}

// RelatedListener is what the decision reads of one listener of a Gateway: the fields of
// gatewayv1.Listener that say which routes it serves, and over which protocol.
type RelatedListener struct {
	Name     gatewayv1.SectionName  `json:"name"`
	Hostname *gatewayv1.Hostname    `json:"hostname"`
	Port     gatewayv1.PortNumber   `json:"port"`
	Protocol gatewayv1.ProtocolType `json:"protocol"`
}

// ConfigRef names a ConfigMap or Secret in the WebApp's namespace.
type ConfigRef struct {
	// Kind is ConfigMapKind.Kind or SecretKind.Kind: "ConfigMap" or "Secret".
	Kind string
	// Name is its metadata.name.
	Name string
}

// String returns "Kind/name".
func (r ConfigRef) String() string { return r.Kind + "/" + r.Name }

// MarshalText returns String, so that a map keyed by ConfigRef encodes as JSON.
func (r ConfigRef) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// RelatedPod is what the decision reads of one of the WebApp's pods: its metadata, the images of
// its containers, and its status. The rest of its spec is not decoded.
type RelatedPod struct {
	metav1.ObjectMeta
	// Images are the images of the pod's containers, by container name.
	Images map[string]string
	Status corev1.PodStatus
}

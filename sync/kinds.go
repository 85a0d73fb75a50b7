package sync

import (
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Kind is a kind of object the hook reads: one it builds as a WebApp's child, or one it asks
// Metacontroller to send along as related. Kinds is the table of them all; everything that names
// a kind (the builders, the customize answer, the offline render, the tests of the answers and of
// the CompositeController, and sync/wire's decoder, which keeps its own table of how to read each
// built kind) takes it from there. The table holds facts about kinds only, no code.
type Kind struct {
	// Object is a zero value of the kind's Go type, such as &appsv1.Deployment{}.
	Object runtime.Object
	// APIVersion and Kind name the kind as objects of it carry them: "apps/v1" and "Deployment".
	// Kind is the name of Object's Go type, APIVersion the group version of its package.
	APIVersion, Kind string
	// Resource is its plural resource name, as a CompositeController's childResources and a
	// customize answer's relatedResources name it: "deployments".
	Resource string
	// Built is true for a kind the hook builds as a child of a WebApp, false for a related kind.
	Built bool
	// Component is the kustomize component, under metacontroller/, that adds the kind to the
	// CompositeController ("gateway-api"), or "" for a kind of the base install. Such a kind
	// belongs to an API that a cluster may not serve: Metacontroller fails the whole
	// CompositeController when a child kind is not installed, and a WebApp's sync when a related
	// one is not, so the hook builds or relates it only when the request shows the component in
	// use (Request.Declares).
	Component string

	// key is Key's result.
	key string
}

// The kinds the hook reads. The built kinds are listed in the order the answer lists them.
var (
	DeploymentKind       = newKind(&appsv1.Deployment{}, appsv1.SchemeGroupVersion, "deployments", built)
	ServiceKind          = newKind(&corev1.Service{}, corev1.SchemeGroupVersion, "services", built)
	IngressKind          = newKind(&networkingv1.Ingress{}, networkingv1.SchemeGroupVersion, "ingresses", built)
	DisruptionBudgetKind = newKind(&policyv1.PodDisruptionBudget{}, policyv1.SchemeGroupVersion, "poddisruptionbudgets", built)
	AutoscalerKind       = newKind(&autoscalingv2.HorizontalPodAutoscaler{}, autoscalingv2.SchemeGroupVersion, "horizontalpodautoscalers", built)
	PodKind              = newKind(&corev1.Pod{}, corev1.SchemeGroupVersion, "pods", related)
	ConfigMapKind        = newKind(&corev1.ConfigMap{}, corev1.SchemeGroupVersion, "configmaps", related)
	SecretKind           = newKind(&corev1.Secret{}, corev1.SchemeGroupVersion, "secrets", related)
	RouteKind            = inComponent(GatewayAPIComponent, newKind(&gatewayv1.HTTPRoute{}, schema.GroupVersion(gatewayv1.GroupVersion), "httproutes", built))
	GatewayKind          = inComponent(GatewayAPIComponent, newKind(&gatewayv1.Gateway{}, schema.GroupVersion(gatewayv1.GroupVersion), "gateways", related))
)

// GatewayAPIComponent is the kustomize component, metacontroller/gateway-api, that adds
// HTTPRoutes to the CompositeController's children.
const GatewayAPIComponent = "gateway-api"

// Kinds lists every kind the hook reads: first the kinds it builds, in the order the answer and
// the CompositeController's childResources list them (a component's kinds after the base's, as
// the component appends them), then the related kinds.
var Kinds = []*Kind{DeploymentKind, ServiceKind, IngressKind, DisruptionBudgetKind, AutoscalerKind, RouteKind, PodKind, ConfigMapKind, SecretKind, GatewayKind}

// built and related say, to newKind, whether the hook builds a kind as a child or reads it as a
// related object.
const (
	built   = true
	related = false
)

// newKind makes a Kind of obj's Go type in group version gv.
func newKind(obj runtime.Object, gv schema.GroupVersion, resource string, isBuilt bool) *Kind {
	k := &Kind{
		Object:     obj,
		APIVersion: gv.String(),
		Kind:       reflect.TypeOf(obj).Elem().Name(),
		Resource:   resource,
		Built:      isBuilt,
	}
	k.key = k.Kind + "." + k.APIVersion
	return k
}

// inComponent marks k as added by the kustomize component named component.
func inComponent(component string, k *Kind) *Kind {
	k.Component = component
	return k
}

// Key returns "Kind.apiVersion", the key Metacontroller files objects of the kind under in a
// request's children and related objects: "Deployment.apps/v1", "Service.v1".
func (k *Kind) Key() string { return k.key }

// TypeMeta returns the apiVersion and kind an object of the kind carries.
func (k *Kind) TypeMeta() metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: k.APIVersion, Kind: k.Kind}
}

// KindByResource returns the kind of apiVersion and plural resource, as a CompositeController's
// childResources name it, or nil for a kind the hook does not read.
func KindByResource(apiVersion, resource string) *Kind {
	for _, k := range Kinds {
		if k.APIVersion == apiVersion && k.Resource == resource {
			return k
		}
	}
	return nil
}

// KindByKey returns the kind filed under key ("Kind.apiVersion"), or nil for a kind the hook
// does not read.
func KindByKey(key string) *Kind {
	for _, k := range Kinds {
		if k.key == key {
			return k
		}
	}
	return nil
}

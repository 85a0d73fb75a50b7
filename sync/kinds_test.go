package sync_test

import (
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/webapp-operator/sync"
)

// irregularPlurals are the plurals that meta.UnsafeGuessKindToResource guesses wrong: it makes
// "gatewaies" of Gateway, whose CRD (the Gateway API's standard channel) says gateways.
var irregularPlurals = map[string]string{"Gateway": "gateways"}

// TestKinds holds the table of kinds to the Kubernetes API: each kind's apiVersion and kind are
// what the API's own scheme registers for its Go type, its resource is that kind's plural, and
// its key is Metacontroller's "Kind.apiVersion". The built kinds come first, each once, a
// component's after the base's; only the Gateway API's kinds are in a component.
func TestKinds(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{appsv1.AddToScheme, corev1.AddToScheme, networkingv1.AddToScheme, policyv1.AddToScheme, autoscalingv2.AddToScheme, gatewayv1.Install} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	related, component := false, false
	for _, k := range sync.Kinds {
		t.Run(k.Key(), func(t *testing.T) {
			gvks, _, err := scheme.ObjectKinds(k.Object)
			if err != nil || len(gvks) != 1 {
				t.Fatalf("scheme kinds of %T = %v, %v; want one", k.Object, gvks, err)
			}
			if got := gvks[0]; got.GroupVersion().String() != k.APIVersion || got.Kind != k.Kind {
				t.Errorf("apiVersion, kind = %s, %s; the scheme registers %T as %s", k.APIVersion, k.Kind, k.Object, got)
			}
			want, _ := meta.UnsafeGuessKindToResource(gvks[0])
			if irregular, ok := irregularPlurals[k.Kind]; ok {
				want.Resource = irregular
			}
			if want.Resource != k.Resource {
				t.Errorf("resource = %q; want %q", k.Resource, want.Resource)
			}
			if want := k.Kind + "." + k.APIVersion; k.Key() != want {
				t.Errorf("key = %q; want %q", k.Key(), want)
			}
			if tm := k.TypeMeta(); tm.APIVersion != k.APIVersion || tm.Kind != k.Kind {
				t.Errorf("TypeMeta = %+v", tm)
			}
			if gatewayAPI := k.APIVersion == gatewayv1.GroupVersion.String(); gatewayAPI != (k.Component == sync.GatewayAPIComponent) {
				t.Errorf("component = %q; want %q exactly for the Gateway API's kinds", k.Component, sync.GatewayAPIComponent)
			}
			if reflect.TypeOf(k.Object).Kind() != reflect.Pointer {
				t.Errorf("Object is a %T; want a pointer", k.Object)
			}
		})
		if seen[k.Key()] {
			t.Errorf("%s is listed twice", k.Key())
		}
		seen[k.Key()] = true
		if k.Built && related {
			t.Errorf("built kind %s comes after a related kind", k.Key())
		}
		if k.Built && k.Component == "" && component {
			t.Errorf("built kind %s of the base comes after a component's", k.Key())
		}
		related = related || !k.Built
		component = component || k.Component != ""
	}
}

package sync_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
)

// withGatewayAPI are the child kinds a CompositeController with the metacontroller/gateway-api
// component declares: every kind the hook builds.
var withGatewayAPI = func() map[string]bool {
	kinds := map[string]bool{}
	for _, k := range sync.Kinds {
		if k.Built {
			kinds[k.Key()] = true
		}
	}
	return kinds
}()

// withoutGatewayAPI are the child kinds of the base CompositeController.
var withoutGatewayAPI = func() map[string]bool {
	kinds := map[string]bool{}
	for _, k := range sync.Kinds {
		if k.Built && k.Component == "" {
			kinds[k.Key()] = true
		}
	}
	return kinds
}()

// withRoute sets spec.route; Sync's callers apply the install's defaults first, which a test
// with parentRefs does not need.
func withRoute(r webappv1.Route) func(*sync.Parent) {
	return func(p *sync.Parent) { p.Spec.Route = &r }
}

// publicGateway is the parentRef of most route tests: Gateway public in the WebApp's namespace.
var publicGateway = []webappv1.RouteParentRef{{Name: "public"}}

// routeLabels are the labels of every child of the WebApp hello.
var routeLabels = map[string]string{sync.LabelName: sync.AppName, sync.LabelInstance: "hello", sync.LabelManagedBy: sync.ManagedBy}

// parentStatus is a Gateway controller's report on a route for the parentRef ref: its
// conditions of generation gen, each "Type=Status/Reason: message".
func parentStatus(ref gatewayv1.ParentReference, gen int64, conditions ...string) gatewayv1.RouteParentStatus {
	ps := gatewayv1.RouteParentStatus{ParentRef: ref, ControllerName: "example.net/gateway-controller"}
	for _, c := range conditions {
		head, message, _ := strings.Cut(c, ": ")
		typ, rest, _ := strings.Cut(head, "=")
		status, reason, _ := strings.Cut(rest, "/")
		ps.Conditions = append(ps.Conditions, metav1.Condition{Type: typ, Status: metav1.ConditionStatus(status), Reason: reason, Message: message, ObservedGeneration: gen, LastTransitionTime: earlier})
	}
	return ps
}

// gatewayRef is a parentRef as a Gateway controller writes it back: group and kind spelled out.
func gatewayRef(name string) gatewayv1.ParentReference {
	group, kind := gatewayv1.Group(gatewayv1.GroupName), gatewayv1.Kind("Gateway")
	return gatewayv1.ParentReference{Group: &group, Kind: &kind, Name: gatewayv1.ObjectName(name)}
}

// TestSyncRoute covers the HTTPRoute: its contents and defaults, added, changed and removed,
// beside an Ingress, and without the metacontroller/gateway-api component.
func TestSyncRoute(t *testing.T) {
	basic := webapp(withRoute(webappv1.Route{Hostnames: []gatewayv1.Hostname{"hello.example.com"}, ParentRefs: publicGateway}))
	ns, section := gatewayv1.Namespace("infra"), gatewayv1.SectionName("https")
	every := webapp(withRoute(webappv1.Route{
		Hostnames: []gatewayv1.Hostname{"hello.example.com", "*.hello.example.com"}, Path: "/api", PathType: webappv1.RoutePathExact,
		ParentRefs: []webappv1.RouteParentRef{{Name: "public", Namespace: &ns, SectionName: &section}, {Name: "internal", Port: ptr(int32(8443))}},
	}))
	desiredOf := func(p sync.Parent) *gatewayv1.HTTPRoute {
		return childOf[*gatewayv1.HTTPRoute](sync.Sync(&sync.Request{Parent: p, ChildKinds: withGatewayAPI}, now).Children)
	}
	route := func(hostnames []gatewayv1.Hostname, path string, pathType gatewayv1.PathMatchType, refs ...gatewayv1.ParentReference) *gatewayv1.HTTPRoute {
		group, kind, port, weight := gatewayv1.Group(""), gatewayv1.Kind("Service"), gatewayv1.PortNumber(80), int32(1)
		return &gatewayv1.HTTPRoute{
			TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute"},
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default", Labels: routeLabels},
			Spec: gatewayv1.HTTPRouteSpec{
				CommonRouteSpec: gatewayv1.CommonRouteSpec{ParentRefs: refs},
				Hostnames:       hostnames,
				Rules: []gatewayv1.HTTPRouteRule{{
					Matches: []gatewayv1.HTTPRouteMatch{{Path: &gatewayv1.HTTPPathMatch{Type: &pathType, Value: &path}}},
					BackendRefs: []gatewayv1.HTTPBackendRef{{BackendRef: gatewayv1.BackendRef{
						BackendObjectReference: gatewayv1.BackendObjectReference{Group: &group, Kind: &kind, Name: "hello", Port: &port}, Weight: &weight,
					}}},
				}},
			},
		}
	}
	t.Run("contents", func(t *testing.T) {
		equal(t, "HTTPRoute with the defaults", desiredOf(basic), route([]gatewayv1.Hostname{"hello.example.com"}, "/", gatewayv1.PathMatchPathPrefix, gatewayRef("public")))
		public, internal := gatewayRef("public"), gatewayRef("internal")
		public.Namespace, public.SectionName = &ns, &section
		internal.Port = ptr(gatewayv1.PortNumber(8443))
		equal(t, "HTTPRoute with every field", desiredOf(every), route([]gatewayv1.Hostname{"hello.example.com", "*.hello.example.com"}, "/api", gatewayv1.PathMatchExact, public, internal))
	})

	dep, svc := desired(t, webapp())
	running := []sync.Child{observe(t, dep, 1, depStatus(1, 3, 3, 3, 3)), observe(t, svc, 1, nil)}
	observedRoute := observe(t, desiredOf(basic), 1, nil)
	accepted := observe(t, desiredOf(basic), 1, gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: []gatewayv1.RouteParentStatus{
		parentStatus(gatewayRef("public"), 1, "Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs"),
	}}})
	changed := webapp(withRoute(webappv1.Route{Hostnames: []gatewayv1.Hostname{"www.example.com"}, ParentRefs: publicGateway}))
	both := webapp(withRoute(webappv1.Route{Hostnames: []gatewayv1.Hostname{"hello.example.com"}, ParentRefs: publicGateway}),
		func(p *sync.Parent) { p.Spec.Ingress = &webappv1.Ingress{Host: "old.example.com"} })
	ingress := observeIngress(t, both)
	tests := []struct {
		name          string
		parent        sync.Parent
		kinds         map[string]bool
		children      []sync.Child
		wantNames     []string
		wantHostname  string // of the HTTPRoute answered; "" for none
		wantURL       string
		wantCondition string // Routed as "status/reason"; "" for none
	}{
		{"added", basic, withGatewayAPI, running, []string{"Deployment/hello", "HTTPRoute/hello", "Service/hello"}, "hello.example.com", "http://hello.default.svc", "False/RouteMissing"},
		{"observed, no Gateway has answered", basic, withGatewayAPI, append(slices.Clone(running), observedRoute), []string{"Deployment/hello", "HTTPRoute/hello", "Service/hello"}, "hello.example.com", "http://hello.default.svc", "False/Pending"},
		{"accepted", basic, withGatewayAPI, append(slices.Clone(running), accepted), []string{"Deployment/hello", "HTTPRoute/hello", "Service/hello"}, "hello.example.com", "http://hello.example.com/", "True/Accepted"},
		{"hostname changed: the url stays the observed route's", changed, withGatewayAPI, append(slices.Clone(running), accepted), []string{"Deployment/hello", "HTTPRoute/hello", "Service/hello"}, "www.example.com", "http://hello.example.com/", "True/Accepted"},
		{"removed: the observed HTTPRoute is deleted", webapp(), withGatewayAPI, append(slices.Clone(running), accepted), []string{"Deployment/hello", "Service/hello"}, "", "http://hello.example.com/", ""},
		{"beside an Ingress: the accepted route's url wins", both, withGatewayAPI, append(slices.Clone(running), ingress, accepted), []string{"Deployment/hello", "HTTPRoute/hello", "Ingress/hello", "Service/hello"}, "hello.example.com", "http://hello.example.com/", "True/Accepted"},
		{"beside an Ingress, not yet accepted: the Ingress's url", both, withGatewayAPI, append(slices.Clone(running), ingress, observedRoute), []string{"Deployment/hello", "HTTPRoute/hello", "Ingress/hello", "Service/hello"}, "hello.example.com", "http://old.example.com/", "False/Pending"},
		{"without the component: no route, the rest as ever", basic, withoutGatewayAPI, running, []string{"Deployment/hello", "Service/hello"}, "", "http://hello.default.svc", "False/GatewayAPINotEnabled"},
		{"a request that declares no kind at all", basic, nil, running, []string{"Deployment/hello", "Service/hello"}, "", "http://hello.default.svc", "False/GatewayAPINotEnabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// With the component, the customize hook relates the Gateway: public, plain HTTP.
			req := &sync.Request{Parent: tt.parent, Children: tt.children, ChildKinds: tt.kinds, Related: sync.Related{Gateways: []sync.RelatedGateway{
				{Namespace: "default", Name: "public", Listeners: []sync.RelatedListener{{Name: "web", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}}}}}
			resp := checkedSync(t, req)
			if got := names(t, resp.Children); !slices.Equal(got, tt.wantNames) {
				t.Errorf("children = %v; want %v", got, tt.wantNames)
			}
			if got := childOf[*gatewayv1.HTTPRoute](resp.Children); (got == nil) != (tt.wantHostname == "") || got != nil && string(got.Spec.Hostnames[0]) != tt.wantHostname {
				t.Errorf("HTTPRoute = %+v; want hostname %q", got, tt.wantHostname)
			}
			st := resp.Status
			if st.URL != tt.wantURL {
				t.Errorf("url = %q; want %q", st.URL, tt.wantURL)
			}
			if got := conditionOf(st, webappv1.ConditionRouted); got != tt.wantCondition {
				t.Errorf("Routed = %q; want %q", got, tt.wantCondition)
			}
			if st.Phase != webappv1.PhaseReady {
				t.Errorf("phase = %q; want Ready: Ready does not wait for the route (%s)", st.Phase, st.Message)
			}
		})
	}

	t.Run("without the component every other child is what it is without a route", func(t *testing.T) {
		for _, kinds := range []map[string]bool{withoutGatewayAPI, withGatewayAPI} {
			without := sync.Sync(&sync.Request{Parent: webapp(), Children: running, ChildKinds: kinds}, now)
			with := sync.Sync(&sync.Request{Parent: basic, Children: running, ChildKinds: withoutGatewayAPI}, now)
			if got, want := asJSON(t, wire(t, with)), asJSON(t, wire(t, without)); got != want {
				t.Errorf("children with a route the CompositeController cannot make =\n%s\nwant those without a route\n%s", got, want)
			}
		}
		with := sync.Sync(&sync.Request{Parent: basic, Children: running, ChildKinds: withoutGatewayAPI}, now)
		for _, want := range []string{"All 3 replicas available and up to date.", "metacontroller/gateway-api component"} {
			if !strings.Contains(with.Status.Message, want) {
				t.Errorf("message %q; want it to say %q", with.Status.Message, want)
			}
		}
	})
}

// observeIngress returns the Ingress Sync asks for p, observed.
func observeIngress(t *testing.T, p sync.Parent) sync.Child {
	t.Helper()
	for _, c := range sync.Sync(&sync.Request{Parent: p}, now).Children {
		if c.GetObjectKind().GroupVersionKind().Kind == "Ingress" {
			return observe(t, c, 1, nil)
		}
	}
	t.Fatal("no Ingress")
	return sync.Child{}
}

// TestRouteStatus covers each case of status.parents, and of the Gateways' listeners, that the
// Routed condition and status.url read.
func TestRouteStatus(t *testing.T) {
	ns := gatewayv1.Namespace("infra")
	section := gatewayv1.SectionName("web")
	twoGateways := []webappv1.RouteParentRef{{Name: "public"}, {Name: "internal"}}
	elsewhere := []webappv1.RouteParentRef{{Name: "shared", Namespace: &ns}}
	listener := []webappv1.RouteParentRef{{Name: "public", SectionName: &section}}
	long := strings.Repeat("the listener refuses routes from this namespace ", 10)
	ok := []string{"Accepted=True/Accepted", "ResolvedRefs=True/ResolvedRefs"}
	shared := gatewayRef("shared")
	shared.Namespace = &ns
	webRef := gatewayRef("public")
	webRef.SectionName = &section
	hostname := func(h string) *gatewayv1.Hostname { v := gatewayv1.Hostname(h); return &v }
	https := sync.RelatedGateway{Namespace: "default", Name: "public", Listeners: []sync.RelatedListener{
		{Name: "web", Port: 80, Protocol: gatewayv1.HTTPProtocolType},
		{Name: "websecure", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: hostname("*.example.com")},
	}}
	tests := []struct {
		name        string
		refs        []webappv1.RouteParentRef
		generation  int64 // of the observed route
		parents     []gatewayv1.RouteParentStatus
		gateways    []sync.RelatedGateway // nil for plain: Gateways public and internal, each with one HTTP listener
		want        string // Routed as "status/reason"
		wantMessage string
		wantURL     string
	}{
		{"no Gateway has answered", publicGateway, 1, nil, nil, "False/Pending", "HTTPRoute hello waits for Gateway default/public to accept it.", "http://hello.default.svc"},
		{"accepted and resolved", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, ok...)}, nil,
			"True/Accepted", "HTTPRoute hello is accepted by Gateway default/public.", "http://hello.example.com/"},
		{"a report without group and kind is the same parent", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayv1.ParentReference{Name: "public"}, 1, ok...)}, nil,
			"True/Accepted", "HTTPRoute hello is accepted by Gateway default/public.", "http://hello.example.com/"},
		{"refused by the listeners", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, "Accepted=False/NotAllowedByListeners: No listener admits routes from namespace default", "ResolvedRefs=True/ResolvedRefs")}, nil,
			"False/NotAllowedByListeners", "Gateway default/public does not accept HTTPRoute hello: No listener admits routes from namespace default.", "http://hello.default.svc"},
		{"no listener for the hostname", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, "Accepted=False/NoMatchingListenerHostname: no matching hostname", "ResolvedRefs=True/ResolvedRefs")}, nil,
			"False/NoMatchingListenerHostname", "Gateway default/public does not accept HTTPRoute hello: no matching hostname.", "http://hello.default.svc"},
		{"the Service cannot be resolved", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, "Accepted=True/Accepted", "ResolvedRefs=False/BackendNotFound: Service \"hello\" not found")}, nil,
			"False/BackendNotFound", "Gateway default/public cannot resolve the backend of HTTPRoute hello: Service \"hello\" not found.", "http://hello.default.svc"},
		{"a refusal without a message or reason", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, "Accepted=False/")}, nil,
			"False/Accepted", "Gateway default/public does not accept HTTPRoute hello.", "http://hello.default.svc"},
		{"a long message is cut", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, "Accepted=False/NotAllowedByListeners: "+long)}, nil,
			"False/NotAllowedByListeners", "Gateway default/public does not accept HTTPRoute hello: " + long[:80] + "….", "http://hello.default.svc"},
		{"accepted, references not reported yet", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, "Accepted=True/Accepted")}, nil,
			"False/Pending", "Gateway default/public has not reported ResolvedRefs for HTTPRoute hello yet.", "http://hello.default.svc"},
		{"a report of an earlier generation", publicGateway, 2, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, ok...)}, nil,
			"False/Pending", "Gateway default/public has not reported on generation 2 of HTTPRoute hello yet.", "http://hello.default.svc"},
		{"only another route's parent has answered", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("other"), 1, ok...)}, nil,
			"False/Pending", "HTTPRoute hello waits for Gateway default/public to accept it.", "http://hello.default.svc"},
		{"two Gateways, the second refuses", twoGateways, 1, []gatewayv1.RouteParentStatus{
			parentStatus(gatewayRef("internal"), 1, "Accepted=False/NotAllowedByListeners: not here", "ResolvedRefs=True/ResolvedRefs"),
			parentStatus(gatewayRef("public"), 1, ok...),
		}, nil, "False/NotAllowedByListeners", "Gateway default/internal does not accept HTTPRoute hello: not here.", "http://hello.default.svc"},
		{"two Gateways, one has answered", twoGateways, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("internal"), 1, ok...)}, nil,
			"True/Accepted", "HTTPRoute hello is accepted by Gateway default/internal.", "http://hello.example.com/"},
		{"two Gateways, both accept", twoGateways, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("internal"), 1, ok...), parentStatus(gatewayRef("public"), 1, ok...)}, nil,
			"True/Accepted", "HTTPRoute hello is accepted by Gateways default/public, default/internal.", "http://hello.example.com/"},
		{"an HTTPS listener makes the url https", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, ok...)}, []sync.RelatedGateway{https},
			"True/Accepted", "HTTPRoute hello is accepted by Gateway default/public.", "https://hello.example.com/"},
		{"an HTTPS listener on another port", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, ok...)},
			[]sync.RelatedGateway{{Namespace: "default", Name: "public", Listeners: []sync.RelatedListener{{Name: "alt", Port: 8443, Protocol: gatewayv1.HTTPSProtocolType}}}},
			"True/Accepted", "HTTPRoute hello is accepted by Gateway default/public.", "https://hello.example.com:8443/"},
		{"an HTTP listener on another port", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, ok...)},
			[]sync.RelatedGateway{{Namespace: "default", Name: "public", Listeners: []sync.RelatedListener{{Name: "alt", Port: 8080, Protocol: gatewayv1.HTTPProtocolType}}}},
			"True/Accepted", "HTTPRoute hello is accepted by Gateway default/public.", "http://hello.example.com:8080/"},
		{"the sectionName picks the HTTP listener", listener, 1, []gatewayv1.RouteParentStatus{parentStatus(webRef, 1, ok...)}, []sync.RelatedGateway{https},
			"True/Accepted", "HTTPRoute hello is accepted by Gateway default/public/web.", "http://hello.example.com/"},
		{"an HTTPS listener for other hostnames does not count", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, ok...)},
			[]sync.RelatedGateway{{Namespace: "default", Name: "public", Listeners: []sync.RelatedListener{https.Listeners[0], {Name: "s", Port: 443, Protocol: gatewayv1.HTTPSProtocolType, Hostname: hostname("*.example.org")}}}},
			"True/Accepted", "HTTPRoute hello is accepted by Gateway default/public.", "http://hello.example.com/"},
		{"a TLS passthrough listener does not count", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, ok...)},
			[]sync.RelatedGateway{{Namespace: "default", Name: "public", Listeners: []sync.RelatedListener{https.Listeners[0], {Name: "tls", Port: 443, Protocol: gatewayv1.TLSProtocolType}}}},
			"True/Accepted", "HTTPRoute hello is accepted by Gateway default/public.", "http://hello.example.com/"},
		{"a Gateway in another namespace, related by its namespace: its HTTPS listener", elsewhere, 1, []gatewayv1.RouteParentStatus{parentStatus(shared, 1, ok...)}, []sync.RelatedGateway{{Namespace: "infra", Name: "shared", Listeners: https.Listeners}},
			"True/Accepted", "HTTPRoute hello is accepted by Gateway infra/shared.", "https://hello.example.com/"},
		{"a Gateway in another namespace with an HTTP listener", elsewhere, 1, []gatewayv1.RouteParentStatus{parentStatus(shared, 1, ok...)}, []sync.RelatedGateway{{Namespace: "infra", Name: "shared", Listeners: https.Listeners[:1]}},
			"True/Accepted", "HTTPRoute hello is accepted by Gateway infra/shared.", "http://hello.example.com/"},
		{"a Gateway of the same name in another namespace is not the one", elsewhere, 1, []gatewayv1.RouteParentStatus{parentStatus(shared, 1, ok...)}, []sync.RelatedGateway{{Namespace: "default", Name: "shared", Listeners: https.Listeners}},
			"True/Accepted", "HTTPRoute hello is accepted by Gateway infra/shared.", "http://hello.default.svc"},
		{"the Gateway was not sent: no url claimed from the route", publicGateway, 1, []gatewayv1.RouteParentStatus{parentStatus(gatewayRef("public"), 1, ok...)}, []sync.RelatedGateway{},
			"True/Accepted", "HTTPRoute hello is accepted by Gateway default/public.", "http://hello.default.svc"},
	}
	plain := []sync.RelatedGateway{
		{Namespace: "default", Name: "internal", Listeners: []sync.RelatedListener{{Name: "web", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
		{Namespace: "default", Name: "public", Listeners: []sync.RelatedListener{{Name: "web", Port: 80, Protocol: gatewayv1.HTTPProtocolType}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := webapp(withRoute(webappv1.Route{Hostnames: []gatewayv1.Hostname{"hello.example.com"}, ParentRefs: tt.refs}))
			dep, svc := desired(t, p)
			applied := childOf[*gatewayv1.HTTPRoute](sync.Sync(&sync.Request{Parent: p, ChildKinds: withGatewayAPI}, now).Children)
			route := observe(t, applied, tt.generation, gatewayv1.HTTPRouteStatus{RouteStatus: gatewayv1.RouteStatus{Parents: tt.parents}})
			gateways := tt.gateways
			if gateways == nil {
				gateways = plain
			}
			req := &sync.Request{Parent: p, ChildKinds: withGatewayAPI, Related: sync.Related{Gateways: gateways},
				Children: []sync.Child{observe(t, dep, 1, depStatus(1, 3, 3, 3, 3)), observe(t, svc, 1, nil), route}}
			resp := sync.Sync(req, now)
			if err := hooktest.CheckResponse(req, resp); err != nil {
				t.Fatal(err)
			}
			var routed *metav1.Condition
			for i := range resp.Status.Conditions {
				if c := &resp.Status.Conditions[i]; c.Type == webappv1.ConditionRouted {
					routed = c
				}
			}
			if routed == nil {
				t.Fatalf("no Routed condition in %+v", resp.Status.Conditions)
			}
			if got := string(routed.Status) + "/" + routed.Reason; got != tt.want || routed.Message != tt.wantMessage {
				t.Errorf("Routed = %s %q; want %s %q", got, routed.Message, tt.want, tt.wantMessage)
			}
			if resp.Status.URL != tt.wantURL {
				t.Errorf("url = %q; want %q", resp.Status.URL, tt.wantURL)
			}
			if !resp.Status.Ready {
				t.Errorf("ready = false (%s); want Ready whatever the Gateways say", resp.Status.Message)
			}
		})
	}
}

// TestSyncInvalidRoute checks every rule of spec.route: each makes the WebApp Invalid, with a
// message naming the field, and keeps every observed child, the HTTPRoute included, unchanged.
func TestSyncInvalidRoute(t *testing.T) {
	valid := webappv1.Route{Hostnames: []gatewayv1.Hostname{"hello.example.com"}, ParentRefs: publicGateway}
	resp := sync.Sync(&sync.Request{Parent: webapp(withRoute(valid)), ChildKinds: withGatewayAPI}, now)
	var observed []sync.Child
	for _, c := range resp.Children {
		observed = append(observed, observe(t, c, 1, nil))
	}
	if len(observed) != 3 {
		t.Fatalf("%d children to observe; want a Deployment, a Service and an HTTPRoute", len(observed))
	}
	refs := func(rs ...webappv1.RouteParentRef) func(*webappv1.Route) {
		return func(r *webappv1.Route) { r.ParentRefs = rs }
	}
	namespace := func(s string) *gatewayv1.Namespace { v := gatewayv1.Namespace(s); return &v }
	section := func(s string) *gatewayv1.SectionName { v := gatewayv1.SectionName(s); return &v }
	many := func(n int, f func(int) gatewayv1.Hostname) []gatewayv1.Hostname {
		out := make([]gatewayv1.Hostname, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	var tooManyRefs []webappv1.RouteParentRef
	for i := range 33 {
		tooManyRefs = append(tooManyRefs, webappv1.RouteParentRef{Name: fmt.Sprintf("g%d", i)})
	}
	tests := []struct {
		name        string
		mod         func(*webappv1.Route)
		noPort      bool
		wantMessage string
	}{
		{"no hostnames", func(r *webappv1.Route) { r.Hostnames = nil }, false, "spec.route.hostnames: Required value: at least one DNS name"},
		{"too many hostnames", func(r *webappv1.Route) {
			r.Hostnames = many(17, func(i int) gatewayv1.Hostname { return gatewayv1.Hostname(fmt.Sprintf("h%d.example.com", i)) })
		}, false, "spec.route.hostnames: Too many: 17: must have at most 16 items"},
		{"an empty hostname", func(r *webappv1.Route) { r.Hostnames = []gatewayv1.Hostname{""} }, false, "spec.route.hostnames[0]: Required value"},
		{"a hostname that is not a DNS name", func(r *webappv1.Route) { r.Hostnames = []gatewayv1.Hostname{"Hello_World"} }, false, `spec.route.hostnames[0]: Invalid value: "Hello_World": a lowercase RFC 1123 subdomain`},
		{"a wildcard inside", func(r *webappv1.Route) { r.Hostnames = []gatewayv1.Hostname{"a.*.example.com"} }, false, `spec.route.hostnames[0]: Invalid value: "a.*.example.com": a lowercase RFC 1123 subdomain`},
		{"a wildcard without a dot", func(r *webappv1.Route) { r.Hostnames = []gatewayv1.Hostname{"*example.com"} }, false, `spec.route.hostnames[0]: Invalid value: "*example.com": a wildcard DNS-1123 subdomain`},
		{"an IP address", func(r *webappv1.Route) { r.Hostnames = []gatewayv1.Hostname{"192.0.2.1"} }, false, `spec.route.hostnames[0]: Invalid value: "192.0.2.1": must be a DNS name, not an IP address`},
		{"a hostname twice", func(r *webappv1.Route) { r.Hostnames = []gatewayv1.Hostname{"a.example.com", "a.example.com"} }, false, `spec.route.hostnames[1]: Duplicate value: "a.example.com"`},
		{"a path not absolute", func(r *webappv1.Route) { r.Path = "api" }, false, `spec.route.path: Invalid value: "api": must start with /`},
		{"a path with a space", func(r *webappv1.Route) { r.Path = "/a b" }, false, `spec.route.path: Invalid value: "/a b": may hold only letters, digits`},
		{"a path with a fragment", func(r *webappv1.Route) { r.Path = "/a#b" }, false, `spec.route.path: Invalid value: "/a#b": may hold only letters, digits`},
		{"a path with //", func(r *webappv1.Route) { r.Path = "/a//b" }, false, `spec.route.path: Invalid value: "/a//b": must not contain //, /./ or /../`},
		{"a path with /../", func(r *webappv1.Route) { r.Path = "/a/../b" }, false, `spec.route.path: Invalid value: "/a/../b": must not contain //, /./ or /../`},
		{"a path ending in /.", func(r *webappv1.Route) { r.Path = "/a/." }, false, `spec.route.path: Invalid value: "/a/.": must not contain //, /./ or /../, nor end with /. or /..`},
		{"a path with an escaped slash", func(r *webappv1.Route) { r.Path = "/a%2Fb" }, false, `spec.route.path: Invalid value: "/a%2Fb": must not contain an escaped / (%2F)`},
		{"a bad escape", func(r *webappv1.Route) { r.Path = "/a%zz" }, false, `spec.route.path: Invalid value: "/a%zz": may hold only letters, digits`},
		{"a path too long", func(r *webappv1.Route) { r.Path = "/" + strings.Repeat("a", 1024) }, false, "spec.route.path: Too long: may not be more than 1024 bytes"},
		{"a pathType of the Gateway API that WebApp does not take", func(r *webappv1.Route) { r.PathType = "RegularExpression" }, false, `spec.route.pathType: Unsupported value: "RegularExpression": supported values: "PathPrefix", "Exact"`},
		{"no parentRefs and no --default-gateway", refs(), false, "spec.route.parentRefs: Required value: name the Gateway to attach to, or start the hook with --default-gateway namespace/name[/section]"},
		{"too many parentRefs", refs(tooManyRefs...), false, "spec.route.parentRefs: Too many: 33: must have at most 32 items"},
		{"a parentRef without a name", refs(webappv1.RouteParentRef{}), false, "spec.route.parentRefs[0].name: Required value: the Gateway's name"},
		{"a parentRef name that is not a DNS name", refs(webappv1.RouteParentRef{Name: "Public"}), false, `spec.route.parentRefs[0].name: Invalid value: "Public": a lowercase RFC 1123 subdomain`},
		{"a parentRef namespace that is not a DNS label", refs(webappv1.RouteParentRef{Name: "public", Namespace: namespace("in.fra")}), false, `spec.route.parentRefs[0].namespace: Invalid value: "in.fra": must not contain dots`},
		{"a parentRef sectionName that is not a DNS name", refs(webappv1.RouteParentRef{Name: "public", SectionName: section("Web")}), false, `spec.route.parentRefs[0].sectionName: Invalid value: "Web": a lowercase RFC 1123 subdomain`},
		{"a parentRef port out of range", refs(webappv1.RouteParentRef{Name: "public", Port: ptr(int32(0))}), false, "spec.route.parentRefs[0].port: Invalid value: 0: must be between 1 and 65535, inclusive"},
		{"the same Gateway twice, by listener", refs(webappv1.RouteParentRef{Name: "public", SectionName: section("a")}, webappv1.RouteParentRef{Name: "public", SectionName: section("b")}), false,
			`spec.route.parentRefs[1].name: Invalid value: "public": is also parentRefs[0]'s: Metacontroller merges parentRefs by name`},
		{"the same name in two namespaces", refs(webappv1.RouteParentRef{Name: "public"}, webappv1.RouteParentRef{Name: "public", Namespace: namespace("infra")}), false,
			`spec.route.parentRefs[1].name: Invalid value: "public": is also parentRefs[0]'s`},
		{"every parentRef with a port, the same one", refs(webappv1.RouteParentRef{Name: "a", Port: ptr(int32(443))}, webappv1.RouteParentRef{Name: "b", Port: ptr(int32(443))}), false,
			"spec.route.parentRefs[1].port: Invalid value: 443: is also parentRefs[0]'s: when every parentRef sets port, Metacontroller merges them by port"},
		{"route without a port", func(*webappv1.Route) {}, true, "spec.route: Invalid value: needs spec.port: the HTTPRoute routes to the Service that port makes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := valid
			r.Hostnames = slices.Clone(valid.Hostnames)
			tt.mod(&r)
			p := webapp(withRoute(r), func(p *sync.Parent) {
				if tt.noPort {
					p.Spec.Port = nil
				}
			})
			req := &sync.Request{Parent: p, Children: observed, ChildKinds: withGatewayAPI}
			invalidKeepsAll(t, req, tt.wantMessage)
		})
	}
	t.Run("valid limits", func(t *testing.T) {
		r := valid
		r.Hostnames = many(16, func(i int) gatewayv1.Hostname { return gatewayv1.Hostname(fmt.Sprintf("h%d.example.com", i)) })
		r.Hostnames[0] = "*.example.com"
		r.Path = "/" + strings.Repeat("a", 1023)
		r.ParentRefs = []webappv1.RouteParentRef{{Name: "a", Port: ptr(int32(80))}, {Name: "b", Port: ptr(int32(443))}, {Name: "c"}, {Name: "d", Port: ptr(int32(443))}}
		if errs := sync.Validate(ptr(webapp(withRoute(r)))); len(errs) > 0 {
			t.Errorf("Validate = %v; want none: 16 hostnames, a wildcard, 1024 bytes of path, one port shared while another ref has none", errs)
		}
	})
}

// TestDefaultGateway covers --default-gateway: its syntax, and what Defaults.Apply does with it.
func TestDefaultGateway(t *testing.T) {
	for _, tt := range []struct {
		in, want, wantErr string
	}{
		{"infra/public", `{"name":"public","namespace":"infra"}`, ""},
		{"infra/public/https", `{"name":"public","namespace":"infra","sectionName":"https"}`, ""},
		{"public", "", `"public" is not namespace/name or namespace/name/section`},
		{"", "", `"" is not namespace/name`},
		{"a/b/c/d", "", `"a/b/c/d" is not namespace/name`},
		{"/public", "", `namespace "": a lowercase RFC 1123 label`},
		{"infra/", "", `name "": a lowercase RFC 1123 subdomain`},
		{"infra/public/", "", `section "": a lowercase RFC 1123 subdomain`},
		{"Infra/public", "", `namespace "Infra": a lowercase RFC 1123 label`},
	} {
		t.Run(tt.in, func(t *testing.T) {
			ref, err := sync.ParseGateway(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("ParseGateway = %v, %v; want an error with %q", ref, err, tt.wantErr)
				}
				return
			}
			if b, _ := json.Marshal(ref); err != nil || string(b) != tt.want {
				t.Errorf("ParseGateway = %s, %v; want %s", b, err, tt.want)
			}
		})
	}

	gateway, err := sync.ParseGateway("infra/public/https")
	if err != nil {
		t.Fatal(err)
	}
	d := sync.Defaults{Gateway: gateway}
	own := []webappv1.RouteParentRef{{Name: "mine"}}
	for _, tt := range []struct {
		name   string
		parent sync.Parent
		want   string // spec.route.parentRefs as JSON after Apply; "" for no route at all
	}{
		{"a route without parentRefs gets the Gateway", webapp(withRoute(webappv1.Route{Hostnames: []gatewayv1.Hostname{"a.example.com"}})), `[{"name":"public","namespace":"infra","sectionName":"https"}]`},
		{"a route's own parentRefs stay", webapp(withRoute(webappv1.Route{Hostnames: []gatewayv1.Hostname{"a.example.com"}, ParentRefs: own})), `[{"name":"mine"}]`},
		{"no route, no parentRefs", webapp(), ""},
		{"a spec that did not decode is left alone", webappJSON(`{"image": "nginx", "route": {"hostnames": "a.example.com"}}`), "null"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.parent
			d.Apply(&p)
			got := ""
			if p.Spec.Route != nil {
				b, _ := json.Marshal(p.Spec.Route.ParentRefs)
				got = string(b)
			}
			if got != tt.want {
				t.Errorf("parentRefs = %s; want %s", got, tt.want)
			}
			if p.Spec.Route != nil && len(p.Spec.Route.ParentRefs) == 1 && p.Spec.Route.ParentRefs[0].Namespace == gateway.Namespace {
				t.Error("the applied parentRef aliases the install's default")
			}
		})
	}
	t.Run("without a default, a route without parentRefs is Invalid and says what to set", func(t *testing.T) {
		p := webapp(withRoute(webappv1.Route{Hostnames: []gatewayv1.Hostname{"a.example.com"}}))
		sync.Defaults{}.Apply(&p)
		resp := sync.Sync(&sync.Request{Parent: p, ChildKinds: withGatewayAPI}, now)
		if resp.Status.Phase != webappv1.PhaseInvalid || !strings.Contains(resp.Status.Message, "--default-gateway") || !strings.Contains(resp.Status.Message, "spec.route.parentRefs") {
			t.Errorf("phase %s, message %q; want Invalid, naming spec.route.parentRefs and --default-gateway", resp.Status.Phase, resp.Status.Message)
		}
	})
}

// TestCustomizeGateways checks that the customize answer relates the route's Gateways by
// namespace and name, its own namespace first, only when the CompositeController manages
// HTTPRoutes.
func TestCustomizeGateways(t *testing.T) {
	infra := gatewayv1.Namespace("infra")
	shop := gatewayv1.Namespace("shop")
	route := webapp(func(p *sync.Parent) {
		p.Namespace = "shop"
		p.Spec.Route = &webappv1.Route{Hostnames: []gatewayv1.Hostname{"a.example.com"}, ParentRefs: []webappv1.RouteParentRef{{Name: "public"}, {Name: "internal", Namespace: &shop}, {Name: "shared", Namespace: &infra}}}
	})
	elsewhere := webapp(func(p *sync.Parent) {
		p.Spec.Route = &webappv1.Route{Hostnames: []gatewayv1.Hostname{"a.example.com"}, ParentRefs: []webappv1.RouteParentRef{{Name: "shared", Namespace: &infra}}}
	})
	for _, tt := range []struct {
		name   string
		parent sync.Parent
		opts   sync.CustomizeOptions
		want   []string
	}{
		{"with the component: the Gateways of each namespace, by name", route, sync.CustomizeOptions{Gateways: true}, []string{"gateway.networking.k8s.io/v1 gateways shop [internal public]", "gateway.networking.k8s.io/v1 gateways infra [shared]"}},
		{"without the component: nothing, the kind may not be installed", route, sync.CustomizeOptions{}, nil},
		{"no route: nothing", webapp(), sync.CustomizeOptions{Gateways: true}, nil},
		{"only a Gateway in another namespace: that one", elsewhere, sync.CustomizeOptions{Gateways: true}, []string{"gateway.networking.k8s.io/v1 gateways infra [shared]"}},
		{"namespaces in order, the WebApp's first, each once", webapp(func(p *sync.Parent) {
			p.Namespace = "shop"
			a, z := gatewayv1.Namespace("a"), gatewayv1.Namespace("z")
			p.Spec.Route = &webappv1.Route{Hostnames: []gatewayv1.Hostname{"a.example.com"}, ParentRefs: []webappv1.RouteParentRef{
				{Name: "gw", Namespace: &z}, {Name: "gw", Namespace: &a}, {Name: "own"}, {Name: "gw", Namespace: &z, SectionName: ptr(gatewayv1.SectionName("https"))}}}
		}), sync.CustomizeOptions{Gateways: true}, []string{"gateway.networking.k8s.io/v1 gateways shop [own]", "gateway.networking.k8s.io/v1 gateways a [gw]", "gateway.networking.k8s.io/v1 gateways z [gw]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, r := range sync.Customize(&tt.parent, tt.opts).RelatedResources {
				got = append(got, fmt.Sprintf("%s %s %s %v", r.APIVersion, r.Resource, r.Namespace, r.Names))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("rules = %v; want %v", got, tt.want)
			}
		})
	}
}

// TestDecodeChildKinds checks Request.ChildKinds and Declares: the kinds of the request's
// children, even empty, and of the controller's childResources, which a customize request carries.
func TestDecodeChildKinds(t *testing.T) {
	parent := `"parent": {"metadata": {"name": "hello", "namespace": "default"}, "spec": {"image": "nginx"}}`
	controller := func(resources ...string) string {
		var rs []string
		for _, r := range resources {
			apiVersion, resource, _ := strings.Cut(r, " ")
			rs = append(rs, fmt.Sprintf(`{"apiVersion": %q, "resource": %q}`, apiVersion, resource))
		}
		return `"controller": {"kind": "CompositeController", "spec": {"childResources": [` + strings.Join(rs, ",") + `]}}`
	}
	for _, tt := range []struct {
		name        string
		body        string
		wantKinds   []string
		wantDeclare bool // Declares(RouteKind)
	}{
		{"a sync of the base", `{` + parent + `, "children": {"Deployment.apps/v1": {}, "Service.v1": {}}}`, []string{"Deployment.apps/v1", "Service.v1"}, false},
		{"a sync with the component, no route yet", `{` + parent + `, "children": {"Deployment.apps/v1": {}, "HTTPRoute.gateway.networking.k8s.io/v1": {}}}`, []string{"Deployment.apps/v1", "HTTPRoute.gateway.networking.k8s.io/v1"}, true},
		{"a customize of the base", `{` + controller("apps/v1 deployments", "v1 services") + `, ` + parent + `}`, []string{"Deployment.apps/v1", "Service.v1"}, false},
		{"a customize with the component", `{` + controller("apps/v1 deployments", "gateway.networking.k8s.io/v1 httproutes", "example.com/v1 others") + `, ` + parent + `}`, []string{"Deployment.apps/v1", "HTTPRoute.gateway.networking.k8s.io/v1"}, true},
		{"a controller that does not fit declares nothing", `{"controller": {"spec": {"childResources": "all"}}, ` + parent + `}`, nil, false},
		{"no children, no controller", `{` + parent + `}`, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := sync.DecodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for k := range req.ChildKinds {
				got = append(got, k)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.wantKinds) {
				t.Errorf("ChildKinds = %v; want %v", got, tt.wantKinds)
			}
			if got := req.Declares(sync.RouteKind); got != tt.wantDeclare {
				t.Errorf("Declares(HTTPRoute) = %v; want %v", got, tt.wantDeclare)
			}
			if !req.Declares(sync.DeploymentKind) {
				t.Error("Declares(Deployment) = false; want true, a kind of the base, always")
			}
		})
	}
}

// TestDecodeRouteViews checks what the decoder reads of an observed HTTPRoute and of a related
// Gateway.
func TestDecodeRouteViews(t *testing.T) {
	body := `{"parent": {"metadata": {"name": "hello", "namespace": "default"}, "spec": {"image": "nginx"}},
	  "children": {"HTTPRoute.gateway.networking.k8s.io/v1": {"default/hello": {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
	    "metadata": {"name": "hello", "namespace": "default", "generation": 3},
	    "spec": {"hostnames": ["a.example.com"], "parentRefs": [{"name": "public", "sectionName": "web"}], "rules": [{"matches": [{"path": {"type": "Exact", "value": "/api"}}]}]},
	    "status": {"parents": [{"parentRef": {"name": "public"}, "controllerName": "x/y", "conditions": [{"type": "Accepted", "status": "True", "reason": "Accepted", "message": "", "observedGeneration": 3, "lastTransitionTime": "2026-11-01T08:00:00Z"}]}]}}}},
	  "related": {"Gateway.gateway.networking.k8s.io/v1": {
	    "default/public": {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "public", "namespace": "default"},
	      "spec": {"gatewayClassName": "x", "listeners": [{"name": "web", "port": 443, "protocol": "HTTPS", "hostname": "*.example.com", "tls": {"mode": "Terminate"}}]}},
	    "other/public": {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "public", "namespace": "other"}, "spec": {"listeners": []}}}}}`
	req, err := sync.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Children) != 1 || req.Children[0].Route == nil {
		t.Fatalf("children = %+v; want the HTTPRoute, with its view", req.Children)
	}
	r := req.Children[0].Route
	if r.Generation != 3 || len(r.Hostnames) != 1 || r.Hostnames[0] != "a.example.com" || r.Path != "/api" ||
		len(r.ParentRefs) != 1 || r.ParentRefs[0].Name != "public" || *r.ParentRefs[0].SectionName != "web" ||
		len(r.Parents) != 1 || r.Parents[0].Conditions[0].ObservedGeneration != 3 {
		t.Errorf("route view = %+v", r)
	}
	gw := req.Related.Gateways
	if len(gw) != 2 || gw[0].Namespace != "default" || gw[0].Name != "public" || len(gw[0].Listeners) != 1 || gw[1].Namespace != "other" || gw[1].Name != "public" {
		t.Fatalf("gateways = %+v; want default/public, then other/public: Gateways of any namespace count", gw)
	}
	if l := gw[0].Listeners[0]; l.Name != "web" || l.Port != 443 || l.Protocol != gatewayv1.HTTPSProtocolType || l.Hostname == nil || *l.Hostname != "*.example.com" {
		t.Errorf("listener = %+v", l)
	}
}

// TestFinalizeWithRoute checks that the HTTPRoute goes first, with the Service, before the
// Deployment is scaled down.
func TestFinalizeWithRoute(t *testing.T) {
	p := webapp(withRoute(webappv1.Route{Hostnames: []gatewayv1.Hostname{"hello.example.com"}, ParentRefs: publicGateway}))
	var all []sync.Child
	var dep sync.Child
	for _, c := range sync.Sync(&sync.Request{Parent: p, ChildKinds: withGatewayAPI}, now).Children {
		if c.GetObjectKind().GroupVersionKind().Kind == "Deployment" {
			dep = observe(t, c, 1, depStatus(1, 3, 3, 3, 3))
			all = append(all, dep)
			continue
		}
		all = append(all, observe(t, c, 1, nil))
	}
	for _, tt := range []struct {
		name     string
		children []sync.Child
		want     []string
		message  string
	}{
		{"the HTTPRoute and the Service go first", all, []string{"Deployment/hello"}, "Deleting 2 children other than Deployments first so that traffic stops; 1 Deployment remains."},
		{"the HTTPRoute alone left: it goes first still", []sync.Child{dep, all[2]}, []string{"Deployment/hello"}, "Deleting 1 child other than Deployments first so that traffic stops; 1 Deployment remains."},
		{"then the Deployment is scaled to zero", []sync.Child{dep}, []string{"Deployment/hello"}, "Scaling 1 Deployment to zero; 3 pods left."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req := &sync.Request{Parent: p, Children: tt.children, Finalizing: true, ChildKinds: withGatewayAPI}
			resp := sync.Finalize(req, now)
			golden(t, resp)
			if err := hooktest.CheckResponse(req, resp); err != nil {
				t.Fatal(err)
			}
			if got := names(t, resp.Children); !slices.Equal(got, tt.want) || resp.Status.Message != tt.message {
				t.Errorf("children %v, message %q; want %v, %q", got, resp.Status.Message, tt.want, tt.message)
			}
		})
	}
}

// TestCheckAnswerRefusesUndeclaredKinds holds hooktest.CheckAnswer to the component rule: an
// answer with an HTTPRoute for a CompositeController that does not manage HTTPRoutes fails.
func TestCheckAnswerRefusesUndeclaredKinds(t *testing.T) {
	p := webapp(withRoute(webappv1.Route{Hostnames: []gatewayv1.Hostname{"hello.example.com"}, ParentRefs: publicGateway}))
	resp := sync.Sync(&sync.Request{Parent: p, ChildKinds: withGatewayAPI}, now)
	for _, tt := range []struct {
		kinds   map[string]bool
		wantErr bool
	}{{withGatewayAPI, false}, {withoutGatewayAPI, true}} {
		err := hooktest.CheckResponse(&sync.Request{Parent: p, ChildKinds: tt.kinds}, resp)
		if (err != nil) != tt.wantErr {
			t.Errorf("CheckResponse with kinds %v = %v; want an error: %v", tt.kinds, err, tt.wantErr)
		}
	}
}

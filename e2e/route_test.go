//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/sync/wire"
)

// gatewayObject is a Gateway of the platform team in ns: plain HTTP on 80 for any host, HTTPS on
// 443 for *.example.com, both admitting routes of its own namespace. No controller serves it in
// the suite: tests write the routes' status as one would (writeRouteStatus).
func gatewayObject(ns, name string) obj {
	same := obj{"namespaces": obj{"from": "Same"}}
	return obj{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
		"metadata": obj{"name": name, "namespace": ns},
		"spec": obj{"gatewayClassName": "example", "listeners": []any{
			obj{"name": "http", "port": 80, "protocol": "HTTP", "allowedRoutes": same},
			obj{"name": "https", "port": 443, "protocol": "HTTPS", "hostname": "*.example.com", "allowedRoutes": same,
				"tls": obj{"mode": "Terminate", "certificateRefs": []any{obj{"kind": "Secret", "name": "wildcard-example-com"}}}},
		}},
	}
}

// writeRouteStatus writes the HTTPRoute's status as a Gateway controller does, through its status
// subresource: for each of its parentRefs, Accepted and ResolvedRefs of its current generation,
// each given as "Status/Reason: message".
func writeRouteStatus(t *testing.T, ns, name, accepted, resolved string) {
	t.Helper()
	route := mustGet(t, "gateway.networking.k8s.io/v1", "HTTPRoute", ns, name)
	if _, err := client.updateStatus(route, obj{"parents": routeParents(route, accepted, resolved)}); err != nil {
		t.Fatalf("write the HTTPRoute's status: %v", err)
	}
}

// routeParents is the status.parents a Gateway controller writes for route: for each of its
// parentRefs, Accepted and ResolvedRefs of its current generation, as writeRouteStatus takes them.
func routeParents(route obj, accepted, resolved string) []any {
	generation := field(route, "metadata", "generation")
	condition := func(typ, s string) obj {
		head, message, _ := strings.Cut(s, ": ")
		status, reason, _ := strings.Cut(head, "/")
		return obj{"type": typ, "status": status, "reason": reason, "message": message, "observedGeneration": generation,
			"lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}
	}
	var parents []any
	refs, _ := field(route, "spec", "parentRefs").([]any)
	for _, ref := range refs {
		parents = append(parents, obj{"parentRef": ref, "controllerName": "gateway.example.net/e2e",
			"conditions": []any{condition("Accepted", accepted), condition("ResolvedRefs", resolved)}})
	}
	return parents
}

// routedCondition is the WebApp's Routed condition as "Status/Reason", and its message.
func routedCondition(st webappv1.WebAppStatus) (string, string) {
	for _, c := range st.Conditions {
		if c.Type == webappv1.ConditionRouted {
			return string(c.Status) + "/" + c.Reason, c.Message
		}
	}
	return "", ""
}

// TestRouteCRD checks spec.route in the real apiserver: its defaults, and that each rule the hook
// enforces is enforced by the CRD too, with a message naming the field. The hook's own
// validation of each spec must name the same field.
func TestRouteCRD(t *testing.T) {
	requireCluster(t)
	ns := client.namespace(t, "route-crd")
	route := func(r obj) obj { return obj{"image": "nginx", "port": 8080, "route": r} }
	ok := func(extra obj) obj {
		r := obj{"hostnames": []any{"a.example.com"}, "parentRefs": []any{obj{"name": "public"}}}
		for k, v := range extra {
			r[k] = v
		}
		return r
	}

	t.Run("defaults", func(t *testing.T) {
		got, err := client.create(webApp(ns, "defaults", route(ok(nil))))
		if err != nil {
			t.Fatal(err)
		}
		if p, pt := field(got, "spec", "route", "path"), field(got, "spec", "route", "pathType"); p != "/" || pt != "PathPrefix" {
			t.Errorf("path, pathType = %v, %v; want /, PathPrefix", p, pt)
		}
	})

	var seventeen []any
	for i := range 17 {
		seventeen = append(seventeen, fmt.Sprintf("h%d.example.com", i))
	}
	tests := []struct {
		name  string
		spec  obj
		field string   // the field both the CRD and the hook name
		want  []string // more substrings of the apiserver's message
	}{
		{"route without a port", obj{"image": "nginx", "route": ok(nil)}, "spec.route", []string{"route needs port"}},
		{"no hostnames", route(obj{"parentRefs": []any{obj{"name": "public"}}}), "spec.route.hostnames", []string{"Required value"}},
		{"an empty hostnames list", route(ok(obj{"hostnames": []any{}})), "spec.route.hostnames", []string{"at least 1 items"}},
		{"too many hostnames", route(ok(obj{"hostnames": seventeen})), "spec.route.hostnames", []string{"must have at most 16 items"}},
		{"a hostname that is not a DNS name", route(ok(obj{"hostnames": []any{"Hello_World"}})), "spec.route.hostnames[0]", []string{"should match"}},
		{"a wildcard inside", route(ok(obj{"hostnames": []any{"a.*.example.com"}})), "spec.route.hostnames[0]", []string{"should match"}},
		{"an IP address", route(ok(obj{"hostnames": []any{"192.0.2.1"}})), "spec.route.hostnames", []string{"not IP addresses"}},
		{"a hostname twice", route(ok(obj{"hostnames": []any{"a.example.com", "a.example.com"}})), "spec.route.hostnames[1]", []string{"Duplicate value"}},
		{"a path not absolute", route(ok(obj{"path": "api"})), "spec.route.path", []string{"should match"}},
		{"a path with //", route(ok(obj{"path": "/a//b"})), "spec.route.path", []string{"must not contain '//'"}},
		{"a path ending in /..", route(ok(obj{"path": "/a/.."})), "spec.route.path", []string{"nor end with '/.' or '/..'"}},
		{"a path with an escaped slash", route(ok(obj{"path": "/a%2fb"})), "spec.route.path", []string{"escaped '/'"}},
		{"a path with a space", route(ok(obj{"path": "/a b"})), "spec.route.path", []string{"should match"}},
		{"a pathType of regular expressions", route(ok(obj{"pathType": "RegularExpression"})), "spec.route.pathType", []string{"Unsupported value"}},
		{"no parentRef name", route(ok(obj{"parentRefs": []any{obj{"namespace": "infra"}}})), "spec.route.parentRefs[0].name", []string{"Required value"}},
		{"a parentRef name that is not a DNS name", route(ok(obj{"parentRefs": []any{obj{"name": "Public"}}})), "spec.route.parentRefs[0].name", []string{"should match"}},
		{"a parentRef namespace with a dot", route(ok(obj{"parentRefs": []any{obj{"name": "public", "namespace": "in.fra"}}})), "spec.route.parentRefs[0].namespace", []string{"should match"}},
		{"a parentRef sectionName in capitals", route(ok(obj{"parentRefs": []any{obj{"name": "public", "sectionName": "HTTPS"}}})), "spec.route.parentRefs[0].sectionName", []string{"should match"}},
		{"a parentRef port 0", route(ok(obj{"parentRefs": []any{obj{"name": "public", "port": 0}}})), "spec.route.parentRefs[0].port", []string{"greater than or equal to 1"}},
		{"the same Gateway twice", route(ok(obj{"parentRefs": []any{obj{"name": "public", "sectionName": "a"}, obj{"name": "public", "sectionName": "b"}}})),
			"spec.route.parentRefs", []string{"each name a Gateway of a different name"}},
		{"every parentRef with the same port", route(ok(obj{"parentRefs": []any{obj{"name": "a", "port": 443}, obj{"name": "b", "port": 443}}})),
			"spec.route.parentRefs", []string{"each set a different port"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.create(webApp(ns, fmt.Sprintf("invalid-%d", i), tt.spec))
			e, isAPI := err.(*apiError)
			if !isAPI || e.Code != http.StatusUnprocessableEntity {
				t.Fatalf("create = %v; want 422 Invalid", err)
			}
			for _, w := range append([]string{tt.field}, tt.want...) {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message = %q; want it to contain %q", e.Message, w)
				}
			}
			p := parentWithSpec(t, tt.spec)
			errs := sync.Validate(&p)
			found := false
			for _, fe := range errs {
				found = found || strings.HasPrefix(fe.Field, tt.field)
			}
			if !found {
				t.Errorf("the hook reports %v; want a problem of %s too", errs, tt.field)
			}
		})
	}
}

// parentWithSpec decodes spec as the hook decodes a WebApp's, defaults and all.
func parentWithSpec(t *testing.T, spec obj) sync.Parent {
	t.Helper()
	body, err := json.Marshal(obj{"parent": webApp("default", "hello", spec)})
	if err != nil {
		t.Fatal(err)
	}
	req, err := wire.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	return req.Parent
}

// TestRoute runs a routed WebApp through the stand-in Metacontroller (reconcile) against the real
// apiserver: the HTTPRoute is created, its status, written as a Gateway controller writes it, is
// read back into Routed and url, removing route deletes it, and a teardown deletes it first.
func TestRoute(t *testing.T) {
	requireCluster(t)
	ns := client.namespace(t, "route")
	if _, err := client.create(gatewayObject(ns, "public")); err != nil {
		t.Fatal(err)
	}
	spec := obj{"image": "nginx:1.27", "replicas": 1, "port": 8080,
		"route": obj{"hostnames": []any{"app.example.com"}, "path": "/shop", "parentRefs": []any{obj{"name": "public"}}}}
	if _, err := client.create(webApp(ns, "app", spec)); err != nil {
		t.Fatal(err)
	}
	first := reconcile(t, "/sync", ns, "app")
	if got, _ := routedCondition(first.Status); got != "False/RouteMissing" {
		t.Errorf("Routed after the first sync = %s; want False/RouteMissing", got)
	}
	route := mustGet(t, "gateway.networking.k8s.io/v1", "HTTPRoute", ns, "app")
	if h, b := field(route, "spec", "hostnames", 0), field(route, "spec", "rules", 0, "backendRefs", 0); h != "app.example.com" || field(b, "name") != "app" || field(b, "port") != float64(80) {
		t.Errorf("HTTPRoute hostname %v, backendRef %v; want app.example.com to the Service app on port 80", h, b)
	}

	for _, tt := range []struct {
		name               string
		accepted, resolved string // as writeRouteStatus takes them; "" writes no status
		want               string
		wantMessage        string
		wantURL            string
	}{
		{"no Gateway has answered", "", "", "False/Pending", "waits for Gateway " + ns + "/public", "http://app." + ns + ".svc"},
		{"accepted by an HTTPS listener", "True/Accepted: Route is accepted", "True/ResolvedRefs", "True/Accepted", "is accepted by Gateway " + ns + "/public", "https://app.example.com/shop"},
		{"refused by the listeners", "False/NotAllowedByListeners: No listener admits this route", "True/ResolvedRefs", "False/NotAllowedByListeners", "No listener admits this route.", "http://app." + ns + ".svc"},
		{"the Service not found", "True/Accepted", "False/BackendNotFound: Service app not found", "False/BackendNotFound", "cannot resolve the backend of HTTPRoute app: Service app not found.", "http://app." + ns + ".svc"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.accepted != "" {
				writeRouteStatus(t, ns, "app", tt.accepted, tt.resolved)
			}
			answer := reconcile(t, "/sync", ns, "app")
			got, message := routedCondition(answer.Status)
			if got != tt.want || !strings.Contains(message, tt.wantMessage) || answer.Status.URL != tt.wantURL {
				t.Errorf("Routed %s %q, url %q; want %s with %q, url %q", got, message, answer.Status.URL, tt.want, tt.wantMessage, tt.wantURL)
			}
			if st := webAppStatus(t, ns, "app"); st.URL != tt.wantURL {
				t.Errorf("stored url %q; want %q", st.URL, tt.wantURL)
			}
		})
	}

	t.Run("the finalize hook deletes the HTTPRoute with the Service, before the Deployment", func(t *testing.T) {
		answer := reconcile(t, "/finalize", ns, "app")
		if kinds := childrenOf(t, ns, "app"); strings.Join(kinds, ",") != "Deployment" {
			t.Errorf("children after the first finalize = %v; want the Deployment alone (answer %v)", kinds, answer.Children)
		}
	})

	t.Run("removing route deletes the HTTPRoute", func(t *testing.T) {
		if _, err := client.create(webApp(ns, "gone", spec)); err != nil {
			t.Fatal(err)
		}
		reconcile(t, "/sync", ns, "gone")
		if kinds := childrenOf(t, ns, "gone"); !strings.Contains(strings.Join(kinds, ","), "HTTPRoute") {
			t.Fatalf("children = %v; want an HTTPRoute", kinds)
		}
		patchSpec(t, ns, "gone", obj{"route": nil})
		answer := reconcile(t, "/sync", ns, "gone")
		if kinds := childrenOf(t, ns, "gone"); strings.Join(kinds, ",") != "Deployment,Service" {
			t.Errorf("children = %v; want the HTTPRoute deleted, the rest kept", kinds)
		}
		if got, _ := routedCondition(answer.Status); got != "" {
			t.Errorf("Routed = %s without route; want no such condition", got)
		}
	})
}

// TestMetacontrollerGatewayAPI runs the real Metacontroller with the metacontroller/gateway-api
// component: a WebApp is routed end to end, its HTTPRoute owned by it and never rewritten while
// idle, its Routed condition and url following what a Gateway controller writes, and its
// teardown deleting the HTTPRoute before the Deployment. Metacontroller runs with the
// least-privilege ClusterRole of docs/security.md and the component's rules shown there, and is
// refused nothing.
func TestMetacontrollerGatewayAPI(t *testing.T) {
	requireCluster(t)
	requireMetacontroller(t)
	role := leastPrivilegeRole(t)
	role["metadata"] = obj{"name": "metacontroller-webapp-gateway-api"}
	role["rules"] = append(role["rules"].([]any), gatewayAPIRules(t)...)
	if _, err := client.apply(role, "webapp-e2e", false); err != nil {
		t.Fatal(err)
	}
	crb := obj{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": obj{"name": "metacontroller-e2e-gateway-api"},
		"roleRef":  obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "metacontroller-webapp-gateway-api"},
		"subjects": []any{obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "metacontroller-e2e"}},
	}
	if _, err := client.apply(crb, "webapp-e2e", false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.do("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/metacontroller-e2e-gateway-api", "", nil)
		client.do("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/metacontroller-webapp-gateway-api", "", nil)
	})
	waitFor(t, "the ClusterRole in RBAC's cache", 30*time.Second, func() (bool, error) {
		return allowed("metacontroller-e2e", "watch", "gateway.networking.k8s.io", "httproutes", "", "")
	})
	in := renderInstall(t, "e2e/testdata/gateway-api")
	hook := startHook(t, in)
	cc := in.compositeController(t, hook.url())
	cc["spec"].(map[string]any)["resyncPeriodSeconds"] = 5
	mc := startMetacontrollerAs(t, cc, "metacontroller-e2e")
	t.Cleanup(func() {
		if refused := rbacRefusals(tailFile(mc.log, 1<<20), "metacontroller-e2e"); refused != "" {
			t.Errorf("Metacontroller was refused rights that docs/security.md's rules lack:\n%s", refused)
		}
	})
	ns := client.namespace(t, "gateway")
	if _, err := client.create(gatewayObject(ns, "public")); err != nil {
		t.Fatal(err)
	}
	spec := obj{"image": "nginx:1.27", "replicas": 2, "port": 8080,
		"route": obj{"hostnames": []any{"shop.example.com"}, "parentRefs": []any{obj{"name": "public"}}}}
	if _, err := client.create(webApp(ns, "shop", spec)); err != nil {
		t.Fatal(err)
	}

	t.Run("Ready, and the HTTPRoute waits for its Gateway", func(t *testing.T) {
		st := waitStatus(t, ns, "shop", "Ready with a pending route", 90*time.Second, func(st webappv1.WebAppStatus) bool {
			got, _ := routedCondition(st)
			return st.Phase == webappv1.PhaseReady && got == "False/Pending"
		})
		if st.URL != "http://shop."+ns+".svc" {
			t.Errorf("url = %q; want the Service's address until the route is accepted", st.URL)
		}
		route := mustGet(t, "gateway.networking.k8s.io/v1", "HTTPRoute", ns, "shop")
		if owner := field(route, "metadata", "ownerReferences", 0, "kind"); owner != "WebApp" {
			t.Errorf("HTTPRoute owner = %v; want the WebApp", owner)
		}
	})

	t.Run("accepted: Routed, and an https url", func(t *testing.T) {
		writeRouteStatus(t, ns, "shop", "True/Accepted: Route is accepted", "True/ResolvedRefs")
		st := waitStatus(t, ns, "shop", "Routed", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			got, _ := routedCondition(st)
			return got == "True/Accepted"
		})
		if st.URL != "https://shop.example.com/" || st.Phase != webappv1.PhaseReady {
			t.Errorf("url %q, phase %s; want https://shop.example.com/ and Ready", st.URL, st.Phase)
		}
		if row := getWebApp(t, ns, "shop", false); row["URL"] != "https://shop.example.com/" {
			t.Errorf("kubectl get webapps = %v; want URL https://shop.example.com/", row)
		}
	})

	t.Run("idle: no child rewritten, the HTTPRoute included", func(t *testing.T) {
		before := versions(t, ns, "shop")
		if _, ok := before["HTTPRoute"]; !ok {
			t.Fatalf("children %v; want an HTTPRoute", before)
		}
		// Not even a no-op update, which would leave resourceVersions as they are: the answer's
		// route must equal the stored one, server defaults included, after Metacontroller's merge.
		// Metacontroller counts its writes for every WebApp of the cluster, so first let those of
		// earlier tests (their namespaces being deleted) settle: a window of 6 s without a write.
		mc.waitQuiet(t)
		before = versions(t, ns, "shop")
		writes := mc.writes()
		time.Sleep(12 * time.Second) // two resyncs or more
		if after := versions(t, ns, "shop"); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("children's resourceVersions %v -> %v while idle; want no rewrite", before, after)
		}
		if n := mc.writes() - writes; n != 0 {
			t.Errorf("Metacontroller sent %v writes while idle; want none", n)
		}
	})

	t.Run("refused: Routed False with the Gateway's reason, still Ready", func(t *testing.T) {
		writeRouteStatus(t, ns, "shop", "False/NotAllowedByListeners: No listener admits this route", "True/ResolvedRefs")
		st := waitStatus(t, ns, "shop", "NotAllowedByListeners", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			got, _ := routedCondition(st)
			return got == "False/NotAllowedByListeners"
		})
		if st.Phase != webappv1.PhaseReady || st.URL != "http://shop."+ns+".svc" {
			t.Errorf("phase %s, url %q; want Ready at the Service's address", st.Phase, st.URL)
		}
	})

	t.Run("a Gateway in another namespace: the url's scheme from the listener the route attaches to", func(t *testing.T) {
		// The usual layout: the platform team's Gateway in a namespace of its own, which admits
		// routes from every namespace. The customize hook (v2) relates it by namespace and name.
		infra := client.namespace(t, "infra")
		gw := gatewayObject(infra, "edge")
		for _, l := range field(gw, "spec", "listeners").([]any) {
			l.(obj)["allowedRoutes"] = obj{"namespaces": obj{"from": "All"}}
		}
		if _, err := client.create(gw); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct{ name, section, want string }{
			{"edge-https", "https", "https://edge-https.example.com/"},
			{"edge-http", "http", "http://edge-http.example.com/"},
		} {
			t.Run(tt.section, func(t *testing.T) {
				spec := obj{"image": "nginx:1.27", "port": 8080, "route": obj{"hostnames": []any{tt.name + ".example.com"},
					"parentRefs": []any{obj{"name": "edge", "namespace": infra, "sectionName": tt.section}}}}
				if _, err := client.create(webApp(ns, tt.name, spec)); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the HTTPRoute "+tt.name, 60*time.Second, func() (bool, error) {
					r, err := client.get("gateway.networking.k8s.io/v1", "HTTPRoute", ns, tt.name)
					return r != nil, err
				})
				writeRouteStatus(t, ns, tt.name, "True/Accepted: Route is accepted", "True/ResolvedRefs")
				st := waitStatus(t, ns, tt.name, "Routed", 60*time.Second, func(st webappv1.WebAppStatus) bool {
					got, _ := routedCondition(st)
					return got == "True/Accepted"
				})
				if st.URL != tt.want {
					t.Errorf("url %q; want %q, from listener %s of Gateway %s/edge", st.URL, tt.want, tt.section, infra)
				}
				if row := getWebApp(t, ns, tt.name, false); row["URL"] != tt.want {
					t.Errorf("kubectl get webapps = %v; want URL %s", row, tt.want)
				}
			})
		}
		// The Gateway's listener changes, in its own namespace: the WebApp follows.
		gwPath, _ := client.path("gateway.networking.k8s.io/v1", "Gateway", infra, "edge")
		live := mustGet(t, "gateway.networking.k8s.io/v1", "Gateway", infra, "edge")
		listeners := field(live, "spec", "listeners").([]any)
		listeners[1].(map[string]any)["port"] = 8443
		if _, err := client.do("PATCH", gwPath, "application/merge-patch+json", obj{"spec": obj{"listeners": listeners}}); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, ns, "edge-https", "the url on the listener's new port", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.URL == "https://edge-https.example.com:8443/"
		})
		for _, name := range []string{"edge-https", "edge-http"} {
			p, _ := client.path("example.com/v1", "WebApp", ns, name)
			client.do("DELETE", p, "", nil)
		}
	})

	t.Run("ordered delete: the HTTPRoute goes before the Deployment", func(t *testing.T) {
		stopRoute := client.record(t, "gateway.networking.k8s.io/v1", "HTTPRoute", ns, "shop")
		stopDeployment := client.record(t, "apps/v1", "Deployment", ns, "shop")
		p, _ := client.path("example.com/v1", "WebApp", ns, "shop")
		if _, err := client.do("DELETE", p, "", nil); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the WebApp and its children gone", 90*time.Second, func() (bool, error) {
			wa, err := client.get("example.com/v1", "WebApp", ns, "shop")
			return wa == nil && len(childrenOf(t, ns, "shop")) == 0, err
		})
		deletedAt := func(events []watchEvent) time.Time {
			for _, e := range events {
				if e.Type == "DELETED" {
					return e.At
				}
			}
			return time.Time{}
		}
		route, dep := deletedAt(stopRoute()), deletedAt(stopDeployment())
		if route.IsZero() || dep.IsZero() || !route.Before(dep) {
			t.Errorf("HTTPRoute deleted at %s, Deployment at %s; want the HTTPRoute first", route.Format(time.StampMilli), dep.Format(time.StampMilli))
		}
	})
}

// gatewayAPIRules are the rules docs/security.md adds to Metacontroller's least-privilege
// ClusterRole for the metacontroller/gateway-api component: the YAML block that is a list of
// rules naming httproutes.
func gatewayAPIRules(t *testing.T) []any {
	t.Helper()
	b, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		var rules []any
		if yaml.Unmarshal([]byte(block[1]), &rules) == nil && strings.Contains(block[1], "httproutes") {
			return rules
		}
	}
	t.Fatal("docs/security.md shows no rules for httproutes")
	return nil
}

package validation

import (
	"fmt"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// dnsName returns a DNS subdomain of exactly n characters: labels of at most 63 "a"s joined by
// dots, so that only its length can make it invalid.
func dnsName(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		label := min(validation.DNS1123LabelMaxLength, n-b.Len())
		b.WriteString(strings.Repeat("a", label))
	}
	return b.String()
}

func TestValidateIngress(t *testing.T) {
	host := func(h string) *webappv1.Ingress { return &webappv1.Ingress{Host: h} }
	pathType := func(t networkingv1.PathType) *webappv1.Ingress {
		return &webappv1.Ingress{Host: "a.example.com", PathType: &t}
	}
	tests := []struct {
		name    string
		in      *webappv1.Ingress
		hasPort bool
		want    []fieldErr
	}{
		{"none", nil, false, nil},
		{"a host", host("app.example.com"), true, nil},
		{"a wildcard host", host("*.example.com"), true, nil},
		{"a host at the limit", host(dnsName(validation.DNS1123SubdomainMaxLength)), true, nil},
		{"a host past the limit", host(dnsName(validation.DNS1123SubdomainMaxLength + 1)), true, []fieldErr{invalid("spec.ingress.host")}},
		{"no host", host(""), true, []fieldErr{required("spec.ingress.host")}},
		{"a host with capitals", host("App.example.com"), true, []fieldErr{invalid("spec.ingress.host").of("App.example.com")}},
		{"a wildcard inside the host", host("a.*.example.com"), true, []fieldErr{invalid("spec.ingress.host").with("a wildcard may only be the first label")}},
		{"two wildcards", host("*.*.example.com"), true, []fieldErr{invalid("spec.ingress.host").with("a wildcard may only be the first label")}},
		{"a wildcard host at the limit, *. included", host("*." + dnsName(validation.DNS1123SubdomainMaxLength-2)), true, nil},
		{"a wildcard host past the limit, *. included", host("*." + dnsName(validation.DNS1123SubdomainMaxLength-1)), true, []fieldErr{invalid("spec.ingress.host")}},
		{"an absolute path", &webappv1.Ingress{Host: "a.example.com", Path: "/api"}, true, nil},
		{"a relative path", &webappv1.Ingress{Host: "a.example.com", Path: "api"}, true, []fieldErr{invalid("spec.ingress.path").with("must start with /")}},
		{"pathType Prefix", pathType(networkingv1.PathTypePrefix), true, nil},
		{"pathType Exact", pathType(networkingv1.PathTypeExact), true, nil},
		{"pathType ImplementationSpecific", pathType(networkingv1.PathTypeImplementationSpecific), true, nil},
		{"an unknown pathType", pathType("Regex"), true, []fieldErr{notSupported("spec.ingress.pathType").of("Regex")}},
		{"a className", &webappv1.Ingress{Host: "a.example.com", ClassName: new("nginx")}, true, nil},
		{"a className that names nothing", &webappv1.Ingress{Host: "a.example.com", ClassName: new("Nginx_Class")}, true, []fieldErr{invalid("spec.ingress.className")}},
		{"tls", &webappv1.Ingress{Host: "a.example.com", TLS: &webappv1.IngressTLS{SecretName: "cert"}}, true, nil},
		{"tls without a Secret", &webappv1.Ingress{Host: "a.example.com", TLS: &webappv1.IngressTLS{}}, true, []fieldErr{required("spec.ingress.tls.secretName")}},
		{"tls with a Secret no name can be", &webappv1.Ingress{Host: "a.example.com", TLS: &webappv1.IngressTLS{SecretName: "a cert"}}, true, []fieldErr{invalid("spec.ingress.tls.secretName")}},
		{"annotations, capitals included", &webappv1.Ingress{Host: "a.example.com", Annotations: map[string]string{"nginx.ingress.kubernetes.io/Rewrite-Target": "/"}}, true, nil},
		{"annotations with bad keys, by key", &webappv1.Ingress{Host: "a.example.com", Annotations: map[string]string{"z key": "", "a key": ""}}, true,
			[]fieldErr{invalid("spec.ingress.annotations").of("a key"), invalid("spec.ingress.annotations").of("z key")}},
		{"no port", host("a.example.com"), false, []fieldErr{invalid("spec.ingress").with("needs spec.port")}},
		{"every rule at once, in order", &webappv1.Ingress{Host: "", Path: "x", PathType: new(networkingv1.PathType("Regex")), ClassName: new("A"), TLS: &webappv1.IngressTLS{}, Annotations: map[string]string{"a key": ""}}, false,
			[]fieldErr{
				required("spec.ingress.host"),
				invalid("spec.ingress.path"),
				notSupported("spec.ingress.pathType"),
				invalid("spec.ingress.className"),
				required("spec.ingress.tls.secretName"),
				invalid("spec.ingress.annotations"),
				invalid("spec.ingress"),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateIngress(tt.in, tt.hasPort, spec.Child("ingress")), tt.want...)
		})
	}
}

func TestValidateRoute(t *testing.T) {
	hostnames := func(n int) []gatewayv1.Hostname {
		h := make([]gatewayv1.Hostname, n)
		for i := range h {
			h[i] = gatewayv1.Hostname(fmt.Sprintf("h%d.example.com", i))
		}
		return h
	}
	gw := []webappv1.RouteParentRef{{Name: "gw"}}
	route := func(h ...gatewayv1.Hostname) *webappv1.Route {
		return &webappv1.Route{Hostnames: h, Path: "/", ParentRefs: gw}
	}
	tests := []struct {
		name    string
		r       *webappv1.Route
		hasPort bool
		want    []fieldErr
	}{
		{"none", nil, false, nil},
		{"a route", route("app.example.com"), true, nil},
		{"no hostname", route(), true, []fieldErr{required("spec.route.hostnames")}},
		{"as many hostnames as allowed", route(hostnames(webappv1.MaxRouteHostnames)...), true, nil},
		{"one hostname too many", route(hostnames(webappv1.MaxRouteHostnames + 1)...), true,
			[]fieldErr{tooMany("spec.route.hostnames").of(webappv1.MaxRouteHostnames + 1)}},
		{"an empty hostname", route("a.example.com", ""), true, []fieldErr{required("spec.route.hostnames[1]")}},
		{"an IPv4 address", route("10.0.0.1"), true, []fieldErr{invalid("spec.route.hostnames[0]").with("not an IP address")}},
		{"an IPv6 address", route("::1"), true, []fieldErr{invalid("spec.route.hostnames[0]").with("not an IP address")}},
		{"a wildcard hostname", route("*.example.com"), true, nil},
		{"a wildcard without a dot", route("*example.com"), true, []fieldErr{invalid("spec.route.hostnames[0]")}},
		{"a wildcard inside", route("a.*.example.com"), true, []fieldErr{invalid("spec.route.hostnames[0]")}},
		{"a hostname with capitals", route("App.example.com"), true, []fieldErr{invalid("spec.route.hostnames[0]").of("App.example.com")}},
		{"a hostname at the limit", route(gatewayv1.Hostname(dnsName(validation.DNS1123SubdomainMaxLength))), true, nil},
		{"a hostname past the limit", route(gatewayv1.Hostname(dnsName(validation.DNS1123SubdomainMaxLength + 1))), true, []fieldErr{invalid("spec.route.hostnames[0]")}},
		{"a hostname twice", route("a.example.com", "b.example.com", "a.example.com"), true, []fieldErr{duplicate("spec.route.hostnames[2]").of("a.example.com")}},
		{"pathType PathPrefix", &webappv1.Route{Hostnames: hostnames(1), Path: "/", PathType: webappv1.RoutePathPrefix, ParentRefs: gw}, true, nil},
		{"pathType Exact", &webappv1.Route{Hostnames: hostnames(1), Path: "/", PathType: webappv1.RoutePathExact, ParentRefs: gw}, true, nil},
		{"an unknown pathType", &webappv1.Route{Hostnames: hostnames(1), Path: "/", PathType: "RegularExpression", ParentRefs: gw}, true,
			[]fieldErr{notSupported("spec.route.pathType").of("RegularExpression")}},
		{"a path that is wrong", &webappv1.Route{Hostnames: hostnames(1), Path: "api", ParentRefs: gw}, true, []fieldErr{invalid("spec.route.path")}},
		{"no port", route("a.example.com"), false, []fieldErr{invalid("spec.route").with("needs spec.port")}},
		{"every rule at once, in order", &webappv1.Route{Hostnames: []gatewayv1.Hostname{"10.0.0.1", "10.0.0.1"}, Path: "x", PathType: "Regex"}, false,
			[]fieldErr{
				invalid("spec.route.hostnames[0]"),
				invalid("spec.route.hostnames[1]"),
				duplicate("spec.route.hostnames[1]"),
				invalid("spec.route.path"),
				notSupported("spec.route.pathType"),
				required("spec.route.parentRefs"),
				invalid("spec.route"),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateRoute(tt.r, tt.hasPort, spec.Child("route")), tt.want...)
		})
	}
}

func TestValidateRoutePath(t *testing.T) {
	tests := []struct {
		path string
		want []fieldErr // at spec.route.path
	}{
		{"/", nil},
		{"/api/v1", nil},
		{"/a-b_c.d~e!f$g&h'i(j)k*l+m,n;o=p:q@r", nil},
		{"/a%20b", nil},
		{"/a..b", nil},
		{"/.well-known", nil},
		{"/" + strings.Repeat("a", webappv1.MaxRoutePathLength-1), nil},
		{"/" + strings.Repeat("a", webappv1.MaxRoutePathLength), []fieldErr{tooLong("spec.route.path")}},
		{"/" + strings.Repeat(" ", webappv1.MaxRoutePathLength), []fieldErr{tooLong("spec.route.path")}}, // the length first
		{"", []fieldErr{invalid("spec.route.path").with("must start with /")}},
		{"api", []fieldErr{invalid("spec.route.path").with("must start with /")}},
		{"a//b", []fieldErr{invalid("spec.route.path").with("must start with /")}}, // the first rule that fails
		{"/a b", []fieldErr{invalid("spec.route.path").with("may hold only")}},
		{"/a?b", []fieldErr{invalid("spec.route.path").with("may hold only")}},
		{"/a#b", []fieldErr{invalid("spec.route.path").with("may hold only")}},
		{"/a%zz", []fieldErr{invalid("spec.route.path").with("may hold only")}},
		{"/a%2", []fieldErr{invalid("spec.route.path").with("may hold only")}},
		{"//", []fieldErr{invalid("spec.route.path").with("must not contain //")}},
		{"/a//b", []fieldErr{invalid("spec.route.path").with("must not contain //")}},
		{"/a/./b", []fieldErr{invalid("spec.route.path").with("must not contain //")}},
		{"/a/../b", []fieldErr{invalid("spec.route.path").with("must not contain //")}},
		{"/a/.", []fieldErr{invalid("spec.route.path").with("nor end with /. or /..")}},
		{"/a/..", []fieldErr{invalid("spec.route.path").with("nor end with /. or /..")}},
		{"/.", []fieldErr{invalid("spec.route.path").with("nor end with /. or /..")}},
		{"/a%2Fb", []fieldErr{invalid("spec.route.path").with("escaped /")}},
		{"/a%2fb", []fieldErr{invalid("spec.route.path").with("escaped /")}},
	}
	for _, tt := range tests {
		t.Run(Cut(tt.path, 20), func(t *testing.T) {
			checkErrs(t, validateRoutePath(tt.path, spec.Child("route", "path")), tt.want...)
		})
	}
}

func TestValidateParentRefs(t *testing.T) {
	named := func(n int) []webappv1.RouteParentRef {
		refs := make([]webappv1.RouteParentRef, n)
		for i := range refs {
			refs[i].Name = fmt.Sprintf("gw-%d", i)
		}
		return refs
	}
	ref := func(name string, port int32) webappv1.RouteParentRef {
		return webappv1.RouteParentRef{Name: name, Port: new(port)}
	}
	tests := []struct {
		name string
		refs []webappv1.RouteParentRef
		want []fieldErr
	}{
		{"none", nil, []fieldErr{required("spec.route.parentRefs").with("--default-gateway")}},
		{"one", named(1), nil},
		{"as many as allowed", named(webappv1.MaxRouteParentRefs), nil},
		{"one too many, and nothing else is checked", append(named(webappv1.MaxRouteParentRefs), webappv1.RouteParentRef{}), []fieldErr{
			tooMany("spec.route.parentRefs").of(webappv1.MaxRouteParentRefs + 1)}},
		{"no name", []webappv1.RouteParentRef{{}}, []fieldErr{required("spec.route.parentRefs[0].name")}},
		{"a name no Gateway can have", []webappv1.RouteParentRef{{Name: "Public_GW"}}, []fieldErr{invalid("spec.route.parentRefs[0].name").of("Public_GW")}},
		{"a name twice", []webappv1.RouteParentRef{{Name: "gw"}, {Name: "other"}, {Name: "gw"}},
			[]fieldErr{invalid("spec.route.parentRefs[2].name").with("is also parentRefs[0]'s")}},
		{"a name three times: each repeat names the first", []webappv1.RouteParentRef{{Name: "gw"}, {Name: "gw"}, {Name: "gw"}},
			[]fieldErr{invalid("spec.route.parentRefs[1].name").with("parentRefs[0]"), invalid("spec.route.parentRefs[2].name").with("parentRefs[0]")}},
		{"a namespace", []webappv1.RouteParentRef{{Name: "gw", Namespace: new(gatewayv1.Namespace("infra"))}}, nil},
		{"a namespace that is no DNS label", []webappv1.RouteParentRef{{Name: "gw", Namespace: new(gatewayv1.Namespace("infra.gw"))}},
			[]fieldErr{invalid("spec.route.parentRefs[0].namespace")}},
		{"a sectionName", []webappv1.RouteParentRef{{Name: "gw", SectionName: new(gatewayv1.SectionName("https"))}}, nil},
		{"a sectionName that is no DNS subdomain", []webappv1.RouteParentRef{{Name: "gw", SectionName: new(gatewayv1.SectionName("HTTPS"))}},
			[]fieldErr{invalid("spec.route.parentRefs[0].sectionName")}},
		{"ports at the bounds", []webappv1.RouteParentRef{ref("a", webappv1.MinPort), ref("b", webappv1.MaxPort)}, nil},
		{"a port of 0", []webappv1.RouteParentRef{ref("a", 0)}, []fieldErr{invalid("spec.route.parentRefs[0].port")}},
		{"a port past the range", []webappv1.RouteParentRef{ref("a", webappv1.MaxPort+1)}, []fieldErr{invalid("spec.route.parentRefs[0].port")}},
		{"every entry with a port, one twice", []webappv1.RouteParentRef{ref("a", 443), ref("b", 80), ref("c", 443)},
			[]fieldErr{invalid("spec.route.parentRefs[2].port").of(int32(443)).with("is also parentRefs[0]'s")}},
		{"a port twice, but one entry without: merged by name", []webappv1.RouteParentRef{{Name: "c"}, ref("a", 443), ref("b", 443)}, nil},
		{"every rule at once, in order", []webappv1.RouteParentRef{
			{Name: "", Namespace: new(gatewayv1.Namespace("A")), SectionName: new(gatewayv1.SectionName("B")), Port: new(int32(0))},
			{Name: "gw", Port: new(int32(0))},
		}, []fieldErr{
			required("spec.route.parentRefs[0].name"),
			invalid("spec.route.parentRefs[0].namespace"),
			invalid("spec.route.parentRefs[0].sectionName"),
			invalid("spec.route.parentRefs[0].port"),
			invalid("spec.route.parentRefs[1].port"), // out of range
			invalid("spec.route.parentRefs[1].port"), // and the same as parentRefs[0]'s
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateParentRefs(tt.refs, spec.Child("route", "parentRefs")), tt.want...)
		})
	}
}

package validation

import (
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// The rules of what routes traffic to the WebApp's Service: spec.ingress and spec.route, which
// must pass the Ingress and HTTPRoute schemas.

// validateIngress reports an Ingress that no controller could serve, or that has no Service to
// route to (hasPort false).
func validateIngress(in *webappv1.Ingress, hasPort bool, fld *field.Path) field.ErrorList {
	if in == nil {
		return nil
	}
	var errs field.ErrorList
	// As networking/v1's own validation: a wildcard is "*." before a DNS name, and the whole host,
	// "*." included, is at most 253 characters.
	switch {
	case in.Host == "":
		errs = append(errs, field.Required(fld.Child("host"), ""))
	case strings.Contains(strings.TrimPrefix(in.Host, "*."), "*"):
		errs = append(errs, field.Invalid(fld.Child("host"), Short(in.Host), "a wildcard may only be the first label"))
	case strings.HasPrefix(in.Host, "*."):
		if msgs := validation.IsWildcardDNS1123Subdomain(in.Host); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Child("host"), Short(in.Host), msgs[0]))
		}
	default:
		if msgs := validation.IsDNS1123Subdomain(in.Host); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Child("host"), Short(in.Host), msgs[0]))
		}
	}
	if in.Path != "" && !strings.HasPrefix(in.Path, "/") {
		errs = append(errs, field.Invalid(fld.Child("path"), Short(in.Path), "must start with /"))
	}
	pathTypes := []networkingv1.PathType{networkingv1.PathTypePrefix, networkingv1.PathTypeExact, networkingv1.PathTypeImplementationSpecific}
	if t := in.PathType; t != nil && !slices.Contains(pathTypes, *t) {
		errs = append(errs, field.NotSupported(fld.Child("pathType"), Short(string(*t)), pathTypes))
	}
	if c := in.ClassName; c != nil {
		if msgs := validation.IsDNS1123Subdomain(*c); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Child("className"), Short(*c), msgs[0]))
		}
	}
	if in.TLS != nil {
		errs = append(errs, validateObjectName(in.TLS.SecretName, fld.Child("tls", "secretName"))...)
	}
	for _, k := range slices.Sorted(maps.Keys(in.Annotations)) {
		if msgs := validation.IsQualifiedName(strings.ToLower(k)); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Child("annotations"), Short(k), msgs[0]))
		}
	}
	if !hasPort {
		errs = append(errs, field.Invalid(fld, field.OmitValueType{}, "needs spec.port: the Ingress routes to the Service that port makes"))
	}
	return errs
}

// routePathChars is the grammar of a path an HTTPRoute's PathPrefix or Exact match accepts: "/"
// then RFC 3986 path characters and %-escapes, as the Gateway API's HTTPPathMatch rule says.
var routePathChars = regexp.MustCompile(`^/(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})*$`)

// validateRoute reports a route the HTTPRoute schema would refuse, one Metacontroller could not
// merge (parentRefs with the same name, or all with a port and two with the same), one with no
// Gateway to attach to, or one with no Service to route to (hasPort false). Without parentRefs,
// the message says to set them or --default-gateway: sync.Defaults.Apply has already put the
// install's Gateway there when it has one.
func validateRoute(r *webappv1.Route, hasPort bool, fld *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	var errs field.ErrorList
	hosts := fld.Child("hostnames")
	switch {
	case len(r.Hostnames) == 0:
		errs = append(errs, field.Required(hosts, "at least one DNS name clients use, such as app.example.com"))
	case len(r.Hostnames) > webappv1.MaxRouteHostnames:
		errs = append(errs, field.TooMany(hosts, len(r.Hostnames), webappv1.MaxRouteHostnames))
	}
	seen := map[string]bool{}
	for i, h := range r.Hostnames {
		errs = append(errs, validateRouteHostname(string(h), hosts.Index(i))...)
		if seen[string(h)] {
			errs = append(errs, field.Duplicate(hosts.Index(i), Short(string(h))))
		}
		seen[string(h)] = true
	}
	errs = append(errs, validateRoutePath(r.Path, fld.Child("path"))...)
	if t := r.PathType; t != "" && t != webappv1.RoutePathPrefix && t != webappv1.RoutePathExact {
		errs = append(errs, field.NotSupported(fld.Child("pathType"), Short(string(t)), []webappv1.RoutePathType{webappv1.RoutePathPrefix, webappv1.RoutePathExact}))
	}
	errs = append(errs, validateParentRefs(r.ParentRefs, fld.Child("parentRefs"))...)
	if !hasPort {
		errs = append(errs, field.Invalid(fld, field.OmitValueType{}, "needs spec.port: the HTTPRoute routes to the Service that port makes"))
	}
	return errs
}

// validateRouteHostname reports a hostname that is not a DNS name, or a wildcard one ("*." and a
// DNS name), or that is an IP address, which the Gateway API does not take as a hostname.
func validateRouteHostname(h string, fld *field.Path) field.ErrorList {
	var msgs []string
	switch {
	case h == "":
		return field.ErrorList{field.Required(fld, "")}
	case net.ParseIP(h) != nil:
		msgs = []string{"must be a DNS name, not an IP address"}
	case strings.HasPrefix(h, "*"):
		msgs = validation.IsWildcardDNS1123Subdomain(h)
	default:
		msgs = validation.IsDNS1123Subdomain(h)
	}
	if len(msgs) > 0 {
		return field.ErrorList{field.Invalid(fld, Short(h), msgs[0])}
	}
	return nil
}

// validateRoutePath reports a path an HTTPRoute's PathPrefix or Exact match refuses, by the same
// rules as the Gateway API's HTTPPathMatch, the first that fails.
func validateRoutePath(path string, fld *field.Path) field.ErrorList {
	var problem string
	switch {
	case len(path) > webappv1.MaxRoutePathLength:
		return field.ErrorList{field.TooLong(fld, Short(path), webappv1.MaxRoutePathLength)}
	case !strings.HasPrefix(path, "/"):
		problem = "must start with /"
	case !routePathChars.MatchString(path):
		problem = "may hold only letters, digits, -._~!$&'()*+,;=:@/ and %-escapes"
	case strings.Contains(path, "//"), strings.Contains(path, "/./"), strings.Contains(path, "/../"),
		strings.HasSuffix(path, "/."), strings.HasSuffix(path, "/.."):
		problem = "must not contain //, /./ or /../, nor end with /. or /.."
	case strings.Contains(strings.ToLower(path), "%2f"):
		problem = "must not contain an escaped / (%2F)"
	default:
		return nil
	}
	return field.ErrorList{field.Invalid(fld, Short(path), problem)}
}

// validateParentRefs reports parentRefs that are missing, too many, or name no Gateway, and
// those Metacontroller's merge would make one: it merges the list into the HTTPRoute by port
// when every entry has one, and by name otherwise, so two entries with the same key would
// become one.
func validateParentRefs(refs []webappv1.RouteParentRef, fld *field.Path) field.ErrorList {
	switch {
	case len(refs) == 0:
		return field.ErrorList{field.Required(fld, "name the Gateway to attach to, or start the hook with --default-gateway namespace/name[/section]")}
	case len(refs) > webappv1.MaxRouteParentRefs:
		return field.ErrorList{field.TooMany(fld, len(refs), webappv1.MaxRouteParentRefs)}
	}
	var errs field.ErrorList
	names := map[string]int{}
	ports := map[int32]int{}
	allPorts := true
	for i, ref := range refs {
		at := fld.Index(i)
		if ref.Name == "" {
			errs = append(errs, field.Required(at.Child("name"), "the Gateway's name"))
		} else if msgs := validation.IsDNS1123Subdomain(ref.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(at.Child("name"), Short(ref.Name), msgs[0]))
		} else if j, ok := names[ref.Name]; ok {
			errs = append(errs, field.Invalid(at.Child("name"), Short(ref.Name), fmt.Sprintf("is also parentRefs[%d]'s: Metacontroller merges parentRefs by name, so each must name a Gateway of a different name", j)))
		} else {
			names[ref.Name] = i
		}
		if ns := ref.Namespace; ns != nil {
			if msgs := validation.IsDNS1123Label(string(*ns)); len(msgs) > 0 {
				errs = append(errs, field.Invalid(at.Child("namespace"), Short(string(*ns)), msgs[0]))
			}
		}
		if s := ref.SectionName; s != nil {
			if msgs := validation.IsDNS1123Subdomain(string(*s)); len(msgs) > 0 {
				errs = append(errs, field.Invalid(at.Child("sectionName"), Short(string(*s)), msgs[0]))
			}
		}
		errs = append(errs, validateRange(ref.Port, webappv1.MinPort, webappv1.MaxPort, at.Child("port"))...)
		allPorts = allPorts && ref.Port != nil
	}
	if allPorts {
		for i, ref := range refs {
			if j, ok := ports[*ref.Port]; ok {
				errs = append(errs, field.Invalid(fld.Index(i).Child("port"), *ref.Port, fmt.Sprintf("is also parentRefs[%d]'s: when every parentRef sets port, Metacontroller merges them by port, so each must set a different one", j)))
			} else {
				ports[*ref.Port] = i
			}
		}
	}
	return errs
}

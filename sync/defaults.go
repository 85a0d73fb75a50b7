package sync

import (
	"fmt"
	"strings"

	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/api/v1/validation"
)

// Defaults are an install's own defaults, which the hook's flags set: they apply to every WebApp
// the hook serves, where its spec leaves the field out. Unlike webappv1.Default's, they are not
// in the CRD, so a WebApp means different things under differently started hooks; each is off
// in the zero value, so that an upgrade changes no child.
type Defaults struct {
	// SecurityProfile applies to every WebApp whose spec sets no securityProfile
	// (--default-security-profile). "" applies none. Turning it on rolls the pods of those
	// WebApps once, as their pod templates change.
	SecurityProfile webappv1.SecurityProfile
	// Gateway is the Gateway a platform team set up for routes (--default-gateway): the one
	// parentRef of every WebApp whose spec.route names none. Nil applies none, and such a route
	// is then Invalid. Changing it moves those routes to the new Gateway; it rolls no pod.
	Gateway *webappv1.RouteParentRef
}

// Apply fills in p's spec from d, for the fields it leaves out. A spec that did not decode
// (p.SpecErrors) is left alone: it is reported Invalid whatever d says. What it fills in is a
// copy: d is never aliased.
func (d Defaults) Apply(p *Parent) {
	if len(p.SpecErrors) > 0 {
		return
	}
	if p.Spec.SecurityProfile == "" && d.SecurityProfile != "" {
		p.Spec.SecurityProfile = d.SecurityProfile
	}
	if r := p.Spec.Route; r != nil && len(r.ParentRefs) == 0 && d.Gateway != nil {
		ref := *d.Gateway
		if ns := ref.Namespace; ns != nil {
			v := *ns
			ref.Namespace = &v
		}
		if s := ref.SectionName; s != nil {
			v := *s
			ref.SectionName = &v
		}
		r.ParentRefs = []webappv1.RouteParentRef{ref}
	}
}

// ParseGateway parses --default-gateway's "namespace/name" or "namespace/name/section" into a
// parentRef: the Gateway name in namespace, and the listener section when given. The namespace
// is always explicit, since the Gateway is the platform team's, in a namespace of its own. ""
// is an error: leave the flag unset for no default.
func ParseGateway(s string) (*webappv1.RouteParentRef, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, fmt.Errorf("%q is not namespace/name or namespace/name/section", s)
	}
	check := func(what, v string, f func(string) []string) error {
		if msgs := f(v); len(msgs) > 0 {
			return fmt.Errorf("%q: %s %q: %s", s, what, validation.Short(v), msgs[0])
		}
		return nil
	}
	if err := check("namespace", parts[0], k8svalidation.IsDNS1123Label); err != nil {
		return nil, err
	}
	if err := check("name", parts[1], k8svalidation.IsDNS1123Subdomain); err != nil {
		return nil, err
	}
	ns := gatewayv1.Namespace(parts[0])
	ref := &webappv1.RouteParentRef{Name: parts[1], Namespace: &ns}
	if len(parts) == 3 {
		if err := check("section", parts[2], k8svalidation.IsDNS1123Subdomain); err != nil {
			return nil, err
		}
		section := gatewayv1.SectionName(parts[2])
		ref.SectionName = &section
	}
	return ref, nil
}

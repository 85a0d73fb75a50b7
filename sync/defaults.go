package sync

import (
	webappv1 "github.com/example/webapp-operator/api/v1"
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
}

// Apply fills in p's spec from d, for the fields it leaves out. A spec that did not decode
// (p.SpecErrors) is left alone: it is reported Invalid whatever d says.
func (d Defaults) Apply(p *Parent) {
	if len(p.SpecErrors) > 0 {
		return
	}
	if p.Spec.SecurityProfile == "" && d.SecurityProfile != "" {
		p.Spec.SecurityProfile = d.SecurityProfile
	}
}

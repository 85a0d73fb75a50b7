package sync

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/example/webapp-operator/api/v1/validation"
)

// Validate reports why a WebApp cannot be built, or nothing: the problems that kept its spec
// from decoding (Parent.SpecErrors), or else every problem of its name and its spec. Sync
// answers Invalid exactly when it reports one.
func Validate(p *Parent) field.ErrorList {
	if len(p.SpecErrors) > 0 {
		return p.SpecErrors
	}
	errs := validation.ValidateName(p.Name, &p.Spec)
	return append(errs, validation.ValidateSpec(&p.Spec, field.NewPath("spec"))...)
}

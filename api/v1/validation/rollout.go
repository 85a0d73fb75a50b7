package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// validateRollout reports a canary without steps or with too many, a step's weight or
// pauseSeconds out of range, weights that do not rise strictly, and a maxFailedChecks out of
// range. A nil rollout, or one without canary, is valid.
func validateRollout(r *webappv1.Rollout, fld *field.Path) field.ErrorList {
	if r == nil || r.Canary == nil {
		return nil
	}
	c, fld := r.Canary, fld.Child("canary")
	var errs field.ErrorList
	steps := fld.Child("steps")
	switch n := len(c.Steps); {
	case n == 0:
		errs = append(errs, field.Required(steps, "a canary needs at least one step"))
	case n > webappv1.MaxCanarySteps:
		errs = append(errs, field.TooMany(steps, n, webappv1.MaxCanarySteps))
	}
	for i, s := range c.Steps {
		at := steps.Index(i)
		errs = append(errs, validateRange(&s.Weight, 1, 100, at.Child("weight"))...)
		if i > 0 && s.Weight <= c.Steps[i-1].Weight {
			errs = append(errs, field.Invalid(at.Child("weight"), s.Weight, fmt.Sprintf("must be greater than the weight of step %d (%d): weights rise strictly", i-1, c.Steps[i-1].Weight)))
		}
		errs = append(errs, validateRange(s.PauseSeconds, 0, webappv1.MaxCanaryPauseSeconds, at.Child("pauseSeconds"))...)
	}
	return append(errs, validateRange(c.MaxFailedChecks, 1, webappv1.MaxFailedChecksLimit, fld.Child("maxFailedChecks"))...)
}

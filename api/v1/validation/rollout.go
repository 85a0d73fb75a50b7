package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// validateRollout reports a canary without steps or with too many, a step's weight or
// pauseSeconds out of range, weights that do not rise strictly, a maxFailedChecks or scaleDownDelaySeconds out of range,
// an analysis the CRD would refuse (validateAnalysis), and spec.podLabels that set
// webappv1.LabelTrack, which marks the canary's pods. A nil rollout, or one without canary, is
// valid. fld is the spec's path.
func validateRollout(spec *webappv1.WebAppSpec, fld *field.Path) field.ErrorList {
	r := spec.Rollout
	if r == nil || r.Canary == nil {
		return nil
	}
	var errs field.ErrorList
	if _, ok := spec.PodLabels[webappv1.LabelTrack]; ok {
		errs = append(errs, field.Invalid(fld.Child("podLabels").Key(webappv1.LabelTrack), Short(spec.PodLabels[webappv1.LabelTrack]), "must not be set with rollout.canary: it marks the canary's pods"))
	}
	c, fld := r.Canary, fld.Child("rollout", "canary")
	steps := fld.Child("steps")
	switch n := len(c.Steps); {
	case n == 0:
		errs = append(errs, field.Required(steps, "a canary needs at least one step"))
	case n > webappv1.MaxCanarySteps:
		errs = append(errs, field.TooMany(steps, n, webappv1.MaxCanarySteps))
	}
	for i, s := range c.Steps {
		at := steps.Index(i)
		errs = append(errs, validateRange(&s.Weight, 1, webappv1.MaxCanaryWeight, at.Child("weight"))...)
		if i > 0 && s.Weight <= c.Steps[i-1].Weight {
			errs = append(errs, field.Invalid(at.Child("weight"), s.Weight, fmt.Sprintf("must be greater than the weight of step %d (%d): weights rise strictly", i-1, c.Steps[i-1].Weight)))
		}
		errs = append(errs, validateRange(s.PauseSeconds, 0, webappv1.MaxCanaryPauseSeconds, at.Child("pauseSeconds"))...)
	}
	errs = append(errs, validateRange(c.MaxFailedChecks, 1, webappv1.MaxFailedChecksLimit, fld.Child("maxFailedChecks"))...)
	errs = append(errs, validateRange(c.ScaleDownDelaySeconds, 0, webappv1.MaxScaleDownDelaySeconds, fld.Child("scaleDownDelaySeconds"))...)
	return append(errs, validateAnalysis(c.Analysis, fld.Child("analysis"))...)
}

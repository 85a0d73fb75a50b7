package validation

import (
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// validateRollout reports a canary without steps or with too many, a step's weight or
// pauseSeconds out of range (a first step's weight may be 0 with a header route), weights that
// do not rise strictly, a maxFailedChecks, scaleDownDelaySeconds or rollbackWindow.revisions out
// of range, an analysis the CRD would refuse (validateAnalysis), a header route the HTTPRoute
// would refuse or without spec.route (validateHeaderRoute), and spec.podLabels that set
// webappv1.LabelTrack, which marks the canary's pods; for blueGreen, what validateBlueGreen
// reports, and both ways set at once. A nil rollout, or one with neither, is valid. fld is the
// spec's path.
func validateRollout(spec *webappv1.WebAppSpec, fld *field.Path) field.ErrorList {
	r := spec.Rollout
	if r == nil || r.Canary == nil && r.BlueGreen == nil {
		return nil
	}
	var errs field.ErrorList
	if _, ok := spec.PodLabels[webappv1.LabelTrack]; ok {
		why := "must not be set with rollout.canary: it marks the canary's pods"
		if r.Canary == nil {
			why = "must not be set with rollout.blueGreen: it marks the new version's pods"
		}
		errs = append(errs, field.Invalid(fld.Child("podLabels").Key(webappv1.LabelTrack), Short(spec.PodLabels[webappv1.LabelTrack]), why))
	}
	if r.Canary == nil {
		return append(errs, validateBlueGreen(r.BlueGreen, spec.Route != nil, fld.Child("rollout", "blueGreen"))...)
	}
	if r.BlueGreen != nil {
		errs = append(errs, field.Forbidden(fld.Child("rollout", "blueGreen"), "canary and blueGreen are two ways to release: set one"))
	}
	c, fld := r.Canary, fld.Child("rollout", "canary")
	steps := fld.Child("steps")
	errs = append(errs, validateCount(len(c.Steps), webappv1.MaxCanarySteps, steps, "a canary needs at least one step")...)
	for i, s := range c.Steps {
		at := steps.Index(i)
		// A first step of weight 0 gives the canary the header route's requests alone; without
		// one, 0 is out of range, as it was before header routes (the same message).
		if i > 0 || s.Weight != 0 || c.HeaderRoute == nil {
			errs = append(errs, validateRange(&s.Weight, 1, webappv1.MaxCanaryWeight, at.Child("weight"))...)
		}
		if i > 0 && s.Weight <= c.Steps[i-1].Weight {
			errs = append(errs, field.Invalid(at.Child("weight"), s.Weight, fmt.Sprintf("must be greater than the weight of step %d (%d): weights rise strictly", i-1, c.Steps[i-1].Weight)))
		}
		errs = append(errs, validateRange(s.PauseSeconds, 0, webappv1.MaxCanaryPauseSeconds, at.Child("pauseSeconds"))...)
	}
	errs = append(errs, validateShared(c.MaxFailedChecks, c.ScaleDownDelaySeconds, c.Analysis, c.RollbackWindow, fld)...)
	if c.HeaderRoute == nil { // no path built for nothing: the hook validates every spec it syncs
		return errs
	}
	return append(errs, validateHeaderRoute(c, spec.Route != nil, fld.Child("headerRoute"))...)
}

// headerNameChars are the characters of an HTTP header's name (RFC 9110's token), as the Gateway
// API's HTTPHeaderName takes them; headerValueChars a header match's value, as its experimental
// channel does: printable ASCII, with single spaces or tabs between.
var (
	headerNameChars  = regexp.MustCompile(`^[A-Za-z0-9!#$%&'*+\-.^_` + "`" + `|~]+$`)
	headerValueChars = regexp.MustCompile(`^[!-~]+([\t ]?[!-~]+)*$`)
)

// validateHeaderRoute reports a header route the HTTPRoute schema would refuse (no match or too
// many, a match without headers or with too many, a header name that is not one or repeats, case
// aside, a value out of bounds or not printable, a type that is not Exact or RegularExpression),
// a regular expression that Go's regexp (Traefik's) cannot compile, an analysis that is not
// Include or Exclude, Exclude with an analysis and a first step of weight 0 (no request left to
// judge there), and a header route without spec.route (hasRoute false). A plan without one is
// valid. fld is the header route's path.
func validateHeaderRoute(c *webappv1.Canary, hasRoute bool, fld *field.Path) field.ErrorList {
	h := c.HeaderRoute
	if h == nil {
		return nil
	}
	var errs field.ErrorList
	if !hasRoute {
		errs = append(errs, field.Invalid(fld, field.OmitValueType{}, "needs spec.route: its match is a rule of the HTTPRoute"))
	}
	errs = append(errs, validateHeaderMatches(h.Matches, fld.Child("matches"), "a header route needs at least one match")...)
	switch h.Analysis {
	case "", webappv1.HeaderRouteInclude:
	case webappv1.HeaderRouteExclude:
		if c.Analysis != nil && len(c.Steps) > 0 && c.Steps[0].Weight == 0 {
			errs = append(errs, field.Invalid(fld.Child("analysis"), h.Analysis, "leaves step 0, of weight 0, no request to judge: include the header route's requests, or start at a weight above 0"))
		}
	default:
		errs = append(errs, field.NotSupported(fld.Child("analysis"), Short(string(h.Analysis)), []webappv1.HeaderRouteAnalysis{webappv1.HeaderRouteInclude, webappv1.HeaderRouteExclude}))
	}
	return errs
}

// validateBlueGreen reports a blue-green release without spec.route (hasRoute false), a preview
// the HTTPRoute would refuse (validateHeaderMatches), an autoPromotionSeconds,
// scaleDownDelaySeconds, maxFailedChecks or rollbackWindow.revisions out of range, and an
// analysis the CRD would refuse. fld is its path, spec.rollout.blueGreen.
func validateBlueGreen(b *webappv1.BlueGreen, hasRoute bool, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if !hasRoute {
		errs = append(errs, field.Invalid(fld, field.OmitValueType{}, "needs spec.route: the preview and the switch are the HTTPRoute's"))
	}
	errs = append(errs, validateHeaderMatches(b.Preview.Matches, fld.Child("preview", "matches"), "a preview needs at least one match: without one no request reaches the new version before the switch")...)
	errs = append(errs, validateRange(b.AutoPromotionSeconds, 0, webappv1.MaxCanaryPauseSeconds, fld.Child("autoPromotionSeconds"))...)
	return append(errs, validateShared(b.MaxFailedChecks, b.ScaleDownDelaySeconds, b.Analysis, b.RollbackWindow, fld)...)
}

// validateShared reports what canary and blueGreen share out of range: maxFailedChecks,
// scaleDownDelaySeconds and rollbackWindow.revisions, and an analysis the CRD would refuse. fld is
// the path of the one they are fields of.
func validateShared(maxFailed, delay *int32, a *webappv1.CanaryAnalysis, w *webappv1.RollbackWindow, fld *field.Path) field.ErrorList {
	errs := validateRange(maxFailed, 1, webappv1.MaxFailedChecksLimit, fld.Child("maxFailedChecks"))
	errs = append(errs, validateRange(delay, 0, webappv1.MaxScaleDownDelaySeconds, fld.Child("scaleDownDelaySeconds"))...)
	errs = append(errs, validateAnalysis(a, fld.Child("analysis"))...)
	if w != nil {
		errs = append(errs, validateRange(&w.Revisions, 1, webappv1.MaxRollbackWindowRevisions, fld.Child("rollbackWindow", "revisions"))...)
	}
	return errs
}

// validateHeaderMatches reports header matches the HTTPRoute schema would refuse: none
// (required says why one is needed) or too many, a match without headers or with too many, a
// header name that is not one or repeats, case aside, a value out of bounds or not printable, a
// type that is not Exact or RegularExpression, and a regular expression that Go's regexp
// (Traefik's) cannot compile. fld is their path.
func validateHeaderMatches(ms []webappv1.HeaderRouteMatch, fld *field.Path, required string) field.ErrorList {
	errs := validateCount(len(ms), webappv1.MaxHeaderRouteMatches, fld, required)
	for i, m := range ms {
		headers := fld.Index(i).Child("headers")
		errs = append(errs, validateCount(len(m.Headers), webappv1.MaxHeaderMatches, headers, "a match needs at least one header")...)
		seen := map[string]bool{}
		for j, hm := range m.Headers {
			at := headers.Index(j)
			switch {
			case hm.Name == "":
				errs = append(errs, field.Required(at.Child("name"), ""))
			case len(hm.Name) > webappv1.MaxHeaderNameLength:
				errs = append(errs, field.TooLong(at.Child("name"), Short(hm.Name), webappv1.MaxHeaderNameLength))
			case !headerNameChars.MatchString(hm.Name):
				errs = append(errs, field.Invalid(at.Child("name"), Short(hm.Name), "must be an HTTP header name: letters, digits and !#$%&'*+-.^_`|~"))
			case seen[strings.ToLower(hm.Name)]:
				errs = append(errs, field.Duplicate(at.Child("name"), Short(hm.Name)))
			}
			seen[strings.ToLower(hm.Name)] = true
			switch {
			case hm.Value == "":
				errs = append(errs, field.Required(at.Child("value"), ""))
			case len(hm.Value) > webappv1.MaxHeaderValueLength:
				errs = append(errs, field.TooLong(at.Child("value"), Short(hm.Value), webappv1.MaxHeaderValueLength))
			case !headerValueChars.MatchString(hm.Value):
				errs = append(errs, field.Invalid(at.Child("value"), Short(hm.Value), "must be printable ASCII, with single spaces or tabs between characters"))
			}
			switch hm.Type {
			case "", webappv1.HeaderMatchExact:
			case webappv1.HeaderMatchRegularExpression:
				if _, err := regexp.Compile(hm.Value); err != nil && hm.Value != "" {
					errs = append(errs, field.Invalid(at.Child("value"), Short(hm.Value), "must be a regular expression Go's regexp reads, as Traefik does: "+strings.TrimPrefix(err.Error(), "error parsing regexp: ")))
				}
			default:
				errs = append(errs, field.NotSupported(at.Child("type"), Short(string(hm.Type)), []webappv1.HeaderMatchType{webappv1.HeaderMatchExact, webappv1.HeaderMatchRegularExpression}))
			}
		}
	}
	return errs
}

package validation

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// rising returns n steps whose weights rise by one from 1, each valid on its own.
func rising(n int) []webappv1.CanaryStep {
	steps := make([]webappv1.CanaryStep, n)
	for i := range steps {
		steps[i].Weight = int32(i + 1)
	}
	return steps
}

func TestValidateRollout(t *testing.T) {
	canary := func(c webappv1.Canary) *webappv1.Rollout { return &webappv1.Rollout{Canary: &c} }
	step := func(weight int32) webappv1.CanaryStep { return webappv1.CanaryStep{Weight: weight} }
	pause := func(seconds int32) webappv1.CanaryStep {
		return webappv1.CanaryStep{Weight: 10, PauseSeconds: new(seconds)}
	}
	track := map[string]string{webappv1.LabelTrack: webappv1.TrackCanary}
	tests := []struct {
		name      string
		rollout   *webappv1.Rollout
		podLabels map[string]string
		want      []fieldErr
	}{
		{"no rollout", nil, track, nil},
		{"a rollout without canary", &webappv1.Rollout{}, track, nil},
		{"one step", canary(webappv1.Canary{Steps: []webappv1.CanaryStep{step(10)}}), nil, nil},
		{"no step", canary(webappv1.Canary{}), nil, []fieldErr{required("spec.rollout.canary.steps")}},
		{"as many steps as allowed", canary(webappv1.Canary{Steps: rising(webappv1.MaxCanarySteps)}), nil, nil},
		{"one step too many", canary(webappv1.Canary{Steps: rising(webappv1.MaxCanarySteps + 1)}), nil,
			[]fieldErr{tooMany("spec.rollout.canary.steps").of(webappv1.MaxCanarySteps + 1)}},
		{"weights at the bounds", canary(webappv1.Canary{Steps: []webappv1.CanaryStep{step(1), step(webappv1.MaxCanaryWeight)}}), nil, nil},
		{"a weight of 0", canary(webappv1.Canary{Steps: []webappv1.CanaryStep{step(0)}}), nil,
			[]fieldErr{invalid("spec.rollout.canary.steps[0].weight").of(int32(0)).with(fmt.Sprintf("between 1 and %d", webappv1.MaxCanaryWeight))}},
		{"a weight past the limit", canary(webappv1.Canary{Steps: []webappv1.CanaryStep{step(50), step(webappv1.MaxCanaryWeight + 1)}}), nil,
			[]fieldErr{invalid("spec.rollout.canary.steps[1].weight").of(int32(webappv1.MaxCanaryWeight + 1))}},
		{"a weight that repeats", canary(webappv1.Canary{Steps: []webappv1.CanaryStep{step(10), step(10)}}), nil,
			[]fieldErr{invalid("spec.rollout.canary.steps[1].weight").with("greater than the weight of step 0 (10)")}},
		{"a weight that falls", canary(webappv1.Canary{Steps: []webappv1.CanaryStep{step(10), step(20), step(15)}}), nil,
			[]fieldErr{invalid("spec.rollout.canary.steps[2].weight").with("step 1 (20)")}},
		{"a weight out of range that also falls", canary(webappv1.Canary{Steps: []webappv1.CanaryStep{step(50), step(0)}}), nil,
			[]fieldErr{invalid("spec.rollout.canary.steps[1].weight").with("between"), invalid("spec.rollout.canary.steps[1].weight").with("rise strictly")}},
		{"pauseSeconds at the bounds", canary(webappv1.Canary{Steps: []webappv1.CanaryStep{pause(0), {Weight: 20, PauseSeconds: new(int32(webappv1.MaxCanaryPauseSeconds))}}}), nil, nil},
		{"pauseSeconds below 0", canary(webappv1.Canary{Steps: []webappv1.CanaryStep{pause(-1)}}), nil,
			[]fieldErr{invalid("spec.rollout.canary.steps[0].pauseSeconds").of(int32(-1))}},
		{"pauseSeconds past the limit", canary(webappv1.Canary{Steps: []webappv1.CanaryStep{pause(webappv1.MaxCanaryPauseSeconds + 1)}}), nil,
			[]fieldErr{invalid("spec.rollout.canary.steps[0].pauseSeconds").of(int32(webappv1.MaxCanaryPauseSeconds + 1))}},
		{"maxFailedChecks at the bounds", canary(webappv1.Canary{Steps: rising(1), MaxFailedChecks: new(int32(webappv1.MaxFailedChecksLimit))}), nil, nil},
		{"maxFailedChecks 1", canary(webappv1.Canary{Steps: rising(1), MaxFailedChecks: new(int32(1))}), nil, nil},
		{"maxFailedChecks 0", canary(webappv1.Canary{Steps: rising(1), MaxFailedChecks: new(int32(0))}), nil,
			[]fieldErr{invalid("spec.rollout.canary.maxFailedChecks").of(int32(0))}},
		{"maxFailedChecks past the limit", canary(webappv1.Canary{Steps: rising(1), MaxFailedChecks: new(int32(webappv1.MaxFailedChecksLimit + 1))}), nil,
			[]fieldErr{invalid("spec.rollout.canary.maxFailedChecks").of(int32(webappv1.MaxFailedChecksLimit + 1))}},
		{"scaleDownDelaySeconds at the bounds", canary(webappv1.Canary{Steps: rising(1), ScaleDownDelaySeconds: new(int32(webappv1.MaxScaleDownDelaySeconds))}), nil, nil},
		{"scaleDownDelaySeconds 0", canary(webappv1.Canary{Steps: rising(1), ScaleDownDelaySeconds: new(int32(0))}), nil, nil},
		{"scaleDownDelaySeconds past the limit", canary(webappv1.Canary{Steps: rising(1), ScaleDownDelaySeconds: new(int32(webappv1.MaxScaleDownDelaySeconds + 1))}), nil,
			[]fieldErr{invalid("spec.rollout.canary.scaleDownDelaySeconds").of(int32(webappv1.MaxScaleDownDelaySeconds + 1))}},
		{"podLabels that set the track label", canary(webappv1.Canary{Steps: rising(1)}), track,
			[]fieldErr{invalid("spec.podLabels[" + webappv1.LabelTrack + "]").of(webappv1.TrackCanary).with("marks the canary's pods")}},
		{"podLabels that set the track label to nothing", canary(webappv1.Canary{Steps: rising(1)}), map[string]string{webappv1.LabelTrack: ""}, []fieldErr{invalid("spec.podLabels[" + webappv1.LabelTrack + "]")}},
		{"other podLabels", canary(webappv1.Canary{Steps: rising(1)}), map[string]string{"team": "a"}, nil},
		{"every rule at once, in order", canary(webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 0, PauseSeconds: new(int32(-1))}}, MaxFailedChecks: new(int32(0))}), track,
			[]fieldErr{
				invalid("spec.podLabels[" + webappv1.LabelTrack + "]"),
				invalid("spec.rollout.canary.steps[0].weight"),
				invalid("spec.rollout.canary.steps[0].pauseSeconds"),
				invalid("spec.rollout.canary.maxFailedChecks"),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := webappv1.WebAppSpec{Rollout: tt.rollout, PodLabels: tt.podLabels}
			checkErrs(t, validateRollout(&s, spec), tt.want...)
		})
	}
}

func TestValidateRollbackWindow(t *testing.T) {
	tests := []struct {
		name      string
		revisions int32
		want      []fieldErr
	}{
		{"1, the previous revision alone", 1, nil},
		{"the most", webappv1.MaxRollbackWindowRevisions, nil},
		{"0", 0, []fieldErr{invalid("spec.rollout.canary.rollbackWindow.revisions").of(int32(0)).with("between 1 and 10")}},
		{"past the most", webappv1.MaxRollbackWindowRevisions + 1, []fieldErr{invalid("spec.rollout.canary.rollbackWindow.revisions").of(int32(webappv1.MaxRollbackWindowRevisions + 1))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := webappv1.WebAppSpec{Rollout: &webappv1.Rollout{Canary: &webappv1.Canary{Steps: rising(1), RollbackWindow: &webappv1.RollbackWindow{Revisions: tt.revisions}}}}
			checkErrs(t, validateRollout(&s, spec), tt.want...)
		})
	}
}

func TestValidateHeaderRoute(t *testing.T) {
	header := func(name, value string) webappv1.HeaderMatch { return webappv1.HeaderMatch{Name: name, Value: value} }
	regex := func(name, value string) webappv1.HeaderMatch {
		return webappv1.HeaderMatch{Name: name, Value: value, Type: webappv1.HeaderMatchRegularExpression}
	}
	match := func(h ...webappv1.HeaderMatch) webappv1.HeaderRouteMatch {
		return webappv1.HeaderRouteMatch{Headers: h}
	}
	route := func(m ...webappv1.HeaderRouteMatch) *webappv1.CanaryHeaderRoute {
		return &webappv1.CanaryHeaderRoute{Matches: m}
	}
	tester := route(match(header("X-Canary", "always")))
	many := func(n int, f func(i int) webappv1.HeaderMatch) []webappv1.HeaderMatch {
		out := make([]webappv1.HeaderMatch, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	analysis := &webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{{Name: webappv1.MetricRequestSuccessRate, ThresholdRange: webappv1.ThresholdRange{Min: new(99.0)}}}}
	const at = "spec.rollout.canary.headerRoute"
	tests := []struct {
		name    string
		canary  webappv1.Canary
		noRoute bool
		want    []fieldErr
	}{
		{"a header, and a first step of weight 0", webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 0}, {Weight: 50}}, HeaderRoute: tester}, false, nil},
		{"a cookie by a regular expression on the Cookie header", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(regex("Cookie", "(^|; *)canary=always(;|$)")))}, false, nil},
		{"two matches, either of which sends a request, each of several headers", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(header("X-Canary", "always"), header("X-Team", "shop")), match(regex("Cookie", "canary=always")))}, false, nil},
		{"as many matches and headers as the HTTPRoute takes", webappv1.Canary{Steps: rising(1), HeaderRoute: route(slices.Repeat([]webappv1.HeaderRouteMatch{match(many(webappv1.MaxHeaderMatches, func(i int) webappv1.HeaderMatch { return header(fmt.Sprintf("X-%d", i), "1") })...)}, webappv1.MaxHeaderRouteMatches)...)}, false, nil},
		{"a name and a value at their longest", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(header(strings.Repeat("x", webappv1.MaxHeaderNameLength), strings.Repeat("v", webappv1.MaxHeaderValueLength))))}, false, nil},
		{"Include and Exclude", webappv1.Canary{Steps: rising(1), Analysis: analysis, HeaderRoute: &webappv1.CanaryHeaderRoute{Matches: tester.Matches, Analysis: webappv1.HeaderRouteExclude}}, false, nil},
		{"a step of weight 0 without a header route", webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 0}}}, false,
			[]fieldErr{invalid("spec.rollout.canary.steps[0].weight").of(int32(0)).with("between 1 and 100")}},
		{"a second step of weight 0, even with a header route", webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 0}, {Weight: 0}}, HeaderRoute: tester}, false,
			[]fieldErr{invalid("spec.rollout.canary.steps[1].weight").with("between 1 and 100"), invalid("spec.rollout.canary.steps[1].weight").with("rise strictly")}},
		{"no spec.route", webappv1.Canary{Steps: rising(1), HeaderRoute: tester}, true, []fieldErr{invalid(at).with("needs spec.route")}},
		{"no match", webappv1.Canary{Steps: rising(1), HeaderRoute: route()}, false, []fieldErr{required(at + ".matches")}},
		{"one match too many", webappv1.Canary{Steps: rising(1), HeaderRoute: route(slices.Repeat([]webappv1.HeaderRouteMatch{match(header("X-Canary", "1"))}, webappv1.MaxHeaderRouteMatches+1)...)}, false,
			[]fieldErr{tooMany(at + ".matches")}},
		{"a match without headers", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match())}, false, []fieldErr{required(at + ".matches[0].headers")}},
		{"one header too many", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(many(webappv1.MaxHeaderMatches+1, func(i int) webappv1.HeaderMatch { return header(fmt.Sprintf("X-%d", i), "1") })...))}, false,
			[]fieldErr{tooMany(at + ".matches[0].headers")}},
		{"a name that is not a header's", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(header("X Canary", "1")))}, false,
			[]fieldErr{invalid(at + ".matches[0].headers[0].name").of("X Canary").with("HTTP header name")}},
		{"a name too long", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(header(strings.Repeat("x", webappv1.MaxHeaderNameLength+1), "1")))}, false,
			[]fieldErr{tooLong(at + ".matches[0].headers[0].name")}},
		{"no name, no value", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(header("", "")))}, false,
			[]fieldErr{required(at + ".matches[0].headers[0].name"), required(at + ".matches[0].headers[0].value")}},
		{"a name twice, case aside", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(header("X-Canary", "1"), header("x-canary", "2")))}, false,
			[]fieldErr{duplicate(at + ".matches[0].headers[1].name").of("x-canary")}},
		{"the same name in two matches", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(header("X-Canary", "1")), match(header("X-Canary", "2")))}, false, nil},
		{"a value too long", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(header("X-Canary", strings.Repeat("v", webappv1.MaxHeaderValueLength+1))))}, false,
			[]fieldErr{tooLong(at + ".matches[0].headers[0].value")}},
		{"a value with a leading space", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(header("X-Canary", " always")))}, false,
			[]fieldErr{invalid(at + ".matches[0].headers[0].value").with("printable ASCII")}},
		{"a value with a newline", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(header("X-Canary", "a\nb")))}, false,
			[]fieldErr{invalid(at + ".matches[0].headers[0].value")}},
		{"a regular expression Go cannot read", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(regex("Cookie", "canary=(always")))}, false,
			[]fieldErr{invalid(at + ".matches[0].headers[0].value").of("canary=(always").with("missing closing )")}},
		{"the same text, Exact, is not read as one", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(header("Cookie", "canary=(always")))}, false, nil},
		{"a type that is not one", webappv1.Canary{Steps: rising(1), HeaderRoute: route(match(webappv1.HeaderMatch{Name: "X-Canary", Value: "1", Type: "Prefix"}))}, false,
			[]fieldErr{notSupported(at + ".matches[0].headers[0].type")}},
		{"an analysis that is not one", webappv1.Canary{Steps: rising(1), HeaderRoute: &webappv1.CanaryHeaderRoute{Matches: tester.Matches, Analysis: "Sometimes"}}, false,
			[]fieldErr{notSupported(at + ".analysis")}},
		{"Exclude with an analysis and a step of weight 0", webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 0}, {Weight: 50}}, Analysis: analysis, HeaderRoute: &webappv1.CanaryHeaderRoute{Matches: tester.Matches, Analysis: webappv1.HeaderRouteExclude}}, false,
			[]fieldErr{invalid(at + ".analysis").with("no request to judge")}},
		{"Exclude and a step of weight 0, with no analysis", webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 0}, {Weight: 50}}, HeaderRoute: &webappv1.CanaryHeaderRoute{Matches: tester.Matches, Analysis: webappv1.HeaderRouteExclude}}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.canary
			s := webappv1.WebAppSpec{Rollout: &webappv1.Rollout{Canary: &c}}
			if !tt.noRoute {
				s.Route = &webappv1.Route{Hostnames: []gatewayv1.Hostname{"shop.example.com"}}
			}
			checkErrs(t, validateRollout(&s, spec), tt.want...)
		})
	}
}

func TestValidateBlueGreen(t *testing.T) {
	preview := webappv1.BlueGreenPreview{Matches: []webappv1.HeaderRouteMatch{{Headers: []webappv1.HeaderMatch{{Name: "X-Preview", Value: "1"}}}}}
	bg := func(b webappv1.BlueGreen) *webappv1.Rollout { return &webappv1.Rollout{BlueGreen: &b} }
	route := &webappv1.Route{Path: "/"}
	const at = "spec.rollout.blueGreen"
	track := map[string]string{webappv1.LabelTrack: webappv1.TrackCanary}
	tests := []struct {
		name      string
		rollout   *webappv1.Rollout
		route     *webappv1.Route
		podLabels map[string]string
		want      []fieldErr
	}{
		{"a preview with a route", bg(webappv1.BlueGreen{Preview: preview}), route, nil, nil},
		{"every bound at its limit", bg(webappv1.BlueGreen{Preview: preview, AutoPromotionSeconds: new(int32(webappv1.MaxCanaryPauseSeconds)),
			ScaleDownDelaySeconds: new(int32(webappv1.MaxScaleDownDelaySeconds)), MaxFailedChecks: new(int32(webappv1.MaxFailedChecksLimit)),
			RollbackWindow: &webappv1.RollbackWindow{Revisions: webappv1.MaxRollbackWindowRevisions}}), route, nil, nil},
		{"no route", bg(webappv1.BlueGreen{Preview: preview}), nil, nil, []fieldErr{invalid(at).with("needs spec.route")}},
		{"no preview match", bg(webappv1.BlueGreen{}), route, nil, []fieldErr{required(at + ".preview.matches").with("no request reaches the new version")}},
		{"a preview header that is no header name", bg(webappv1.BlueGreen{Preview: webappv1.BlueGreenPreview{Matches: []webappv1.HeaderRouteMatch{{Headers: []webappv1.HeaderMatch{{Name: "X Preview", Value: "1"}}}}}}), route, nil,
			[]fieldErr{invalid(at + ".preview.matches[0].headers[0].name")}},
		{"autoPromotionSeconds below 0", bg(webappv1.BlueGreen{Preview: preview, AutoPromotionSeconds: new(int32(-1))}), route, nil, []fieldErr{invalid(at + ".autoPromotionSeconds").of(int32(-1))}},
		{"maxFailedChecks 0", bg(webappv1.BlueGreen{Preview: preview, MaxFailedChecks: new(int32(0))}), route, nil, []fieldErr{invalid(at + ".maxFailedChecks").of(int32(0))}},
		{"scaleDownDelaySeconds past the limit", bg(webappv1.BlueGreen{Preview: preview, ScaleDownDelaySeconds: new(int32(webappv1.MaxScaleDownDelaySeconds + 1))}), route, nil,
			[]fieldErr{invalid(at + ".scaleDownDelaySeconds")}},
		{"rollbackWindow of 0", bg(webappv1.BlueGreen{Preview: preview, RollbackWindow: &webappv1.RollbackWindow{}}), route, nil, []fieldErr{invalid(at + ".rollbackWindow.revisions")}},
		{"podLabels that set the track label", bg(webappv1.BlueGreen{Preview: preview}), route, track,
			[]fieldErr{invalid("spec.podLabels[" + webappv1.LabelTrack + "]").with("rollout.blueGreen")}},
		{"canary and blueGreen at once", &webappv1.Rollout{Canary: &webappv1.Canary{Steps: rising(1)}, BlueGreen: &webappv1.BlueGreen{Preview: preview}}, route, nil,
			[]fieldErr{forbidden(at).with("set one")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := webappv1.WebAppSpec{Rollout: tt.rollout, Route: tt.route, PodLabels: tt.podLabels}
			checkErrs(t, validateRollout(&s, spec), tt.want...)
		})
	}
}

package validation

import (
	"fmt"
	"testing"

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

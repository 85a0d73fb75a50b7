package canary

import (
	"fmt"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// Check is one of the canary's checks, run while it is at a step of the spec's revision by the
// row "the checks run" of Transitions. The first check that fails is the call's verdict.
type Check struct {
	// Name names it in the docs.
	Name string
	// Reads says what of the Input and the status it reads.
	Reads string
	// Fails says why the canary fails it, in a sentence; "" when it passes.
	Fails func(*state) string
	// Rebase, when not nil, moves the check's baseline in the status to what is observed now.
	// It runs whenever a failure counts, whichever check failed.
	Rebase func(*state)
}

// Checks are the canary's checks, in the order they are run. A new check is one entry here,
// the Input field it reads, and its line in docs/canary.md.
var Checks = []Check{
	{Name: "deployment", Reads: "Input.Canary.Failure: ReplicaFailure or ProgressDeadlineExceeded of the canary Deployment's current generation, while it runs the revision", Fails: deploymentFails},
	{Name: "pods-start", Reads: "Input.Pods.Trouble, with pod diagnosis: why the canary's pods cannot start", Fails: podsCannotStart},
	{Name: "restarts", Reads: "Input.Pods.Restarts, with pod diagnosis, against status.canary.restarts", Fails: podsRestarted, Rebase: rebaseRestarts},
	{Name: "analysis", Reads: "status.canary.analysis, when this call recorded a check that failed (Input.Measurement, judged against spec.rollout.canary.analysis)", Fails: analysisFails},
	{Name: "availability", Reads: "Input.Canary's available pods, against the step's pauseSeconds plus the availability grace from status.canary.stepStartTime or scaleTime", Fails: podsUnavailable},
}

func deploymentFails(s *state) string {
	if c := s.in.Canary; c != nil && s.runsRevision() {
		return c.Failure
	}
	return ""
}

func podsCannotStart(s *state) string {
	if p := s.in.Pods; p.Diagnosed && p.Trouble != "" {
		return "its pods cannot start: " + p.Trouble
	}
	return ""
}

func podsRestarted(s *state) string {
	if p := s.in.Pods; p.Diagnosed && p.Restarts > s.next.Restarts {
		return fmt.Sprintf("its containers restarted (%d restarts in all, %d before)", p.Restarts, s.next.Restarts)
	}
	return ""
}

// podsUnavailable fails once the availability deadline (availableBy) has passed with fewer of
// the canary's pods available than its weight needs, or than were asked for when fewer were.
// rebaseRestarts makes the restarts seen now the baseline of the next restarts check.
func rebaseRestarts(s *state) { s.next.Restarts = s.in.Pods.Restarts }

func podsUnavailable(s *state) string {
	want := s.replicasFor(s.target())
	if asked := s.next.Replicas; asked > 0 && asked < want {
		want = asked // the pods asked for now have until a deadline of their own
	}
	deadline, ok := s.availableBy()
	if !ok || s.in.Now.Before(deadline) || s.available() >= want {
		return ""
	}
	d, _ := s.pause()
	return fmt.Sprintf("%d of %d canary pods available %s after they were asked for", s.available(), want, d+webappv1.CanaryAvailabilityGrace)
}

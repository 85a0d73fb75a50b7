// Package canary is the state machine of a WebApp's canary: one pure function, Next, from what
// the spec asks (spec.rollout.canary), the canary status Metacontroller sent back, what is
// observed of the two Deployments, their Services and the HTTPRoute, the promote and abort
// annotations, and the time, to the next canary status and what the children should be: the
// route's weights, the canary Deployment's form, count and annotations, which template the
// stable Deployment runs, and what the WebApp's status says of the canary.
//
// The machine is its table. Transitions is read once per call, top to bottom: Record rows fire
// whenever they match, and of the Move rows only the first that matches does. Every change of
// the canary status is a row's (table.go). Checks are a list that one row runs (checks.go).
// What the children are follows from the phase reached and the observations alone (Stages,
// stages.go), so that a restart of the hook or of Metacontroller at any moment loses nothing.
//
// The package remembers nothing between calls and knows nothing of Metacontroller, HTTP or
// JSON: package sync fills in an Input, facts only, and applies the Output.
package canary

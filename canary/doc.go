// Package canary is the state machine of a WebApp's canary: one pure function, Next, from what
// the spec asks (spec.rollout.canary), the canary status Metacontroller sent back, what is
// observed of the two Deployments, their Services and the HTTPRoute, and the time, to the next
// canary status and what the children should be: the route's weights, each Deployment's
// replicas, and which template the stable Deployment runs.
//
// The package remembers nothing between calls and knows nothing of Metacontroller, HTTP or
// JSON: sync fills in an Input from a request and builds the children from the Output. Its
// transitions are a table, Transitions, read in order; the first whose phase and guard match
// fires. What the children are in each phase (Output) follows from the phase and the
// observations alone, so that a restart of the hook or of Metacontroller at any moment loses
// nothing.
package canary

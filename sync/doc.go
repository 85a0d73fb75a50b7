// Package sync decides, for one WebApp, which children should exist and what its status is.
//
// The decision is a set of pure functions over typed values, with no HTTP, no JSON decoding and
// no clock of its own: sync/wire turns a Metacontroller hook request into a Request of typed
// views, Sync and Finalize turn a Request into a Response, and Response.MarshalJSON writes the
// answer Metacontroller reads. The spec's rules are api/v1/validation's; Validate applies them.
// Children are built as typed Kubernetes objects (appsv1.Deployment, corev1.Service) from one
// labels map, and written in apply form only at that edge. The observed request is never
// modified.
//
// Each file has one job. request.go holds the decision's input types (the views sync/wire
// fills in) and kinds.go the table of kinds (Kinds), facts only; deployment.go is the one
// reading of an observed Deployment. sync.go tells Sync and Finalize, which build the children
// in children.go, route.go and kept.go and put the status together in one pass in status.go
// (route_status.go reads the route's). canary.go translates for the canary's machine (package
// canary): the request into its input, and its decision into the children and the status, in
// one step. config.go, pods.go and customize.go serve the related objects; validate.go answers
// Invalid through api/v1/validation; messages.go words sentences; encode.go writes the answer.
package sync

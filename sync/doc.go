// Package sync decides, for one WebApp, which children should exist and what its status is.
//
// The decision is a set of pure functions over typed values, with no HTTP and no clock of its
// own: DecodeRequest turns a Metacontroller hook request into a Request, Sync and Finalize turn a
// Request into a Response, and Response.MarshalJSON writes the answer Metacontroller reads.
// Children are built as typed Kubernetes objects (appsv1.Deployment, corev1.Service) from one
// labels map, and written in apply form only at that edge. The observed request is never
// modified.
//
// Each file has one job. request.go holds the decision's input types and kinds.go the table of
// kinds (Kinds); decode*.go read Metacontroller's wire format; validate*.go check a spec section
// by section; sync.go tells Sync and Finalize, which build the children in children.go, route.go
// and kept.go and put the status together once in status.go (route_status.go reads the route's); config.go, pods.go and customize.go
// serve the related objects; encode.go writes the answer.
package sync

// Package sync decides, for one WebApp, which children should exist and what its status is.
//
// The decision is a set of pure functions over typed values, with no HTTP and no clock of its
// own: DecodeRequest turns a Metacontroller hook request into a Request, Sync and Finalize turn a
// Request into a Response, and Response.MarshalJSON writes the answer Metacontroller reads.
// Children are built as typed Kubernetes objects (appsv1.Deployment, corev1.Service) from one
// labels map, and written in apply form only at that edge. The observed request is never
// modified.
package sync

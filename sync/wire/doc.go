// Package wire reads Metacontroller's hook requests: the CompositeController wire format, in both
// hook versions, turned into the typed views the decision reads (sync.Request, sync.Child and
// the Observed and Related views). It is the only package that imports json/v2 and knows byte
// offsets in a request body; package sync never sees JSON except the observed form of a child it
// keeps unchanged (sync.Child.Raw).
//
// DecodeRequest is the whole of it; Deployment reads one Deployment had another way as
// DecodeRequest reads a request's (kubectl webapp's revisions). request.go reads the request and the parent, its spec and
// its previous conditions; children.go the observed children, each of a kind the hook builds
// straight into its view (views, this package's table beside sync.Kinds); related.go the related
// objects, digesting ConfigMap and Secret data at once; errors.go turns every decode error into
// a *RequestError that names the field.
package wire

// Package v1 defines the WebApp API (example.com/v1): the spec a user writes and the status the
// hook reports.
//
// The types are the one source of truth. Their kubebuilder markers generate the CRD in crds/ (run
// `go generate ./...` after changing them), the hook decodes parent.spec straight into
// WebAppSpec, and Default applies every default: those the CRD schema declares, for specs that
// reach the hook without passing through that schema (an older CRD, or `webapp-hook render`),
// and those that depend on other fields, which no schema can declare.
//
// The labels and annotations the hook owns on pods (labels.go) and the limits of the spec
// (types.go) are constants here, beside the markers that state the same rules; the hook's own
// check of those rules is the validation package below this one.
//
// +kubebuilder:object:generate=false
// +groupName=example.com
package v1

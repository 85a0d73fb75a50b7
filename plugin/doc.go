// Package plugin is kubectl webapp, the kubectl plugin of the WebApp resource: get and list a
// WebApp's whole story, and promote, abort, retry, undo and set image on its canary, each by one
// patch that names what it acts on.
//
// Main is one run: it parses the command line (spf13/cobra, with kubectl's own flags from
// k8s.io/cli-runtime), runs the command with the user's own credentials, so that RBAC decides
// what it may do, and maps what came of it to an exit code, in one place (ExitCode): 0 done, 1 an
// error, 2 a bad command line, 3 refused because there is nothing to act on, 4 forbidden by the
// API server. The screens are package screen's; the revisions package revision's.
//
// A command that changes something refuses, before it patches, when there is nothing to act on:
// no canary, a phase that does not allow it, a request already made and not yet acted on, or a
// status the hook has not brought up to the latest spec. It then patches once: the annotations
// of api/v1 name the revision they act on (status.canary.revision), and a spec edit carries the
// resourceVersion it was computed from, so that neither can act on a later revision.
package plugin

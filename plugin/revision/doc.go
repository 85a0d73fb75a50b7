// Package revision names pod templates as the hook names them, and finds the spec that asks for
// the template a Deployment runs.
//
// A revision is status.canary.revision, the value the promote, abort, promote-step and retry
// annotations take: a digest of the pod template the hook builds (sync.TemplateHash). The stable
// Deployment carries no revision of its own; its revision is the digest of the template
// Metacontroller last applied to it, the hook's own answer, as the hook itself reads it
// (Applied, Of). Desired asks the hook's own code, sync.PodTemplate, the function of the spec
// that Sync builds the template with, with the stable Deployment read as sync/wire reads it, so
// that what kubectl webapp computes and what the hook computes cannot drift apart. Rollback is what
// kubectl webapp undo writes: the spec whose template is the stable Deployment's, checked by
// that same code before anything is written.
package revision

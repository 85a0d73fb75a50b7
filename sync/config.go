package sync

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// AnnotationConfigHash is put on the pod template, so that a change of the data of a ConfigMap or
// Secret the pods use rolls them: a digest of the digests of that data (configDigest), which tells
// nothing about the data itself.
const AnnotationConfigHash = "webapp.example.com/config-hash"

// configRef is a ConfigMap or Secret the spec references, where, and how.
type configRef struct {
	ConfigRef
	// kind is ConfigMapKind or SecretKind, ConfigRef.Kind's.
	kind *Kind
	// Field is the spec path of the reference, for messages.
	Field string
	// Optional is the reference's optional: a missing object is then no problem.
	Optional bool
	// Tracked says that a change of its data rolls the pods (restartOnConfigChange).
	Tracked bool
}

// configRefs lists the ConfigMaps and Secrets the spec references, in spec order: env[].valueFrom
// (tracked only when restartOnConfigChange is true), envFrom and volumes (tracked unless it is
// false).
func configRefs(p *Parent) []configRef {
	spec := &p.Spec
	restart := spec.RestartOnConfigChange
	tracked := restart == nil || *restart
	var refs []configRef
	add := func(kind *Kind, name, field string, optional *bool, track bool) {
		if name != "" {
			refs = append(refs, configRef{ConfigRef{kind.Kind, name}, kind, field, optional != nil && *optional, track})
		}
	}
	for i, e := range spec.Env {
		if v := e.ValueFrom; v != nil {
			field := fmt.Sprintf("spec.env[%d].valueFrom", i)
			if r := v.ConfigMapKeyRef; r != nil {
				add(ConfigMapKind, r.Name, field+".configMapKeyRef", r.Optional, restart != nil && *restart)
			}
			if r := v.SecretKeyRef; r != nil {
				add(SecretKind, r.Name, field+".secretKeyRef", r.Optional, restart != nil && *restart)
			}
		}
	}
	for i, e := range spec.EnvFrom {
		field := fmt.Sprintf("spec.envFrom[%d]", i)
		if r := e.ConfigMapRef; r != nil {
			add(ConfigMapKind, r.Name, field+".configMapRef", r.Optional, tracked)
		}
		if r := e.SecretRef; r != nil {
			add(SecretKind, r.Name, field+".secretRef", r.Optional, tracked)
		}
	}
	for i, v := range spec.Volumes {
		field := fmt.Sprintf("spec.volumes[%d]", i)
		if c := v.ConfigMap; c != nil {
			add(ConfigMapKind, c.Name, field+".configMap", c.Optional, tracked)
		}
		if s := v.Secret; s != nil {
			add(SecretKind, s.SecretName, field+".secret", s.Optional, tracked)
		}
	}
	return refs
}

// AnnotationPartialConfigHash is put on the Deployment itself, not on its pod template, while the
// hook knows some of the kinds of objects the pods use but not all: Metacontroller sends
// ConfigMaps but no Secrets when the hook is served over plain HTTP. It is the digest of the data
// of the tracked objects of the kinds sent, as the Deployment was last applied, so that a change
// of that data, and only a change, rolls the pods while the pod template keeps what it has for the
// kinds not sent. Changing it rolls no pod.
const AnnotationPartialConfigHash = "webapp.example.com/partial-config-hash"

// configState is what the related ConfigMaps and Secrets mean for the Deployment.
type configState struct {
	// missing is the first reference, not optional, to an object that does not exist; nil if none.
	missing *configRef
	// hash is the AnnotationConfigHash value for the pod template; "" for none.
	hash string
	// partialHash is the AnnotationPartialConfigHash value for the Deployment: "" unless some
	// tracked kinds were sent and some not.
	partialHash string
}

// checkConfig checks the spec's references against the related ConfigMaps and Secrets, kind by
// kind. A kind Metacontroller did not send (no customize hook; Secrets over plain HTTP) tells
// nothing: no object of it counts as missing, and its part of the pod template's hash is what the
// observed Deployment has. So:
//   - every tracked kind sent: the hash of every tracked object's data, as it always was;
//   - no tracked kind sent: the observed hash, kept, so that a change of hook setup rolls nothing;
//   - some sent, some not (ConfigMaps but no Secrets, over plain HTTP): a change of the data of
//     the kinds sent (partialHash, against the observed Deployment's AnnotationPartialConfigHash)
//     makes the hash partialHash, which rolls the pods; while that data does not change, the
//     observed hash is kept. A Deployment without the annotation yet (made by an older hook, or
//     over TLS) keeps its hash too, so that neither an upgrade of the hook nor a move from TLS to
//     plain HTTP rolls the pods; the move from plain HTTP to TLS rolls them once, as the hash then
//     covers the Secrets too.
func checkConfig(p *Parent, rel *Related, observed *ObservedDeployment) configState {
	var st configState
	refs := configRefs(p)
	tracked := map[ConfigRef]bool{} // the tracked references of the kinds sent
	unsent := false                 // a tracked reference of a kind not sent
	for i := range refs {
		ref := &refs[i]
		sent := rel.Kinds[ref.kind.Key()]
		if _, ok := rel.Config[ref.ConfigRef]; sent && !ok && !ref.Optional && st.missing == nil {
			st.missing = ref
		}
		switch {
		case !ref.Tracked:
		case sent:
			tracked[ref.ConfigRef] = true
		default:
			unsent = true
		}
	}
	switch {
	case !unsent && len(tracked) > 0:
		st.hash = configHash(tracked, rel)
	case !unsent:
	case len(tracked) == 0:
		if observed != nil {
			st.hash = observed.ConfigHash
		}
	default:
		st.partialHash = configHash(tracked, rel)
		switch {
		case observed == nil:
			st.hash = st.partialHash
		case observed.PartialConfigHash == "" || observed.PartialConfigHash == st.partialHash:
			st.hash = observed.ConfigHash
		default:
			st.hash = st.partialHash
		}
	}
	return st
}

// configHash combines the digests of the tracked objects, in a stable order; an absent optional
// object counts as absent.
func configHash(tracked map[ConfigRef]bool, rel *Related) string {
	refs := make([]ConfigRef, 0, len(tracked))
	for ref := range tracked {
		refs = append(refs, ref)
	}
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].Kind != refs[j].Kind {
			return refs[i].Kind < refs[j].Kind
		}
		return refs[i].Name < refs[j].Name
	})
	h := sha256.New()
	for _, ref := range refs {
		digest, ok := rel.Config[ref]
		if !ok {
			digest = "absent"
		}
		fmt.Fprintf(h, "%s/%s=%s\n", ref.Kind, ref.Name, digest)
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// missingMessage says which object is missing, where the spec names it, and what the hook does.
func (st configState) missingMessage(p *Parent, deploymentExists bool) (webappv1.Phase, string, string) {
	reason, phase := webappv1.ReasonConfigMapMissing, webappv1.PhasePending
	if st.missing.kind == SecretKind {
		reason = webappv1.ReasonSecretMissing
	}
	what := fmt.Sprintf("Waiting for %s %s, which %s names, to exist before creating Deployment %s.", st.missing.Kind, st.missing.Name, st.missing.Field, p.Name)
	if deploymentExists {
		phase = webappv1.PhaseDegraded
		what = fmt.Sprintf("%s %s, which %s names, does not exist: Deployment %s is left as it is, so its pods keep running.", st.missing.Kind, st.missing.Name, st.missing.Field, p.Name)
	}
	return phase, reason, what
}

// untrackedSecrets lists, sorted and once each, the Secrets whose data should roll the pods
// (tracked references) when Metacontroller sent no Secrets at all: the customize answer asks for
// them only when the hook is served over TLS (CustomizeOptions.Secrets).
func untrackedSecrets(p *Parent, rel *Related) []string {
	if rel.Kinds[SecretKind.Key()] {
		return nil
	}
	var names []string
	for _, ref := range configRefs(p) {
		if ref.kind == SecretKind && ref.Tracked && !slices.Contains(names, ref.Name) {
			names = append(names, ref.Name)
		}
	}
	sort.Strings(names)
	return names
}

// secretsCondition is the SecretsTracked condition for the Secrets untrackedSecrets lists.
func secretsCondition(names []string) statedCondition {
	msg := fmt.Sprintf("Changes of Secret %s do not roll the pods, and a missing one is not noticed: the hook asks Metacontroller for Secrets only when it is served over TLS, so that none crosses the network in cleartext. Install metacontroller/secure (docs/security.md).", strings.Join(names, ", "))
	return statedCondition{webappv1.ConditionSecretsTracked, false, webappv1.ReasonSecretsNeedTLS, msg}
}

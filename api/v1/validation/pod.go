package validation

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// The rules of the pod around the container: volumes, security, scheduling, pod metadata and
// shutdown, each checked by one function of ValidateSpec.

// validateObjectName reports a reference to an object whose name is empty or not a DNS subdomain.
func validateObjectName(name string, fld *field.Path) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(fld, "")}
	}
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(fld, Short(name), msgs[0])}
	}
	return nil
}

// validateVolumes reports volumes without exactly one valid source, and names or mount paths
// that are not valid or repeat.
func validateVolumes(volumes []webappv1.Volume, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	names, paths := map[string]bool{}, map[string]bool{}
	for i, v := range volumes {
		idx := fld.Index(i)
		if msgs := validation.IsDNS1123Label(v.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(idx.Child("name"), Short(v.Name), msgs[0]))
		} else if names[v.Name] {
			errs = append(errs, field.Duplicate(idx.Child("name"), v.Name))
		}
		names[v.Name] = true
		switch {
		case !path.IsAbs(v.MountPath):
			errs = append(errs, field.Invalid(idx.Child("mountPath"), Short(v.MountPath), "must be an absolute path"))
		case paths[path.Clean(v.MountPath)]:
			errs = append(errs, field.Duplicate(idx.Child("mountPath"), Short(v.MountPath)))
		}
		paths[path.Clean(v.MountPath)] = true
		sources := 0
		if c := v.ConfigMap; c != nil {
			sources++
			errs = append(errs, validateObjectName(c.Name, idx.Child("configMap", "name"))...)
			errs = append(errs, validateItems(c.Items, c.DefaultMode, idx.Child("configMap"))...)
		}
		if s := v.Secret; s != nil {
			sources++
			errs = append(errs, validateObjectName(s.SecretName, idx.Child("secret", "secretName"))...)
			errs = append(errs, validateItems(s.Items, s.DefaultMode, idx.Child("secret"))...)
		}
		if d := v.EmptyDir; d != nil {
			sources++
			if media := []corev1.StorageMedium{corev1.StorageMediumDefault, corev1.StorageMediumMemory}; !slices.Contains(media, d.Medium) {
				errs = append(errs, field.NotSupported(idx.Child("emptyDir", "medium"), Short(string(d.Medium)), media))
			}
			if d.SizeLimit != nil && d.SizeLimit.Sign() < 0 {
				errs = append(errs, field.Invalid(idx.Child("emptyDir", "sizeLimit"), d.SizeLimit.String(), "must be greater than or equal to 0"))
			}
		}
		if sources != 1 {
			errs = append(errs, field.Invalid(idx, field.OmitValueType{}, fmt.Sprintf("needs exactly one of configMap, secret or emptyDir, got %d", sources)))
		}
	}
	return errs
}

// validateItems reports ConfigMap or Secret volume items (fld is the volume source's path) that
// would not make a file inside the volume, and file modes beyond 0777.
func validateItems(items []corev1.KeyToPath, defaultMode *int32, fld *field.Path) field.ErrorList {
	errs := validateMode(defaultMode, fld.Child("defaultMode"))
	for i, it := range items {
		idx := fld.Child("items").Index(i)
		if it.Key == "" {
			errs = append(errs, field.Required(idx.Child("key"), ""))
		}
		if it.Path == "" || path.IsAbs(it.Path) || slices.Contains(strings.Split(it.Path, "/"), "..") {
			errs = append(errs, field.Invalid(idx.Child("path"), Short(it.Path), "must be a relative path without .."))
		}
		errs = append(errs, validateMode(it.Mode, idx.Child("mode"))...)
	}
	return errs
}

// validateMode reports a file mode, when set, beyond 0777.
func validateMode(m *int32, fld *field.Path) field.ErrorList {
	if m != nil && (*m < 0 || *m > 0o777) {
		return field.ErrorList{field.Invalid(fld, *m, "must be a file mode between 0 and 0777 (511)")}
	}
	return nil
}

// validateSecurity reports an unknown securityProfile, and security settings the apiserver would
// refuse: negative user and
// group IDs, and seccomp or AppArmor profiles of an unknown type, or Localhost without a profile
// name (or another type with one).
func validateSecurity(spec *webappv1.WebAppSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if profiles := []webappv1.SecurityProfile{webappv1.SecurityProfileRestricted, webappv1.SecurityProfileNone}; spec.SecurityProfile != "" && !slices.Contains(profiles, spec.SecurityProfile) {
		errs = append(errs, field.NotSupported(fld.Child("securityProfile"), Short(string(spec.SecurityProfile)), profiles))
	}
	if sc := spec.PodSecurityContext; sc != nil {
		f := fld.Child("podSecurityContext")
		for _, id := range []struct {
			name string
			v    *int64
		}{{"runAsUser", sc.RunAsUser}, {"runAsGroup", sc.RunAsGroup}, {"fsGroup", sc.FSGroup}} {
			errs = append(errs, validateID(id.v, f.Child(id.name))...)
		}
		for i, g := range sc.SupplementalGroups {
			errs = append(errs, validateID(&g, f.Child("supplementalGroups").Index(i))...)
		}
		errs = append(errs, validateProfile(profileOf(sc.SeccompProfile), f.Child("seccompProfile"))...)
		errs = append(errs, validateProfile(appArmorOf(sc.AppArmorProfile), f.Child("appArmorProfile"))...)
	}
	if sc := spec.SecurityContext; sc != nil {
		f := fld.Child("securityContext")
		errs = append(errs, validateID(sc.RunAsUser, f.Child("runAsUser"))...)
		errs = append(errs, validateID(sc.RunAsGroup, f.Child("runAsGroup"))...)
		errs = append(errs, validateProfile(profileOf(sc.SeccompProfile), f.Child("seccompProfile"))...)
		errs = append(errs, validateProfile(appArmorOf(sc.AppArmorProfile), f.Child("appArmorProfile"))...)
		if pm := sc.ProcMount; pm != nil {
			if kinds := []corev1.ProcMountType{corev1.DefaultProcMount, corev1.UnmaskedProcMount}; !slices.Contains(kinds, *pm) {
				errs = append(errs, field.NotSupported(f.Child("procMount"), Short(string(*pm)), kinds))
			}
		}
	}
	return errs
}

// validateID reports a user or group ID, when set, below 0.
func validateID(id *int64, fld *field.Path) field.ErrorList {
	if id != nil && *id < 0 {
		return field.ErrorList{field.Invalid(fld, *id, "must be greater than or equal to 0")}
	}
	return nil
}

// profile is a seccomp or AppArmor profile: its type and its localhostProfile.
type profile struct {
	set       bool
	kind      string
	localhost *string
}

func profileOf(p *corev1.SeccompProfile) profile {
	if p == nil {
		return profile{}
	}
	return profile{true, string(p.Type), p.LocalhostProfile}
}

func appArmorOf(p *corev1.AppArmorProfile) profile {
	if p == nil {
		return profile{}
	}
	return profile{true, string(p.Type), p.LocalhostProfile}
}

// validateProfile reports a seccomp or AppArmor profile of an unknown type, Localhost without a
// localhostProfile, or a localhostProfile with another type. Both kinds name their types alike.
func validateProfile(p profile, fld *field.Path) field.ErrorList {
	if !p.set {
		return nil
	}
	types := []string{"RuntimeDefault", "Unconfined", "Localhost"}
	switch {
	case !slices.Contains(types, p.kind):
		return field.ErrorList{field.NotSupported(fld.Child("type"), Short(p.kind), types)}
	case p.kind == "Localhost" && (p.localhost == nil || *p.localhost == ""):
		return field.ErrorList{field.Required(fld.Child("localhostProfile"), "when type is Localhost")}
	case p.kind != "Localhost" && p.localhost != nil:
		return field.ErrorList{field.Forbidden(fld.Child("localhostProfile"), "may only be set when type is Localhost")}
	}
	return nil
}

// validateScheduling reports node selectors, tolerations, affinity and spread constraints the
// apiserver would refuse, and a priorityClassName that cannot name a PriorityClass.
func validateScheduling(spec *webappv1.WebAppSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.NodeSelector) > 0 {
		errs = metav1validation.ValidateLabels(spec.NodeSelector, fld.Child("nodeSelector"))
	}
	for i, t := range spec.Tolerations {
		errs = append(errs, validateToleration(t, fld.Child("tolerations").Index(i))...)
	}
	errs = append(errs, validateAffinity(spec.Affinity, fld.Child("affinity"))...)
	type pair struct{ key, when string }
	var seen map[pair]bool
	for i, c := range spec.TopologySpreadConstraints {
		if seen == nil {
			seen = map[pair]bool{}
		}
		idx := fld.Child("topologySpreadConstraints").Index(i)
		errs = append(errs, validateSpread(c, idx)...)
		if k := (pair{c.TopologyKey, string(c.WhenUnsatisfiable)}); seen[k] {
			errs = append(errs, field.Duplicate(idx, fmt.Sprintf("{%s, %s}", Short(c.TopologyKey), c.WhenUnsatisfiable)))
		} else {
			seen[k] = true
		}
	}
	if name := spec.PriorityClassName; name != "" {
		if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Child("priorityClassName"), Short(name), msgs[0]))
		}
	}
	return errs
}

// validateToleration reports a toleration the apiserver would refuse.
func validateToleration(t corev1.Toleration, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		errs = append(errs, qualifiedName(t.Key, fld.Child("key"))...)
	}
	switch t.Operator {
	case corev1.TolerationOpEqual, "":
		if t.Key == "" {
			errs = append(errs, field.Invalid(fld.Child("operator"), string(t.Operator), "must be Exists when key is empty"))
		}
		if msgs := validation.IsValidLabelValue(t.Value); len(msgs) > 0 {
			errs = append(errs, field.Invalid(fld.Child("value"), Short(t.Value), msgs[0]))
		}
	case corev1.TolerationOpExists:
		if t.Value != "" {
			errs = append(errs, field.Invalid(fld.Child("value"), Short(t.Value), "must be empty when operator is Exists"))
		}
	default:
		errs = append(errs, field.NotSupported(fld.Child("operator"), Short(string(t.Operator)), []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
	}
	effects := []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}
	if t.Effect != "" && !slices.Contains(effects, t.Effect) {
		errs = append(errs, field.NotSupported(fld.Child("effect"), Short(string(t.Effect)), effects))
	}
	if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
		errs = append(errs, field.Invalid(fld.Child("effect"), string(t.Effect), "must be NoExecute when tolerationSeconds is set"))
	}
	return errs
}

// qualifiedName reports a label or taint key that is not a qualified name.
func qualifiedName(key string, fld *field.Path) field.ErrorList {
	if msgs := validation.IsQualifiedName(key); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(fld, Short(key), msgs[0])}
	}
	return nil
}

// validateAffinity reports node selector terms with unknown operators or wrong values, pod
// affinity terms without a topologyKey or with a bad selector, and weights outside [1, 100].
func validateAffinity(a *corev1.Affinity, fld *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	var errs field.ErrorList
	if na := a.NodeAffinity; na != nil {
		f := fld.Child("nodeAffinity")
		if r := na.RequiredDuringSchedulingIgnoredDuringExecution; r != nil {
			rf := f.Child("requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms")
			if len(r.NodeSelectorTerms) == 0 {
				errs = append(errs, field.Required(rf, "must have at least one node selector term"))
			}
			for i, term := range r.NodeSelectorTerms {
				errs = append(errs, validateNodeTerm(term, rf.Index(i))...)
			}
		}
		for i, p := range na.PreferredDuringSchedulingIgnoredDuringExecution {
			pf := f.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(p.Weight, pf.Child("weight"))...)
			errs = append(errs, validateNodeTerm(p.Preference, pf.Child("preference"))...)
		}
	}
	for _, side := range []struct {
		name      string
		required  []corev1.PodAffinityTerm
		preferred []corev1.WeightedPodAffinityTerm
	}{
		{"podAffinity", podAffinity(a.PodAffinity), podPreferred(a.PodAffinity)},
		{"podAntiAffinity", podAntiAffinity(a.PodAntiAffinity), podAntiPreferred(a.PodAntiAffinity)},
	} {
		f := fld.Child(side.name)
		for i, term := range side.required {
			errs = append(errs, validatePodTerm(term, f.Child("requiredDuringSchedulingIgnoredDuringExecution").Index(i))...)
		}
		for i, w := range side.preferred {
			pf := f.Child("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
			errs = append(errs, validateWeight(w.Weight, pf.Child("weight"))...)
			errs = append(errs, validatePodTerm(w.PodAffinityTerm, pf.Child("podAffinityTerm"))...)
		}
	}
	return errs
}

func podAffinity(a *corev1.PodAffinity) []corev1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.RequiredDuringSchedulingIgnoredDuringExecution
}

func podPreferred(a *corev1.PodAffinity) []corev1.WeightedPodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.PreferredDuringSchedulingIgnoredDuringExecution
}

func podAntiAffinity(a *corev1.PodAntiAffinity) []corev1.PodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.RequiredDuringSchedulingIgnoredDuringExecution
}

func podAntiPreferred(a *corev1.PodAntiAffinity) []corev1.WeightedPodAffinityTerm {
	if a == nil {
		return nil
	}
	return a.PreferredDuringSchedulingIgnoredDuringExecution
}

// validateWeight reports a preference weight outside [1, 100].
func validateWeight(w int32, fld *field.Path) field.ErrorList {
	return validateRange(&w, 1, 100, fld)
}

// validateNodeTerm reports node selector requirements with an unknown operator, values where
// the operator takes none, none where it needs some, and a key that is not a label key.
func validateNodeTerm(term corev1.NodeSelectorTerm, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range term.MatchExpressions {
		f := fld.Child("matchExpressions").Index(i)
		errs = append(errs, qualifiedName(r.Key, f.Child("key"))...)
		switch r.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
			if len(r.Values) == 0 {
				errs = append(errs, field.Required(f.Child("values"), "when operator is In or NotIn"))
			}
		case corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			if len(r.Values) > 0 {
				errs = append(errs, field.Forbidden(f.Child("values"), "may not be set when operator is Exists or DoesNotExist"))
			}
		case corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt:
			if len(r.Values) != 1 {
				errs = append(errs, field.Required(f.Child("values"), "must have exactly one value when operator is Gt or Lt"))
			}
		default:
			errs = append(errs, field.NotSupported(f.Child("operator"), Short(string(r.Operator)), []corev1.NodeSelectorOperator{
				corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist, corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt}))
		}
	}
	return errs
}

// validatePodTerm reports a pod affinity term without a topologyKey, or with a label selector
// the apiserver would refuse.
func validatePodTerm(term corev1.PodAffinityTerm, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if term.TopologyKey == "" {
		errs = append(errs, field.Required(fld.Child("topologyKey"), ""))
	} else {
		errs = append(errs, qualifiedName(term.TopologyKey, fld.Child("topologyKey"))...)
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(term.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, fld.Child("labelSelector"))...)
	errs = append(errs, metav1validation.ValidateLabelSelector(term.NamespaceSelector, metav1validation.LabelSelectorValidationOptions{}, fld.Child("namespaceSelector"))...)
	return errs
}

// validateSpread reports a topology spread constraint the apiserver would refuse: maxSkew below
// 1, no topologyKey, an unknown whenUnsatisfiable or node policy, minDomains below 1 or without
// DoNotSchedule, a bad label selector, and matchLabelKeys that are not label keys or that the
// label selector already names.
func validateSpread(c corev1.TopologySpreadConstraint, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if c.MaxSkew < 1 {
		errs = append(errs, field.Invalid(fld.Child("maxSkew"), c.MaxSkew, "must be greater than or equal to 1"))
	}
	if c.TopologyKey == "" {
		errs = append(errs, field.Required(fld.Child("topologyKey"), ""))
	} else {
		errs = append(errs, qualifiedName(c.TopologyKey, fld.Child("topologyKey"))...)
	}
	whens := []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}
	if !slices.Contains(whens, c.WhenUnsatisfiable) {
		errs = append(errs, field.NotSupported(fld.Child("whenUnsatisfiable"), Short(string(c.WhenUnsatisfiable)), whens))
	}
	if m := c.MinDomains; m != nil {
		if *m < 1 {
			errs = append(errs, field.Invalid(fld.Child("minDomains"), *m, "must be greater than or equal to 1"))
		} else if c.WhenUnsatisfiable != corev1.DoNotSchedule {
			errs = append(errs, field.Invalid(fld.Child("minDomains"), *m, "may only be set when whenUnsatisfiable is DoNotSchedule"))
		}
	}
	policies := []corev1.NodeInclusionPolicy{corev1.NodeInclusionPolicyHonor, corev1.NodeInclusionPolicyIgnore}
	for _, p := range []struct {
		name string
		v    *corev1.NodeInclusionPolicy
	}{{"nodeAffinityPolicy", c.NodeAffinityPolicy}, {"nodeTaintsPolicy", c.NodeTaintsPolicy}} {
		if p.v != nil && !slices.Contains(policies, *p.v) {
			errs = append(errs, field.NotSupported(fld.Child(p.name), Short(string(*p.v)), policies))
		}
	}
	errs = append(errs, metav1validation.ValidateLabelSelector(c.LabelSelector, metav1validation.LabelSelectorValidationOptions{}, fld.Child("labelSelector"))...)
	for i, key := range c.MatchLabelKeys {
		f := fld.Child("matchLabelKeys").Index(i)
		errs = append(errs, qualifiedName(key, f)...)
		if c.LabelSelector != nil {
			if _, ok := c.LabelSelector.MatchLabels[key]; ok {
				errs = append(errs, field.Invalid(f, key, "exists in both matchLabelKeys and labelSelector"))
			}
		}
	}
	return errs
}

// validatePodMetadata reports podLabels and podAnnotations that are not valid labels or
// annotations, or that set a key the hook owns (naming the key).
func validatePodMetadata(spec *webappv1.WebAppSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.PodLabels) > 0 {
		errs = append(errs, metav1validation.ValidateLabels(spec.PodLabels, fld.Child("podLabels"))...)
		for _, k := range slices.Sorted(maps.Keys(spec.PodLabels)) {
			if slices.Contains(webappv1.OwnedPodLabels, k) {
				errs = append(errs, field.Forbidden(fld.Child("podLabels").Key(k), "the hook sets this label itself"))
			}
		}
	}
	if len(spec.PodAnnotations) > 0 {
		errs = append(errs, apivalidation.ValidateAnnotations(spec.PodAnnotations, fld.Child("podAnnotations"))...)
		for _, k := range slices.Sorted(maps.Keys(spec.PodAnnotations)) {
			if slices.Contains(webappv1.OwnedPodAnnotations, k) {
				errs = append(errs, field.Forbidden(fld.Child("podAnnotations").Key(k), "the hook sets this annotation itself"))
			}
		}
	}
	return errs
}

// validateShutdown reports a shutdown delay outside [1, webappv1.MaxShutdownDelaySeconds] or not below
// the termination grace period (webappv1.DefaultTerminationGracePeriodSeconds when unset), a negative
// grace period, and lifecycle handlers the kubelet could not run.
func validateShutdown(spec *webappv1.WebAppSpec, fld *field.Path) field.ErrorList {
	var errs field.ErrorList
	grace := int64(webappv1.DefaultTerminationGracePeriodSeconds)
	if g := spec.TerminationGracePeriodSeconds; g != nil {
		grace = *g
	}
	if d := spec.ShutdownDelaySeconds; d != nil {
		f := fld.Child("shutdownDelaySeconds")
		switch {
		case *d < 1 || *d > webappv1.MaxShutdownDelaySeconds:
			errs = append(errs, field.Invalid(f, *d, validation.InclusiveRangeError(1, webappv1.MaxShutdownDelaySeconds)))
		case int64(*d) >= grace:
			errs = append(errs, field.Invalid(f, *d, fmt.Sprintf("must be less than terminationGracePeriodSeconds (%d), or the pod is killed before it stops", grace)))
		}
	}
	if grace < 0 {
		errs = append(errs, field.Invalid(fld.Child("terminationGracePeriodSeconds"), grace, "must be greater than or equal to 0"))
	}
	if l := spec.Lifecycle; l != nil {
		errs = append(errs, validateHandler(l.PostStart, grace, fld.Child("lifecycle", "postStart"))...)
		errs = append(errs, validateHandler(l.PreStop, grace, fld.Child("lifecycle", "preStop"))...)
	}
	return errs
}

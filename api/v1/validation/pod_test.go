package validation

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

func TestValidateObjectName(t *testing.T) {
	tests := []struct {
		name string
		want []fieldErr
	}{
		{"config", nil},
		{"app.config-v2", nil},
		{strings.Repeat("a", validation.DNS1123SubdomainMaxLength), nil},
		{strings.Repeat("a", validation.DNS1123SubdomainMaxLength+1), []fieldErr{invalid("spec.ref.name")}},
		{"", []fieldErr{required("spec.ref.name")}},
		{"App_Config", []fieldErr{invalid("spec.ref.name").of("App_Config")}},
		{"-config", []fieldErr{invalid("spec.ref.name")}},
	}
	for _, tt := range tests {
		t.Run(Cut(tt.name, 20), func(t *testing.T) {
			checkErrs(t, validateObjectName(tt.name, spec.Child("ref", "name")), tt.want...)
		})
	}
}

func TestValidateVolumes(t *testing.T) {
	configMap := func(name string) *corev1.ConfigMapVolumeSource {
		return &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}
	}
	scratch := &corev1.EmptyDirVolumeSource{}
	vol := func(name, mountPath string) webappv1.Volume {
		return webappv1.Volume{Name: name, MountPath: mountPath, EmptyDir: scratch}
	}
	tests := []struct {
		name    string
		volumes []webappv1.Volume
		want    []fieldErr
	}{
		{"none", nil, nil},
		{"one of each source", []webappv1.Volume{
			{Name: "config", MountPath: "/etc/app", ConfigMap: configMap("app")},
			{Name: "secret", MountPath: "/etc/secret", Secret: &corev1.SecretVolumeSource{SecretName: "app"}},
			{Name: "tmp", MountPath: "/tmp", EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: new(resource.MustParse("0"))}},
		}, nil},
		{"a name at the limit", []webappv1.Volume{vol(strings.Repeat("a", validation.DNS1123LabelMaxLength), "/a")}, nil},
		{"a name past the limit", []webappv1.Volume{vol(strings.Repeat("a", validation.DNS1123LabelMaxLength+1), "/a")}, []fieldErr{invalid("spec.volumes[0].name")}},
		{"a name with a dot", []webappv1.Volume{vol("a.b", "/a")}, []fieldErr{invalid("spec.volumes[0].name").of("a.b")}},
		{"no name", []webappv1.Volume{vol("", "/a")}, []fieldErr{invalid("spec.volumes[0].name")}},
		{"a name twice", []webappv1.Volume{vol("a", "/a"), vol("b", "/b"), vol("a", "/c")}, []fieldErr{duplicate("spec.volumes[2].name").of("a")}},
		{"a bad name twice: invalid, not duplicate", []webappv1.Volume{vol("A", "/a"), vol("A", "/b")},
			[]fieldErr{invalid("spec.volumes[0].name"), invalid("spec.volumes[1].name")}},
		{"a relative mount path", []webappv1.Volume{vol("a", "data")}, []fieldErr{invalid("spec.volumes[0].mountPath").with("absolute")}},
		{"no mount path", []webappv1.Volume{vol("a", "")}, []fieldErr{invalid("spec.volumes[0].mountPath")}},
		{"a mount path twice, once with a slash", []webappv1.Volume{vol("a", "/data"), vol("b", "/data/")}, []fieldErr{duplicate("spec.volumes[1].mountPath").of("/data/")}},
		{"a mount path twice, first with a slash", []webappv1.Volume{vol("a", "/data/"), vol("b", "/data")}, []fieldErr{duplicate("spec.volumes[1].mountPath")}},
		{"a mount path twice, once unclean", []webappv1.Volume{vol("a", "/data"), vol("b", "/x/../data")}, []fieldErr{duplicate("spec.volumes[1].mountPath")}},
		{"nested mount paths", []webappv1.Volume{vol("a", "/data"), vol("b", "/data/cache")}, nil},
		{"no source", []webappv1.Volume{{Name: "a", MountPath: "/a"}}, []fieldErr{invalid("spec.volumes[0]").with("got 0")}},
		{"two sources", []webappv1.Volume{{Name: "a", MountPath: "/a", ConfigMap: configMap("c"), EmptyDir: scratch}}, []fieldErr{invalid("spec.volumes[0]").with("got 2")}},
		{"three sources", []webappv1.Volume{{Name: "a", MountPath: "/a", ConfigMap: configMap("c"), Secret: &corev1.SecretVolumeSource{SecretName: "s"}, EmptyDir: scratch}},
			[]fieldErr{invalid("spec.volumes[0]").with("got 3")}},
		{"a ConfigMap without a name", []webappv1.Volume{{Name: "a", MountPath: "/a", ConfigMap: configMap("")}}, []fieldErr{required("spec.volumes[0].configMap.name")}},
		{"a ConfigMap no name can be", []webappv1.Volume{{Name: "a", MountPath: "/a", ConfigMap: configMap("App")}}, []fieldErr{invalid("spec.volumes[0].configMap.name")}},
		{"a Secret without a name", []webappv1.Volume{{Name: "a", MountPath: "/a", Secret: &corev1.SecretVolumeSource{}}}, []fieldErr{required("spec.volumes[0].secret.secretName")}},
		{"a Secret no name can be", []webappv1.Volume{{Name: "a", MountPath: "/a", Secret: &corev1.SecretVolumeSource{SecretName: "a secret"}}},
			[]fieldErr{invalid("spec.volumes[0].secret.secretName")}},
		{"an unknown medium", []webappv1.Volume{{Name: "a", MountPath: "/a", EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumHugePages}}},
			[]fieldErr{notSupported("spec.volumes[0].emptyDir.medium").of(string(corev1.StorageMediumHugePages))}},
		{"a negative size limit", []webappv1.Volume{{Name: "a", MountPath: "/a", EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: new(resource.MustParse("-1Mi"))}}},
			[]fieldErr{invalid("spec.volumes[0].emptyDir.sizeLimit").of("-1Mi")}},
		{"a ConfigMap's items and modes are checked", []webappv1.Volume{{Name: "a", MountPath: "/a", ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, DefaultMode: new(int32(0o1000)), Items: []corev1.KeyToPath{{Key: "k", Path: "../k"}}}}},
			[]fieldErr{invalid("spec.volumes[0].configMap.defaultMode"), invalid("spec.volumes[0].configMap.items[0].path")}},
		{"a Secret's items and modes are checked", []webappv1.Volume{{Name: "a", MountPath: "/a", Secret: &corev1.SecretVolumeSource{
			SecretName: "s", Items: []corev1.KeyToPath{{Key: "", Path: "k", Mode: new(int32(-1))}}}}},
			[]fieldErr{required("spec.volumes[0].secret.items[0].key"), invalid("spec.volumes[0].secret.items[0].mode")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateVolumes(tt.volumes, spec.Child("volumes")), tt.want...)
		})
	}
}

func TestValidateItems(t *testing.T) {
	item := func(key, path string) corev1.KeyToPath { return corev1.KeyToPath{Key: key, Path: path} }
	tests := []struct {
		name        string
		items       []corev1.KeyToPath
		defaultMode *int32
		want        []fieldErr
	}{
		{"none", nil, nil, nil},
		{"relative paths", []corev1.KeyToPath{item("a", "a"), item("b", "dir/b"), item("c", "..c"), item("d", "d..")}, nil, nil},
		{"modes at the bounds", []corev1.KeyToPath{{Key: "a", Path: "a", Mode: new(int32(0))}}, new(int32(0o777)), nil},
		{"a defaultMode past 0777", nil, new(int32(0o1000)), []fieldErr{invalid("spec.configMap.defaultMode").of(int32(0o1000)).with("0777")}},
		{"a negative defaultMode", nil, new(int32(-1)), []fieldErr{invalid("spec.configMap.defaultMode")}},
		{"an item's mode past 0777", []corev1.KeyToPath{{Key: "a", Path: "a", Mode: new(int32(0o1000))}}, nil, []fieldErr{invalid("spec.configMap.items[0].mode")}},
		{"no key", []corev1.KeyToPath{item("", "a")}, nil, []fieldErr{required("spec.configMap.items[0].key")}},
		{"no path", []corev1.KeyToPath{item("a", "")}, nil, []fieldErr{invalid("spec.configMap.items[0].path").with("relative path without ..")}},
		{"an absolute path", []corev1.KeyToPath{item("a", "/etc/passwd")}, nil, []fieldErr{invalid("spec.configMap.items[0].path")}},
		{"a path up", []corev1.KeyToPath{item("a", "../a")}, nil, []fieldErr{invalid("spec.configMap.items[0].path")}},
		{"a path up in the middle", []corev1.KeyToPath{item("a", "dir/../../a")}, nil, []fieldErr{invalid("spec.configMap.items[0].path")}},
		{"a path that is ..", []corev1.KeyToPath{item("a", "..")}, nil, []fieldErr{invalid("spec.configMap.items[0].path")}},
		{"every rule at once, in order", []corev1.KeyToPath{item("a", "a"), {Path: "/a", Mode: new(int32(0o1000))}}, new(int32(-1)), []fieldErr{
			invalid("spec.configMap.defaultMode"),
			required("spec.configMap.items[1].key"),
			invalid("spec.configMap.items[1].path"),
			invalid("spec.configMap.items[1].mode"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateItems(tt.items, tt.defaultMode, spec.Child("configMap")), tt.want...)
		})
	}
}

func TestValidateSecurity(t *testing.T) {
	seccomp := func(typ corev1.SeccompProfileType, localhost *string) *corev1.SeccompProfile {
		return &corev1.SeccompProfile{Type: typ, LocalhostProfile: localhost}
	}
	appArmor := func(typ corev1.AppArmorProfileType, localhost *string) *corev1.AppArmorProfile {
		return &corev1.AppArmorProfile{Type: typ, LocalhostProfile: localhost}
	}
	pod := func(sc corev1.PodSecurityContext) webappv1.WebAppSpec {
		return webappv1.WebAppSpec{PodSecurityContext: &sc}
	}
	ctr := func(sc corev1.SecurityContext) webappv1.WebAppSpec { return webappv1.WebAppSpec{SecurityContext: &sc} }
	tests := []struct {
		name string
		spec webappv1.WebAppSpec
		want []fieldErr
	}{
		{"nothing set", webappv1.WebAppSpec{}, nil},
		{"securityProfile restricted", webappv1.WebAppSpec{SecurityProfile: webappv1.SecurityProfileRestricted}, nil},
		{"securityProfile none", webappv1.WebAppSpec{SecurityProfile: webappv1.SecurityProfileNone}, nil},
		{"an unknown securityProfile", webappv1.WebAppSpec{SecurityProfile: "baseline"}, []fieldErr{notSupported("spec.securityProfile").of("baseline")}},
		{"IDs of 0", pod(corev1.PodSecurityContext{RunAsUser: new(int64(0)), RunAsGroup: new(int64(0)), FSGroup: new(int64(0)), SupplementalGroups: []int64{0}}), nil},
		{"a negative runAsUser", pod(corev1.PodSecurityContext{RunAsUser: new(int64(-1))}), []fieldErr{invalid("spec.podSecurityContext.runAsUser").of(int64(-1))}},
		{"a negative runAsGroup", pod(corev1.PodSecurityContext{RunAsGroup: new(int64(-1))}), []fieldErr{invalid("spec.podSecurityContext.runAsGroup")}},
		{"a negative fsGroup", pod(corev1.PodSecurityContext{FSGroup: new(int64(-1))}), []fieldErr{invalid("spec.podSecurityContext.fsGroup")}},
		{"a negative supplemental group", pod(corev1.PodSecurityContext{SupplementalGroups: []int64{1000, -1}}), []fieldErr{invalid("spec.podSecurityContext.supplementalGroups[1]")}},
		{"seccomp profiles of each type", pod(corev1.PodSecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeLocalhost, new("p.json"))}), nil},
		{"seccomp RuntimeDefault", pod(corev1.PodSecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeRuntimeDefault, nil)}), nil},
		{"seccomp Unconfined", ctr(corev1.SecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeUnconfined, nil)}), nil},
		{"an unknown seccomp type", pod(corev1.PodSecurityContext{SeccompProfile: seccomp("Strict", nil)}), []fieldErr{notSupported("spec.podSecurityContext.seccompProfile.type").of("Strict")}},
		{"seccomp Localhost without a profile", pod(corev1.PodSecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeLocalhost, nil)}),
			[]fieldErr{required("spec.podSecurityContext.seccompProfile.localhostProfile")}},
		{"seccomp Localhost with an empty profile", pod(corev1.PodSecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeLocalhost, new(""))}),
			[]fieldErr{required("spec.podSecurityContext.seccompProfile.localhostProfile")}},
		{"seccomp RuntimeDefault with a profile", pod(corev1.PodSecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeRuntimeDefault, new("p.json"))}),
			[]fieldErr{forbidden("spec.podSecurityContext.seccompProfile.localhostProfile")}},
		{"seccomp RuntimeDefault with an empty profile", pod(corev1.PodSecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeRuntimeDefault, new(""))}),
			[]fieldErr{forbidden("spec.podSecurityContext.seccompProfile.localhostProfile")}},
		{"AppArmor Localhost", pod(corev1.PodSecurityContext{AppArmorProfile: appArmor(corev1.AppArmorProfileTypeLocalhost, new("k8s-nginx"))}), nil},
		{"an unknown AppArmor type", pod(corev1.PodSecurityContext{AppArmorProfile: appArmor("Complain", nil)}), []fieldErr{notSupported("spec.podSecurityContext.appArmorProfile.type")}},
		{"AppArmor Localhost without a profile", pod(corev1.PodSecurityContext{AppArmorProfile: appArmor(corev1.AppArmorProfileTypeLocalhost, nil)}),
			[]fieldErr{required("spec.podSecurityContext.appArmorProfile.localhostProfile")}},
		{"AppArmor Unconfined with a profile", pod(corev1.PodSecurityContext{AppArmorProfile: appArmor(corev1.AppArmorProfileTypeUnconfined, new("p"))}),
			[]fieldErr{forbidden("spec.podSecurityContext.appArmorProfile.localhostProfile")}},
		{"a container's IDs of 0", ctr(corev1.SecurityContext{RunAsUser: new(int64(0)), RunAsGroup: new(int64(0))}), nil},
		{"a container's negative runAsUser", ctr(corev1.SecurityContext{RunAsUser: new(int64(-1))}), []fieldErr{invalid("spec.securityContext.runAsUser")}},
		{"a container's negative runAsGroup", ctr(corev1.SecurityContext{RunAsGroup: new(int64(-1))}), []fieldErr{invalid("spec.securityContext.runAsGroup")}},
		{"a container's seccomp Localhost without a profile", ctr(corev1.SecurityContext{SeccompProfile: seccomp(corev1.SeccompProfileTypeLocalhost, nil)}),
			[]fieldErr{required("spec.securityContext.seccompProfile.localhostProfile")}},
		{"a container's unknown AppArmor type", ctr(corev1.SecurityContext{AppArmorProfile: appArmor("Enforce", nil)}), []fieldErr{notSupported("spec.securityContext.appArmorProfile.type")}},
		{"procMount Default and Unmasked", ctr(corev1.SecurityContext{ProcMount: new(corev1.UnmaskedProcMount)}), nil},
		{"procMount Default", ctr(corev1.SecurityContext{ProcMount: new(corev1.DefaultProcMount)}), nil},
		{"an unknown procMount", ctr(corev1.SecurityContext{ProcMount: new(corev1.ProcMountType("Masked"))}), []fieldErr{notSupported("spec.securityContext.procMount").of("Masked")}},
		{"every rule at once, in order", webappv1.WebAppSpec{
			SecurityProfile: "x",
			PodSecurityContext: &corev1.PodSecurityContext{RunAsUser: new(int64(-1)), RunAsGroup: new(int64(-1)), FSGroup: new(int64(-1)), SupplementalGroups: []int64{-1},
				SeccompProfile: seccomp("x", nil), AppArmorProfile: appArmor("x", nil)},
			SecurityContext: &corev1.SecurityContext{RunAsUser: new(int64(-1)), RunAsGroup: new(int64(-1)), SeccompProfile: seccomp("x", nil), AppArmorProfile: appArmor("x", nil), ProcMount: new(corev1.ProcMountType("x"))},
		}, []fieldErr{
			notSupported("spec.securityProfile"),
			invalid("spec.podSecurityContext.runAsUser"),
			invalid("spec.podSecurityContext.runAsGroup"),
			invalid("spec.podSecurityContext.fsGroup"),
			invalid("spec.podSecurityContext.supplementalGroups[0]"),
			notSupported("spec.podSecurityContext.seccompProfile.type"),
			notSupported("spec.podSecurityContext.appArmorProfile.type"),
			invalid("spec.securityContext.runAsUser"),
			invalid("spec.securityContext.runAsGroup"),
			notSupported("spec.securityContext.seccompProfile.type"),
			notSupported("spec.securityContext.appArmorProfile.type"),
			notSupported("spec.securityContext.procMount"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateSecurity(&tt.spec, spec), tt.want...)
		})
	}
}

func TestValidateToleration(t *testing.T) {
	tests := []struct {
		name string
		t    corev1.Toleration
		want []fieldErr
	}{
		{"Equal", corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule}, nil},
		{"no operator means Equal", corev1.Toleration{Key: "dedicated", Value: "web"}, nil},
		{"Exists without a key tolerates everything", corev1.Toleration{Operator: corev1.TolerationOpExists}, nil},
		{"tolerationSeconds with NoExecute", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: new(int64(60))}, nil},
		{"PreferNoSchedule", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectPreferNoSchedule}, nil},
		{"a key that is no label key", corev1.Toleration{Key: "a key", Operator: corev1.TolerationOpExists}, []fieldErr{invalid("spec.tolerations[0].key").of("a key")}},
		{"Equal without a key", corev1.Toleration{Operator: corev1.TolerationOpEqual}, []fieldErr{invalid("spec.tolerations[0].operator").with("must be Exists when key is empty")}},
		{"no operator and no key", corev1.Toleration{}, []fieldErr{invalid("spec.tolerations[0].operator")}},
		{"Equal with a value that is no label value", corev1.Toleration{Key: "k", Value: "a value"}, []fieldErr{invalid("spec.tolerations[0].value")}},
		{"Equal with a value at the limit", corev1.Toleration{Key: "k", Value: strings.Repeat("v", validation.LabelValueMaxLength)}, nil},
		{"Equal with a value past the limit", corev1.Toleration{Key: "k", Value: strings.Repeat("v", validation.LabelValueMaxLength+1)}, []fieldErr{invalid("spec.tolerations[0].value")}},
		{"Exists with a value", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"},
			[]fieldErr{invalid("spec.tolerations[0].value").with("must be empty when operator is Exists")}},
		{"an unknown operator", corev1.Toleration{Key: "k", Operator: "Like"}, []fieldErr{notSupported("spec.tolerations[0].operator").of("Like")}},
		{"an unknown effect", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: "NoRun"}, []fieldErr{notSupported("spec.tolerations[0].effect").of("NoRun")}},
		{"tolerationSeconds with NoSchedule", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: new(int64(5))},
			[]fieldErr{invalid("spec.tolerations[0].effect").with("must be NoExecute when tolerationSeconds is set")}},
		{"tolerationSeconds without an effect", corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists, TolerationSeconds: new(int64(5))},
			[]fieldErr{invalid("spec.tolerations[0].effect")}},
		{"every rule at once, in order", corev1.Toleration{Key: "a key", Operator: corev1.TolerationOpEqual, Value: "a value", Effect: "x", TolerationSeconds: new(int64(1))}, []fieldErr{
			invalid("spec.tolerations[0].key"),
			invalid("spec.tolerations[0].value"),
			notSupported("spec.tolerations[0].effect"),
			invalid("spec.tolerations[0].effect"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateToleration(tt.t, spec.Child("tolerations").Index(0)), tt.want...)
		})
	}
}

func TestValidateAffinity(t *testing.T) {
	const (
		req  = "requiredDuringSchedulingIgnoredDuringExecution"
		pref = "preferredDuringSchedulingIgnoredDuringExecution"
	)
	expr := func(op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: op, Values: values}}}
	}
	nodeRequired := func(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	nodePreferred := func(weight int32, term corev1.NodeSelectorTerm) *corev1.Affinity {
		return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: weight, Preference: term}}}}
	}
	term := func(key string) corev1.PodAffinityTerm {
		return corev1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
	}
	badSelector := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Like"}}}
	nodeTerms := "spec.affinity.nodeAffinity." + req + ".nodeSelectorTerms"
	tests := []struct {
		name string
		a    *corev1.Affinity
		want []fieldErr
	}{
		{"none", nil, nil},
		{"empty", &corev1.Affinity{}, nil},
		{"node terms with each operator", nodeRequired(expr(corev1.NodeSelectorOpIn, "a"), expr(corev1.NodeSelectorOpNotIn, "a", "b"), expr(corev1.NodeSelectorOpExists),
			expr(corev1.NodeSelectorOpDoesNotExist), expr(corev1.NodeSelectorOpGt, "1"), expr(corev1.NodeSelectorOpLt, "9")), nil},
		{"no node term", nodeRequired(), []fieldErr{required(nodeTerms)}},
		{"In without values", nodeRequired(expr(corev1.NodeSelectorOpIn)), []fieldErr{required(nodeTerms + "[0].matchExpressions[0].values")}},
		{"NotIn without values", nodeRequired(expr(corev1.NodeSelectorOpIn, "a"), expr(corev1.NodeSelectorOpNotIn)), []fieldErr{required(nodeTerms + "[1].matchExpressions[0].values")}},
		{"Exists with values", nodeRequired(expr(corev1.NodeSelectorOpExists, "a")), []fieldErr{forbidden(nodeTerms + "[0].matchExpressions[0].values")}},
		{"DoesNotExist with values", nodeRequired(expr(corev1.NodeSelectorOpDoesNotExist, "a")), []fieldErr{forbidden(nodeTerms + "[0].matchExpressions[0].values")}},
		{"Gt with two values", nodeRequired(expr(corev1.NodeSelectorOpGt, "1", "2")), []fieldErr{required(nodeTerms + "[0].matchExpressions[0].values").with("exactly one value")}},
		{"Lt without a value", nodeRequired(expr(corev1.NodeSelectorOpLt)), []fieldErr{required(nodeTerms + "[0].matchExpressions[0].values")}},
		{"an unknown operator", nodeRequired(expr("Near", "a")), []fieldErr{notSupported(nodeTerms + "[0].matchExpressions[0].operator").of("Near")}},
		{"a key that is no label key", nodeRequired(corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "a zone", Operator: corev1.NodeSelectorOpExists}}}),
			[]fieldErr{invalid(nodeTerms + "[0].matchExpressions[0].key")}},
		{"preference weights at the bounds", &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
			{Weight: 1, Preference: expr(corev1.NodeSelectorOpExists)}, {Weight: 100, Preference: expr(corev1.NodeSelectorOpExists)}}}}, nil},
		{"a preference weight of 0", nodePreferred(0, expr(corev1.NodeSelectorOpExists)),
			[]fieldErr{invalid("spec.affinity.nodeAffinity." + pref + "[0].weight").with("between 1 and 100")}},
		{"a preference weight past 100", nodePreferred(101, expr(corev1.NodeSelectorOpExists)), []fieldErr{invalid("spec.affinity.nodeAffinity." + pref + "[0].weight")}},
		{"a preference with a bad term", nodePreferred(1, expr("Near")), []fieldErr{notSupported("spec.affinity.nodeAffinity." + pref + "[0].preference.matchExpressions[0].operator")}},
		{"pod affinity", &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term("zone")}}}, nil},
		{"pod affinity without a topologyKey", &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term("zone"), term("")}}},
			[]fieldErr{required("spec.affinity.podAffinity." + req + "[1].topologyKey")}},
		{"pod affinity with a topologyKey that is no label key", &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term("a zone")}}},
			[]fieldErr{invalid("spec.affinity.podAffinity." + req + "[0].topologyKey")}},
		{"pod affinity with a bad label selector", &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "zone", LabelSelector: badSelector}}}},
			[]fieldErr{invalid("spec.affinity.podAffinity." + req + "[0].labelSelector.matchExpressions[0].operator")}},
		{"pod affinity with a bad namespace selector", &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{TopologyKey: "zone", NamespaceSelector: badSelector}}}},
			[]fieldErr{invalid("spec.affinity.podAffinity." + req + "[0].namespaceSelector.matchExpressions[0].operator")}},
		{"preferred pod affinity with a weight of 0", &corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 0, PodAffinityTerm: term("zone")}}}},
			[]fieldErr{invalid("spec.affinity.podAffinity." + pref + "[0].weight")}},
		{"pod anti-affinity without a topologyKey", &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{term("")}}},
			[]fieldErr{required("spec.affinity.podAntiAffinity." + req + "[0].topologyKey")}},
		{"preferred pod anti-affinity: weight and term", &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{Weight: 101, PodAffinityTerm: term("")}}}},
			[]fieldErr{invalid("spec.affinity.podAntiAffinity." + pref + "[0].weight"), required("spec.affinity.podAntiAffinity." + pref + "[0].podAffinityTerm.topologyKey")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateAffinity(tt.a, spec.Child("affinity")), tt.want...)
		})
	}
}

func TestValidateSpread(t *testing.T) {
	valid := func() corev1.TopologySpreadConstraint {
		return corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.DoNotSchedule}
	}
	with := func(mod func(*corev1.TopologySpreadConstraint)) corev1.TopologySpreadConstraint {
		c := valid()
		mod(&c)
		return c
	}
	const at = "spec.topologySpreadConstraints[0]"
	tests := []struct {
		name string
		c    corev1.TopologySpreadConstraint
		want []fieldErr
	}{
		{"valid", valid(), nil},
		{"ScheduleAnyway", with(func(c *corev1.TopologySpreadConstraint) { c.WhenUnsatisfiable = corev1.ScheduleAnyway }), nil},
		{"maxSkew 0", with(func(c *corev1.TopologySpreadConstraint) { c.MaxSkew = 0 }), []fieldErr{invalid(at + ".maxSkew").of(int32(0))}},
		{"no topologyKey", with(func(c *corev1.TopologySpreadConstraint) { c.TopologyKey = "" }), []fieldErr{required(at + ".topologyKey")}},
		{"a topologyKey that is no label key", with(func(c *corev1.TopologySpreadConstraint) { c.TopologyKey = "a zone" }), []fieldErr{invalid(at + ".topologyKey")}},
		{"no whenUnsatisfiable", with(func(c *corev1.TopologySpreadConstraint) { c.WhenUnsatisfiable = "" }), []fieldErr{notSupported(at + ".whenUnsatisfiable")}},
		{"minDomains 1", with(func(c *corev1.TopologySpreadConstraint) { c.MinDomains = new(int32(1)) }), nil},
		{"minDomains 0", with(func(c *corev1.TopologySpreadConstraint) { c.MinDomains = new(int32(0)) }), []fieldErr{invalid(at + ".minDomains").with("greater than or equal to 1")}},
		{"minDomains with ScheduleAnyway", with(func(c *corev1.TopologySpreadConstraint) {
			c.MinDomains, c.WhenUnsatisfiable = new(int32(2)), corev1.ScheduleAnyway
		}), []fieldErr{invalid(at + ".minDomains").with("only be set when whenUnsatisfiable is DoNotSchedule")}},
		{"node policies", with(func(c *corev1.TopologySpreadConstraint) {
			c.NodeAffinityPolicy, c.NodeTaintsPolicy = new(corev1.NodeInclusionPolicyHonor), new(corev1.NodeInclusionPolicyIgnore)
		}), nil},
		{"an unknown nodeAffinityPolicy", with(func(c *corev1.TopologySpreadConstraint) {
			c.NodeAffinityPolicy = new(corev1.NodeInclusionPolicy("Maybe"))
		}),
			[]fieldErr{notSupported(at + ".nodeAffinityPolicy").of("Maybe")}},
		{"an unknown nodeTaintsPolicy", with(func(c *corev1.TopologySpreadConstraint) {
			c.NodeTaintsPolicy = new(corev1.NodeInclusionPolicy("Maybe"))
		}),
			[]fieldErr{notSupported(at + ".nodeTaintsPolicy")}},
		{"a bad label selector", with(func(c *corev1.TopologySpreadConstraint) {
			c.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a value"}}
		}), []fieldErr{invalid(at + ".labelSelector.matchLabels")}},
		{"matchLabelKeys", with(func(c *corev1.TopologySpreadConstraint) { c.MatchLabelKeys = []string{"pod-template-hash"} }), nil},
		{"a matchLabelKey that is no label key", with(func(c *corev1.TopologySpreadConstraint) { c.MatchLabelKeys = []string{"ok", "a key"} }),
			[]fieldErr{invalid(at + ".matchLabelKeys[1]")}},
		{"a matchLabelKey the selector names", with(func(c *corev1.TopologySpreadConstraint) {
			c.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
			c.MatchLabelKeys = []string{"app"}
		}), []fieldErr{invalid(at + ".matchLabelKeys[0]").of("app").with("exists in both")}},
		{"every rule at once, in order", corev1.TopologySpreadConstraint{MinDomains: new(int32(0)), NodeAffinityPolicy: new(corev1.NodeInclusionPolicy("x")), NodeTaintsPolicy: new(corev1.NodeInclusionPolicy("x")),
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, MatchLabelKeys: []string{"a key", "app"}}, []fieldErr{
			invalid(at + ".maxSkew"),
			required(at + ".topologyKey"),
			notSupported(at + ".whenUnsatisfiable"),
			invalid(at + ".minDomains"),
			notSupported(at + ".nodeAffinityPolicy"),
			notSupported(at + ".nodeTaintsPolicy"),
			invalid(at + ".matchLabelKeys[0]"),
			invalid(at + ".matchLabelKeys[1]"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateSpread(tt.c, spec.Child("topologySpreadConstraints").Index(0)), tt.want...)
		})
	}
}

func TestValidateScheduling(t *testing.T) {
	spread := func(key string, when corev1.UnsatisfiableConstraintAction) corev1.TopologySpreadConstraint {
		return corev1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: when}
	}
	tests := []struct {
		name string
		spec webappv1.WebAppSpec
		want []fieldErr
	}{
		{"nothing set", webappv1.WebAppSpec{}, nil},
		{"a nodeSelector", webappv1.WebAppSpec{NodeSelector: map[string]string{"kubernetes.io/os": "linux"}}, nil},
		{"a nodeSelector key that is no label key", webappv1.WebAppSpec{NodeSelector: map[string]string{"a key": "x"}}, []fieldErr{invalid("spec.nodeSelector").of("a key")}},
		{"a nodeSelector value at the limit", webappv1.WebAppSpec{NodeSelector: map[string]string{"k": strings.Repeat("v", validation.LabelValueMaxLength)}}, nil},
		{"a nodeSelector value past the limit", webappv1.WebAppSpec{NodeSelector: map[string]string{"k": strings.Repeat("v", validation.LabelValueMaxLength+1)}},
			[]fieldErr{invalid("spec.nodeSelector")}},
		{"tolerations by index", webappv1.WebAppSpec{Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}, {Key: "k", Operator: "Like"}}},
			[]fieldErr{notSupported("spec.tolerations[1].operator")}},
		{"affinity", webappv1.WebAppSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}}}},
			[]fieldErr{required("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")}},
		{"spread constraints on one key, each when once", webappv1.WebAppSpec{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{
			spread("zone", corev1.DoNotSchedule), spread("zone", corev1.ScheduleAnyway), spread("host", corev1.DoNotSchedule)}}, nil},
		{"a spread constraint twice", webappv1.WebAppSpec{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{
			spread("zone", corev1.DoNotSchedule), spread("host", corev1.DoNotSchedule), spread("zone", corev1.DoNotSchedule)}},
			[]fieldErr{duplicate("spec.topologySpreadConstraints[2]").of("{zone, DoNotSchedule}")}},
		{"a bad spread constraint by index", webappv1.WebAppSpec{TopologySpreadConstraints: []corev1.TopologySpreadConstraint{spread("zone", corev1.DoNotSchedule), spread("", corev1.DoNotSchedule)}},
			[]fieldErr{required("spec.topologySpreadConstraints[1].topologyKey")}},
		{"a priorityClassName", webappv1.WebAppSpec{PriorityClassName: "high-priority"}, nil},
		{"a priorityClassName at the limit", webappv1.WebAppSpec{PriorityClassName: strings.Repeat("p", validation.DNS1123SubdomainMaxLength)}, nil},
		{"a priorityClassName past the limit", webappv1.WebAppSpec{PriorityClassName: strings.Repeat("p", validation.DNS1123SubdomainMaxLength+1)}, []fieldErr{invalid("spec.priorityClassName")}},
		{"a priorityClassName no PriorityClass can have", webappv1.WebAppSpec{PriorityClassName: "High"}, []fieldErr{invalid("spec.priorityClassName").of("High")}},
		{"every section, in order", webappv1.WebAppSpec{
			NodeSelector:              map[string]string{"a key": "x"},
			Tolerations:               []corev1.Toleration{{}},
			Affinity:                  &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{}}}},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{spread("zone", corev1.DoNotSchedule), spread("zone", corev1.DoNotSchedule)},
			PriorityClassName:         "P",
		}, []fieldErr{
			invalid("spec.nodeSelector"),
			invalid("spec.tolerations[0].operator"),
			required("spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"),
			duplicate("spec.topologySpreadConstraints[1]"),
			invalid("spec.priorityClassName"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateScheduling(&tt.spec, spec), tt.want...)
		})
	}
}

func TestValidatePodMetadata(t *testing.T) {
	var ownedLabels []fieldErr
	labels := map[string]string{"team": "web"}
	for _, k := range slices.Sorted(slices.Values(webappv1.OwnedPodLabels)) { // by key, as the errors are
		labels[k] = "x"
		ownedLabels = append(ownedLabels, forbidden("spec.podLabels["+k+"]").with("the hook sets this label itself"))
	}
	// The most the apiserver takes of annotations: their keys' and values' lengths together.
	atLimit := map[string]string{"a": strings.Repeat("v", apivalidation.TotalAnnotationSizeLimitB-1)}
	pastLimit := map[string]string{"a": strings.Repeat("v", apivalidation.TotalAnnotationSizeLimitB)}
	tests := []struct {
		name string
		spec webappv1.WebAppSpec
		want []fieldErr
	}{
		{"nothing set", webappv1.WebAppSpec{}, nil},
		{"podLabels and podAnnotations", webappv1.WebAppSpec{PodLabels: map[string]string{"team": "web", "example.com/tier": "front"}, PodAnnotations: map[string]string{"prometheus.io/scrape": "true"}}, nil},
		{"a podLabel key that is no label key", webappv1.WebAppSpec{PodLabels: map[string]string{"a key": "x"}}, []fieldErr{invalid("spec.podLabels").of("a key")}},
		{"a podLabel value past the limit", webappv1.WebAppSpec{PodLabels: map[string]string{"k": strings.Repeat("v", validation.LabelValueMaxLength+1)}}, []fieldErr{invalid("spec.podLabels")}},
		{"a podLabel value at the limit", webappv1.WebAppSpec{PodLabels: map[string]string{"k": strings.Repeat("v", validation.LabelValueMaxLength)}}, nil},
		{"every podLabel the hook owns, by key", webappv1.WebAppSpec{PodLabels: labels}, ownedLabels},
		{"the track label is not owned without a canary", webappv1.WebAppSpec{PodLabels: map[string]string{webappv1.LabelTrack: webappv1.TrackCanary}}, nil},
		{"the podAnnotation the hook owns", webappv1.WebAppSpec{PodAnnotations: map[string]string{webappv1.AnnotationConfigHash: "x"}},
			[]fieldErr{forbidden("spec.podAnnotations[" + webappv1.AnnotationConfigHash + "]").with("the hook sets this annotation itself")}},
		{"a podAnnotation key that is no key", webappv1.WebAppSpec{PodAnnotations: map[string]string{"a key": "x"}}, []fieldErr{invalid("spec.podAnnotations")}},
		{"podAnnotations at the size limit", webappv1.WebAppSpec{PodAnnotations: atLimit}, nil},
		{"podAnnotations past the size limit", webappv1.WebAppSpec{PodAnnotations: pastLimit}, []fieldErr{tooLong("spec.podAnnotations")}},
		{"labels, then annotations", webappv1.WebAppSpec{PodLabels: map[string]string{webappv1.LabelName: "x"}, PodAnnotations: map[string]string{webappv1.AnnotationConfigHash: "x"}},
			[]fieldErr{forbidden("spec.podLabels[" + webappv1.LabelName + "]"), forbidden("spec.podAnnotations[" + webappv1.AnnotationConfigHash + "]")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validatePodMetadata(&tt.spec, spec), tt.want...)
		})
	}
}

func TestValidateShutdown(t *testing.T) {
	const grace = webappv1.DefaultTerminationGracePeriodSeconds
	sleep := func(seconds int64) *corev1.LifecycleHandler {
		return &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: seconds}}
	}
	tests := []struct {
		name string
		spec webappv1.WebAppSpec
		want []fieldErr
	}{
		{"nothing set", webappv1.WebAppSpec{}, nil},
		{"the shortest delay", webappv1.WebAppSpec{ShutdownDelaySeconds: new(int32(1))}, nil},
		{"a delay just under the default grace period", webappv1.WebAppSpec{ShutdownDelaySeconds: new(int32(grace - 1))}, nil},
		{"a delay as long as the default grace period", webappv1.WebAppSpec{ShutdownDelaySeconds: new(int32(grace))},
			[]fieldErr{invalid("spec.shutdownDelaySeconds").with("less than terminationGracePeriodSeconds (30)")}},
		{"a delay of 0", webappv1.WebAppSpec{ShutdownDelaySeconds: new(int32(0))}, []fieldErr{invalid("spec.shutdownDelaySeconds").with("between 1 and")}},
		{"the longest delay", webappv1.WebAppSpec{ShutdownDelaySeconds: new(int32(webappv1.MaxShutdownDelaySeconds)), TerminationGracePeriodSeconds: new(int64(webappv1.MaxShutdownDelaySeconds + 1))}, nil},
		{"a delay past the limit", webappv1.WebAppSpec{ShutdownDelaySeconds: new(int32(webappv1.MaxShutdownDelaySeconds + 1)), TerminationGracePeriodSeconds: new(int64(webappv1.MaxShutdownDelaySeconds + 2))},
			[]fieldErr{invalid("spec.shutdownDelaySeconds").of(int32(webappv1.MaxShutdownDelaySeconds + 1))}},
		{"a delay as long as a grace period set", webappv1.WebAppSpec{ShutdownDelaySeconds: new(int32(10)), TerminationGracePeriodSeconds: new(int64(10))},
			[]fieldErr{invalid("spec.shutdownDelaySeconds").with("(10)")}},
		{"a grace period of 0", webappv1.WebAppSpec{TerminationGracePeriodSeconds: new(int64(0))}, nil},
		{"a negative grace period", webappv1.WebAppSpec{TerminationGracePeriodSeconds: new(int64(-1))}, []fieldErr{invalid("spec.terminationGracePeriodSeconds").of(int64(-1))}},
		{"a delay and a negative grace period", webappv1.WebAppSpec{ShutdownDelaySeconds: new(int32(1)), TerminationGracePeriodSeconds: new(int64(-1))},
			[]fieldErr{invalid("spec.shutdownDelaySeconds"), invalid("spec.terminationGracePeriodSeconds")}},
		{"a preStop sleep as long as the default grace period", webappv1.WebAppSpec{Lifecycle: &corev1.Lifecycle{PreStop: sleep(grace)}}, nil},
		{"a preStop sleep past the default grace period", webappv1.WebAppSpec{Lifecycle: &corev1.Lifecycle{PreStop: sleep(grace + 1)}},
			[]fieldErr{invalid("spec.lifecycle.preStop.sleep.seconds").with("terminationGracePeriodSeconds (30)")}},
		{"a postStart sleep as long as a grace period set", webappv1.WebAppSpec{TerminationGracePeriodSeconds: new(int64(60)), Lifecycle: &corev1.Lifecycle{PostStart: sleep(60)}}, nil},
		{"a postStart sleep past a grace period set", webappv1.WebAppSpec{TerminationGracePeriodSeconds: new(int64(60)), Lifecycle: &corev1.Lifecycle{PostStart: sleep(61)}},
			[]fieldErr{invalid("spec.lifecycle.postStart.sleep.seconds").with("(60)")}},
		{"a negative sleep", webappv1.WebAppSpec{Lifecycle: &corev1.Lifecycle{PreStop: sleep(-1)}}, []fieldErr{invalid("spec.lifecycle.preStop.sleep.seconds")}},
		{"a handler without an action", webappv1.WebAppSpec{Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{}}}, []fieldErr{invalid("spec.lifecycle.preStop").with("got 0")}},
		{"a handler with two actions", webappv1.WebAppSpec{Lifecycle: &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{
			Exec: &corev1.ExecAction{Command: []string{"true"}}, Sleep: &corev1.SleepAction{Seconds: 1}}}}, []fieldErr{invalid("spec.lifecycle.postStart").with("got 2")}},
		{"an exec without a command", webappv1.WebAppSpec{Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{}}}},
			[]fieldErr{required("spec.lifecycle.preStop.exec.command")}},
		{"an httpGet of another host", webappv1.WebAppSpec{Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: "10.0.0.1", Port: intstr.FromInt32(80)}}}},
			[]fieldErr{forbidden("spec.lifecycle.preStop.httpGet.host").with("a lifecycle hook calls the pod itself")}},
		{"a tcpSocket of another host", webappv1.WebAppSpec{Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Host: "db", Port: intstr.FromString("db")}}}},
			[]fieldErr{forbidden("spec.lifecycle.preStop.tcpSocket.host")}},
		{"an httpGet with a relative path, an unknown scheme and port 0", webappv1.WebAppSpec{Lifecycle: &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{
			HTTPGet: &corev1.HTTPGetAction{Path: "ready", Scheme: "FTP", Port: intstr.FromInt32(0)}}}}, []fieldErr{
			invalid("spec.lifecycle.postStart.httpGet.port"),
			invalid("spec.lifecycle.postStart.httpGet.path"),
			notSupported("spec.lifecycle.postStart.httpGet.scheme"),
		}},
		{"a port name that is no port name", webappv1.WebAppSpec{Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("no_name")}}}},
			[]fieldErr{invalid("spec.lifecycle.preStop.tcpSocket.port")}},
		{"every rule at once, in order", webappv1.WebAppSpec{ShutdownDelaySeconds: new(int32(0)), TerminationGracePeriodSeconds: new(int64(-1)),
			Lifecycle: &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{}, PreStop: sleep(1)}}, []fieldErr{
			invalid("spec.shutdownDelaySeconds"),
			invalid("spec.terminationGracePeriodSeconds"),
			invalid("spec.lifecycle.postStart"),
			invalid("spec.lifecycle.preStop.sleep.seconds").with("(-1)"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkErrs(t, validateShutdown(&tt.spec, spec), tt.want...)
		})
	}
}

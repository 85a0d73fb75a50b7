package sync_test

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

// TestSyncPodFields checks what each pod field of the spec makes of the pod template: the
// restricted profile and the explicit fields over it, scheduling, pod metadata and shutdown.
func TestSyncPodFields(t *testing.T) {
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{webappv1.LabelName: webappv1.AppName, webappv1.LabelInstance: "hello", webappv1.LabelManagedBy: webappv1.ManagedBy}}
	restricted := func(s *webappv1.WebAppSpec) { s.SecurityProfile = webappv1.SecurityProfileRestricted }
	type want struct {
		pod       *corev1.PodSecurityContext
		container *corev1.SecurityContext
		automount *bool
		spread    []corev1.TopologySpreadConstraint
		lifecycle *corev1.Lifecycle
	}
	restrictedPod := &corev1.PodSecurityContext{RunAsNonRoot: ptr(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	restrictedContainer := &corev1.SecurityContext{AllowPrivilegeEscalation: ptr(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
	tests := []struct {
		name string
		mod  func(*webappv1.WebAppSpec)
		want want
	}{
		{"none of them", func(*webappv1.WebAppSpec) {}, want{}},
		{"securityProfile none", func(s *webappv1.WebAppSpec) { s.SecurityProfile = webappv1.SecurityProfileNone }, want{}},
		{"restricted", restricted, want{pod: restrictedPod, container: restrictedContainer, automount: ptr(false)}},
		{"restricted with a ServiceAccount mounts its token", func(s *webappv1.WebAppSpec) { restricted(s); s.ServiceAccountName = "app" },
			want{pod: restrictedPod, container: restrictedContainer}},
		{"restricted, explicit fields win field by field", func(s *webappv1.WebAppSpec) {
			restricted(s)
			s.PodSecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(1000)), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr("app.json")}}
			s.SecurityContext = &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr(true), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}}}
			s.AutomountServiceAccountToken = ptr(true)
		}, want{
			pod:       &corev1.PodSecurityContext{RunAsUser: ptr(int64(1000)), RunAsNonRoot: ptr(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr("app.json")}},
			container: &corev1.SecurityContext{ReadOnlyRootFilesystem: ptr(true), AllowPrivilegeEscalation: ptr(false), Capabilities: &corev1.Capabilities{Add: []corev1.Capability{"NET_BIND_SERVICE"}, Drop: []corev1.Capability{"ALL"}}},
			automount: ptr(true),
		}},
		{"explicit fields without a profile are passed on as they are", func(s *webappv1.WebAppSpec) {
			s.PodSecurityContext = &corev1.PodSecurityContext{FSGroup: ptr(int64(2000))}
			s.SecurityContext = &corev1.SecurityContext{RunAsUser: ptr(int64(1000))}
			s.AutomountServiceAccountToken = ptr(false)
		}, want{pod: &corev1.PodSecurityContext{FSGroup: ptr(int64(2000))}, container: &corev1.SecurityContext{RunAsUser: ptr(int64(1000))}, automount: ptr(false)}},
		{"a spread without a selector spreads the WebApp's pods of one template", func(s *webappv1.WebAppSpec) {
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{
				{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway},
				{MaxSkew: 2, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}},
			}
		}, want{spread: []corev1.TopologySpreadConstraint{
			{MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: selector, MatchLabelKeys: []string{"pod-template-hash"}},
			{MaxSkew: 2, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}},
		}}},
		{"shutdownDelaySeconds sleeps before SIGTERM", func(s *webappv1.WebAppSpec) { s.ShutdownDelaySeconds = ptr(int32(5)) },
			want{lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}}}},
		{"an explicit lifecycle replaces it", func(s *webappv1.WebAppSpec) {
			s.ShutdownDelaySeconds = ptr(int32(5))
			s.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/drain"}}}}
		}, want{lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"/bin/drain"}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := webapp(func(p *sync.Parent) { tt.mod(&p.Spec) })
			before := asJSON(t, p.Spec)
			resp := checkedSync(t, &sync.Request{Parent: p})
			pod := childOf[*appsv1.Deployment](resp.Children).Spec.Template.Spec
			equal(t, "pod securityContext", pod.SecurityContext, tt.want.pod)
			equal(t, "container securityContext", pod.Containers[0].SecurityContext, tt.want.container)
			equal(t, "automountServiceAccountToken", pod.AutomountServiceAccountToken, tt.want.automount)
			equal(t, "topologySpreadConstraints", pod.TopologySpreadConstraints, tt.want.spread)
			equal(t, "lifecycle", pod.Containers[0].Lifecycle, tt.want.lifecycle)
			if after := asJSON(t, p.Spec); after != before {
				t.Errorf("Sync changed the spec it was given:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// TestSyncUnusedPodFields checks that a WebApp that uses no pod field of issue 20 keeps exactly
// the pod template it had: an upgrade rolls no pods. securityProfile none is the same as unset.
func TestSyncUnusedPodFields(t *testing.T) {
	template := func(mods ...func(*sync.Parent)) string {
		dep, _ := desired(t, webapp(mods...))
		return asJSON(t, dep.Spec.Template) + dep.Annotations[sync.AnnotationSpecHash]
	}
	want := template()
	if got := template(func(p *sync.Parent) { p.Spec.SecurityProfile = webappv1.SecurityProfileNone }); got != want {
		t.Errorf("securityProfile none changes the pod template:\n%s\nwant\n%s", got, want)
	}
	sync.Defaults{}.Apply(ptr(webapp()))
	if got := template(); got != want {
		t.Error("the zero Defaults change the pod template")
	}
	if got := template(func(p *sync.Parent) { p.Spec.SecurityProfile = webappv1.SecurityProfileRestricted }); got == want {
		t.Error("securityProfile restricted leaves the pod template as it was")
	}
}

// TestSyncScheduling checks that the scheduling fields and the pod metadata reach the pod
// template, and only it: never the Deployment's own labels, its selector or the Service's.
func TestSyncScheduling(t *testing.T) {
	p := webapp(func(p *sync.Parent) {
		p.Spec.NodeSelector = map[string]string{"pool": "web"}
		p.Spec.Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "web", Effect: corev1.TaintEffectNoSchedule}}
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}}}}},
		}}}
		p.Spec.PriorityClassName = "high"
		p.Spec.TerminationGracePeriodSeconds = ptr(int64(60))
		p.Spec.PodLabels = map[string]string{"sidecar.istio.io/inject": "true"}
		p.Spec.PodAnnotations = map[string]string{"prometheus.io/scrape": "true"}
	})
	dep, svc := desired(t, p)
	pod := dep.Spec.Template
	equal(t, "nodeSelector", pod.Spec.NodeSelector, p.Spec.NodeSelector)
	equal(t, "tolerations", pod.Spec.Tolerations, p.Spec.Tolerations)
	equal(t, "affinity", pod.Spec.Affinity, p.Spec.Affinity)
	if pod.Spec.PriorityClassName != "high" || *pod.Spec.TerminationGracePeriodSeconds != 60 {
		t.Errorf("priorityClassName %q, terminationGracePeriodSeconds %d; want high, 60", pod.Spec.PriorityClassName, *pod.Spec.TerminationGracePeriodSeconds)
	}
	if pod.Labels["sidecar.istio.io/inject"] != "true" || pod.Labels[webappv1.LabelInstance] != "hello" {
		t.Errorf("pod labels = %v; want the podLabels and the instance label", pod.Labels)
	}
	if pod.Annotations["prometheus.io/scrape"] != "true" {
		t.Errorf("pod annotations = %v; want the podAnnotations", pod.Annotations)
	}
	for what, m := range map[string]map[string]string{"Deployment labels": dep.Labels, "selector": dep.Spec.Selector.MatchLabels, "Service selector": svc.Spec.Selector, "Service labels": svc.Labels} {
		if _, ok := m["sidecar.istio.io/inject"]; ok {
			t.Errorf("%s = %v; podLabels must not reach them", what, m)
		}
	}
	if _, ok := dep.Annotations["prometheus.io/scrape"]; ok {
		t.Errorf("Deployment annotations = %v; podAnnotations must not reach them", dep.Annotations)
	}
}

// TestDefaultsApply checks the install's default security profile: it applies to a spec that
// sets none, and never over one that does, "none" included.
func TestDefaultsApply(t *testing.T) {
	d := sync.Defaults{SecurityProfile: webappv1.SecurityProfileRestricted}
	tests := []struct {
		name string
		set  webappv1.SecurityProfile
		want webappv1.SecurityProfile
	}{
		{"unset takes the default", "", webappv1.SecurityProfileRestricted},
		{"none keeps none", webappv1.SecurityProfileNone, webappv1.SecurityProfileNone},
		{"restricted keeps restricted", webappv1.SecurityProfileRestricted, webappv1.SecurityProfileRestricted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := webapp(func(p *sync.Parent) { p.Spec.SecurityProfile = tt.set })
			d.Apply(&p)
			if got := p.Spec.SecurityProfile; got != tt.want {
				t.Errorf("securityProfile = %q; want %q", got, tt.want)
			}
		})
	}
	bad := webappJSON(`{"image": 5}`)
	d.Apply(&bad)
	if bad.Spec.SecurityProfile != "" {
		t.Errorf("a spec that did not decode got securityProfile %q; want it left alone", bad.Spec.SecurityProfile)
	}
}

// TestSyncReplicaFailure checks that a Deployment whose ReplicaSet cannot create pods makes the
// WebApp Degraded at once, with the finest reason its message shows, and a message that quotes
// the apiserver without the pod's name, which changes with every attempt.
func TestSyncReplicaFailure(t *testing.T) {
	p := webapp()
	dep, _ := desired(t, p)
	failure := func(pod, message string) appsv1.DeploymentCondition {
		return appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: `pods "` + pod + `" is forbidden: ` + message}
	}
	long := strings.Repeat("maximum cpu usage per Container is 1, but limit is 2. ", 10)
	tests := []struct {
		name        string
		message     string
		wantReason  string
		wantMessage string
	}{
		{"quota", "exceeded quota: pods, requested: pods=1, used: pods=0, limited: pods=0", webappv1.ReasonQuotaExceeded,
			"Deployment hello cannot create pods: exceeded quota: pods, requested: pods=1, used: pods=0, limited: pods=0."},
		{"quota that needs limits", "failed quota: compute: must specify limits.cpu for: app", webappv1.ReasonQuotaExceeded,
			"Deployment hello cannot create pods: failed quota: compute: must specify limits.cpu for: app."},
		{"a quota not yet counted", "status unknown for quota: pods, resources: pods", webappv1.ReasonQuotaExceeded,
			"Deployment hello cannot create pods: status unknown for quota: pods, resources: pods."},
		{"Pod Security", `violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)`, webappv1.ReasonPodSecurityViolation,
			`Deployment hello cannot create pods: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false).`},
		{"ServiceAccount", `error looking up service account default/app: serviceaccount "app" not found`, webappv1.ReasonServiceAccountMissing,
			`Deployment hello cannot create pods: error looking up service account default/app: serviceaccount "app" not found.`},
		{"a LimitRange, cut short", long, webappv1.ReasonFailedCreate,
			"Deployment hello cannot create pods: " + string([]rune(long)[:240]) + "…."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var messages []string
			for _, pod := range []string{"hello-5d8c7-x2kq9", "hello-5d8c7-7fmrt"} {
				status := depStatus(1, 0, 0, 0, 0, failure(pod, tt.message))
				resp := sync.Sync(&sync.Request{Parent: p, Children: []sync.Child{observe(t, dep, 1, status)}}, now)
				st := resp.Status
				if st.Phase != webappv1.PhaseDegraded || conditionOf(st, webappv1.ConditionReady) != "False/"+tt.wantReason {
					t.Errorf("phase %q, Ready %q; want Degraded, False/%s", st.Phase, conditionOf(st, webappv1.ConditionReady), tt.wantReason)
				}
				messages = append(messages, st.Message)
			}
			if messages[0] != tt.wantMessage {
				t.Errorf("message =\n%q\nwant\n%q", messages[0], tt.wantMessage)
			}
			if messages[1] != messages[0] {
				t.Errorf("the message changes with the pod's name:\n%q\n%q", messages[0], messages[1])
			}
		})
	}
	t.Run("cleared", func(t *testing.T) {
		cleared := failure("x", "exceeded quota")
		cleared.Status = corev1.ConditionFalse
		status := depStatus(1, 3, 3, 3, 3, cleared)
		resp := sync.Sync(&sync.Request{Parent: p, Children: []sync.Child{observe(t, dep, 1, status)}}, now)
		if resp.Status.Phase != webappv1.PhaseReady {
			t.Errorf("phase %q (%s); want Ready once ReplicaFailure is not True", resp.Status.Phase, resp.Status.Message)
		}
	})
}

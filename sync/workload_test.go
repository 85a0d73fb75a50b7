package sync_test

import (
	"fmt"
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
)

// childOf returns the child of type T in an answer, or nil.
func childOf[T runtime.Object](children []runtime.Object) T {
	var zero T
	for _, c := range children {
		if t, ok := c.(T); ok {
			return t
		}
	}
	return zero
}

// httpGet is an HTTP GET probe handler.
func httpGet(path string, port int32) corev1.ProbeHandler {
	return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt32(port)}}
}

// TestSyncWorkload checks what each workload field of the spec becomes in the Deployment.
func TestSyncWorkload(t *testing.T) {
	explicitReadiness := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8080)}}, PeriodSeconds: 3}
	explicitStartup := &corev1.Probe{ProbeHandler: httpGet("/started", 8080), FailureThreshold: 60}
	liveness := &corev1.Probe{ProbeHandler: httpGet("/livez", 8080), PeriodSeconds: 20}
	generatedStartup := &corev1.Probe{ProbeHandler: httpGet("/healthz", 8080), PeriodSeconds: sync.StartupPeriodSeconds, FailureThreshold: sync.StartupFailureThreshold}
	tests := []struct {
		name string
		mod  func(*webappv1.WebAppSpec)
		// check inspects the Deployment the spec became.
		check func(t *testing.T, d *appsv1.Deployment)
	}{
		{"command and args", func(s *webappv1.WebAppSpec) { s.Command = []string{"/app"}; s.Args = []string{"--verbose", "serve"} }, func(t *testing.T, d *appsv1.Deployment) {
			c := d.Spec.Template.Spec.Containers[0]
			equal(t, "command", c.Command, []string{"/app"})
			equal(t, "args", c.Args, []string{"--verbose", "serve"})
		}},
		{"envFrom", func(s *webappv1.WebAppSpec) {
			s.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}, {Prefix: "DB_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}}}
		}, func(t *testing.T, d *appsv1.Deployment) {
			equal(t, "envFrom", d.Spec.Template.Spec.Containers[0].EnvFrom, []corev1.EnvFromSource{
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}},
				{Prefix: "DB_", SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}},
			})
		}},
		{"healthCheck on spec.port", func(s *webappv1.WebAppSpec) { s.HealthCheck = &webappv1.HealthCheck{Path: "/healthz"} }, func(t *testing.T, d *appsv1.Deployment) {
			c := d.Spec.Template.Spec.Containers[0]
			equal(t, "readinessProbe", c.ReadinessProbe, &corev1.Probe{ProbeHandler: httpGet("/healthz", 8080)})
			equal(t, "startupProbe", c.StartupProbe, generatedStartup)
			if c.LivenessProbe != nil {
				t.Errorf("livenessProbe = %+v; want none unless asked for", c.LivenessProbe)
			}
			if got := c.StartupProbe.PeriodSeconds * c.StartupProbe.FailureThreshold; got < 240 || got > 360 {
				t.Errorf("startupProbe allows %d s; want about 5 minutes", got)
			}
		}},
		{"healthCheck on its own port, without spec.port", func(s *webappv1.WebAppSpec) {
			s.Port = nil
			s.HealthCheck = &webappv1.HealthCheck{Path: "/ready", Port: ptr(int32(9000))}
		}, func(t *testing.T, d *appsv1.Deployment) {
			equal(t, "readinessProbe", d.Spec.Template.Spec.Containers[0].ReadinessProbe, &corev1.Probe{ProbeHandler: httpGet("/ready", 9000)})
		}},
		{"explicit probes replace the ones healthCheck makes", func(s *webappv1.WebAppSpec) {
			s.HealthCheck = &webappv1.HealthCheck{Path: "/healthz"}
			s.ReadinessProbe, s.StartupProbe, s.LivenessProbe = explicitReadiness, explicitStartup, liveness
		}, func(t *testing.T, d *appsv1.Deployment) {
			c := d.Spec.Template.Spec.Containers[0]
			equal(t, "readinessProbe", c.ReadinessProbe, explicitReadiness)
			equal(t, "startupProbe", c.StartupProbe, explicitStartup)
			equal(t, "livenessProbe", c.LivenessProbe, liveness)
		}},
		{"an explicit readinessProbe keeps the generated startupProbe", func(s *webappv1.WebAppSpec) {
			s.HealthCheck = &webappv1.HealthCheck{Path: "/healthz"}
			s.ReadinessProbe = explicitReadiness
		}, func(t *testing.T, d *appsv1.Deployment) {
			c := d.Spec.Template.Spec.Containers[0]
			equal(t, "readinessProbe", c.ReadinessProbe, explicitReadiness)
			equal(t, "startupProbe", c.StartupProbe, generatedStartup)
		}},
		{"volumes", func(s *webappv1.WebAppSpec) {
			s.Volumes = []webappv1.Volume{
				{Name: "config", MountPath: "/etc/app", ReadOnly: true, ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}},
				{Name: "tls", MountPath: "/etc/tls", Secret: &corev1.SecretVolumeSource{SecretName: "app-tls", DefaultMode: ptr(int32(0o400))}},
				{Name: "cache", MountPath: "/var/cache/app", EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr(resource.MustParse("1Gi"))}},
			}
		}, func(t *testing.T, d *appsv1.Deployment) {
			equal(t, "volumes", d.Spec.Template.Spec.Volumes, []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-config"}}}},
				{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "app-tls", DefaultMode: ptr(int32(0o400))}}},
				{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: ptr(resource.MustParse("1Gi"))}}},
			})
			equal(t, "volumeMounts", d.Spec.Template.Spec.Containers[0].VolumeMounts, []corev1.VolumeMount{
				{Name: "config", MountPath: "/etc/app", ReadOnly: true},
				{Name: "tls", MountPath: "/etc/tls"},
				{Name: "cache", MountPath: "/var/cache/app"},
			})
		}},
		{"private registry and service account", func(s *webappv1.WebAppSpec) {
			s.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "registry-creds"}}
			s.ServiceAccountName = "app"
		}, func(t *testing.T, d *appsv1.Deployment) {
			equal(t, "imagePullSecrets", d.Spec.Template.Spec.ImagePullSecrets, []corev1.LocalObjectReference{{Name: "registry-creds"}})
			equal(t, "serviceAccountName", d.Spec.Template.Spec.ServiceAccountName, "app")
		}},
		{"strategy and progress deadline", func(s *webappv1.WebAppSpec) {
			s.Strategy = &webappv1.RolloutStrategy{MaxSurge: ptr(intstr.FromString("50%")), MaxUnavailable: ptr(intstr.FromInt32(0))}
			s.ProgressDeadlineSeconds = ptr(int32(120))
		}, func(t *testing.T, d *appsv1.Deployment) {
			equal(t, "strategy", d.Spec.Strategy, appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr(intstr.FromString("50%")), MaxUnavailable: ptr(intstr.FromInt32(0))},
			})
			equal(t, "progressDeadlineSeconds", d.Spec.ProgressDeadlineSeconds, ptr(int32(120)))
		}},
	}
	plain, _ := desired(t, webapp())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := webapp(func(p *sync.Parent) { tt.mod(&p.Spec) })
			req := &sync.Request{Parent: p}
			resp := checkedSync(t, req)
			d := childOf[*appsv1.Deployment](resp.Children)
			tt.check(t, d)
			if d.Annotations[sync.AnnotationSpecHash] == plain.Annotations[sync.AnnotationSpecHash] {
				t.Error("the spec hash did not change, so the change would not roll out")
			}
			for _, c := range sentChildren(t, resp) {
				assertApplyForm(t, c)
			}
		})
	}
}

// TestSyncIngress covers the Ingress: its contents and defaults, added, changed and removed, and
// the url, address and IngressReady condition it leads to.
func TestSyncIngress(t *testing.T) {
	withIngress := func(in webappv1.Ingress) func(*sync.Parent) {
		return func(p *sync.Parent) { p.Spec.Ingress = &in }
	}
	basic := webapp(withIngress(webappv1.Ingress{Host: "hello.example.com"}))
	secure := webapp(withIngress(webappv1.Ingress{
		Host: "hello.example.com", Path: "/api", PathType: ptr(networkingv1.PathTypeExact), ClassName: ptr("nginx"),
		TLS: &webappv1.IngressTLS{SecretName: "hello-tls"}, Annotations: map[string]string{"nginx.ingress.kubernetes.io/proxy-body-size": "8m"},
	}))
	dep, svc := desired(t, basic)
	ing := childOf[*networkingv1.Ingress](sync.Sync(&sync.Request{Parent: basic}, now).Children)
	secureIng := childOf[*networkingv1.Ingress](sync.Sync(&sync.Request{Parent: secure}, now).Children)
	addressed := ing.DeepCopy()
	addressed.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{IP: "203.0.113.7"}}
	observedSecure := secureIng.DeepCopy()
	observedSecure.Status.LoadBalancer.Ingress = []networkingv1.IngressLoadBalancerIngress{{Hostname: "lb.example.net"}}
	running := []sync.Child{observe(t, dep, 1, depStatus(1, 3, 3, 3, 3)), observe(t, svc, 1, nil)}

	t.Run("contents", func(t *testing.T) {
		labels := map[string]string{webappv1.LabelName: webappv1.AppName, webappv1.LabelInstance: "hello", webappv1.LabelManagedBy: webappv1.ManagedBy}
		rule := func(path string, pathType networkingv1.PathType) []networkingv1.IngressRule {
			return []networkingv1.IngressRule{{Host: "hello.example.com", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
				Paths: []networkingv1.HTTPIngressPath{{Path: path, PathType: &pathType, Backend: networkingv1.IngressBackend{
					Service: &networkingv1.IngressServiceBackend{Name: "hello", Port: networkingv1.ServiceBackendPort{Number: sync.ServicePort}},
				}}},
			}}}}
		}
		equal(t, "Ingress with the defaults", ing, &networkingv1.Ingress{
			TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default", Labels: labels},
			Spec:       networkingv1.IngressSpec{Rules: rule("/", networkingv1.PathTypePrefix)},
		})
		equal(t, "Ingress with every field", secureIng, &networkingv1.Ingress{
			TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "Ingress"},
			ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default", Labels: labels, Annotations: map[string]string{"nginx.ingress.kubernetes.io/proxy-body-size": "8m"}},
			Spec: networkingv1.IngressSpec{
				IngressClassName: ptr("nginx"),
				TLS:              []networkingv1.IngressTLS{{Hosts: []string{"hello.example.com"}, SecretName: "hello-tls"}},
				Rules:            rule("/api", networkingv1.PathTypeExact),
			},
		})
	})

	changed := webapp(withIngress(webappv1.Ingress{Host: "www.example.com"}))
	tests := []struct {
		name          string
		parent        sync.Parent
		children      []sync.Child
		wantNames     []string
		wantHost      string // of the Ingress answered; "" for none
		wantURL       string
		wantAddress   string
		wantCondition string // the IngressReady condition as "status/reason"; "" for none
	}{
		{"added", basic, running, []string{"Deployment/hello", "Ingress/hello", "Service/hello"}, "hello.example.com", "http://hello.default.svc", "http://hello.default.svc", "False/IngressMissing"},
		{"observed, no address yet", basic, append(slices.Clone(running), observe(t, ing, 1, nil)), []string{"Deployment/hello", "Ingress/hello", "Service/hello"}, "hello.example.com", "http://hello.example.com/", "http://hello.default.svc", "False/LoadBalancerPending"},
		{"observed with an address", basic, append(slices.Clone(running), observe(t, ing, 1, addressed.Status)), []string{"Deployment/hello", "Ingress/hello", "Service/hello"}, "hello.example.com", "http://hello.example.com/", "http://hello.default.svc", "True/LoadBalancerReady"},
		{"TLS makes the url https", secure, append(slices.Clone(running), observe(t, secureIng, 1, observedSecure.Status)), []string{"Deployment/hello", "Ingress/hello", "Service/hello"}, "hello.example.com", "https://hello.example.com/api", "http://hello.default.svc", "True/LoadBalancerReady"},
		{"host changed", changed, append(slices.Clone(running), observe(t, ing, 1, addressed.Status)), []string{"Deployment/hello", "Ingress/hello", "Service/hello"}, "www.example.com", "http://hello.example.com/", "http://hello.default.svc", "True/LoadBalancerReady"},
		{"removed: the observed Ingress is deleted", webapp(), append(slices.Clone(running), observe(t, ing, 1, addressed.Status)), []string{"Deployment/hello", "Service/hello"}, "", "http://hello.example.com/", "http://hello.default.svc", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &sync.Request{Parent: tt.parent, Children: tt.children}
			resp := checkedSync(t, req)
			if got := names(t, resp.Children); !slices.Equal(got, tt.wantNames) {
				t.Errorf("children = %v; want %v", got, tt.wantNames)
			}
			if got := childOf[*networkingv1.Ingress](resp.Children); (got == nil) != (tt.wantHost == "") || got != nil && got.Spec.Rules[0].Host != tt.wantHost {
				t.Errorf("Ingress = %+v; want host %q", got, tt.wantHost)
			}
			st := resp.Status
			if st.URL != tt.wantURL || st.Address != tt.wantAddress {
				t.Errorf("url, address = %q, %q; want %q, %q", st.URL, st.Address, tt.wantURL, tt.wantAddress)
			}
			if got := conditionOf(st, webappv1.ConditionIngressReady); got != tt.wantCondition {
				t.Errorf("IngressReady = %q; want %q", got, tt.wantCondition)
			}
			if st.Phase != webappv1.PhaseReady {
				t.Errorf("phase = %q; want Ready: Ready does not wait for the Ingress (%s)", st.Phase, st.Message)
			}
		})
	}
}

// TestSyncDisruptionBudget checks that a PodDisruptionBudget exists exactly while it is asked for
// and 2 or more replicas are desired, and goes when replicas drop to 1.
func TestSyncDisruptionBudget(t *testing.T) {
	budget := func(replicas int32, maxUnavailable *intstr.IntOrString) sync.Parent {
		return webapp(func(p *sync.Parent) {
			p.Spec.Replicas = ptr(replicas)
			p.Spec.DisruptionBudget = &webappv1.DisruptionBudget{MaxUnavailable: maxUnavailable}
		})
	}
	two := budget(2, nil)
	pdb := childOf[*policyv1.PodDisruptionBudget](sync.Sync(&sync.Request{Parent: two}, now).Children)
	labels := map[string]string{webappv1.LabelName: webappv1.AppName, webappv1.LabelInstance: "hello", webappv1.LabelManagedBy: webappv1.ManagedBy}
	equal(t, "PodDisruptionBudget", pdb, &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: "hello", Namespace: "default", Labels: labels},
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable:             ptr(intstr.FromInt32(1)),
			Selector:                   &metav1.LabelSelector{MatchLabels: labels},
			UnhealthyPodEvictionPolicy: ptr(policyv1.AlwaysAllow), // an unhealthy pod never blocks a drain
		},
	})
	dep, _ := desired(t, two)
	tests := []struct {
		name               string
		parent             sync.Parent
		children           []sync.Child
		wantMaxUnavailable string // "" for no PodDisruptionBudget
	}{
		{"1 replica: none", budget(1, nil), nil, ""},
		{"2 replicas: default maxUnavailable 1", two, nil, "1"},
		{"a percentage", budget(4, ptr(intstr.FromString("25%"))), nil, "25%"},
		{"0 replicas: none", budget(0, nil), nil, ""},
		{"not asked for: none, whatever the replicas", webapp(), nil, ""},
		{"replicas drop to 1: the observed one is deleted", budget(1, nil), []sync.Child{observe(t, dep, 1, depStatus(1, 2, 2, 2, 2)), observe(t, pdb, 1, nil)}, ""},
		{"replicas stay at 2: the observed one is kept", two, []sync.Child{observe(t, dep, 1, depStatus(1, 2, 2, 2, 2)), observe(t, pdb, 1, nil)}, "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &sync.Request{Parent: tt.parent, Children: tt.children}
			resp := checkedSync(t, req)
			got := childOf[*policyv1.PodDisruptionBudget](resp.Children)
			switch {
			case tt.wantMaxUnavailable == "" && got != nil:
				t.Errorf("PodDisruptionBudget = %+v; want none", got.Spec)
			case tt.wantMaxUnavailable != "" && (got == nil || got.Spec.MaxUnavailable.String() != tt.wantMaxUnavailable):
				t.Errorf("PodDisruptionBudget = %+v; want maxUnavailable %s", got, tt.wantMaxUnavailable)
			}
		})
	}
}

// TestSyncInvalidWorkload checks every rule of the new fields: each is Invalid, names its field,
// and keeps every observed child, the Ingress and the PodDisruptionBudget included.
func TestSyncInvalidWorkload(t *testing.T) {
	withEverything := func(p *sync.Parent) {
		p.Spec.Ingress = &webappv1.Ingress{Host: "hello.example.com"}
		p.Spec.DisruptionBudget = &webappv1.DisruptionBudget{}
	}
	resp := sync.Sync(&sync.Request{Parent: webapp(withEverything)}, now)
	var observed []sync.Child
	for _, c := range resp.Children {
		observed = append(observed, observe(t, c, 1, nil))
	}
	if len(observed) != 4 {
		t.Fatalf("%d children to observe; want a Deployment, a Service, an Ingress and a PodDisruptionBudget", len(observed))
	}
	noHandler := &corev1.Probe{PeriodSeconds: 5}
	twoHandlers := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(80)}, TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(80)}}}
	tests := []struct {
		name        string
		mod         func(*webappv1.WebAppSpec)
		wantMessage string
	}{
		{"envFrom with both sources", func(s *webappv1.WebAppSpec) {
			s.EnvFrom = []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "a"}}, SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "b"}}}}
		}, "spec.envFrom[0]: Invalid value: needs exactly one of configMapRef or secretRef"},
		{"envFrom without a name", func(s *webappv1.WebAppSpec) {
			s.EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{}}}
		}, "spec.envFrom[0].secretRef.name: Required value"},
		{"envFrom with a bad prefix", func(s *webappv1.WebAppSpec) {
			s.EnvFrom = []corev1.EnvFromSource{{Prefix: "1X", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "a"}}}}
		}, `spec.envFrom[0].prefix: Invalid value: "1X": a valid environment variable name`},
		{"healthCheck without a path", func(s *webappv1.WebAppSpec) { s.HealthCheck = &webappv1.HealthCheck{} }, "spec.healthCheck.path: Required value"},
		{"healthCheck path not absolute", func(s *webappv1.WebAppSpec) { s.HealthCheck = &webappv1.HealthCheck{Path: "healthz"} }, `spec.healthCheck.path: Invalid value: "healthz": must start with /`},
		{"healthCheck without a port to use", func(s *webappv1.WebAppSpec) {
			s.Port, s.Ingress = nil, nil
			s.HealthCheck = &webappv1.HealthCheck{Path: "/healthz"}
		}, "spec.healthCheck.port: Required value: when spec.port is not set"},
		{"healthCheck port out of range", func(s *webappv1.WebAppSpec) { s.HealthCheck = &webappv1.HealthCheck{Path: "/", Port: ptr(int32(0))} }, "spec.healthCheck.port: Invalid value: 0: must be between 1 and 65535, inclusive"},
		{"a probe without a handler", func(s *webappv1.WebAppSpec) { s.ReadinessProbe = noHandler }, "spec.readinessProbe: Invalid value: needs exactly one of exec, httpGet, tcpSocket or grpc, got 0"},
		{"a probe with two handlers", func(s *webappv1.WebAppSpec) { s.LivenessProbe = twoHandlers }, "spec.livenessProbe: Invalid value: needs exactly one of exec, httpGet, tcpSocket or grpc, got 2"},
		{"a liveness probe that must succeed twice", func(s *webappv1.WebAppSpec) {
			s.LivenessProbe = &corev1.Probe{ProbeHandler: httpGet("/", 8080), SuccessThreshold: 2}
		}, "spec.livenessProbe.successThreshold: Invalid value: 2: must be 1"},
		{"a probe of another host", func(s *webappv1.WebAppSpec) {
			h := httpGet("/", 8080)
			h.HTTPGet.Host = "169.254.169.254"
			s.ReadinessProbe = &corev1.Probe{ProbeHandler: h}
		}, "spec.readinessProbe.httpGet.host: Forbidden: a probe checks the pod itself"},
		{"a TCP probe of another host", func(s *webappv1.WebAppSpec) {
			s.LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: "10.0.0.1", Port: intstr.FromInt32(22)}}}
		}, "spec.livenessProbe.tcpSocket.host: Forbidden: a probe checks the pod itself"},
		{"a probe port out of range", func(s *webappv1.WebAppSpec) { s.StartupProbe = &corev1.Probe{ProbeHandler: httpGet("/", 70000)} }, "spec.startupProbe.httpGet.port: Invalid value: 70000: must be between 1 and 65535, inclusive"},
		{"a volume without a source", func(s *webappv1.WebAppSpec) { s.Volumes = []webappv1.Volume{{Name: "v", MountPath: "/v"}} }, "spec.volumes[0]: Invalid value: needs exactly one of configMap, secret or emptyDir, got 0"},
		{"a volume with two sources", func(s *webappv1.WebAppSpec) {
			s.Volumes = []webappv1.Volume{{Name: "v", MountPath: "/v", EmptyDir: &corev1.EmptyDirVolumeSource{}, Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}
		}, "spec.volumes[0]: Invalid value: needs exactly one of configMap, secret or emptyDir, got 2"},
		{"a duplicate volume name", func(s *webappv1.WebAppSpec) {
			s.Volumes = []webappv1.Volume{{Name: "v", MountPath: "/a", EmptyDir: &corev1.EmptyDirVolumeSource{}}, {Name: "v", MountPath: "/b", EmptyDir: &corev1.EmptyDirVolumeSource{}}}
		}, `spec.volumes[1].name: Duplicate value: "v"`},
		{"a duplicate mount path", func(s *webappv1.WebAppSpec) {
			s.Volumes = []webappv1.Volume{{Name: "a", MountPath: "/data", EmptyDir: &corev1.EmptyDirVolumeSource{}}, {Name: "b", MountPath: "/data/", EmptyDir: &corev1.EmptyDirVolumeSource{}}}
		}, `spec.volumes[1].mountPath: Duplicate value: "/data/"`},
		{"a relative mount path", func(s *webappv1.WebAppSpec) {
			s.Volumes = []webappv1.Volume{{Name: "a", MountPath: "data", EmptyDir: &corev1.EmptyDirVolumeSource{}}}
		}, `spec.volumes[0].mountPath: Invalid value: "data": must be an absolute path`},
		{"a volume item escaping the volume", func(s *webappv1.WebAppSpec) {
			s.Volumes = []webappv1.Volume{{Name: "a", MountPath: "/a", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}, Items: []corev1.KeyToPath{{Key: "k", Path: "../etc/passwd"}}}}}
		}, `spec.volumes[0].configMap.items[0].path: Invalid value: "../etc/passwd": must be a relative path without ..`},
		{"an imagePullSecret without a name", func(s *webappv1.WebAppSpec) { s.ImagePullSecrets = []corev1.LocalObjectReference{{}} }, "spec.imagePullSecrets[0].name: Required value"},
		{"a bad serviceAccountName", func(s *webappv1.WebAppSpec) { s.ServiceAccountName = "App_Account" }, `spec.serviceAccountName: Invalid value: "App_Account": a lowercase RFC 1123 subdomain`},
		{"a strategy that cannot progress", func(s *webappv1.WebAppSpec) {
			s.Strategy = &webappv1.RolloutStrategy{MaxSurge: ptr(intstr.FromInt32(0)), MaxUnavailable: ptr(intstr.FromString("0%"))}
		}, `spec.strategy.maxUnavailable: Invalid value: "0%": must not be 0 when maxSurge is 0`},
		{"a strategy percentage above 100", func(s *webappv1.WebAppSpec) {
			s.Strategy = &webappv1.RolloutStrategy{MaxSurge: ptr(intstr.FromString("150%"))}
		}, `spec.strategy.maxSurge: Invalid value: "150%": must be a count, or a percentage between 0% and 100%`},
		{"progressDeadlineSeconds 0", func(s *webappv1.WebAppSpec) { s.ProgressDeadlineSeconds = ptr(int32(0)) }, "spec.progressDeadlineSeconds: Invalid value: 0: must be greater than or equal to 1"},
		{"ingress without a port", func(s *webappv1.WebAppSpec) { s.Port = nil }, "spec.ingress: Invalid value: needs spec.port"},
		{"ingress host not a DNS name", func(s *webappv1.WebAppSpec) { s.Ingress.Host = "Hello_World" }, `spec.ingress.host: Invalid value: "Hello_World": a lowercase RFC 1123 subdomain`},
		{"ingress host with a wildcard inside", func(s *webappv1.WebAppSpec) { s.Ingress.Host = "a.*.example.com" }, `spec.ingress.host: Invalid value: "a.*.example.com": a wildcard may only be the first label`},
		{"ingress path not absolute", func(s *webappv1.WebAppSpec) { s.Ingress.Path = "api" }, `spec.ingress.path: Invalid value: "api": must start with /`},
		{"ingress pathType unknown", func(s *webappv1.WebAppSpec) { s.Ingress.PathType = ptr(networkingv1.PathType("Regex")) }, `spec.ingress.pathType: Unsupported value: "Regex": supported values: "Prefix", "Exact", "ImplementationSpecific"`},
		{"ingress tls without a Secret", func(s *webappv1.WebAppSpec) { s.Ingress.TLS = &webappv1.IngressTLS{} }, "spec.ingress.tls.secretName: Required value"},
		{"ingress annotation with a bad name", func(s *webappv1.WebAppSpec) { s.Ingress.Annotations = map[string]string{"not a key": "x"} }, `spec.ingress.annotations: Invalid value: "not a key": name part must consist of`},
		{"disruptionBudget below zero", func(s *webappv1.WebAppSpec) { s.DisruptionBudget.MaxUnavailable = ptr(intstr.FromInt32(-1)) }, "spec.disruptionBudget.maxUnavailable: Invalid value: -1: must be greater than or equal to 0"},
		{"an unknown securityProfile", func(s *webappv1.WebAppSpec) { s.SecurityProfile = "baseline" }, `spec.securityProfile: Unsupported value: "baseline": supported values: "restricted", "none"`},
		{"a negative runAsUser", func(s *webappv1.WebAppSpec) {
			s.PodSecurityContext = &corev1.PodSecurityContext{RunAsUser: ptr(int64(-1))}
		}, "spec.podSecurityContext.runAsUser: Invalid value: -1: must be greater than or equal to 0"},
		{"a Localhost seccomp profile without a name", func(s *webappv1.WebAppSpec) {
			s.SecurityContext = &corev1.SecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost}}
		}, "spec.securityContext.seccompProfile.localhostProfile: Required value: when type is Localhost"},
		{"a nodeSelector that is no label", func(s *webappv1.WebAppSpec) { s.NodeSelector = map[string]string{"pool": "not a value"} }, `spec.nodeSelector: Invalid value: "not a value"`},
		{"a toleration with an unknown operator", func(s *webappv1.WebAppSpec) { s.Tolerations = []corev1.Toleration{{Key: "k", Operator: "Like"}} }, `spec.tolerations[0].operator: Unsupported value: "Like"`},
		{"a toleration with seconds but no NoExecute", func(s *webappv1.WebAppSpec) {
			s.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr(int64(5))}}
		}, `spec.tolerations[0].effect: Invalid value: "NoSchedule": must be NoExecute when tolerationSeconds is set`},
		{"node affinity with no term", func(s *webappv1.WebAppSpec) {
			s.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}}}
		}, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value"},
		{"pod anti-affinity without a topologyKey", func(s *webappv1.WebAppSpec) {
			s.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{}}}}
		}, "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value"},
		{"a spread constraint with maxSkew 0", func(s *webappv1.WebAppSpec) {
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}}
		}, "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than or equal to 1"},
		{"a spread constraint with an unknown whenUnsatisfiable", func(s *webappv1.WebAppSpec) {
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: "Sometimes"}}
		}, `spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: "Sometimes"`},
		{"a bad priorityClassName", func(s *webappv1.WebAppSpec) { s.PriorityClassName = "High_Priority" }, `spec.priorityClassName: Invalid value: "High_Priority": a lowercase RFC 1123 subdomain`},
		{"a podLabel the hook owns", func(s *webappv1.WebAppSpec) { s.PodLabels = map[string]string{webappv1.LabelInstance: "other"} }, "spec.podLabels[app.kubernetes.io/instance]: Forbidden: the hook sets this label itself"},
		{"pod-template-hash in podLabels", func(s *webappv1.WebAppSpec) { s.PodLabels = map[string]string{"pod-template-hash": "x"} }, "spec.podLabels[pod-template-hash]: Forbidden: the hook sets this label itself"},
		{"a podAnnotation the hook owns", func(s *webappv1.WebAppSpec) { s.PodAnnotations = map[string]string{webappv1.AnnotationConfigHash: "x"} }, "spec.podAnnotations[webapp.example.com/config-hash]: Forbidden: the hook sets this annotation itself"},
		{"a podAnnotation with a bad name", func(s *webappv1.WebAppSpec) { s.PodAnnotations = map[string]string{"not a key": "x"} }, `spec.podAnnotations: Invalid value: "not a key": name part must consist of`},
		{"a shutdown delay as long as the default grace period", func(s *webappv1.WebAppSpec) { s.ShutdownDelaySeconds = ptr(int32(30)) },
			"spec.shutdownDelaySeconds: Invalid value: 30: must be less than terminationGracePeriodSeconds (30), or the pod is killed before it stops"},
		{"a shutdown delay longer than the grace period", func(s *webappv1.WebAppSpec) {
			s.ShutdownDelaySeconds, s.TerminationGracePeriodSeconds = ptr(int32(20)), ptr(int64(10))
		}, "spec.shutdownDelaySeconds: Invalid value: 20: must be less than terminationGracePeriodSeconds (10)"},
		{"a shutdown delay of 0", func(s *webappv1.WebAppSpec) { s.ShutdownDelaySeconds = ptr(int32(0)) }, "spec.shutdownDelaySeconds: Invalid value: 0: must be between 1 and 3600, inclusive"},
		{"a negative grace period", func(s *webappv1.WebAppSpec) { s.TerminationGracePeriodSeconds = ptr(int64(-1)) }, "spec.terminationGracePeriodSeconds: Invalid value: -1: must be greater than or equal to 0"},
		{"a preStop hook with no action", func(s *webappv1.WebAppSpec) { s.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{}} }, "spec.lifecycle.preStop: Invalid value: needs exactly one of exec, httpGet, tcpSocket or sleep, got 0"},
		{"a preStop hook calling another host", func(s *webappv1.WebAppSpec) {
			s.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: "169.254.169.254", Port: intstr.FromInt32(80)}}}
		}, "spec.lifecycle.preStop.httpGet.host: Forbidden: a lifecycle hook calls the pod itself"},
		{"a preStop sleep longer than the grace period", func(s *webappv1.WebAppSpec) {
			s.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 40}}}
		}, "spec.lifecycle.preStop.sleep.seconds: Invalid value: 40: must be between 0 and terminationGracePeriodSeconds (30)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := webapp(withEverything, func(p *sync.Parent) { tt.mod(&p.Spec) })
			req := &sync.Request{Parent: p, Children: observed}
			invalidKeepsAll(t, req, tt.wantMessage)
		})
	}
}

// TestFinalizeWithEveryChild checks the teardown order with an Ingress and a PodDisruptionBudget:
// they go with the Service, before the Deployment is scaled down.
func TestFinalizeWithEveryChild(t *testing.T) {
	p := webapp(func(p *sync.Parent) {
		p.Spec.Ingress = &webappv1.Ingress{Host: "hello.example.com"}
		p.Spec.DisruptionBudget = &webappv1.DisruptionBudget{}
	})
	var all []sync.Child
	var dep sync.Child
	for _, c := range sync.Sync(&sync.Request{Parent: p}, now).Children {
		var status any
		if d, ok := c.(*appsv1.Deployment); ok {
			status = depStatus(1, 3, 3, 3, 3)
			dep = observe(t, d, 1, status)
			all = append(all, dep)
			continue
		}
		all = append(all, observe(t, c, 1, status))
	}
	tests := []struct {
		name     string
		children []sync.Child
		want     []string
		message  string
	}{
		{"everything but the Deployment goes first", all, []string{"Deployment/hello"}, "Deleting 3 children other than Deployments first so that traffic stops; 1 Deployment remains."},
		{"then the Deployment is scaled to zero", []sync.Child{dep}, []string{"Deployment/hello"}, "Scaling 1 Deployment to zero; 3 pods left."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &sync.Request{Parent: p, Children: tt.children, Finalizing: true}
			resp := checkedFinalize(t, req)
			if got := names(t, resp.Children); !slices.Equal(got, tt.want) || resp.Status.Message != tt.message {
				t.Errorf("children %v, message %q; want %v, %q", got, resp.Status.Message, tt.want, tt.message)
			}
			if d := hooktest.Field(sentChildren(t, resp)[0], "spec", "replicas"); fmt.Sprint(d) != map[bool]string{true: "3", false: "0"}[len(tt.children) > 1] {
				t.Errorf("spec.replicas = %v; want 3 while other children remain, then 0", d)
			}
		})
	}
}

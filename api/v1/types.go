package v1

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

//go:generate go run sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0 crd:crdVersions=v1,allowDangerousTypes=true paths=./... output:crd:artifacts:config=../../crds

// Group, Version and Kind name the WebApp resource.
const (
	Group   = "example.com"
	Version = "v1"
	Kind    = "WebApp"
)

// Limits of WebAppSpec, enforced both by the CRD schema and by the hook's own validation.
const (
	// DefaultReplicas is used when spec.replicas is omitted.
	DefaultReplicas = 1
	// MaxReplicas is the largest accepted spec.replicas.
	MaxReplicas = 1000
	// MinPort and MaxPort bound spec.port.
	MinPort = 1
	MaxPort = 65535
	// MaxUtilizationPercentage bounds the autoscaling targets.
	MaxUtilizationPercentage = 1000
)

// DefaultTerminationGracePeriodSeconds is a pod's terminationGracePeriodSeconds when it sets none.
const DefaultTerminationGracePeriodSeconds = 30

// MaxShutdownDelaySeconds bounds spec.shutdownDelaySeconds, as the CRD does.
const MaxShutdownDelaySeconds = 3600

// Limits of spec.route: those of the HTTPRoute schema, which the route must pass.
const (
	// MaxRouteHostnames is the most hostnames an HTTPRoute takes.
	MaxRouteHostnames = 16
	// MaxRouteParentRefs is the most parentRefs an HTTPRoute takes.
	MaxRouteParentRefs = 32
	// MaxRoutePathLength is the longest path an HTTPRoute match takes.
	MaxRoutePathLength = 1024
)

// WebApp runs one container image as a Deployment and, when a port is given, exposes it with a ClusterIP Service.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=webapps,scope=Namespaced,shortName=wa,singular=webapp
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.readyOfDesired`,description="Ready pods of those desired, as kubectl get deployments shows them"
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`,description="Lifecycle phase"
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,description="Why the WebApp is, or is not, Ready"
// +kubebuilder:printcolumn:name="URL",type=string,JSONPath=`.status.url`,description="Where clients reach the app"
// +kubebuilder:printcolumn:name="Canary",type=integer,JSONPath=`.status.canary.weight`,description="The canary's share of the traffic, in percent, while one runs"
// +kubebuilder:printcolumn:name="Analysis",type=string,priority=1,JSONPath=`.status.canary.analysis.result`,description="The result of the canary's latest check, with spec.rollout.canary.analysis"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="Image",type=string,priority=1,JSONPath=`.spec.image`,description="Container image"
// +kubebuilder:printcolumn:name="Message",type=string,priority=1,JSONPath=`.status.message`,description="What is going on, in one sentence"
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the web application.
	// +required
	Spec WebAppSpec `json:"spec"`
	// status is the observed state of the web application, written by the webapp hook through Metacontroller.
	// +optional
	Status WebAppStatus `json:"status,omitzero"`
}

// WebAppSpec is the desired state of a WebApp. A zero Replicas means scaled to zero, not "use the default":
// the default of 1 applies only when the field is omitted, which the CRD schema and the hook both do.
// +kubebuilder:validation:XValidation:rule="!has(self.ingress) || has(self.port)",message="ingress needs port: the Ingress routes to the Service that port makes",fieldPath=".ingress"
// +kubebuilder:validation:XValidation:rule="!has(self.route) || has(self.port)",message="route needs port: the HTTPRoute routes to the Service that port makes",fieldPath=".route"
// +kubebuilder:validation:XValidation:rule="!has(self.healthCheck) || has(self.healthCheck.port) || has(self.port)",message="healthCheck needs a port: set healthCheck.port or port",fieldPath=".healthCheck"
// +kubebuilder:validation:XValidation:rule="!has(self.lifecycle) || !has(self.lifecycle.preStop) || !has(self.lifecycle.preStop.sleep) || (self.lifecycle.preStop.sleep.seconds >= 0 && self.lifecycle.preStop.sleep.seconds <= (has(self.terminationGracePeriodSeconds) ? self.terminationGracePeriodSeconds : 30))",message="a lifecycle preStop sleep must be between 0 and terminationGracePeriodSeconds (30 when unset)",fieldPath=".lifecycle"
// +kubebuilder:validation:XValidation:rule="!has(self.lifecycle) || !has(self.lifecycle.postStart) || !has(self.lifecycle.postStart.sleep) || (self.lifecycle.postStart.sleep.seconds >= 0 && self.lifecycle.postStart.sleep.seconds <= (has(self.terminationGracePeriodSeconds) ? self.terminationGracePeriodSeconds : 30))",message="a lifecycle postStart sleep must be between 0 and terminationGracePeriodSeconds (30 when unset)",fieldPath=".lifecycle"
// +kubebuilder:validation:XValidation:rule="!has(self.rollout) || !has(self.rollout.canary) || !has(self.podLabels) || !('webapp.example.com/track' in self.podLabels)",message="podLabels must not set webapp.example.com/track with rollout.canary: it marks the canary's pods",fieldPath=".podLabels"
// +kubebuilder:validation:XValidation:rule="!has(self.rollout) || !has(self.rollout.canary) || !has(self.rollout.canary.headerRoute) || has(self.route)",message="rollout.canary.headerRoute needs route: its match is a rule of the HTTPRoute",fieldPath=".rollout.canary.headerRoute"
// +kubebuilder:validation:XValidation:rule="!has(self.shutdownDelaySeconds) || self.shutdownDelaySeconds < (has(self.terminationGracePeriodSeconds) ? self.terminationGracePeriodSeconds : 30)",message="shutdownDelaySeconds must be less than terminationGracePeriodSeconds (30 when unset), or the pod is killed before it stops",fieldPath=".shutdownDelaySeconds"
type WebAppSpec struct {
	// image is the container image to run, as a reference such as "nginx:1.27" or
	// "registry.example.com/team/app@sha256:...". Changing it starts a rolling update.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Image string `json:"image"`

	// replicas is the number of pods to run. 0 scales the application to zero.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1000
	Replicas *int32 `json:"replicas,omitempty"`

	// port is the TCP port the container listens on. When set, a ClusterIP Service named after the
	// WebApp exposes it on port 80 and status.url points at it.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`

	// env lists environment variables to set in the container.
	// +optional
	// +listType=map
	// +listMapKey=name
	Env []corev1.EnvVar `json:"env,omitempty"`

	// resources are the compute resources (CPU, memory) the container requests and is limited to.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// command replaces the image's entrypoint, as the container's command.
	// +optional
	// +listType=atomic
	Command []string `json:"command,omitempty"`

	// args are the arguments to the entrypoint, as the container's args.
	// +optional
	// +listType=atomic
	Args []string `json:"args,omitempty"`

	// envFrom sets environment variables from every key of ConfigMaps and Secrets, as the
	// container's envFrom. Each entry names exactly one of configMapRef or secretRef.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(e, [has(e.configMapRef), has(e.secretRef)].filter(x, x).size() == 1)",message="each envFrom entry needs exactly one of configMapRef or secretRef"
	EnvFrom []corev1.EnvFromSource `json:"envFrom,omitempty"`

	// healthCheck is the HTTP endpoint that says the app can serve. It becomes an HTTP GET
	// readinessProbe, so that a pod gets traffic only once it answers, and a startupProbe that
	// gives the app about 5 minutes to start before it counts as failed. It adds no livenessProbe.
	// An explicit readinessProbe or startupProbe replaces the one it would make.
	// +optional
	HealthCheck *HealthCheck `json:"healthCheck,omitempty"`

	// readinessProbe is the container's readiness probe, as in a Pod. It replaces the one
	// healthCheck makes.
	// +optional
	// +kubebuilder:validation:XValidation:rule="[has(self.exec), has(self.httpGet), has(self.tcpSocket), has(self.grpc)].filter(x, x).size() == 1",message="a probe needs exactly one of exec, httpGet, tcpSocket or grpc"
	// +kubebuilder:validation:XValidation:rule="!has(self.httpGet) || !has(self.httpGet.host) || self.httpGet.host == ''",message="httpGet.host must not be set: a probe checks the pod itself"
	// +kubebuilder:validation:XValidation:rule="!has(self.tcpSocket) || !has(self.tcpSocket.host) || self.tcpSocket.host == ''",message="tcpSocket.host must not be set: a probe checks the pod itself"
	ReadinessProbe *corev1.Probe `json:"readinessProbe,omitempty"`

	// livenessProbe is the container's liveness probe, as in a Pod: the kubelet restarts the
	// container when it fails. There is none unless it is set here.
	// +optional
	// +kubebuilder:validation:XValidation:rule="[has(self.exec), has(self.httpGet), has(self.tcpSocket), has(self.grpc)].filter(x, x).size() == 1",message="a probe needs exactly one of exec, httpGet, tcpSocket or grpc"
	// +kubebuilder:validation:XValidation:rule="!has(self.successThreshold) || self.successThreshold == 1",message="successThreshold must be 1 for a livenessProbe"
	// +kubebuilder:validation:XValidation:rule="!has(self.httpGet) || !has(self.httpGet.host) || self.httpGet.host == ''",message="httpGet.host must not be set: a probe checks the pod itself"
	// +kubebuilder:validation:XValidation:rule="!has(self.tcpSocket) || !has(self.tcpSocket.host) || self.tcpSocket.host == ''",message="tcpSocket.host must not be set: a probe checks the pod itself"
	LivenessProbe *corev1.Probe `json:"livenessProbe,omitempty"`

	// startupProbe is the container's startup probe, as in a Pod. It replaces the one healthCheck
	// makes.
	// +optional
	// +kubebuilder:validation:XValidation:rule="[has(self.exec), has(self.httpGet), has(self.tcpSocket), has(self.grpc)].filter(x, x).size() == 1",message="a probe needs exactly one of exec, httpGet, tcpSocket or grpc"
	// +kubebuilder:validation:XValidation:rule="!has(self.successThreshold) || self.successThreshold == 1",message="successThreshold must be 1 for a startupProbe"
	// +kubebuilder:validation:XValidation:rule="!has(self.httpGet) || !has(self.httpGet.host) || self.httpGet.host == ''",message="httpGet.host must not be set: a probe checks the pod itself"
	// +kubebuilder:validation:XValidation:rule="!has(self.tcpSocket) || !has(self.tcpSocket.host) || self.tcpSocket.host == ''",message="tcpSocket.host must not be set: a probe checks the pod itself"
	StartupProbe *corev1.Probe `json:"startupProbe,omitempty"`

	// volumes are mounted into the container: config files from a ConfigMap or a Secret, or
	// scratch space. Names and mount paths are unique.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(v, self.exists_one(w, w.mountPath == v.mountPath))",message="each volume needs a mountPath of its own"
	Volumes []Volume `json:"volumes,omitempty"`

	// imagePullSecrets name the Secrets, in the WebApp's namespace, that hold credentials for
	// pulling the image from a private registry, as the pod's imagePullSecrets.
	// +optional
	// +listType=atomic
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// serviceAccountName is the ServiceAccount the pods run as. Empty means the namespace's default.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// securityProfile sets, on the pod and its container, what Pod Security "restricted"
	// requires: runAsNonRoot, no privilege escalation, every capability dropped, the
	// RuntimeDefault seccomp profile, and no ServiceAccount token unless serviceAccountName is
	// set. podSecurityContext, securityContext and automountServiceAccountToken win over it,
	// field by field. Omitted, the hook's --default-security-profile applies (none unless the
	// platform team set one); "none" opts out of that default.
	// +optional
	SecurityProfile SecurityProfile `json:"securityProfile,omitempty"`

	// podSecurityContext is the pod's securityContext, as in a Pod. A field set here wins over
	// the one securityProfile would set.
	// +optional
	// +kubebuilder:validation:XValidation:rule="[self.?runAsUser, self.?runAsGroup, self.?fsGroup].all(id, !id.hasValue() || id.value() >= 0)",message="runAsUser, runAsGroup and fsGroup must be at least 0"
	// +kubebuilder:validation:XValidation:rule="!has(self.supplementalGroups) || self.supplementalGroups.all(g, g >= 0)",message="supplementalGroups must be at least 0"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || self.seccompProfile.type in ['RuntimeDefault', 'Unconfined', 'Localhost']",message="seccompProfile.type must be RuntimeDefault, Unconfined or Localhost"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || (self.seccompProfile.type == 'Localhost') == (has(self.seccompProfile.localhostProfile) && self.seccompProfile.localhostProfile != '')",message="seccompProfile.localhostProfile is set exactly when type is Localhost"
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// securityContext is the container's securityContext, as in a Pod. A field set here wins
	// over the one securityProfile would set; capabilities.add and capabilities.drop count as
	// two fields.
	// +optional
	// +kubebuilder:validation:XValidation:rule="[self.?runAsUser, self.?runAsGroup].all(id, !id.hasValue() || id.value() >= 0)",message="runAsUser and runAsGroup must be at least 0"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || self.seccompProfile.type in ['RuntimeDefault', 'Unconfined', 'Localhost']",message="seccompProfile.type must be RuntimeDefault, Unconfined or Localhost"
	// +kubebuilder:validation:XValidation:rule="!has(self.seccompProfile) || (self.seccompProfile.type == 'Localhost') == (has(self.seccompProfile.localhostProfile) && self.seccompProfile.localhostProfile != '')",message="seccompProfile.localhostProfile is set exactly when type is Localhost"
	// +kubebuilder:validation:XValidation:rule="!has(self.procMount) || self.procMount in ['Default', 'Unmasked']",message="procMount must be Default or Unmasked"
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// automountServiceAccountToken says whether the ServiceAccount's token is mounted into the
	// pods, as in a Pod. Unset, the ServiceAccount decides, unless securityProfile is restricted
	// without a serviceAccountName, which mounts none.
	// +optional
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken,omitempty"`

	// nodeSelector are node labels a node must carry for the pods to run on it, as in a Pod.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 317 && k.substring(k.lastIndexOf('/') + 1).size() <= 63 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$'))",message="nodeSelector keys must be label keys: an optional DNS subdomain prefix and /, then at most 63 letters, digits, '-', '_' or '.'"
	// +kubebuilder:validation:XValidation:rule="self.all(k, self[k].size() <= 63)",message="nodeSelector values must be label values, at most 63 characters"
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// tolerations let the pods run on nodes with matching taints, as in a Pod.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator in ['Equal', 'Exists'])",message="a toleration's operator must be Equal or Exists"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.tolerationSeconds) || (has(t.effect) && t.effect == 'NoExecute'))",message="a toleration with tolerationSeconds needs effect NoExecute"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.operator) || t.operator != 'Exists' || !has(t.value) || t.value == '')",message="a toleration with operator Exists takes no value"
	// +kubebuilder:validation:XValidation:rule="self.all(t, (has(t.key) && t.key != '') || (has(t.operator) && t.operator == 'Exists'))",message="a toleration without a key needs operator Exists"
	// +kubebuilder:validation:XValidation:rule="self.all(t, !has(t.effect) || t.effect in ['', 'NoSchedule', 'PreferNoSchedule', 'NoExecute'])",message="a toleration's effect must be NoSchedule, PreferNoSchedule or NoExecute"
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// affinity constrains the nodes the pods run on, and how they sit next to other pods, as in
	// a Pod.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.nodeAffinity) || !has(self.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution) || self.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.size() > 0",message="nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution needs at least one node selector term"
	// +kubebuilder:validation:XValidation:rule="!has(self.nodeAffinity) || !has(self.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution) || self.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.all(p, p.weight >= 1 && p.weight <= 100)",message="a preference's weight must be between 1 and 100"
	// +kubebuilder:validation:XValidation:rule="!has(self.podAffinity) || !has(self.podAffinity.requiredDuringSchedulingIgnoredDuringExecution) || self.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.all(t, t.topologyKey != '')",message="a podAffinity term needs a topologyKey"
	// +kubebuilder:validation:XValidation:rule="!has(self.podAntiAffinity) || !has(self.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution) || self.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.all(t, t.topologyKey != '')",message="a podAntiAffinity term needs a topologyKey"
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// topologySpreadConstraints spread the pods across zones, nodes or other topology domains,
	// as in a Pod. A constraint without a labelSelector spreads the WebApp's own pods: it gets
	// the pods' selector and matchLabelKeys [pod-template-hash], so that each rollout's pods
	// spread on their own instead of skewing against the old ones (kubernetes/kubernetes#98215).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.maxSkew >= 1)",message="a spread constraint's maxSkew must be at least 1"
	// +kubebuilder:validation:XValidation:rule="self.all(c, c.whenUnsatisfiable in ['DoNotSchedule', 'ScheduleAnyway'])",message="a spread constraint's whenUnsatisfiable must be DoNotSchedule or ScheduleAnyway"
	// +kubebuilder:validation:XValidation:rule="self.all(c, !has(c.minDomains) || (c.minDomains >= 1 && c.whenUnsatisfiable == 'DoNotSchedule'))",message="a spread constraint's minDomains must be at least 1, and needs whenUnsatisfiable DoNotSchedule"
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// priorityClassName is the PriorityClass of the pods, as in a Pod. Empty means the cluster's
	// default priority.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	PriorityClassName string `json:"priorityClassName,omitempty"`

	// podLabels are added to the pod template's labels, for meshes, scrapers and policies. They
	// never reach the Deployment's own labels or its selector. The keys the hook sets itself
	// (app.kubernetes.io/name, app.kubernetes.io/instance, app.kubernetes.io/managed-by) and
	// pod-template-hash are refused.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="!['app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/managed-by', 'pod-template-hash'].exists(k, k in self)",message="podLabels must not set app.kubernetes.io/name, app.kubernetes.io/instance, app.kubernetes.io/managed-by or pod-template-hash: the hook sets them"
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 317 && k.substring(k.lastIndexOf('/') + 1).size() <= 63 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$'))",message="podLabels keys must be label keys: an optional DNS subdomain prefix and /, then at most 63 letters, digits, '-', '_' or '.'"
	// +kubebuilder:validation:XValidation:rule="self.all(k, self[k].size() <= 63)",message="podLabels values must be label values, at most 63 characters"
	PodLabels map[string]string `json:"podLabels,omitempty"`

	// podAnnotations are added to the pod template's annotations. They never reach the
	// Deployment's own annotations. webapp.example.com/config-hash, which the hook sets itself,
	// is refused.
	// +optional
	// +kubebuilder:validation:MaxProperties=64
	// +kubebuilder:validation:XValidation:rule="!['webapp.example.com/config-hash'].exists(k, k in self)",message="podAnnotations must not set webapp.example.com/config-hash: the hook sets it"
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// shutdownDelaySeconds keeps a terminating pod serving for that many seconds before it gets
	// SIGTERM: a preStop hook sleeps, so that the Service's endpoints drop the pod first and a
	// rollout loses no request. It must be less than terminationGracePeriodSeconds (30 when
	// unset). An explicit lifecycle replaces the hook it makes.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	ShutdownDelaySeconds *int32 `json:"shutdownDelaySeconds,omitempty"`

	// terminationGracePeriodSeconds is how long a terminating pod has, preStop hook included,
	// before it is killed, as in a Pod. The pod's default is 30.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// lifecycle is the container's lifecycle hooks, as in a Pod. When set, it is used as given,
	// and shutdownDelaySeconds makes no preStop hook.
	// +optional
	// +kubebuilder:validation:XValidation:rule="(!has(self.preStop) || !has(self.preStop.httpGet) || !has(self.preStop.httpGet.host) || self.preStop.httpGet.host == '') && (!has(self.postStart) || !has(self.postStart.httpGet) || !has(self.postStart.httpGet.host) || self.postStart.httpGet.host == '')",message="lifecycle httpGet.host must not be set: a lifecycle hook calls the pod itself"
	// +kubebuilder:validation:XValidation:rule="(!has(self.preStop) || !has(self.preStop.tcpSocket) || !has(self.preStop.tcpSocket.host) || self.preStop.tcpSocket.host == '') && (!has(self.postStart) || !has(self.postStart.tcpSocket) || !has(self.postStart.tcpSocket.host) || self.postStart.tcpSocket.host == '')",message="lifecycle tcpSocket.host must not be set: a lifecycle hook calls the pod itself"
	// +kubebuilder:validation:XValidation:rule="!has(self.preStop) || [has(self.preStop.exec), has(self.preStop.httpGet), has(self.preStop.tcpSocket), has(self.preStop.sleep)].filter(x, x).size() == 1",message="preStop needs exactly one of exec, httpGet, tcpSocket or sleep"
	// +kubebuilder:validation:XValidation:rule="!has(self.postStart) || [has(self.postStart.exec), has(self.postStart.httpGet), has(self.postStart.tcpSocket), has(self.postStart.sleep)].filter(x, x).size() == 1",message="postStart needs exactly one of exec, httpGet, tcpSocket or sleep"
	Lifecycle *corev1.Lifecycle `json:"lifecycle,omitempty"`

	// strategy tunes the Deployment's rolling update.
	// +optional
	Strategy *RolloutStrategy `json:"strategy,omitempty"`

	// progressDeadlineSeconds is how long a rollout may go without progress before the Deployment,
	// and so the WebApp, reports it as failed (phase Degraded). The Deployment's default is 600.
	// +optional
	// +kubebuilder:validation:Minimum=1
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`

	// ingress exposes the app outside the cluster: a networking.k8s.io/v1 Ingress named after the
	// WebApp routes host and path to the Service's port 80. It needs port. Removing it deletes the
	// Ingress.
	// +optional
	Ingress *Ingress `json:"ingress,omitempty"`

	// route exposes the app through the Gateway API: a gateway.networking.k8s.io/v1 HTTPRoute
	// named after the WebApp attaches to the Gateways of parentRefs (or, without them, the hook's
	// --default-gateway) and routes hostnames and path to the Service's port 80. It needs port,
	// and a CompositeController with the metacontroller/gateway-api component: without it no
	// HTTPRoute is made, everything else is, and the Routed condition says why. It may be set
	// together with ingress, to move from one to the other. Removing it deletes the HTTPRoute.
	// +optional
	Route *Route `json:"route,omitempty"`

	// disruptionBudget keeps the app serving through voluntary disruptions such as node drains: a
	// policy/v1 PodDisruptionBudget named after the WebApp, which exists only while the WebApp asks
	// for 2 replicas or more (minReplicas while autoscaling). With one replica it would block a
	// drain forever, so there is none.
	// +optional
	DisruptionBudget *DisruptionBudget `json:"disruptionBudget,omitempty"`

	// restartOnConfigChange rolls the pods when the data of a ConfigMap or Secret they use changes:
	// the pod template carries a digest of that data. Unset, it covers the ConfigMaps and Secrets
	// that envFrom and volumes name, and env's valueFrom references only when true (so that a
	// WebApp that used only env does not roll when this field arrived). false turns it off, for apps
	// that reload their config themselves.
	// +optional
	RestartOnConfigChange *bool `json:"restartOnConfigChange,omitempty"`

	// autoscaling lets an autoscaling/v2 HorizontalPodAutoscaler named after the WebApp set the
	// replica count between minReplicas and maxReplicas, from CPU and memory utilization. While it
	// is set, replicas is ignored: the Deployment keeps the count the autoscaler gave it. Removing
	// it hands the count back to replicas.
	// +optional
	Autoscaling *Autoscaling `json:"autoscaling,omitempty"`

	// rollout says how a new pod template reaches the pods. Omitted, it rolls through the
	// Deployment's rolling update, as strategy tunes it; with canary, it goes first to a
	// second Deployment, <name>-canary, that takes a growing share of the traffic step by step
	// (docs/canary.md).
	// +optional
	Rollout *Rollout `json:"rollout,omitempty"`
}

// SecurityProfile names a set of pod and container security settings.
// +kubebuilder:validation:Enum=restricted;none
type SecurityProfile string

// The security profiles.
const (
	// SecurityProfileRestricted is what Pod Security "restricted" requires.
	SecurityProfileRestricted SecurityProfile = "restricted"
	// SecurityProfileNone sets nothing, even when the hook has a default profile.
	SecurityProfileNone SecurityProfile = "none"
)

// Autoscaling bounds the replica count a HorizontalPodAutoscaler may set, and says what it aims
// for. Utilization is a percentage of the container's resources.requests, which the autoscaler
// needs for each resource it targets.
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="maxReplicas must be at least minReplicas"
type Autoscaling struct {
	// minReplicas is the fewest replicas the autoscaler keeps.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// maxReplicas is the most replicas the autoscaler may run, at least minReplicas.
	// +required
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	MaxReplicas int32 `json:"maxReplicas"`

	// targetCPUUtilizationPercentage is the average CPU use the autoscaler aims for, as a
	// percentage of the CPU request. It defaults to 80 when no memory target is given.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`

	// targetMemoryUtilizationPercentage is the average memory use the autoscaler aims for, as a
	// percentage of the memory request.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	TargetMemoryUtilizationPercentage *int32 `json:"targetMemoryUtilizationPercentage,omitempty"`
}

// HealthCheck is an HTTP endpoint that answers 2xx or 3xx once the app can serve.
type HealthCheck struct {
	// path is the HTTP path to GET, starting with "/", for example "/healthz".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Path string `json:"path"`

	// port is the container port to GET it on. It defaults to spec.port, and is required without it.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`
}

// Volume is a pod volume mounted into the container. Exactly one source is set.
// +kubebuilder:validation:XValidation:rule="[has(self.configMap), has(self.secret), has(self.emptyDir)].filter(x, x).size() == 1",message="a volume needs exactly one of configMap, secret or emptyDir"
type Volume struct {
	// name names the volume in the pod: a DNS label, unique in the WebApp.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`

	// mountPath is the absolute path in the container where the volume appears, unique in the WebApp.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	MountPath string `json:"mountPath"`

	// readOnly mounts the volume read-only.
	// +optional
	ReadOnly bool `json:"readOnly,omitempty"`

	// configMap makes the keys of a ConfigMap in the WebApp's namespace files, as in a Pod.
	// +optional
	ConfigMap *corev1.ConfigMapVolumeSource `json:"configMap,omitempty"`

	// secret makes the keys of a Secret in the WebApp's namespace files, as in a Pod.
	// +optional
	Secret *corev1.SecretVolumeSource `json:"secret,omitempty"`

	// emptyDir is scratch space that lives as long as the pod, as in a Pod.
	// +optional
	EmptyDir *corev1.EmptyDirVolumeSource `json:"emptyDir,omitempty"`
}

// RolloutStrategy tunes a rolling update: how many pods above and below the desired count it may
// run while it replaces them. Each is a count or a percentage of the desired replicas.
type RolloutStrategy struct {
	// maxSurge is how many pods may run above the desired count, for example 1 or "25%". The
	// Deployment's default is 25%.
	// +optional
	MaxSurge *intstr.IntOrString `json:"maxSurge,omitempty"`

	// maxUnavailable is how many of the desired pods may be unavailable, for example 0 or "25%".
	// The Deployment's default is 25%. It cannot be 0 when maxSurge is 0.
	// +optional
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// Ingress routes external HTTP traffic for a host (and a path under it) to the WebApp's Service.
type Ingress struct {
	// host is the DNS name clients use, for example "app.example.com"; "*.example.com" matches
	// one label of any name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Host string `json:"host"`

	// path is the URL path routed to the app, starting with "/".
	// +optional
	// +kubebuilder:default="/"
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/`
	Path string `json:"path,omitempty"`

	// pathType says how path matches: Prefix (by path element), Exact, or ImplementationSpecific.
	// +optional
	// +kubebuilder:default=Prefix
	// +kubebuilder:validation:Enum=Prefix;Exact;ImplementationSpecific
	PathType *networkingv1.PathType `json:"pathType,omitempty"`

	// className is the IngressClass that serves this Ingress, as its ingressClassName. Empty means
	// the cluster's default class.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ClassName *string `json:"className,omitempty"`

	// tls serves the host over HTTPS with the certificate in a Secret, and makes status.url https.
	// +optional
	TLS *IngressTLS `json:"tls,omitempty"`

	// annotations are set on the Ingress, for the ingress controller.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty"`
}

// IngressTLS names the certificate an Ingress serves its host with.
type IngressTLS struct {
	// secretName is the kubernetes.io/tls Secret, in the WebApp's namespace, that holds the
	// certificate and key for the host.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	SecretName string `json:"secretName"`
}

// Route attaches an HTTPRoute to Gateways a platform team runs, for hostnames and a path under
// them. The hostnames and the path follow the Gateway API's own rules, so that every route the
// hook makes is one the HTTPRoute schema accepts.
type Route struct {
	// hostnames are the DNS names clients use, for example "app.example.com", at least one and at
	// most 16, each once; "*.example.com" matches one label or more of any name. IP addresses are
	// not hostnames. The first one is status.url's host.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(h, !isIP(h))",message="hostnames must be DNS names, not IP addresses"
	Hostnames []gatewayv1.Hostname `json:"hostnames"`

	// path is the URL path routed to the app, starting with "/": letters, digits, the characters
	// -._~!$&'()*+,;=:@/ and %-escapes, with no "//", "/./" or "/../", not ending in "/." or
	// "/..", and no escaped "/" (%2F).
	// +optional
	// +kubebuilder:default="/"
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^/(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})*$`
	// +kubebuilder:validation:XValidation:rule="!self.contains('//') && !self.contains('/./') && !self.contains('/../') && !self.endsWith('/.') && !self.endsWith('/..')",message="path must not contain '//', '/./' or '/../', nor end with '/.' or '/..'"
	// +kubebuilder:validation:XValidation:rule="!self.contains('%2f') && !self.contains('%2F')",message="path must not contain an escaped '/' (%2F)"
	Path string `json:"path,omitempty"`

	// pathType says how path matches: PathPrefix (by path element: "/api" matches "/api" and
	// "/api/v1", not "/apiv1") or Exact.
	// +optional
	// +kubebuilder:default=PathPrefix
	PathType RoutePathType `json:"pathType,omitempty"`

	// parentRefs are the Gateways (or their listeners) the HTTPRoute attaches to, at most 32. Each
	// Gateway's allowedRoutes decides whether it accepts the route. Omitted, the hook's
	// --default-gateway applies; with neither, the WebApp is Invalid. Each entry names a Gateway
	// of a name of its own, and when every entry sets port, each sets a port of its own:
	// Metacontroller merges this list into the HTTPRoute by port, or else by name, so two entries
	// with the same key would become one.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(p1, self.exists_one(p2, p2.name == p1.name))",message="parentRefs must each name a Gateway of a different name: Metacontroller merges the list by name"
	// +kubebuilder:validation:XValidation:rule="!self.all(p, has(p.port)) || self.all(p1, self.exists_one(p2, p2.port == p1.port))",message="parentRefs that all set port must each set a different port: Metacontroller merges such a list by port"
	ParentRefs []RouteParentRef `json:"parentRefs,omitempty"`
}

// RoutePathType says how a route's path matches request paths: a subset of the Gateway API's
// PathMatchType, without RegularExpression, whose syntax differs between implementations.
// +kubebuilder:validation:Enum=PathPrefix;Exact
type RoutePathType string

// The path types of a route, the Gateway API's own values.
const (
	// RoutePathPrefix matches the path and every path below it, element by element.
	RoutePathPrefix = RoutePathType(gatewayv1.PathMatchPathPrefix)
	// RoutePathExact matches the path alone.
	RoutePathExact = RoutePathType(gatewayv1.PathMatchExact)
)

// RouteParentRef names a Gateway, and optionally one of its listeners, that a route attaches
// to: the fields of a Gateway API ParentReference to a Gateway.
type RouteParentRef struct {
	// name is the Gateway's name.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// namespace is the Gateway's namespace; omitted, the WebApp's. A Gateway in another namespace
	// accepts the route only if its allowedRoutes admits the WebApp's namespace.
	// +optional
	Namespace *gatewayv1.Namespace `json:"namespace,omitempty"`

	// sectionName names one listener of the Gateway; omitted, every listener that admits the route.
	// +optional
	SectionName *gatewayv1.SectionName `json:"sectionName,omitempty"`

	// port selects the Gateway's listeners on that port; omitted, any port. The Gateway API's
	// standard CRDs carry it from v1.4 (the experimental channel before): older ones drop it.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port *int32 `json:"port,omitempty"`
}

// DisruptionBudget bounds the pods a voluntary disruption may take at once.
type DisruptionBudget struct {
	// maxUnavailable is how many pods may be unavailable during a voluntary disruption, a count or
	// a percentage of the desired replicas, for example 1 or "25%".
	// +optional
	// +kubebuilder:default=1
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`
}

// Phase is a WebApp's lifecycle phase, one word for humans and printer columns. Use conditions for automation.
// +kubebuilder:validation:Enum=Pending;Progressing;Ready;Degraded;Invalid;Terminating
type Phase string

// The phases a WebApp can be in.
const (
	// PhasePending means no Deployment has been observed yet.
	PhasePending Phase = "Pending"
	// PhaseProgressing means the Deployment exists but does not yet run the current spec on every desired replica.
	PhaseProgressing Phase = "Progressing"
	// PhaseReady means the Deployment carries the current spec and its rollout is complete.
	PhaseReady Phase = "Ready"
	// PhaseDegraded means pods of the current spec cannot start, the Deployment reports
	// ProgressDeadlineExceeded for it, or a ConfigMap or Secret it needs is missing.
	PhaseDegraded Phase = "Degraded"
	// PhaseInvalid means the spec is invalid; existing children are kept unchanged.
	PhaseInvalid Phase = "Invalid"
	// PhaseTerminating means the WebApp is being deleted and its children are being torn down in order.
	PhaseTerminating Phase = "Terminating"
)

// Condition types of a WebApp. Ready is always there; IngressReady only while spec.ingress is
// set, Routed only while spec.route is.
const (
	// ConditionReady says whether the rollout of the current spec is complete.
	ConditionReady = "Ready"
	// ConditionIngressReady says whether the Ingress has been given a load-balancer address. Ready
	// does not wait for it: many clusters have no ingress controller that reports one.
	ConditionIngressReady = "IngressReady"
	// ConditionAutoscaling says whether the HorizontalPodAutoscaler is able to scale, while
	// spec.autoscaling is set. Ready does not wait for it.
	ConditionAutoscaling = "Autoscaling"
	// ConditionSecretsTracked is there, False with ReasonSecretsNeedTLS, only while the spec
	// references Secrets whose changes should roll the pods but Metacontroller sends the hook no
	// Secrets: the hook asks for them only when it is served over TLS, so that no Secret crosses
	// the network in cleartext. Everything else works; Ready does not wait for it.
	ConditionSecretsTracked = "SecretsTracked"
	// ConditionRouted says, while spec.route is set, whether every Gateway the HTTPRoute attaches
	// to has accepted it and resolved its backend. Ready does not wait for it: a Gateway is the
	// platform team's, and the app serves in the cluster without it.
	ConditionRouted = "Routed"
)

// Reasons of the Routed condition. When a Gateway reports that it does not accept the route or
// cannot resolve its backend, the reason is the Gateway's own, as its controller wrote it (for
// example NotAllowedByListeners, NoMatchingListenerHostname or BackendNotFound).
const (
	// ReasonGatewayAPINotEnabled: the CompositeController does not manage HTTPRoutes (the
	// metacontroller/gateway-api component is not installed), so no HTTPRoute is made.
	ReasonGatewayAPINotEnabled = "GatewayAPINotEnabled"
	// ReasonRouteMissing: the HTTPRoute has not been observed yet.
	ReasonRouteMissing = "RouteMissing"
	// ReasonRoutePending: no Gateway the route attaches to has reported on its current
	// generation yet. It is the Gateway API's own reason for that (RouteReasonPending).
	ReasonRoutePending = "Pending"
	// ReasonRouteAccepted: every Gateway the route attaches to has accepted it and resolved its
	// backend. It is the Gateway API's reason for an accepted route (RouteReasonAccepted).
	ReasonRouteAccepted = "Accepted"
)

// ReasonSecretsNeedTLS is the reason of the SecretsTracked condition.
const ReasonSecretsNeedTLS = "SecretsNeedTLS"

// Reasons of the Autoscaling condition; when the autoscaler reports that it cannot scale, the
// reason is the autoscaler's own (for example FailedGetResourceMetric).
const (
	// ReasonAutoscalerMissing: the HorizontalPodAutoscaler has not been observed yet.
	ReasonAutoscalerMissing = "AutoscalerMissing"
	// ReasonAutoscalerPending: the autoscaler exists but has not reported yet.
	ReasonAutoscalerPending = "AutoscalerPending"
	// ReasonScalingActive: the autoscaler reads its metrics and can scale.
	ReasonScalingActive = "ScalingActive"
)

// Reasons of the IngressReady condition.
const (
	// ReasonIngressMissing: the Ingress has not been observed yet.
	ReasonIngressMissing = "IngressMissing"
	// ReasonLoadBalancerPending: the Ingress exists, but no controller has reported an address.
	ReasonLoadBalancerPending = "LoadBalancerPending"
	// ReasonLoadBalancerReady: the Ingress has a load-balancer address.
	ReasonLoadBalancerReady = "LoadBalancerReady"
)

// Reasons of the Ready condition, one per phase.
const (
	// ReasonRolloutComplete goes with PhaseReady.
	ReasonRolloutComplete = "RolloutComplete"
	// ReasonRolloutInProgress goes with PhaseProgressing.
	ReasonRolloutInProgress = "RolloutInProgress"
	// ReasonDeploymentMissing goes with PhasePending.
	ReasonDeploymentMissing = "DeploymentMissing"
	// ReasonProgressDeadlineExceeded goes with PhaseDegraded.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonInvalidSpec goes with PhaseInvalid.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonTerminating goes with PhaseTerminating.
	ReasonTerminating = "Terminating"
	// ReasonConfigMapMissing and ReasonSecretMissing go with PhaseDegraded (or PhasePending before
	// the Deployment exists): a ConfigMap or Secret the spec needs does not exist, so the
	// Deployment is left as it is rather than rolled into pods that cannot start. The message
	// names it.
	ReasonConfigMapMissing = "ConfigMapMissing"
	ReasonSecretMissing    = "SecretMissing"
)

// Reasons of the Ready condition, with PhaseDegraded, when the Deployment reports ReplicaFailure:
// its ReplicaSet cannot create pods. The message quotes the apiserver's refusal.
const (
	// ReasonFailedCreate: pods cannot be created, for a reason none of the finer ones names (a
	// LimitRange, say).
	ReasonFailedCreate = "FailedCreate"
	// ReasonQuotaExceeded: a ResourceQuota of the namespace refuses the pods.
	ReasonQuotaExceeded = "QuotaExceeded"
	// ReasonPodSecurityViolation: the namespace's Pod Security level refuses the pods;
	// spec.securityProfile restricted meets the strictest one.
	ReasonPodSecurityViolation = "PodSecurityViolation"
	// ReasonServiceAccountMissing: spec.serviceAccountName names a ServiceAccount that does not
	// exist.
	ReasonServiceAccountMissing = "ServiceAccountMissing"
)

// When pods of the current spec cannot start, the WebApp is Degraded and the Ready condition's
// reason is theirs: a container's waiting reason (ErrImagePull, ImagePullBackOff,
// InvalidImageName, CrashLoopBackOff, CreateContainerConfigError, CreateContainerError) or
// Unschedulable.

// WebAppStatus is the observed state of a WebApp. It is computed only from the children observed
// when the hook was called, never from the desired ones, and it replaces the previous status whole.
type WebAppStatus struct {
	// observedGeneration is the metadata.generation of the WebApp this status was computed for.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// phase summarises the state in one word: Pending, Progressing, Ready, Degraded, Invalid or Terminating.
	// +optional
	Phase Phase `json:"phase,omitempty"`

	// ready is true only when the observed Deployment carries the current spec and its rollout is complete.
	// +optional
	Ready bool `json:"ready"`

	// replicas is the number of pods the Deployment runs, old and new.
	// +optional
	Replicas int32 `json:"replicas"`

	// updatedReplicas is the number of pods that run the Deployment's current template.
	// +optional
	UpdatedReplicas int32 `json:"updatedReplicas"`

	// readyReplicas is the number of pods whose Ready condition is true.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas"`

	// availableReplicas is the number of pods ready for at least the Deployment's minReadySeconds.
	// +optional
	AvailableReplicas int32 `json:"availableReplicas"`

	// desiredReplicas is how many pods are desired: spec.replicas without autoscaling, and with it
	// the count the HorizontalPodAutoscaler last asked for (the count it has set on the Deployment
	// before it has computed one). Under an invalid spec or a teardown it is the observed
	// Deployment's. Unset while there is no Deployment to go by.
	// +optional
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`

	// readyOfDesired is readyReplicas/desiredReplicas, "2/3", as kubectl get deployments shows
	// READY; the READY column of kubectl get webapps. Unset with desiredReplicas.
	// +optional
	ReadyOfDesired string `json:"readyOfDesired,omitempty"`

	// restarts is the total of container restarts in the pods of the current spec: a crash-looping
	// app shows here even while Ready flaps.
	// +optional
	Restarts int32 `json:"restarts,omitempty"`

	// selector is the label selector of the WebApp's pods, as a string, for the scale subresource:
	// what an autoscaler that targets the WebApp itself reads to find the pods.
	// +optional
	Selector string `json:"selector,omitempty"`

	// url is where clients reach the app: while the route is Routed,
	// https://<first hostname><path> when a listener that accepts it serves HTTPS (http://
	// otherwise, and a port after the host when the listener's is not the scheme's); else
	// https://<host><path> (http:// without tls) once the Ingress is observed; and otherwise the
	// in-cluster address while the Service exists.
	// +optional
	URL string `json:"url,omitempty"`

	// address is the in-cluster URL of the Service, http://<name>.<namespace>.svc, while that Service exists.
	// +optional
	Address string `json:"address,omitempty"`

	// message says in one plain sentence what is going on.
	// +optional
	Message string `json:"message,omitempty"`

	// canary is the story of the last canary of spec.rollout.canary: the revision it runs, its
	// step, its weight and its phase. Unset until a canary starts; it stays, with phase Promoted,
	// Aborted or RolledBack, after one ends.
	// +optional
	Canary *CanaryStatus `json:"canary,omitempty"`

	// conditions holds the Ready condition, with the reason and message of the current state, and,
	// while their section of the spec is set, the IngressReady, Routed and Autoscaling conditions.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

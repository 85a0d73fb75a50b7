package hooktest

import (
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

// WithPods returns a copy of the hook request body with n running pods of the WebApp, of one
// ReplicaSet, in related, filed as Metacontroller files them with the hook's --pod-diagnosis. Each pod is
// about 4.5 KB of JSON, as a pod of a real cluster is: metadata with managedFields, a spec with
// the service account volume, a status with conditions. It is for benchmarks and load tests of
// large requests.
func WithPods(body []byte, n int) ([]byte, error) {
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	parent, _ := req["parent"].(map[string]any)
	name, _ := Field(parent, "metadata", "name").(string)
	namespace, _ := Field(parent, "metadata", "namespace").(string)
	image, _ := Field(parent, "spec", "image").(string)
	created := metav1.NewTime(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	rsName := name + "-7894546c9c"
	pods := map[string]any{}
	for i := range n {
		p := pod(name, namespace, rsName, image, i, created)
		pods[namespace+"/"+p.Name] = p
	}
	req["related"] = map[string]any{sync.PodKind.Key(): pods}
	return json.Marshal(req)
}

func labels(name string) map[string]string {
	return map[string]string{webappv1.LabelName: webappv1.AppName, webappv1.LabelInstance: name, webappv1.LabelManagedBy: webappv1.ManagedBy, "pod-template-hash": "7894546c9c"}
}

func ptr[T any](v T) *T { return &v }

// pod is the i-th running pod of a ReplicaSet, as the apiserver shows it.
func pod(app, namespace, rs, image string, i int, created metav1.Time) corev1.Pod {
	name := fmt.Sprintf("%s-%05x", rs, i)
	started := metav1.NewTime(created.Add(2 * time.Second))
	fields := func(s string) *metav1.FieldsV1 { return &metav1.FieldsV1{Raw: []byte(s)} }
	return corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: rs + "-", Namespace: namespace, UID: types.UID(fmt.Sprintf("8b05f6bc-2d54-4cdd-8e58-%012x", i)),
			ResourceVersion: fmt.Sprint(1000 + i), CreationTimestamp: created, Labels: labels(app),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: "3f1c8a8e-5b0e-4f4e-9a1d-7c2b6e0d9a11", Controller: ptr(true), BlockOwnerDeletion: ptr(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &created, FieldsType: "FieldsV1",
					FieldsV1: fields(`{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"3f1c8a8e-5b0e-4f4e-9a1d-7c2b6e0d9a11\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}`)},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", Time: &started, FieldsType: "FieldsV1", Subresource: "status",
					FieldsV1: fields(`{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.0.0.1\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`)},
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: sync.ContainerName, Image: image, ImagePullPolicy: corev1.PullIfNotPresent,
				Ports:                    []corev1.ContainerPort{{Name: sync.PortName, ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Resources:                corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("64Mi")}},
				VolumeMounts:             []corev1.VolumeMount{{Name: "kube-api-access-x7k2p", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"}},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
			}},
			Volumes: []corev1.Volume{{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				DefaultMode: ptr(int32(420)),
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr(int64(3607))}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				},
			}}}},
			RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr(int64(30)), DNSPolicy: corev1.DNSClusterFirst,
			ServiceAccountName: "default", NodeName: fmt.Sprintf("node-%d", i%8), SchedulerName: "default-scheduler",
			SecurityContext: &corev1.PodSecurityContext{}, EnableServiceLinks: ptr(true), PreemptionPolicy: ptr(corev1.PreemptLowerPriority), Priority: ptr(int32(0)),
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
			},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, HostIP: fmt.Sprintf("10.1.0.%d", i%8), PodIP: fmt.Sprintf("10.2.%d.%d", i/250, i%250),
			PodIPs: []corev1.PodIP{{IP: fmt.Sprintf("10.2.%d.%d", i/250, i%250)}}, StartTime: &started, QOSClass: corev1.PodQOSBurstable,
			Conditions: []corev1.PodCondition{
				{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: created},
			},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: sync.ContainerName, Image: image, ImageID: "docker.io/library/nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
				ContainerID: fmt.Sprintf("containerd://%064x", i), Ready: true, Started: ptr(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
			}},
		},
	}
}

package sync_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/example/webapp-operator/sync"
)

func TestWhyStuck(t *testing.T) {
	waiting := func(name, reason, message string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
	}
	crashed := waiting("app", "CrashLoopBackOff", "back-off 40s restarting failed container=app")
	crashed.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}
	unschedulable := corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable, Message: "0/3 nodes are available: 3 Insufficient cpu."}
	for _, tc := range []struct {
		name                   string
		st                     corev1.PodStatus
		wantReason, wantDetail string
	}{
		{name: "running", st: corev1.PodStatus{Phase: corev1.PodRunning}},
		{name: "creating: not stuck", st: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting("app", "ContainerCreating", "")}}},
		{name: "unschedulable", st: corev1.PodStatus{Conditions: []corev1.PodCondition{unschedulable}},
			wantReason: "Unschedulable", wantDetail: "0/3 nodes are available: 3 Insufficient cpu."},
		{name: "unschedulable before a container's reason", st: corev1.PodStatus{Conditions: []corev1.PodCondition{unschedulable}, ContainerStatuses: []corev1.ContainerStatus{waiting("app", "ErrImagePull", "not found")}},
			wantReason: "Unschedulable", wantDetail: "0/3 nodes are available: 3 Insufficient cpu."},
		{name: "an image that cannot be pulled: the kubelet's message as written", st: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting("app", "ErrImagePull", "rpc error: code = NotFound desc = failed to pull image")}},
			wantReason: "ErrImagePull", wantDetail: "rpc error: code = NotFound desc = failed to pull image"},
		{name: "a crash loop: the last exit", st: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{crashed}},
			wantReason: "CrashLoopBackOff", wantDetail: "container app exited with code 1 (Error)"},
		{name: "a crash loop without a last exit: the message", st: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting("app", "CrashLoopBackOff", "back-off")}},
			wantReason: "CrashLoopBackOff", wantDetail: "back-off"},
		{name: "the first stuck container", st: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{waiting("a", "PodInitializing", ""), waiting("b", "CreateContainerConfigError", ""), crashed}},
			wantReason: "CreateContainerConfigError"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reason, detail := sync.WhyStuck(&tc.st)
			if reason != tc.wantReason || detail != tc.wantDetail {
				t.Errorf("WhyStuck = %q, %q; want %q, %q", reason, detail, tc.wantReason, tc.wantDetail)
			}
			if reason != "" && reason != "Unschedulable" && !sync.StuckReason(reason) {
				t.Errorf("StuckReason(%q) = false for a reason WhyStuck gave", reason)
			}
		})
	}
}

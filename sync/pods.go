package sync

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/api/v1/validation"
	"github.com/example/webapp-operator/canary"
	"github.com/example/webapp-operator/internal/english"
)

// The rules of why a pod cannot start are this file's alone: the status's pod diagnosis
// (diagnose) and kubectl webapp's screen (StuckReason, WhyStuck) read them.

// stuckReasons are the container waiting reasons that mean a pod cannot start by itself, in the
// order the status names them when pods are stuck for several.
var stuckReasons = []string{"InvalidImageName", "ErrImagePull", "ImagePullBackOff", "CreateContainerConfigError", "CreateContainerError", "CrashLoopBackOff"}

// StuckReason reports whether a container waiting for reason means that its pod cannot start by
// itself (ImagePullBackOff, CrashLoopBackOff, …), as pod diagnosis reads it.
func StuckReason(reason string) bool { return slices.Contains(stuckReasons, reason) }

// currentPods returns the pods of the current spec, from the pods and the observed Deployment
// alone, so that Metacontroller need not watch every ReplicaSet of the cluster for it:
//   - a current pod runs the spec's image in its app container;
//   - once the Deployment carries the current spec (specApplied) and its controller has seen it
//     (status.observedGeneration), its Progressing condition names the ReplicaSet of that spec
//     (newReplicaSet), and a current pod is also one of that ReplicaSet's. Pods of an older spec
//     with the same image, which only the ReplicaSet tells apart, are then left out too.
//
// Pods being deleted are left out.
func currentPods(rel *Related, d *ObservedDeployment, deployment string, specApplied bool, image string) []RelatedPod {
	rs := ""
	if specApplied {
		rs = newReplicaSet(d, deployment)
	}
	var current []RelatedPod
	for _, p := range rel.Pods {
		if p.DeletionTimestamp != nil || p.Images[ContainerName] != image {
			continue
		}
		if rs != "" {
			if owner := metav1.GetControllerOfNoCopy(&p.ObjectMeta); owner == nil || owner.Kind != "ReplicaSet" || owner.Name != rs {
				continue
			}
		}
		current = append(current, p)
	}
	return current
}

// canaryPods are the canary's current pods: those of the canary Deployment c that run the spec's
// image (currentPods, by c's ReplicaSet once it runs the spec's revision: runsRevision) and
// carry the canary's track (webappv1.LabelTrack). A template change that keeps the image (an
// environment variable, a ConfigMap's digest) leaves the stable pods running the spec's image
// too, and before c names its ReplicaSet, the image is all currentPods can tell them by.
func canaryPods(rel *Related, c *Child, runsRevision bool, image string) []RelatedPod {
	var out []RelatedPod
	for _, p := range currentPods(rel, c.Deployment, c.Name, runsRevision, image) {
		if p.Labels[webappv1.LabelTrack] == webappv1.TrackCanary {
			out = append(out, p)
		}
	}
	return out
}

// diagnoseCanary is what pod diagnosis shows of the canary's pods (canaryPods), as canary.Next
// reads it: why they cannot start, and their restarts; the zero value without pod diagnosis
// (Metacontroller sends no pods).
func diagnoseCanary(rel *Related, c *Child, runsRevision bool, image string) canary.Pods {
	if !rel.Kinds[PodKind.Key()] {
		return canary.Pods{}
	}
	pods := canaryPods(rel, c, runsRevision, image)
	out := canary.Pods{Diagnosed: true, Restarts: restarts(pods)}
	if t := diagnose(pods); t != nil {
		out.Trouble = t.message()
	}
	return out
}

// newReplicaSet returns the name of the ReplicaSet of Deployment deployment for its current spec, as its
// Progressing condition names it, or "" when the Deployment does not say. The Deployment
// controller writes that condition's message with the ReplicaSet's name quoted
// (`ReplicaSet "web-5d8c7" is progressing.`, `Created new replica set "web-5d8c7"`, …) in the
// same status write that sets observedGeneration; a name not of the form <deployment>-<hash> is
// not taken.
func newReplicaSet(d *ObservedDeployment, deployment string) string {
	if d.Status.ObservedGeneration != d.Generation {
		return ""
	}
	for _, c := range d.Status.Conditions {
		if c.Type != "Progressing" {
			continue
		}
		_, rest, ok := strings.Cut(c.Message, `"`)
		name, _, closed := strings.Cut(rest, `"`)
		if ok && closed && strings.HasPrefix(name, deployment+"-") && len(name) > len(deployment)+1 {
			return name
		}
	}
	return ""
}

// podTrouble says why pods of the current spec cannot start.
type podTrouble struct {
	// reason is the kubelet's or the scheduler's: ImagePullBackOff, Unschedulable, …
	reason string
	// detail quotes the first such pod's message, cut short so that it stays the same between calls.
	detail string
	// stuck counts the pods that cannot start for reason, of total; others, those that cannot for
	// another reason.
	stuck, others, total int
}

// diagnose finds the pods that cannot start and why, or returns nil when none is stuck. Pods stuck
// for several reasons are reported by the reason most of them share (ties go to the reason first
// in stuckReasons, then Unschedulable), quoting the first pod by name.
func diagnose(pods []RelatedPod) *podTrouble {
	counts := map[string]int{}
	details := map[string]string{}
	stuck := 0
	for _, p := range pods {
		reason, detail := WhyStuck(&p.Status)
		if reason == "" {
			continue
		}
		if reason != string(corev1.PodReasonUnschedulable) {
			detail = runtimeMessage(detail) // a kubelet's message, or a container's last exit
		}
		stuck++
		counts[reason]++
		if _, ok := details[reason]; !ok {
			details[reason] = detail
		}
	}
	if stuck == 0 {
		return nil
	}
	best := ""
	for _, r := range append(slices.Clone(stuckReasons), string(corev1.PodReasonUnschedulable)) {
		if counts[r] > counts[best] {
			best = r
		}
	}
	return &podTrouble{reason: best, detail: details[best], stuck: counts[best], others: stuck - counts[best], total: len(pods)}
}

// WhyStuck says why a pod whose status is st cannot start: the scheduler's Unschedulable, with
// its message, or else the first container waiting for a StuckReason, with the kubelet's message
// as it wrote it, or, for CrashLoopBackOff after an exit, the container's last exit ("container
// app exited with code 1 (Error)"), since the back-off message counts seconds up and the exit
// says why and stays. reason is "" when nothing says it cannot start; detail may be "".
func WhyStuck(st *corev1.PodStatus) (reason, detail string) {
	for _, c := range st.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return c.Reason, c.Message
		}
	}
	for _, cs := range st.ContainerStatuses {
		w := cs.State.Waiting
		if w == nil || !StuckReason(w.Reason) {
			continue
		}
		if t := cs.LastTerminationState.Terminated; w.Reason == "CrashLoopBackOff" && t != nil {
			return w.Reason, fmt.Sprintf("container %s exited with code %d (%s)", cs.Name, t.ExitCode, t.Reason)
		}
		return w.Reason, w.Message
	}
	return "", ""
}

// runtimeMessage is a kubelet message without the gRPC status prefix the container runtime's
// errors carry ("rpc error: code = NotFound desc = failed to pull and unpack image …" becomes
// "failed to pull and unpack image …"): the status quotes a message's first characters only,
// and the prefix would fill them, leaving out the image and the cause. A message without the
// whole prefix is returned as it is.
func runtimeMessage(m string) string {
	if rest, ok := strings.CutPrefix(m, "rpc error: code = "); ok {
		if _, desc, ok := strings.Cut(rest, " desc = "); ok {
			return desc
		}
	}
	return m
}

// restarts totals the container restarts of pods.
func restarts(pods []RelatedPod) int32 {
	var n int32
	for _, p := range pods {
		for _, cs := range p.Status.ContainerStatuses {
			n += cs.RestartCount
		}
	}
	return n
}

// message says, in one stable sentence, how many pods cannot start and why.
func (t *podTrouble) message() string {
	msg := fmt.Sprintf("%d of %s cannot start: %s", t.stuck, english.Count(t.total, "current pod"), t.reason)
	if t.detail != "" {
		msg += ": " + validation.Short(t.detail)
	}
	msg = sentence(msg)
	if t.others > 0 {
		msg += fmt.Sprintf(" %s cannot start for another reason.", english.Count(t.others, "more pod", "more pods"))
	}
	return msg
}

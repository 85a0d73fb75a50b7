package sync

import (
	"fmt"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/api/v1/validation"
	"github.com/example/webapp-operator/internal/english"
)

// The one reading of an observed Deployment: whether its controller has caught up with its latest
// generation, whether it carries the spec asked of it, which template it runs, the failure it
// reports, whether its rollout is complete, and how many pods it has left. The WebApp's status
// (rollout), the canary's input and the teardown (Finalize) all read a Deployment through these
// methods, so that they agree on it.

// caughtUp reports whether d's controller has observed its latest generation: until then its
// status describes an older spec.
func (d *ObservedDeployment) caughtUp() bool { return d.Status.ObservedGeneration >= d.Generation }

// deploymentFailure is a failure a Deployment reports for its observed generation.
type deploymentFailure struct {
	// deadline is true for ProgressDeadlineExceeded, false for ReplicaFailure.
	deadline bool
	// reason is the WebApp's Ready reason for it (createFailureReason, or
	// ReasonProgressDeadlineExceeded), and message the condition's message.
	reason, message string
}

// failure is the failure d reports for its observed generation: ReplicaFailure (it cannot
// create pods) before ProgressDeadlineExceeded; nil when it reports neither, or its controller
// has not observed its latest generation.
func (d *ObservedDeployment) failure() *deploymentFailure {
	if !d.caughtUp() {
		return nil
	}
	if c := deploymentCondition(d.Status, appsv1.DeploymentReplicaFailure); c != nil && c.Status == string(corev1.ConditionTrue) {
		return &deploymentFailure{reason: createFailureReason(c), message: c.Message}
	}
	if c := deploymentCondition(d.Status, appsv1.DeploymentProgressing); c != nil && c.Reason == "ProgressDeadlineExceeded" {
		return &deploymentFailure{deadline: true, reason: webappv1.ReasonProgressDeadlineExceeded, message: c.Message}
	}
	return nil
}

// refused is the apiserver's refusal of a pod that a ReplicaFailure quotes, without the pod's
// name and cut to maxQuotedMessage, as a sentence.
func (f *deploymentFailure) refused() string {
	return sentence(validation.Cut(refusal(f.message), maxQuotedMessage))
}

// carries reports whether d carries the spec whose hash is hash, with desired replicas.
func (d *ObservedDeployment) carries(hash string, desired int32) bool {
	return d.SpecHash == hash && replicasOf(d) == desired
}

// rolledOut reports whether d's rollout to desired replicas is complete: observed, no failure,
// every pod updated and available, and none of an older template left.
func (d *ObservedDeployment) rolledOut(desired int32) bool {
	st := d.Status
	return d.caughtUp() && d.failure() == nil && st.UpdatedReplicas == desired && st.Replicas == desired && st.AvailableReplicas >= desired
}

// progress says why d's observed rollout to desired replicas is not complete; "" when it is.
func (d *ObservedDeployment) progress(desired int32) string {
	st := d.Status
	switch {
	case st.UpdatedReplicas < desired:
		return fmt.Sprintf("Rollout in progress: %d of %d new replicas updated.", st.UpdatedReplicas, desired)
	case st.Replicas > st.UpdatedReplicas:
		return fmt.Sprintf("Rollout in progress: %s pending termination.", english.Count(st.Replicas-st.UpdatedReplicas, "old replica"))
	case st.AvailableReplicas < desired:
		return fmt.Sprintf("Rollout in progress: %d of %d updated replicas available.", st.AvailableReplicas, desired)
	case st.Replicas != desired || st.UpdatedReplicas != desired:
		return fmt.Sprintf("Rollout in progress: %d replicas running, %d desired.", st.Replicas, desired)
	}
	return ""
}

// podsLeft counts d's pods, running and terminating.
func (d *ObservedDeployment) podsLeft() int32 {
	n := d.Status.Replicas
	if t := d.Status.TerminatingReplicas; t != nil {
		n += *t
	}
	return n
}

// scaledDown reports whether d asks for no pods and its controller has confirmed that none are
// left, terminating ones included.
func (d *ObservedDeployment) scaledDown() bool {
	return replicasOf(d) == 0 && d.caughtUp() && d.podsLeft() == 0
}

// deploymentCondition returns the Deployment condition of type t whose status is known, or nil.
func deploymentCondition(st ObservedDeploymentStatus, t appsv1.DeploymentConditionType) *ObservedCondition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == string(t) && st.Conditions[i].Status != string(corev1.ConditionUnknown) {
			return &st.Conditions[i]
		}
	}
	return nil
}

// stableRevision is the revision of the template the observed stable Deployment c runs; desired
// is the Deployment the spec asks for, and revision its template's. When c's spec hash is
// desired's, it runs desired's template: that is the usual case, and it costs nothing to tell.
// Otherwise it is the hash of the template Metacontroller last applied to c, which is the hook's
// own answer. A Deployment without one (adopted) runs desired's template when its spec hash is
// that of desired with c's replicas; otherwise its revision cannot be told and is "".
func stableRevision(c *Child, desired *appsv1.Deployment, revision string) string {
	if c.Deployment.SpecHash == desired.Annotations[AnnotationSpecHash] {
		return revision
	}
	if t, ok := AppliedTemplate(lastApplied(c)); ok {
		return TemplateHash(t)
	}
	spec := desired.Spec
	spec.Replicas = c.Deployment.Replicas
	if c.Deployment.SpecHash == SpecHash(&spec) {
		return revision
	}
	return ""
}

// countOf is a canary Deployment's canary.AnnotationRetries or AnnotationAttempt as a number, 0
// when it is absent or not a number from 0 to math.MaxInt32.
func countOf(v string) int32 {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0
	}
	return int32(n)
}

// failureSentence is the failure Deployment c reports for its observed generation (failure), as
// a sentence for a status; "" when none.
func failureSentence(c *Child) string {
	switch f := c.Deployment.failure(); {
	case f == nil:
		return ""
	case f.deadline:
		return fmt.Sprintf("Deployment %s exceeded its progress deadline", c.Name)
	default:
		return fmt.Sprintf("Deployment %s cannot create pods (%s): %s", c.Name, f.reason, f.refused())
	}
}

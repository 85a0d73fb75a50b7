package canary

import (
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// Annotations the machine writes on the canary Deployment (Output.Annotations), so that a
// decision survives a status older than it: Metacontroller may call with an older status, and
// writes what it gets over a newer one.
const (
	// AnnotationRevision records the revision of the pod template the canary Deployment runs
	// (status.canary.revision).
	AnnotationRevision = "webapp.example.com/revision"
	// AnnotationAborted records, on the canary Deployment of an aborted canary, the revision that
	// was aborted. Aborting scales the canary to zero, which takes away the failures that
	// aborted it: the annotation keeps an older status from starting the canary again.
	AnnotationAborted = "webapp.example.com/aborted"
	// AnnotationPromoting records, on the canary Deployment of a canary being promoted, its
	// revision: a promotion asked by annotation survives an older status, even once the
	// annotation is gone.
	AnnotationPromoting = "webapp.example.com/promoting"
	// AnnotationRetries records, on the canary Deployment of a canary the
	// webappv1.AnnotationRetry annotation started again, how many times it did
	// (status.canary.retries), so that an older status neither retries it again nor takes an
	// abort of an earlier attempt for one of this attempt. Absent before any retry.
	AnnotationRetries = "webapp.example.com/retries"
	// AnnotationAttempt records, on the canary Deployment, the attempt (status.canary.attempt)
	// of what it records: the revision it runs, aborted or being promoted. So an older status
	// neither takes this attempt for an earlier one nor an earlier attempt's abort or promotion
	// for this one's, and a new attempt of the same revision is numbered past it. Absent for
	// attempt 0.
	AnnotationAttempt = "webapp.example.com/attempt"
)

// Input is everything Next decides from: the spec, the status Metacontroller sent back, what is
// observed, and the time. It holds facts only; every decision is Next's.
type Input struct {
	// Name is the WebApp's, and so the stable Deployment's.
	Name string
	// Plan is spec.rollout.canary, defaulted and valid; nil when the spec asks for no canary.
	Plan *webappv1.Canary
	// BlueGreen is true when Plan is a blueGreen's (webappv1.Rollout.Plan): the new version runs
	// at the stable's full count from its one step on, the preview, and, once the route is seen
	// to give it all the traffic while it is promoted, it keeps it: a pod lost then switches no
	// user back (to a stable Deployment that may be mid-rollout), and a count the autoscaler
	// lowers then (it scales the stable Deployment, idle since the switch) shrinks it not.
	BlueGreen bool
	// Last is status.canary as Metacontroller sent it back; nil before any canary. It is read
	// even when Plan is nil: the machine itself lets it go.
	Last *webappv1.CanaryStatus
	// Revision names the pod template the spec asks for.
	Revision string
	// Stable is the observed stable Deployment, nil when none is. Without one there is nothing
	// to compare a canary with: the Deployment is made with the template as it is.
	Stable *Stable
	// StableReplicas is the stable Deployment's full count: spec.replicas, or the autoscaler's.
	StableReplicas int32
	// Canary is the observed canary Deployment, nil when none is.
	Canary *Deployment
	// Routed is true when the WebApp has an HTTPRoute (spec.route, and the CompositeController
	// manages HTTPRoutes); Route is the observed one, nil when none is. Without a route the
	// traffic is split by pod count alone.
	Routed bool
	Route  *Route
	// ServicesObserved is true when both the Services <name>-stable and <name>-canary are
	// observed: only then may the route name them.
	ServicesObserved bool
	// Pods is what pod diagnosis shows of the canary's pods.
	Pods Pods
	// Promote, Abort, PromoteStep and Retry are the values of the WebApp's
	// webappv1.AnnotationPromote, AnnotationAbort, AnnotationPromoteStep and AnnotationRetry
	// annotations, "" when absent (an empty value is no annotation). Each is read by
	// webappv1.ParseCanaryAnnotation, and acts only when it names Revision and the canary's
	// attempt; PromoteStep only at its step, Retry only for a retry not yet taken. One that
	// cannot act is named in status.canary.ignoredAnnotations.
	Promote, Abort, PromoteStep, Retry string
	// Measurement is what the edge measured for a check of the plan's analysis that Due said
	// was due at Now, or for an earlier check of the step that StandsIn for it while the due
	// one is still being measured; nil when it measured nothing (none was due, or the hook has
	// no Prometheus). A check that is due and has none is inconclusive.
	Measurement *Measurement
	// Measuring is true when the edge has the check that Due says is due still to measure: it is
	// not judged at this call, and the answer asks for another call in MeasuringRetry.
	Measuring bool
	// Now is the time of the call.
	Now time.Time
}

// Stable is what Next reads of the observed stable Deployment.
type Stable struct {
	// Revision names the pod template it runs, "" when that cannot be told.
	Revision string
	// Complete is true when its rollout is complete: it carries the spec with the full count,
	// its controller observed that, and every pod is updated and available, none of an older
	// template left.
	Complete bool
	// RolledOut is true when its rollout of the template it runs, whichever that is, is
	// complete: its controller observed it, and every pod is updated and available, none of an
	// older template left. The rollback window remembers such a revision.
	RolledOut bool
}

// Deployment is what Next reads of the observed canary Deployment: its annotations, and one
// reading of its status (sync reads every Deployment the same way).
type Deployment struct {
	// Revision is its AnnotationRevision, the revision it runs; Aborted and Promoting are its
	// AnnotationAborted and AnnotationPromoting, "" when absent.
	Revision, Aborted, Promoting string
	// Retries and Attempt are its AnnotationRetries and AnnotationAttempt, 0 when absent or not a
	// number.
	Retries, Attempt int32
	// Replicas is spec.replicas.
	Replicas int32
	// Generation and ObservedGeneration are metadata.generation and status.observedGeneration.
	Generation, ObservedGeneration int64
	// Total, Updated and Available are status.replicas, updatedReplicas and availableReplicas.
	Total, Updated, Available int32
	// ScaledDown is true when it asks for no pods and its controller has confirmed that none is
	// left, terminating ones included.
	ScaledDown bool
	// Failure is a sentence when it reports ReplicaFailure or ProgressDeadlineExceeded for its
	// observed generation, "" otherwise.
	Failure string
}

// Route is what Next reads of the observed HTTPRoute.
type Route struct {
	// Split is true when its backends are the Services <name>-stable and <name>-canary.
	Split bool
	// StableWeight and CanaryWeight are their weights, when Split.
	StableWeight, CanaryWeight int32
	// Accepted is true when every Gateway it attaches to has accepted its current generation
	// and resolved its backends.
	Accepted bool
	// Header is true when a rule before the weighted one sends the requests that match the
	// plan's header route, as the spec asks for them now, to <name>-canary alone.
	Header bool
}

// Pods is what pod diagnosis shows of the canary's pods.
type Pods struct {
	// Diagnosed is true when pods are sent along (pod diagnosis is on); the other fields are
	// meaningful only then.
	Diagnosed bool
	// Trouble says why they cannot start, in a sentence; "" when they can.
	Trouble string
	// Restarts is the total of their containers' restarts.
	Restarts int32
}

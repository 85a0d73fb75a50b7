package screen

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
	"github.com/example/webapp-operator/plugin/revision"
	"github.com/example/webapp-operator/sync"
)

// Story is everything one screen of kubectl webapp get shows: a WebApp, its Deployments and its
// pods as they were read at one moment, and that moment.
type Story struct {
	// Now is when they were read: the pause left and every age count from it.
	Now time.Time `json:"now"`
	// WebApp is the WebApp, status included.
	WebApp webappv1.WebApp `json:"webApp"`
	// Deployments are its stable Deployment, named after it, and its canary Deployment
	// (<name>-canary), those that exist; any other is left out.
	Deployments []appsv1.Deployment `json:"deployments,omitempty"`
	// Pods are its pods, of either track (webappv1.LabelTrack).
	Pods []corev1.Pod `json:"pods,omitempty"`
	// Events are the Events on the WebApp (the notifier's, docs/notifications.md), in any order;
	// the screen shows the latest MaxEvents.
	Events []corev1.Event `json:"events,omitempty"`
	// Unread says, of "deployments", "pods" and "events", why they could not be read (RBAC refused the
	// user, say): the screen says so where they would be.
	Unread map[string]string `json:"unread,omitempty"`
}

// Recording is a Story as a file of plugin/testdata holds it: a fixture of the golden tests,
// which the e2e suite writes (E2E_RECORD_SCREENS=1) or a seed stands in for, with where it came
// from.
type Recording struct {
	// Source says how the story was had: which e2e test recorded it and when, or how it was
	// seeded before an e2e run recorded it.
	Source string `json:"source"`
	Story
}

// Render writes the screen of s to w: the WebApp's phase, reason and URL; its stable and canary
// revisions with their images and pods; the canary's steps, the current one marked with its
// pause left and the weight asked for against the weight the route carries; the analysis's
// latest check; the failed checks; the conditions, and under them the latest Events on the
// WebApp (none: no section); and the pods by track, with why any cannot start.
func Render(w io.Writer, s *Story, o Options) error {
	v := &view{Story: s, o: o}
	var b bytes.Buffer
	for _, section := range []func(io.Writer){v.header, v.revisions, v.canary, v.analysis, v.conditions, v.events, v.pods} {
		section(&b)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// view is one Story being drawn.
type view struct {
	*Story
	o Options
}

// deployment is the Deployment named name, nil when there is none.
func (v *view) deployment(name string) *appsv1.Deployment {
	for i := range v.Deployments {
		if v.Deployments[i].Name == name {
			return &v.Deployments[i]
		}
	}
	return nil
}

func (v *view) stable() *appsv1.Deployment { return v.deployment(v.WebApp.Name) }
func (v *view) canaryDeployment() *appsv1.Deployment {
	return v.deployment(v.WebApp.Name + webappv1.CanarySuffix)
}

// plan is the canary plan of spec.rollout (webappv1.Rollout.Plan: canary, or blueGreen as one),
// nil when the spec asks for neither.
func (v *view) plan() *webappv1.Canary { return v.WebApp.Spec.Rollout.Plan() }

func (v *view) header(w io.Writer) {
	wa := &v.WebApp
	st := &wa.Status
	fmt.Fprintln(w, v.o.paint(fmt.Sprintf("webapp/%s in namespace %s", wa.Name, wa.Namespace), mark))
	if st.Phase == "" {
		v.o.field(w, "Phase", "none yet: the hook has not answered for this WebApp", busy)
	} else {
		phase := string(st.Phase)
		if r := meta.FindStatusCondition(st.Conditions, webappv1.ConditionReady); r != nil && r.Reason != "" {
			phase += " (" + r.Reason + ")"
		}
		v.o.field(w, "Phase", phase, phaseTone(st.Phase))
	}
	if st.URL != "" {
		v.o.field(w, "URL", st.URL, plain)
	}
	if st.Message != "" {
		v.o.field(w, "Message", st.Message, plain)
	}
	if wa.Generation > st.ObservedGeneration && st.Phase != "" {
		v.o.field(w, "Stale", fmt.Sprintf("the hook has not answered for generation %d of the spec yet; what follows is of generation %d, and may be about to change", wa.Generation, st.ObservedGeneration), busy)
	}
}

func (v *view) revisions(w io.Writer) {
	rows := [][]cell{{c("TRACK"), c("REVISION"), c("IMAGE"), c("PODS")}}
	for _, d := range []struct {
		track string
		d     *appsv1.Deployment
	}{{"stable", v.stable()}, {webappv1.TrackCanary, v.canaryDeployment()}} {
		if d.d == nil {
			continue
		}
		rev := revision.Of(d.d)
		if rev == "" {
			rev = "-"
		}
		want := int32(1)
		if d.d.Spec.Replicas != nil {
			want = *d.d.Spec.Replicas
		}
		rows = append(rows, []cell{c(d.track), c(rev), c(imageOf(&d.d.Spec.Template)), c(fmt.Sprintf("%d/%d ready", d.d.Status.ReadyReplicas, want))})
	}
	fmt.Fprintln(w)
	if why, ok := v.Unread["deployments"]; ok {
		fmt.Fprintln(w, "Revisions: the Deployments cannot be read")
		v.o.note(w, "  ", why)
		return
	}
	if len(rows) == 1 {
		fmt.Fprintln(w, "Revisions: no Deployment yet")
		return
	}
	fmt.Fprintln(w, "Revisions")
	v.o.table(w, "  ", rows)
}

func (v *view) canary(w io.Writer) {
	cs, plan := v.WebApp.Status.Canary, v.plan()
	if cs == nil {
		if plan != nil {
			fmt.Fprintln(w)
			fmt.Fprintln(w, "Canary: none has run; a new pod template starts one")
		}
		return
	}
	fmt.Fprintln(w)
	if canary.RolledBackWithinWindow(cs) {
		v.rolledBackWithinWindow(w, cs)
		return
	}
	var steps []webappv1.CanaryStep
	if plan != nil {
		steps = plan.Steps
	}
	cur := canary.StepIndex(plan, cs)
	name := cs.Revision
	if cs.Attempt > 0 {
		name += fmt.Sprintf(" (attempt %d)", cs.Attempt)
	}
	head := fmt.Sprintf("Canary %s: %s", name, v.o.paint(string(cs.Phase), canaryTone(cs.Phase)))
	switch {
	case v.WebApp.Spec.Rollout.IsBlueGreen(): // one step, its preview
		head = fmt.Sprintf("Blue-green %s: %s", name, v.o.paint(string(cs.Phase), canaryTone(cs.Phase)))
		if canary.AtAStep(cs.Phase) {
			head += " at its preview"
		}
	case len(steps) > 0:
		head += fmt.Sprintf(" at step %d of %d", cur+1, len(steps))
	}
	if t := cs.StepStartTime; t != nil && canary.AtAStep(cs.Phase) {
		head += ", since " + clock(v.Now, t.Time)
	}
	fmt.Fprintln(w, head)
	if len(steps) == 0 {
		v.o.note(w, "  ", "The spec asks for no canary any more (spec.rollout.canary): its status goes at the hook's next answer.")
	} else {
		rows := [][]cell{{c(""), c("STEP"), c("WEIGHT"), c("PAUSE"), c("")}}
		for i, s := range steps {
			marker, state := "", v.stepState(cs, i, cur)
			t := plain
			if i == cur && canary.AtAStep(cs.Phase) {
				marker, t = ">", mark
			}
			pause := "until promoted"
			if s.PauseSeconds != nil {
				pause = seconds(*s.PauseSeconds)
			}
			rows = append(rows, []cell{ct(marker, mark), ct(strconv.Itoa(i+1), t), ct(fmt.Sprintf("%d%%", s.Weight), t), ct(pause, t), ct(state, t)})
		}
		v.o.table(w, "", rows)
	}
	if cs.Phase != webappv1.CanaryPromoted {
		v.o.field(w, "Weight", v.weight(cs), plain)
	}
	if plan != nil && plan.HeaderRoute != nil && (cs.HeaderRouted || canary.AtAStep(cs.Phase) || cs.Phase == webappv1.CanaryPromoting) {
		v.o.field(w, "Headers", headerRoute(plan, cs.HeaderRouted), plain)
	}
	maxFailed := int32(webappv1.DefaultMaxFailedChecks)
	if plan != nil && plan.MaxFailedChecks != nil {
		maxFailed = *plan.MaxFailedChecks
	}
	checks := fmt.Sprintf("%d failed of %d that abort it (maxFailedChecks)", cs.FailedChecks, maxFailed)
	switch {
	case cs.FailedChecks > 0:
		v.o.field(w, "Checks", checks, bad)
	case canary.AtAStep(cs.Phase):
		v.o.field(w, "Checks", checks, plain)
	}
	if cs.LastFailedCheck != "" {
		last := cs.LastFailedCheck
		if at := cs.LastFailedCheckTime; at != nil {
			last = clock(v.Now, at.Time) + ": " + last
		}
		v.o.field(w, "Last fail", last, plain)
	}
	if cs.Retries > 0 {
		v.o.field(w, "Retries", fmt.Sprintf("%d (webapp.example.com/retry)", cs.Retries), plain)
	}
	v.ignoredAndMessage(w, cs)
}

// rolledBackWithinWindow draws the canary section of a rollback within the rollback window
// (canary.RolledBackWithinWindow): no canary ran, so there are no steps, weight or checks to
// show; cs.Revision is the revision gone back to, not a canary's.
func (v *view) rolledBackWithinWindow(w io.Writer, cs *webappv1.CanaryStatus) {
	fmt.Fprintf(w, "Canary: none; %s to %s within the rollback window\n", v.o.paint(string(cs.Phase), canaryTone(cs.Phase)), cs.Revision)
	v.ignoredAndMessage(w, cs)
}

// ignoredAndMessage draws the annotations the hook ignores, each with why, and the canary's
// message unless the WebApp's message holds it already.
func (v *view) ignoredAndMessage(w io.Writer, cs *webappv1.CanaryStatus) {
	for _, ignored := range cs.IgnoredAnnotations {
		v.o.field(w, "Ignored", ignored, plain)
	}
	if cs.Message != "" && !strings.Contains(v.WebApp.Status.Message, cs.Message) {
		v.o.field(w, "Message", cs.Message, plain)
	}
}

// stepState says where step i of the spec's steps stands, cur being the canary's.
func (v *view) stepState(cs *webappv1.CanaryStatus, i, cur int) string {
	switch cs.Phase {
	case webappv1.CanaryPromoting, webappv1.CanaryPromoted:
		if i <= cur {
			return "done"
		}
		return "skipped"
	case webappv1.CanaryAborted, webappv1.CanaryRolledBack:
		switch {
		case i < cur:
			return "done"
		case i == cur && cs.Phase == webappv1.CanaryAborted:
			return "aborted here"
		case i == cur:
			return "rolled back here"
		}
		return ""
	}
	switch {
	case i < cur:
		return "done"
	case i > cur:
		return ""
	case cs.Phase == webappv1.CanaryPaused:
		return "paused until promoted"
	case cs.PauseStartTime == nil:
		return "weight moving into place"
	}
	end, timed := canary.PauseEnd(v.plan(), cs)
	if !timed {
		return "weight in place"
	}
	if left := end.Sub(v.Now); left > 0 {
		return "held, " + left.Round(time.Second).String() + " left"
	}
	if !canary.AnalysisPassed(v.plan(), cs) {
		return "pause over; waits for a passing check"
	}
	return "pause over"
}

// headerRoute says which requests plan's header route sends to the canary, whether the route
// carries it (routed, status.canary.headerRouted), and, with an analysis, whether it counts them:
// "X-Canary: always, or Cookie ~ canary=1: to the canary, on the route; counted by the analysis".
func headerRoute(plan *webappv1.Canary, routed bool) string {
	var matches []string
	for _, m := range plan.HeaderRoute.Matches {
		var headers []string
		for _, h := range m.Headers {
			op := ": "
			if h.Type == webappv1.HeaderMatchRegularExpression {
				op = " ~ "
			}
			headers = append(headers, h.Name+op+h.Value)
		}
		matches = append(matches, strings.Join(headers, " and "))
	}
	s := strings.Join(matches, ", or ") + ": to the canary, on the route"
	if !routed {
		s = strings.Join(matches, ", or ") + ": not on the route yet (once a canary pod is available)"
	}
	switch {
	case plan.Analysis == nil:
	case plan.HeaderRoute.Counted():
		s += "; counted by the analysis"
	default:
		s += "; left out of the analysis"
	}
	return s
}

// weight says what share of the traffic the canary is asked for (canary.Target) and what it
// has: the weight the observed route carries, or without a route the share its available pods
// cover.
func (v *view) weight(cs *webappv1.CanaryStatus) string {
	asked := "0%"
	if w, ok := canary.Target(v.plan(), cs); ok {
		asked = fmt.Sprintf("%d%%", w)
	} else if cs.Phase == webappv1.CanaryPromoted {
		asked = "none"
	}
	has := "none"
	if cs.Weight != nil {
		has = fmt.Sprintf("%d%%", *cs.Weight)
	}
	if v.WebApp.Spec.Route == nil {
		return fmt.Sprintf("%s asked, %s covered by its pods (no route: the Service splits by pod count)", asked, has)
	}
	return fmt.Sprintf("%s asked, %s on the route", asked, has)
}

func (v *view) analysis(w io.Writer) {
	cs := v.WebApp.Status.Canary
	if cs == nil || cs.Analysis == nil {
		return
	}
	a := cs.Analysis
	var spec *webappv1.CanaryAnalysis
	if plan := v.plan(); plan != nil {
		spec = plan.Analysis
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "Analysis: %s at step %d, the check of %s over %s\n", v.o.paint(string(a.Result), resultTone(a.Result)), a.Step+1, clock(v.Now, a.CheckTime.Time), seconds(a.WindowSeconds))
	if len(a.Metrics) > 0 {
		compared := slices.ContainsFunc(a.Metrics, func(m webappv1.MetricStatus) bool { return m.Stable != "" })
		head := []cell{c("METRIC"), c("VALUE")}
		if compared {
			head = append(head, c("STABLE"))
		}
		rows := [][]cell{append(head, c("THRESHOLD"), c("RESULT"))}
		for _, m := range a.Metrics {
			r := []cell{c(m.Name), c(orDash(m.Value))}
			if compared {
				r = append(r, c(orDash(m.Stable)))
			}
			rows = append(rows, append(r, c(orDash(m.Threshold)), ct(string(m.Result), resultTone(m.Result))))
		}
		v.o.table(w, "  ", rows)
	}
	if a.Requests != nil || a.StableRequests != nil {
		var parts []string
		if a.Requests != nil {
			parts = append(parts, fmt.Sprintf("%d to the canary", *a.Requests))
		}
		if a.StableRequests != nil {
			parts = append(parts, fmt.Sprintf("%d to the stable version", *a.StableRequests))
		}
		if spec != nil {
			parts = append(parts, fmt.Sprintf("at least %d to pass", spec.Requests()))
		}
		v.o.field(w, "Requests", strings.Join(parts, ", "), plain)
	}
	if a.Message != "" {
		v.o.field(w, "Found", a.Message, plain)
	}
	if a.InconclusiveSince != nil {
		since := "inconclusive since " + clock(v.Now, a.InconclusiveSince.Time)
		if a.Result == webappv1.CheckHeld {
			since = "held; " + since
		}
		if spec != nil {
			after, action := spec.Inconclusive()
			since += fmt.Sprintf("; after %s: %s", after, action)
		}
		v.o.field(w, "Since", since, busy)
	}
}

func (v *view) conditions(w io.Writer) {
	conds := v.WebApp.Status.Conditions
	if len(conds) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Conditions")
	rows := [][]cell{{c("TYPE"), c("STATUS"), c("REASON"), c("SINCE")}}
	var notes []string
	for _, cd := range conds {
		t := good
		if cd.Status != "True" {
			t = bad
			if cd.Type != webappv1.ConditionReady && cd.Type != webappv1.ConditionCanary {
				t = busy
			}
		}
		rows = append(rows, []cell{c(cd.Type), ct(string(cd.Status), t), c(cd.Reason), c(age(v.Now, cd.LastTransitionTime.Time))})
		if cd.Status != "True" && cd.Message != "" && !v.shown(cd.Message) {
			notes = append(notes, cd.Type+": "+cd.Message)
		}
	}
	v.o.table(w, "  ", rows)
	for _, n := range notes {
		v.o.note(w, "  ", n)
	}
}

// MaxEvents is how many Events the screen shows, the latest.
const MaxEvents = 5

// events writes the latest MaxEvents Events on the WebApp, oldest first, as kubectl describe
// lists them, each message under the table unless the screen shows it already. No Events, and
// none unread, write nothing.
func (v *view) events(w io.Writer) {
	if why, ok := v.Unread["events"]; ok {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Events: cannot be read")
		v.o.note(w, "  ", why)
		return
	}
	if len(v.Events) == 0 {
		return
	}
	evs := slices.Clone(v.Events)
	slices.SortStableFunc(evs, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	title := "Events"
	if len(evs) > MaxEvents {
		title = fmt.Sprintf("Events (the latest %d of %d)", MaxEvents, len(evs))
		evs = evs[len(evs)-MaxEvents:]
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, title)
	rows := [][]cell{{c("AGE"), c("TYPE"), c("REASON")}}
	var notes []string
	for _, e := range evs {
		t := good
		if e.Type == corev1.EventTypeWarning {
			t = bad
		}
		rows = append(rows, []cell{c(age(v.Now, eventTime(e))), ct(e.Type, t), c(e.Reason)})
		if e.Message != "" && !v.shown(e.Message) {
			notes = append(notes, e.Reason+": "+e.Message)
		}
	}
	v.o.table(w, "  ", rows)
	for _, n := range notes {
		v.o.note(w, "  ", n)
	}
}

// eventTime is when e last happened: its lastTimestamp, else its eventTime, else its creation.
func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// shown reports whether msg is on the screen already, as the WebApp's or the canary's message.
func (v *view) shown(msg string) bool {
	st := &v.WebApp.Status
	return strings.Contains(st.Message, msg) || st.Canary != nil && st.Canary.Message == msg
}

func (v *view) pods(w io.Writer) {
	fmt.Fprintln(w)
	if why, ok := v.Unread["pods"]; ok {
		fmt.Fprintln(w, "Pods: cannot be read")
		v.o.note(w, "  ", why)
		return
	}
	var pods []corev1.Pod
	for _, p := range v.Pods {
		if p.Labels[webappv1.LabelInstance] == v.WebApp.Name {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		fmt.Fprintln(w, "Pods: none")
		return
	}
	slices.SortFunc(pods, func(a, b corev1.Pod) int {
		if ta, tb := track(&a), track(&b); ta != tb {
			return strings.Compare(ta, tb)
		}
		return strings.Compare(a.Name, b.Name)
	})
	fmt.Fprintln(w, "Pods")
	rows := [][]cell{{c("TRACK"), c("NAME"), c("READY"), c("STATUS"), c("RESTARTS"), c("AGE")}}
	var stuck []string
	for i := range pods {
		p := &pods[i]
		ready, total, restarts := 0, len(p.Spec.Containers), int32(0)
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Ready {
				ready++
			}
			restarts += cs.RestartCount
		}
		status, t := podStatus(p)
		rows = append(rows, []cell{c(track(p)), c(p.Name), c(fmt.Sprintf("%d/%d", ready, total)), ct(status, t), c(strconv.Itoa(int(restarts))), c(age(v.Now, p.CreationTimestamp.Time))})
		if why := whyStuck(p); why != "" {
			stuck = append(stuck, p.Name+" cannot start: "+why)
		}
	}
	v.o.table(w, "  ", rows)
	for _, s := range stuck {
		v.o.note(w, "  ", s)
	}
}

// track is a pod's track: canary when it carries webappv1.LabelTrack, stable otherwise.
func track(p *corev1.Pod) string {
	if p.Labels[webappv1.LabelTrack] == webappv1.TrackCanary {
		return webappv1.TrackCanary
	}
	return "stable"
}

// podStatus is a pod's status as kubectl get pods words it, in short: Terminating, a waiting
// container's reason, a terminated one's, or the pod's phase.
func podStatus(p *corev1.Pod) (string, tone) {
	if p.DeletionTimestamp != nil {
		return "Terminating", busy
	}
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && w.Reason != "" {
			if sync.StuckReason(w.Reason) {
				return w.Reason, bad
			}
			return w.Reason, busy
		}
		if t := cs.State.Terminated; t != nil && t.Reason != "" {
			return t.Reason, bad
		}
	}
	switch p.Status.Phase {
	case corev1.PodRunning:
		return string(p.Status.Phase), good
	case "":
		return "Unknown", busy
	case corev1.PodFailed:
		return string(p.Status.Phase), bad
	}
	return string(p.Status.Phase), busy
}

// whyStuck says why a pod cannot start, as the hook's pod diagnosis reads it (sync.WhyStuck):
// "<reason>: <message>", the reason alone without a message; "" when nothing says it cannot.
func whyStuck(p *corev1.Pod) string {
	reason, detail := sync.WhyStuck(&p.Status)
	if detail == "" {
		return reason
	}
	return reason + ": " + detail
}

// imageOf is the image of a template's app container, "-" when it has none.
func imageOf(t *corev1.PodTemplateSpec) string {
	for _, ct := range t.Spec.Containers {
		if ct.Name == sync.ContainerName {
			return ct.Image
		}
	}
	return "-"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func phaseTone(p webappv1.Phase) tone {
	switch p {
	case webappv1.PhaseReady:
		return good
	case webappv1.PhaseDegraded, webappv1.PhaseInvalid:
		return bad
	}
	return busy
}

func canaryTone(p webappv1.CanaryPhase) tone {
	switch p {
	case webappv1.CanaryPromoted, webappv1.CanaryRolledBack:
		return good
	case webappv1.CanaryAborted:
		return bad
	}
	return busy
}

func resultTone(r webappv1.CheckResult) tone {
	switch r {
	case webappv1.CheckPassed:
		return good
	case webappv1.CheckFailed:
		return bad
	}
	return busy
}

// Package notifier is the edge of the WebApp notifier: for each WebApp it is told of, it asks
// notify.Next what to tell, records each transition as a Kubernetes Event on the WebApp, and
// sends the notifications the WebApp's subscriptions ask for through notifications-engine. What
// it has told, and the deliveries still due, it keeps in a ConfigMap of its own namespace per
// WebApp, never on the WebApp: writing the WebApp would make Metacontroller call the hook.
package notifier

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/argoproj/notifications-engine/pkg/api"
	"github.com/argoproj/notifications-engine/pkg/services"
	"github.com/argoproj/notifications-engine/pkg/subscriptions"
	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/notify"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// The names the notifier gives what it writes.
const (
	// RecordPrefix starts the name of a WebApp's record ConfigMap: RecordPrefix + the WebApp's uid.
	RecordPrefix = "webapp-notified-"
	// RecordKey is the record's key in its ConfigMap's data.
	RecordKey = "record.json"
	// ManagedBy is the app.kubernetes.io/managed-by label of the record ConfigMaps.
	ManagedBy = "webapp-notifier"
	// Component is the Event's source and reporting component.
	Component = "webapp-notifier"
)

// Notifier tells the transitions of WebApps. Sync is safe for concurrent use on different
// WebApps; the caller (a workqueue) never syncs one WebApp twice at once.
type Notifier struct {
	// Client writes Events in the WebApps' namespaces and the records in Namespace.
	Client kubernetes.Interface
	// Namespace is the notifier's own: where its records are.
	Namespace string
	// GetAPI returns the platform's notifications configuration, from its ConfigMap and Secret;
	// an error sends nothing (the deliveries stay due).
	GetAPI func() (api.API, error)
	// Redact removes the Secret's values from a string before it is logged (an error of a
	// service may name its URL, which holds a token); nil redacts nothing.
	Redact func(string) string
	// Instance is the Event's reportingInstance: the pod's name.
	Instance string
	// Logger, Metrics and Now; Now defaults to time.Now.
	Logger  *slog.Logger
	Metrics *Metrics
	Now     func() time.Time

	mu      sync.Mutex
	records map[types.UID]*state // loaded once, then kept: this replica is the one writer (leader election)
}

// state is one WebApp's record as the ConfigMap keeps it.
type state struct {
	Record  notify.Record `json:"record"`
	Pending []Delivery    `json:"pending,omitempty"`
	// exists says whether the ConfigMap does; resourceVersion is its, when known.
	exists          bool
	resourceVersion string
}

// Delivery is a notification due to one subscriber: a transition, the trigger and templates
// that matched it, and the destination. It stays in the record until sent.
type Delivery struct {
	Transition notify.Transition    `json:"transition"`
	Trigger    string               `json:"trigger"`
	Templates  []string             `json:"templates"`
	Dest       services.Destination `json:"dest"`
	Attempts   int                  `json:"attempts,omitempty"`
}

func (d Delivery) id() string {
	return d.Transition.Key + "|" + d.Trigger + "|" + d.Dest.Service + "|" + d.Dest.Recipient
}

// ErrPending is returned by Sync when deliveries are still due: the caller retries the WebApp
// later, with backoff.
var ErrPending = errors.New("notifications still due")

// Sync tells w's new transitions and sends the notifications due to its subscribers. It returns
// ErrPending (wrapped) when a notification could not be sent, and another error when the record
// could not be read or written; either way what it did is kept, and a later Sync goes on from
// there. A nil w does nothing.
func (n *Notifier) Sync(ctx context.Context, w *webappv1.WebApp, obj map[string]any) error {
	if w == nil {
		return nil
	}
	st, err := n.load(ctx, w.UID)
	if err != nil {
		return err
	}
	transitions, next := notify.Next(st.Record, w)
	if len(transitions) == 0 && len(st.Pending) == 0 {
		if !equalRecords(next, st.Record) {
			st.Record = next
			return n.save(ctx, w, st)
		}
		return nil // the common case, a status update that tells nothing: no write at all
	}
	engine, err := n.GetAPI()
	if err != nil {
		// Nothing is recorded, so that the transitions are told once it can be read.
		return fmt.Errorf("%w: the notifications configuration is unreadable: %s", ErrPending, n.redact(err.Error()))
	}
	for _, t := range transitions {
		n.recordEvent(ctx, w, t)
		st.Pending = append(st.Pending, n.deliveries(engine, w, obj, t)...)
	}
	st.Record = next
	if len(transitions) > 0 {
		// What is due is kept before it is sent: a restart from here sends it, once.
		if err := n.save(ctx, w, st); err != nil {
			return err
		}
	}
	if len(st.Pending) == 0 {
		return nil
	}
	var left []Delivery
	for _, d := range st.Pending {
		if d.Attempts > 0 {
			n.Metrics.Retried.Inc()
		}
		vars := map[string]any{"webapp": obj, "transition": transitionVars(d.Transition)}
		if err := engine.Send(vars, d.Templates, d.Dest); err != nil {
			d.Attempts++
			n.Metrics.Failed.WithLabelValues(d.Dest.Service).Inc()
			n.Logger.Warn("notification not sent: retried with backoff", "webapp", w.Namespace+"/"+w.Name, "transition", string(d.Transition.Kind),
				"trigger", d.Trigger, "service", d.Dest.Service, "attempts", d.Attempts, "error", n.redact(err.Error()))
			left = append(left, d)
			continue
		}
		n.Metrics.Sent.WithLabelValues(d.Dest.Service).Inc()
		n.Logger.Info("notification sent", "webapp", w.Namespace+"/"+w.Name, "transition", string(d.Transition.Kind),
			"trigger", d.Trigger, "service", d.Dest.Service, "recipient", d.Dest.Recipient)
	}
	st.Pending = left
	if err := n.save(ctx, w, st); err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("%w: %d", ErrPending, len(left))
	}
	return nil
}

// deliveries returns the notifications t owes w's subscribers: for each trigger a subscription
// of w names, the destinations of each of its conditions that hold for t. A subscription to a
// trigger or a service the platform did not define is logged and counted, and sends nothing.
func (n *Notifier) deliveries(engine api.API, w *webappv1.WebApp, obj map[string]any, t notify.Transition) []Delivery {
	cfg := engine.GetConfig()
	dests := subscriptions.NewAnnotations(subscriptionAnnotations(w.Annotations)).GetDestinations(cfg.DefaultTriggers, cfg.ServiceDefaultTriggers)
	known := engine.GetNotificationServices()
	vars := map[string]any{"webapp": obj, "transition": transitionVars(t)}
	var out []Delivery
	triggerNames := make([]string, 0, len(dests))
	for name := range dests {
		triggerNames = append(triggerNames, name)
	}
	slices.Sort(triggerNames)
	for _, trigger := range triggerNames {
		if trigger == "" {
			continue
		}
		results, err := engine.RunTrigger(trigger, vars)
		if err != nil {
			n.Metrics.Refused.WithLabelValues("trigger").Inc()
			n.Logger.Warn("a subscription names a trigger the platform did not define: nothing sent", "webapp", w.Namespace+"/"+w.Name, "trigger", trigger)
			continue
		}
		for _, r := range results {
			if !r.Triggered {
				continue
			}
			for _, d := range dests[trigger] {
				if _, ok := known[d.Service]; !ok {
					n.Metrics.Refused.WithLabelValues("service").Inc()
					n.Logger.Warn("a subscription names a service the platform did not define: nothing sent", "webapp", w.Namespace+"/"+w.Name, "trigger", trigger, "service", d.Service)
					continue
				}
				out = append(out, Delivery{Transition: t, Trigger: trigger, Templates: r.Templates, Dest: d})
			}
		}
	}
	// One notification per subscriber and transition, whatever conditions overlap.
	seen := map[string]bool{}
	return slices.DeleteFunc(out, func(d Delivery) bool {
		id := d.id()
		if seen[id] {
			return true
		}
		seen[id] = true
		return false
	})
}

// subscriptionAnnotations keeps the annotations of the form
// notifications.argoproj.io/subscribe.<trigger>.<service> (or .<service> alone, for the default triggers): a WebApp's author names a trigger,
// a service and a recipient, nothing else (the engine's YAML form, notifications.argoproj.io/subscriptions, is not read).
func subscriptionAnnotations(in map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range in {
		if rest, ok := strings.CutPrefix(k, "notifications.argoproj.io/subscribe."); ok && strings.Count(rest, ".") <= 1 {
			out[k] = v
		}
	}
	return out
}

// transitionVars is t as templates and triggers read it: transition.kind, transition.message, …
func transitionVars(t notify.Transition) map[string]any {
	b, _ := json.Marshal(t)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// EventName is the name of the Event of transition key on the WebApp name: the same from any
// replica at any time, so that creating it again finds it (AlreadyExists: already recorded).
func EventName(webapp, key string) string {
	sum := sha256.Sum256([]byte(key))
	return webapp + "." + hex.EncodeToString(sum[:8])
}

// recordEvent creates the Event of t on w; one that exists already is left as it is. Its time is
// its eventTime, to the microsecond, with no firstTimestamp or lastTimestamp (to the second):
// kubectl events, kubectl describe and kubectl webapp get order Events by the one a lastTimestamp
// would win over, so that transitions told within one second (an abort and its rollback) keep
// their order there.
func (n *Notifier) recordEvent(ctx context.Context, w *webappv1.WebApp, t notify.Transition) {
	now := metav1.NewMicroTime(n.now())
	typ := corev1.EventTypeNormal
	if t.Kind.Warning() {
		typ = corev1.EventTypeWarning
	}
	msg := t.Message
	if len(msg) > 1024 {
		msg = msg[:1021] + "..."
	}
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: EventName(w.Name, t.Key), Namespace: w.Namespace,
			Annotations: map[string]string{"webapp.example.com/transition": t.Key}},
		InvolvedObject: corev1.ObjectReference{APIVersion: webappv1.Group + "/" + webappv1.Version, Kind: webappv1.Kind,
			Namespace: w.Namespace, Name: w.Name, UID: w.UID, ResourceVersion: w.ResourceVersion},
		Reason: string(t.Kind), Message: msg, Type: typ,
		Source: corev1.EventSource{Component: Component}, EventTime: now,
		ReportingController: "example.com/" + Component, ReportingInstance: n.Instance,
		Action: string(t.Kind),
	}
	_, err := n.Client.CoreV1().Events(w.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	switch {
	case err == nil:
		n.Metrics.Events.WithLabelValues("created").Inc()
	case apierrors.IsAlreadyExists(err):
		n.Metrics.Events.WithLabelValues("existed").Inc()
	default:
		n.Metrics.Events.WithLabelValues("failed").Inc()
		n.Logger.Warn("event not recorded", "webapp", w.Namespace+"/"+w.Name, "reason", string(t.Kind), "error", err.Error())
	}
}

// load returns uid's record: kept in memory after the first read.
func (n *Notifier) load(ctx context.Context, uid types.UID) (*state, error) {
	n.mu.Lock()
	st := n.records[uid]
	n.mu.Unlock()
	if st != nil {
		return st, nil
	}
	st = &state{}
	cm, err := n.Client.CoreV1().ConfigMaps(n.Namespace).Get(ctx, RecordPrefix+string(uid), metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return nil, fmt.Errorf("read the record of %s: %w", uid, err)
	default:
		if err := json.Unmarshal([]byte(cm.Data[RecordKey]), st); err != nil {
			n.Logger.Error("record unreadable: started afresh", "configmap", cm.Name, "error", err.Error())
			st = &state{}
		}
		st.exists, st.resourceVersion = true, cm.ResourceVersion
	}
	n.mu.Lock()
	if n.records == nil {
		n.records = map[types.UID]*state{}
	}
	n.records[uid] = st
	n.mu.Unlock()
	return st, nil
}

// save writes st as w's record, creating its ConfigMap the first time. A conflict (another
// writer, which leader election rules out but for a moment at handover) forgets the record in
// memory, so that the next Sync reads it again.
func (n *Notifier) save(ctx context.Context, w *webappv1.WebApp, st *state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: RecordPrefix + string(w.UID), Namespace: n.Namespace, ResourceVersion: st.resourceVersion,
			Labels:      map[string]string{"app.kubernetes.io/managed-by": ManagedBy},
			Annotations: map[string]string{"webapp.example.com/webapp": w.Namespace + "/" + w.Name}},
		Data: map[string]string{RecordKey: string(b)},
	}
	var out *corev1.ConfigMap
	if !st.exists {
		out, err = n.Client.CoreV1().ConfigMaps(n.Namespace).Create(ctx, cm, metav1.CreateOptions{})
	} else {
		out, err = n.Client.CoreV1().ConfigMaps(n.Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		n.Forget(w.UID)
		return fmt.Errorf("write the record of %s/%s: %w", w.Namespace, w.Name, err)
	}
	st.exists, st.resourceVersion = true, out.ResourceVersion
	return nil
}

// Forget drops uid's record from memory (a lost leadership, a conflict); the ConfigMap stays.
func (n *Notifier) Forget(uid types.UID) {
	n.mu.Lock()
	delete(n.records, uid)
	n.mu.Unlock()
}

// Delete removes the record of a deleted WebApp; one already gone is no error.
func (n *Notifier) Delete(ctx context.Context, uid types.UID) error {
	n.Forget(uid)
	err := n.Client.CoreV1().ConfigMaps(n.Namespace).Delete(ctx, RecordPrefix+string(uid), metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

func (n *Notifier) now() time.Time {
	if n.Now != nil {
		return n.Now()
	}
	return time.Now()
}

func (n *Notifier) redact(s string) string {
	if n.Redact == nil {
		return s
	}
	return n.Redact(s)
}

func equalRecords(a, b notify.Record) bool {
	return a.Degraded == b.Degraded && slices.Equal(a.Told, b.Told)
}

// WebApp converts an object of the WebApp informer into the typed WebApp and its map, as
// templates read it (webapp.metadata.name, webapp.status.canary.revision, …).
func WebApp(u *unstructured.Unstructured) (*webappv1.WebApp, map[string]any, error) {
	var w webappv1.WebApp
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &w); err != nil {
		return nil, nil, fmt.Errorf("WebApp %s/%s: %w", u.GetNamespace(), u.GetName(), err)
	}
	return &w, u.Object, nil
}

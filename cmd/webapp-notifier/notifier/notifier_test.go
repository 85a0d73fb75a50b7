package notifier

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/argoproj/notifications-engine/pkg/api"
	"github.com/argoproj/notifications-engine/pkg/services"
	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

// TestMain silences the standard log, where the engine's HTTP client writes each request
// (Main drops those lines).
func TestMain(m *testing.M) {
	log.SetOutput(io.Discard)
	os.Exit(m.Run())
}

// receiver is a webhook service in the test: it keeps the transitions it was sent, and answers
// 503 while down.
type receiver struct {
	mu   sync.Mutex
	got  []string
	down bool
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	var body struct {
		WebApp     struct{ Name string }
		Transition struct{ Kind, Key, Metric string }
	}
	b, _ := io.ReadAll(req.Body)
	if err := json.Unmarshal(b, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.got = append(r.got, body.Transition.Kind)
}

func (r *receiver) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	return got
}

func (r *receiver) setDown(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}

// catalog returns the shipped catalog's ConfigMap with a webhook service named webhook to url.
func catalog(t *testing.T, url string) *corev1.ConfigMap {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "metacontroller", "notifications", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatal(err)
	}
	// Retries of the service itself kept short: the notifier's backoff is what is tested.
	cm.Data["service.webhook.webhook"] = "url: " + url + "\nretryMax: 1\nretryWaitMin: 1000000\nretryWaitMax: 1000000\nheaders:\n- name: Authorization\n  value: $token\n"
	return &cm
}

type harness struct {
	client  *fake.Clientset
	recv    *receiver
	metrics *Metrics
	engine  func() (api.API, error)
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	recv := &receiver{}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	cm := catalog(t, srv.URL)
	secret := &corev1.Secret{Data: map[string][]byte{"token": []byte("Bearer s3cret-token")}}
	cfg, err := api.ParseConfig(cm, secret)
	if err != nil {
		t.Fatal(err)
	}
	engine, err := api.NewAPI(*cfg, func(obj map[string]any, _ services.Destination) map[string]any { return obj })
	if err != nil {
		t.Fatal(err)
	}
	return &harness{client: fake.NewClientset(), recv: recv, metrics: NewMetrics(nil),
		engine: func() (api.API, error) { return engine, nil }}
}

// notifier returns a new Notifier over h's cluster: a restart, or another replica, when called again.
func (h *harness) notifier(t *testing.T, logs io.Writer) *Notifier {
	if logs == nil {
		logs = io.Discard
	}
	return &Notifier{Client: h.client, Namespace: "webapp-system", GetAPI: h.engine, Instance: "test",
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), Metrics: h.metrics,
		Redact: func(s string) string { return strings.ReplaceAll(s, "s3cret-token", "***") }}
}

// story reads a WebApp TestPlugin recorded, subscribed with annotations.
func story(t *testing.T, name string, annotations map[string]string) (*webappv1.WebApp, map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "plugin", "testdata", "recorded", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ WebApp map[string]any }
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	meta := s.WebApp["metadata"].(map[string]any)
	delete(meta, "managedFields")
	ann := map[string]any{}
	for k, v := range annotations {
		ann[k] = v
	}
	meta["annotations"] = ann
	b, _ = json.Marshal(s.WebApp)
	var w webappv1.WebApp
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	return &w, s.WebApp
}

var life = []string{"paused", "progressing", "promoting", "promoted", "aborted", "rolledback"}

// everything subscribes the service webhook to the default triggers and to those of the
// canary's start and steps.
var everything = map[string]string{
	"notifications.argoproj.io/subscribe.webhook":                     "",
	"notifications.argoproj.io/subscribe.on-canary-started.webhook":   "",
	"notifications.argoproj.io/subscribe.on-canary-step-done.webhook": "",
}

// events returns the reasons of the Events recorded in namespace, by creation order (their
// names are hashes, so by the transition key's order of telling instead).
func (h *harness) events(t *testing.T, namespace string) []string {
	t.Helper()
	list, err := h.client.CoreV1().Events(namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range list.Items {
		out = append(out, e.Reason)
	}
	slices.Sort(out)
	return out
}

// TestLife follows the WebApp TestPlugin recorded through its stories: each transition is told
// once, to the receiver and as an Event, and a resync, a restart or a second replica tells
// nothing again.
func TestLife(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, nil)
	want := [][]string{
		{"CanaryStarted", "CanaryWaiting"},
		{"CanaryStepDone"},
		{"CanaryStepDone"},
		{"CanaryPromoted"},
		{"CanaryStarted", "CanaryAborted"},
		{"CanaryRolledBack", "ReadyAgain"},
	}
	var all []string
	for i, name := range life {
		w, obj := story(t, name, everything)
		if err := n.Sync(context.Background(), w, obj); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := h.recv.take(); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("%s: received %q, want %q", name, got, want[i])
		}
		all = append(all, want[i]...)
		// A resync, a restarted notifier, another replica: nothing again.
		for _, again := range []*Notifier{n, h.notifier(t, nil)} {
			if err := again.Sync(context.Background(), w, obj); err != nil {
				t.Fatalf("%s again: %v", name, err)
			}
			if got := h.recv.take(); len(got) != 0 {
				t.Errorf("%s again: received %q", name, got)
			}
		}
	}
	slices.Sort(all)
	if got := h.events(t, "plugin-840bba"); !reflect.DeepEqual(got, all) {
		t.Errorf("events %q, want %q", got, all)
	}
	if got := testutil.ToFloat64(h.metrics.Sent.WithLabelValues("webhook")); got != float64(len(all)) {
		t.Errorf("sent %v, want %d", got, len(all))
	}
	if got := testutil.ToFloat64(h.metrics.Events.WithLabelValues("created")); got != float64(len(all)) {
		t.Errorf("events created %v, want %d", got, len(all))
	}
}

// TestReceiverDown: an abort while the receiver is down is kept, retried, and arrives once it
// is back; the token never reaches the log.
func TestReceiverDown(t *testing.T) {
	h := newHarness(t)
	var logs strings.Builder
	n := h.notifier(t, &logs)
	w, obj := story(t, "aborted", map[string]string{"notifications.argoproj.io/subscribe.on-canary-aborted.webhook": ""})
	h.recv.setDown(true)
	if err := n.Sync(context.Background(), w, obj); !errors.Is(err, ErrPending) {
		t.Fatalf("down: got %v, want ErrPending", err)
	}
	if got := testutil.ToFloat64(h.metrics.Failed.WithLabelValues("webhook")); got != 1 {
		t.Errorf("failed %v, want 1", got)
	}
	// Restarted while it is down: the delivery due survives in the record.
	n = h.notifier(t, &logs)
	h.recv.setDown(false)
	if err := n.Sync(context.Background(), w, obj); err != nil {
		t.Fatal(err)
	}
	if got := h.recv.take(); !reflect.DeepEqual(got, []string{"CanaryAborted"}) {
		t.Errorf("received %q, want the abort once", got)
	}
	if got := testutil.ToFloat64(h.metrics.Retried); got != 1 {
		t.Errorf("retried %v, want 1", got)
	}
	if err := n.Sync(context.Background(), w, obj); err != nil || len(h.recv.take()) != 0 {
		t.Errorf("sent again (%v)", err)
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("the token is in the log: %s", logs.String())
	}
}

// TestTenantSafety: a subscription to a service or trigger the platform did not define sends
// nothing, says why in the log and counts in a metric; the engine's YAML subscriptions are not read.
func TestTenantSafety(t *testing.T) {
	h := newHarness(t)
	var logs strings.Builder
	n := h.notifier(t, &logs)
	w, obj := story(t, "aborted", map[string]string{
		"notifications.argoproj.io/subscribe.on-canary-aborted.nope":  "x",
		"notifications.argoproj.io/subscribe.on-nothing.webhook":      "",
		"notifications.argoproj.io/subscriptions":                     "- trigger: [on-canary-aborted]\n  destinations: [{service: webhook}]",
		"notifications.argoproj.io/subscribe.on-canary-aborted.a.b.c": "",
	})
	if err := n.Sync(context.Background(), w, obj); err != nil {
		t.Fatal(err)
	}
	if got := h.recv.take(); len(got) != 0 {
		t.Errorf("received %q, want nothing", got)
	}
	// Counted per transition: the service for the abort its trigger matched, the trigger for
	// each of the two transitions.
	for what, want := range map[string]float64{"service": 1, "trigger": 2} {
		if got := testutil.ToFloat64(h.metrics.Refused.WithLabelValues(what)); got != want {
			t.Errorf("refused %s: %v, want %v", what, got, want)
		}
	}
	for _, say := range []string{`"service":"nope"`, `"trigger":"on-nothing"`} {
		if !strings.Contains(logs.String(), say) {
			t.Errorf("the log does not say %s: %s", say, logs.String())
		}
	}
	if got := h.events(t, "plugin-840bba"); !reflect.DeepEqual(got, []string{"CanaryAborted", "CanaryStarted"}) {
		t.Errorf("events %q: the Events are recorded whatever the subscriptions", got)
	}
}

// TestIdleWritesNothing: a status update that tells nothing writes nothing at all.
func TestIdleWritesNothing(t *testing.T) {
	h := newHarness(t)
	n := h.notifier(t, nil)
	w, obj := story(t, "paused", nil)
	if err := n.Sync(context.Background(), w, obj); err != nil {
		t.Fatal(err)
	}
	h.client.ClearActions()
	for range 3 {
		if err := n.Sync(context.Background(), w, obj); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.client.Actions(); len(got) != 0 {
		t.Errorf("%d API calls while idle, want 0: %v", len(got), got)
	}
}

// TestEventName pins the Event's name: the WebApp's and a hash of the transition's key.
func TestEventName(t *testing.T) {
	if got, want := EventName("shop", "uid/rev@0/started"), "shop."; !strings.HasPrefix(got, want) || len(got) != len(want)+16 {
		t.Errorf("got %q", got)
	}
	if EventName("shop", "a") == EventName("shop", "b") {
		t.Error("two keys, one name")
	}
}

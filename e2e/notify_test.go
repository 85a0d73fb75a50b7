//go:build e2e

package e2e

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// The notifier's tokens in its Secret, which its services name as $webhook-token and
// $slack-token: the receivers check they arrive, and the notifier's log must never show them.
const (
	notifyWebhookToken = "e2e-webhook-token-5f1c9a"
	notifySlackToken   = "xoxb-e2e-slack-token-77d3"
)

// notifyWebhooks are the webhook services the test defines beside the catalog, a receiver each,
// so that one subtest's receiver can be down while the others' are up. webhook is the catalog's
// own name, whose templates carry its body; the test copies that body for the others, as
// docs/notifications.md tells a platform to.
var notifyWebhooks = []string{"webhook", "restart", "down", "tenant"}

// TestNotifications proves issue 44's notifier (cmd/webapp-notifier) under the real
// Metacontroller and the real hook binary: the notifier built and run as a process of its own,
// with a token of its own ServiceAccount bound to the roles metacontroller/notifications
// renders (applied as rendered, so that its least privilege is what runs), the catalog
// ConfigMap with the test's services added, and real HTTP receivers on loopback: webhook
// services, and Slack's Web API (the engine's slack service, pointed at the test's receiver by
// its apiURL). The WebApps have no route: their canaries split by pod count, on kwok's pods.
//
//   - a canary's whole life, to promotion, then an aborted one and its rollback: each receiver
//     gets exactly its sequence, in order, once; kubectl events lists the same transitions;
//   - the receiver down for 30 s across an abort: the abort arrives once it is back, retried;
//   - a tenant with webapp-edit alone subscribes by annotation: a defined service gets its
//     notifications, an undefined service and trigger send nothing, said by log and metric;
//   - the notifier killed (SIGKILL) mid-canary and started again: nothing lost, nothing twice;
//   - idle, the notifier started again and re-reading every WebApp: no hook call, no write.
//
// The first three run side by side, a namespace each; the kill runs alone, since it would
// stop the others' notifications too. The CompositeController resyncs hourly, not every 5 s
// as in the other tests, so that every hook call in the idle window is one something caused.
func TestNotifications(t *testing.T) {
	requireCluster(t)
	requireMetacontroller(t)
	began := time.Now()
	in := renderInstall(t, "e2e/testdata/notifications")
	hook := startHook(t, in)
	cc := in.compositeController(t, hook.url())
	cc["spec"].(map[string]any)["resyncPeriodSeconds"] = 3600
	mc := startMetacontroller(t, cc, canaryWorkers)
	installPolicy(t)
	env := startNotifyEnv(t)
	t.Logf("notifier, receivers and Metacontroller ready in %s", time.Since(began).Round(time.Millisecond))

	t.Run("side by side", func(t *testing.T) {
		t.Run("a canary's life: promoted, then aborted and rolled back", func(t *testing.T) { t.Parallel(); env.life(t) })
		t.Run("the receiver down for 30 s across an abort", func(t *testing.T) { t.Parallel(); env.receiverDown(t) })
		t.Run("a tenant with webapp-edit alone subscribes", func(t *testing.T) { t.Parallel(); env.tenant(t) })
	})
	t.Run("the notifier killed mid-canary and started again", env.killed)
	t.Run("idle: the notifier causes no hook call", func(t *testing.T) { env.idle(t, hook, mc) })
	t.Run("once each, at the end: no late notification, no token in the log", env.finally)
	t.Logf("TestNotifications took %s", time.Since(began).Round(time.Second))
}

// notifyEnv is the notifier and the receivers TestNotifications's subtests share, and what each
// subtest expects its receivers to hold at the end.
type notifyEnv struct {
	ns string // the notifier's namespace
	// namespaces are the subtests' namespaces, by subtest: made by the test itself, so that
	// their WebApps stay until its end, for the idle window and the last checks.
	namespaces map[string]string
	notifier   *notifierProcess
	webhooks   map[string]*receiver
	slack      *receiver

	mu gosync.Mutex
	// want is, per receiver and WebApp namespace, the labels that receiver must hold at the end.
	want map[string]map[string][]string
}

// startNotifyEnv starts the receivers, applies what metacontroller/notifications renders for
// the notifier into a namespace of its own (its ServiceAccount, roles and bindings, and the
// catalog with the test's services added), the Secret of tokens, and runs the notifier with a
// token of its ServiceAccount.
func startNotifyEnv(t *testing.T) *notifyEnv {
	t.Helper()
	e := &notifyEnv{ns: client.namespace(t, "notifier"), namespaces: map[string]string{}, webhooks: map[string]*receiver{}, want: map[string]map[string][]string{}}
	for _, sub := range []string{"life", "down", "tenant", "kill"} {
		e.namespaces[sub] = client.namespace(t, "notify-"+sub)
	}
	for _, name := range notifyWebhooks {
		e.webhooks[name] = startReceiver(t, name, webhookNotice(name == "webhook"))
	}
	e.slack = startReceiver(t, "slack", slackNotice)

	secret := obj{"apiVersion": "v1", "kind": "Secret", "metadata": obj{"name": "webapp-notifications-secret", "namespace": e.ns},
		"stringData": obj{"webhook-token": notifyWebhookToken, "slack-token": notifySlackToken}}
	deployment := installNotifier(t, e.ns, func(cm obj) { e.configure(t, cm) }, secret)
	e.notifier = startNotifier(t, e.ns, deployment)
	return e
}

// installNotifier applies what metacontroller/notifications renders for the notifier into
// namespace ns, as kustomize's namespace field would: its ServiceAccount, roles and bindings, and
// the catalog ConfigMap, which configure changes first; then secret, the Secret of the services'
// tokens. It returns the component's Deployment, for startNotifier. The cluster-wide objects are
// deleted when t ends.
func installNotifier(t *testing.T, ns string, configure func(cm obj), secret obj) obj {
	t.Helper()
	var deployment obj
	var applied []obj
	for _, d := range renderKustomize(t, "testdata/notifications") {
		_, kind, _, name := identity(d)
		labels, _ := field(d, "metadata", "labels").(map[string]any)
		if labels["app.kubernetes.io/name"] != "webapp-notifier" {
			continue
		}
		if meta := d["metadata"].(map[string]any); meta["namespace"] != nil {
			meta["namespace"] = ns
		}
		subjects, _ := d["subjects"].([]any)
		for _, s := range subjects {
			s.(map[string]any)["namespace"] = ns
		}
		switch kind {
		case "Deployment":
			deployment = d
			continue
		case "ConfigMap":
			if name != "webapp-notifications-cm" {
				t.Fatalf("the component renders ConfigMap %s; want webapp-notifications-cm alone", name)
			}
			configure(d)
		}
		if _, err := client.apply(d, "webapp-e2e", false); err != nil {
			t.Fatal(err)
		}
		applied = append(applied, d)
	}
	t.Cleanup(func() {
		for _, d := range applied {
			if apiVersion, kind, ns, name := identity(d); ns == "" {
				p, _ := client.path(apiVersion, kind, "", name)
				client.do("DELETE", p, "", nil)
			}
		}
	})
	kinds := map[string]int{}
	for _, d := range applied {
		_, kind, _, _ := identity(d)
		kinds[kind]++
	}
	if want := map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "Role": 1, "RoleBinding": 1, "ConfigMap": 1}; fmt.Sprint(kinds) != fmt.Sprint(want) || deployment == nil {
		t.Fatalf("metacontroller/notifications renders %v and a Deployment %v; want %v and the Deployment", kinds, deployment != nil, want)
	}
	if _, err := client.create(secret); err != nil {
		t.Fatal(err)
	}
	return deployment
}

// configure adds the test's services to the catalog ConfigMap cm: a webhook service per
// receiver (the catalog's webhook with a bearer token from the Secret), each template's webhook
// body copied for the others, and slack with its apiURL at the Slack receiver.
func (e *notifyEnv) configure(t *testing.T, cm obj) {
	t.Helper()
	data := cm["data"].(map[string]any)
	for _, name := range notifyWebhooks {
		svc := "url: " + e.webhooks[name].url() + "/notifications\n"
		if name == "webhook" {
			svc += "headers:\n- name: Authorization\n  value: Bearer $webhook-token\n"
		}
		data["service.webhook."+name] = svc
	}
	data["service.slack"] = "token: $slack-token\napiURL: " + e.slack.url() + "/api/\n"
	var templates int
	for k, v := range data {
		if !strings.HasPrefix(k, "template.") {
			continue
		}
		var tmpl map[string]any
		if err := yaml.Unmarshal([]byte(v.(string)), &tmpl); err != nil {
			t.Fatalf("catalog %s: %v", k, err)
		}
		hooks, _ := tmpl["webhook"].(map[string]any)
		if hooks["webhook"] == nil {
			t.Fatalf("catalog %s has no body for the service webhook", k)
		}
		for _, name := range notifyWebhooks {
			hooks[name] = hooks["webhook"]
		}
		b, err := yaml.Marshal(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		data[k] = string(b)
		templates++
	}
	if templates != 10 {
		t.Fatalf("the catalog has %d templates; want one per transition, 10", templates)
	}
}

// expect records that receiver must hold exactly labels for the WebApps of namespace ns at the
// end (finally).
func (e *notifyEnv) expect(receiver, ns string, labels []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.want[receiver] == nil {
		e.want[receiver] = map[string][]string{}
	}
	e.want[receiver][ns] = labels
}

// notifierProcess is the notifier binary, run with its ServiceAccount's token, the flags and
// environment of the component's Deployment, and a fixed identity, as a pod's container is
// restarted under the same name.
type notifierProcess struct {
	*daemon
	bin, dir, metricsAddr string
	args, env             []string
	started               int // the times it has become the leader and started telling
}

// startNotifier builds the notifier and starts it in ns as the Deployment deployment runs it,
// and waits until it leads. It is stopped when t ends.
func startNotifier(t *testing.T, ns string, deployment obj) *notifierProcess {
	t.Helper()
	dir := t.TempDir()
	n := &notifierProcess{bin: filepath.Join(dir, "webapp-notifier"), dir: dir, metricsAddr: "127.0.0.1:" + freePort()}
	out, err := exec.Command("go", "build", "-C", "../cmd/webapp-notifier", "-o", n.bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -C cmd/webapp-notifier: %v\n%s", err, out)
	}
	containers, _ := field(deployment, "spec", "template", "spec", "containers").([]any)
	if len(containers) != 1 {
		t.Fatalf("the notifier's Deployment has %d containers; want 1", len(containers))
	}
	c := containers[0]
	for _, a := range field(c, "args").([]any) {
		// The test chooses the listen address: a free loopback port.
		if s := a.(string); !strings.HasPrefix(s, "--metrics-addr=") {
			n.args = append(n.args, s)
		}
	}
	env, _ := field(c, "env").([]any)
	for _, v := range env {
		name := field(v, "name").(string)
		switch {
		case field(v, "value") != nil:
			n.env = append(n.env, fmt.Sprintf("%s=%s", name, field(v, "value")))
		case field(v, "valueFrom", "fieldRef", "fieldPath") == "metadata.namespace":
			n.env = append(n.env, name+"="+ns)
		case field(v, "valueFrom", "fieldRef", "fieldPath") == "metadata.name":
			n.env = append(n.env, name+"=webapp-notifier-0")
		default:
			t.Fatalf("the notifier's env %s: %v; the test knows values and the pod's namespace and name", name, v)
		}
	}

	// A kubeconfig with a token of the ServiceAccount, and nothing of the admin's.
	b, err := client.do("POST", "/api/v1/namespaces/"+ns+"/serviceaccounts/webapp-notifier/token", "application/json",
		obj{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": obj{"expirationSeconds": 3600}})
	if err != nil {
		t.Fatalf("a token of the ServiceAccount webapp-notifier: %v", err)
	}
	tr, _ := decode(b)
	token, _ := field(tr, "status", "token").(string)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(strings.Replace(cluster.kubeconfig(), cluster.token, token, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	n.args = append(n.args, "--kubeconfig="+kubeconfig, "--metrics-addr="+n.metricsAddr)
	n.start(t)
	t.Cleanup(func() {
		n.stop(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("notifier log:\n%s", tailFile(n.log, 6000))
		}
	})
	return n
}

// start runs the notifier and waits until it serves its metrics and leads.
func (n *notifierProcess) start(t *testing.T) {
	t.Helper()
	d, err := startDaemon(n.dir, "webapp-notifier", n.env, n.bin, n.args...)
	if err != nil {
		t.Fatal(err)
	}
	n.daemon = d
	n.started++
	waitFor(t, "the notifier leading", 60*time.Second, func() (bool, error) {
		if err := n.exited(); err != nil {
			return false, err
		}
		return strings.Count(n.logText(), `"msg":"telling WebApps"`) >= n.started, nil
	})
}

func (n *notifierProcess) logText() string {
	b, _ := os.ReadFile(n.log)
	return string(b)
}

// metric sums the notifier's counter metric by label, from its /metrics.
func (n *notifierProcess) metric(metric, label string) map[string]float64 {
	return scrape("http://"+n.metricsAddr+"/metrics", metric, label)
}

// receiver is an HTTP receiver of notifications on a fixed loopback port, which a test can take
// down (its port then refuses connections) and bring back.
type receiver struct {
	name, addr string
	parse      func(*http.Request, []byte) (notice, error)

	mu   gosync.Mutex
	got  []notice
	bad  []string // requests it could not read, or refused
	srv  *http.Server
	done chan struct{}
}

// notice is one notification a receiver got.
type notice struct {
	At              time.Time
	Namespace, Name string
	Kind, Revision  string
	Step            int32
	HasStep         bool
	Key             string
	// Message is the transition's message: the webhook body's transition.message, or the text
	// of Slack's attachment.
	Message string
	// Slack's alone: the channel, the message's text and the attachment's color, phase and
	// title, as a Slack user sees them.
	Channel, Text, Color, Phase, Title string
}

// label is what the test compares: the kind and revision, and the step (from 1) of a step done
// or a wait, when the receiver is told it.
func (n notice) label() string {
	s := strings.TrimSpace(n.Kind + " " + n.Revision)
	if n.HasStep && (n.Kind == "CanaryStepDone" || n.Kind == "CanaryWaiting") {
		s += fmt.Sprintf(" step %d", n.Step+1)
	}
	return s
}

// startReceiver serves parse's notifications on a free loopback port until t ends.
func startReceiver(t *testing.T, name string, parse func(*http.Request, []byte) (notice, error)) *receiver {
	t.Helper()
	r := &receiver{name: name, addr: "127.0.0.1:" + freePort(), parse: parse}
	r.up(t)
	t.Cleanup(r.down)
	return r
}

func (r *receiver) url() string { return "http://" + r.addr }

// up serves on the receiver's port.
func (r *receiver) up(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		t.Fatalf("receiver %s: %v", r.name, err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		n, err := r.parse(req, body)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			r.bad = append(r.bad, fmt.Sprintf("%s %s: %v: %s", req.Method, req.URL.Path, err, body))
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n.At = time.Now()
		r.got = append(r.got, n)
		if r.name == "slack" {
			io.WriteString(w, `{"ok":true,"channel":"C0E2E","ts":"1700000000.000100"}`)
		}
	})}
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	r.mu.Lock()
	r.srv, r.done = srv, done
	r.mu.Unlock()
}

// down closes the receiver's port and its connections; it does nothing when it is down already.
func (r *receiver) down() {
	r.mu.Lock()
	srv, done := r.srv, r.done
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		srv.Close()
		<-done
	}
}

// notices returns what the receiver got for the WebApps of namespace ns, in order.
func (r *receiver) notices(ns string) []notice {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []notice
	for _, n := range r.got {
		if n.Namespace == ns {
			out = append(out, n)
		}
	}
	return out
}

func labels(ns []notice) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.label()
	}
	return out
}

// wait waits until the receiver holds as many notices for ns as want, and fails unless they are
// want, in order. It returns them.
func (r *receiver) wait(t *testing.T, ns string, timeout time.Duration, want ...string) []notice {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		got := r.notices(ns)
		if len(got) >= len(want) {
			if g := labels(got); !slices.Equal(g, want) {
				t.Fatalf("receiver %s got, for %s:\n  %s\nwant:\n  %s", r.name, ns, strings.Join(g, "\n  "), strings.Join(want, "\n  "))
			}
			return got
		}
		if time.Now().After(deadline) {
			r.mu.Lock()
			bad := r.bad
			r.mu.Unlock()
			t.Fatalf("receiver %s got, for %s, after %s:\n  %s\nwant:\n  %s\nrequests refused: %q", r.name, ns, timeout, strings.Join(labels(got), "\n  "), strings.Join(want, "\n  "), bad)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// webhookNotice reads the catalog's webhook body: the WebApp and the transition. With token,
// the request must carry the Secret's token as the service's headers name it.
func webhookNotice(token bool) func(*http.Request, []byte) (notice, error) {
	return func(req *http.Request, body []byte) (notice, error) {
		if req.Method != http.MethodPost || req.URL.Path != "/notifications" {
			return notice{}, fmt.Errorf("want POST /notifications")
		}
		if got := req.Header.Get("Authorization"); token && got != "Bearer "+notifyWebhookToken {
			return notice{}, fmt.Errorf("Authorization %q; want the Secret's webhook-token", got)
		}
		var b struct {
			WebApp     struct{ Namespace, Name, UID string }
			Transition struct {
				Key, Kind, Message, Revision string
				Step                         *int32
			}
		}
		if err := json.Unmarshal(body, &b); err != nil {
			return notice{}, err
		}
		if b.WebApp.Namespace == "" || b.Transition.Kind == "" || b.Transition.Key == "" || b.Transition.Message == "" || b.Transition.Step == nil ||
			!strings.HasPrefix(b.Transition.Key, b.WebApp.UID+"/") {
			return notice{}, fmt.Errorf("want the WebApp's namespace and uid, and the transition's key (after the uid), kind, message and step")
		}
		return notice{Namespace: b.WebApp.Namespace, Name: b.WebApp.Name, Kind: b.Transition.Kind, Revision: b.Transition.Revision,
			Step: *b.Transition.Step, HasStep: true, Key: b.Transition.Key, Message: b.Transition.Message}, nil
	}
}

// slackNotice reads a message as Slack's Web API receives it from the engine's slack service:
// chat.postMessage, a form with the bot token, the channel, the text and the attachments as
// JSON. slack-go v0.16.0, the engine's Slack client, sends the token as the form's token field
// (which Slack accepts as it accepts a bearer header); a bearer header, if one comes, must hold
// it too. The catalog's attachment is titled "<namespace>/<name>: <kind>", with the revision
// and the phase as fields.
func slackNotice(req *http.Request, body []byte) (notice, error) {
	if req.Method != http.MethodPost || req.URL.Path != "/api/chat.postMessage" {
		return notice{}, fmt.Errorf("want POST /api/chat.postMessage")
	}
	if ct := req.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		return notice{}, fmt.Errorf("Content-Type %q; want a form", ct)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return notice{}, err
	}
	if token := cmp.Or(form.Get("token"), strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")); token != notifySlackToken {
		return notice{}, fmt.Errorf("token %q; want the Secret's slack-token", token)
	}
	if auth := req.Header.Get("Authorization"); auth != "" && auth != "Bearer "+notifySlackToken {
		return notice{}, fmt.Errorf("Authorization %q; want none, or the Secret's slack-token as a bearer", auth)
	}
	if form.Get("channel") == "" || form.Get("text") == "" {
		return notice{}, fmt.Errorf("channel %q, text %q; want both", form.Get("channel"), form.Get("text"))
	}
	var attachments []struct {
		Color, Title, Text string
		Fields             []struct{ Title, Value string }
	}
	if err := json.Unmarshal([]byte(form.Get("attachments")), &attachments); err != nil || len(attachments) != 1 {
		return notice{}, fmt.Errorf("attachments %q: want one, as JSON (%v)", form.Get("attachments"), err)
	}
	a := attachments[0]
	who, kind, ok := strings.Cut(a.Title, ": ")
	ns, name, ok2 := strings.Cut(who, "/")
	if !ok || !ok2 || a.Text == "" || a.Color == "" {
		return notice{}, fmt.Errorf("attachment %+v: want a title <namespace>/<name>: <kind>, a text and a color", a)
	}
	n := notice{Namespace: ns, Name: name, Kind: kind, Message: a.Text, Channel: form.Get("channel"), Text: form.Get("text"), Color: a.Color, Title: a.Title}
	for _, f := range a.Fields {
		switch f.Title {
		case "revision":
			if f.Value != "-" {
				n.Revision = f.Value
			}
		case "phase":
			n.Phase = f.Value
		}
	}
	return n, nil
}

// slackLook is what a Slack user sees of the catalog's message for each transition kind: the
// emoji that starts the text, and the attachment's color (Slack's green, yellow and red).
var slackLook = map[string]struct{ emoji, color string }{
	"CanaryStarted": {":rocket:", "good"}, "CanaryStepDone": {":white_check_mark:", "good"}, "CanaryWaiting": {":raised_hand:", "warning"},
	"CanaryCheckFailed": {":x:", "danger"}, "CanaryAnalysisHeld": {":pause_button:", "warning"}, "CanaryAborted": {":octagonal_sign:", "danger"},
	"CanaryPromoted": {":tada:", "good"}, "CanaryRolledBack": {":leftwards_arrow_with_hook:", "warning"},
	"Degraded": {":warning:", "danger"}, "ReadyAgain": {":white_check_mark:", "good"},
}

// checkSlack fails unless each Slack message of slack went to channel and reads, as a Slack user
// sees it, what the catalog's template makes of the same transition the webhook got: the text
// "<emoji> WebApp <namespace>/<name>: <message>", and one attachment titled
// "<namespace>/<name>: <kind>" in the kind's color, the message as its text, the revision and the
// phase as its fields. hook holds every transition, slack those of the default triggers.
func checkSlack(t *testing.T, channel string, slack, hook []notice) {
	t.Helper()
	defaults := map[string]bool{"CanaryWaiting": true, "CanaryCheckFailed": true, "CanaryAborted": true, "CanaryPromoted": true,
		"CanaryRolledBack": true, "Degraded": true, "ReadyAgain": true}
	var told []notice
	for _, n := range hook {
		if defaults[n.Kind] {
			told = append(told, n)
		}
	}
	if len(told) != len(slack) {
		t.Fatalf("Slack got %d messages, the webhook %d of the default triggers' transitions; want as many", len(slack), len(told))
	}
	for i, s := range slack {
		w, look := told[i], slackLook[s.Kind]
		wantText := fmt.Sprintf("%s WebApp %s/%s: %s", look.emoji, w.Namespace, w.Name, w.Message)
		if s.Kind != w.Kind || s.Revision != w.Revision || s.Channel != channel || strings.TrimSpace(s.Text) != wantText ||
			s.Title != w.Namespace+"/"+w.Name+": "+w.Kind || s.Color != look.color || s.Message != w.Message || s.Phase == "" {
			t.Errorf("Slack message %d: channel %q, text %q, attachment %q in %q: %q, revision %q, phase %q;\nwant channel %q, text %q, attachment %q in %q: %q, revision %q, a phase",
				i+1, s.Channel, s.Text, s.Title, s.Color, s.Message, s.Revision, s.Phase,
				channel, wantText, w.Namespace+"/"+w.Name+": "+w.Kind, look.color, w.Message, w.Revision)
		}
	}
	for i, s := range slack {
		t.Logf("Slack #%s %d: %s | attachment %q in %s, revision %q, phase %s", channel, i+1, strings.TrimSpace(s.Text), s.Title, s.Color, s.Revision, s.Phase)
	}
}

// notifySpec is a WebApp's spec with a canary of steps and no route (the canary splits by pod
// count), its pods retired as soon as it ends.
func notifySpec(replicas int, steps ...any) obj {
	return obj{"image": stableImage, "replicas": replicas, "port": 8080,
		"rollout": obj{"canary": obj{"steps": steps, "scaleDownDelaySeconds": 0}}}
}

// subscribe returns the annotations that subscribe to service, with recipient, each trigger.
func subscribe(service, recipient string, triggers ...string) map[string]any {
	out := map[string]any{}
	for _, tr := range triggers {
		out["notifications.argoproj.io/subscribe."+tr+"."+service] = recipient
	}
	return out
}

// everyTrigger is every trigger of the catalog.
var everyTrigger = []string{"on-canary-started", "on-canary-step-done", "on-canary-waiting", "on-canary-check-failed", "on-canary-analysis-held",
	"on-canary-aborted", "on-canary-promoted", "on-canary-rolled-back", "on-degraded", "on-ready-again"}

// annotatedWebApp is webApp with annotations.
func annotatedWebApp(ns, name string, annotations map[string]any, spec obj) obj {
	w := webApp(ns, name, spec)
	w["metadata"].(map[string]any)["annotations"] = annotations
	return w
}

// pausedCanary waits until the WebApp's canary of a revision other than not is paused at step step,
// and returns its revision.
// waitingCanary creates WebApp ns/name with annotations ann and spec, waits until it is Ready,
// sets the canary's image, and waits until the canary is paused at step 1 and r holds its start
// and its wait, in that order. It returns the canary's revision and those two notices, for the
// caller to add what comes next.
func waitingCanary(t *testing.T, tl *timeline, r *receiver, ns, name string, ann map[string]any, spec obj) (string, []string) {
	t.Helper()
	if _, err := client.create(annotatedWebApp(ns, name, ann, spec)); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ns, name, "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady))
	patchSpec(t, ns, name, obj{"image": canaryImage})
	rev := pausedCanary(t, ns, name, "", 0)
	want := []string{"CanaryStarted " + rev, "CanaryWaiting " + rev + " step 1"}
	r.wait(t, ns, 30*time.Second, want...)
	tl.mark(t, "canary %s waiting, told", rev)
	return rev, want
}

func pausedCanary(t *testing.T, ns, name, not string, step int32) string {
	t.Helper()
	st := waitStatus(t, ns, name, fmt.Sprintf("a new canary paused at step %d", step+1), 90*time.Second, func(st webappv1.WebAppStatus) bool {
		c := st.Canary
		return c != nil && c.Revision != not && c.Phase == webappv1.CanaryPaused && c.Step == step
	})
	return st.Canary.Revision
}

func promotedReady(st webappv1.WebAppStatus) bool {
	return st.Phase == webappv1.PhaseReady && st.Canary != nil && st.Canary.Phase == webappv1.CanaryPromoted
}

// life: a canary of two steps (the first until promoted, the second of 2 s) promoted step by
// step, then a canary aborted at its first step, and rolled back by setting the image back.
// Every trigger goes to the webhook; the catalog's default triggers to Slack.
func (e *notifyEnv) life(t *testing.T) {
	ns := e.namespaces["life"]
	const name = "shop"
	tl := newTimeline(t)
	ann := subscribe("webhook", "", everyTrigger...)
	ann["notifications.argoproj.io/subscribe.slack"] = "releases"
	if _, err := client.create(annotatedWebApp(ns, name, ann, notifySpec(2, obj{"weight": 25}, obj{"weight": 50, "pauseSeconds": 2}))); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ns, name, "Ready, no canary yet", 90*time.Second, phaseIs(webappv1.PhaseReady))
	tl.mark(t, "Ready on %s, no canary", stableImage)
	hook, slack := e.webhooks["webhook"], e.slack

	patchSpec(t, ns, name, obj{"image": canaryImage})
	r1 := pausedCanary(t, ns, name, "", 0)
	tl.mark(t, "image %s: canary %s paused at step 1", canaryImage, r1)
	want := []string{"CanaryStarted " + r1, "CanaryWaiting " + r1 + " step 1"}
	hook.wait(t, ns, 30*time.Second, want...)
	tl.mark(t, "the webhook got %s", strings.Join(want, ", "))
	kubectl(t, "annotate", "webapp", name, "-n", ns, webappv1.AnnotationPromoteStep+"="+webappv1.PromoteStepValue(r1, 0, 0))
	waitStatus(t, ns, name, "promoted and Ready", 90*time.Second, promotedReady)
	tl.mark(t, "promote-step: step 2, its 2 s pause, promoted, Ready")
	want = append(want, "CanaryStepDone "+r1+" step 1", "CanaryStepDone "+r1+" step 2", "CanaryPromoted "+r1)
	hook.wait(t, ns, 30*time.Second, want...)
	tl.mark(t, "the webhook got the steps done and the promotion")

	patchSpec(t, ns, name, obj{"image": pluginImage3})
	r2 := pausedCanary(t, ns, name, r1, 0)
	want = append(want, "CanaryStarted "+r2, "CanaryWaiting "+r2+" step 1")
	hook.wait(t, ns, 30*time.Second, want...)
	tl.mark(t, "image %s: canary %s paused at step 1, told", pluginImage3, r2)
	kubectl(t, "annotate", "webapp", name, "-n", ns, webappv1.AnnotationAbort+"="+r2)
	waitStatus(t, ns, name, "aborted", 60*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Canary != nil && st.Canary.Phase == webappv1.CanaryAborted
	})
	want = append(want, "CanaryAborted "+r2)
	hook.wait(t, ns, 30*time.Second, want...)
	tl.mark(t, "aborted, told")
	patchSpec(t, ns, name, obj{"image": canaryImage})
	waitStatus(t, ns, name, "rolled back and Ready", 90*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Phase == webappv1.PhaseReady && st.Canary != nil && st.Canary.Phase == webappv1.CanaryRolledBack
	})
	want = append(want, "CanaryRolledBack "+r2, "ReadyAgain")
	got := hook.wait(t, ns, 30*time.Second, want...)
	tl.mark(t, "image back to %s: rolled back, Ready again, told", canaryImage)
	e.expect("webhook", ns, want)

	slackWant := []string{"CanaryWaiting " + r1, "CanaryPromoted " + r1, "CanaryWaiting " + r2, "CanaryAborted " + r2, "CanaryRolledBack " + r2, "ReadyAgain"}
	checkSlack(t, "releases", slack.wait(t, ns, 30*time.Second, slackWant...), got)
	e.expect("slack", ns, slackWant)
	for i, n := range got {
		t.Logf("webhook %2d  %s  %s", i+1, n.At.Sub(tl.start).Round(100*time.Millisecond), n.label())
	}

	// kubectl events lists the same transitions, in the same order (by their eventTime, to the
	// microsecond: the abort, the rollback and Ready again come within one second), one Event
	// each, keyed as the webhook got them.
	events := kubectl(t, "events", "-n", ns, "--for", "webapp/"+name)
	t.Logf("kubectl events -n %s --for webapp/%s:\n%s", ns, name, events)
	var reasons []string
	for _, l := range strings.Split(events, "\n")[1:] {
		if f := strings.Fields(l); len(f) > 2 {
			reasons = append(reasons, f[2]) // LAST SEEN, TYPE, REASON, OBJECT, MESSAGE
		}
	}
	var kinds []string
	for _, n := range got {
		kinds = append(kinds, n.Kind)
	}
	if !slices.Equal(reasons, kinds) {
		t.Errorf("kubectl events lists the reasons\n  %v\nwant the transitions the webhook got, in its order:\n  %v", reasons, kinds)
	}
	checkEvents(t, ns, name, got)
}

// checkEvents fails unless the Events on the WebApp ns/name are one per notice of got, keyed by
// its transition (the annotation webapp.example.com/transition), of the notifier's.
func checkEvents(t *testing.T, ns, name string, got []notice) {
	t.Helper()
	b, err := client.do("GET", "/api/v1/namespaces/"+ns+"/events?fieldSelector="+url.QueryEscape("involvedObject.name="+name+",involvedObject.kind=WebApp"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Items []obj }
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	var keys, want []string
	for _, ev := range list.Items {
		k, _ := field(ev, "metadata", "annotations", "webapp.example.com/transition").(string)
		keys = append(keys, k+" "+fmt.Sprint(field(ev, "reason")))
		if field(ev, "source", "component") != "webapp-notifier" || field(ev, "eventTime") == nil || field(ev, "lastTimestamp") != nil {
			t.Errorf("Event %v: source %v, eventTime %v, lastTimestamp %v; want webapp-notifier's, an eventTime and no lastTimestamp", field(ev, "metadata", "name"),
				field(ev, "source"), field(ev, "eventTime"), field(ev, "lastTimestamp"))
		}
	}
	for _, n := range got {
		want = append(want, n.Key+" "+n.Kind)
	}
	slices.Sort(keys)
	slices.Sort(want)
	if !slices.Equal(keys, want) {
		t.Errorf("Events on %s/%s (key, reason):\n  %s\nwant one per notification:\n  %s", ns, name, strings.Join(keys, "\n  "), strings.Join(want, "\n  "))
	}
}

// receiverDown: the receiver taken down once the canary waits, the canary aborted while it is
// down, and brought back 30 s later: the abort arrives then, once, and the retries are counted.
func (e *notifyEnv) receiverDown(t *testing.T) {
	ns := e.namespaces["down"]
	const name = "shop"
	r := e.webhooks["down"]
	tl := newTimeline(t)
	ann := subscribe("down", "", "on-canary-started", "on-canary-waiting", "on-canary-aborted")
	rev, want := waitingCanary(t, tl, r, ns, name, ann, notifySpec(2, obj{"weight": 50}))

	failed0 := e.notifier.metric("webapp_notifier_notifications_failed_total", "service")["down"]
	retried0 := e.notifier.metric("webapp_notifier_notifications_retried_total", "")[""]
	r.down()
	downAt := tl.mark(t, "the receiver down")
	kubectl(t, "annotate", "webapp", name, "-n", ns, webappv1.AnnotationAbort+"="+rev)
	waitStatus(t, ns, name, "aborted", 60*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Canary != nil && st.Canary.Phase == webappv1.CanaryAborted
	})
	tl.mark(t, "aborted")
	// The Event does not wait for the receiver.
	waitFor(t, "the Event CanaryAborted while the receiver is down", 30*time.Second, func() (bool, error) {
		return strings.Contains(kubectl(t, "events", "-n", ns, "--for", "webapp/"+name), "CanaryAborted"), nil
	})
	tl.mark(t, "the Event CanaryAborted recorded")
	waitFor(t, "a failed attempt at the abort's notification", 30*time.Second, func() (bool, error) {
		return e.notifier.metric("webapp_notifier_notifications_failed_total", "service")["down"] > failed0, nil
	})
	tl.mark(t, "the first attempt failed")
	time.Sleep(time.Until(tl.start.Add(downAt + 30*time.Second)))
	if n := len(r.notices(ns)); n != len(want) {
		t.Fatalf("the receiver, down, got %d notices; want %d", n, len(want))
	}
	r.up(t)
	upAt := tl.mark(t, "the receiver back, 30 s after it went down")
	want = append(want, "CanaryAborted "+rev)
	got := r.wait(t, ns, 60*time.Second, want...)
	arrived := got[len(got)-1].At.Sub(tl.start)
	tl.mark(t, "the abort arrived, %s after the receiver came back", (arrived - upAt).Round(100*time.Millisecond))
	if arrived < upAt {
		t.Errorf("the abort arrived at %s, before the receiver came back at %s", arrived, upAt)
	}
	failed := e.notifier.metric("webapp_notifier_notifications_failed_total", "service")["down"] - failed0
	retried := e.notifier.metric("webapp_notifier_notifications_retried_total", "")[""] - retried0
	t.Logf("while down: %v failed attempts (each the webhook service's own 3 retries), %v retried by the notifier", failed, retried)
	if failed < 1 || retried < failed {
		t.Errorf("failed %v, retried %v; want at least one failed attempt, each retried", failed, retried)
	}
	checkEvents(t, ns, name, got)
	e.expect("down", ns, want)

	// Rolled back, so that the idle window finds every WebApp at rest.
	patchSpec(t, ns, name, obj{"image": stableImage})
	waitStatus(t, ns, name, "rolled back and Ready", 90*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Phase == webappv1.PhaseReady && st.Canary != nil && st.Canary.Phase == webappv1.CanaryRolledBack
	})
}

// tenant: carol, bound to webapp-edit alone, makes a WebApp and subscribes it by kubectl
// annotate to the service tenant (its default triggers and on-canary-started), to a service the
// platform did not define and to a trigger it did not define; she sets the image and promotes.
// The tenant service gets its notifications; the others send nothing, and the log and the
// metric say why.
func (e *notifyEnv) tenant(t *testing.T) {
	ns := e.namespaces["tenant"]
	const name = "shop"
	bind(t, ns, "carol", "ClusterRole", "webapp-edit")
	may(t, "carol", "patch", "example.com", "webapps", ns)
	if _, err := as("carol").create(webApp(ns, name, notifySpec(2, obj{"weight": 50}))); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ns, name, "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady))
	refused0 := e.notifier.metric("webapp_notifier_subscriptions_refused_total", "what")
	if out, err := kubectlAs("carol", "annotate", "webapp", name, "-n", ns,
		"notifications.argoproj.io/subscribe.tenant=team-a",
		"notifications.argoproj.io/subscribe.on-canary-started.tenant=team-a",
		"notifications.argoproj.io/subscribe.on-canary-waiting.nosuch=team-a",
		"notifications.argoproj.io/subscribe.on-no-such-trigger.tenant=team-a"); err != nil {
		t.Fatalf("kubectl annotate as carol: %v\n%s", err, out)
	}
	if out, err := kubectlAs("carol", "patch", "webapp", name, "-n", ns, "--type=merge", "-p", `{"spec":{"image":"`+canaryImage+`"}}`); err != nil {
		t.Fatalf("kubectl patch as carol: %v\n%s", err, out)
	}
	rev := pausedCanary(t, ns, name, "", 0)
	r := e.webhooks["tenant"]
	want := []string{"CanaryStarted " + rev, "CanaryWaiting " + rev + " step 1"}
	r.wait(t, ns, 30*time.Second, want...)
	if out, err := kubectlAs("carol", "annotate", "webapp", name, "-n", ns, webappv1.AnnotationPromote+"="+rev); err != nil {
		t.Fatalf("kubectl annotate as carol: %v\n%s", err, out)
	}
	waitStatus(t, ns, name, "promoted and Ready", 90*time.Second, promotedReady)
	want = append(want, "CanaryPromoted "+rev)
	got := r.wait(t, ns, 30*time.Second, want...)
	e.expect("tenant", ns, want)

	// What the tenant asked of what the platform did not define: counted, logged, nothing sent.
	// The WebApp's transitions are Started, Waiting, the step done and Promoted: each runs the
	// undefined trigger once, and the Waiting matches the undefined service's subscription.
	waitFor(t, "the refusals counted", 30*time.Second, func() (bool, error) {
		now := e.notifier.metric("webapp_notifier_subscriptions_refused_total", "what")
		return now["trigger"]-refused0["trigger"] >= 4 && now["service"]-refused0["service"] >= 1, nil
	})
	now := e.notifier.metric("webapp_notifier_subscriptions_refused_total", "what")
	if s, tr := now["service"]-refused0["service"], now["trigger"]-refused0["trigger"]; s != 1 || tr != 4 {
		t.Errorf("subscriptions refused: service %v, trigger %v; want 1 (the waiting, to nosuch) and 4 (one per transition, on-no-such-trigger)", s, tr)
	}
	log := e.notifier.logText()
	for _, want := range []string{
		`"msg":"a subscription names a service the platform did not define: nothing sent","webapp":"` + ns + "/" + name + `","trigger":"on-canary-waiting","service":"nosuch"`,
		`"msg":"a subscription names a trigger the platform did not define: nothing sent","webapp":"` + ns + "/" + name + `","trigger":"on-no-such-trigger"`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the notifier's log has no line with %s", want)
		}
	}
	checkEvents(t, ns, name, append(got, notice{Key: eventKey(t, ns, name, "CanaryStepDone"), Kind: "CanaryStepDone"}))
}

// eventKey is the transition key of the one Event of reason on the WebApp ns/name.
func eventKey(t *testing.T, ns, name, reason string) string {
	t.Helper()
	b, err := client.do("GET", "/api/v1/namespaces/"+ns+"/events?fieldSelector="+url.QueryEscape("involvedObject.name="+name+",reason="+reason), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Items []obj }
	json.Unmarshal(b, &list)
	if len(list.Items) != 1 {
		t.Fatalf("%d Events %s on %s/%s; want 1", len(list.Items), reason, ns, name)
	}
	k, _ := field(list.Items[0], "metadata", "annotations", "webapp.example.com/transition").(string)
	return k
}

// killed: the notifier killed (SIGKILL) once the canary waits, the canary promoted past its
// first step while it is down, and the notifier started again during the second step's pause:
// the step done while it was down arrives, then the rest, and nothing twice.
func (e *notifyEnv) killed(t *testing.T) {
	ns := e.namespaces["kill"]
	const name = "shop"
	r := e.webhooks["restart"]
	tl := newTimeline(t)
	rev, want := waitingCanary(t, tl, r, ns, name, subscribe("restart", "", everyTrigger...), notifySpec(2, obj{"weight": 25}, obj{"weight": 50, "pauseSeconds": 10}))

	e.logMetrics(t, "before the kill")
	e.notifier.stop(syscall.SIGKILL)
	tl.mark(t, "the notifier killed (SIGKILL)")
	kubectl(t, "annotate", "webapp", name, "-n", ns, webappv1.AnnotationPromoteStep+"="+webappv1.PromoteStepValue(rev, 0, 0))
	waitStatus(t, ns, name, "step 2's pause", 60*time.Second, func(st webappv1.WebAppStatus) bool {
		c := st.Canary
		return c != nil && c.Revision == rev && c.Step == 1 && c.PauseStartTime != nil && c.Phase == webappv1.CanaryProgressing
	})
	tl.mark(t, "promoted past step 1 while the notifier is down: step 2's pause")
	if n := len(r.notices(ns)); n != len(want) {
		t.Fatalf("the receiver got %d notices while the notifier was down; want %d", n, len(want))
	}
	restartedAt := tl.mark(t, "the notifier starting again (the same pod name)")
	e.notifier.start(t)
	tl.mark(t, "the notifier leading")
	want = append(want, "CanaryStepDone "+rev+" step 1")
	got := r.wait(t, ns, 30*time.Second, want...)
	tl.mark(t, "step 1 done arrived, %s after the notifier was started again", (got[len(got)-1].At.Sub(tl.start) - restartedAt).Round(100*time.Millisecond))
	if st := webAppStatus(t, ns, name); st.Canary == nil || st.Canary.Phase != webappv1.CanaryProgressing {
		t.Logf("the canary was no longer in step 2 when the notifier caught up: %s", jsonString(st.Canary))
	}
	waitStatus(t, ns, name, "promoted and Ready", 90*time.Second, promotedReady)
	want = append(want, "CanaryStepDone "+rev+" step 2", "CanaryPromoted "+rev)
	got = r.wait(t, ns, 30*time.Second, want...)
	tl.mark(t, "step 2 done and the promotion arrived, live")
	checkEvents(t, ns, name, got)
	e.expect("restart", ns, want)
}

// idle: once every WebApp is at rest and Metacontroller quiet, the notifier is started again (it
// lists every WebApp and reads each one's record) and left 15 s: no hook call, no write by
// Metacontroller, no record written, no Event, no notification.
func (e *notifyEnv) idle(t *testing.T, hook *hookProcess, mc *metacontroller) {
	tl := newTimeline(t)
	waitFor(t, "no hook call for 10 s", 120*time.Second, func() (bool, error) {
		before := hook.calls()
		time.Sleep(10 * time.Second)
		return fmt.Sprint(hook.calls()) == fmt.Sprint(before), nil
	})
	mc.waitQuiet(t)
	tl.mark(t, "at rest: no hook call for 10 s, no Metacontroller write for 6 s")
	calls, writes := hook.calls(), mc.writes()
	records, events := notifierRecords(t, e.ns), countEvents(t)
	if len(records) != len(e.namespaces) || events == 0 {
		t.Fatalf("%d records and %d Events before the idle window; want a record per WebApp (%d), and their Events", len(records), events, len(e.namespaces))
	}
	sent := e.received()
	e.notifier.stop(syscall.SIGTERM)
	e.notifier.start(t)
	tl.mark(t, "the notifier started again: it lists every WebApp and reads each one's record")
	time.Sleep(15 * time.Second)
	tl.mark(t, "15 s idle")
	if after := hook.calls(); fmt.Sprint(after) != fmt.Sprint(calls) {
		t.Errorf("hook calls %v -> %v while idle with the notifier running; want none", calls, after)
	}
	if n := mc.writes() - writes; n != 0 {
		t.Errorf("Metacontroller sent %v writes while idle; want none", n)
	}
	if after := notifierRecords(t, e.ns); fmt.Sprint(after) != fmt.Sprint(records) {
		t.Errorf("the notifier's records %v -> %v while idle; want none written", records, after)
	}
	if after := countEvents(t); after != events {
		t.Errorf("Events %d -> %d while idle; want none", events, after)
	}
	if after := e.received(); after != sent {
		t.Errorf("notifications received %d -> %d while idle; want none", sent, after)
	}
	t.Logf("idle 15 s with the notifier started again: hook calls %v (unchanged), Metacontroller writes %v (unchanged), %d records unchanged, %d Events",
		calls, writes, len(records), events)
}

// notifierRecords maps each of the notifier's record ConfigMaps in its namespace ns to its
// resourceVersion.
func notifierRecords(t *testing.T, ns string) map[string]any {
	t.Helper()
	b, err := client.do("GET", "/api/v1/namespaces/"+ns+"/configmaps?labelSelector="+url.QueryEscape("app.kubernetes.io/managed-by=webapp-notifier"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Items []obj }
	json.Unmarshal(b, &list)
	out := map[string]any{}
	for _, c := range list.Items {
		_, _, _, name := identity(c)
		out[name] = field(c, "metadata", "resourceVersion")
	}
	return out
}

// countEvents counts the notifier's Events in the cluster.
func countEvents(t *testing.T) int {
	t.Helper()
	b, err := client.do("GET", "/api/v1/events?fieldSelector="+url.QueryEscape("source=webapp-notifier"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Items []obj }
	json.Unmarshal(b, &list)
	return len(list.Items)
}

// received counts the notifications every receiver got.
func (e *notifyEnv) received() int {
	n := 0
	for _, r := range e.receivers() {
		r.mu.Lock()
		n += len(r.got)
		r.mu.Unlock()
	}
	return n
}

// receivers are the webhook receivers, by name, then Slack's.
func (e *notifyEnv) receivers() []*receiver {
	var out []*receiver
	for _, name := range notifyWebhooks {
		out = append(out, e.webhooks[name])
	}
	return append(out, e.slack)
}

// finally checks, once every subtest is over, that each receiver holds exactly what its
// subtests expected of it, for their namespaces and no other (no late or stray notification),
// refused no request, and that no token of the Secret is in the notifier's log.
func (e *notifyEnv) finally(t *testing.T) {
	for _, r := range e.receivers() {
		r.mu.Lock()
		got, bad := slices.Clone(r.got), r.bad
		r.mu.Unlock()
		if len(bad) > 0 {
			t.Errorf("receiver %s refused %q", r.name, bad)
		}
		want := e.want[r.name]
		byNS := map[string][]string{}
		for _, n := range got {
			byNS[n.Namespace] = append(byNS[n.Namespace], n.label())
		}
		if fmt.Sprint(byNS) != fmt.Sprint(want) {
			t.Errorf("receiver %s holds %v; want %v", r.name, byNS, want)
		}
		t.Logf("receiver %s: %d notifications, as expected", r.name, len(got))
	}
	log := e.notifier.logText()
	for _, secret := range []string{notifyWebhookToken, notifySlackToken} {
		if strings.Contains(log, secret) {
			t.Errorf("the notifier's log holds a token of its Secret")
		}
	}
	e.logMetrics(t, "since its last start, the idle window's")
}

// logMetrics logs the notifier's counters, which start at 0 with each start of it.
func (e *notifyEnv) logMetrics(t *testing.T, when string) {
	t.Logf("the notifier's metrics, %s: sent %v, failed %v, retried %v, refused %v, events %v", when,
		e.notifier.metric("webapp_notifier_notifications_sent_total", "service"), e.notifier.metric("webapp_notifier_notifications_failed_total", "service"),
		e.notifier.metric("webapp_notifier_notifications_retried_total", ""), e.notifier.metric("webapp_notifier_subscriptions_refused_total", "what"),
		e.notifier.metric("webapp_notifier_events_total", "result"))
}

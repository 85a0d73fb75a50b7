//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scaleNotifier is the notifier of a scale mode with it (issue 44's cost proof): the binary
// built from cmd/webapp-notifier, run as TestNotifications runs it (its ServiceAccount's token,
// the roles metacontroller/notifications renders, in a namespace of its own), with the
// catalog's webhook service at a receiver of the scale program's, to which every WebApp of the
// mode subscribes every trigger.
type scaleNotifier struct {
	ns   string
	proc *notifierProcess
	recv *receiver
}

// notifierCost is what the notifier cost in a mode with it.
type notifierCost struct {
	// told is the time from the new images until every WebApp's canary start had been told
	// and the notifier had been quiet for 6 s; cpuTold its CPU seconds from its start until then.
	told    time.Duration
	cpuTold float64
	// cpu and peakRSS are its CPU seconds and peak resident memory (VmHWM) from its start to
	// the end of the run, once the WebApps were deleted.
	cpu     float64
	peakRSS int64
	// events, sent and failed are its counters at the end of the run (Events by result,
	// notifications by service); received the notifications the receiver got, by kind.
	events, sent, failed map[string]float64
	received             map[string]float64
	// Over the idle window: its CPU seconds, the most resident memory sampled (each second),
	// and what it wrote: Events, notifications, records (ConfigMaps) created or changed.
	idleCPU                  float64
	idleRSS                  int64
	idleEvents, idleSent     float64
	idleReceived, idleRecord int
}

// idleWrites is what the notifier wrote over the idle window that Metacontroller or a
// receiver could see.
func (c *notifierCost) idleWrites() float64 {
	return c.idleEvents + c.idleSent + float64(c.idleReceived+c.idleRecord)
}

// startScaleNotifier starts the notifier for the mode of namespace ns, in the namespace
// ns-notifier, before any WebApp exists, and waits until it leads. stop ends it.
func startScaleNotifier(t *testing.T, ns string) *scaleNotifier {
	t.Helper()
	s := &scaleNotifier{ns: ns + "-notifier"}
	if _, err := client.create(obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": s.ns}}); err != nil {
		t.Fatal(err)
	}
	s.recv = startReceiver(t, s.ns, webhookNotice(false))
	secret := obj{"apiVersion": "v1", "kind": "Secret", "metadata": obj{"name": "webapp-notifications-secret", "namespace": s.ns},
		"stringData": obj{"webhook-token": "scale-unused-token"}}
	deployment := installNotifier(t, s.ns, func(cm obj) {
		cm["data"].(map[string]any)["service.webhook.webhook"] = "url: " + s.recv.url() + "/notifications\n"
	}, secret)
	s.proc = startNotifier(t, s.ns, deployment)
	return s
}

// subscribed returns w with every trigger of the catalog subscribed to the webhook service.
func subscribed(w obj) obj {
	w["metadata"].(map[string]any)["annotations"] = subscribe("webhook", "", everyTrigger...)
	return w
}

// counters are the notifier's Events (every result) and notifications sent, the notifications
// the receiver got, and its records by resourceVersion.
func (s *scaleNotifier) counters(t *testing.T) (events, sent float64, received int, records map[string]any) {
	events = total(s.proc.metric("webapp_notifier_events_total", "result"))
	sent = total(s.proc.metric("webapp_notifier_notifications_sent_total", "service"))
	s.recv.mu.Lock()
	received = len(s.recv.got)
	s.recv.mu.Unlock()
	return events, sent, received, notifierRecords(t, s.ns)
}

// waitTold waits until the receiver holds a CanaryStarted for each of the n WebApps of ns
// app-0000 … (every canary's start told) and the notifier has then written and sent nothing for
// 6 s, and records in c the time from from and the notifier's CPU until then. A failure to get
// there is recorded in r.
func (s *scaleNotifier) waitTold(t *testing.T, r *scaleResult, c *notifierCost, ns string, n int, from time.Time) {
	t.Helper()
	deadline := time.Now().Add(time.Duration(n)*2*time.Second + 3*time.Minute)
	for {
		started := map[string]bool{}
		for _, x := range s.recv.notices(ns) {
			if x.Kind == "CanaryStarted" && strings.HasPrefix(x.Name, "app-") {
				started[x.Name] = true
			}
		}
		if len(started) == n {
			break
		}
		if time.Now().After(deadline) {
			r.failure = fmt.Sprintf("the notifier told %d of %d canaries' start after %s", len(started), n, time.Since(from).Round(time.Second))
			return
		}
		if err := s.proc.exited(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
	}
	for quiet := time.Now().Add(2 * time.Minute); time.Now().Before(quiet); {
		e, sent, got, rec := s.counters(t)
		time.Sleep(6 * time.Second)
		if e2, sent2, got2, rec2 := s.counters(t); e2 == e && sent2 == sent && got2 == got && fmt.Sprint(rec2) == fmt.Sprint(rec) {
			break
		}
	}
	last := from
	for _, x := range s.recv.notices(ns) {
		if x.At.After(last) {
			last = x.At
		}
	}
	c.told, c.cpuTold = last.Sub(from), s.proc.cpuSeconds()
}

// notifierWindow is the notifier's side of an idle window: counters at its start, and a
// sampler of its resident memory.
type notifierWindow struct {
	cpu, events, sent float64
	received          int
	records           map[string]any
	stop              chan struct{}
	done              chan int64
}

// open starts the idle window: the notifier's counters now, and its resident memory sampled
// each second until close.
func (s *scaleNotifier) open(t *testing.T) *notifierWindow {
	w := &notifierWindow{cpu: s.proc.cpuSeconds(), stop: make(chan struct{}), done: make(chan int64, 1)}
	w.events, w.sent, w.received, w.records = s.counters(t)
	pid := s.proc.cmd.Process.Pid
	go func() {
		peak := procStatusKB(pid, "VmRSS:") * 1024
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				w.done <- peak
				return
			case <-tick.C:
				peak = max(peak, procStatusKB(pid, "VmRSS:")*1024)
			}
		}
	}()
	return w
}

// close ends the idle window w and records what it cost the notifier in c.
func (s *scaleNotifier) close(t *testing.T, w *notifierWindow, c *notifierCost) {
	close(w.stop)
	c.idleRSS = <-w.done
	c.idleCPU = s.proc.cpuSeconds() - w.cpu
	events, sent, received, records := s.counters(t)
	c.idleEvents, c.idleSent, c.idleReceived = events-w.events, sent-w.sent, received-w.received
	for k, v := range records {
		if w.records[k] != v {
			c.idleRecord++
		}
	}
}

// stop records the notifier's cost over the whole run in c, and stops it and deletes its
// namespace (the records of the deleted WebApps it has not deleted yet go with it).
func (s *scaleNotifier) stop(c *notifierCost, ns string) {
	c.cpu, c.peakRSS = s.proc.cpuSeconds(), s.proc.peakRSS()
	c.events = s.proc.metric("webapp_notifier_events_total", "result")
	c.sent = s.proc.metric("webapp_notifier_notifications_sent_total", "service")
	c.failed = s.proc.metric("webapp_notifier_notifications_failed_total", "service")
	c.received = map[string]float64{}
	for _, x := range s.recv.notices(ns) {
		c.received[x.Kind]++
	}
	s.proc.stop(syscall.SIGTERM)
	s.recv.down()
	client.do("DELETE", "/api/v1/namespaces/"+s.ns, "", nil)
}

// notifierTable formats the notifier's cost in the modes of results with it as the Markdown
// table of docs/performance.md; "" when there are none.
func notifierTable(results []scaleResult) string {
	var b strings.Builder
	for _, r := range results {
		c := r.notifier
		if c == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n| N | CompositeController | every canary's start told | notifier CPU until then | notifier CPU, whole run | notifier peak RSS | Events | notifications sent (received) | idle window | notifier CPU over it | notifier RSS over it | notifier writes over it: Events, notifications, records |\n")
			b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: |\n")
		}
		fmt.Fprintf(&b, "| %d | %s | %.1f s | %.2f s | %.2f s | %d MiB | %s | %.0f (%s) | %.0f s | %.2f s | %d MiB | %.0f, %.0f, %d |\n",
			r.n, r.mode, c.told.Seconds(), c.cpuTold, c.cpu, c.peakRSS>>20, nonZero(c.events), total(c.sent), nonZero(c.received),
			r.window.length.Seconds(), c.idleCPU, c.idleRSS>>20, c.idleEvents, c.idleSent+float64(c.idleReceived), c.idleRecord)
	}
	return b.String()
}

// compareNotifier prints, for each mode of results with the notifier, what the notifier cost
// (issue 44's cost proof) and Metacontroller's CPU over the three spans whose length
// Metacontroller sets, not the notifier: converging, the canaries' start (the notifier telling
// them at the same time) and the idle window (the target: at most 1.1× each); and the hook calls
// over the idle window. Against two modes of the same run: the one with the same subscription
// annotations and no notifier, which is "the same run without the notifier" and so holds the
// target; and the mid-canary mode without either, for the cost of turning notifications on,
// annotations included, which is printed beside it. Not the whole run: the mode with the
// notifier waits for it to tell every canary's start before its idle window, and
// Metacontroller's resyncs over that wait are no cost of the notifier's. The notifier causes a
// hook call only by a write Metacontroller reads, and it can write no WebApp: what it wrote over
// the idle window (Events, records, notifications; the target: nothing) is what says it caused
// none. A write there fails the test, as does a canary whose start was not told (r.failure).
func compareNotifier(t *testing.T, results []scaleResult) {
	var plain, annotated *scaleResult
	for i := range results {
		switch r := &results[i]; {
		case !r.midCanary || r.analysis || r.notifier != nil || r.blueGreen:
		case r.subscriptions:
			annotated = r
		default:
			plain = r
		}
	}
	for i := range results {
		with := &results[i]
		c := with.notifier
		if c == nil {
			continue
		}
		fmt.Printf("%s: the notifier over the run: CPU %.2f s (%.2f s until every canary's start was told, %.1f s after the new images), peak RSS %d MiB; Events %s; notifications sent %.0f, failed %.0f; received %s\n",
			with.mode, c.cpu, c.cpuTold, c.told.Seconds(), c.peakRSS>>20, nonZero(c.events), total(c.sent), total(c.failed), nonZero(c.received))
		fmt.Printf("%s, over the idle window (%.0f s): the notifier's CPU %.2f s, RSS at most %d MiB; it wrote Events %.0f, notifications %.0f (received %d), records %d (target: nothing: %s)\n",
			with.mode, with.window.length.Seconds(), c.idleCPU, c.idleRSS>>20, c.idleEvents, c.idleSent, c.idleReceived, c.idleRecord, metOrNot(c.idleWrites() == 0))
		if c.idleWrites() != 0 {
			t.Errorf("%s: the notifier wrote while idle: Events %.0f, notifications %.0f (received %d), records %d; want nothing", with.mode, c.idleEvents, c.idleSent, c.idleReceived, c.idleRecord)
		}
		caused := "0, since it wrote nothing there"
		if c.idleWrites() != 0 {
			caused = "not known, since it wrote there"
		}
		for _, b := range []struct {
			without *scaleResult
			target  bool
		}{{annotated, true}, {plain, false}} {
			without := b.without
			if without == nil || without.cpuConverge <= 0 || without.cpuToMidCanary <= 0 || without.window.mcCPU <= 0 || without.window.length <= 0 {
				continue
			}
			x, y := with.window, without.window
			ratio := func(p, q float64) string {
				if !b.target {
					return fmt.Sprintf("%.2f× (%.2f s against %.2f s)", p/q, p, q)
				}
				return fmt.Sprintf("%.2f× (%.2f s against %.2f s; target ≤ 1.1×: %s)", p/q, p, q, metOrNot(p/q <= 1.1))
			}
			perMin := func(w scaleWindow, n int) float64 { return w.calls / float64(n) / w.length.Minutes() }
			perSync := func(w scaleWindow) float64 { return 1000 * w.mcCPU / max(w.syncs, 1) }
			fmt.Printf("%s against %s: Metacontroller CPU to converge %s; from the new images until every canary waited %s; over the idle window %s, %.2f ms per sync call against %.2f ms; Metacontroller writes over the idle window %.0f against %.0f; hook calls over it %.0f against %.0f (%.2f against %.2f per WebApp a minute), of them caused by the notifier: %s (target 0: %s)\n",
				with.mode, without.mode, ratio(with.cpuConverge, without.cpuConverge), ratio(with.cpuToMidCanary, without.cpuToMidCanary), ratio(x.mcCPU, y.mcCPU),
				perSync(x), perSync(y), x.writes, y.writes, x.calls, y.calls, perMin(x, with.n), perMin(y, without.n), caused, metOrNot(c.idleWrites() == 0))
		}
	}
}

//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	gosync "sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// The images of the canary tests: the stable one, and the canary's.
const (
	stableImage = "nginx:1.27"
	canaryImage = "nginx:1.28"
)

const routeAPI = "gateway.networking.k8s.io/v1"

// canaryWorkers is the number of Metacontroller workers of TestCanary, as realInstall's.
const canaryWorkers = 5

// TestCanary runs issue 30's canary under the real Metacontroller with the gateway-api component
// and the real hook binary, with Traefik (bin/traefik) as the real Gateway controller, which
// accepts each HTTPRoute the hook writes (the pods are kwok's: no traffic is sent): a canary of
// three timed steps runs to promotion, its weights read from the real HTTPRoute at every step,
// the hook killed during one step and Metacontroller restarted during another; one that cannot
// start is aborted; one is promoted by hand; one is rolled back by editing the image; one is
// deleted mid-step. The subtests share one Metacontroller and run in order, each in a namespace
// of its own with a Gateway.
func TestCanary(t *testing.T) {
	requireCluster(t)
	requireMetacontroller(t)
	in := renderInstall(t, "e2e/testdata/gateway-api")
	hook := startHook(t, in)
	cc := in.compositeController(t, hook.url())
	cc["spec"].(map[string]any)["resyncPeriodSeconds"] = 5
	mc := startMetacontroller(t, cc, canaryWorkers)
	tr := requireTraefik(t, client.namespace(t, "canary-traefik"))
	defer func() {
		if refused := tr.refusals(); refused != "" {
			t.Errorf("Traefik was refused by RBAC; its ClusterRole lacks:\n%s", refused)
		}
	}()

	t.Run("three timed steps to promotion, the hook killed and Metacontroller restarted mid-step", func(t *testing.T) {
		ns := canaryNamespace(t, tr, "canary")
		const name, replicas = "shop", 4
		weights, pauses := []int32{10, 30, 60}, []int32{10, 10, 5}
		var steps []any
		for i, w := range weights {
			steps = append(steps, obj{"weight": w, "pauseSeconds": pauses[i]})
		}
		if _, err := client.create(webApp(ns, name, canarySpec(replicas, obj{"steps": steps}))); err != nil {
			t.Fatal(err)
		}
		st := waitStatus(t, ns, name, "Ready, no canary yet", 90*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Phase == webappv1.PhaseReady && st.AvailableReplicas == replicas
		})
		if c := conditionOf(st, webappv1.ConditionCanary); c == nil || c.Reason != webappv1.ReasonCanaryIdle || st.Canary != nil {
			t.Errorf("Canary condition %+v, status.canary %+v; want %s and no canary before the first new template", c, st.Canary, webappv1.ReasonCanaryIdle)
		}
		rec := recordCanary(t, hook, ns, name)

		tl := newTimeline(t)
		patchSpec(t, ns, name, obj{"image": canaryImage})
		gen := int64(field(mustGet(t, "example.com/v1", "WebApp", ns, name), "metadata", "generation").(float64))
		tl.mark(t, "spec.image %s -> %s; steps %v%%, pauses %vs, %d replicas", stableImage, canaryImage, weights, pauses, replicas)

		var (
			h                                   canaryHistory
			confirmed                           = map[int32]bool{}
			killedAt, promotingAt, pause2SeenAt time.Time
			hookBack, mcRestarted, columnSeen   bool
			last                                string
			killedPause, restartedPause         string
		)
		for deadline := time.Now().Add(150 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no promotion within 150 s; last: %s\n%s", last, canaryMessage(t, ns, name))
			}
			v := lookCanary(t, ns, name)
			c := v.st.Canary
			if v.st.ObservedGeneration != gen || c == nil {
				continue // the hook has not answered for the new template yet
			}
			if s := v.summary(name); s != last {
				tl.mark(t, "%s", s)
				last = s
			}
			if err := h.add(c); err != nil {
				t.Fatalf("%v (status.canary %s)", err, jsonString(c))
			}
			switch c.Phase {
			case webappv1.CanaryProgressing, webappv1.CanaryPromoting, webappv1.CanaryPromoted:
			default:
				t.Fatalf("canary phase %s; want Progressing, Promoting, Promoted only (status.canary %s)", c.Phase, jsonString(c))
			}
			// The stable Deployment keeps its count, and its template until the promotion:
			// the status is read after it, and the hook gives the stable the template only once
			// it has written Promoting.
			if got := replicasField(v.stable); got != replicas {
				t.Fatalf("stable Deployment replicas %d at %s; want %d throughout", got, last, replicas)
			}
			if img := imageOf(v.stable); c.Phase == webappv1.CanaryProgressing && img != stableImage {
				t.Fatalf("stable Deployment runs %s while the canary is at a step; want %s", img, stableImage)
			}
			if sw, cw, ok := splitWeights(v.route, name); ok && (sw+cw != 100 || !slices.Contains(append([]int32{0, 100}, weights...), cw)) {
				t.Fatalf("HTTPRoute weights %d/%d; want a step's weight (or 0 or 100) and a sum of 100", sw, cw)
			}

			paused := c.Phase == webappv1.CanaryProgressing && c.PauseStartTime != nil
			if paused {
				// A step's pause starts only once the route carries its weights, and the route
				// moves from them only after the status has moved to the next step: the route
				// was read before the status.
				w := weights[c.Step]
				if sw, cw, ok := splitWeights(v.route, name); !ok || sw != 100-w || cw != w {
					t.Fatalf("step %d paused with the HTTPRoute's backendRefs %s; want %s-stable %d, %s-canary %d", c.Step+1, backendsString(v.route), name, 100-w, name, w)
				}
				if c.Weight == nil || *c.Weight != w || c.Replicas != ceilShare(w, replicas) {
					t.Fatalf("step %d paused with status.canary weight %v, replicas %d; want %d and %d", c.Step+1, ptrString(c.Weight), c.Replicas, w, ceilShare(w, replicas))
				}
				// The canary Deployment is written before the status in each call, so it may
				// already have the next step's count (or, at the last step, the stable's).
				next := int32(replicas)
				if int(c.Step)+1 < len(weights) {
					next = ceilShare(weights[c.Step+1], replicas)
				}
				switch got := replicasField(v.canary); {
				case got == ceilShare(w, replicas) && availableField(v.canary) >= got:
					confirmed[c.Step] = true
				case got == next:
				default:
					t.Fatalf("step %d paused with the canary Deployment at %d replicas; want ceil(%d%% × %d) = %d", c.Step+1, got, w, replicas, ceilShare(w, replicas))
				}
			}

			// kubectl get webapps shows the weight: checked between two looks at the same pause.
			if paused && c.Step == 1 && !columnSeen {
				row := getWebApp(t, ns, name, false)
				after := webAppStatus(t, ns, name).Canary
				if after != nil && after.Step == 1 && after.Phase == webappv1.CanaryProgressing && timeString(after.PauseStartTime) == timeString(c.PauseStartTime) {
					columnSeen = true
					if row["CANARY"] != "30" || row["PHASE"] != "Progressing" {
						t.Errorf("kubectl get webapps = %v at step 2's pause; want CANARY 30, PHASE Progressing", row)
					}
				}
			}

			// The hook killed during step 1's pause, and back 6 s later (a resync's calls fail).
			if paused && c.Step == 0 && killedAt.IsZero() {
				hook.stop(syscall.SIGKILL)
				killedAt, killedPause = time.Now(), timeString(c.PauseStartTime)
				tl.mark(t, "the hook killed (SIGKILL) during step 1's pause")
			}
			if !killedAt.IsZero() && !hookBack && time.Since(killedAt) >= 6*time.Second {
				hook.restart(t)
				hookBack = true
				tl.mark(t, "the hook started again")
			}
			// Metacontroller restarted 3 s into step 2's pause, so that a pause started again
			// by the restart would show a later start than a restamp's second: the wake-up it
			// held is lost.
			if paused && c.Step == 1 && pause2SeenAt.IsZero() {
				pause2SeenAt = time.Now()
			}
			if paused && c.Step == 1 && !mcRestarted && time.Since(pause2SeenAt) >= 3*time.Second {
				restartedPause = timeString(c.PauseStartTime)
				mc.restart(t, canaryWorkers)
				mcRestarted = true
				tl.mark(t, "Metacontroller restarted (SIGTERM, started again) 3 s into step 2's pause")
			}
			if c.Phase == webappv1.CanaryPromoting && promotingAt.IsZero() {
				promotingAt = time.Now()
			}
			if c.Phase == webappv1.CanaryPromoted {
				break
			}
		}
		if len(h.restamped) > 0 {
			t.Logf("restamped a second later by a call with an older status: %v", h.restamped)
		}
		if !hookBack || !mcRestarted {
			t.Errorf("hook killed and back %v, Metacontroller restarted %v; want both done mid-step", hookBack, mcRestarted)
		}
		for i := range weights {
			if !confirmed[int32(i)] {
				t.Errorf("step %d: the canary Deployment was never seen at ceil(%d%% × %d) = %d available pods during its pause", i+1, weights[i], replicas, ceilShare(weights[i], replicas))
			}
		}
		if !columnSeen {
			t.Errorf("kubectl get webapps never read during step 2's pause")
		}
		// No pause was cut short, and none ran long: each step began, and the promotion, once
		// the last pause was over, within a few seconds of the wake-up resyncAfterSeconds asked
		// for, and within a resync period more after Metacontroller's restart, which loses the
		// wake-up it held. (The status's times are to the second.)
		for i := 1; i <= len(weights); i++ {
			pauseEnd := h.pauseStartTime(int32(i - 1)).Add(time.Duration(pauses[i-1]) * time.Second)
			what, began := fmt.Sprintf("step %d", i+1), h.stepStartTime(int32(i))
			if i == len(weights) {
				what, began = "the promotion", promotingAt
			}
			late := 3 * time.Second
			if i == 2 {
				late += 5 * time.Second // the resync period, after Metacontroller's restart
			}
			switch d := began.Sub(pauseEnd); {
			case d < 0:
				t.Errorf("%s began at %s, before step %d's pause ended at %s", what, began.Format(time.TimeOnly), i, pauseEnd.Format(time.TimeOnly))
			case d > late:
				t.Errorf("%s began %s after step %d's pause ended at %s; want it within %s; the hook's calls:\n%s", what, d.Round(100*time.Millisecond), i, pauseEnd.Format(time.TimeOnly), late,
					hookLog(hook, ns, name, pauseEnd.Add(-6*time.Second), began.Add(time.Second)))
			default:
				t.Logf("%s began %s after step %d's pause ended", what, d.Round(100*time.Millisecond), i)
			}
		}
		if got := timeString(ptrTime(h.pauseStartTime(0))); got != killedPause && !slices.Contains(h.restamped, "step 1's pause") {
			t.Errorf("step 1's pause started at %s; the hook was killed in the pause from %s: want it kept", got, killedPause)
		}
		if got := timeString(ptrTime(h.pauseStartTime(1))); got != restartedPause && !slices.Contains(h.restamped, "step 2's pause") {
			t.Errorf("step 2's pause started at %s; Metacontroller was restarted in the pause from %s: want it kept", got, restartedPause)
		}

		t.Run("promoted: the stable Deployment runs the new image, the canary's children are gone, the route is back", func(t *testing.T) {
			st := waitStatus(t, ns, name, "Ready after the promotion", 60*time.Second, func(st webappv1.WebAppStatus) bool {
				return st.Phase == webappv1.PhaseReady
			})
			c := st.Canary
			if c == nil || c.Phase != webappv1.CanaryPromoted || c.Revision != h.revision || c.Weight != nil || c.Replicas != 0 {
				t.Errorf("status.canary %s; want Promoted, revision %s, no weight, no replicas", jsonString(c), h.revision)
			}
			if cond := conditionOf(st, webappv1.ConditionCanary); cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != string(webappv1.CanaryPromoted) {
				t.Errorf("Canary condition %+v; want True, Promoted", cond)
			}
			checkRetired(t, ns, name)
			stable := mustGet(t, "apps/v1", "Deployment", ns, name)
			if imageOf(stable) != canaryImage || replicasField(stable) != replicas || field(stable, "status", "updatedReplicas") != float64(replicas) {
				t.Errorf("stable Deployment image %s, replicas %d, status %v; want %s on %d updated pods", imageOf(stable), replicasField(stable), field(stable, "status"), canaryImage, replicas)
			}
			if s := lookCanary(t, ns, name).summary(name); s != last {
				tl.mark(t, "%s", s)
			}
		})

		t.Run("every status written: one revision, steps forward, no pause restarted", func(t *testing.T) {
			var all canaryHistory
			for _, e := range rec.stop().webApp {
				var st webappv1.WebAppStatus
				if err := roundTrip(e.Object["status"], &st); err != nil {
					t.Fatal(err)
				}
				if st.ObservedGeneration != gen || st.Canary == nil {
					continue
				}
				if err := all.add(st.Canary); err != nil {
					t.Errorf("status written at %s: %v", e.At.Format(time.StampMilli), err)
				}
			}
			if len(all.restamped) > 0 {
				t.Logf("restamped a second later by a call with an older status: %v", all.restamped)
			}
			want := []webappv1.CanaryPhase{webappv1.CanaryProgressing, webappv1.CanaryPromoting, webappv1.CanaryPromoted}
			if !slices.Equal(all.phases, want) {
				t.Errorf("canary phases written %v; want %v", all.phases, want)
			}
			if all.step != int32(len(weights)-1) {
				t.Errorf("last step written %d; want %d", all.step+1, len(weights))
			}
		})

		t.Run("every HTTPRoute written: the steps' weights in order, then all to the canary, then back", func(t *testing.T) {
			forms := routeForms(rec.stop().route, name)
			want := []string{"shop", "90/10", "70/30", "40/60", "0/100", "shop"}
			// Before the canary's first pod is available, the route may already name both
			// Services, all the traffic to the stable one.
			if len(forms) > 1 && forms[1] == "100/0" {
				forms = slices.Delete(forms, 1, 2)
			}
			if !slices.Equal(forms, want) {
				t.Errorf("HTTPRoute backendRefs written %v; want %v (stable/canary weights); what was written:\n%s", forms, want, rec.stop().String(name))
			}
		})

		t.Run("idle after the promotion: no child rewritten", func(t *testing.T) {
			waitSettled(t, ns, name, replicas)
			mc.waitQuiet(t)
			before, writes, calls := versions(t, ns, name), mc.writes(), hookSyncs(hook, ns, name)
			time.Sleep(12 * time.Second) // two resyncs or more
			if after := versions(t, ns, name); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("children's resourceVersions %v -> %v while idle; want no rewrite", before, after)
			}
			if n := mc.writes() - writes; n != 0 {
				t.Errorf("Metacontroller sent %v writes while idle; want none", n)
			}
			if n := hookSyncs(hook, ns, name) - calls; n < 2 {
				t.Errorf("%d sync calls for %s/%s while idle; want the resyncs to reach the hook", n, ns, name)
			}
			tl.mark(t, "idle 12 s: children %v unchanged", before)
		})
	})

	t.Run("a canary that cannot start is aborted, the stable pods untouched", func(t *testing.T) {
		ns := canaryNamespace(t, tr, "canary-quota")
		const name, replicas = "shop", 2
		// The quota admits the stable pods and not one more: the canary's pod is refused.
		quota := obj{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": obj{"name": "pods", "namespace": ns}, "spec": obj{"hard": obj{"pods": fmt.Sprint(replicas)}}}
		if _, err := client.create(quota); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the quota's usage counted", 30*time.Second, func() (bool, error) {
			q, err := client.get("v1", "ResourceQuota", ns, "pods")
			return q != nil && field(q, "status", "used", "pods") != nil, err
		})
		spec := canarySpec(replicas, obj{"steps": []any{obj{"weight": 50, "pauseSeconds": 5}}, "maxFailedChecks": 2})
		if _, err := client.create(webApp(ns, name, spec)); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, ns, name, "Ready", 90*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Phase == webappv1.PhaseReady && st.AvailableReplicas == replicas
		})
		stable := takeStable(t, ns, name)
		rec := recordCanary(t, hook, ns, name)
		tl := newTimeline(t)
		patchSpec(t, ns, name, obj{"image": canaryImage})
		tl.mark(t, "spec.image %s -> %s; a quota of %d pods", stableImage, canaryImage, replicas)

		var last string
		st := waitStatus(t, ns, name, "the canary aborted", 90*time.Second, func(st webappv1.WebAppStatus) bool {
			v := lookCanary(t, ns, name)
			if v.st.Canary != nil {
				if s := v.summary(name); s != last {
					tl.mark(t, "%s", s)
					last = s
				}
			}
			return st.Canary != nil && st.Canary.Phase == webappv1.CanaryAborted
		})
		c := st.Canary
		reason, message := readyCondition(st)
		if st.Phase != webappv1.PhaseDegraded || reason != webappv1.ReasonCanaryAborted || !strings.Contains(message, "quota") {
			t.Errorf("phase %s, Ready %s %q; want Degraded, %s, saying the quota refused the canary's pod", st.Phase, reason, message, webappv1.ReasonCanaryAborted)
		}
		if c.FailedChecks != 2 || !strings.Contains(c.LastFailedCheck, "exceeded quota") {
			t.Errorf("status.canary %s; want 2 failed checks, the last naming the exceeded quota", jsonString(c))
		}
		if cond := conditionOf(st, webappv1.ConditionCanary); cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != string(webappv1.CanaryAborted) {
			t.Errorf("Canary condition %+v; want False, Aborted", cond)
		}
		waitFor(t, "the route back to "+name+", the canary at 0 replicas, its Services gone", 60*time.Second, func() (bool, error) {
			v := lookCanary(t, ns, name)
			svcs := services(t, ns, name)
			return isNormalRoute(v.route, name) && v.canary != nil && replicasField(v.canary) == 0 && slices.Equal(svcs, []string{name}), nil
		})
		// The weight is the observed route's: 0 while it still names the canary, then none.
		settled := waitStatus(t, ns, name, "no canary weight once the route is back", 30*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && st.Canary.Phase == webappv1.CanaryAborted && st.Canary.Weight == nil && st.Phase == webappv1.PhaseDegraded
		})
		if c := settled.Canary; c.FailedChecks != 2 || !strings.Contains(c.Message, "after 2 failed checks") {
			t.Errorf("status.canary once settled %s; want it to keep the 2 failed checks that aborted it", jsonString(c))
		}
		if s := lookCanary(t, ns, name).summary(name); s != last {
			tl.mark(t, "%s", s)
		}
		stable.untouched(t, ns, name)
		forms := routeForms(rec.stop().route, name)
		if want := []string{name, "100/0", name}; !slices.Equal(forms, want) {
			t.Errorf("HTTPRoute backendRefs written %v; want %v: the canary, without pods, never weighted; what was written:\n%s", forms, want, rec.stop().String(name))
		}
	})

	t.Run("a step without a pause waits to be promoted by hand, by a tenant with webapp-edit alone", func(t *testing.T) {
		ns := canaryNamespace(t, tr, "canary-hand")
		const name, replicas = "shop", 2
		if _, err := client.create(webApp(ns, name, canarySpec(replicas, obj{"steps": []any{obj{"weight": 50}}}))); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, ns, name, "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady))
		stopWebApp := client.record(t, "example.com/v1", "WebApp", ns, name)
		patchSpec(t, ns, name, obj{"image": canaryImage})
		st := waitStatus(t, ns, name, "the canary paused", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && st.Canary.Phase == webappv1.CanaryPaused
		})
		c := st.Canary
		v := lookCanary(t, ns, name)
		if sw, cw, ok := splitWeights(v.route, name); !ok || sw != 50 || cw != 50 || c.Weight == nil || *c.Weight != 50 || replicasField(v.canary) != 1 {
			t.Errorf("paused with the route %s, status weight %s, canary replicas %d; want 50/50 and 1", backendsString(v.route), ptrString(c.Weight), replicasField(v.canary))
		}
		if want := webappv1.AnnotationPromote + "=" + c.Revision; !strings.Contains(c.Message, want) {
			t.Errorf("message %q; want it to show %s", c.Message, want)
		}
		stableGeneration := field(v.stable, "metadata", "generation")

		// A promote annotation naming another revision does nothing, through calls that see it.
		other := "0000000000"
		if other == c.Revision {
			other = "1111111111"
		}
		kubectl(t, "annotate", "webapp", name, "-n", ns, webappv1.AnnotationPromote+"="+other, "--overwrite")
		calls := hookSyncs(hook, ns, name)
		waitFor(t, "three sync calls that see the annotation", 30*time.Second, func() (bool, error) {
			return hookSyncs(hook, ns, name) >= calls+3, nil
		})
		if st := webAppStatus(t, ns, name); st.Canary == nil || st.Canary.Phase != webappv1.CanaryPaused {
			t.Errorf("status.canary %s after promote=%s; want Paused still", jsonString(st.Canary), other)
		} else if want := webappv1.AnnotationPromote + "=" + other + ": names revision " + other + ", not the canary's"; !strings.Contains(strings.Join(st.Canary.IgnoredAnnotations, "\n"), want) {
			t.Errorf("status.canary.ignoredAnnotations %q after promote=%s; want it to say %q", st.Canary.IgnoredAnnotations, other, want)
		}
		if g := field(mustGet(t, "apps/v1", "Deployment", ns, name), "metadata", "generation"); g != stableGeneration {
			t.Errorf("stable Deployment generation %v -> %v after promote=%s; want it untouched", stableGeneration, g, other)
		}

		// dave holds webapp-edit alone in the namespace, and may promote.
		installPolicy(t)
		bind(t, ns, "dave", "ClusterRole", "webapp-edit")
		if out, err := kubectlAs("dave", "annotate", "webapp", name, "-n", ns, webappv1.AnnotationPromote+"="+c.Revision, "--overwrite"); err != nil {
			t.Fatalf("kubectl annotate as dave: %v\n%s", err, out)
		}
		st = waitStatus(t, ns, name, "promoted", 90*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Phase == webappv1.PhaseReady && st.Canary != nil && st.Canary.Phase == webappv1.CanaryPromoted
		})
		checkRetired(t, ns, name)
		if img := imageOf(mustGet(t, "apps/v1", "Deployment", ns, name)); img != canaryImage {
			t.Errorf("stable Deployment runs %s; want %s", img, canaryImage)
		}
		var h canaryHistory
		for _, e := range stopWebApp() {
			var s webappv1.WebAppStatus
			roundTrip(e.Object["status"], &s)
			if s.Canary != nil && s.Canary.Revision == c.Revision {
				if err := h.add(s.Canary); err != nil {
					t.Error(err)
				}
			}
		}
		if want := []webappv1.CanaryPhase{webappv1.CanaryProgressing, webappv1.CanaryPaused, webappv1.CanaryPromoting, webappv1.CanaryPromoted}; !slices.Equal(h.phases, want) {
			t.Errorf("canary phases written %v; want %v", h.phases, want)
		}
	})

	t.Run("the image set back mid-canary rolls it back, and no stable pod rolls", func(t *testing.T) {
		ns := canaryNamespace(t, tr, "canary-back")
		const name, replicas = "shop", 2
		if _, err := client.create(webApp(ns, name, canarySpec(replicas, obj{"steps": []any{obj{"weight": 50, "pauseSeconds": 120}}}))); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, ns, name, "Ready", 90*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Phase == webappv1.PhaseReady && st.AvailableReplicas == replicas
		})
		stable := takeStable(t, ns, name)
		patchSpec(t, ns, name, obj{"image": canaryImage})
		st := waitStatus(t, ns, name, "the canary's pause started", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && st.Canary.Phase == webappv1.CanaryProgressing && st.Canary.PauseStartTime != nil
		})
		revision := st.Canary.Revision
		rec := recordCanary(t, hook, ns, name)
		patchSpec(t, ns, name, obj{"image": stableImage})
		st = waitStatus(t, ns, name, "rolled back", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && st.Canary.Phase == webappv1.CanaryRolledBack
		})
		if st.Canary.Revision != revision {
			t.Errorf("rolled back revision %s; want the canary's, %s", st.Canary.Revision, revision)
		}
		waitFor(t, "the canary's children gone, the route back", 60*time.Second, func() (bool, error) {
			v := lookCanary(t, ns, name)
			return v.canary == nil && isNormalRoute(v.route, name) && slices.Equal(services(t, ns, name), []string{name}), nil
		})
		st = waitStatus(t, ns, name, "Ready", 30*time.Second, phaseIs(webappv1.PhaseReady))
		if st.Canary == nil || st.Canary.Phase != webappv1.CanaryRolledBack || st.Canary.Weight != nil {
			t.Errorf("status.canary %s; want RolledBack without weight", jsonString(st.Canary))
		}
		stable.untouched(t, ns, name)
		// The canary's weight goes to 0 before the route goes back to the Service shop alone.
		if forms, want := routeForms(rec.stop().route, name), []string{"50/50", "100/0", name}; !slices.Equal(forms, want) {
			t.Errorf("HTTPRoute backendRefs written %v; want %v; what was written:\n%s", forms, want, rec.stop().String(name))
		}
	})

	t.Run("a route its Gateway refuses holds the canary at its step, and no check fails", func(t *testing.T) {
		// A state Traefik would not produce on demand: the test plays a Gateway controller that
		// refuses every route of the namespace.
		ns := client.namespace(t, "canary-refused")
		if _, err := client.create(gatewayObject(ns, "public")); err != nil {
			t.Fatal(err)
		}
		playGateway(t, ns, "False/NotAllowedByListeners: No listener admits this route")
		const name, replicas = "shop", 2
		if _, err := client.create(webApp(ns, name, canarySpec(replicas, obj{"steps": []any{obj{"weight": 50, "pauseSeconds": 5}}}))); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, ns, name, "Ready with the route refused", 90*time.Second, func(st webappv1.WebAppStatus) bool {
			got, _ := routedCondition(st)
			return st.Phase == webappv1.PhaseReady && st.AvailableReplicas == replicas && got == "False/NotAllowedByListeners"
		})
		stable := takeStable(t, ns, name)
		patchSpec(t, ns, name, obj{"image": canaryImage})
		waitStatus(t, ns, name, "the canary waiting for the Gateway", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && st.Canary.Phase == webappv1.CanaryProgressing && strings.Contains(st.Canary.Message, "waiting for the HTTPRoute to send 50%")
		})
		// Longer than the step's pause: the step must not have started.
		time.Sleep(12 * time.Second)
		st := webAppStatus(t, ns, name)
		c := st.Canary
		if c == nil || c.Phase != webappv1.CanaryProgressing || c.Step != 0 || c.PauseStartTime != nil || c.FailedChecks != 0 ||
			!strings.Contains(c.Message, "for its Gateways to accept it") {
			t.Errorf("status.canary %s 12 s on; want step 1 held, waiting for its Gateways, no pause started, no failed check", jsonString(c))
		}
		if got, msg := routedCondition(st); got != "False/NotAllowedByListeners" {
			t.Errorf("Routed %s %q; want the Gateway's refusal", got, msg)
		}
		stable.untouched(t, ns, name)
	})

	t.Run("deleted mid-step: both Deployments, the three Services and the route go, then the WebApp", func(t *testing.T) {
		ns := canaryNamespace(t, tr, "canary-delete")
		const name, replicas = "shop", 2
		if _, err := client.create(webApp(ns, name, canarySpec(replicas, obj{"steps": []any{obj{"weight": 50, "pauseSeconds": 120}}}))); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, ns, name, "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady))
		patchSpec(t, ns, name, obj{"image": canaryImage})
		waitStatus(t, ns, name, "the canary's pause started", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			return st.Canary != nil && st.Canary.Phase == webappv1.CanaryProgressing && st.Canary.PauseStartTime != nil
		})
		children := []struct{ apiVersion, kind, name string }{
			{"apps/v1", "Deployment", name}, {"apps/v1", "Deployment", name + webappv1.CanarySuffix},
			{"v1", "Service", name}, {"v1", "Service", name + webappv1.CanarySuffix}, {"v1", "Service", name + webappv1.StableSuffix},
			{routeAPI, "HTTPRoute", name},
		}
		var stops []func() []watchEvent
		for _, c := range children {
			mustGet(t, c.apiVersion, c.kind, ns, c.name)
			stops = append(stops, client.record(t, c.apiVersion, c.kind, ns, c.name))
		}
		p, _ := client.path("example.com/v1", "WebApp", ns, name)
		if _, err := client.do("DELETE", p, "", nil); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the WebApp and its children gone", 90*time.Second, func() (bool, error) {
			wa, err := client.get("example.com/v1", "WebApp", ns, name)
			if err != nil || wa != nil {
				return false, err
			}
			for _, c := range children {
				if o, err := client.get(c.apiVersion, c.kind, ns, c.name); err != nil || o != nil {
					return false, err
				}
			}
			return true, nil
		})
		deleted := map[string]time.Time{}
		for i, stop := range stops {
			for _, e := range stop() {
				if e.Type == "DELETED" {
					deleted[children[i].kind+" "+children[i].name] = e.At
				}
			}
		}
		if len(deleted) != len(children) {
			t.Fatalf("deletions seen %v; want all %d children", deleted, len(children))
		}
		firstDeployment := deleted["Deployment "+name]
		if at := deleted["Deployment "+name+webappv1.CanarySuffix]; at.Before(firstDeployment) {
			firstDeployment = at
		}
		for what, at := range deleted {
			if !strings.HasPrefix(what, "Deployment ") && !at.Before(firstDeployment) {
				t.Errorf("%s deleted at %s, a Deployment at %s; want the Services and the route gone before either Deployment", what, at.Format(time.StampMilli), firstDeployment.Format(time.StampMilli))
			}
		}
	})
}

// canarySpec is a routed WebApp's spec, with replicas and spec.rollout.canary c.
func canarySpec(replicas int, c obj) obj {
	return obj{"image": stableImage, "replicas": replicas, "port": 8080,
		"route":   obj{"hostnames": []any{"shop.example.com"}, "parentRefs": []any{obj{"name": "public"}}},
		"rollout": obj{"canary": c}}
}

// canaryNamespace makes a namespace for t with a Gateway public of Traefik's, which accepts its
// HTTPRoutes.
func canaryNamespace(t *testing.T, tr *traefik, prefix string) string {
	t.Helper()
	ns := client.namespace(t, prefix)
	tr.gateway(t, ns, "public")
	return ns
}

// playGateway plays the Gateway controller for every HTTPRoute of ns until t ends, for the states
// a real Gateway does not produce on demand (Traefik, requireTraefik, is TestCanary's): whenever a
// route's generation is not the one its status reports on, it writes Accepted and ResolvedRefs
// (as "Status/Reason: message") and ResolvedRefs True for that generation (routeParents), through
// the status subresource, as a Gateway controller does a moment after each change of the route.
func playGateway(t *testing.T, ns, accepted string) {
	t.Helper()
	list, err := client.path(routeAPI, "HTTPRoute", ns, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var unexpected atomic.Value
	var wg gosync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			b, err := client.do("GET", list, "", nil)
			var routes struct{ Items []obj }
			if err == nil {
				err = json.Unmarshal(b, &routes)
			}
			if err != nil {
				unexpected.Store(err.Error())
			}
			for _, r := range routes.Items {
				if routeReported(r) {
					continue
				}
				r["apiVersion"], r["kind"] = routeAPI, "HTTPRoute"
				r["status"] = obj{"parents": routeParents(r, accepted, "True/ResolvedRefs: Resolved all the backends")}
				_, _, _, name := identity(r)
				_, err := client.do("PUT", list+"/"+name+"/status", "application/json", r)
				if e, ok := err.(*apiError); err != nil && (!ok || e.Code != http.StatusConflict && e.Code != http.StatusNotFound) {
					unexpected.Store(err.Error())
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		if e := unexpected.Load(); e != nil {
			t.Logf("playing the Gateway controller in %s, the last error: %v", ns, e)
		}
	})
}

// routeReported reports whether a route's status has an entry for each of its parentRefs whose
// conditions are all of its current generation.
func routeReported(route obj) bool {
	generation := field(route, "metadata", "generation")
	refs, _ := field(route, "spec", "parentRefs").([]any)
	parents, _ := field(route, "status", "parents").([]any)
	if len(parents) != len(refs) || len(refs) == 0 {
		return false
	}
	for _, p := range parents {
		conds, _ := field(p, "conditions").([]any)
		if len(conds) == 0 {
			return false
		}
		for _, c := range conds {
			if field(c, "observedGeneration") != generation {
				return false
			}
		}
	}
	return true
}

// restart stops Metacontroller (SIGTERM) and runs it again with the same flags and metrics
// address, as a rollout of its Deployment would: what it held in memory only, the wake-ups that
// resyncAfterSeconds asked for among them, is lost.
func (m *metacontroller) restart(t *testing.T, workers int) {
	t.Helper()
	m.stop(syscall.SIGTERM)
	d, err := startDaemon(filepath.Dir(m.log), "metacontroller", nil, requireMetacontroller(t),
		metacontrollerFlags(filepath.Join(cluster.dir, "kubeconfig"), m.metricsAddr, workers)...)
	if err != nil {
		t.Fatal(err)
	}
	m.daemon = d
	if err := waitHTTP(context.Background(), "http://"+m.metricsAddr+"/metrics", nil, 30*time.Second); err != nil {
		t.Fatalf("metacontroller after a restart: %v\n%s", err, tailFile(m.log, 3000))
	}
}

// hookSyncs counts the sync calls the hook has logged for the WebApp ns/name, over its restarts.
func hookSyncs(h *hookProcess, ns, name string) int {
	b, _ := os.ReadFile(h.log)
	n := 0
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.Contains(line, `"hook":"sync"`) && strings.Contains(line, `"parent":"`+ns+"/"+name+`"`) {
			n++
		}
	}
	return n
}

// canaryRecording is every write to a canary's HTTPRoute, canary Deployment and WebApp, as
// watches saw them.
type canaryRecording struct {
	route, canary, webApp []watchEvent
}

// canaryRecorder holds the watches of recordCanary.
type canaryRecorder struct {
	once  gosync.Once
	stops []func() []watchEvent
	got   canaryRecording
}

// recordCanary watches the WebApp name's HTTPRoute, canary Deployment and WebApp from now on.
// When the test fails, what they saw and h's calls for the WebApp are logged.
func recordCanary(t *testing.T, h *hookProcess, ns, name string) *canaryRecorder {
	t.Helper()
	rec := &canaryRecorder{stops: []func() []watchEvent{
		client.record(t, routeAPI, "HTTPRoute", ns, name),
		client.record(t, "apps/v1", "Deployment", ns, name+webappv1.CanarySuffix),
		client.record(t, "example.com/v1", "WebApp", ns, name),
	}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("what was written, and the hook's calls:\n%s%s", rec.stop().String(name), hookLog(h, ns, name, time.Time{}, time.Now()))
		}
	})
	return rec
}

// stop ends the watches the first time it is called, and returns what they saw every time.
func (r *canaryRecorder) stop() canaryRecording {
	r.once.Do(func() {
		r.got = canaryRecording{route: r.stops[0](), canary: r.stops[1](), webApp: r.stops[2]()}
	})
	return r.got
}

// String lists the recorded writes in the order they arrived, one a line, each with what the
// canary's decision reads of it.
func (r canaryRecording) String(name string) string {
	type line struct {
		at   time.Time
		text string
	}
	var lines []line
	for _, e := range r.route {
		lines = append(lines, line{e.At, fmt.Sprintf("HTTPRoute   %-8s rv %v gen %v  %s  reported %v", e.Type, field(e.Object, "metadata", "resourceVersion"),
			field(e.Object, "metadata", "generation"), backendsString(e.Object), routeReported(e.Object))})
	}
	for _, e := range r.canary {
		lines = append(lines, line{e.At, fmt.Sprintf("Deployment  %-8s rv %v gen %v observed %v  replicas %v  status replicas %v updated %v available %v", e.Type,
			field(e.Object, "metadata", "resourceVersion"), field(e.Object, "metadata", "generation"), field(e.Object, "status", "observedGeneration"),
			field(e.Object, "spec", "replicas"), field(e.Object, "status", "replicas"), field(e.Object, "status", "updatedReplicas"), field(e.Object, "status", "availableReplicas"))})
	}
	for _, e := range r.webApp {
		var st webappv1.WebAppStatus
		roundTrip(e.Object["status"], &st)
		c := "no canary"
		if st.Canary != nil {
			c = fmt.Sprintf("%s step %d weight %s replicas %d failed %d pause %s", st.Canary.Phase, st.Canary.Step+1, ptrString(st.Canary.Weight), st.Canary.Replicas, st.Canary.FailedChecks, timeString(st.Canary.PauseStartTime))
		}
		lines = append(lines, line{e.At, fmt.Sprintf("WebApp      %-8s rv %v gen %v observed %d  %s  %s", e.Type, field(e.Object, "metadata", "resourceVersion"),
			field(e.Object, "metadata", "generation"), st.ObservedGeneration, st.Phase, c)})
	}
	slices.SortStableFunc(lines, func(a, b line) int { return a.at.Compare(b.at) })
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "  %s  %s\n", l.at.Format("15:04:05.000"), l.text)
	}
	return b.String()
}

// hookLog lists the calls the hook logged for the WebApp ns/name between from and to, one a line.
func hookLog(h *hookProcess, ns, name string, from, to time.Time) string {
	b, _ := os.ReadFile(h.log)
	var out strings.Builder
	for line := range strings.SplitSeq(string(b), "\n") {
		var l struct {
			Time                time.Time
			Hook, Parent, Phase string
			Cached              bool
			NotModified         bool `json:"not_modified"`
		}
		if json.Unmarshal([]byte(line), &l) != nil || l.Parent != ns+"/"+name || l.Time.Before(from) || l.Time.After(to) {
			continue
		}
		fmt.Fprintf(&out, "  %s  %-8s %-11s cached %-5v not modified %v\n", l.Time.Format("15:04:05.000"), l.Hook, l.Phase, l.Cached, l.NotModified)
	}
	return out.String()
}

// canaryView is one look at a canary's objects: the HTTPRoute, both Deployments, and the WebApp
// last, so that what the status says was already true of the route when it was read.
type canaryView struct {
	route, stable, canary obj // nil when absent
	st                    webappv1.WebAppStatus
}

// lookCanary reads the WebApp name's route, Deployments and status, in that order.
func lookCanary(t *testing.T, ns, name string) canaryView {
	t.Helper()
	var v canaryView
	for _, o := range []struct {
		into             *obj
		apiVersion, kind string
		name             string
	}{
		{&v.route, routeAPI, "HTTPRoute", name},
		{&v.stable, "apps/v1", "Deployment", name},
		{&v.canary, "apps/v1", "Deployment", name + webappv1.CanarySuffix},
	} {
		got, err := client.get(o.apiVersion, o.kind, ns, o.name)
		if err != nil {
			t.Fatal(err)
		}
		*o.into = got
	}
	v.st = webAppStatus(t, ns, name)
	return v
}

// summary is the view as one line of a timeline: the canary's phase, step (from 1), the weight
// status.canary reports, the HTTPRoute's stable/canary weights and whether its Gateway accepted
// its current generation, each Deployment's replicas and available pods, and the WebApp's phase.
func (v canaryView) summary(name string) string {
	c := v.st.Canary
	var b strings.Builder
	if c != nil {
		fmt.Fprintf(&b, "%-11s step %d  weight %-3s", c.Phase, c.Step+1, ptrString(c.Weight))
	}
	route := "none"
	if sw, cw, ok := splitWeights(v.route, name); ok {
		route = fmt.Sprintf("%d/%d", sw, cw)
	} else if v.route != nil {
		route = backendsString(v.route)
	}
	accepted := "pending"
	if v.route != nil && routeReported(v.route) {
		accepted = "accepted"
	}
	fmt.Fprintf(&b, "  route %-5s %-8s  replicas %s/%s  available %s/%s  WebApp %s",
		route, accepted, countString(v.stable, "spec", "replicas"), countString(v.canary, "spec", "replicas"),
		countString(v.stable, "status", "availableReplicas"), countString(v.canary, "status", "availableReplicas"), v.st.Phase)
	if c != nil && c.PauseStartTime != nil && c.Phase == webappv1.CanaryProgressing {
		fmt.Fprintf(&b, "  paused since %s", c.PauseStartTime.UTC().Format(time.TimeOnly))
	}
	return b.String()
}

// countString is a count of a Deployment as a timeline shows it: "-" when there is none.
func countString(d obj, path ...any) string {
	if d == nil {
		return "-"
	}
	n, _ := field(d, path...).(float64)
	return fmt.Sprint(n)
}

// canaryHistory follows the canary statuses of one WebApp, in the order they were written or
// seen, and checks them as they come (add).
type canaryHistory struct {
	revision   string
	step       int32
	phases     []webappv1.CanaryPhase // each phase once, in order
	stepStart  map[int32]string       // by step
	pauseStart map[int32]string
	restamped  []string // the starts stamped again, a second later
}

// add checks c against the statuses before it: one revision, a step that never goes back, and a
// step's start and pause start that never change once set, but for one restamp a second later
// (restamped says which): Metacontroller may call the hook with a WebApp older than the status
// the last answer wrote, and write the answer over it, so that the step or pause just started is
// started again, stamped with the time of that call (docs/canary.md, "An older status"). A pause
// is never lost while its step holds it.
func (h *canaryHistory) add(c *webappv1.CanaryStatus) error {
	if h.stepStart == nil {
		h.revision, h.step, h.stepStart, h.pauseStart = c.Revision, c.Step, map[int32]string{}, map[int32]string{}
	}
	if c.Revision != h.revision {
		return fmt.Errorf("revision %s after %s; want one canary", c.Revision, h.revision)
	}
	if c.Step < h.step {
		return fmt.Errorf("step %d after step %d; want the steps never to go back", c.Step+1, h.step+1)
	}
	h.step = c.Step
	if n := len(h.phases); n == 0 || h.phases[n-1] != c.Phase {
		h.phases = append(h.phases, c.Phase)
	}
	if err := h.stamp(h.stepStart, fmt.Sprintf("step %d", c.Step+1), c.Step, c.StepStartTime); err != nil {
		return err
	}
	if c.PauseStartTime == nil {
		if p, had := h.pauseStart[c.Step]; had && c.Phase == webappv1.CanaryProgressing {
			return fmt.Errorf("step %d's pause from %s lost", c.Step+1, p)
		}
		return nil
	}
	return h.stamp(h.pauseStart, fmt.Sprintf("step %d's pause", c.Step+1), c.Step, c.PauseStartTime)
}

// stamp records at as the start of what, or checks it against the one recorded: the same, or,
// once, up to 2 s later (a call with an older status restamps it, docs/canary.md says why). A
// pause lost to a restart would start again as late as the restart, 3 s or more into it.
func (h *canaryHistory) stamp(starts map[int32]string, what string, step int32, at *metav1.Time) error {
	got := timeString(at)
	was, ok := starts[step]
	switch {
	case !ok || was == got:
	case restampedBy(was, got) > 0 && restampedBy(was, got) <= 2*time.Second && !slices.Contains(h.restamped, what):
		h.restamped = append(h.restamped, what)
	default:
		return fmt.Errorf("%s started at %s, then at %s; want it started once", what, was, got)
	}
	starts[step] = got
	return nil
}

// stepStartTime and pauseStartTime are when step began and its pause started, as recorded.
func (h *canaryHistory) stepStartTime(step int32) time.Time  { return parseTime(h.stepStart[step]) }
func (h *canaryHistory) pauseStartTime(step int32) time.Time { return parseTime(h.pauseStart[step]) }

// restampedBy is how much later got is than was.
func restampedBy(was, got string) time.Duration { return parseTime(got).Sub(parseTime(was)) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return t
}

func timeString(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func ptrTime(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t}
}

func ptrString(p *int32) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// backendRef is one of the backendRefs of a route's weighted rule (its last: a canary's header
// route goes before it), the Gateway API's default weight (1) filled in.
type backendRef struct {
	name   string
	weight int32
}

func routeBackends(route obj) []backendRef {
	rules, _ := field(route, "spec", "rules").([]any)
	if len(rules) == 0 {
		return nil
	}
	refs, _ := field(rules[len(rules)-1], "backendRefs").([]any) // the weighted rule, behind a header route's
	var out []backendRef
	for _, r := range refs {
		w := int32(1)
		if f, ok := field(r, "weight").(float64); ok {
			w = int32(f)
		}
		name, _ := field(r, "name").(string)
		out = append(out, backendRef{name, w})
	}
	return out
}

// splitWeights are the weights of a route that splits the traffic between <name>-stable and
// <name>-canary, in that order; ok is false for any other route.
func splitWeights(route obj, name string) (stable, canary int32, ok bool) {
	b := routeBackends(route)
	if len(b) != 2 || b[0].name != name+webappv1.StableSuffix || b[1].name != name+webappv1.CanarySuffix {
		return 0, 0, false
	}
	return b[0].weight, b[1].weight, true
}

// isNormalRoute reports whether the route sends everything to the Service name, as without a canary.
func isNormalRoute(route obj, name string) bool {
	b := routeBackends(route)
	return len(b) == 1 && b[0].name == name
}

func backendsString(route obj) string {
	var parts []string
	for _, b := range routeBackends(route) {
		parts = append(parts, fmt.Sprintf("%s=%d", b.name, b.weight))
	}
	return strings.Join(parts, ",")
}

// routeForms is the sequence of forms of a route's backendRefs in its watch events, each once in
// a row: "stable/canary" weights when split, else the backends (the Service name alone normally).
func routeForms(events []watchEvent, name string) []string {
	var forms []string
	for _, e := range events {
		if e.Type == "DELETED" {
			continue
		}
		f := backendsString(e.Object)
		if sw, cw, ok := splitWeights(e.Object, name); ok {
			f = fmt.Sprintf("%d/%d", sw, cw)
		} else if isNormalRoute(e.Object, name) {
			f = name
		}
		if n := len(forms); n == 0 || forms[n-1] != f {
			forms = append(forms, f)
		}
	}
	return forms
}

// ceilShare is the canary's replicas for weight w of n stable ones: ceil(w × n / 100), at least 1.
func ceilShare(w int32, n int) int32 { return max(1, (w*int32(n)+99)/100) }

func replicasField(d obj) int32 {
	f, _ := field(d, "spec", "replicas").(float64)
	return int32(f)
}

func availableField(d obj) int32 {
	f, _ := field(d, "status", "availableReplicas").(float64)
	return int32(f)
}

func imageOf(d obj) string {
	s, _ := field(d, "spec", "template", "spec", "containers", 0, "image").(string)
	return s
}

// conditionOf is the WebApp's condition of type typ, nil when it has none.
func conditionOf(st webappv1.WebAppStatus, typ string) *metav1.Condition {
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			return &st.Conditions[i]
		}
	}
	return nil
}

// canaryMessage is the WebApp's status.canary, for a failure's message.
func canaryMessage(t *testing.T, ns, name string) string {
	return "status.canary " + jsonString(webAppStatus(t, ns, name).Canary)
}

// services lists, sorted, the names of the Services of the WebApp name and its canary that exist.
func services(t *testing.T, ns, name string) []string {
	t.Helper()
	var out []string
	for _, n := range []string{name, name + webappv1.CanarySuffix, name + webappv1.StableSuffix} {
		s, err := client.get("v1", "Service", ns, n)
		if err != nil {
			t.Fatal(err)
		}
		if s != nil {
			out = append(out, n)
		}
	}
	return out
}

// checkRetired checks that a canary is gone: no canary Deployment, no Services but name, which
// selects the stable pods only again, and the route to it alone.
func checkRetired(t *testing.T, ns, name string) {
	t.Helper()
	waitFor(t, "the canary's children gone", 30*time.Second, func() (bool, error) {
		v := lookCanary(t, ns, name)
		return v.canary == nil && isNormalRoute(v.route, name) && slices.Equal(services(t, ns, name), []string{name}), nil
	})
	svc := mustGet(t, "v1", "Service", ns, name)
	if field(svc, "spec", "selector", webappv1.LabelName) == nil {
		t.Errorf("Service %s selects %v; want the stable pods only again (%s)", name, field(svc, "spec", "selector"), webappv1.LabelName)
	}
}

// stablePods lists, sorted, the names of the stable Deployment's pods.
// stableState is what a canary must leave as it is of the stable Deployment: its generation, its
// pod template and its pods.
type stableState struct {
	generation any
	template   string
	pods       []string
}

// takeStable records the stable Deployment of the WebApp name as it is now.
func takeStable(t *testing.T, ns, name string) stableState {
	t.Helper()
	d := mustGet(t, "apps/v1", "Deployment", ns, name)
	return stableState{field(d, "metadata", "generation"), jsonString(field(d, "spec", "template")), stablePods(t, ns, name)}
}

// untouched fails the test unless the stable Deployment is as takeStable recorded it: the same
// generation and template (no roll), and the same pods.
func (s stableState) untouched(t *testing.T, ns, name string) {
	t.Helper()
	now := takeStable(t, ns, name)
	if now.generation != s.generation || now.template != s.template {
		t.Errorf("stable Deployment generation %v -> %v, template changed %v; want it untouched", s.generation, now.generation, now.template != s.template)
	}
	if !slices.Equal(now.pods, s.pods) {
		t.Errorf("stable pods %v -> %v; want the same pods", s.pods, now.pods)
	}
}

func stablePods(t *testing.T, ns, name string) []string {
	t.Helper()
	p, _ := client.path("v1", "Pod", ns, "")
	b, err := client.do("GET", p+"?labelSelector=app.kubernetes.io/instance%3D"+name+",app.kubernetes.io/name%3Dwebapp", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Items []obj }
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range list.Items {
		_, _, _, n := identity(p)
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// waitSettled waits until the Deployment name's rollout is complete and its controller done
// writing its status, so that only a rewrite can move its resourceVersion.
func waitSettled(t *testing.T, ns, name string, replicas int) {
	t.Helper()
	waitFor(t, "the Deployment's rollout settled", 60*time.Second, func() (bool, error) {
		d := mustGet(t, "apps/v1", "Deployment", ns, name)
		want := float64(replicas)
		reason := ""
		conds, _ := field(d, "status", "conditions").([]any)
		for _, c := range conds {
			if field(c, "type") == "Progressing" {
				reason, _ = field(c, "reason").(string)
			}
		}
		return field(d, "status", "observedGeneration") == field(d, "metadata", "generation") &&
			field(d, "status", "replicas") == want && field(d, "status", "updatedReplicas") == want &&
			field(d, "status", "availableReplicas") == want && reason == "NewReplicaSetAvailable", nil
	})
}

//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	gosync "sync"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// TestRealPods runs WebApps of the test app (hack/node/testapp) on the real node, under the real
// Metacontroller with the pod-diagnosis component: the pods the hook's templates make, started by
// a real kubelet, containerd and runc. Each subtest makes a namespace and WebApp of its own, so that
// one runs alone: go test -tags e2e -run 'TestRealPods$/^ready$' ./e2e/
func TestRealPods(t *testing.T) {
	n := requireNode(t)
	realInstall(t, "e2e/testdata/pod-diagnosis")

	t.Run("ready", func(t *testing.T) { realReady(t, n) })
	t.Run("readiness lost", func(t *testing.T) { realReadinessLost(t, n) })
	t.Run("rollout maxUnavailable 0", func(t *testing.T) { realRollout(t, n) })
	t.Run("restricted", func(t *testing.T) { realRestricted(t, n) })
	t.Run("root image refused", func(t *testing.T) { realRootRefused(t, n, true) })
	t.Run("crash and liveness", func(t *testing.T) { realCrash(t, n) })
	t.Run("missing image", func(t *testing.T) { realMissingImage(t, n) })
	t.Run("private image", func(t *testing.T) { realPrivateImage(t, n) })
	t.Run("config rolls", func(t *testing.T) { realConfig(t, n) })
	t.Run("shutdown delay", func(t *testing.T) { realShutdownDelay(t, n) })
	t.Run("ordered teardown", func(t *testing.T) { realTeardown(t, n) })
}

// TestRealPodsWithoutDiagnosis runs the root image under runAsNonRoot with the plain install: no
// pod diagnosis, so the WebApp learns of it from the Deployment's progress deadline.
func TestRealPodsWithoutDiagnosis(t *testing.T) {
	n := requireNode(t)
	realInstall(t, "metacontroller")
	t.Run("root image refused", func(t *testing.T) { realRootRefused(t, n, false) })
}

// fastProbe is a readiness probe of the test app that the kubelet runs every second.
func fastProbe() obj {
	return obj{"httpGet": obj{"path": "/ready", "port": 8080}, "periodSeconds": 1, "failureThreshold": 1}
}

// generationOf is the WebApp's metadata.generation.
func generationOf(t *testing.T, ns, name string) int64 {
	g, _ := field(mustGet(t, "example.com/v1", "WebApp", ns, name), "metadata", "generation").(float64)
	return int64(g)
}

// statusNow is the WebApp's status, and whether it is of its current generation.
func statusNow(t *testing.T, ns, name string) (webappv1.WebAppStatus, bool) {
	wa := mustGet(t, "example.com/v1", "WebApp", ns, name)
	var st webappv1.WebAppStatus
	roundTrip(wa["status"], &st)
	g, _ := field(wa, "metadata", "generation").(float64)
	return st, st.ObservedGeneration == int64(g)
}

// httpGet GETs url with a short timeout and returns the body.
func httpGet(url string) (string, error) {
	hc := &http.Client{Timeout: 3 * time.Second}
	resp, err := hc.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return string(b), fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return string(b), nil
}

// waitReadyTimeline creates a WebApp (unless it exists) and marks on tl when its pods are first
// scheduled, all Running, all Ready, and when its status is Ready, and returns the Ready pods.
func waitReadyTimeline(t *testing.T, tl *timeline, ns, name string, replicas int, timeout time.Duration) map[string]string {
	t.Helper()
	var scheduled, running, ready bool
	var pods map[string]string
	waitFor(t, fmt.Sprintf("%s/%s: %d pods Ready and the WebApp Ready", ns, name, replicas), timeout, func() (bool, error) {
		ps := podsNow(ns, name)
		var nScheduled, nRunning int
		for _, p := range ps {
			if field(p, "metadata", "deletionTimestamp") != nil {
				continue
			}
			if field(p, "spec", "nodeName") != nil {
				nScheduled++
			}
			if field(p, "status", "phase") == "Running" {
				nRunning++
			}
		}
		pods = readyPods(t, ns, name)
		if !scheduled && nScheduled >= replicas {
			scheduled = true
			tl.mark(t, "%d pods scheduled on %v", nScheduled, field(ps[0], "spec", "nodeName"))
		}
		if !running && nRunning >= replicas {
			running = true
			tl.mark(t, "%d pods Running", nRunning)
		}
		if !ready && len(pods) >= replicas {
			ready = true
			tl.mark(t, "%d pods Ready (readiness probe)", len(pods))
		}
		st, current := statusNow(t, ns, name)
		if current && st.Phase == webappv1.PhaseReady && len(pods) == replicas {
			tl.mark(t, "WebApp status Ready (%d/%d ready)", st.ReadyReplicas, replicas)
			return true, nil
		}
		return false, nil
	})
	return pods
}

// realReady: pods Running and Ready from the real readiness probe, status Ready, the Service's
// EndpointSlice listing the pods' addresses, and a GET to each pod answering.
func realReady(t *testing.T, n *realNode) {
	ns := client.namespace(t, "real-ready")
	tl := newTimeline(t)
	// A start of 2 s before the app listens: the pods are Running, not Ready, until the probe
	// gets an answer.
	if _, err := client.create(realWebApp(ns, "hello", obj{"replicas": 2, "env": []any{obj{"name": "TESTAPP_START_DELAY", "value": "2s"}}})); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "WebApp created (image %s, healthCheck /ready, app listening after 2s)", n.image("testapp:1"))
	pods := waitReadyTimeline(t, tl, ns, "hello", 2, 150*time.Second)

	st := webAppStatus(t, ns, "hello")
	if !st.Ready || st.ReadyReplicas != 2 || st.AvailableReplicas != 2 {
		t.Errorf("status %+v; want ready, 2 ready and available", st)
	}
	var ips []string
	for _, p := range podsNow(ns, "hello") {
		name := field(p, "metadata", "name").(string)
		if field(p, "spec", "nodeName") != realNodeName {
			t.Errorf("pod %s on %v; want %s", name, field(p, "spec", "nodeName"), realNodeName)
		}
		if field(p, "status", "containerStatuses", 0, "ready") != true || field(p, "status", "containerStatuses", 0, "state", "running") == nil {
			t.Errorf("pod %s container status %v; want running and ready", name, field(p, "status", "containerStatuses", 0))
		}
		ip, _ := field(p, "status", "podIP").(string)
		if !strings.HasPrefix(ip, strings.TrimSuffix(n.subnet, "0/24")) {
			t.Errorf("pod %s IP %q; want one of the bridge's %s", name, ip, n.subnet)
		}
		// The pod's Ready condition came after its container started: the probe waited for the app.
		started, _ := time.Parse(time.RFC3339, fmt.Sprint(field(p, "status", "containerStatuses", 0, "state", "running", "startedAt")))
		var readyAt time.Time
		conds, _ := field(p, "status", "conditions").([]any)
		for _, c := range conds {
			if field(c, "type") == "Ready" {
				readyAt, _ = time.Parse(time.RFC3339, fmt.Sprint(field(c, "lastTransitionTime")))
			}
		}
		if d := readyAt.Sub(started); d < time.Second {
			t.Errorf("pod %s Ready %s after its container started; want the 2 s start delay or more", name, d)
		}
		ips = append(ips, ip)
	}
	sort.Strings(ips)

	var sliced []string
	waitFor(t, "the EndpointSlice to list both pods, ready", 30*time.Second, func() (bool, error) {
		sliced = endpointAddresses(t, ns, "hello", true)
		return slices.Equal(sliced, ips), nil
	})
	tl.mark(t, "EndpointSlice lists %v", sliced)
	for name, ip := range pods {
		body, err := httpGet(podURL(ip, "/"))
		if err != nil {
			t.Errorf("GET pod %s: %v", name, err)
			continue
		}
		if want := "testapp v1 on " + name; strings.TrimSpace(body) != want {
			t.Errorf("GET pod %s = %q; want %q", name, body, want)
		}
	}
	tl.mark(t, "GET / answered by each pod on its own address and port 8080")
}

// realReadinessLost: a pod whose readiness check starts failing (POST /ready/fail to the app)
// leaves the EndpointSlice's ready addresses and the WebApp's ready count, keeps running, and
// comes back when it answers again.
func realReadinessLost(t *testing.T, n *realNode) {
	ns := client.namespace(t, "real-unready")
	tl := newTimeline(t)
	if _, err := client.create(realWebApp(ns, "flaky", obj{"replicas": 2, "readinessProbe": fastProbe()})); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "WebApp created: 2 replicas, readiness probe every second")
	pods := waitReadyTimeline(t, tl, ns, "flaky", 2, 120*time.Second)
	var name, ip, other string
	for p, addr := range pods {
		if name == "" {
			name, ip = p, addr
		} else {
			other = addr
		}
	}
	post := func(path string) {
		t.Helper()
		resp, err := (&http.Client{Timeout: 3 * time.Second}).Post(podURL(ip, path), "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	post("/ready/fail")
	tl.mark(t, "POST /ready/fail to pod %s", name)
	st := waitStatus(t, ns, "flaky", "1 ready of 2", 60*time.Second, func(st webappv1.WebAppStatus) bool { return st.ReadyReplicas == 1 })
	tl.mark(t, "WebApp %s ready=%v, %d of 2 ready", st.Phase, st.Ready, st.ReadyReplicas)
	waitFor(t, "the EndpointSlice to list only the other pod as ready", 30*time.Second, func() (bool, error) {
		return slices.Equal(endpointAddresses(t, ns, "flaky", true), []string{other}), nil
	})
	tl.mark(t, "EndpointSlice ready addresses: only %s", other)
	if st.Ready {
		t.Errorf("status %+v; want not ready with a pod unready", st)
	}
	if _, err := httpGet(podURL(ip, "/")); err != nil {
		t.Errorf("the unready pod stopped serving: %v; want it running, only out of the endpoints", err)
	}
	post("/ready/ok")
	tl.mark(t, "POST /ready/ok")
	waitStatus(t, ns, "flaky", "Ready again", 60*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Phase == webappv1.PhaseReady && st.ReadyReplicas == 2
	})
	tl.mark(t, "WebApp Ready again, 2 of 2")
	for _, p := range podsNow(ns, "flaky") {
		if r, _ := field(p, "status", "containerStatuses", 0, "restartCount").(float64); r != 0 {
			t.Errorf("pod %v restarted %v times; a failing readiness probe restarts nothing", field(p, "metadata", "name"), r)
		}
	}
}

// endpointAddresses lists the addresses of the Service's EndpointSlices, sorted; with ready, only
// those whose condition ready is true.
func endpointAddresses(t *testing.T, ns, service string, ready bool) []string {
	t.Helper()
	b, err := client.do("GET", "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D"+service, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []struct {
			Endpoints []struct {
				Addresses  []string
				Conditions struct{ Ready, Serving, Terminating *bool }
			}
		}
	}
	if err := json.Unmarshal(b, &list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if ready && (e.Conditions.Ready == nil || !*e.Conditions.Ready) {
				continue
			}
			out = append(out, e.Addresses...)
		}
	}
	sort.Strings(out)
	return out
}

// realRollout: a new image with maxUnavailable 0: Ready pods never fewer than the replicas, and
// the status not ready until the last new pod is.
func realRollout(t *testing.T, n *realNode) {
	ns := client.namespace(t, "real-rollout")
	tl := newTimeline(t)
	spec := obj{"replicas": 2, "readinessProbe": fastProbe(), "strategy": obj{"maxSurge": 1, "maxUnavailable": 0},
		"env": []any{obj{"name": "TESTAPP_START_DELAY", "value": "2s"}}}
	if _, err := client.create(realWebApp(ns, "roll", spec)); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "WebApp created: 2 replicas of testapp:1, maxSurge 1, maxUnavailable 0")
	waitReadyTimeline(t, tl, ns, "roll", 2, 150*time.Second)

	stop := client.record(t, "example.com/v1", "WebApp", ns, "roll")
	// Sample the Ready pods every 100 ms while the rollout runs.
	var mu gosync.Mutex
	minReady, lastNewReady := 2, time.Time{}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			ready, newReady := 0, 0
			for _, p := range podsNow(ns, "roll") {
				if field(p, "metadata", "deletionTimestamp") == nil && conditionTrue(p, "Ready") {
					ready++
					if strings.HasSuffix(fmt.Sprint(field(p, "spec", "containers", 0, "image")), "testapp:2") {
						newReady++
					}
				}
			}
			mu.Lock()
			minReady = min(minReady, ready)
			if newReady == 2 && lastNewReady.IsZero() {
				lastNewReady = time.Now()
			}
			mu.Unlock()
		}
	}()
	patchSpec(t, ns, "roll", obj{"image": n.image("testapp:2")})
	generation := generationOf(t, ns, "roll")
	tl.mark(t, "image set to testapp:2 (generation %d)", generation)
	waitStatus(t, ns, "roll", "Ready on testapp:2", 150*time.Second, func(st webappv1.WebAppStatus) bool {
		return st.Phase == webappv1.PhaseReady && st.UpdatedReplicas == 2
	})
	tl.mark(t, "WebApp status Ready on the new image")
	close(done)
	events := stop()
	mu.Lock()
	defer mu.Unlock()
	tl.mark(t, "fewest Ready pods seen during the rollout: %d; both new pods Ready at %.1fs", minReady, lastNewReady.Sub(tl.start).Seconds())
	if minReady < 2 {
		t.Errorf("Ready pods dropped to %d during the rollout; want never below 2 (maxUnavailable 0)", minReady)
	}
	var phases []string
	var firstReady time.Time
	for _, e := range events {
		var st webappv1.WebAppStatus
		roundTrip(e.Object["status"], &st)
		if st.ObservedGeneration != generation {
			continue
		}
		if st.ReadyReplicas < 2 {
			t.Errorf("status readyReplicas %d at %s; want never below 2", st.ReadyReplicas, e.At.Format(time.StampMilli))
		}
		if st.Ready && firstReady.IsZero() {
			firstReady = e.At
		}
		if p := fmt.Sprintf("%s ready=%v updated=%d", st.Phase, st.Ready, st.UpdatedReplicas); len(phases) == 0 || phases[len(phases)-1] != p {
			phases = append(phases, p)
		}
	}
	t.Logf("statuses of the new generation: %q", phases)
	if len(phases) < 2 || !strings.HasPrefix(phases[0], "Progressing ready=false") {
		t.Errorf("statuses %q; want not ready (Progressing) first", phases)
	}
	if firstReady.IsZero() || lastNewReady.IsZero() || firstReady.Before(lastNewReady.Add(-200*time.Millisecond)) {
		t.Errorf("status ready at %s, the last new pod Ready at %s; want the status ready only after it", firstReady.Format(time.StampMilli), lastNewReady.Format(time.StampMilli))
	}
	for name, ip := range readyPods(t, ns, "roll") {
		if body, err := httpGet(podURL(ip, "/")); err != nil || !strings.HasPrefix(body, "testapp v2") {
			t.Errorf("GET pod %s = %q, %v; want testapp v2", name, body, err)
		}
	}
}

// realRestricted: the restricted profile's pods run as a non-root user, with seccomp
// RuntimeDefault (mode 2, filter), no capabilities and no new privileges, as the app sees itself.
func realRestricted(t *testing.T, n *realNode) {
	ns := client.namespace(t, "real-restricted")
	tl := newTimeline(t)
	if _, err := client.create(realWebApp(ns, "secure", obj{"replicas": 1, "securityProfile": "restricted", "readinessProbe": fastProbe()})); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "WebApp created with securityProfile restricted")
	pods := waitReadyTimeline(t, tl, ns, "secure", 1, 120*time.Second)
	for name, ip := range pods {
		body, err := httpGet(podURL(ip, "/whoami"))
		if err != nil {
			t.Fatal(err)
		}
		var id struct {
			UID, GID                    int
			CapEff, Seccomp, NoNewPrivs string
		}
		json.Unmarshal([]byte(body), &id)
		tl.mark(t, "pod %s sees itself as %s", name, strings.TrimSpace(body))
		if id.GID == 0 {
			// The kubelet passes the image's uid as runAsUser, and the runtime then takes the group
			// from the image's /etc/passwd, which a static image has not: group 0, whatever the
			// image's USER says. podSecurityContext.runAsGroup sets another.
			tl.mark(t, "note: group 0 (the image says 65532:65532; the kubelet passes only the uid)")
		}
		if id.UID == 0 || id.CapEff != "0000000000000000" || id.Seccomp != "2" || id.NoNewPrivs != "1" {
			t.Errorf("the app runs as %+v; want a non-root uid, no capability, seccomp filter mode 2 and no new privileges", id)
		}
	}
}

// realRootRefused: the restricted profile with an image whose user is root: the kubelet refuses
// it (CreateContainerConfigError), and the WebApp says why: with pod diagnosis, from the pods; without,
// once the Deployment's progress deadline has passed.
func realRootRefused(t *testing.T, n *realNode, diagnosis bool) {
	ns := client.namespace(t, "real-root")
	tl := newTimeline(t)
	if _, err := client.create(realWebApp(ns, "rooted", obj{"replicas": 1, "securityProfile": "restricted", "image": n.image("testapp-root:1"),
		"readinessProbe": fastProbe(), "progressDeadlineSeconds": 20})); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "WebApp created: restricted, image testapp-root:1 (no USER: root), progressDeadlineSeconds 20")
	waitFor(t, "the kubelet to refuse the container", 90*time.Second, func() (bool, error) {
		for _, p := range podsNow(ns, "rooted") {
			if r := field(p, "status", "containerStatuses", 0, "state", "waiting", "reason"); r == "CreateContainerConfigError" {
				tl.mark(t, "pod %s waiting: CreateContainerConfigError: %v", field(p, "metadata", "name"), field(p, "status", "containerStatuses", 0, "state", "waiting", "message"))
				if msg := fmt.Sprint(field(p, "status", "containerStatuses", 0, "state", "waiting", "message")); !strings.Contains(msg, "runAsNonRoot") {
					t.Errorf("waiting message %q; want the kubelet's runAsNonRoot refusal", msg)
				}
				return true, nil
			}
		}
		return false, nil
	})
	if diagnosis {
		st := waitStatus(t, ns, "rooted", "CreateContainerConfigError in the status", 60*time.Second, func(st webappv1.WebAppStatus) bool {
			r, _ := readyCondition(st)
			return r == "CreateContainerConfigError"
		})
		_, msg := readyCondition(st)
		tl.mark(t, "WebApp %s: %s", st.Phase, msg)
		if st.Phase != webappv1.PhaseDegraded || !strings.Contains(msg, "runAsNonRoot") {
			t.Errorf("status phase %s, message %q; want Degraded, saying the image runs as root under runAsNonRoot", st.Phase, msg)
		}
		return
	}
	st := waitStatus(t, ns, "rooted", "ProgressDeadlineExceeded", 90*time.Second, func(st webappv1.WebAppStatus) bool {
		r, _ := readyCondition(st)
		return r == webappv1.ReasonProgressDeadlineExceeded
	})
	d := tl.mark(t, "WebApp %s: %s", st.Phase, st.Message)
	if st.Phase != webappv1.PhaseDegraded || d > 60*time.Second {
		t.Errorf("status phase %s after %s; want Degraded soon after the 20 s progress deadline", st.Phase, d)
	}
}

// realCrash: a container that exits, and one whose liveness probe fails: with pod diagnosis,
// CrashLoopBackOff and status.restarts counted by the real kubelet.
func realCrash(t *testing.T, n *realNode) {
	ns := client.namespace(t, "real-crash")
	for _, tt := range []struct {
		name, what string
		spec       obj
	}{
		{"crash", "the app exits 1 a second after it starts", obj{"env": []any{obj{"name": "TESTAPP_CRASH_AFTER", "value": "1s"}}}},
		{"unlive", "the liveness probe fails every second", obj{"env": []any{obj{"name": "TESTAPP_NOT_LIVE", "value": "true"}},
			"livenessProbe": obj{"httpGet": obj{"path": "/live", "port": 8080}, "periodSeconds": 1, "failureThreshold": 1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tl := newTimeline(t)
			spec := obj{"replicas": 1, "readinessProbe": fastProbe()}
			for k, v := range tt.spec {
				spec[k] = v
			}
			if _, err := client.create(realWebApp(ns, tt.name, spec)); err != nil {
				t.Fatal(err)
			}
			tl.mark(t, "WebApp created: %s", tt.what)
			st := waitStatus(t, ns, tt.name, "CrashLoopBackOff with restarts", 150*time.Second, func(st webappv1.WebAppStatus) bool {
				r, _ := readyCondition(st)
				return r == "CrashLoopBackOff" && st.Restarts > 0
			})
			_, msg := readyCondition(st)
			tl.mark(t, "WebApp %s, restarts %d: %s", st.Phase, st.Restarts, msg)
			var kubeletRestarts float64
			for _, p := range podsNow(ns, tt.name) {
				r, _ := field(p, "status", "containerStatuses", 0, "restartCount").(float64)
				kubeletRestarts += r
			}
			if st.Phase != webappv1.PhaseDegraded || kubeletRestarts < float64(st.Restarts) || st.Restarts < 1 {
				t.Errorf("status %s with %d restarts, the kubelet counts %v; want Degraded and the kubelet's count", st.Phase, st.Restarts, kubeletRestarts)
			}
		})
	}
}

// realMissingImage: a tag the registry does not have: ErrImagePull or ImagePullBackOff in the
// WebApp's status.
func realMissingImage(t *testing.T, n *realNode) {
	ns := client.namespace(t, "real-missing")
	tl := newTimeline(t)
	image := n.image("testapp:missing")
	if _, err := client.create(realWebApp(ns, "missing", obj{"replicas": 1, "image": image})); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "WebApp created with %s, a tag the registry does not have", image)
	st := waitStatus(t, ns, "missing", "ErrImagePull or ImagePullBackOff", 90*time.Second, func(st webappv1.WebAppStatus) bool {
		r, _ := readyCondition(st)
		return r == "ErrImagePull" || r == "ImagePullBackOff"
	})
	r, msg := readyCondition(st)
	tl.mark(t, "WebApp %s %s: %s", st.Phase, r, msg)
	// The WebApp quotes the start of the kubelet's message, without containerd's gRPC prefix
	// ("rpc error: code = NotFound desc = "), which would leave no room for the image.
	if st.Phase != webappv1.PhaseDegraded || !strings.Contains(msg, "cannot start: "+r) || !strings.Contains(msg, image) {
		t.Errorf("status %s %q; want Degraded, saying the pod cannot start for %s, naming the image", st.Phase, msg, r)
	}
	// The kubelet's own message names the image and says it is not found.
	for _, p := range podsNow(ns, "missing") {
		waiting := fmt.Sprint(field(p, "status", "containerStatuses", 0, "state", "waiting", "message"))
		if !strings.Contains(waiting, image) || !strings.Contains(waiting, "not found") {
			t.Errorf("the kubelet says %q; want the image named and not found", waiting)
		}
	}
}

// realPrivateImage: an image of the registry's basic-auth repository pulls with no
// imagePullSecrets not at all, with a wrong password not at all, and with the right one.
func realPrivateImage(t *testing.T, n *realNode) {
	ns := client.namespace(t, "real-private")
	tl := newTimeline(t)
	pullSecret := func(name, password string) {
		auth := base64.StdEncoding.EncodeToString([]byte(registryUser + ":" + password))
		cfg, _ := json.Marshal(obj{"auths": obj{n.registry: obj{"username": registryUser, "password": password, "auth": auth}}})
		if _, err := client.create(obj{"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
			"metadata": obj{"name": name, "namespace": ns}, "data": obj{".dockerconfigjson": base64.StdEncoding.EncodeToString(cfg)}}); err != nil {
			t.Fatal(err)
		}
	}
	pullSecret("wrong", "not-"+n.registryPassword)
	pullSecret("registry", n.registryPassword)
	image := n.image("private/testapp:1")
	if _, err := client.create(realWebApp(ns, "private", obj{"replicas": 1, "image": image, "readinessProbe": fastProbe()})); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "WebApp created with %s and no imagePullSecrets", image)
	pullRefused := func(what string) {
		st := waitStatus(t, ns, "private", what, 90*time.Second, func(st webappv1.WebAppStatus) bool {
			r, _ := readyCondition(st)
			return r == "ErrImagePull" || r == "ImagePullBackOff"
		})
		r, msg := readyCondition(st)
		tl.mark(t, "%s: WebApp %s %s: %s", what, st.Phase, r, msg)
		if strings.Contains(msg, n.registryPassword) {
			t.Errorf("the status message holds the registry's password")
		}
	}
	pullRefused("no imagePullSecrets")
	patchSpec(t, ns, "private", obj{"imagePullSecrets": []any{obj{"name": "wrong"}}})
	tl.mark(t, "imagePullSecrets: a wrong password")
	pullRefused("a wrong password")
	patchSpec(t, ns, "private", obj{"imagePullSecrets": []any{obj{"name": "registry"}}})
	tl.mark(t, "imagePullSecrets: the right password")
	waitStatus(t, ns, "private", "Ready with the right pull secret", 120*time.Second, phaseIs(webappv1.PhaseReady))
	tl.mark(t, "WebApp Ready: the image pulled with the right credentials")
}

// realConfig: a ConfigMap mounted as a volume and one in envFrom: an edit of either rolls the
// pods, and the new pods serve the new content.
func realConfig(t *testing.T, n *realNode) {
	ns := client.namespace(t, "real-config")
	tl := newTimeline(t)
	for _, cm := range []obj{
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj{"name": "site", "namespace": ns}, "data": obj{"index.html": "hello from v1\n"}},
		{"apiVersion": "v1", "kind": "ConfigMap", "metadata": obj{"name": "greeting", "namespace": ns}, "data": obj{"GREETING": "hi-v1"}},
	} {
		if _, err := client.create(cm); err != nil {
			t.Fatal(err)
		}
	}
	spec := obj{"replicas": 2, "readinessProbe": fastProbe(), "strategy": obj{"maxSurge": 1, "maxUnavailable": 0},
		"args":    []any{"-file", "/etc/site/index.html", "-env", "GREETING"},
		"envFrom": []any{obj{"configMapRef": obj{"name": "greeting"}}},
		"volumes": []any{obj{"name": "site", "mountPath": "/etc/site", "readOnly": true, "configMap": obj{"name": "site"}}}}
	if _, err := client.create(realWebApp(ns, "conf", spec)); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "WebApp created: ConfigMap site mounted at /etc/site, ConfigMap greeting in envFrom")
	pods := waitReadyTimeline(t, tl, ns, "conf", 2, 150*time.Second)
	serves := func(pods map[string]string, file, env string) {
		t.Helper()
		for name, ip := range pods {
			if got, err := httpGet(podURL(ip, "/file")); err != nil || got != file {
				t.Errorf("GET /file of %s = %q, %v; want %q", name, got, err, file)
			}
			if got, err := httpGet(podURL(ip, "/env")); err != nil || got != "GREETING="+env+"\n" {
				t.Errorf("GET /env of %s = %q, %v; want GREETING=%s", name, got, err, env)
			}
		}
	}
	serves(pods, "hello from v1\n", "hi-v1")
	tl.mark(t, "each pod serves the file and the variable of the ConfigMaps")

	for _, step := range []struct {
		cm, key, value, file, env string
	}{
		{"site", "index.html", "hello from v2\n", "hello from v2\n", "hi-v1"},
		{"greeting", "GREETING", "hi-v2", "hello from v2\n", "hi-v2"},
	} {
		p, _ := client.path("v1", "ConfigMap", ns, step.cm)
		if _, err := client.do("PATCH", p, "application/merge-patch+json", obj{"data": obj{step.key: step.value}}); err != nil {
			t.Fatal(err)
		}
		tl.mark(t, "ConfigMap %s edited: %s=%q", step.cm, step.key, step.value)
		var fresh map[string]string
		waitFor(t, "new pods after the edit of "+step.cm, 150*time.Second, func() (bool, error) {
			fresh = readyPods(t, ns, "conf")
			if len(fresh) != 2 || len(podsNow(ns, "conf")) != 2 {
				return false, nil
			}
			for name := range fresh {
				if _, old := pods[name]; old {
					return false, nil
				}
			}
			st, current := statusNow(t, ns, "conf")
			return current && st.Phase == webappv1.PhaseReady, nil
		})
		tl.mark(t, "rolled: 2 new pods Ready, the old ones gone, WebApp Ready")
		serves(fresh, step.file, step.env)
		pods = fresh
	}
}

// realShutdownDelay: shutdownDelaySeconds 5: a deleted pod leaves the EndpointSlice's ready
// endpoints at once and keeps serving for about 5 s (its preStop sleep) before it gets SIGTERM,
// which the test app answers by closing its port.
func realShutdownDelay(t *testing.T, n *realNode) {
	ns := client.namespace(t, "real-shutdown")
	tl := newTimeline(t)
	if _, err := client.create(realWebApp(ns, "drain", obj{"replicas": 1, "readinessProbe": fastProbe(), "shutdownDelaySeconds": 5})); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "WebApp created with shutdownDelaySeconds 5")
	pods := waitReadyTimeline(t, tl, ns, "drain", 1, 120*time.Second)
	var name, ip string
	for name, ip = range pods {
	}
	waitFor(t, "the pod in the EndpointSlice", 30*time.Second, func() (bool, error) {
		return slices.Equal(endpointAddresses(t, ns, "drain", true), []string{ip}), nil
	})
	p, _ := client.path("v1", "Pod", ns, name)
	deleted := time.Now()
	if _, err := client.do("DELETE", p, "", nil); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "pod %s deleted", name)
	var leftEndpoints time.Duration
	var lastAnswer time.Time
	for time.Since(deleted) < 40*time.Second {
		if leftEndpoints == 0 && !slices.Contains(endpointAddresses(t, ns, "drain", true), ip) {
			leftEndpoints = time.Since(deleted)
			tl.mark(t, "the pod's endpoint is no longer ready in the EndpointSlice")
		}
		if _, err := (&http.Client{Timeout: time.Second}).Get(podURL(ip, "/")); err != nil {
			break
		}
		lastAnswer = time.Now()
		time.Sleep(100 * time.Millisecond)
	}
	served := lastAnswer.Sub(deleted)
	tl.mark(t, "the pod answered for %.2fs after its deletion, then closed its port (SIGTERM)", served.Seconds())
	// The kubelet's own log: when it saw the deletion, and when, the preStop hook done, it stopped
	// the container (it logs "Killing container with a grace period" then sends SIGTERM).
	seen, seenOK := n.kubeletLogTime(name, `"SyncLoop DELETE"`)
	killed, killedOK := n.kubeletLogTime(name, `"Killing container with a grace period"`)
	if seenOK && killedOK {
		held := killed.Sub(seen)
		tl.mark(t, "kubelet: DELETE seen %.2fs after the deletion; SIGTERM %.2fs after that (the 5 s preStop sleep)", seen.Sub(deleted).Seconds(), held.Seconds())
		if held < 5*time.Second || held > 9*time.Second {
			t.Errorf("the kubelet sent SIGTERM %s after it saw the deletion; want the 5 s of shutdownDelaySeconds", held)
		}
	} else {
		t.Errorf("no SyncLoop DELETE or Killing container line for %s in the kubelet's log", name)
	}
	if served < 4500*time.Millisecond || served > 10*time.Second {
		t.Errorf("the pod served %s after its deletion; want about the 5 s of shutdownDelaySeconds", served)
	}
	if leftEndpoints == 0 || leftEndpoints > 3*time.Second {
		t.Errorf("the endpoint left the ready addresses %s after the deletion; want at once, well before SIGTERM", leftEndpoints)
	}
}

// realTeardown: deleting the WebApp with real pods: the Service goes before the Deployment, every
// pod ends gracefully (the app's exit code 0 after SIGTERM), and nothing of theirs is left on the
// node: no task in containerd, no pod directory in the kubelet's.
func realTeardown(t *testing.T, n *realNode) {
	ns := client.namespace(t, "real-teardown")
	tl := newTimeline(t)
	if _, err := client.create(realWebApp(ns, "bye", obj{"replicas": 2, "readinessProbe": fastProbe()})); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "WebApp created with 2 replicas")
	waitReadyTimeline(t, tl, ns, "bye", 2, 120*time.Second)
	var uids, names []string
	for _, p := range podsNow(ns, "bye") {
		uids = append(uids, field(p, "metadata", "uid").(string))
		names = append(names, field(p, "metadata", "name").(string))
	}
	stops := []func() []watchEvent{client.record(t, "v1", "Service", ns, "bye"), client.record(t, "apps/v1", "Deployment", ns, "bye")}
	// A watch of each pod sees every status the kubelet writes, the container's end among them.
	var podWatches []func() []watchEvent
	for _, name := range names {
		podWatches = append(podWatches, client.record(t, "v1", "Pod", ns, name))
	}
	wp, _ := client.path("example.com/v1", "WebApp", ns, "bye")
	if _, err := client.do("DELETE", wp, "", nil); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "WebApp deleted")
	waitFor(t, "the WebApp, its children and its pods gone", 120*time.Second, func() (bool, error) {
		wa, err := client.get("example.com/v1", "WebApp", ns, "bye")
		return wa == nil && len(childrenOf(t, ns, "bye")) == 0 && len(podsNow(ns, "bye")) == 0, err
	})
	tl.mark(t, "WebApp, Service, Deployment and pods gone")
	deleted := map[string]time.Time{}
	for i, stop := range stops {
		for _, e := range stop() {
			if e.Type == "DELETED" {
				deleted[[]string{"Service", "Deployment"}[i]] = e.At
			}
		}
	}
	if deleted["Service"].IsZero() || deleted["Deployment"].IsZero() || !deleted["Service"].Before(deleted["Deployment"]) {
		t.Errorf("Service deleted at %s, Deployment at %s; want the Service first", deleted["Service"].Format(time.StampMilli), deleted["Deployment"].Format(time.StampMilli))
	} else {
		tl.mark(t, "Service deleted %.2fs before the Deployment", deleted["Deployment"].Sub(deleted["Service"]).Seconds())
	}
	exits := map[string]string{}
	for i, stop := range podWatches {
		for _, e := range stop() {
			if term := field(e.Object, "status", "containerStatuses", 0, "state", "terminated"); term != nil {
				exits[names[i]] = fmt.Sprintf("exit %v %v", field(term, "exitCode"), field(term, "reason"))
			}
		}
	}
	t.Logf("containers' last states: %v", exits)
	for _, name := range names {
		if e := exits[name]; !strings.HasPrefix(e, "exit 0 ") {
			t.Errorf("pod %s ended with %q; want exit 0 after SIGTERM", name, e)
		}
	}
	tl.mark(t, "each container ended with exit 0 after SIGTERM: %v", exits)
	waitFor(t, "nothing of the pods left on the node", 60*time.Second, func() (bool, error) {
		out, err := n.ctr("tasks", "ls")
		if err != nil {
			return false, fmt.Errorf("ctr tasks ls: %v: %s", err, out)
		}
		for _, uid := range uids {
			if _, err := os.Stat(filepath.Join(n.dir, "kubelet", "pods", uid)); err == nil {
				return false, nil
			}
		}
		containers, _ := n.ctr("containers", "ls", "labels.\"io.kubernetes.pod.namespace\"=="+ns)
		running, _ := n.ctr("tasks", "ls")
		for _, line := range strings.Split(string(containers), "\n")[1:] {
			if id := strings.Fields(line); len(id) > 0 && strings.Contains(string(running), id[0]) {
				return false, nil
			}
		}
		return true, nil
	})
	tl.mark(t, "no task running and no pod directory left on the node for the WebApp's pods")
}

//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
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

// traefikController is the controllerName of Traefik's Gateway API provider.
const traefikController = "traefik.io/gateway-controller"

// traefikHost is the hostname of the WebApp's route in TestTraefikGateway.
const traefikHost = "shop.example.com"

// TestTraefikGateway runs Traefik (bin/traefik, make gateway-binaries) as the real Gateway API
// controller of the suite's cluster, in place of the status that TestCanary writes itself: Traefik
// accepts the GatewayClass, the Gateway and the WebApp's HTTPRoute, and routes requests sent to its
// loopback entry point to the WebApp's pods on the real node; then a canary of one step of 50%
// splits the traffic between both versions through Traefik and is promoted with no failed request.
//
// make e2e builds bin/traefik (make gateway-binaries); make gateway-e2e runs this test alone.
func TestTraefikGateway(t *testing.T) {
	n := requireNode(t)
	realInstall(t, "e2e/testdata/gateway-api")
	tl := newTimeline(t)
	ns := client.namespace(t, "traefik")

	tr := requireTraefik(t, ns)
	tl.mark(t, "Traefik started: entry point 127.0.0.1:%s, metrics 127.0.0.1:%s", tr.port, tr.metricsPort)

	tr.gateway(t, ns, "public")
	tl.mark(t, "GatewayClass %s Accepted", tr.class)
	gw := mustGet(t, routeAPI, "Gateway", ns, "public")
	tl.mark(t, "Gateway public Accepted (Programmed %v), addresses %v", conditionTrue(gw, "Programmed"), field(gw, "status", "addresses"))

	const name = "shop"
	spec := obj{"replicas": 2, "readinessProbe": fastProbe(), "strategy": obj{"maxSurge": 1, "maxUnavailable": 0},
		// The old pods keep serving 5 s after their deletion, while Traefik learns that their
		// endpoints are gone.
		"shutdownDelaySeconds": 5,
		"route":                obj{"hostnames": []any{traefikHost}, "parentRefs": []any{obj{"name": "public"}}},
		"rollout":              obj{"canary": obj{"steps": []any{obj{"weight": 50, "pauseSeconds": 10}}}}}
	if _, err := client.create(realWebApp(ns, name, spec)); err != nil {
		t.Fatal(err)
	}
	tl.mark(t, "WebApp created: 2 replicas of testapp:1, route %s, canary steps [50%% for 10s]", traefikHost)

	waitFor(t, "Traefik to accept the HTTPRoute", 120*time.Second, func() (bool, error) {
		r, err := client.get(routeAPI, "HTTPRoute", ns, name)
		return r != nil && traefikAccepted(r), err
	})
	tl.mark(t, "HTTPRoute Accepted and ResolvedRefs by %s", traefikController)
	st := waitStatus(t, ns, name, "Ready and Routed", 150*time.Second, func(st webappv1.WebAppStatus) bool {
		got, _ := routedCondition(st)
		return st.Phase == webappv1.PhaseReady && got == "True/Accepted"
	})
	_, msg := routedCondition(st)
	tl.mark(t, "WebApp Ready, Routed True: %s url %s", msg, st.URL)

	pods := readyPods(t, ns, name)
	seen := map[string]bool{}
	waitFor(t, "both pods to answer through Traefik", 30*time.Second, func() (bool, error) {
		code, body, err := tr.get("/")
		if err == nil && code == 200 {
			seen[strings.TrimSpace(body)] = true
		}
		return len(seen) == len(pods), nil
	})
	for body := range seen {
		if !strings.HasPrefix(body, "testapp v1 on ") || pods[strings.TrimPrefix(body, "testapp v1 on ")] == "" {
			t.Errorf("an answer through Traefik %q; want testapp v1 from one of the pods %v", body, pods)
		}
	}
	tl.mark(t, "GET http://127.0.0.1:%s/ with Host %s: 200 from each pod: %v", tr.port, traefikHost, slices.Sorted(maps.Keys(seen)))

	t.Run("canary through Traefik", func(t *testing.T) {
		load := startLoad(tr, 1, 50*time.Millisecond)
		patchSpec(t, ns, name, obj{"image": n.image("testapp:2")})
		gen := generationOf(t, ns, name)
		tl.mark(t, "image set to testapp:2 (generation %d); a request every 50 ms through Traefik", gen)

		var splitFrom, splitTo time.Time
		last := ""
		waitFor(t, "the canary promoted and retired", 150*time.Second, func() (bool, error) {
			v := lookCanary(t, ns, name)
			if s := v.summary(name); s != last {
				tl.mark(t, "%s", s)
				last = s
			}
			sw, cw, split := splitWeights(v.route, name)
			if split && sw == 50 && cw == 50 && traefikAccepted(v.route) && splitFrom.IsZero() {
				splitFrom = time.Now()
				tl.mark(t, "route split 50/50, accepted by Traefik")
			}
			if !(split && sw == 50 && cw == 50) && !splitFrom.IsZero() && splitTo.IsZero() {
				splitTo = time.Now()
				tl.mark(t, "route no longer 50/50: %s", backendsString(v.route))
			}
			if v.st.ObservedGeneration != gen || v.canary != nil || !isNormalRoute(v.route, name) || !traefikAccepted(v.route) {
				return false, nil
			}
			ready := readyPods(t, ns, name)
			return v.st.Phase == webappv1.PhaseReady && len(ready) == 2 && len(podsNow(ns, name)) == 2 &&
				slices.Equal(services(t, ns, name), []string{name}), nil
		})
		tl.mark(t, "canary promoted: the stable Deployment on testapp:2, the canary's Deployment and Services gone")
		// A few more seconds of requests after the promotion, then the load stops.
		time.Sleep(3 * time.Second)
		results := load.stop()
		tl.mark(t, "load stopped: %s", summarize(results))

		if splitFrom.IsZero() || splitTo.IsZero() {
			t.Fatalf("the route was never seen split 50/50 and accepted (from %v to %v)", splitFrom, splitTo)
		}
		versions := map[string]int{}
		var failed []string
		for _, r := range results {
			if r.err != nil || r.code != 200 {
				failed = append(failed, fmt.Sprintf("%s: %d %v %q", r.at.Format(time.StampMilli), r.code, r.err, r.body))
				continue
			}
			// A second into the split, Traefik has the weights (it accepted them before).
			if f := strings.Fields(r.body); len(f) > 1 && r.at.After(splitFrom.Add(time.Second)) && r.at.Before(splitTo) {
				versions[f[1]]++
			}
		}
		tl.mark(t, "answers while the route was split 50/50 (%.1fs): %v", splitTo.Sub(splitFrom).Seconds(), versions)
		if versions["v1"] == 0 || versions["v2"] == 0 {
			t.Errorf("answers during the 50/50 split %v; want both testapp v1 and v2", versions)
		}
		if len(failed) > 0 {
			t.Errorf("%d of %d requests through Traefik failed during the canary; want none:\n%s", len(failed), len(results), strings.Join(failed[:min(len(failed), 20)], "\n"))
		}
		tail := results[max(0, len(results)-20):]
		for _, r := range tail {
			if r.err == nil && !strings.HasPrefix(r.body, "testapp v2 ") {
				t.Errorf("after the promotion, an answer %q; want testapp v2 only", r.body)
				break
			}
		}

		// The service label values of Traefik's request counter, for the canary analysis's queries.
		counts := scrape("http://127.0.0.1:"+tr.metricsPort+"/metrics", "traefik_service_requests_total", "service")
		var labels []string
		for svc, c := range counts {
			labels = append(labels, fmt.Sprintf("service=%q: %v", svc, c))
		}
		sort.Strings(labels)
		tl.mark(t, "traefik_service_requests_total by service:\n      %s", strings.Join(labels, "\n      "))
		var stable, canary bool
		for svc := range counts {
			stable = stable || strings.Contains(svc, name+webappv1.StableSuffix)
			canary = canary || strings.Contains(svc, name+webappv1.CanarySuffix)
		}
		if !stable || !canary {
			t.Errorf("traefik_service_requests_total's services %v; want one for %s and one for %s", slices.Sorted(maps.Keys(counts)), name+webappv1.StableSuffix, name+webappv1.CanarySuffix)
		}
	})

	if refused := tr.refusals(); refused != "" {
		t.Errorf("Traefik was refused by RBAC; its ClusterRole lacks:\n%s", refused)
	}
}

// traefikAccepted reports whether Traefik has answered the route's current generation with
// Accepted and ResolvedRefs True.
func traefikAccepted(route obj) bool {
	parents, _ := field(route, "status", "parents").([]any)
	for _, p := range parents {
		if field(p, "controllerName") != traefikController {
			continue
		}
		ok := 0
		conds, _ := field(p, "conditions").([]any)
		for _, c := range conds {
			if (field(c, "type") == "Accepted" || field(c, "type") == "ResolvedRefs") && field(c, "status") == "True" &&
				field(c, "observedGeneration") == field(route, "metadata", "generation") {
				ok++
			}
		}
		return ok == 2
	}
	return false
}

// traefik is a running bin/traefik with the Kubernetes Gateway provider.
type traefik struct {
	proc              *process
	ns                string // where its ServiceAccount is
	port, metricsPort string
	apiPort           string // of its API (/api/http/services: the configuration it applies)
	classOnce         gosync.Once
	class             string   // its GatewayClass, once gateway made it
	cleanups          []func() // run when it stops
}

// traefikRules are the least rights of Traefik's Gateway API provider (v3.7): it watches the
// Gateway API's kinds and the core ones its routes resolve through, and writes the status of
// the GatewayClasses, Gateways and HTTPRoutes it serves.
func traefikRules() []any {
	read := []any{"get", "list", "watch"}
	return []any{
		obj{"apiGroups": []any{"gateway.networking.k8s.io"}, "verbs": read,
			"resources": []any{"gatewayclasses", "gateways", "httproutes", "grpcroutes", "tlsroutes", "backendtlspolicies", "referencegrants"}},
		obj{"apiGroups": []any{"gateway.networking.k8s.io"}, "verbs": []any{"update", "patch"},
			"resources": []any{"gatewayclasses/status", "gateways/status", "httproutes/status"}},
		obj{"apiGroups": []any{""}, "verbs": read, "resources": []any{"namespaces", "services", "configmaps", "secrets"}},
		obj{"apiGroups": []any{"discovery.k8s.io"}, "verbs": read, "resources": []any{"endpointslices"}},
	}
}

// requireTraefik fails the test when bin/traefik is missing, and starts it with its ServiceAccount
// in ns (startTraefik).
func requireTraefik(t *testing.T, ns string) *traefik {
	t.Helper()
	if _, err := os.Stat(filepath.Join(cluster.bin, "traefik")); err != nil {
		t.Fatalf("bin/traefik missing: run make gateway-binaries (%v)", err)
	}
	return startTraefik(t, ns)
}

// startTraefik gives Traefik a ServiceAccount in ns bound to traefikRules, and runs bin/traefik
// with its token against the suite's apiserver, an entry point web and one for its metrics on
// free loopback ports, until the test ends.
func startTraefik(t *testing.T, ns string) *traefik {
	t.Helper()
	role := "webapp-e2e-traefik-" + ns
	for _, o := range []obj{
		{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": obj{"name": "traefik", "namespace": ns}},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": obj{"name": role}, "rules": traefikRules()},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": obj{"name": role},
			"roleRef":  obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
			"subjects": []any{obj{"kind": "ServiceAccount", "name": "traefik", "namespace": ns}}},
	} {
		if _, err := client.create(o); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		client.do("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/"+role, "", nil)
		client.do("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/"+role, "", nil)
	})
	b, err := client.do("POST", "/api/v1/namespaces/"+ns+"/serviceaccounts/traefik/token", "application/json",
		obj{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": obj{"expirationSeconds": 3600}})
	if err != nil {
		t.Fatalf("TokenRequest for Traefik: %v", err)
	}
	tok, _ := decode(b)
	token, _ := field(tok, "status", "token").(string)
	if token == "" {
		t.Fatalf("TokenRequest for Traefik: no token in %s", b)
	}
	waitFor(t, "Traefik's ClusterRole in RBAC's cache", 30*time.Second, func() (bool, error) {
		return allowed("system:serviceaccount:"+ns+":traefik", "watch", "gateway.networking.k8s.io", "httproutes", "", "")
	})

	dir := filepath.Join(cluster.dir, "traefik-"+ns)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Traefik puts the file's bytes in the Authorization header as they are: no newline.
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	tr := &traefik{ns: ns, port: freePort(), metricsPort: freePort(), apiPort: freePort()}
	// The whole environment: KUBERNETES_SERVICE_HOST and _PORT, or KUBECONFIG, would take
	// precedence over the endpoint, token and CA flags.
	env := []string{"HOME=" + dir}
	tr.proc, err = startProcess(dir, cluster.bin, "traefik", env,
		"--global.checkNewVersion=false",
		"--global.sendAnonymousUsage=false",
		"--log.level=DEBUG",
		"--log.noColor=true",
		"--entryPoints.web.address=127.0.0.1:"+tr.port,
		"--entryPoints.metrics.address=127.0.0.1:"+tr.metricsPort,
		// Its API, on an entry point of its own, tells the configuration it routes by: the
		// routes' status is written before that configuration is applied (up to
		// providersThrottleDuration, 2 s, later).
		"--entryPoints.traefik.address=127.0.0.1:"+tr.apiPort,
		"--api=true",
		"--api.insecure=true",
		"--api.dashboard=false",
		"--metrics.prometheus=true",
		"--metrics.prometheus.entryPoint=metrics",
		"--metrics.prometheus.addServicesLabels=true",
		// Buckets for a web app's latency: 5 ms to 5 s, so that a quantile of
		// traefik_service_request_duration_seconds can tell 100 ms from 300 ms (Traefik's
		// default is 0.1, 0.3, 1.2, 5).
		"--metrics.prometheus.buckets=0.005,0.01,0.025,0.05,0.1,0.25,0.5,1,2.5,5",
		"--providers.kubernetesgateway=true",
		"--providers.kubernetesgateway.endpoint="+cluster.server,
		"--providers.kubernetesgateway.token="+tokenFile,
		"--providers.kubernetesgateway.certauthfilepath="+filepath.Join(cluster.dir, "certs", "apiserver.crt"),
		"--providers.kubernetesgateway.experimentalchannel=false",
		"--providers.kubernetesgateway.statusaddress.ip=127.0.0.1",
	)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stopAll([]*process{tr.proc}, 10*time.Second)
		for _, f := range tr.cleanups {
			f()
		}
		if t.Failed() {
			t.Logf("Traefik's log (%s), its end:\n%s", tr.proc.log, tailFile(tr.proc.log, 6000))
		}
	})
	if err := waitHTTP(context.Background(), "http://127.0.0.1:"+tr.metricsPort+"/metrics", nil, 30*time.Second); err != nil {
		t.Fatalf("Traefik's metrics: %v\n%s", err, tailFile(tr.proc.log, 3000))
	}
	return tr
}

// metricsAddr is the host:port of Traefik's /metrics, for startPrometheus.
func (tr *traefik) metricsAddr() string { return "127.0.0.1:" + tr.metricsPort }

// gateway makes the GatewayClass of tr, the first time, and a Gateway name in ns whose one HTTP
// listener, on the entry point web's port, admits the routes of ns, and waits until Traefik has
// accepted both.
func (tr *traefik) gateway(t *testing.T, ns, name string) {
	t.Helper()
	tr.classOnce.Do(func() {
		tr.class = "traefik-" + tr.ns
		if _, err := client.create(obj{"apiVersion": routeAPI, "kind": "GatewayClass", "metadata": obj{"name": tr.class},
			"spec": obj{"controllerName": traefikController}}); err != nil {
			t.Fatal(err)
		}
		class := tr.class
		tr.cleanups = append(tr.cleanups, func() {
			p, _ := client.path(routeAPI, "GatewayClass", "", class)
			client.do("DELETE", p, "", nil)
		})
		waitFor(t, "Traefik to accept the GatewayClass", 60*time.Second, func() (bool, error) {
			gc, err := client.get(routeAPI, "GatewayClass", "", class)
			return gc != nil && conditionTrue(gc, "Accepted"), err
		})
	})
	if tr.class == "" {
		t.Fatal("no GatewayClass for Traefik")
	}
	// The listener's port is the entry point's: Traefik attaches a listener to the entry point
	// of the same port.
	if _, err := client.create(obj{"apiVersion": routeAPI, "kind": "Gateway", "metadata": obj{"name": name, "namespace": ns},
		"spec": obj{"gatewayClassName": tr.class, "listeners": []any{
			obj{"name": "http", "port": mustAtoi(t, tr.port), "protocol": "HTTP", "allowedRoutes": obj{"namespaces": obj{"from": "Same"}}},
		}}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Traefik to accept the Gateway", 60*time.Second, func() (bool, error) {
		gw, err := client.get(routeAPI, "Gateway", ns, name)
		return gw != nil && conditionTrue(gw, "Accepted"), err
	})
}

// get sends GET path to Traefik's entry point with the route's hostname as Host.
func (tr *traefik) get(path string) (int, string, error) {
	req, _ := http.NewRequest("GET", "http://127.0.0.1:"+tr.port+path, nil)
	req.Host = traefikHost
	resp, err := (&http.Client{Timeout: 3 * time.Second}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// refusals are the lines of Traefik's log that say the apiserver refused it something.
func (tr *traefik) refusals() string {
	f, err := os.Open(tr.proc.log)
	if err != nil {
		return ""
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		if strings.Contains(s.Text(), "forbidden") && len(out) < 10 {
			out = append(out, s.Text())
		}
	}
	return strings.Join(out, "\n")
}

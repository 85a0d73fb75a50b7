//go:build e2e

package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// earlierChart is a packaged earlier version of the chart, as a cluster would have it installed:
// helm upgrade from it must keep every WebApp and rewrite none of their children.
const earlierChart = "testdata/charts/webapp-operator-0.1.0.tgz"

// serviceProxy stands for the cluster's Service network: Metacontroller, run on the host, reaches
// the hook at the URL the chart's CompositeController names (http://webapp-hook.NAMESPACE/...)
// through this HTTP proxy on loopback (HTTP_PROXY), which forwards calls for that one host to
// the hook process and refuses any other. Go's HTTP client never proxies loopback addresses, so
// Metacontroller's calls to the apiserver go straight to it.
type serviceProxy struct {
	*httptest.Server
	forwarded atomic.Int64
}

func startServiceProxy(t *testing.T, host string, target func() string) *serviceProxy {
	t.Helper()
	p := &serviceProxy{}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		u, _ := url.Parse(target())
		r.SetURL(u)
	}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Hostname() != host || (r.URL.Port() != "" && r.URL.Port() != "80") {
			http.Error(w, fmt.Sprintf("service proxy: no Service at %s; only %s", r.URL.Host, host), http.StatusBadGateway)
			return
		}
		p.forwarded.Add(1)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.Close)
	return p
}

// installedHook reads the hook's flags and environment from the Deployment the release made, as
// its container runs them, leaving out the listen addresses, which the tests choose.
func installedHook(t *testing.T, ns string) (args, env []string) {
	t.Helper()
	dep := mustGet(t, "apps/v1", "Deployment", ns, "webapp-hook")
	c := field(dep, "spec", "template", "spec", "containers", 0)
	list, _ := field(c, "args").([]any)
	for _, a := range list {
		if s, _ := a.(string); !strings.HasPrefix(s, "--addr=") && !strings.HasPrefix(s, "--metrics-addr=") {
			args = append(args, s)
		}
	}
	vars, _ := field(c, "env").([]any)
	for _, e := range vars {
		env = append(env, fmt.Sprintf("%s=%s", field(e, "name"), field(e, "value")))
	}
	return args, env
}

// helmRelease is one `helm install` or `helm upgrade -o json`: its manifest and notes.
type helmRelease struct {
	Manifest string `json:"manifest"`
	Version  int    `json:"version"`
	Info     struct {
		Status string `json:"status"`
		Notes  string `json:"notes"`
	} `json:"info"`
	Chart struct {
		Metadata struct {
			Version string `json:"version"`
		} `json:"metadata"`
	} `json:"chart"`
}

func helmJSON(t *testing.T, args ...string) helmRelease {
	t.Helper()
	out, err := helm(append(args, "-o", "json")...)
	if err != nil {
		t.Fatal(err)
	}
	var r helmRelease
	// helm may print warnings before the JSON.
	if i := strings.IndexByte(out, '{'); i < 0 || json.Unmarshal([]byte(out[i:]), &r) != nil {
		t.Fatalf("helm %s: not a release:\n%s", strings.Join(args, " "), out)
	}
	return r
}

// hookRollout is the hook Deployment's generation, the args of its pod template and how many
// ReplicaSets it has had.
func hookRollout(t *testing.T, ns string) (generation float64, args []any, replicaSets int) {
	t.Helper()
	dep := mustGet(t, "apps/v1", "Deployment", ns, "webapp-hook")
	generation, _ = field(dep, "metadata", "generation").(float64)
	args, _ = field(dep, "spec", "template", "spec", "containers", 0, "args").([]any)
	b, err := client.do("GET", "/apis/apps/v1/namespaces/"+ns+"/replicasets?labelSelector=app.kubernetes.io%2Fname%3Dwebapp-hook", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := decode(b)
	if err != nil {
		t.Fatal(err)
	}
	items, _ := list["items"].([]any)
	return generation, args, len(items)
}

// TestHelm installs the chart with helm against the real apiserver and runs it under the real
// Metacontroller, with the hook as a process started with the flags of the Deployment the release
// made: install to a Ready WebApp, an upgrade that rolls the hook and rewrites no child, uninstall
// that leaves the CRD and the WebApps, an upgrade from an earlier packaged chart, and TLS through
// cert-manager as a server dry run. The subtests share one release and run in order.
func TestHelm(t *testing.T) {
	requireHelm(t)
	mcBin := requireMetacontroller(t)
	// The release's namespace enforces Pod Security "restricted", as the README has it; the
	// WebApps live in a tenant's namespace of their own.
	ns := client.namespace(t, "helm")
	labelNamespace(t, ns, map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"})
	apps := client.namespace(t, "helm-apps")
	const release = "webapp-operator"
	webapps := []string{}

	// The hook, started once the release has made its Deployment, and again after each rollout.
	hook := &hookProcess{bin: buildHook(t), dir: t.TempDir(), addr: "127.0.0.1:" + freePort(), metricsAddr: "127.0.0.1:" + freePort()}
	t.Cleanup(func() {
		if hook.daemon != nil {
			hook.stop(syscall.SIGTERM)
			if t.Failed() {
				t.Logf("hook log:\n%s", tailFile(hook.log, 3000))
			}
		}
	})
	proxy := startServiceProxy(t, "webapp-hook."+ns, hook.url)
	m := &metacontroller{metricsAddr: "127.0.0.1:" + freePort()}
	d, err := startDaemon(t.TempDir(), "metacontroller", []string{"HTTP_PROXY=" + proxy.URL}, mcBin,
		metacontrollerFlags(filepath.Join(cluster.dir, "kubeconfig"), m.metricsAddr, 5)...)
	if err != nil {
		t.Fatal(err)
	}
	m.daemon = d
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("metacontroller log:\n%s", tailFile(m.log, 6000))
		}
		m.stop(syscall.SIGTERM)
	})
	if err := waitHTTP(t.Context(), "http://"+m.metricsAddr+"/metrics", nil, 30*time.Second); err != nil {
		t.Fatalf("metacontroller: %v\n%s", err, tailFile(m.log, 3000))
	}
	// First of the cleanups (registered after Metacontroller, the proxy and the hook): the WebApps
	// go while Metacontroller still finalizes them, then the release.
	t.Cleanup(func() {
		for _, name := range webapps {
			p, _ := client.path("example.com/v1", "WebApp", apps, name)
			client.do("DELETE", p, "", nil)
		}
		for _, name := range webapps {
			deadline := time.Now().Add(60 * time.Second)
			for {
				if w, err := client.get("example.com/v1", "WebApp", apps, name); err == nil && w == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Errorf("WebApp %s not finalized and deleted 60 s after its deletion under the chart's controller", name)
					// So that its namespace goes, and no later test meets it.
					p, _ := client.path("example.com/v1", "WebApp", apps, name)
					client.do("PATCH", p, "application/merge-patch+json", obj{"metadata": obj{"finalizers": nil}})
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
		helm("uninstall", release, "--namespace", ns, "--wait", "--timeout", "60s")
		// Whatever a failed step left: the CompositeController would steer the next tests' WebApps.
		p, _ := client.path("metacontroller.k8s.io/v1alpha1", "CompositeController", "", "webapp-controller")
		client.do("DELETE", p, "", nil)
	})

	// runHook starts the hook, or restarts it with the flags of the Deployment as it is now, as
	// a rollout replaces its pods.
	runHook := func(t *testing.T) {
		t.Helper()
		args, env := installedHook(t, ns)
		if hook.daemon != nil {
			hook.stop(syscall.SIGTERM)
		}
		hook.args, hook.env = args, env
		hook.restart(t)
	}
	newWebApp := func(t *testing.T, name string) {
		t.Helper()
		if _, err := client.create(webApp(apps, name, obj{"image": "nginx:1.27", "replicas": 2, "port": 8080})); err != nil {
			t.Fatal(err)
		}
		webapps = append(webapps, name)
		waitStatus(t, apps, name, "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady))
	}
	// unchanged checks, after at least two resyncs through the hook, that no child of the WebApps
	// was rewritten since before.
	unchanged := func(t *testing.T, before map[string]map[string]any) {
		t.Helper()
		calls := hook.calls()["sync"]
		time.Sleep(12 * time.Second) // two resyncs at 5 s, and more
		if got := hook.calls()["sync"]; got < calls+2 {
			t.Errorf("%v sync calls in 12 s; want the resyncs to reach the hook", got-calls)
		}
		for name, want := range before {
			if got := versions(t, apps, name); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("WebApp %s: children's resourceVersions %v -> %v; want none rewritten", name, want, got)
			}
		}
	}
	snapshot := func(t *testing.T) map[string]map[string]any {
		out := map[string]map[string]any{}
		for _, name := range webapps {
			out[name] = versions(t, apps, name)
			if len(out[name]) < 2 {
				t.Fatalf("WebApp %s has children %v; want its Deployment and Service", name, out[name])
			}
		}
		return out
	}

	t.Run("TLS through cert-manager: server dry run", func(t *testing.T) {
		installCertManagerCRDs(t)
		// --take-ownership: the suite installed the CRD itself, without Helm's annotations.
		r := helmJSON(t, "install", release, chartDir, "--namespace", ns, "--dry-run=server", "--take-ownership", "--set", "tls.enabled=true")
		docs, err := yamlDocs([]byte(r.Manifest))
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, d := range docs {
			_, kind, _, name := identity(d)
			kinds = append(kinds, kind+"/"+name)
			if _, err := client.apply(d, "helm", true); err != nil {
				t.Errorf("server dry run of the chart's %s/%s: %v", kind, name, err)
			}
		}
		for _, want := range []string{"Certificate/webapp-hook-ca", "Certificate/webapp-hook-tls", "Issuer/webapp-hook-selfsigned", "Issuer/webapp-hook-ca", "Secret/webapp-hook-token", "Secret/webapp-hook-tokens"} {
			if !slices.Contains(kinds, want) {
				t.Errorf("the TLS install renders %v; want %s", kinds, want)
			}
		}
		if s, _ := client.get("v1", "Secret", ns, "webapp-hook-token"); s != nil {
			t.Error("a dry run made Secret webapp-hook-token")
		}
	})

	t.Run("install: default values, a WebApp Ready", func(t *testing.T) {
		r := helmJSON(t, "install", release, chartDir, "--namespace", ns, "--take-ownership", "--wait", "--timeout", "3m")
		if r.Info.Status != "deployed" {
			t.Fatalf("release status %q; want deployed", r.Info.Status)
		}
		for _, want := range []string{"kubectl get webapps", "docs/", "helm uninstall " + release + " leaves the WebApp CRD"} {
			if !strings.Contains(r.Info.Notes, want) {
				t.Errorf("NOTES lack %q:\n%s", want, r.Info.Notes)
			}
		}
		if strings.Contains(r.Info.Notes, "does not enforce Pod Security") {
			t.Errorf("NOTES warn of Pod Security in a namespace that enforces restricted:\n%s", r.Info.Notes)
		}
		crd := mustGet(t, "apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "webapps.example.com")
		if got := field(crd, "metadata", "annotations", "helm.sh/resource-policy"); got != "keep" {
			t.Errorf("CRD helm.sh/resource-policy = %v; want keep", got)
		}
		runHook(t)
		newWebApp(t, "hello")
		if proxy.forwarded.Load() == 0 {
			t.Error("Metacontroller's calls did not go through the Service the chart names")
		}
	})

	t.Run("upgrade: a new log level rolls the hook, rewrites no child", func(t *testing.T) {
		before := snapshot(t)
		gen, _, sets := hookRollout(t, ns)
		cc := mustGet(t, "metacontroller.k8s.io/v1alpha1", "CompositeController", "", "webapp-controller")
		// The resync period too, so that the check below sees resyncs: a change of the
		// CompositeController's spec, after which Metacontroller restarts the controller and syncs
		// every WebApp again.
		r := helmJSON(t, "upgrade", release, chartDir, "--namespace", ns, "--set", "hook.logLevel=debug", "--set", "compositeController.resyncPeriodSeconds=5", "--wait", "--timeout", "3m")
		if r.Version != 2 {
			t.Errorf("release version %d; want 2", r.Version)
		}
		gen2, args, sets2 := hookRollout(t, ns)
		if gen2 <= gen || sets2 != sets+1 || !slices.Contains(args, any("--log-level=debug")) {
			t.Errorf("hook Deployment generation %v -> %v, ReplicaSets %d -> %d, args %v; want a rollout to --log-level=debug", gen, gen2, sets, sets2, args)
		}
		if got := field(mustGet(t, "metacontroller.k8s.io/v1alpha1", "CompositeController", "", "webapp-controller"), "spec", "resyncPeriodSeconds"); got != float64(5) {
			t.Errorf("resyncPeriodSeconds %v (was %v); want 5", got, field(cc, "spec", "resyncPeriodSeconds"))
		}
		runHook(t)
		unchanged(t, before)
	})

	t.Run("uninstall with crds.keep: the CRD and the WebApps stay", func(t *testing.T) {
		before := snapshot(t)
		out, err := helm("uninstall", release, "--namespace", ns, "--wait", "--timeout", "2m")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "webapps.example.com") {
			t.Errorf("helm uninstall said\n%s\nwant it to name the CRD it kept", out)
		}
		if crd, err := client.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "webapps.example.com"); err != nil || crd == nil {
			t.Fatalf("CRD after uninstall: %v, %v; want it kept", crd, err)
		}
		for _, kind := range []struct{ apiVersion, kind, ns, name string }{
			{"metacontroller.k8s.io/v1alpha1", "CompositeController", "", "webapp-controller"},
			{"apps/v1", "Deployment", ns, "webapp-hook"},
			{"rbac.authorization.k8s.io/v1", "ClusterRole", "", "webapp-edit"},
			{"admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", "", "webapp-no-escalation"},
		} {
			waitFor(t, kind.kind+" "+kind.name+" deleted", 30*time.Second, func() (bool, error) {
				o, err := client.get(kind.apiVersion, kind.kind, kind.ns, kind.name)
				return o == nil, err
			})
		}
		for name, want := range before {
			if got := versions(t, apps, name); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("WebApp %s: children %v -> %v after uninstall; want them all kept as they were", name, want, got)
			}
		}
	})

	t.Run("upgrade from an earlier chart keeps every WebApp, rewrites no child", func(t *testing.T) {
		// The suite applied the current CRD as its own field manager, and the earlier chart's CRD
		// is older (it has no rollout, for one): Helm's server-side apply takes it over, as the
		// earlier chart held it in a cluster that only ever had that chart.
		r := helmJSON(t, "install", release, earlierChart, "--namespace", ns, "--set", "compositeController.resyncPeriodSeconds=5", "--force-conflicts", "--wait", "--timeout", "3m")
		if r.Chart.Metadata.Version != "0.1.0" {
			t.Fatalf("installed chart %s; want the earlier 0.1.0", r.Chart.Metadata.Version)
		}
		runHook(t)
		// The WebApp made under the current chart, taken up again, and one made under the earlier.
		waitFor(t, "the earlier chart's controller syncing hello", 60*time.Second, func() (bool, error) {
			return hook.calls()["sync"] > 0, nil
		})
		waitStatus(t, apps, "hello", "Ready under the earlier chart", 90*time.Second, phaseIs(webappv1.PhaseReady))
		newWebApp(t, "second")
		uids := map[string]any{}
		for _, name := range webapps {
			uids[name] = field(mustGet(t, "example.com/v1", "WebApp", apps, name), "metadata", "uid")
		}
		before := snapshot(t)
		up := helmJSON(t, "upgrade", release, chartDir, "--namespace", ns, "--set", "compositeController.resyncPeriodSeconds=5", "--wait", "--timeout", "3m")
		if up.Chart.Metadata.Version == "0.1.0" || up.Info.Status != "deployed" {
			t.Fatalf("upgraded to chart %s, %s; want the current chart deployed", up.Chart.Metadata.Version, up.Info.Status)
		}
		runHook(t)
		unchanged(t, before)
		for name, uid := range uids {
			if got := field(mustGet(t, "example.com/v1", "WebApp", apps, name), "metadata", "uid"); got != uid {
				t.Errorf("WebApp %s uid %v -> %v; want the same WebApp", name, uid, got)
			}
			waitStatus(t, apps, name, "Ready after the upgrade", 30*time.Second, phaseIs(webappv1.PhaseReady))
		}
	})
	t.Run("TLS: the token is made once and every upgrade keeps it", func(t *testing.T) {
		// The hook's certificate is yours here (tls.source=secret): no cert-manager controller runs.
		// While TLS is on, Metacontroller, which dials HTTPS hooks directly, reaches no hook and
		// changes nothing; the WebApps are managed again once it is off.
		tlsSecret := obj{"apiVersion": "v1", "kind": "Secret", "metadata": obj{"name": "webapp-hook-tls", "namespace": ns},
			"data": obj{"tls.crt": "", "tls.key": "", "ca.crt": ""}}
		if _, err := client.create(tlsSecret); err != nil {
			t.Fatal(err)
		}
		token := func() (sent, accepted string) {
			t.Helper()
			a := mustGet(t, "v1", "Secret", ns, "webapp-hook-token")
			b := mustGet(t, "v1", "Secret", ns, "webapp-hook-tokens")
			return field(a, "data", "token").(string), field(b, "data", "tokens").(string)
		}
		tlsOn := []string{"--set", "tls.enabled=true", "--set", "tls.source=secret", "--set", "compositeController.resyncPeriodSeconds=5"}
		helmJSON(t, append([]string{"upgrade", release, chartDir, "--namespace", ns}, tlsOn...)...)
		sent, accepted := token()
		raw, _ := base64.StdEncoding.DecodeString(sent)
		if len(raw) < 32 {
			t.Fatalf("generated token of %d bytes; want 32 or more", len(raw))
		}
		helmJSON(t, append([]string{"upgrade", release, chartDir, "--namespace", ns, "--set", "hook.logLevel=warn"}, tlsOn...)...)
		if s, a := token(); s != sent || a != accepted {
			t.Error("an upgrade made a new token; want the one made at the first install with TLS kept")
		}
		// What make rotate-token leaves: a new token sent, and accepted alone.
		rotated := base64.StdEncoding.EncodeToString([]byte(randomHex(32)))
		for name, data := range map[string]obj{"webapp-hook-token": {"token": rotated}, "webapp-hook-tokens": {"tokens": rotated}} {
			p, _ := client.path("v1", "Secret", ns, name)
			if _, err := client.do("PATCH", p, "application/merge-patch+json", obj{"data": data}); err != nil {
				t.Fatal(err)
			}
		}
		helmJSON(t, append([]string{"upgrade", release, chartDir, "--namespace", ns}, tlsOn...)...)
		if s, a := token(); s != rotated || a != rotated {
			t.Error("an upgrade undid a rotation; want the Secrets' tokens kept as they are")
		}
		cc := mustGet(t, "metacontroller.k8s.io/v1alpha1", "CompositeController", "", "webapp-controller")
		if got := field(cc, "spec", "hooks", "sync", "webhook", "authorization", "secretRef", "name"); got != "webapp-hook-token" {
			t.Errorf("sync hook sends the token of %v; want webapp-hook-token", got)
		}
		// Back to plain HTTP, so that the WebApps are finalized at the end.
		helmJSON(t, "upgrade", release, chartDir, "--namespace", ns, "--set", "compositeController.resyncPeriodSeconds=5", "--wait", "--timeout", "3m")
		runHook(t)
		waitFor(t, "the controller over plain HTTP syncing again", 60*time.Second, func() (bool, error) {
			return hook.calls()["sync"] > 0, nil
		})
		for _, name := range webapps {
			waitStatus(t, apps, name, "Ready, TLS off again", 60*time.Second, phaseIs(webappv1.PhaseReady))
		}
	})
}

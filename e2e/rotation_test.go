//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	stdsync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/webhook"
)

// The rotation tests run hack/rotate-token.sh and hack/rotate-ca.sh against the real apiserver,
// with the real hook binary serving HTTPS and its token list, as the secure overlay deploys it.
// Two goroutines play the parts that need a kubelet and Metacontroller:
//   - kubeletSim copies the hook's Secrets to the files the hook reads, as the kubelet updates a
//     mounted Secret;
//   - metacontrollerSim reads the CompositeController rendered from metacontroller/secure and,
//     as Metacontroller does, resolves its webhook's authorization and caBundle Secrets with one
//     Get each when it starts the controller and again only when the CompositeController's spec
//     changes; meanwhile it calls /sync over TLS every 50 ms and counts every call that fails.
// The hook's pod is a Pod object bound to no real node whose status carries this machine's
// address, so that the script reaches its metrics through the apiserver's pod proxy as it would
// in a cluster.

const rotationNS = "webapp-system"

// hookHost is the host of the hook's URLs in metacontroller/secure, which the simulated
// Metacontroller dials on loopback and the certificates name.
const hookHost = "webapp-hook.webapp-system"

func secretObj(name string, data map[string][]byte) obj {
	d := obj{}
	for k, v := range data {
		d[k] = base64.StdEncoding.EncodeToString(v)
	}
	return obj{"apiVersion": "v1", "kind": "Secret", "metadata": obj{"name": name, "namespace": rotationNS}, "data": d}
}

// secretValue returns one key of a Secret, decoded.
func secretValue(name, key string) ([]byte, error) {
	s, err := client.get("v1", "Secret", rotationNS, name)
	if err != nil || s == nil {
		return nil, fmt.Errorf("Secret %s: %v", name, err)
	}
	v, _ := field(s, "data", key).(string)
	return base64.StdEncoding.DecodeString(v)
}

// kubeletSim writes Secret keys to files while it is not paused, replacing a file only when its
// content changed, by a rename as the kubelet swaps a mounted Secret.
type kubeletSim struct {
	paused atomic.Bool
	files  map[string][2]string // path: Secret name, key
}

func (k *kubeletSim) run(ctx context.Context, t *testing.T) {
	for {
		if !k.paused.Load() {
			for path, ref := range k.files {
				v, err := secretValue(ref[0], ref[1])
				if err != nil {
					t.Logf("kubelet: %v", err)
					continue
				}
				if old, _ := os.ReadFile(path); !bytes.Equal(old, v) {
					tmp := path + ".tmp"
					if err := os.WriteFile(tmp, v, 0o600); err == nil {
						os.Rename(tmp, path)
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// metacontrollerSim starts "the controller" from a CompositeController's spec as Metacontroller
// does: it resolves the sync webhook's authorization and caBundle once, and again only when the
// spec is no longer semantically equal to the one it started from.
type metacontrollerSim struct {
	controller, hookAddr string
	body                 []byte

	mu       stdsync.Mutex
	spec     any
	starts   int
	url      string
	header   string
	roots    *x509.CertPool
	client   *http.Client
	calls    int
	failures []string
}

// reconcile starts the controller again if the spec changed.
func (m *metacontrollerSim) reconcile() error {
	cc, err := client.get("metacontroller.k8s.io/v1alpha1", "CompositeController", "", m.controller)
	if err != nil || cc == nil {
		return fmt.Errorf("get CompositeController %s: %v", m.controller, err)
	}
	m.mu.Lock()
	same := m.client != nil && reflect.DeepEqual(cc["spec"], m.spec)
	m.mu.Unlock()
	if same {
		return nil
	}
	hook := field(cc, "spec", "hooks", "sync", "webhook")
	ref := func(path ...any) string { s, _ := field(hook, path...).(string); return s }
	if ns := ref("authorization", "secretRef", "namespace"); ns != rotationNS {
		return fmt.Errorf("authorization Secret in namespace %q; want %s", ns, rotationNS)
	}
	token, err := secretValue(ref("authorization", "secretRef", "name"), ref("authorization", "secretRef", "key"))
	if err != nil {
		return err
	}
	caKey := ref("caBundle", "secretRef", "key")
	if caKey == "" {
		caKey = "ca.crt" // Metacontroller's default
	}
	ca, err := secretValue(ref("caBundle", "secretRef", "name"), caKey)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return fmt.Errorf("caBundle holds no certificate")
	}
	u, err := url.Parse(ref("url"))
	if err != nil {
		return err
	}
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	transport := &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		// The Service name resolves to the hook on loopback; TLS still checks that name.
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, m.hookAddr)
		},
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.client != nil {
		m.client.CloseIdleConnections()
	}
	m.spec, m.url, m.roots = cc["spec"], u.String(), roots
	m.header = "Bearer " + strings.TrimSpace(string(token))
	m.client = &http.Client{Transport: transport, Timeout: 10 * time.Second}
	m.starts++
	return nil
}

// call POSTs the request to the sync URL with the resolved credentials, and counts a failure
// unless the answer is 200.
func (m *metacontrollerSim) call() {
	m.mu.Lock()
	c, u, header := m.client, m.url, m.header
	m.mu.Unlock()
	req, _ := http.NewRequest("POST", u, bytes.NewReader(m.body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", header)
	resp, err := c.Do(req)
	failure := ""
	switch {
	case err != nil:
		failure = err.Error()
	case resp.StatusCode != http.StatusOK:
		failure = resp.Status
	}
	if resp != nil {
		resp.Body.Close()
	}
	m.mu.Lock()
	m.calls++
	if failure != "" {
		m.failures = append(m.failures, time.Now().Format("15:04:05.000")+" "+failure)
	}
	m.mu.Unlock()
}

func (m *metacontrollerSim) run(ctx context.Context) {
	for i := 0; ; i++ {
		if i%2 == 0 {
			if err := m.reconcile(); err != nil {
				m.mu.Lock()
				m.failures = append(m.failures, "start controller: "+err.Error())
				m.mu.Unlock()
			}
		}
		m.call()
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// state returns what the simulated Metacontroller has done so far.
func (m *metacontrollerSim) state() (starts, calls int, failures []string, header string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.starts, m.calls, append([]string(nil), m.failures...), m.header
}

// hostAddress is an address of this machine that the apiserver may proxy to: not loopback nor
// link-local, which it refuses for pods.
func hostAddress() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// rotationRig is the hook, its Secrets, its pod, the kubelet and Metacontroller of one test.
type rotationRig struct {
	t          *testing.T
	dir        string
	kubelet    *kubeletSim
	mc         *metacontrollerSim
	env        []string
	hookLog    string
	tokens     []string     // every token value the test made, to search outputs for
	ca         *hooktest.CA // the CA the rig started with
	metricsURL string
}

func newRotationRig(t *testing.T) *rotationRig {
	t.Helper()
	requireCluster(t)
	if _, err := os.Stat(metacontrollerCRDs); err != nil {
		t.Skip("no " + metacontrollerCRDs + " beside the checkout: the CompositeController the scripts change needs Metacontroller's CRD, which is shared material, not part of the repository")
	}
	r := &rotationRig{t: t, dir: t.TempDir()}
	if _, err := client.create(obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": rotationNS}}); err != nil {
		if e, ok := err.(*apiError); !ok || e.Code != http.StatusConflict {
			t.Fatal(err)
		}
	}

	// The CompositeController as metacontroller/secure renders it.
	var cc obj
	for _, d := range secureOverlay(t) {
		if _, kind, _, _ := identity(d); kind == "CompositeController" {
			cc = d
		}
	}
	if cc == nil {
		t.Fatal("metacontroller/secure renders no CompositeController")
	}
	_, _, _, ccName := identity(cc)
	podName := "webapp-hook-e2e-" + randomHex(3)

	// Secrets as docs/security.md creates them.
	ca := hooktest.NewCA(t, "webapp-hook CA 1")
	r.ca = ca
	certPEM, keyPEM := ca.Issue(t, 10, hookHost, hookHost+".svc")
	token := randomHex(32)
	r.tokens = append(r.tokens, token)
	for _, s := range []obj{
		// A blank line after the CA, a comment and CRLF line ends in the token list, a trailing
		// newline after the token: what hands and editors leave, and the scripts must keep.
		secretObj("webapp-hook-tls", map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM, "ca.crt": append(append([]byte(nil), ca.PEM...), '\n')}),
		secretObj("webapp-hook-token", map[string][]byte{"token": []byte(token + "\n")}),
		secretObj("webapp-hook-tokens", map[string][]byte{"tokens": []byte("# Metacontroller's token\r\n" + token + "\r\n")}),
	} {
		if _, err := client.apply(s, "e2e", false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.apply(cc, "kubectl", false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range []string{
			"/apis/metacontroller.k8s.io/v1alpha1/compositecontrollers/" + ccName,
			"/api/v1/namespaces/" + rotationNS + "/secrets/webapp-hook-tls",
			"/api/v1/namespaces/" + rotationNS + "/secrets/webapp-hook-token",
			"/api/v1/namespaces/" + rotationNS + "/secrets/webapp-hook-tokens",
			// No kubelet will confirm the pod's end: it goes at once.
			"/api/v1/namespaces/" + rotationNS + "/pods/" + podName + "?gracePeriodSeconds=0",
		} {
			client.do("DELETE", p, "", nil)
		}
	})

	// The kubelet's copy of the Secrets, before the hook starts.
	files := func(name string) string { return filepath.Join(r.dir, name) }
	r.kubelet = &kubeletSim{files: map[string][2]string{
		files("tls.crt"): {"webapp-hook-tls", "tls.crt"},
		files("tls.key"): {"webapp-hook-tls", "tls.key"},
		files("tokens"):  {"webapp-hook-tokens", "tokens"},
	}}
	for path, ref := range r.kubelet.files {
		v, err := secretValue(ref[0], ref[1])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, v, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// The real hook, with the secure overlay's flags.
	bin := files("webapp-hook")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/webapp-hook").CombinedOutput(); err != nil {
		t.Fatalf("build the hook: %v\n%s", err, out)
	}
	host := hostAddress()
	metricsHost := host
	if host == "" {
		metricsHost = "127.0.0.1"
	}
	hookAddr, metricsAddr := "127.0.0.1:"+freePort(), net.JoinHostPort(metricsHost, freePort())
	r.hookLog = files("hook.log")
	logFile, err := os.Create(r.hookLog)
	if err != nil {
		t.Fatal(err)
	}
	hook := exec.Command(bin, "--addr", hookAddr, "--metrics-addr", metricsAddr,
		"--tls-cert-file", files("tls.crt"), "--tls-key-file", files("tls.key"), "--token-file", files("tokens"),
		"--shutdown-delay", "0s")
	hook.Stdout, hook.Stderr = logFile, logFile
	if err := hook.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hook.Process.Kill(); hook.Wait(); logFile.Close() })
	r.metricsURL = "http://" + metricsAddr + "/metrics"
	if err := waitHTTP(context.Background(), r.metricsURL, nil, 30*time.Second); err != nil {
		t.Fatalf("hook metrics: %v", err)
	}

	r.env = append(os.Environ(),
		"KUBECTL="+filepath.Join(cluster.bin, "kubectl"),
		"KUBECONFIG="+files("kubeconfig"),
		"NAMESPACE="+rotationNS, "CONTROLLER="+ccName,
		"STEP_TIMEOUT=60", "POLL_SECONDS=1")
	if err := os.WriteFile(files("kubeconfig"), []byte(cluster.kubeconfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	if host != "" {
		// The hook's pod: its metrics port, and this machine's address as its IP.
		_, metricsPort, _ := net.SplitHostPort(metricsAddr)
		pod := obj{"apiVersion": "v1", "kind": "Pod",
			"metadata": obj{"name": podName, "namespace": rotationNS, "labels": obj{"app.kubernetes.io/name": "webapp-hook"}},
			"spec": obj{"nodeName": "webapp-hook-e2e-host", "containers": []any{obj{"name": "hook", "image": "webapp-hook:e2e",
				"ports": []any{obj{"name": "http", "containerPort": 8080}, obj{"name": "metrics", "containerPort": mustAtoi(t, metricsPort)}}}}}}
		created, err := client.create(pod)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.updateStatus(created, obj{"phase": "Running", "hostIP": host, "podIP": host, "podIPs": []any{obj{"ip": host}}}); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Logf("this machine has no address but loopback, which the apiserver refuses to proxy to a pod; the scripts read the hook's metrics at %s instead", r.metricsURL)
		r.env = append(r.env, "HOOK_METRICS_URLS="+r.metricsURL)
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg stdsync.WaitGroup
	body, err := os.ReadFile("../examples/create.request.json")
	if err != nil {
		t.Fatal(err)
	}
	r.mc = &metacontrollerSim{controller: ccName, hookAddr: hookAddr, body: body}
	if err := r.mc.reconcile(); err != nil {
		t.Fatal(err)
	}
	wg.Add(2)
	go func() { defer wg.Done(); r.kubelet.run(ctx, t) }()
	go func() { defer wg.Done(); r.mc.run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return r
}

// script runs a hack/ script with the rig's environment and extra settings, and returns its
// output and whether it succeeded.
func (r *rotationRig) script(name string, extra ...string) (string, bool) {
	r.t.Helper()
	cmd := exec.Command("bash", "../hack/"+name)
	cmd.Env = append(append([]string(nil), r.env...), extra...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	r.t.Logf("%s (%s, err %v):\n%s", name, time.Since(start).Round(time.Millisecond), err, out)
	return string(out), err == nil
}

// checkNoFailedCall checks that the simulated Metacontroller made calls and that none failed.
func (r *rotationRig) checkNoFailedCall() {
	r.t.Helper()
	_, calls, failures, _ := r.mc.state()
	if calls < 20 {
		r.t.Errorf("Metacontroller made %d calls; want a steady stream", calls)
	}
	if len(failures) > 0 {
		r.t.Errorf("%d of %d calls failed; want none:\n%s", len(failures), calls, strings.Join(failures, "\n"))
	}
}

// checkSecretsStaySecret searches the scripts' output and the hook's log for every token value.
func (r *rotationRig) checkSecretsStaySecret(outputs ...string) {
	r.t.Helper()
	hookLog, _ := os.ReadFile(r.hookLog)
	all := strings.Join(outputs, "\n") + string(hookLog)
	for _, tok := range r.tokens {
		if strings.Contains(all, tok) || strings.Contains(all, base64.StdEncoding.EncodeToString([]byte(tok))) {
			r.t.Errorf("the token %s appears in a script's output or the hook's log", webhook.Fingerprint(tok))
		}
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRotateToken runs hack/rotate-token.sh while Metacontroller calls the hook without pause:
// no call fails, Metacontroller ends up sending the new token, the hook accepts only it, and no
// token's value shows in the script's output or the hook's log. With the kubelet stalled, the
// script stops at the first step with a message, and the old token stays in force.
func TestRotateToken(t *testing.T) {
	r := newRotationRig(t)
	oldToken, _ := secretValue("webapp-hook-token", "token")
	oldToken = bytes.TrimSpace(oldToken)
	newToken := randomHex(32)
	r.tokens = append(r.tokens, newToken)

	out, ok := r.script("rotate-token.sh", "NEW_TOKEN="+newToken)
	if !ok {
		t.Fatal("rotate-token.sh failed")
	}
	r.checkNoFailedCall()
	starts, _, _, header := r.mc.state()
	if starts != 2 {
		t.Errorf("Metacontroller started the controller %d times; want 2: once, and once for the spec change", starts)
	}
	if header != "Bearer "+newToken {
		t.Errorf("Metacontroller sends the token %s; want the new one %s", webhook.Fingerprint(strings.TrimPrefix(header, "Bearer ")), webhook.Fingerprint(newToken))
	}
	if got, _ := secretValue("webapp-hook-tokens", "tokens"); string(got) != "# Metacontroller's token\r\n"+newToken+"\n" {
		t.Errorf("webapp-hook-tokens holds %d lines; want its comment and the new token", strings.Count(string(got), "\n"))
	}
	for _, want := range []string{"5/5 retired " + webhook.Fingerprint(string(oldToken)), "done"} {
		if !strings.Contains(out, want) {
			t.Errorf("the script's output lacks %q", want)
		}
	}
	// The hook refuses the old token now.
	req, _ := http.NewRequest("POST", r.mc.url, strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+string(oldToken))
	if resp, err := r.mc.client.Do(req); err != nil {
		t.Error(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a call with the retired token = %d; want 401", resp.StatusCode)
	}

	stranded := randomHex(32)
	r.tokens = append(r.tokens, stranded)
	t.Run("a step that does not complete", func(t *testing.T) {
		r.kubelet.paused.Store(true)
		defer r.kubelet.paused.Store(false)
		out, ok := r.script("rotate-token.sh", "NEW_TOKEN="+stranded, "STEP_TIMEOUT=8")
		if ok {
			t.Fatal("rotate-token.sh succeeded while the hook could not see the new token; want it to stop")
		}
		want := "FAILED: not done after 8s: every hook replica accepts " + webhook.Fingerprint(stranded)
		if !strings.Contains(out, want) {
			t.Errorf("the script's output lacks %q", want)
		}
		if got, _ := secretValue("webapp-hook-token", "token"); string(got) != newToken {
			t.Errorf("webapp-hook-token changed to %s; a stopped rotation must leave Metacontroller's token alone", webhook.Fingerprint(string(got)))
		}
		if _, _, _, header := r.mc.state(); header != "Bearer "+newToken {
			t.Errorf("Metacontroller sends %s; want %s still", webhook.Fingerprint(strings.TrimPrefix(header, "Bearer ")), webhook.Fingerprint(newToken))
		}
		r.checkNoFailedCall()
		r.checkSecretsStaySecret(out)
	})

	t.Run("run again after a stop", func(t *testing.T) {
		// The stranded token is still listed; a new run retires it with the one in use.
		out, ok := r.script("rotate-token.sh")
		if !ok {
			t.Fatal("rotate-token.sh failed")
		}
		if want := "also lists " + webhook.Fingerprint(stranded); !strings.Contains(out, want) {
			t.Errorf("the script's output lacks %q", want)
		}
		_, _, _, header := r.mc.state()
		current := strings.TrimPrefix(header, "Bearer ")
		r.tokens = append(r.tokens, current)
		if current == newToken || current == stranded {
			t.Errorf("Metacontroller sends %s still; want a new token", webhook.Fingerprint(current))
		}
		if got, _ := secretValue("webapp-hook-tokens", "tokens"); string(got) != "# Metacontroller's token\r\n"+current+"\n" {
			t.Errorf("webapp-hook-tokens holds %d lines; want its comment and the token in use", strings.Count(string(got), "\n"))
		}
		r.checkNoFailedCall()
		r.checkSecretsStaySecret(out)
	})
	r.checkSecretsStaySecret(out)
}

// TestRotateCA runs hack/rotate-ca.sh while Metacontroller calls the hook without pause: no call
// fails, the hook serves the certificate from the new CA, and Metacontroller trusts the new CA
// alone.
func TestRotateCA(t *testing.T) {
	r := newRotationRig(t)
	ca := hooktest.NewCA(t, "webapp-hook CA 2")
	certPEM, keyPEM := ca.Issue(t, 20, hookHost, hookHost+".svc")
	write := func(name string, data []byte) string {
		p := filepath.Join(r.dir, "new-"+name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	caFile, certFile, keyFile := write("ca.crt", ca.PEM), write("tls.crt", certPEM), write("tls.key", keyPEM)

	before, err := secretValue("webapp-hook-tls", "ca.crt")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("refuses a certificate the CA did not sign", func(t *testing.T) {
		other := hooktest.NewCA(t, "someone else")
		otherCert, otherKey := other.Issue(t, 30, hookHost, hookHost+".svc")
		out, ok := r.script("rotate-ca.sh", "CA_CERT="+caFile, "TLS_CERT="+write("other.crt", otherCert), "TLS_KEY="+write("other.key", otherKey))
		if ok || !strings.Contains(out, "is not signed by") {
			t.Errorf("rotate-ca.sh with a certificate from another CA: ok=%v; want it to stop before changing anything", ok)
		}
		if got, _ := secretValue("webapp-hook-tls", "ca.crt"); !bytes.Equal(got, before) {
			t.Error("webapp-hook-tls ca.crt changed")
		}
	})

	out, ok := r.script("rotate-ca.sh", "CA_CERT="+caFile, "TLS_CERT="+certFile, "TLS_KEY="+keyFile)
	if !ok {
		t.Fatal("rotate-ca.sh failed")
	}
	r.checkNoFailedCall()
	if starts, _, _, _ := r.mc.state(); starts != 3 {
		t.Errorf("Metacontroller started the controller %d times; want 3: once, and once for each CA bundle", starts)
	}
	if got, _ := secretValue("webapp-hook-tls", "ca.crt"); !bytes.Equal(got, ca.PEM) {
		t.Errorf("webapp-hook-tls ca.crt is not the new CA alone:\n%s", got)
	}
	// Metacontroller trusts the new CA and only it, and the hook serves the new certificate.
	r.mc.mu.Lock()
	roots := r.mc.roots
	r.mc.mu.Unlock()
	conn, err := tls.Dial("tcp", r.mc.hookAddr, &tls.Config{RootCAs: roots, ServerName: hookHost})
	if err != nil {
		t.Fatalf("TLS to the hook with the CA Metacontroller trusts: %v", err)
	}
	served := conn.ConnectionState().PeerCertificates[0]
	conn.Close()
	if served.SerialNumber.Int64() != 20 {
		t.Errorf("the hook serves certificate %d; want 20, from the new CA", served.SerialNumber)
	}
	if _, err := served.Verify(x509.VerifyOptions{Roots: roots}); err != nil {
		t.Error(err)
	}
	oldPEM, _ := r.ca.Issue(t, 11, hookHost, hookHost+".svc")
	block, _ := pem.Decode(oldPEM)
	old, _ := x509.ParseCertificate(block.Bytes)
	if _, err := old.Verify(x509.VerifyOptions{Roots: roots, DNSName: hookHost}); err == nil {
		t.Error("Metacontroller still trusts a certificate from the old CA")
	}
	r.checkSecretsStaySecret(out)
}

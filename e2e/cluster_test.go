//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// controlPlane is etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok, each a
// real process on a free loopback port, with its log in dir.
type controlPlane struct {
	dir    string
	bin    string
	server string // https://127.0.0.1:port
	token  string
	// users maps each of testUsers to its bearer token.
	users map[string]string
	procs []*process
}

// testUsers are users with no rights of their own beyond those of every authenticated user (the
// apiserver authorizes with RBAC), for tests to bind roles to: alice, bob, carol and dave as
// people, metacontroller-e2e as a Metacontroller with least privilege.
var testUsers = []string{"alice", "bob", "carol", "dave", "metacontroller-e2e"}

type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan error
}

// startControlPlane starts every component and waits until the apiserver is ready and the kwok
// node is Ready. On error, whatever was started has been stopped.
func startControlPlane(ctx context.Context, bin string) (cp *controlPlane, err error) {
	dir, err := os.MkdirTemp("", "webapp-e2e-")
	if err != nil {
		return nil, err
	}
	cp = &controlPlane{dir: dir, bin: bin, token: randomHex(16), users: map[string]string{}}
	defer func() {
		if err != nil {
			cp.stop()
		}
	}()

	etcdClient, etcdPeer := freePort(), freePort()
	if err := cp.start("etcd",
		"--name", "e2e",
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", "http://127.0.0.1:"+etcdClient,
		"--advertise-client-urls", "http://127.0.0.1:"+etcdClient,
		"--listen-peer-urls", "http://127.0.0.1:"+etcdPeer,
		"--initial-advertise-peer-urls", "http://127.0.0.1:"+etcdPeer,
		"--initial-cluster", "e2e=http://127.0.0.1:"+etcdPeer,
		"--listen-metrics-urls", "http://127.0.0.1:"+freePort(),
		"--unsafe-no-fsync",
		"--log-level", "warn",
	); err != nil {
		return cp, err
	}
	if err := waitHTTP(ctx, "http://127.0.0.1:"+etcdClient+"/health", nil, 30*time.Second); err != nil {
		return cp, fmt.Errorf("etcd: %w\n%s", err, cp.tail("etcd"))
	}

	keyFile := filepath.Join(dir, "sa.key")
	if err := writeRSAKey(keyFile); err != nil {
		return cp, err
	}
	// The admin, which every component and most tests use, is in system:masters, so that RBAC
	// allows it everything; the test users are in no group of their own.
	tokens := filepath.Join(dir, "tokens.csv")
	csv := cp.token + ",admin,admin,system:masters\n"
	for _, u := range testUsers {
		cp.users[u] = randomHex(16)
		csv += cp.users[u] + "," + u + "," + u + "\n"
	}
	if err := os.WriteFile(tokens, []byte(csv), 0o600); err != nil {
		return cp, err
	}
	certDir := filepath.Join(dir, "certs")
	securePort := freePort()
	cp.server = "https://127.0.0.1:" + securePort
	if err := cp.start("kube-apiserver",
		"--etcd-servers", "http://127.0.0.1:"+etcdClient,
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--secure-port", securePort,
		"--cert-dir", certDir,
		"--endpoint-reconciler-type", "none",
		"--token-auth-file", tokens,
		// As a real cluster authorizes: the WebApp admission policy asks this authorizer what
		// a WebApp's author may do.
		"--authorization-mode", "Node,RBAC",
		"--service-account-key-file", keyFile,
		"--service-account-signing-key-file", keyFile,
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-cluster-ip-range", "10.96.0.0/16",
		// The ServiceAccount plugin refuses pods of a ServiceAccount that does not exist, as in
		// every real cluster (TestMetacontrollerProduction).
		"--disable-admission-plugins", "TaintNodesByCondition",
	); err != nil {
		return cp, err
	}
	if err := waitHTTP(ctx, cp.server+"/readyz", map[string]string{"Authorization": "Bearer " + cp.token}, 90*time.Second); err != nil {
		return cp, fmt.Errorf("kube-apiserver: %w\n%s", err, cp.tail("kube-apiserver"))
	}

	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(cp.kubeconfig()), 0o600); err != nil {
		return cp, err
	}
	if err := cp.start("kube-controller-manager",
		"--kubeconfig", kubeconfig,
		"--leader-elect=false",
		// clusterrole-aggregation fills edit, admin and view from the roles labelled
		// aggregate-to-*, such as webapp-edit and webapp-view; resourcequota reports the use
		// that quota admission compares with; endpointslice lists the real node's Ready pods
		// behind each Service; root-ca-cert-publisher makes kube-root-ca.crt.
		"--controllers", "deployment,replicaset,endpointslice,garbagecollector,namespace,serviceaccount,root-ca-cert-publisher,disruption,horizontalpodautoscaling,clusterrole-aggregation,resourcequota",
		// Every namespace gets the kube-root-ca.crt ConfigMap, as in a real cluster: the kubelet
		// mounts it with a pod's ServiceAccount token.
		"--root-ca-file", filepath.Join(certDir, "apiserver.crt"),
		"--secure-port", "0",
		// Rates that let the scale benchmark's thousands of pods come and go at the speed of a
		// real cluster's control plane, not of client-go's defaults.
		"--kube-api-qps", "300", "--kube-api-burst", "600",
	); err != nil {
		return cp, err
	}
	if err := cp.start("kube-scheduler",
		"--kubeconfig", kubeconfig,
		"--leader-elect=false",
		"--secure-port", "0",
		"--kube-api-qps", "300", "--kube-api-burst", "600",
	); err != nil {
		return cp, err
	}
	stages, _ := filepath.Glob(filepath.Join(bin, "kwok-stages", "*.yaml"))
	// Beside kwok's fast stages, stages of pods in trouble: an image that cannot be pulled, a
	// container that crashes (testdata/kwok-stages.yaml).
	stages = append(stages, "testdata/kwok-stages.yaml")
	kwokArgs := []string{
		"--kubeconfig", kubeconfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector", "kwok.x-k8s.io/node=fake",
		"--node-ip", "10.0.0.2",
		"--cidr", "10.1.0.0/16",
		"--server-address", "127.0.0.1:" + freePort(),
	}
	for _, s := range stages {
		kwokArgs = append(kwokArgs, "--config", s)
	}
	if err := cp.start("kwok", kwokArgs...); err != nil {
		return cp, err
	}
	return cp, nil
}

// start runs bin/name with args, logging to dir/name.log.
func (cp *controlPlane) start(name string, args ...string) error {
	p, err := startProcess(cp.dir, cp.bin, name, nil, args...)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, p)
	return nil
}

// startProcess runs bin/name with args in a process group of its own, killed if the suite dies,
// logging to dir/name.log. env, when not nil, is the whole environment.
func startProcess(dir, bin, name string, env []string, args ...string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait(); logFile.Close() }()
	return p, nil
}

// stop ends every process, newest first: SIGTERM, then SIGKILL after 10 s. It removes dir unless
// E2E_KEEP is set, to read the logs.
func (cp *controlPlane) stop() {
	stopAll(cp.procs, 10*time.Second)
	cp.procs = nil
	if os.Getenv("E2E_KEEP") == "" {
		os.RemoveAll(cp.dir)
	} else {
		fmt.Fprintf(os.Stderr, "e2e: logs kept in %s\n", cp.dir)
	}
}

// stopAll ends each of procs, newest first, with its process group: SIGTERM, then SIGKILL once
// grace has passed, and waits for each to exit.
func stopAll(procs []*process, grace time.Duration) {
	for i := len(procs) - 1; i >= 0; i-- {
		p := procs[i]
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
}

// exited reports the first component that has stopped running, for error messages.
func (cp *controlPlane) exited() error {
	for _, p := range cp.procs {
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("%s exited: %v\n%s", p.name, err, cp.tail(p.name))
		default:
		}
	}
	return nil
}

// tail returns the end of a component's log.
func (cp *controlPlane) tail(name string) string {
	b, _ := os.ReadFile(filepath.Join(cp.dir, name+".log"))
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

func (cp *controlPlane) kubeconfig() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: %s
contexts:
- name: e2e
  context:
    cluster: e2e
    user: admin
current-context: e2e
`, cp.server, cp.token)
}

// insecureLoopbackClient talks to the throwaway apiserver, whose certificate is self-signed at start.
func insecureLoopbackClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig.InsecureSkipVerify = true
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

func waitHTTP(ctx context.Context, url string, header map[string]string, timeout time.Duration) error {
	hc := insecureLoopbackClient()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			err = fmt.Errorf("%s: %s", url, resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("not ready after %s: %w", timeout, last)
}

// freePort asks the kernel for a free loopback port.
func freePort() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}

func writeRSAKey(path string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	pem.Encode(&buf, &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	return os.WriteFile(path, buf.Bytes(), 0o600)
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// binaries returns the folder of the control-plane binaries, building them with
// hack/kube-binaries.sh when some are missing, or an error saying why they cannot be had.
func binaries() (string, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(root, "bin")
	want := []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "kubectl", "cert-manager-crds", "helm"}
	var missing []string
	for _, name := range want {
		if _, err := os.Stat(filepath.Join(bin, name)); err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return bin, nil
	}
	if os.Getenv("E2E_NO_BUILD") != "" {
		return "", fmt.Errorf("missing %s in %s and E2E_NO_BUILD is set; run hack/kube-binaries.sh", strings.Join(missing, ", "), bin)
	}
	fmt.Fprintf(os.Stderr, "e2e: building %s with hack/kube-binaries.sh (about 6 minutes the first time)\n", strings.Join(missing, ", "))
	cmd := exec.Command("bash", filepath.Join(root, "hack", "kube-binaries.sh"))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("hack/kube-binaries.sh could not build %s: %w", strings.Join(missing, ", "), err)
	}
	return bin, nil
}

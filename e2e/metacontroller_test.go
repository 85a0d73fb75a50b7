//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// metacontrollerBinary is the real Metacontroller v4.17.2, shared beside the checkout and never
// copied into the repository (../shared/metacontroller/bin/README.md says how it was built).
const metacontrollerBinary = "../../shared/metacontroller/bin/metacontroller"

// requireMetacontroller skips a test that needs the real Metacontroller when the shared binary is
// not beside the checkout.
func requireMetacontroller(t testing.TB) string {
	t.Helper()
	path, err := filepath.Abs(metacontrollerBinary)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no real Metacontroller at %s (shared material beside the checkout, not part of the repository): %v", metacontrollerBinary, err)
	}
	return path
}

var (
	hookBuild    sync.Once
	hookBinary   string
	hookBuildErr error
)

// removeHookBuild removes what buildHook built, at the end of the test binary.
func removeHookBuild() {
	if hookBinary != "" {
		os.RemoveAll(filepath.Dir(hookBinary))
	}
}

// buildHook builds cmd/webapp-hook once per test binary, so that tests can run, kill and restart
// the hook as a process of its own, as it runs in a cluster.
func buildHook(t testing.TB) string {
	t.Helper()
	hookBuild.Do(func() {
		dir, err := os.MkdirTemp("", "webapp-hook-bin-")
		if err != nil {
			hookBuildErr = err
			return
		}
		hookBinary = filepath.Join(dir, "webapp-hook")
		out, err := exec.Command("go", "build", "-o", hookBinary, "../cmd/webapp-hook").CombinedOutput()
		if err != nil {
			hookBuildErr = fmt.Errorf("go build ./cmd/webapp-hook: %v\n%s", err, out)
		}
	})
	if hookBuildErr != nil {
		t.Fatal(hookBuildErr)
	}
	return hookBinary
}

// daemon is a process a test starts and stops: the hook or Metacontroller, with its log in a file.
type daemon struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan error
}

// startDaemon runs path with args, logging to dir/name.log (appended, so that a restart keeps the
// earlier log).
func startDaemon(dir, name string, env []string, path string, args ...string) (*daemon, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, log: logPath, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait(); logFile.Close() }()
	return d, nil
}

// stop sends sig, then SIGKILL after 10 s, and waits for the process to end.
func (d *daemon) stop(sig syscall.Signal) {
	syscall.Kill(-d.cmd.Process.Pid, sig)
	select {
	case err := <-d.done:
		d.done <- err
	case <-time.After(10 * time.Second):
		syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		d.done <- <-d.done
	}
}

// exited returns the process's end, or nil while it runs.
func (d *daemon) exited() error {
	select {
	case err := <-d.done:
		d.done <- err
		return fmt.Errorf("%s exited: %v\n%s", d.name, err, tailFile(d.log, 3000))
	default:
		return nil
	}
}

func tailFile(path string, n int) string {
	b, _ := os.ReadFile(path)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// cpuSeconds is the user and system CPU time the process has used so far, from /proc.
func (d *daemon) cpuSeconds() float64 { return procCPUSeconds(d.cmd.Process.Pid) }

// procCPUSeconds is the user and system CPU time process pid has used so far, from
// /proc/pid/stat; 0 when it cannot be read.
func procCPUSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name in parentheses may hold spaces; the fields after it are fixed.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ is 100 on Linux
}

// peakRSS is the process's peak resident memory in bytes so far (VmHWM), from /proc.
func (d *daemon) peakRSS() int64 {
	return procStatusKB(d.cmd.Process.Pid, "VmHWM:") * 1024
}

func procStatusKB(pid int, key string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), key); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// hookProcess is the real hook binary serving on fixed loopback ports, so that it can be killed
// and started again where Metacontroller expects it.
type hookProcess struct {
	*daemon
	bin, dir, addr, metricsAddr string
	args, env                   []string
}

// startHook builds and starts the hook on free loopback ports, with the flags and environment of
// the install's hook container, and waits until it is ready. It is stopped when t ends.
func startHook(t testing.TB, in install) *hookProcess {
	t.Helper()
	h := &hookProcess{bin: buildHook(t), dir: t.TempDir(), addr: "127.0.0.1:" + freePort(), metricsAddr: "127.0.0.1:" + freePort(), args: in.hookArgs, env: in.hookEnv}
	h.restart(t)
	t.Cleanup(func() {
		h.stop(syscall.SIGTERM)
		if t.Failed() {
			t.Logf("hook log:\n%s", tailFile(h.log, 3000))
		}
	})
	return h
}

// restart starts the hook again on the same ports, after a stop or a kill.
func (h *hookProcess) restart(t testing.TB) {
	t.Helper()
	args := append([]string{"--addr=" + h.addr, "--metrics-addr=" + h.metricsAddr, "--shutdown-delay=0s"}, h.args...)
	d, err := startDaemon(h.dir, "webapp-hook", h.env, h.bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	h.daemon = d
	if err := waitHTTP(context.Background(), "http://"+h.addr+"/readyz", nil, 20*time.Second); err != nil {
		t.Fatalf("hook not ready: %v\n%s", err, tailFile(h.log, 3000))
	}
}

// url is the base URL of the hooks.
func (h *hookProcess) url() string { return "http://" + h.addr }

// calls returns webapp_hook_requests_total summed by hook (sync, finalize, customize).
func (h *hookProcess) calls() map[string]float64 {
	return scrape("http://"+h.metricsAddr+"/metrics", "webapp_hook_requests_total", "hook")
}

// scrape sums a counter of a Prometheus text page by one label.
func scrape(url, metric, label string) map[string]float64 {
	out := map[string]float64{}
	scrapeLines(url, func(line string, v float64) {
		if !strings.HasPrefix(line, metric+"{") && !strings.HasPrefix(line, metric+" ") {
			return
		}
		key := ""
		if i := strings.Index(line, label+`="`); i >= 0 {
			rest := line[i+len(label)+2:]
			key = rest[:strings.IndexByte(rest, '"')]
		}
		out[key] += v
	})
	return out
}

// scrapeLines calls each with every line of the Prometheus text page at url whose value (its
// last field) is a number, and that value; it calls nothing when the page cannot be read.
func scrapeLines(url string, each func(line string, value float64)) {
	resp, err := http.Get(url)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	s := bufio.NewScanner(resp.Body)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		line := s.Text()
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			each(line, v)
		}
	}
}

// install is what a kustomize directory of the project renders, as the tests run it: the
// CompositeController, and the flags and environment of the hook's container.
type install struct {
	cc       obj
	hookArgs []string
	hookEnv  []string
}

// renderInstall renders kustomize dir (relative to the repository root) with kubectl's kustomize.
func renderInstall(t testing.TB, dir string) install {
	t.Helper()
	var in install
	for _, d := range renderKustomize(t, filepath.Join("..", dir)) {
		switch _, kind, _, name := identity(d); {
		case kind == "CompositeController":
			in.cc = d
		case kind == "Deployment" && name == "webapp-hook":
			containers, _ := field(d, "spec", "template", "spec", "containers").([]any)
			for _, c := range containers {
				if field(c, "name") != "hook" {
					continue
				}
				args, _ := field(c, "args").([]any)
				for _, a := range args {
					// The tests choose the listen addresses: free loopback ports.
					if s, _ := a.(string); !strings.HasPrefix(s, "--addr=") && !strings.HasPrefix(s, "--metrics-addr=") {
						in.hookArgs = append(in.hookArgs, s)
					}
				}
				env, _ := field(c, "env").([]any)
				for _, e := range env {
					if v, ok := field(e, "value").(string); ok {
						in.hookEnv = append(in.hookEnv, fmt.Sprintf("%s=%s", field(e, "name"), v))
					}
				}
			}
		}
	}
	if in.cc == nil {
		t.Fatalf("%s renders no CompositeController", dir)
	}
	return in
}

// compositeController returns the CompositeController of the install with its hooks pointed at
// hookURL instead of the in-cluster Service.
func (in install) compositeController(t testing.TB, hookURL string) obj {
	t.Helper()
	var cc obj
	if err := roundTrip(in.cc, &cc); err != nil {
		t.Fatal(err)
	}
	hooks, _ := field(cc, "spec", "hooks").(map[string]any)
	for name := range hooks {
		wh, _ := field(hooks, name, "webhook").(map[string]any)
		u, _ := wh["url"].(string)
		i := strings.Index(u, "://")
		j := strings.IndexByte(u[i+3:], '/')
		if i < 0 || j < 0 {
			t.Fatalf("hook %s has url %q; want http(s)://host/path", name, u)
		}
		wh["url"] = hookURL + u[i+3+j:]
	}
	return cc
}

// metacontroller is the real Metacontroller running against the suite's control plane, managing
// the CompositeController cc.
type metacontroller struct {
	*daemon
	metricsAddr string
	cc          obj
	finished    bool
}

// metacontrollerFlags are the flags every run passes: loopback addresses, and client rates that
// do not make a thousand WebApps wait on client-go's default of 5 requests a second.
func metacontrollerFlags(kubeconfig, metricsAddr string, workers int) []string {
	return []string{
		"--kubeconfig", kubeconfig,
		"--metrics-address", metricsAddr,
		"--health-probe-bind-address", "127.0.0.1:" + freePort(),
		"--discovery-interval", "5s",
		"--client-go-qps", "200",
		"--client-go-burst", "400",
		"--workers", strconv.Itoa(workers),
		"--zap-log-level", "info",
	}
}

// startMetacontroller applies cc and runs the real Metacontroller against the control plane, as
// the admin, until finish, or until t ends, with flags added to metacontrollerFlags.
func startMetacontroller(t testing.TB, cc obj, workers int, flags ...string) *metacontroller {
	t.Helper()
	return startMetacontrollerWith(t, cc, workers, filepath.Join(cluster.dir, "kubeconfig"), flags...)
}

// startMetacontrollerWith is startMetacontroller with Metacontroller reaching the apiserver
// through kubeconfig.
func startMetacontrollerWith(t testing.TB, cc obj, workers int, kubeconfig string, flags ...string) *metacontroller {
	t.Helper()
	bin := requireMetacontroller(t)
	if _, err := client.apply(cc, "webapp-e2e", false); err != nil {
		t.Fatalf("apply CompositeController: %v", err)
	}
	m := &metacontroller{metricsAddr: "127.0.0.1:" + freePort(), cc: cc}
	d, err := startDaemon(t.TempDir(), "metacontroller", nil, bin, append(metacontrollerFlags(kubeconfig, m.metricsAddr, workers), flags...)...)
	if err != nil {
		t.Fatal(err)
	}
	m.daemon = d
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("metacontroller log:\n%s", tailFile(m.log, 6000))
		}
		m.finish()
	})
	if err := waitHTTP(context.Background(), "http://"+m.metricsAddr+"/metrics", nil, 30*time.Second); err != nil {
		t.Fatalf("metacontroller: %v\n%s", err, tailFile(m.log, 3000))
	}
	return m
}

// finish deletes the CompositeController and stops Metacontroller; later calls do nothing.
func (m *metacontroller) finish() {
	if m.finished {
		return
	}
	m.finished = true
	_, _, _, name := identity(m.cc)
	p, _ := client.path("metacontroller.k8s.io/v1alpha1", "CompositeController", "", name)
	client.do("DELETE", p, "", nil)
	m.stop(syscall.SIGTERM)
}

// writes counts the writes Metacontroller has sent the apiserver (client-go's
// rest_client_requests_total, methods other than GET).
// waitQuiet waits, up to 90 s, for a window of 6 s in which Metacontroller writes nothing: it
// counts its writes for every WebApp of the cluster, so those of earlier tests must settle before
// a test counts its own.
func (m *metacontroller) waitQuiet(t testing.TB) {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); {
		w := m.writes()
		time.Sleep(6 * time.Second)
		if m.writes() == w {
			return
		}
	}
	t.Fatal("Metacontroller never went 6 s without a write in 90 s")
}

func (m *metacontroller) writes() float64 {
	total := 0.0
	for method, v := range scrape("http://"+m.metricsAddr+"/metrics", "rest_client_requests_total", "method") {
		if method != "GET" {
			total += v
		}
	}
	return total
}

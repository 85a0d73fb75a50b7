//go:build image

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
	"sigs.k8s.io/yaml"
)

// hookContainer is what metacontroller/base/hook.yaml says of the hook's container.
type hookContainer struct {
	Args                     []string
	Env                      []string // NAME=value
	RunAsUser, RunAsGroup    int64
	ReadOnlyRootFilesystem   bool
	AllowPrivilegeEscalation bool
	Drop                     []string
}

func readHookManifest(t *testing.T) hookContainer {
	t.Helper()
	return readContainer(t, "metacontroller/base/hook.yaml", "hook")
}

// readContainer is what the Deployment of the manifest file (relative to the repository) says of
// its container name: its args, the values of its environment (not those from the downward
// API), and its security context with the pod's.
func readContainer(t *testing.T, file, name string) hookContainer {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, file))
	if err != nil {
		t.Fatal(err)
	}
	type sc struct {
		RunAsUser                *int64
		RunAsGroup               *int64
		ReadOnlyRootFilesystem   *bool
		AllowPrivilegeEscalation *bool
		Capabilities             struct{ Drop []string }
	}
	for _, doc := range bytes.Split(b, []byte("\n---\n")) {
		var d struct {
			Kind string
			Spec struct {
				Template struct {
					Spec struct {
						SecurityContext sc
						Containers      []struct {
							Name            string
							Args            []string
							Env             []struct{ Name, Value string }
							SecurityContext sc
						}
					}
				}
			}
		}
		if err := yaml.Unmarshal(doc, &d); err != nil {
			t.Fatal(err)
		}
		if d.Kind != "Deployment" {
			continue
		}
		pod := d.Spec.Template.Spec
		for _, c := range pod.Containers {
			if c.Name != name {
				continue
			}
			s := c.SecurityContext
			if pod.SecurityContext.RunAsUser == nil || pod.SecurityContext.RunAsGroup == nil || s.ReadOnlyRootFilesystem == nil || s.AllowPrivilegeEscalation == nil {
				t.Fatalf("%s: the %s container's security context %+v, the pod's %+v; want runAsUser, runAsGroup, readOnlyRootFilesystem and allowPrivilegeEscalation", file, name, s, pod.SecurityContext)
			}
			h := hookContainer{Args: c.Args, RunAsUser: *pod.SecurityContext.RunAsUser, RunAsGroup: *pod.SecurityContext.RunAsGroup,
				ReadOnlyRootFilesystem: *s.ReadOnlyRootFilesystem, AllowPrivilegeEscalation: *s.AllowPrivilegeEscalation, Drop: s.Capabilities.Drop}
			for _, e := range c.Env {
				if e.Value != "" {
					h.Env = append(h.Env, e.Name+"="+e.Value)
				}
			}
			return h
		}
	}
	t.Fatalf("%s has no Deployment with a container named %s", file, name)
	return hookContainer{}
}

// runnable says why this machine cannot run containers under runc, or "" when it can.
func runnable() string {
	if os.Geteuid() != 0 {
		return fmt.Sprintf("runc runs the image as root, as CI does, and this test runs as uid %d", os.Geteuid())
	}
	if out, err := exec.Command("unshare", "--pid", "--mount", "--ipc", "--uts", "--fork", "true").CombinedOutput(); err != nil {
		return fmt.Sprintf("this machine cannot make the namespaces of a container (unshare --pid --mount --ipc --uts: %v: %s)", err, bytes.TrimSpace(out))
	}
	if entries, err := os.ReadDir("/sys/fs/cgroup"); err != nil || len(entries) == 0 {
		return fmt.Sprintf("this machine has no cgroup file system at /sys/fs/cgroup (%v)", err)
	}
	return ""
}

// bundle is an unpacked image, ready for runc.
type bundle struct {
	dir, stateRoot string
	spec           specs.Spec // as umoci wrote it from the image's config
	// mounts are added to the spec's, as a pod's volumes are.
	mounts []specs.Mount
}

// unpack copies the image b for this machine out with skopeo and unpacks it into a bundle in
// work with umoci, which writes config.json from the image's config.
func unpack(t *testing.T, b built, work string) *bundle {
	t.Helper()
	if _, err := command(2*time.Minute, "skopeo", "copy", "--override-os", "linux", "--override-arch", runtime.GOARCH,
		"oci-archive:"+b.archive, "oci:"+filepath.Join(work, "native")+":native"); err != nil {
		t.Fatal(err)
	}
	bd := &bundle{dir: filepath.Join(work, "bundle"), stateRoot: filepath.Join(work, "runc")}
	if _, err := command(2*time.Minute, "umoci", "unpack", "--image", filepath.Join(work, "native")+":native", bd.dir); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(bd.dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &bd.spec); err != nil {
		t.Fatal(err)
	}
	if bd.spec.Process == nil || bd.spec.Root == nil || bd.spec.Linux == nil {
		t.Fatalf("umoci's config.json lacks process, root or linux:\n%s", raw)
	}
	return bd
}

// withArgs writes the bundle's config: spec hardened as the manifest's security context says,
// without a network namespace of its own (the hook listens on the host's loopback), running
// the image's entrypoint with args and the manifest's environment.
func (b *bundle) withArgs(t *testing.T, m hookContainer, args []string) {
	t.Helper()
	s := b.spec
	p := *s.Process
	s.Process = &p
	p.Terminal = false
	p.Args = append(slices.Clone(b.spec.Process.Args), args...)
	p.Env = append(slices.Clone(p.Env), m.Env...)
	p.NoNewPrivileges = !m.AllowPrivilegeEscalation
	if slices.Contains(m.Drop, "ALL") {
		p.Capabilities = &specs.LinuxCapabilities{}
	}
	root := *s.Root
	root.Readonly = m.ReadOnlyRootFilesystem
	s.Root = &root
	linux := *s.Linux
	linux.Namespaces = slices.DeleteFunc(slices.Clone(linux.Namespaces), func(ns specs.LinuxNamespace) bool {
		return ns.Type == specs.NetworkNamespace
	})
	s.Linux = &linux
	s.Mounts = append(slices.Clone(s.Mounts), b.mounts...)
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.dir, "config.json"), out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// container is a runc run of the bundle, in the foreground: runc exits with the container.
type container struct {
	id, stateRoot string
	cmd           *exec.Cmd
	out           *lockedBuffer
	done          chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

var containers int

// start runs the bundle's config under runc; the container is killed and deleted at the end of
// the test, whatever happens.
func (b *bundle) start(t *testing.T) *container {
	t.Helper()
	containers++
	c := &container{id: fmt.Sprintf("webapp-hook-image-test-%d-%d", os.Getpid(), containers), stateRoot: b.stateRoot, out: &lockedBuffer{}, done: make(chan struct{})}
	c.cmd = exec.Command("runc", "--root", b.stateRoot, "run", "--bundle", b.dir, c.id)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			exec.Command("runc", "--root", c.stateRoot, "kill", c.id, "KILL").Run()
			select {
			case <-c.done:
			case <-time.After(10 * time.Second):
				c.cmd.Process.Kill()
			}
		}
		exec.Command("runc", "--root", c.stateRoot, "delete", "--force", c.id).Run()
	})
	return c
}

// wait waits at most d for the container to exit and returns its exit code.
func (c *container) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-c.done:
		return c.cmd.ProcessState.ExitCode()
	case <-time.After(d):
		t.Fatalf("the container has not exited after %s; its output:\n%s", d, c.out)
		return -1
	}
}

// pid is the host PID of the running container c, from runc state; the test fails when runc
// does not report c running.
func (b *bundle) pid(t *testing.T, c *container) int {
	t.Helper()
	state, err := command(time.Minute, "runc", "--root", b.stateRoot, "state", c.id)
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Pid    int
		Status string
	}
	if err := json.Unmarshal(state, &st); err != nil || st.Pid == 0 || st.Status != "running" {
		t.Fatalf("runc state %s (%v); want a running container", state, err)
	}
	return st.Pid
}

// run runs the bundle with args to its end, within a minute, and returns its exit code and output.
func (b *bundle) run(t *testing.T, m hookContainer, args ...string) (int, string) {
	t.Helper()
	b.withArgs(t, m, args)
	c := b.start(t)
	code := c.wait(t, time.Minute)
	return code, c.out.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

var client = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// status is the code of one request, or 0 when it got no answer.
func status(method, url string, body []byte) (int, []byte) {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// waitStatus polls url every 20 ms, for at most d, until it answers code, and returns how long that took.
func waitStatus(t *testing.T, url string, code int, d time.Duration, c *container) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		if got, _ := status("GET", url, nil); got == code {
			return time.Since(start)
		}
		select {
		case <-c.done:
			t.Fatalf("the container exited before %s answered %d; its output:\n%s", url, code, c.out)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Since(start) > d {
			t.Fatalf("%s did not answer %d within %s; the container's output:\n%s", url, code, d, c.out)
		}
	}
}

// procStatus reads the fields of /proc/PID/status.
func procStatus(t *testing.T, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	return fields
}

// rootMountOptions are the mount options of the root of PID's mount namespace.
func rootMountOptions(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	var opts []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 5 && f[4] == "/" {
			opts = strings.Split(f[5], ",") // the last mount on / is the one in force
		}
	}
	return opts
}

// withAddrs is the manifest's args with the listen addresses moved to the given loopback ports,
// the rest as they are; it fails when the manifest sets either address no longer.
func withAddrs(t *testing.T, args []string, hookPort, metricsPort int) []string {
	t.Helper()
	out := slices.Clone(args)
	set := map[string]int{"--addr": hookPort, "--metrics-addr": metricsPort}
	for i, a := range out {
		flag, _, _ := strings.Cut(a, "=")
		if port, ok := set[flag]; ok {
			out[i] = fmt.Sprintf("%s=127.0.0.1:%d", flag, port)
			delete(set, flag)
		}
	}
	if len(set) > 0 {
		t.Fatalf("hook.yaml's args %q: no --flag=value for %v", args, set)
	}
	return out
}

// flagValue is the duration a flag has: as args set it, else its default as --help prints it.
func flagValue(t *testing.T, args []string, help, flag string) time.Duration {
	t.Helper()
	s := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+flag+"="); ok {
			s = v
		}
	}
	if s == "" {
		m := regexp.MustCompile(`(?m)^\s+-` + regexp.QuoteMeta(flag) + ` duration\n[^\n]*\(default ([^)]+)\)`).FindStringSubmatch(help)
		if m == nil {
			t.Fatalf("--help does not give -%s's default:\n%s", flag, help)
		}
		s = m[1]
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("-%s %q: %v", flag, s, err)
	}
	return d
}

// clockAside replaces, in a decoded JSON value, every lastTransitionTime, which the hook takes
// from its clock, by a mark, once it has checked that it falls between from and to.
func clockAside(v any, from, to time.Time) error {
	var err error
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if s, ok := e.(string); ok && k == "lastTransitionTime" {
				at, perr := time.Parse(time.RFC3339, s)
				if perr != nil || at.Before(from.Truncate(time.Second)) || at.After(to) {
					err = fmt.Errorf("lastTransitionTime %q: want a time between %s and %s", s, from.Format(time.RFC3339), to.Format(time.RFC3339))
				}
				v[k] = "(the hook's clock)"
				continue
			}
			if e := clockAside(e, from, to); e != nil {
				err = e
			}
		}
	case []any:
		for _, e := range v {
			if e := clockAside(e, from, to); e != nil {
				err = e
			}
		}
	}
	return err
}

// TestRunc unpacks the image for this machine's architecture and runs it under runc as the
// Deployment of metacontroller/base/hook.yaml runs it: as the image's user, which must be the
// manifest's, with a read-only root file system, no capability and no privilege escalation,
// and the manifest's args and environment. The process is checked from outside (its uid, its
// capabilities, its root mount); /healthz, /readyz, /metrics and a /sync with
// examples/create.request.json answer; --version names the commit of the image's labels; on
// SIGTERM /readyz turns 503 and the hook exits 0 within --shutdown-delay plus --shutdown-timeout.
func TestRunc(t *testing.T) {
	if why := runnable(); why != "" {
		t.Skipf("cannot run containers here: %s", why)
	}
	b := readBuilt(t, builtDir, Hook)
	m := readHookManifest(t)
	// The image for this machine, alone in a layout, unpacked into a bundle by umoci.
	bd := unpack(t, b, t.TempDir())
	if u := bd.spec.Process.User; int64(u.UID) != m.RunAsUser || int64(u.GID) != m.RunAsGroup {
		t.Errorf("the image runs as %d:%d; hook.yaml runs it as %d:%d", u.UID, u.GID, m.RunAsUser, m.RunAsGroup)
	}
	if want := []string{"/webapp-hook"}; !slices.Equal(bd.spec.Process.Args, want) {
		t.Fatalf("the image runs %q; want its entrypoint %q", bd.spec.Process.Args, want)
	}
	if !m.ReadOnlyRootFilesystem || m.AllowPrivilegeEscalation || !slices.Equal(m.Drop, []string{"ALL"}) {
		t.Errorf("hook.yaml: readOnlyRootFilesystem %t, allowPrivilegeEscalation %t, drop %v; want true, false, [ALL]",
			m.ReadOnlyRootFilesystem, m.AllowPrivilegeEscalation, m.Drop)
	}

	labels := func() map[string]string {
		cf, err := b.platformImage(t, runtime.GOARCH).ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		return cf.Config.Labels
	}()
	t.Run("version", func(t *testing.T) {
		code, out := bd.run(t, m, "--version")
		want := "webapp-hook " + labels["org.opencontainers.image.version"] + " revision " + labels["org.opencontainers.image.revision"]
		if code != 0 || !strings.HasPrefix(out, want) {
			t.Errorf("--version: exit %d, %q; want 0 and it to start with %q", code, out, want)
		}
	})
	code, help := bd.run(t, m, "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d\n%s", code, help)
	}
	delay := flagValue(t, m.Args, help, "shutdown-delay")
	timeout := flagValue(t, m.Args, help, "shutdown-timeout")

	hookPort, metricsPort := freePort(t), freePort(t)
	bd.withArgs(t, m, withAddrs(t, m.Args, hookPort, metricsPort))
	hook := fmt.Sprintf("http://127.0.0.1:%d", hookPort)
	started := time.Now()
	c := bd.start(t)
	waitStatus(t, hook+"/readyz", 200, 30*time.Second, c)
	t.Logf("runc run to /readyz 200: %s", time.Since(started).Round(100*time.Microsecond))

	pid := bd.pid(t, c)
	t.Run("process", func(t *testing.T) {
		ps := procStatus(t, pid)
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		id := fmt.Sprintf("%d %d %d %d", m.RunAsUser, m.RunAsUser, m.RunAsUser, m.RunAsUser)
		gid := fmt.Sprintf("%d %d %d %d", m.RunAsGroup, m.RunAsGroup, m.RunAsGroup, m.RunAsGroup)
		checks := []struct{ what, got, want string }{
			{"Uid", ps["Uid"], id},
			{"Gid", ps["Gid"], gid},
			{"CapInh", ps["CapInh"], "0000000000000000"},
			{"CapPrm", ps["CapPrm"], "0000000000000000"},
			{"CapEff", ps["CapEff"], "0000000000000000"},
			{"CapBnd", ps["CapBnd"], "0000000000000000"},
			{"CapAmb", ps["CapAmb"], "0000000000000000"},
			{"NoNewPrivs", ps["NoNewPrivs"], "1"},
			{"root mounted read-only", strconv.FormatBool(slices.Contains(rootMountOptions(t, pid), "ro")), "true"},
			{"command line", strings.ReplaceAll(strings.TrimSuffix(string(cmdline), "\x00"), "\x00", " "),
				strings.Join(append([]string{"/webapp-hook"}, withAddrs(t, m.Args, hookPort, metricsPort)...), " ")},
		}
		for _, ck := range checks {
			if ck.got != ck.want {
				t.Errorf("the hook's process: %s = %q; want %q", ck.what, ck.got, ck.want)
			}
		}
	})

	request, err := os.ReadFile(filepath.Join(repo, "examples/create.request.json"))
	if err != nil {
		t.Fatal(err)
	}
	response, err := os.ReadFile(filepath.Join(repo, "examples/create.response.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("answers", func(t *testing.T) {
		for _, tt := range []struct {
			method, url string
			body        []byte
			want        int
			wantBody    []byte // JSON, compared as values, the hook's clock aside; nil: not checked
			contains    string
		}{
			{"GET", hook + "/healthz", nil, 200, nil, ""},
			{"GET", hook + "/readyz", nil, 200, nil, ""},
			{"POST", hook + "/sync", request, 200, response, ""},
			{"GET", fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort), nil, 200, nil, "webapp_hook_"},
		} {
			code, body := status(tt.method, tt.url, tt.body)
			if code != tt.want {
				t.Errorf("%s %s = %d %s; want %d", tt.method, tt.url, code, body, tt.want)
				continue
			}
			if !strings.Contains(string(body), tt.contains) {
				t.Errorf("%s %s lacks %q", tt.method, tt.url, tt.contains)
			}
			if tt.wantBody != nil {
				var got, want any
				if err := json.Unmarshal(body, &got); err != nil {
					t.Fatalf("%s %s: %v: %s", tt.method, tt.url, err, body)
				}
				json.Unmarshal(tt.wantBody, &want)
				if err := clockAside(got, started.Add(-time.Second), time.Now()); err != nil {
					t.Errorf("%s %s: %v", tt.method, tt.url, err)
				}
				clockAside(want, time.Time{}, time.Now())
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s %s answered\n%s\nwant examples/create.response.json", tt.method, tt.url, body)
				}
			}
		}
	})

	// SIGTERM: /readyz turns 503 while the hook keeps serving for the delay, then it drains and exits.
	term := time.Now()
	if _, err := command(time.Minute, "runc", "--root", bd.stateRoot, "kill", c.id, "TERM"); err != nil {
		t.Fatal(err)
	}
	notReady := waitStatus(t, hook+"/readyz", 503, delay, c)
	bound := delay + timeout
	code = c.wait(t, bound+5*time.Second)
	exited := time.Since(term)
	t.Logf("SIGTERM to /readyz 503: %s; SIGTERM to exit %d: %s (shutdown delay %s + timeout %s = %s); ran %s in all",
		notReady.Round(time.Microsecond), code, exited.Round(time.Millisecond), delay, timeout, bound, time.Since(started).Round(time.Millisecond))
	if code != 0 {
		t.Errorf("exit %d after SIGTERM; want 0. Output:\n%s", code, c.out)
	}
	if exited > bound {
		t.Errorf("exited %s after SIGTERM; want within the shutdown delay plus timeout, %s", exited, bound)
	}
	if exited < delay {
		t.Errorf("exited %s after SIGTERM; want it to serve for the shutdown delay, %s, first", exited, delay)
	}
	out := c.out.String()
	if !strings.Contains(out, `"msg":"shutting down"`) || strings.Contains(out, `"level":"ERROR"`) {
		t.Errorf("the hook's log lacks its shutdown or has an error:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(bd.stateRoot, c.id)); err == nil {
		t.Errorf("runc still has the container %s after it exited", c.id)
	}
}

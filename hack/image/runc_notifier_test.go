//go:build image

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// TestRuncNotifier unpacks the notifier's image for this machine's architecture and runs it
// under runc as the Deployment of metacontroller/notifications/notifier.yaml runs it: as the
// image's user, which must be the manifest's, with a read-only root file system, no capability
// and no privilege escalation, the manifest's args and environment, and the pod's namespace and
// name as the downward API gives them. Its kubeconfig, mounted read-only as a pod's volume would
// be, names an apiserver on a loopback port nobody listens on: the notifier serves /healthz and
// its metrics while it waits for it, and exits 0 on SIGTERM.
func TestRuncNotifier(t *testing.T) {
	if why := runnable(); why != "" {
		t.Skipf("cannot run containers here: %s", why)
	}
	b := readBuilt(t, notifierDir, Notifier)
	m := readContainer(t, "metacontroller/notifications/notifier.yaml", "notifier")
	work := t.TempDir()
	bd := unpack(t, b, work)
	if u := bd.spec.Process.User; int64(u.UID) != m.RunAsUser || int64(u.GID) != m.RunAsGroup {
		t.Errorf("the image runs as %d:%d; notifier.yaml runs it as %d:%d", u.UID, u.GID, m.RunAsUser, m.RunAsGroup)
	}
	if want := []string{Notifier.Entrypoint()}; !slices.Equal(bd.spec.Process.Args, want) {
		t.Fatalf("the image runs %q; want its entrypoint %q", bd.spec.Process.Args, want)
	}
	if !m.ReadOnlyRootFilesystem || m.AllowPrivilegeEscalation || !slices.Equal(m.Drop, []string{"ALL"}) {
		t.Errorf("notifier.yaml: readOnlyRootFilesystem %t, allowPrivilegeEscalation %t, drop %v; want true, false, [ALL]",
			m.ReadOnlyRootFilesystem, m.AllowPrivilegeEscalation, m.Drop)
	}
	m.Env = append(m.Env, "POD_NAMESPACE=webapp-system", "POD_NAME=webapp-notifier-0")

	if code, help := bd.run(t, m, "--help"); code != 0 || !strings.Contains(help, "Usage: webapp-notifier") {
		t.Fatalf("--help: exit %d\n%s", code, help)
	}

	kubeconfig := filepath.Join(work, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: none
  cluster:
    server: https://127.0.0.1:%d
users:
- name: none
  user:
    token: none
contexts:
- name: none
  context: {cluster: none, user: none}
current-context: none
`, freePort(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	const mounted = "/etc/webapp-notifier/kubeconfig"
	bd.mounts = []specs.Mount{{Destination: mounted, Type: "bind", Source: kubeconfig, Options: []string{"bind", "ro"}}}
	metricsPort := freePort(t)
	var args []string
	for _, a := range m.Args {
		if !strings.HasPrefix(a, "--metrics-addr=") {
			args = append(args, a)
		}
	}
	if len(args) == len(m.Args) {
		t.Fatalf("notifier.yaml's args %q: no --metrics-addr", m.Args)
	}
	args = append(args, fmt.Sprintf("--metrics-addr=127.0.0.1:%d", metricsPort), "--kubeconfig="+mounted)
	bd.withArgs(t, m, args)
	metrics := fmt.Sprintf("http://127.0.0.1:%d", metricsPort)
	started := time.Now()
	c := bd.start(t)
	waitStatus(t, metrics+"/healthz", 200, 30*time.Second, c)
	t.Logf("runc run to /healthz 200: %s", time.Since(started).Round(100*time.Microsecond))

	pid := bd.pid(t, c)
	ps := procStatus(t, pid)
	id := fmt.Sprintf("%d %d %d %d", m.RunAsUser, m.RunAsUser, m.RunAsUser, m.RunAsUser)
	gid := fmt.Sprintf("%d %d %d %d", m.RunAsGroup, m.RunAsGroup, m.RunAsGroup, m.RunAsGroup)
	for _, ck := range []struct{ what, got, want string }{
		{"Uid", ps["Uid"], id},
		{"Gid", ps["Gid"], gid},
		{"CapEff", ps["CapEff"], "0000000000000000"},
		{"CapBnd", ps["CapBnd"], "0000000000000000"},
		{"NoNewPrivs", ps["NoNewPrivs"], "1"},
		{"root mounted read-only", strconv.FormatBool(slices.Contains(rootMountOptions(t, pid), "ro")), "true"},
	} {
		if ck.got != ck.want {
			t.Errorf("the notifier's process: %s = %q; want %q", ck.what, ck.got, ck.want)
		}
	}
	if code, body := status("GET", metrics+"/metrics", nil); code != 200 || !strings.Contains(string(body), "webapp_notifier_events_total") {
		t.Errorf("GET /metrics = %d; want 200 and the notifier's counters:\n%s", code, body)
	}

	term := time.Now()
	if _, err := command(time.Minute, "runc", "--root", bd.stateRoot, "kill", c.id, "TERM"); err != nil {
		t.Fatal(err)
	}
	code := c.wait(t, 15*time.Second)
	t.Logf("SIGTERM to exit %d: %s; ran %s in all (on %s)", code, time.Since(term).Round(time.Millisecond), time.Since(started).Round(time.Millisecond), runtime.GOARCH)
	if code != 0 {
		t.Errorf("exit %d after SIGTERM; want 0. Output:\n%s", code, c.out)
	}
}

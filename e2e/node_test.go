//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	gosync "sync"
	"syscall"
	"testing"
	"time"
)

// The real node: a kubelet built from the pinned k8s.io/kubernetes, with containerd, runc and the
// CNI bridge plugin (hack/node-binaries.sh), registered with the suite's apiserver beside the kwok
// node. It carries a taint that only the real-pod scenarios tolerate, and a label they select, so
// that every other test keeps its pods on kwok.
const (
	realNodeName = "real-node-0"
	// realNodeLabel, with the value "real", is the label realWebApp's pods select.
	realNodeLabel = "webapp-e2e/node"
	// realNodeTaint is the NoSchedule taint the node registers with.
	realNodeTaint = "webapp-e2e/real-node"
	// sandboxImage is the pause image hack/node/images builds, pinned in containerd's config.
	sandboxImage = "registry.k8s.io/webapp-e2e/pause:1"
	// registryUser is the basic-auth user of the registry's private repositories.
	registryUser = "e2e"
)

// realNode is the running node and what it is made of.
type realNode struct {
	dir     string
	bin     string
	ip      string // the bridge's gateway address: the node's InternalIP
	subnet  string // the pods' /24
	bridge  string
	cgroup  string // the kubelet's cgroupRoot, under each cgroup v1 hierarchy
	procs   []*process
	started time.Time
	// made are the machine's own paths that the kubelet and containerd use whatever their
	// configuration says, and that did not exist before the node started: stop removes them.
	made []string
	// registry is the loopback registry's host:port, registryPassword its private repositories'
	// password.
	registry, registryPassword string
}

var (
	nodeOnce    gosync.Once
	node        *realNode
	nodeSkip    string // why the node is not there, when it is not
	nodeStartup time.Duration
)

// requireNode starts the real node the first time a test needs it, and skips the test, naming the
// check that failed, when this machine cannot run one.
func requireNode(t *testing.T) *realNode {
	t.Helper()
	requireCluster(t)
	requireMetacontroller(t)
	nodeOnce.Do(func() {
		if reason := nodeUnavailable(cluster.bin); reason != "" {
			nodeSkip = reason
			fmt.Fprintln(os.Stderr, "e2e: no real node:", reason)
			return
		}
		start := time.Now()
		n, err := startNode(cluster.bin, filepath.Join(cluster.dir, "node"))
		if err != nil {
			nodeSkip = "FAILED: " + err.Error()
			return
		}
		node, nodeStartup = n, time.Since(start)
		fmt.Fprintf(os.Stderr, "e2e: real node %s Ready in %s at %s (pods on %s)\n", realNodeName, nodeStartup.Round(time.Millisecond), n.ip, n.subnet)
	})
	if node == nil {
		if strings.HasPrefix(nodeSkip, "FAILED: ") {
			t.Fatalf("the real node did not start: %s", strings.TrimPrefix(nodeSkip, "FAILED: "))
		}
		t.Skipf("no real node on this machine: %s", nodeSkip)
	}
	return node
}

// nodeUnavailable returns which check of the machine fails, or "" when it can run the node: root
// (the kubelet and runc need it), runc, ip, a writable cgroup hierarchy, overlayfs, and the
// binaries of hack/node-binaries.sh.
func nodeUnavailable(bin string) string {
	if os.Geteuid() != 0 {
		return "not root: the kubelet, containerd and runc need root (uid 0)"
	}
	for _, cmd := range []string{"runc", "ip", "mount", "umount"} {
		if _, err := exec.LookPath(cmd); err != nil {
			return fmt.Sprintf("%s not in PATH (hack/container-tools.sh runc installs runc)", cmd)
		}
	}
	for _, b := range []string{"kubelet", "containerd", "containerd-shim-runc-v2", "ctr", "webapp-e2e-registry",
		"cni-plugins/bridge", "cni-plugins/host-local", "cni-plugins/loopback", "cni-plugins/portmap", "node-images/pause.tar", "node-images/testapp"} {
		if _, err := os.Stat(filepath.Join(bin, b)); err != nil {
			return fmt.Sprintf("bin/%s missing: run hack/node-binaries.sh (make node-binaries)", b)
		}
	}
	probe := ""
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		probe = "/sys/fs/cgroup/webapp-e2e-probe"
	} else {
		probe = "/sys/fs/cgroup/memory/webapp-e2e-probe"
	}
	if err := os.Mkdir(probe, 0o755); err != nil {
		return fmt.Sprintf("cannot make a cgroup (%s): %v", probe, err)
	}
	syscall.Rmdir(probe)
	fss, _ := os.ReadFile("/proc/filesystems")
	if !strings.Contains(string(fss), "overlay") {
		return "no overlay filesystem in /proc/filesystems: containerd's overlayfs snapshotter needs it"
	}
	return ""
}

// freeSubnet picks a /24 of 10.244.0.0/16 that no route of this machine uses, and a bridge name
// of its own, so that a second suite on the machine would not collide with this one.
func freeSubnet() (n int, err error) {
	out, err := exec.Command("ip", "-o", "route", "show", "table", "all").CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("ip route: %v: %s", err, out)
	}
	links, _ := exec.Command("ip", "-o", "link").CombinedOutput()
	for n = 100 + os.Getpid()%100; n < 250; n++ {
		if !strings.Contains(string(out), fmt.Sprintf("10.244.%d.", n)) && !strings.Contains(string(links), fmt.Sprintf("wbr%d:", n)) {
			return n, nil
		}
	}
	return 0, fmt.Errorf("no free 10.244.x.0/24 for the pods")
}

// startNode makes the bridge, starts the registry, containerd and the kubelet, and waits until
// the node is Ready. On error, whatever was made is taken down.
func startNode(bin, dir string) (n *realNode, err error) {
	k, err := freeSubnet()
	if err != nil {
		return nil, err
	}
	n = &realNode{dir: dir, bin: bin, ip: fmt.Sprintf("10.244.%d.1", k), subnet: fmt.Sprintf("10.244.%d.0/24", k),
		bridge: fmt.Sprintf("wbr%d", k), cgroup: fmt.Sprintf("webapp-e2e-%d", k), started: time.Now(), registryPassword: randomHex(12)}
	defer func() {
		if err != nil {
			if left := n.stop(); len(left) > 0 {
				fmt.Fprintf(os.Stderr, "e2e: the failed node left behind: %s\n", strings.Join(left, "; "))
			}
		}
	}()
	for _, p := range machinePaths {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			n.made = append(n.made, p)
		}
	}
	for _, d := range []string{"cni", "certs.d", "kubelet", "pod-logs", "volume-plugins"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return n, err
		}
	}
	// The bridge exists, with its gateway address, before the kubelet starts: that address is the
	// node's InternalIP, on which the apiserver reaches the kubelet for logs and exec.
	for _, args := range [][]string{
		{"link", "add", n.bridge, "type", "bridge"},
		{"addr", "add", n.ip + "/24", "dev", n.bridge},
		{"link", "set", n.bridge, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return n, fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}

	// The registry, first: containerd's hosts.toml names its port.
	images := filepath.Join(bin, "node-images")
	pushes := []string{"testapp:1=testapp", "testapp:2=testapp-v2", "testapp-root:1=testapp-root", "private/testapp:1=testapp"}
	args := []string{"-addr", "127.0.0.1:0", "-ca", filepath.Join(dir, "registry-ca.crt"), "-private", "private", "-user", registryUser}
	for _, p := range pushes {
		ref, layout, _ := strings.Cut(p, "=")
		args = append(args, "-push", ref+"="+filepath.Join(images, layout))
	}
	if err := n.start("webapp-e2e-registry", []string{"REGISTRY_PASSWORD=" + n.registryPassword}, args...); err != nil {
		return n, err
	}
	if err := waitLog(n.procs[len(n.procs)-1], "registry listening on ", 30*time.Second, func(rest string) { n.registry = rest }); err != nil {
		return n, err
	}
	hosts := filepath.Join(dir, "certs.d", n.registry)
	if err := os.MkdirAll(hosts, 0o755); err != nil {
		return n, err
	}
	if err := os.WriteFile(filepath.Join(hosts, "hosts.toml"), fmt.Appendf(nil, `server = "https://%[1]s"
[host."https://%[1]s"]
  capabilities = ["pull", "resolve"]
  ca = %[2]q
`, n.registry, filepath.Join(dir, "registry-ca.crt")), 0o644); err != nil {
		return n, err
	}

	if err := os.WriteFile(filepath.Join(dir, "cni", "10-webapp-e2e.conflist"), fmt.Appendf(nil, `{
  "cniVersion": "1.0.0",
  "name": "webapp-e2e",
  "plugins": [
    {"type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": false, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": %q, "gateway": %q}]], "dataDir": %q}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`, n.bridge, n.subnet, n.ip, filepath.Join(dir, "cni-ipam")), 0o644); err != nil {
		return n, err
	}
	if err := os.WriteFile(filepath.Join(dir, "containerd.toml"), []byte(containerdConfig(dir, bin)), 0o644); err != nil {
		return n, err
	}
	if err := n.start("containerd", nil, "--config", filepath.Join(dir, "containerd.toml")); err != nil {
		return n, err
	}
	if err := waitLog(n.procs[len(n.procs)-1], "containerd successfully booted", 30*time.Second, nil); err != nil {
		return n, err
	}
	if out, err := n.ctr("images", "import", filepath.Join(images, "pause.tar")); err != nil {
		return n, fmt.Errorf("ctr images import pause.tar: %v: %s", err, out)
	}

	if err := makeCgroups(n.cgroup); err != nil {
		return n, err
	}
	port := freePort()
	if err := os.WriteFile(filepath.Join(dir, "kubelet.yaml"), []byte(kubeletConfig(n, port)), 0o644); err != nil {
		return n, err
	}
	if err := n.start("kubelet", nil,
		"--config", filepath.Join(dir, "kubelet.yaml"),
		"--kubeconfig", filepath.Join(cluster.dir, "kubeconfig"),
		"--root-dir", filepath.Join(dir, "kubelet"),
		"--cert-dir", filepath.Join(dir, "kubelet", "pki"),
		"--hostname-override", realNodeName,
		"--node-ip", n.ip,
		"--node-labels", realNodeLabel+"=real",
		"--v", "2",
	); err != nil {
		return n, err
	}
	deadline := time.Now().Add(120 * time.Second)
	for {
		nd, err := client.get("v1", "Node", "", realNodeName)
		if err != nil {
			return n, err
		}
		if nd != nil && conditionTrue(nd, "Ready") {
			break
		}
		for _, p := range n.procs {
			select {
			case err := <-p.done:
				p.done <- err
				return n, fmt.Errorf("%s exited: %v\n%s", p.name, err, tailFile(p.log, 4000))
			default:
			}
		}
		if time.Now().After(deadline) {
			return n, fmt.Errorf("node %s not Ready after 120s\n%s", realNodeName, tailFile(filepath.Join(dir, "kubelet.log"), 4000))
		}
		time.Sleep(500 * time.Millisecond)
	}
	return n, nil
}

// containerdConfig is containerd's configuration (version 3), everything under dir: the sandbox
// image pinned to the locally built pause, no negative oom_score_adj (the suite may lack
// CAP_SYS_RESOURCE), cgroupfs (no systemd), the registry's hosts under dir/certs.d, network
// namespaces under the state directory, and runc's state under dir.
func containerdConfig(dir, bin string) string {
	return fmt.Sprintf(`version = 3
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.nri.v1.nri"]

[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q

[plugins.'io.containerd.internal.v1.opt']
  path = %[5]q

[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = %[6]q
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = %[7]q

[plugins.'io.containerd.cri.v1.runtime']
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = [%[8]q]
    conf_dir = %[9]q
  [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
    SystemdCgroup = false
    Root = %[10]q

[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
`, filepath.Join(dir, "containerd"), filepath.Join(dir, "containerd-state"), filepath.Join(dir, "containerd.sock"),
		filepath.Join(dir, "containerd.sock.ttrpc"), filepath.Join(dir, "containerd-opt"), sandboxImage,
		filepath.Join(dir, "certs.d"), filepath.Join(bin, "cni-plugins"), filepath.Join(dir, "cni"), filepath.Join(dir, "runc"))
}

// kubeletConfig is the kubelet's configuration: cgroup v1 allowed (failCgroupV1: false; the
// kubelet warns), swap tolerated, cgroupfs, its pods' cgroups under a root of their own, every
// path under the node's directory, and its server on the node's address and a free port. Its
// server lets the apiserver in without a client certificate (the suite's apiserver has none):
// it listens only on the bridge address of this machine.
func kubeletConfig(n *realNode, port string) string {
	return fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
failSwapOn: false
cgroupDriver: cgroupfs
cgroupRoot: /%[1]s
containerRuntimeEndpoint: unix://%[2]s
address: %[3]s
port: %[4]s
readOnlyPort: 0
healthzPort: 0
podLogsDir: %[5]s
volumePluginDir: %[6]s
staticPodPath: ""
registerWithTaints:
- key: %[7]s
  value: "true"
  effect: NoSchedule
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
serializeImagePulls: false
maxPods: 40
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  imagefs.available: 1%%
resolvConf: %[8]s
nodeStatusUpdateFrequency: 4s
shutdownGracePeriod: 0s
`, n.cgroup, filepath.Join(n.dir, "containerd.sock"), n.ip, port, filepath.Join(n.dir, "pod-logs"),
		filepath.Join(n.dir, "volume-plugins"), realNodeTaint, writeResolvConf(n.dir))
}

// writeResolvConf gives the pods a resolv.conf of loopback only: the suite has no cluster DNS, and
// no pod may reach a name server off this machine.
func writeResolvConf(dir string) string {
	p := filepath.Join(dir, "resolv.conf")
	os.WriteFile(p, []byte("nameserver 127.0.0.1\n"), 0o644)
	return p
}

// start runs bin/name with args and env, logging to dir/name.log, with bin first in PATH (so that
// containerd finds its shim).
func (n *realNode) start(name string, env []string, args ...string) error {
	env = append(append(os.Environ(), "PATH="+n.bin+":"+os.Getenv("PATH")), env...)
	p, err := startProcess(n.dir, n.bin, name, env, args...)
	if err != nil {
		return err
	}
	n.procs = append(n.procs, p)
	return nil
}

// waitLog waits until p's log has a line containing marker, and passes what follows it to got.
func waitLog(p *process, marker string, timeout time.Duration, got func(rest string)) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(p.log)
		for _, line := range strings.Split(string(b), "\n") {
			if i := strings.Index(line, marker); i >= 0 {
				if got != nil {
					got(strings.TrimSpace(line[i+len(marker):]))
				}
				return nil
			}
		}
		select {
		case err := <-p.done:
			p.done <- err
			return fmt.Errorf("%s exited: %v\n%s", p.name, err, tailFile(p.log, 3000))
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s: no %q in its log after %s\n%s", p.name, marker, timeout, tailFile(p.log, 3000))
}

// ctr runs ctr against the node's containerd, in the CRI's namespace.
func (n *realNode) ctr(args ...string) ([]byte, error) {
	return exec.Command(filepath.Join(n.bin, "ctr"), append([]string{"--address", filepath.Join(n.dir, "containerd.sock"), "--namespace", "k8s.io"}, args...)...).CombinedOutput()
}

// image is the registry's reference of repo:tag, as a WebApp names it.
func (n *realNode) image(repoTag string) string { return n.registry + "/" + repoTag }

// drain makes the node unschedulable and deletes every pod on it, gracefully, and waits until the
// kubelet has stopped them and they are gone, so that their sandboxes, network namespaces and
// mounts are taken down by the kubelet and containerd themselves.
func (n *realNode) drain(timeout time.Duration) error {
	p, _ := client.path("v1", "Node", "", realNodeName)
	if _, err := client.do("PATCH", p, "application/merge-patch+json", obj{"spec": obj{"unschedulable": true}}); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		pods, err := n.pods()
		if err != nil {
			return err
		}
		if len(pods) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pods still on %s after %s: %s", realNodeName, timeout, strings.Join(pods, ", "))
		}
		for _, pod := range pods {
			ns, name, _ := strings.Cut(pod, "/")
			pp, _ := client.path("v1", "Pod", ns, name)
			client.do("DELETE", pp, "", nil)
		}
		time.Sleep(time.Second)
	}
}

// pods lists namespace/name of every pod bound to the node.
func (n *realNode) pods() ([]string, error) {
	b, err := client.do("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3D"+realNodeName, "", nil)
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Metadata struct{ Namespace, Name string }
		}
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, err
	}
	var out []string
	for _, it := range list.Items {
		out = append(out, it.Metadata.Namespace+"/"+it.Metadata.Name)
	}
	return out, nil
}

// stop takes the node down: its pods drained through the API, then the kubelet, containerd and
// the registry stopped, then whatever they left (shims, mounts under dir, the bridge, the
// cgroups) removed. It returns what it found left behind after the processes stopped: nothing,
// when the kubelet and containerd cleaned up after themselves.
func (n *realNode) stop() (left []string) {
	if client != nil && n.kubeletRunning() {
		// Stopped sandboxes the kubelet has not collected yet stay in containerd's store: they
		// hold no process, namespace or mount once stopped, which the checks below prove.
		if err := n.drain(90 * time.Second); err != nil {
			left = append(left, "drain: "+err.Error())
		}
	}
	stopAll(n.procs, 15*time.Second)
	n.procs = nil
	// Shims outlive containerd by design (a restart of containerd must not kill containers); the
	// node's are those whose command line names its socket.
	if pids := n.shims(); len(pids) > 0 {
		left = append(left, fmt.Sprintf("%d containerd shims running", len(pids)))
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The kubelet bind-mounts its root directory onto itself, to make it a shared mount for mount
	// propagation, and leaves that for whoever stops it: that one is not left behind.
	root := filepath.Join(n.dir, "kubelet")
	if slices.Contains(mountsUnder(n.dir), root) {
		syscall.Unmount(root, syscall.MNT_DETACH)
	}
	if mounts := mountsUnder(n.dir); len(mounts) > 0 {
		left = append(left, fmt.Sprintf("%d mounts under the node's directory (%s)", len(mounts), mounts[0]))
		for _, m := range mounts {
			syscall.Unmount(m, syscall.MNT_DETACH)
		}
	}
	if err := exec.Command("ip", "link", "show", n.bridge).Run(); err == nil {
		// The bridge is the suite's own, made before the kubelet: removing it is the suite's job.
		if out, err := exec.Command("ip", "link", "del", n.bridge).CombinedOutput(); err != nil {
			left = append(left, fmt.Sprintf("bridge %s: ip link del: %v: %s", n.bridge, err, out))
		}
	}
	if veths := vethsOn(n.bridge); len(veths) > 0 {
		left = append(left, "veths "+strings.Join(veths, ","))
	}
	if cg := removeCgroups(n.cgroup); len(cg) > 0 {
		left = append(left, "cgroups "+strings.Join(cg, ", "))
	}
	// The kubelet's device-plugin socket is its alone, wherever --root-dir points. Its links in
	// /var/log/containers to the logs of dead containers it had not yet collected point into the
	// node's directory, which goes.
	os.Remove("/var/lib/kubelet/device-plugins/kubelet.sock")
	links, _ := os.ReadDir("/var/log/containers")
	for _, l := range links {
		p := filepath.Join("/var/log/containers", l.Name())
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, n.dir+"/") {
			os.Remove(p)
		}
	}
	for _, p := range n.made {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			left = append(left, fmt.Sprintf("%s: %v", p, err))
		}
	}
	return left
}

// machinePaths are the paths outside the node's directory that the kubelet and containerd use
// whatever their configuration says, deepest first: the kubelet's device-plugin socket and the
// /var/log/containers links, the CNI library's result cache, the shims' sockets.
var machinePaths = []string{
	"/var/lib/kubelet/device-plugins", "/var/lib/kubelet", "/var/log/containers",
	"/var/lib/cni/results", "/var/lib/cni", "/run/containerd/s", "/run/containerd",
}

func (n *realNode) kubeletRunning() bool {
	for _, p := range n.procs {
		if p.name == "kubelet" {
			select {
			case err := <-p.done:
				p.done <- err
				return false
			default:
				return true
			}
		}
	}
	return false
}

// shims lists the pids of containerd shims started for the node's containerd.
func (n *realNode) shims() []int {
	var pids []int
	sock := filepath.Join(n.dir, "containerd.sock")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 0 && strings.HasSuffix(args[0], "containerd-shim-runc-v2") && slices.Contains(args, sock) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// mountsUnder lists the mount points under dir, deepest first.
func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			out = append(out, fields[4])
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return out
}

// vethsOn lists the interfaces still enslaved to bridge (none once it is deleted).
func vethsOn(bridge string) []string {
	out, err := exec.Command("ip", "-o", "link", "show", "master", bridge).Output()
	if err != nil {
		return nil
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			names = append(names, strings.TrimSuffix(f[1], ":"))
		}
	}
	return names
}

// makeCgroups makes the kubelet's cgroup root in every hierarchy, as the kubelet requires; under
// cgroup v1 a new cpuset gets its parent's CPUs and memory nodes, without which no task may join.
func makeCgroups(root string) error {
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return os.MkdirAll(filepath.Join("/sys/fs/cgroup", root), 0o755)
	}
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, h := range hierarchies {
		if _, err := os.Stat(filepath.Join(h, "cgroup.procs")); err != nil {
			continue
		}
		d := filepath.Join(h, root)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cgroup %s: %w", d, err)
		}
		if filepath.Base(h) == "cpuset" {
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				b, err := os.ReadFile(filepath.Join(h, f))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(d, f), b, 0o644); err != nil {
					return fmt.Errorf("%s: %w", filepath.Join(d, f), err)
				}
			}
		}
	}
	return nil
}

// removeCgroups removes the kubelet's cgroup root from every hierarchy, deepest first, and returns
// those that held processes or would not go.
func removeCgroups(root string) []string {
	var left []string
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	hierarchies = append(hierarchies, "/sys/fs/cgroup")
	for _, h := range hierarchies {
		top := filepath.Join(h, root)
		if _, err := os.Stat(top); err != nil {
			continue
		}
		var dirs []string
		filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		slices.Reverse(dirs)
		for _, d := range dirs {
			if procs, _ := os.ReadFile(filepath.Join(d, "cgroup.procs")); len(strings.TrimSpace(string(procs))) > 0 {
				left = append(left, d+" has processes")
				continue
			}
			if err := syscall.Rmdir(d); err != nil && !os.IsNotExist(err) {
				left = append(left, fmt.Sprintf("%s: %v", d, err))
			}
		}
	}
	return left
}

// stopNode stops the node if it was started, and reports on stderr what it left behind; it
// returns false when something was.
func stopNode() bool {
	if node == nil {
		return true
	}
	start := time.Now()
	left := node.stop()
	if len(left) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: the real node left behind: %s\n", strings.Join(left, "; "))
		return false
	}
	fmt.Fprintf(os.Stderr, "e2e: real node stopped in %s: no process, mount, veth, bridge or cgroup left\n", time.Since(start).Round(time.Millisecond))
	return true
}

// realWebApp is a WebApp whose pods run on the real node: they select its label and tolerate its
// taint. The image defaults to the test app's, port 8080, healthCheck /ready; spec's keys override.
func realWebApp(ns, name string, spec obj) obj {
	s := obj{
		"image":        node.image("testapp:1"),
		"port":         8080,
		"healthCheck":  obj{"path": "/ready"},
		"nodeSelector": obj{realNodeLabel: "real"},
		"tolerations":  []any{obj{"key": realNodeTaint, "operator": "Exists", "effect": "NoSchedule"}},
	}
	// A readinessProbe of the scenario's own replaces the healthCheck, whose startupProbe checks
	// every 10 s and so holds each new pod's readiness back by up to 10 s.
	if _, ok := spec["readinessProbe"]; ok {
		delete(s, "healthCheck")
	}
	for k, v := range spec {
		s[k] = v
	}
	return webApp(ns, name, s)
}

// readyPods returns the IPs of the WebApp's pods that are Ready, by pod name.
func readyPods(t *testing.T, ns, name string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range podsNow(ns, name) {
		if field(p, "metadata", "deletionTimestamp") == nil && conditionTrue(p, "Ready") {
			ip, _ := field(p, "status", "podIP").(string)
			out[field(p, "metadata", "name").(string)] = ip
		}
	}
	return out
}

// podsNow lists the WebApp's pods, none on error: it may run outside the test's goroutine.
func podsNow(ns, name string) []obj {
	b, err := client.do("GET", "/api/v1/namespaces/"+ns+"/pods?labelSelector=app.kubernetes.io%2Finstance%3D"+name, "", nil)
	if err != nil {
		return nil
	}
	var list struct{ Items []obj }
	json.Unmarshal(b, &list)
	return list.Items
}

// kubeletLogTime returns the time of the kubelet's first log line that names pod and contains
// marker. klog stamps lines with the time of day alone; the date is today's, in UTC, as the
// suite runs the kubelet.
func (n *realNode) kubeletLogTime(pod, marker string) (time.Time, bool) {
	b, err := os.ReadFile(filepath.Join(n.dir, "kubelet.log"))
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.Contains(line, marker) || !strings.Contains(line, pod) {
			continue
		}
		tod, err := time.Parse("15:04:05.000000", f[1])
		if err != nil {
			continue
		}
		now := time.Now().UTC()
		at := time.Date(now.Year(), now.Month(), now.Day(), tod.Hour(), tod.Minute(), tod.Second(), tod.Nanosecond(), time.UTC)
		if at.After(now.Add(time.Hour)) {
			at = at.AddDate(0, 0, -1) // the line is from before midnight
		}
		return at, true
	}
	return time.Time{}, false
}

// podURL is the URL of path on a pod's address and the WebApp's port.
func podURL(ip, path string) string { return "http://" + net.JoinHostPort(ip, "8080") + path }

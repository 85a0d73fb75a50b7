package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// runCommand runs one command line in process.
func runCommand(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, func(string) string { return "" }, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRender(t *testing.T) {
	invalid := filepath.Join(t.TempDir(), "invalid.yaml")
	os.WriteFile(invalid, []byte("apiVersion: example.com/v1\nkind: WebApp\nmetadata: {name: bad}\nspec: {image: \"\", port: 8080}\n"), 0o644)
	noPort := "apiVersion: example.com/v1\nkind: WebApp\nmetadata: {name: worker}\nspec: {image: busybox}\n"
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantKinds  []string
		wantStderr string
	}{
		{"hello", []string{"render", "-f", "../../examples/hello.yaml"}, "", 0, []string{"Deployment", "Service"}, ""},
		{"every field", []string{"render", "-f", "../../examples/full.yaml"}, "", 0, []string{"Deployment", "Service", "Ingress", "PodDisruptionBudget", "HTTPRoute"}, ""},
		{"a route", []string{"render", "-f", "../../examples/route.yaml"}, "", 0, []string{"Deployment", "Service", "HTTPRoute"}, ""},
		{"a canary", []string{"render", "-f", "../../examples/canary.yaml"}, "", 0, []string{"Deployment", "Service", "HTTPRoute"}, ""},
		{"a canary with analysis", []string{"render", "-f", "../../examples/canary-analysis.yaml"}, "", 0, []string{"Deployment", "Service", "HTTPRoute"}, ""},
		{"a canary with a header route and a rollback window", []string{"render", "-f", "../../examples/canary-testers.yaml"}, "", 0, []string{"Deployment", "Service", "HTTPRoute"}, ""},
		{"stdin, no port, default namespace", []string{"render", "-f", "-"}, noPort, 0, []string{"Deployment"}, ""},
		{"invalid spec", []string{"render", "-f", invalid}, "", 1, nil, "spec.image: Required value"},
		{"missing file", []string{"render", "-f", "nope.yaml"}, "", 1, nil, "read WebApp"},
		{"no -f", []string{"render"}, "", 2, nil, "Usage: webapp-hook render"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCommand(t, tt.stdin, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit = %d; want %d (stderr %s)", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr = %q; want it to contain %q", stderr, tt.wantStderr)
			}
			var kinds []string
			for _, doc := range strings.Split(stdout, "---\n")[1:] {
				var obj struct {
					Kind     string
					Metadata struct{ Namespace string }
					Status   any
				}
				if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
					t.Fatal(err)
				}
				if obj.Metadata.Namespace == "" || obj.Status != nil {
					t.Errorf("%s: namespace %q, status %v; want a namespace and no status", obj.Kind, obj.Metadata.Namespace, obj.Status)
				}
				kinds = append(kinds, obj.Kind)
			}
			if strings.Join(kinds, ",") != strings.Join(tt.wantKinds, ",") {
				t.Errorf("kinds = %v; want %v", kinds, tt.wantKinds)
			}
		})
	}
}

// TestSyncCommand checks that `webapp-hook sync` answers like the server: the same children and
// status as the example's expected answer (only a changed condition's time follows the clock).
func TestSyncCommand(t *testing.T) {
	for _, name := range []string{"rollout", "invalid", "finalize-children"} {
		t.Run(name, func(t *testing.T) {
			request, err := os.ReadFile("../../examples/" + name + ".request.json")
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCommand(t, string(request), "sync")
			if code != 0 {
				t.Fatalf("exit = %d: %s", code, stderr)
			}
			want, err := os.ReadFile("../../examples/" + name + ".response.json")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := comparable(t, []byte(stdout)), comparable(t, want); got != want {
				t.Errorf("answer =\n%s\nwant\n%s", got, want)
			}
		})
	}
	if code, _, stderr := runCommand(t, "{", "sync"); code != 1 || !strings.Contains(stderr, `400 {"error":"decode sync request`) {
		t.Errorf("malformed request: exit %d, stderr %q; want 1 and the 400 body", code, stderr)
	}
}

// comparable is an answer without its condition times, in canonical JSON.
func comparable(t *testing.T, answer []byte) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(answer, &v); err != nil {
		t.Fatal(err)
	}
	for _, c := range v["status"].(map[string]any)["conditions"].([]any) {
		delete(c.(map[string]any), "lastTransitionTime")
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestHelp(t *testing.T) {
	code, _, stderr := runCommand(t, "", "--help")
	if code != 0 {
		t.Fatalf("exit = %d; want 0", code)
	}
	for _, want := range []string{
		"webapp-hook render -f", "webapp-hook sync <",
		"-addr", "(env ADDR)", `(default ":8080")`,
		"-metrics-addr", "(env METRICS_ADDR)", `(default ":9090")`,
		"-max-body-bytes", "(env MAX_BODY_BYTES)", "(default 16777216)",
		"-max-inflight-body-bytes", "(env MAX_INFLIGHT_BODY_BYTES)",
		"-cache-bytes", "(env CACHE_BYTES)", "(default 1048576)",
		"-shutdown-delay", "(env SHUTDOWN_DELAY)", "(default 5s)",
		"-shutdown-timeout", "(env SHUTDOWN_TIMEOUT)", "(default 20s)",
		"-log-level", "(env LOG_LEVEL)", `(default "info")`,
		"-version",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// TestVersion builds the binary as `make build` does (VCS stamping) and as the image build does
// (-buildvcs=false, the commit stamped with -ldflags -X), and checks that --version names the
// module version and the revision git reports either way.
func TestVersion(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git: the VCS revision cannot be stamped or checked")
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout (%v): nothing to stamp", err)
	}
	head := strings.TrimSpace(string(out))
	stamp := "-X main.buildVersion=v0.0.0-20260102030405-" + head[:12] + " -X main.buildRevision=" + head +
		" -X main.buildTime=2026-01-02T03:04:05Z -X main.buildModified=false"
	tests := []struct {
		name       string
		buildFlags []string
		wantPrefix string
		want       string
	}{
		{"make build", []string{"-buildvcs=true"}, "webapp-hook v", " revision " + head},
		{"the image's build", []string{"-buildvcs=false", "-trimpath", "-ldflags", stamp},
			"webapp-hook v0.0.0-20260102030405-" + head[:12] + " ", " revision " + head + " 2026-01-02T03:04:05Z go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "webapp-hook")
			args := append(append([]string{"build"}, tt.buildFlags...), "-o", bin, ".")
			if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			out, err := exec.Command(bin, "--version").Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := string(out); !strings.HasPrefix(got, tt.wantPrefix) || !strings.Contains(got, tt.want) {
				t.Errorf("--version = %q; want it to start with %q and contain %q", got, tt.wantPrefix, tt.want)
			}
		})
	}
	if code, stdout, _ := runCommand(t, "", "--version"); code != 0 || !strings.HasPrefix(stdout, "webapp-hook ") {
		t.Errorf("--version in process = %d %q", code, stdout)
	}
}

// TestDescribeVersion covers each source of the version text: build information with VCS
// settings, values stamped with -ldflags, both (VCS settings win), and neither.
func TestDescribeVersion(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "aaaa"}, {Key: "vcs.time", Value: "2026-01-01T00:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	bare := &debug.BuildInfo{GoVersion: "go1.27.3", Main: debug.Module{Version: "(devel)"}}
	stamped := map[string]string{"version": "v0.0.0-20260202000000-bbbbbbbbbbbb", "vcs.revision": "bbbb", "vcs.time": "2026-02-02T00:00:00Z", "vcs.modified": "false"}
	tests := []struct {
		name    string
		info    *debug.BuildInfo
		stamped map[string]string
		want    string
	}{
		{"VCS stamping", vcs, nil, "webapp-hook v1.2.3 revision aaaa (modified) 2026-01-01T00:00:00Z go1.27.3"},
		{"-ldflags stamping", bare, stamped, "webapp-hook v0.0.0-20260202000000-bbbbbbbbbbbb revision bbbb 2026-02-02T00:00:00Z go1.27.3"},
		{"both: VCS wins", vcs, stamped, "webapp-hook v1.2.3 revision aaaa (modified) 2026-01-01T00:00:00Z go1.27.3"},
		{"-ldflags, modified", bare, map[string]string{"vcs.revision": "cccc", "vcs.modified": "true"}, "webapp-hook (devel) revision cccc (modified) go1.27.3"},
		{"no stamp", bare, map[string]string{}, "webapp-hook (devel) go1.27.3"},
		{"no build information", nil, map[string]string{}, "webapp-hook unknown"},
		{"no build information, stamped", nil, stamped, "webapp-hook v0.0.0-20260202000000-bbbbbbbbbbbb revision bbbb 2026-02-02T00:00:00Z unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeVersion(tt.info, tt.stamped); got != tt.want {
				t.Errorf("describeVersion = %q; want %q", got, tt.want)
			}
		})
	}
}

// TestOfflineDefaults checks that render and sync take the server's flags that change answers:
// the default security profile, and the default Gateway of a route that names none.
func TestOfflineDefaults(t *testing.T) {
	route := filepath.Join(t.TempDir(), "route.yaml")
	os.WriteFile(route, []byte("apiVersion: example.com/v1\nkind: WebApp\nmetadata: {name: shop}\nspec: {image: nginx, port: 8080, route: {hostnames: [shop.example.com]}}\n"), 0o644)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    string // in stdout; "" for none
		notOut     string // never in stdout
		wantStderr string
	}{
		{"no profile", []string{"render", "-f", "../../examples/hello.yaml"}, 0, "", "runAsNonRoot", ""},
		{"the default profile", []string{"render", "--default-security-profile", "restricted", "-f", "../../examples/hello.yaml"}, 0, "runAsNonRoot: true", "", ""},
		{"an unknown profile", []string{"render", "--default-security-profile", "baseline", "-f", "../../examples/hello.yaml"}, 2, "", "", "-default-security-profile must be restricted, none or empty"},
		{"a route without a Gateway", []string{"render", "-f", route}, 1, "", "", "spec.route.parentRefs"},
		{"a route with the default Gateway", []string{"render", "--default-gateway", "infra/public/https", "-f", route}, 0, "sectionName: https", "", ""},
		{"a bad default Gateway", []string{"sync", "--default-gateway", "public"}, 2, "", "", "-default-gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCommand(t, "", tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit = %d; want %d (stderr %s)", code, tt.wantCode, stderr)
			}
			if !strings.Contains(stdout, tt.wantOut) || tt.notOut != "" && strings.Contains(stdout, tt.notOut) {
				t.Errorf("stdout =\n%s\nwant %q in it and not %q", stdout, tt.wantOut, tt.notOut)
			}
			if !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr = %q; want it to contain %q", stderr, tt.wantStderr)
			}
		})
	}
}

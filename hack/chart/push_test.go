package chart

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// repo is the repository root, from hack/chart.
var repo, _ = filepath.Abs("../..")

// helmEnv keeps helm's configuration, cache and registry logins in dir, never the user's.
func helmEnv(dir string) []string {
	return append(os.Environ(), "HELM_CONFIG_HOME="+filepath.Join(dir, "config"),
		"HELM_CACHE_HOME="+filepath.Join(dir, "cache"), "HELM_DATA_HOME="+filepath.Join(dir, "data"))
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = repo, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestChartPush runs `make chart-push` against a registry on loopback and reads the chart back:
// the manifest helm push made, with Helm's media types, its layer the packaged file's bytes, and
// `helm pull` of it giving the same file.
func TestChartPush(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	dir := t.TempDir()
	env := helmEnv(dir)
	chartDir := filepath.Join(dir, "chart")

	out := run(t, env, "make", "--no-print-directory", "chart-push", "REGISTRY=oci://"+host+"/charts", "CHART_PUSH_FLAGS=--plain-http", "CHART_DIR="+chartDir)
	files, _ := filepath.Glob(filepath.Join(chartDir, "webapp-operator-*.tgz"))
	if len(files) != 1 {
		t.Fatalf("make chart-push left %v in %s; want one packaged chart\n%s", files, chartDir, out)
	}
	packaged, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(files[0]), "webapp-operator-"), ".tgz")
	m := regexp.MustCompile(`Digest: (sha256:[0-9a-f]{64})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("make chart-push printed no digest:\n%s", out)
	}
	t.Logf("pushed webapp-operator %s to %s/charts: %s", version, host, m[1])

	ref, err := name.ParseReference(host+"/charts/webapp-operator:"+version, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(ref)
	if err != nil {
		t.Fatal(err)
	}
	if desc.Digest.String() != m[1] {
		t.Errorf("the registry has %s; helm push said %s", desc.Digest, m[1])
	}
	img, err := desc.Image()
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(manifest.Config.MediaType); got != "application/vnd.cncf.helm.config.v1+json" {
		t.Errorf("config media type %s; want Helm's", got)
	}
	sum := sha256.Sum256(packaged)
	if len(manifest.Layers) != 1 || string(manifest.Layers[0].MediaType) != "application/vnd.cncf.helm.chart.content.v1.tar+gzip" ||
		manifest.Layers[0].Digest.Hex != hex.EncodeToString(sum[:]) {
		t.Errorf("layers %+v; want one, Helm's chart content, with the packaged file's digest sha256:%x", manifest.Layers, sum)
	}

	pulled := filepath.Join(dir, "pulled")
	if err := os.Mkdir(pulled, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, env, "bin/helm", "pull", "oci://"+host+"/charts/webapp-operator", "--version", version, "--plain-http", "--destination", pulled)
	got, err := os.ReadFile(filepath.Join(pulled, filepath.Base(files[0])))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, packaged) {
		t.Error("helm pull gave other bytes than make chart packaged")
	}
	show := run(t, env, "bin/helm", "show", "chart", "oci://"+host+"/charts/webapp-operator", "--version", version, "--plain-http")
	if !strings.Contains(show, "name: webapp-operator") || !strings.Contains(show, "version: "+version) {
		t.Errorf("helm show chart from the registry:\n%s", show)
	}
}

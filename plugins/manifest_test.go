package plugins

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// krew checks the manifest make plugin filled (webapp.yaml) against the archives it built:
// make plugin sets it. Without it, only the template is checked.
var krew = flag.Bool("krew", false, "check webapp.yaml against the archives in ../bin/plugin")

// archives is where make plugin builds the archives (hack/plugin.sh).
const archives = "../bin/plugin"

// platforms are the platforms make plugin builds for, as Krew's selectors name them.
var platforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64", "windows/amd64", "windows/arm64"}

// manifest is what the tests read of a Krew manifest (krew.googlecontainertools.github.com/v1alpha2).
type manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string     `json:"version"`
		Homepage         string     `json:"homepage"`
		ShortDescription string     `json:"shortDescription"`
		Description      string     `json:"description"`
		Platforms        []platform `json:"platforms"`
	} `json:"spec"`
}

type platform struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	URI    string `json:"uri"`
	SHA256 string `json:"sha256"`
	Bin    string `json:"bin"`
}

// name is a platform's "os/arch".
func (p platform) name() string {
	return p.Selector.MatchLabels["os"] + "/" + p.Selector.MatchLabels["arch"]
}

// bin is the binary's name on os.
func bin(os string) string {
	if os == "windows" {
		return "kubectl-webapp.exe"
	}
	return "kubectl-webapp"
}

func readManifest(t *testing.T, file string) *manifest {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "webapp" || m.Spec.ShortDescription == "" || m.Spec.Homepage == "" {
		t.Errorf("%s: %s %s %q, homepage %q, shortDescription %q; want a Krew Plugin webapp with a homepage and a short description", file, m.APIVersion, m.Kind, m.Metadata.Name, m.Spec.Homepage, m.Spec.ShortDescription)
	}
	return &m
}

// byPlatform checks that m has one entry for each of platforms, with its binary's name, and
// returns them by "os/arch".
func byPlatform(t *testing.T, m *manifest) map[string]platform {
	t.Helper()
	out := map[string]platform{}
	for _, p := range m.Spec.Platforms {
		if _, dup := out[p.name()]; dup {
			t.Errorf("platform %s twice", p.name())
		}
		out[p.name()] = p
		if want := bin(p.Selector.MatchLabels["os"]); p.Bin != want {
			t.Errorf("platform %s: bin %q; want %q", p.name(), p.Bin, want)
		}
	}
	for _, want := range platforms {
		if _, ok := out[want]; !ok {
			t.Errorf("no platform %s", want)
		}
	}
	if len(out) != len(platforms) {
		t.Errorf("platforms %d; want %d", len(out), len(platforms))
	}
	return out
}

// TestTemplate: the template has each platform's archive and sum to fill in, and nothing else.
func TestTemplate(t *testing.T) {
	m := readManifest(t, "webapp.yaml.tmpl")
	if m.Spec.Version != "@VERSION@" {
		t.Errorf("version %q; want @VERSION@", m.Spec.Version)
	}
	for name, p := range byPlatform(t, m) {
		os, arch, _ := strings.Cut(name, "/")
		if want := fmt.Sprintf("@URL@/kubectl-webapp_%s_%s.tar.gz", os, arch); p.URI != want {
			t.Errorf("platform %s: uri %q; want %q", name, p.URI, want)
		}
		if want := fmt.Sprintf("@SHA256_%s_%s@", os, arch); p.SHA256 != want {
			t.Errorf("platform %s: sha256 %q; want %q", name, p.SHA256, want)
		}
	}
}

// semver is Krew's form of a version: v and a semantic version.
var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// TestManifest (make plugin): the filled manifest names each archive of bin/plugin with its
// sha256, as sha256sums.txt has it too, and each archive holds the binary the manifest names,
// executable, at its top.
func TestManifest(t *testing.T) {
	if !*krew {
		t.Skip("-krew checks webapp.yaml against the archives make plugin built")
	}
	m := readManifest(t, "webapp.yaml")
	if !semver.MatchString(m.Spec.Version) {
		t.Errorf("version %q; Krew wants v and a semantic version", m.Spec.Version)
	}
	sums := readSums(t, filepath.Join(archives, "sha256sums.txt"))
	for name, p := range byPlatform(t, m) {
		archive := path.Base(p.URI)
		if !strings.HasPrefix(p.URI, "https://") || !strings.Contains(p.URI, "/"+m.Spec.Version+"/") {
			t.Errorf("platform %s: uri %q; want https, and the version %s in its path", name, p.URI, m.Spec.Version)
		}
		got, err := fileSum(filepath.Join(archives, archive))
		if err != nil {
			t.Errorf("platform %s: %v", name, err)
			continue
		}
		if p.SHA256 != got {
			t.Errorf("platform %s: the manifest's sha256 %s; the archive %s's is %s", name, p.SHA256, archive, got)
		}
		if sums[archive] != got {
			t.Errorf("platform %s: sha256sums.txt has %q for %s; want %s", name, sums[archive], archive, got)
		}
		if err := holds(filepath.Join(archives, archive), p.Bin); err != nil {
			t.Errorf("platform %s: %v", name, err)
		}
	}
	if len(sums) != len(platforms) {
		t.Errorf("sha256sums.txt has %d archives; want %d", len(sums), len(platforms))
	}
}

// readSums reads a sha256sum file: the sum of each file, by name.
func readSums(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		sum, name, ok := strings.Cut(s.Text(), "  ")
		if !ok {
			t.Fatalf("%s: %q is not a sha256sum line", file, s.Text())
		}
		sums[name] = sum
	}
	return sums
}

// fileSum is the sha256 of a file, in hex.
func fileSum(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// holds checks that a tar.gz archive holds bin, an executable regular file, at its top.
func holds(archive, bin string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", archive, err)
	}
	r := tar.NewReader(z)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s holds no %s", archive, bin)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", archive, err)
		}
		if h.Name == bin {
			if h.Typeflag != tar.TypeReg || h.Mode&0o111 == 0 || h.Size == 0 {
				return fmt.Errorf("%s: %s is not an executable file (type %c, mode %o, %d bytes)", archive, bin, h.Typeflag, h.Mode, h.Size)
			}
			return nil
		}
	}
}

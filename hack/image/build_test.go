package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"sigs.k8s.io/yaml"
)

func TestNormalizeImage(t *testing.T) {
	tests := []struct {
		in, want, wantErr string
	}{
		{"ghcr.io/example/webapp-hook:dev", "ghcr.io/example/webapp-hook:dev", ""},
		{"webapp-hook:dev", "docker.io/library/webapp-hook:dev", ""},
		{"example/webapp-hook", "docker.io/example/webapp-hook:latest", ""},
		{"127.0.0.1:5000/webapp-hook:test", "127.0.0.1:5000/webapp-hook:test", ""},
		{"localhost/webapp-hook:v1.2.3", "localhost/webapp-hook:v1.2.3", ""},
		{"Webapp-Hook:dev", "", "image name"},
		{"webapp-hook@sha256:" + strings.Repeat("0", 64), "", "image name"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := NormalizeImage(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("NormalizeImage(%q) = %q, %v; want an error", tt.in, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("NormalizeImage(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestNewStamp(t *testing.T) {
	rev := "0123456789abcdef0123456789abcdef01234567"
	at := time.Date(2026, 12, 1, 11, 30, 9, 0, time.FixedZone("CET", 3600))
	tests := []struct {
		name     string
		modified bool
		tag      string
		want     string
	}{
		{"no tag", false, "", "v0.0.0-20261201103009-0123456789ab"},
		{"no tag, modified", true, "", "v0.0.0-20261201103009-0123456789ab+dirty"},
		{"tagged", false, "v1.4.0", "v1.4.0"},
		{"tagged, modified", true, "v1.4.0", "v1.4.0+dirty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStamp(rev, at, tt.modified, tt.tag)
			if s.Version != tt.want || s.Revision != rev || s.Modified != tt.modified {
				t.Errorf("NewStamp = %+v; want version %q", s, tt.want)
			}
			if s.Time.Location() != time.UTC || !s.Time.Equal(at) {
				t.Errorf("time %v; want %v in UTC", s.Time, at)
			}
		})
	}
}

// TestReadStamp reads this checkout's commit as git reports it.
func TestReadStamp(t *testing.T) {
	head, err := exec.Command("git", "-C", "../..", "log", "-1", "--format=%H %ct").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	rev, unix, _ := strings.Cut(strings.TrimSpace(string(head)), " ")
	s, err := ReadStamp("../..")
	if err != nil {
		t.Fatal(err)
	}
	if s.Revision != rev || strconv.FormatInt(s.Time.Unix(), 10) != unix || s.Time.Location() != time.UTC || !strings.HasPrefix(s.Version, "v") {
		t.Errorf("ReadStamp = %+v; want revision %s at %s, in UTC, and a version", s, rev, unix)
	}
}

func TestLayerTar(t *testing.T) {
	mtime := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, prog := range []Program{Hook, Notifier} {
		t.Run(prog.Name, func(t *testing.T) {
			a, err := LayerTar(prog, []byte("binary"), mtime)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := LayerTar(prog, []byte("binary"), mtime)
			if !bytes.Equal(a, b) {
				t.Error("two layers of one binary differ")
			}
			tr := tar.NewReader(bytes.NewReader(a))
			h, err := tr.Next()
			if err != nil {
				t.Fatal(err)
			}
			content, _ := io.ReadAll(tr)
			if h.Name != prog.Name || h.Mode != 0o755 || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(mtime) || h.Typeflag != tar.TypeReg || string(content) != "binary" {
				t.Errorf("entry %+v %q; want %s, 0755, root, modified %v", h, content, prog.Name, mtime)
			}
			if _, err := tr.Next(); err != io.EOF {
				t.Errorf("a second entry (%v); want the binary alone", err)
			}
		})
	}
}

// fakeIndex is an index of two platforms' images over fake binaries.
func fakeIndex(t *testing.T, s Stamp, bins ...string) v1.ImageIndex {
	t.Helper()
	var adds []mutate.IndexAddendum
	for i, p := range []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}} {
		img, err := PlatformImageOf(Hook, p, []byte(bins[i]), s, Labels(Hook.Name, "https://example.com/src", s))
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: plainEntry{img}, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return mutate.AppendManifests(empty.Index, adds...)
}

// TestPlatformImage checks the image's manifest and config, for the hook and for the notifier,
// and what changes its digest: the binary and the commit, and nothing else.
func TestPlatformImage(t *testing.T) {
	s := NewStamp("0123456789abcdef0123456789abcdef01234567", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), false, "")
	p := v1.Platform{OS: "linux", Architecture: "arm64"}
	for _, tt := range []struct {
		prog       Program
		entrypoint string
		ports      []string
	}{
		{Hook, "/webapp-hook", []string{"8080/tcp", "9090/tcp"}},
		{Notifier, "/webapp-notifier", []string{"9090/tcp"}},
	} {
		t.Run(tt.prog.Name, func(t *testing.T) {
			img, err := PlatformImageOf(tt.prog, p, []byte("binary"), s, Labels(tt.prog.Name, "https://example.com/src", s))
			if err != nil {
				t.Fatal(err)
			}
			m, err := img.Manifest()
			if err != nil {
				t.Fatal(err)
			}
			if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON || len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
				t.Errorf("manifest %+v; want OCI media types and one gzip layer", m)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			c := cf.Config
			if cf.OS != "linux" || cf.Architecture != "arm64" || !cf.Created.Equal(s.Time) || c.User != "65532:65532" ||
				!slices.Equal(c.Entrypoint, []string{tt.entrypoint}) || len(c.Cmd) != 0 || !slices.Equal(slices.Sorted(maps.Keys(c.ExposedPorts)), tt.ports) ||
				c.Labels["org.opencontainers.image.title"] != tt.prog.Name ||
				c.Labels["org.opencontainers.image.revision"] != s.Revision || c.Labels["org.opencontainers.image.created"] != "2026-01-02T03:04:05Z" ||
				c.Labels["org.opencontainers.image.version"] != s.Version || len(cf.History) != 1 || !cf.History[0].Created.Equal(s.Time) {
				t.Errorf("config %+v", cf)
			}
		})
	}

	digest := func(s Stamp, bins ...string) v1.Hash {
		d, err := fakeIndex(t, s, bins...).Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	base := digest(s, "amd64 binary", "arm64 binary")
	later := NewStamp(s.Revision, s.Time.Add(time.Second), false, "")
	tests := []struct {
		name string
		d    v1.Hash
		same bool
	}{
		{"the same again", digest(s, "amd64 binary", "arm64 binary"), true},
		{"another binary", digest(s, "amd64 binary", "arm64 binary 2"), false},
		{"another commit time", digest(later, "amd64 binary", "arm64 binary"), false},
		{"another revision", digest(NewStamp("f"+s.Revision[1:], s.Time, false, ""), "amd64 binary", "arm64 binary"), false},
	}
	for _, tt := range tests {
		if (tt.d == base) != tt.same {
			t.Errorf("%s: digest %s, first %s; want same=%t", tt.name, tt.d, base, tt.same)
		}
	}
}

// TestWriteLayoutAndArchive writes one index twice: the same layout and archive bytes, entries
// in order with fixed modes and times, index.json naming the image for containerd, and no
// artifactType in the index.
func TestWriteLayoutAndArchive(t *testing.T) {
	s := NewStamp("0123456789abcdef0123456789abcdef01234567", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), false, "")
	var archives [][]byte
	for i := range 2 {
		dir := t.TempDir()
		idx := fakeIndex(t, s, "amd64 binary", "arm64 binary")
		if err := WriteLayout(filepath.Join(dir, "layout"), idx, "ghcr.io/example/webapp-hook:dev"); err != nil {
			t.Fatal(err)
		}
		if err := WriteArchive(filepath.Join(dir, "layout"), filepath.Join(dir, "a.tar"), s.Time); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "a.tar"))
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, b)
		if i > 0 {
			continue
		}
		var top v1.IndexManifest
		raw, _ := os.ReadFile(filepath.Join(dir, "layout", "index.json"))
		if err := json.Unmarshal(raw, &top); err != nil {
			t.Fatal(err)
		}
		want, _ := idx.Digest()
		if len(top.Manifests) != 1 || top.Manifests[0].Digest != want ||
			top.Manifests[0].Annotations[AnnotationRefName] != "ghcr.io/example/webapp-hook:dev" ||
			top.Manifests[0].Annotations[AnnotationContainerdName] != "ghcr.io/example/webapp-hook:dev" {
			t.Errorf("index.json %s; want the index %s named for containerd", raw, want)
		}
		read, err := layout.ImageIndexFromPath(filepath.Join(dir, "layout"))
		if err != nil {
			t.Fatal(err)
		}
		inner, err := read.ImageIndex(want)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ = inner.RawManifest()
		if bytes.Contains(raw, []byte("artifactType")) || !bytes.Contains(raw, []byte(`"platform":{"architecture":"arm64","os":"linux"}`)) {
			t.Errorf("index %s; want platforms and no artifactType", raw)
		}
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Error("two archives of one index differ")
	}
	var names []string
	tr := tar.NewReader(bytes.NewReader(archives[0]))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		wantMode := int64(0o644)
		if h.Typeflag == tar.TypeDir {
			wantMode = 0o755
		}
		if h.Mode != wantMode || h.Uid != 0 || !h.ModTime.Equal(s.Time) {
			t.Errorf("%s: mode %o uid %d time %v; want %o, 0, %v", h.Name, h.Mode, h.Uid, h.ModTime, wantMode, s.Time)
		}
	}
	// 2 images × (manifest, config, layer) and the index.
	if len(names) != 4+7 || names[0] != "blobs/" || names[1] != "blobs/sha256/" || names[len(names)-2] != "index.json" || names[len(names)-1] != "oci-layout" || !slices.IsSorted(names) {
		t.Errorf("archive entries %v; want blobs/, blobs/sha256/, 7 blobs, index.json, oci-layout, in order", names)
	}
}

func TestRunUsage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a platform without an architecture", []string{"-platforms", "linux"}, `"linux" is not os/arch`},
		{"an argument", []string{"extra"}, "unexpected arguments: extra"},
		{"a program of another name", []string{"-binary", "kubectl-webapp"}, `"kubectl-webapp" is neither webapp-hook nor webapp-notifier`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := run(append([]string{"-repo", "../.."}, tt.args...), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr.String(), tt.want)
			}
		})
	}
}

// TestImageNames checks that what installs each program names the image `make image` builds of
// it (the Makefile's IMAGE and NOTIFIER_IMAGE): the kustomization or component that runs it, and
// the chart's default values, so that `make image` then `kind load image-archive` runs what it
// built, with either install.
func TestImageNames(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	b, err := os.ReadFile("../../charts/webapp-operator/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		prog          Program
		variable      string
		kustomization string
		chart         []string // the path of the chart's image values
	}{
		{Hook, "IMAGE", "metacontroller/base/kustomization.yaml", []string{"image"}},
		{Notifier, "NOTIFIER_IMAGE", "metacontroller/notifications/kustomization.yaml", []string{"notifications", "image"}},
	} {
		t.Run(tt.prog.Name, func(t *testing.T) {
			m := regexp.MustCompile(`(?m)^` + tt.variable + ` \?= (\S+)$`).FindSubmatch(makefile)
			if m == nil {
				t.Fatalf("the Makefile sets no %s default", tt.variable)
			}
			built := string(m[1])
			if !strings.HasSuffix(strings.Split(built, ":")[0], "/"+tt.prog.Name) {
				t.Errorf("%s ?= %s; want an image named %s", tt.variable, built, tt.prog.Name)
			}
			var k struct {
				Images []struct{ Name, NewName, NewTag string }
			}
			kb, err := os.ReadFile("../../" + tt.kustomization)
			if err != nil {
				t.Fatal(err)
			}
			if err := yaml.Unmarshal(kb, &k); err != nil {
				t.Fatal(err)
			}
			if len(k.Images) != 1 || k.Images[0].Name != tt.prog.Name || k.Images[0].NewName+":"+k.Images[0].NewTag != built {
				t.Errorf("%s images %+v; want %s set to %s, as make image names it", tt.kustomization, k.Images, tt.prog.Name, built)
			}
			var v any = values
			for _, key := range tt.chart {
				v, _ = v.(map[string]any)[key]
			}
			img, _ := v.(map[string]any)
			if got := fmt.Sprintf("%v:%v", img["repository"], img["tag"]); got != built {
				t.Errorf("the chart's %s is %s; want %s, as make image names it", strings.Join(tt.chart, "."), got, built)
			}
		})
	}
}

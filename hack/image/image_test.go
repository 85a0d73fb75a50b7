//go:build image

package main

// The tests of the built image, with the build tag image: `make image-test` builds the image
// into IMAGE_DIR and runs them on it (WEBAPP_IMAGE_DIR); without that variable they build one
// into a temporary directory first. runc, umoci and skopeo come from hack/container-tools.sh.

import (
	"archive/tar"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// repo is the checkout's root.
var repo, _ = filepath.Abs("../..")

// builtDir is the directory of the hook's image under test, notifierDir the notifier's: each with
// LayoutDir, the program's ArchiveFile and DigestFile.
var builtDir, notifierDir string

// notifierDirIn is where `make image` writes the notifier's image when it writes the hook's in
// dir: NOTIFIER_IMAGE_DIR's default.
func notifierDirIn(dir string) string { return filepath.Join(dir, Notifier.Name) }

// dirOf is the directory of prog's image under test.
func dirOf(prog Program) string {
	if prog.Name == Notifier.Name {
		return notifierDir
	}
	return builtDir
}

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	for _, tool := range []string{"runc", "umoci", "skopeo"} {
		if _, err := exec.LookPath(tool); err != nil {
			fmt.Fprintf(os.Stderr, "%s is missing: installing runc, umoci and skopeo with hack/container-tools.sh\n", tool)
			cmd := exec.Command("bash", filepath.Join(repo, "hack/container-tools.sh"))
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "hack/container-tools.sh: %v\n", err)
				return 1
			}
			break
		}
	}
	builtDir = os.Getenv("WEBAPP_IMAGE_DIR")
	if builtDir != "" {
		notifierDir = cmp.Or(os.Getenv("WEBAPP_NOTIFIER_IMAGE_DIR"), notifierDirIn(builtDir))
		// A build of another commit would fail the tests for no fault of the image.
		head, err := command(time.Minute, "git", "-C", repo, "rev-parse", "HEAD")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		for _, dir := range []string{builtDir, notifierDir} {
			rev, err := builtRevision(dir)
			if err != nil || rev != strings.TrimSpace(string(head)) {
				fmt.Fprintf(os.Stderr, "%s holds no build of HEAD %s (%q, %v): make image-test builds it first\n", dir, bytes.TrimSpace(head), rev, err)
				return 1
			}
		}
	}
	if builtDir == "" {
		tmp, err := os.MkdirTemp("", "webapp-hook-image-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(tmp)
		if out, err := makeImage(tmp, "ghcr.io/example/webapp-hook:dev"); err != nil {
			fmt.Fprintf(os.Stderr, "make image: %v\n%s", err, out)
			return 1
		}
		builtDir, notifierDir = tmp, notifierDirIn(tmp)
	}
	return m.Run()
}

// builtRevision is the revision the index in dir's layout says it was built from.
func builtRevision(dir string) (string, error) {
	p, err := layout.FromPath(filepath.Join(dir, LayoutDir))
	if err != nil {
		return "", err
	}
	top, err := p.ImageIndex()
	if err != nil {
		return "", err
	}
	im, err := top.IndexManifest()
	if err != nil {
		return "", err
	}
	if len(im.Manifests) != 1 {
		return "", fmt.Errorf("index.json lists %d entries; want 1", len(im.Manifests))
	}
	idx, err := top.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		return "", err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return "", err
	}
	return m.Annotations["org.opencontainers.image.revision"], nil
}

// command runs a program with a deadline and returns its standard output; its standard error
// goes into the error.
func command(timeout time.Duration, prog string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w\n%s", prog, strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// makeImage runs `make image` into dir, with the hook's image named image (the notifier's into
// notifierDirIn(dir), named as the Makefile names it), and returns its output.
func makeImage(dir, image string, target ...string) ([]byte, error) {
	if len(target) == 0 {
		target = []string{"image"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := append([]string{"-C", repo, "--no-print-directory"}, target...)
	cmd := exec.CommandContext(ctx, "make", append(args, "IMAGE_DIR="+dir, "IMAGE="+image)...)
	return cmd.CombinedOutput()
}

// built is the image under test as its layout holds it.
type built struct {
	digest  v1.Hash
	name    string // index.json's name for it
	index   v1.ImageIndex
	archive string
}

// readBuilt reads prog's image from its layout in dir.
func readBuilt(t *testing.T, dir string, prog Program) built {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, DigestFile))
	if err != nil {
		t.Fatal(err)
	}
	digest, err := v1.NewHash(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := layout.FromPath(filepath.Join(dir, LayoutDir))
	if err != nil {
		t.Fatal(err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 || im.Manifests[0].Digest != digest {
		t.Fatalf("index.json lists %+v; want the one index %s", im.Manifests, digest)
	}
	idx, err := top.ImageIndex(digest)
	if err != nil {
		t.Fatal(err)
	}
	return built{digest: digest, name: im.Manifests[0].Annotations[AnnotationRefName], index: idx, archive: filepath.Join(dir, prog.ArchiveFile())}
}

// platformImage is the image of the index for linux/arch.
func (b built) platformImage(t *testing.T, arch string) v1.Image {
	t.Helper()
	im, err := b.index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range im.Manifests {
		if d.Platform != nil && d.Platform.OS == "linux" && d.Platform.Architecture == arch {
			img, err := b.index.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			return img
		}
	}
	t.Fatalf("no linux/%s image in the index", arch)
	return nil
}

// layerFiles reads the image's layers: each file's header and content.
func layerFiles(t *testing.T, img v1.Image) ([]*tar.Header, [][]byte) {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	var headers []*tar.Header
	var contents [][]byte
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			headers, contents = append(headers, h), append(contents, b)
		}
		rc.Close()
	}
	return headers, contents
}

func fileDigest(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestReproducible builds the images a second time, with `make image` into another directory,
// and wants, for the hook's and the notifier's, the same digest, the same index.json and the
// same archive, byte for byte.
func TestReproducible(t *testing.T) {
	hookName := readBuilt(t, builtDir, Hook).name
	dir := t.TempDir()
	start := time.Now()
	if out, err := makeImage(dir, hookName); err != nil {
		t.Fatalf("make image: %v\n%s", err, out)
	}
	t.Logf("the second build: %.1fs", time.Since(start).Seconds())
	for _, prog := range []Program{Hook, Notifier} {
		t.Run(prog.Name, func(t *testing.T) {
			firstDir, secondDir := dirOf(prog), dir
			if prog.Name == Notifier.Name {
				secondDir = notifierDirIn(dir)
			}
			first, second := readBuilt(t, firstDir, prog), readBuilt(t, secondDir, prog)
			t.Logf("build 1: %s; build 2: %s", first.digest, second.digest)
			if second.digest != first.digest {
				t.Errorf("two builds of one commit: digests %s and %s", first.digest, second.digest)
			}
			for _, f := range []string{filepath.Join(LayoutDir, "index.json"), prog.ArchiveFile()} {
				a, b := fileDigest(t, filepath.Join(firstDir, f)), fileDigest(t, filepath.Join(secondDir, f))
				t.Logf("%s sha256: %s and %s", f, a, b)
				if a != b {
					t.Errorf("%s differs between two builds of one commit", f)
				}
			}
		})
	}
}

// TestContents checks each platform's image, of the hook and of the notifier: OCI media types,
// the config (user, entrypoint, ports, labels from the commit), one layer with the binary alone,
// static and built for that platform. skopeo reads the archive and names the same digest.
func TestContents(t *testing.T) {
	out, err := command(time.Minute, "git", "-C", repo, "log", "-1", "--format=%H %cI")
	if err != nil {
		t.Fatal(err)
	}
	rev, committed, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	commitTime, err := time.Parse(time.RFC3339, committed)
	if err != nil {
		t.Fatal(err)
	}
	for _, prog := range []struct {
		Program
		ports []string
	}{{Hook, []string{"8080/tcp", "9090/tcp"}}, {Notifier, []string{"9090/tcp"}}} {
		t.Run(prog.Name, func(t *testing.T) {
			b := readBuilt(t, dirOf(prog.Program), prog.Program)
			if mt, _ := b.index.MediaType(); mt != "application/vnd.oci.image.index.v1+json" {
				t.Errorf("index media type %s; want an OCI image index", mt)
			}
			if im, _ := b.index.IndexManifest(); len(im.Manifests) != 2 {
				t.Errorf("%d images in the index; want linux/amd64 and linux/arm64", len(im.Manifests))
			}
			if full, err := NormalizeImage(b.name); err != nil || full != b.name || !strings.HasSuffix(strings.Split(b.name, ":")[0], "/"+prog.Name) {
				t.Errorf("index.json names the image %q; want a full name of %s, as containerd stores it", b.name, prog.Name)
			}
			for _, tt := range []struct {
				arch    string
				machine elf.Machine
			}{{"amd64", elf.EM_X86_64}, {"arm64", elf.EM_AARCH64}} {
				t.Run(tt.arch, func(t *testing.T) {
					img := b.platformImage(t, tt.arch)
					m, err := img.Manifest()
					if err != nil {
						t.Fatal(err)
					}
					if m.MediaType != "application/vnd.oci.image.manifest.v1+json" || m.Config.MediaType != "application/vnd.oci.image.config.v1+json" || len(m.Layers) != 1 {
						t.Errorf("manifest %+v; want OCI media types and one layer", m)
					}
					cf, err := img.ConfigFile()
					if err != nil {
						t.Fatal(err)
					}
					c := cf.Config
					checks := []struct {
						what      string
						got, want any
					}{
						{"architecture", cf.OS + "/" + cf.Architecture, "linux/" + tt.arch},
						{"created", cf.Created.UTC(), commitTime.UTC()},
						{"user", c.User, "65532:65532"},
						{"entrypoint", c.Entrypoint, []string{"/" + prog.Name}},
						{"cmd", c.Cmd, []string(nil)},
						{"ports", slices.Sorted(maps.Keys(c.ExposedPorts)), prog.ports},
						{"title label", c.Labels["org.opencontainers.image.title"], prog.Name},
						{"revision label", c.Labels["org.opencontainers.image.revision"], rev},
						{"created label", c.Labels["org.opencontainers.image.created"], commitTime.UTC().Format(time.RFC3339)},
						{"source label", c.Labels["org.opencontainers.image.source"], "https://github.com/example/webapp-operator"},
						{"version label names the commit", strings.Contains(c.Labels["org.opencontainers.image.version"], rev[:12]) ||
							regexp.MustCompile(`^v\d`).MatchString(c.Labels["org.opencontainers.image.version"]), true},
					}
					for _, ck := range checks {
						if fmt.Sprint(ck.got) != fmt.Sprint(ck.want) {
							t.Errorf("%s = %v; want %v", ck.what, ck.got, ck.want)
						}
					}

					headers, contents := layerFiles(t, img)
					if len(headers) != 1 {
						t.Fatalf("layer files %d; want the binary alone", len(headers))
					}
					h := headers[0]
					if h.Name != prog.Name || h.Typeflag != tar.TypeReg || h.Mode != 0o755 || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(commitTime) {
						t.Errorf("layer file %s mode %o owner %d:%d time %v; want %s, 0755, root, the commit time", h.Name, h.Mode, h.Uid, h.Gid, h.ModTime, prog.Name)
					}
					f, err := elf.NewFile(bytes.NewReader(contents[0]))
					if err != nil {
						t.Fatalf("the binary is not ELF: %v", err)
					}
					if f.Machine != tt.machine || f.Class != elf.ELFCLASS64 {
						t.Errorf("binary for %s %s; want %s", f.Machine, f.Class, tt.machine)
					}
					for _, p := range f.Progs {
						if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
							t.Errorf("the binary has %s: not static", p.Type)
						}
					}
					if f.Section(".symtab") != nil {
						t.Error("the binary has a symbol table: not built with -s")
					}
					t.Logf("%s for %s: %d bytes", prog.Name, tt.arch, len(contents[0]))
				})
			}

			raw, err := command(time.Minute, "skopeo", "inspect", "--raw", "oci-archive:"+b.archive)
			if err != nil {
				t.Fatal(err)
			}
			if got := (v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", sha256.Sum256(raw))}); got != b.digest {
				t.Errorf("skopeo reads the archive's index as %s; want %s", got, b.digest)
			}
		})
	}
}

// TestDockerfileConfig compares the Dockerfile's final stage as written with the built image's
// config as skopeo inspects it, for each platform: user, entrypoint, command, ports, labels
// (their values with the build arguments `make docker-image` passes) and files.
func TestDockerfileConfig(t *testing.T) {
	b := readBuilt(t, builtDir, Hook)
	stages := readDockerfile(t)
	final := stages[len(stages)-1]
	for _, arch := range []string{"amd64", "arm64"} {
		t.Run(arch, func(t *testing.T) {
			out, err := command(time.Minute, "skopeo", "inspect", "--config", "--override-os", "linux", "--override-arch", arch, "oci-archive:"+b.archive)
			if err != nil {
				t.Fatal(err)
			}
			var cf v1.ConfigFile
			if err := json.Unmarshal(out, &cf); err != nil {
				t.Fatal(err)
			}
			if cf.Architecture != arch {
				t.Fatalf("skopeo inspected %s; want %s", cf.Architecture, arch)
			}
			// The labels as docker build makes them from the Dockerfile with the build arguments
			// of this image's commit.
			args := map[string]string{}
			for _, m := range regexp.MustCompile(`--build-arg (\w+)=(\S*)`).FindAllStringSubmatch(DockerBuildArgs(cf.Config.Labels["org.opencontainers.image.source"], Stamp{
				Revision: cf.Config.Labels["org.opencontainers.image.revision"],
				Version:  cf.Config.Labels["org.opencontainers.image.version"],
				Time:     cf.Created.UTC(),
			}), -1) {
				args[m[1]] = m[2]
			}
			dockerLabels := map[string]string{}
			for k, v := range final.Labels {
				dockerLabels[k] = os.Expand(v, func(s string) string { return args[s] })
			}
			headers, _ := layerFiles(t, b.platformImage(t, arch))
			var files []string
			for _, h := range headers {
				files = append(files, h.Name)
			}
			checks := []struct {
				what            string
				dockerfile, img any
			}{
				{"USER", final.User, cf.Config.User},
				{"ENTRYPOINT", final.Entrypoint, cf.Config.Entrypoint},
				{"CMD", final.Cmd, cf.Config.Cmd},
				{"EXPOSE", final.Ports, slices.Sorted(maps.Keys(cf.Config.ExposedPorts))},
				{"LABEL", dockerLabels, cf.Config.Labels},
				{"COPY", final.Files, files},
			}
			for _, ck := range checks {
				if fmt.Sprint(ck.dockerfile) != fmt.Sprint(ck.img) {
					t.Errorf("%s: the Dockerfile has %v; the built image %v", ck.what, ck.dockerfile, ck.img)
				}
			}
		})
	}
}

// TestPush pushes the image with `make image-push` to a registry on loopback (go-containerregistry's,
// in memory) under another name, and reads it back: the same digest, both platforms.
func TestPush(t *testing.T) {
	want := readBuilt(t, builtDir, Hook).digest
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	image := strings.TrimPrefix(srv.URL, "http://") + "/example/webapp-hook:pushed"
	out, err := makeImage(t.TempDir(), image, "image-push", "PUSH_FLAGS=--dest-tls-verify=false")
	if err != nil {
		t.Fatalf("make image-push: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "pushed "+image+" at "+want.String()) {
		t.Errorf("make image-push said\n%s\nwant it to name %s", out, want)
	}
	// What docs/security.md has one read to verify a pushed image: the index's digest and the revision.
	out, err = command(time.Minute, "skopeo", "inspect", "--tls-verify=false", "docker://"+image)
	if err != nil {
		t.Fatal(err)
	}
	var inspected struct {
		Digest string
		Labels map[string]string
	}
	if err := json.Unmarshal(out, &inspected); err != nil {
		t.Fatal(err)
	}
	if rev, _ := command(time.Minute, "git", "-C", repo, "rev-parse", "HEAD"); inspected.Digest != want.String() ||
		inspected.Labels["org.opencontainers.image.revision"] != strings.TrimSpace(string(rev)) {
		t.Errorf("skopeo inspect of the pushed image: digest %s, revision %s; want %s and %s", inspected.Digest,
			inspected.Labels["org.opencontainers.image.revision"], want, rev)
	}
	ref, err := name.ParseReference(image, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	got, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pushed %s: %s", image, got)
	if got != want {
		t.Errorf("the registry has %s; want the built digest %s (a build under another name, pushed)", got, want)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatalf("%s: %v", d.Platform, err)
		}
		if _, err := img.Layers(); err != nil {
			t.Fatalf("%s: %v", d.Platform, err)
		}
		platforms = append(platforms, cf.OS+"/"+cf.Architecture+" "+cf.Config.User)
	}
	if want := []string{"linux/amd64 65532:65532", "linux/arm64 65532:65532"}; !slices.Equal(platforms, want) {
		t.Errorf("pushed images %v; want %v", platforms, want)
	}
}

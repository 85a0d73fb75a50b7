package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// User is the user and group of every image: distroless's "nonroot", the runAsUser and
// runAsGroup of metacontroller/base/hook.yaml and metacontroller/notifications/notifier.yaml.
// The Dockerfile's final stage says the same of the hook (USER, ENTRYPOINT, EXPOSE), and a test
// compares the two.
const User = "65532:65532"

// Program is a binary of the repository, and the image that holds it alone.
type Program struct {
	// Name is the binary's name: its file in the image, at Entrypoint, the image's title label,
	// and the name of its OCI archive, ArchiveFile.
	Name string
	// Module is the directory of the Go module that builds it, relative to the repository's
	// root, and Package the package go build builds there.
	Module, Package string
	// Ports are the ports the image exposes.
	Ports []string
}

// The programs -binary names.
var (
	// Hook is the hook: its port (--addr) and its metrics port (--metrics-addr).
	Hook = Program{Name: "webapp-hook", Module: ".", Package: "./cmd/webapp-hook", Ports: []string{"8080/tcp", "9090/tcp"}}
	// Notifier is the notifier (docs/notifications.md), a Go module of its own so that
	// notifications-engine's services stay out of the hook's: its metrics port (--metrics-addr).
	Notifier = Program{Name: "webapp-notifier", Module: "cmd/webapp-notifier", Package: ".", Ports: []string{"9090/tcp"}}
	// Programs are the programs by name.
	Programs = map[string]Program{Hook.Name: Hook, Notifier.Name: Notifier}
)

// Entrypoint is where the binary is in the image, and its entrypoint: "/" and its name.
func (p Program) Entrypoint() string { return "/" + p.Name }

// ArchiveFile is the name of the image's OCI archive in Options.Out: its name and ".tar".
func (p Program) ArchiveFile() string { return p.Name + ".tar" }

// Names of the build's outputs in Options.Out, beside the program's ArchiveFile.
const (
	LayoutDir  = "layout"
	DigestFile = "digest"
)

// Annotations of the image's entry in index.json: containerd (ctr images import, which kind load
// image-archive runs) names an imported image by io.containerd.image.name, else by the OCI ref
// name, and keeps a full name as it is.
const (
	AnnotationRefName        = "org.opencontainers.image.ref.name"
	AnnotationContainerdName = "io.containerd.image.name"
)

// Options say what to build and where.
type Options struct {
	// Repo is the root of the repository's module and of its git checkout.
	Repo string
	// Program is the binary to build, Hook or Notifier; the zero Program is Hook.
	Program Program
	// Image names the image in the layout, e.g. ghcr.io/example/webapp-hook:dev.
	Image string
	// Out is the directory that gets LayoutDir, the program's ArchiveFile and DigestFile.
	Out string
	// Platforms are the platforms to build, each an image of the index.
	Platforms []v1.Platform
	// Source is the repository's URL, for the org.opencontainers.image.source label.
	Source string
	// Log, when set, gets a line for each step.
	Log io.Writer
}

// Stamp is what a build records of the commit it builds.
type Stamp struct {
	// Revision is the commit's hash.
	Revision string
	// Time is the commit's time (committer date), in UTC: the image's created time and every
	// file's modification time.
	Time time.Time
	// Modified says that the tree differed from the commit (git status --porcelain).
	Modified bool
	// Version is the tag at the commit, or else a Go pseudo-version
	// (v0.0.0-yyyymmddhhmmss-abcdefabcdef), with +dirty when Modified.
	Version string
}

// PlatformImage is one image of the index.
type PlatformImage struct {
	Platform v1.Platform
	Digest   v1.Hash
}

// Result is what a build made.
type Result struct {
	// Image is the image's name in index.json, in the full form containerd stores.
	Image string
	// Digest is the image index's digest: the one to pin, and the one a push keeps.
	Digest v1.Hash
	// Images are the index's images, one per platform, in the order of Options.Platforms.
	Images []PlatformImage
	Stamp  Stamp
	// Layout, Archive and DigestPath are the outputs' paths.
	Layout, Archive, DigestPath string
	// ArchiveSHA256 is the archive file's SHA-256, hex.
	ArchiveSHA256 string
}

// Build builds the image for every platform and writes the layout, the archive and the digest
// into o.Out, replacing what a previous build wrote there.
func Build(o Options) (Result, error) {
	logf := func(format string, args ...any) {
		if o.Log != nil {
			fmt.Fprintf(o.Log, "image: "+format+"\n", args...)
		}
	}
	prog := o.Program
	if prog.Name == "" {
		prog = Hook
	}
	ref, err := NormalizeImage(o.Image)
	if err != nil {
		return Result{}, err
	}
	stamp, err := ReadStamp(o.Repo)
	if err != nil {
		return Result{}, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return Result{}, err
	}
	work, err := os.MkdirTemp(o.Out, ".build-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(work)

	labels := Labels(prog.Name, o.Source, stamp)
	var adds []mutate.IndexAddendum
	for _, p := range o.Platforms {
		logf("building %s for %s at %s (%s)", prog.Name, p, stamp.Revision, stamp.Version)
		bin, err := goBuild(o.Repo, prog, p, stamp, work)
		if err != nil {
			return Result{}, err
		}
		img, err := PlatformImageOf(prog, p, bin, stamp, labels)
		if err != nil {
			return Result{}, fmt.Errorf("image for %s: %w", p, err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: plainEntry{img}, Descriptor: v1.Descriptor{Platform: &p}})
	}
	idx := mutate.Annotations(mutate.AppendManifests(empty.Index, adds...), labels).(v1.ImageIndex)
	digest, err := idx.Digest()
	if err != nil {
		return Result{}, err
	}
	res := Result{Image: ref, Digest: digest, Stamp: stamp}
	im, err := idx.IndexManifest()
	if err != nil {
		return Result{}, err
	}
	for _, d := range im.Manifests {
		res.Images = append(res.Images, PlatformImage{Platform: *d.Platform, Digest: d.Digest})
	}

	logf("writing the layout and the archive")
	if err := WriteLayout(filepath.Join(work, LayoutDir), idx, ref); err != nil {
		return Result{}, err
	}
	if err := WriteArchive(filepath.Join(work, LayoutDir), filepath.Join(work, prog.ArchiveFile()), stamp.Time); err != nil {
		return Result{}, err
	}
	res.Layout, res.Archive, res.DigestPath = filepath.Join(o.Out, LayoutDir), filepath.Join(o.Out, prog.ArchiveFile()), filepath.Join(o.Out, DigestFile)
	if err := replaceLayout(filepath.Join(work, LayoutDir), res.Layout); err != nil {
		return Result{}, err
	}
	if err := os.Rename(filepath.Join(work, prog.ArchiveFile()), res.Archive); err != nil {
		return Result{}, err
	}
	if err := os.WriteFile(res.DigestPath, []byte(digest.String()+"\n"), 0o644); err != nil {
		return Result{}, err
	}
	if res.ArchiveSHA256, err = fileSHA256(res.Archive); err != nil {
		return Result{}, err
	}
	return res, nil
}

// NormalizeImage checks an image name with a tag and returns it in the full form containerd
// stores and the kubelet asks for: "webapp-hook:dev" is docker.io/library/webapp-hook:dev, a
// name without a tag gets :latest.
func NormalizeImage(s string) (string, error) {
	tag, err := name.NewTag(s)
	if err != nil {
		return "", fmt.Errorf("image name %q: %w", s, err)
	}
	registry := tag.RegistryStr()
	if registry == name.DefaultRegistry {
		registry = "docker.io"
	}
	return registry + "/" + tag.RepositoryStr() + ":" + tag.TagStr(), nil
}

// ReadStamp reads the commit at HEAD of the git checkout at repo.
func ReadStamp(repo string) (Stamp, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	rev, err := git("rev-parse", "HEAD")
	if err != nil {
		return Stamp{}, err
	}
	committed, err := git("log", "-1", "--format=%cI", "HEAD")
	if err != nil {
		return Stamp{}, err
	}
	t, err := time.Parse(time.RFC3339, committed)
	if err != nil {
		return Stamp{}, fmt.Errorf("commit time %q: %w", committed, err)
	}
	status, err := git("status", "--porcelain")
	if err != nil {
		return Stamp{}, err
	}
	tag, err := git("describe", "--tags", "--exact-match", "--match", "v[0-9]*", "HEAD")
	if err != nil {
		tag = "" // no release tag at HEAD: a pseudo-version
	}
	return NewStamp(rev, t, status != "", tag), nil
}

// NewStamp makes the stamp of commit rev of time t, tagged tag ("" for none).
func NewStamp(rev string, t time.Time, modified bool, tag string) Stamp {
	t = t.UTC()
	v := tag
	if v == "" {
		short := rev
		if len(short) > 12 {
			short = short[:12]
		}
		v = "v0.0.0-" + t.Format("20060102150405") + "-" + short
	}
	if modified {
		v += "+dirty"
	}
	return Stamp{Revision: rev, Time: t, Modified: modified, Version: v}
}

// Labels are the OCI labels of the image of the program named title, also the index's
// annotations.
func Labels(title, source string, s Stamp) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":    title,
		"org.opencontainers.image.source":   source,
		"org.opencontainers.image.revision": s.Revision,
		"org.opencontainers.image.version":  s.Version,
		"org.opencontainers.image.created":  s.Time.Format(time.RFC3339),
	}
}

// LDFlags are the linker flags of the image's binary: no symbol table or DWARF, as the
// Dockerfile's, and the stamp in the variables that the hook's --version reads (the linker
// sets no variable a binary lacks: the notifier has none yet).
func LDFlags(s Stamp) string {
	return strings.Join([]string{
		"-s", "-w",
		"-X", "main.buildVersion=" + s.Version,
		"-X", "main.buildRevision=" + s.Revision,
		"-X", "main.buildTime=" + s.Time.Format(time.RFC3339),
		"-X", fmt.Sprintf("main.buildModified=%t", s.Modified),
	}, " ")
}

// DockerBuildArgs are the Dockerfile's build arguments for stamp s, so that `docker build`
// stamps its binary and labels its image as Build does.
func DockerBuildArgs(source string, s Stamp) string {
	return strings.Join([]string{
		"--build-arg", "VERSION=" + s.Version,
		"--build-arg", "REVISION=" + s.Revision,
		"--build-arg", "CREATED=" + s.Time.Format(time.RFC3339),
		"--build-arg", fmt.Sprintf("MODIFIED=%t", s.Modified),
		"--build-arg", "SOURCE=" + source,
	}, " ")
}

// goBuild cross-compiles prog, in its module of repo, for p into dir and returns the binary.
// Every setting that changes the binary's bytes is fixed here, not taken from the environment.
func goBuild(repo string, prog Program, p v1.Platform, s Stamp, dir string) ([]byte, error) {
	out := filepath.Join(dir, prog.Name+"-"+p.OS+"-"+p.Architecture)
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", LDFlags(s), "-o", out, prog.Package)
	cmd.Dir = filepath.Join(repo, prog.Module)
	// The last value of a key wins.
	cmd.Env = append(os.Environ(),
		"CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture,
		"GOAMD64=v1", "GOARM64=v8.0", "GOFLAGS=", "GOEXPERIMENT=", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build of %s for %s: %w\n%s", prog.Name, p, err, b)
	}
	return os.ReadFile(out)
}

// LayerTar is the image's one layer, uncompressed: the binary bin of prog at its Entrypoint,
// owned by root, mode 0755, modified at mtime.
func LayerTar(prog Program, bin []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{
		Typeflag: tar.TypeReg,
		Name:     strings.TrimPrefix(prog.Entrypoint(), "/"),
		Mode:     0o755,
		Size:     int64(len(bin)),
		ModTime:  mtime.UTC(),
		Format:   tar.FormatUSTAR,
	}); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PlatformImageOf is the image of prog for platform p: an OCI manifest and config, and one gzip
// layer holding bin.
func PlatformImageOf(prog Program, p v1.Platform, bin []byte, s Stamp, labels map[string]string) (v1.Image, error) {
	layerTar, err := LayerTar(prog, bin, s.Time)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestCompression), tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	ports := map[string]struct{}{}
	for _, port := range prog.Ports {
		ports[port] = struct{}{}
	}
	created := v1.Time{Time: s.Time}
	cfg := &v1.ConfigFile{
		Architecture: p.Architecture,
		OS:           p.OS,
		Variant:      p.Variant,
		Created:      created,
		Config: v1.Config{
			User:         User,
			Entrypoint:   []string{prog.Entrypoint()},
			ExposedPorts: ports,
			Labels:       labels,
		},
		RootFS: v1.RootFS{Type: "layers"},
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: created, CreatedBy: "COPY " + prog.Name + " " + prog.Entrypoint() + " # hack/image"},
	})
}

// plainEntry is an image whose entry in an index has no artifactType: go-containerregistry sets it
// to the config's media type, which the referrers API means for artifacts and which the image
// indexes of docker buildx and ko leave out.
type plainEntry struct{ v1.Image }

// Descriptor is the image's descriptor: media type, size and digest.
func (e plainEntry) Descriptor() (*v1.Descriptor, error) {
	mt, err := e.MediaType()
	if err != nil {
		return nil, err
	}
	size, err := e.Size()
	if err != nil {
		return nil, err
	}
	digest, err := e.Digest()
	if err != nil {
		return nil, err
	}
	return &v1.Descriptor{MediaType: mt, Size: size, Digest: digest}, nil
}

// WriteLayout writes idx as an OCI image layout at dir, its entry in index.json named ref.
func WriteLayout(dir string, idx v1.ImageIndex, ref string) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		AnnotationRefName:        ref,
		AnnotationContainerdName: ref,
	})); err != nil {
		return err
	}
	// go-containerregistry writes blobs 0600 or 0777: make every file readable, none executable.
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if d.IsDir() {
			mode = 0o755
		}
		return os.Chmod(path, mode)
	})
}

// WriteArchive writes the layout at dir as an OCI archive (an uncompressed tar of the layout's
// files) at file: entries in lexical order, directories 0755 and files 0644, owned by root and
// modified at mtime, so that the same layout always gives the same bytes.
func WriteArchive(dir, file string, mtime time.Time) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		h := &tar.Header{Name: filepath.ToSlash(rel), ModTime: mtime.UTC(), Format: tar.FormatUSTAR}
		switch {
		case d.IsDir():
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, h.Name+"/", 0o755
			return tw.WriteHeader(h)
		case d.Type().IsRegular():
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(len(b))
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			_, err = tw.Write(b)
			return err
		default:
			return fmt.Errorf("%s: not a file or directory", path)
		}
	})
	if err == nil {
		err = tw.Close()
	}
	return errors.Join(err, f.Close())
}

// replaceLayout moves the layout built at from to to, in place of a layout a previous build
// wrote there; it refuses to replace anything that is not an OCI layout.
func replaceLayout(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		if _, err := os.Stat(filepath.Join(to, "oci-layout")); err != nil {
			return fmt.Errorf("%s exists and is not an OCI image layout: not replacing it", to)
		}
		if err := os.RemoveAll(to); err != nil {
			return err
		}
	}
	return os.Rename(from, to)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
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

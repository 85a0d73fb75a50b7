// Command images builds the images of the end-to-end suite's real node, with go-containerregistry
// and no Docker engine, as hack/image builds the hook's: each a static Go binary (CGO_ENABLED=0,
// -trimpath) alone in one layer, for the machine's own platform, every time fixed, so that one
// source gives one digest.
//
//	go -C hack/node run ./images -out bin/node-images
//
// writes, for each image NAME below, the OCI layout NAME/ (the registry's -push reads it) and the
// OCI archive NAME.tar (ctr images import reads it):
//
//	pause         /pause as 65535:65535: the sandbox image containerd pins
//	testapp       /testapp as 65532:65532, port 8080, version v1
//	testapp-v2    the same app reporting version v2: another digest, for rollouts
//	testapp-root  the same app with no user, so root: what runAsNonRoot refuses
//
// It prints each image's name and digest.
package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is every time in the images: no build's time leaks into a digest.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// image is one image to build.
type image struct {
	name string
	// ref is the name it gets in index.json, as containerd stores it.
	ref     string
	pkg     string // the command, relative to the module
	path    string // where the binary is in the image: the entrypoint
	user    string
	env     []string
	ports   []string
	comment string
}

// PauseRef is the sandbox image's name, which containerd's config pins.
const PauseRef = "registry.k8s.io/webapp-e2e/pause:1"

var images = []image{
	{name: "pause", ref: PauseRef, pkg: "./pause", path: "/pause", user: "65535:65535"},
	{name: "testapp", ref: "localhost/webapp-e2e/testapp:1", pkg: "./testapp", path: "/testapp", user: "65532:65532", ports: []string{"8080/tcp"}, env: []string{"TESTAPP_VERSION=v1"}},
	{name: "testapp-v2", ref: "localhost/webapp-e2e/testapp:2", pkg: "./testapp", path: "/testapp", user: "65532:65532", ports: []string{"8080/tcp"}, env: []string{"TESTAPP_VERSION=v2"}},
	{name: "testapp-root", ref: "localhost/webapp-e2e/testapp-root:1", pkg: "./testapp", path: "/testapp", ports: []string{"8080/tcp"}, env: []string{"TESTAPP_VERSION=root"}},
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("node-images: ")
	out := flag.String("out", "bin/node-images", "output directory")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	work, err := os.MkdirTemp(*out, ".build-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)
	bins := map[string][]byte{}
	for _, im := range images {
		bin, ok := bins[im.pkg]
		if !ok {
			if bin, err = goBuild(im.pkg, work); err != nil {
				log.Fatal(err)
			}
			bins[im.pkg] = bin
		}
		digest, err := build(im, bin, *out)
		if err != nil {
			log.Fatalf("%s: %v", im.name, err)
		}
		fmt.Printf("%-13s %s %s\n", im.name, digest, im.ref)
	}
}

// goBuild builds the command pkg statically for this machine's platform.
func goBuild(pkg, dir string) ([]byte, error) {
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags", "-s -w", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH, "GOFLAGS=", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %w\n%s", pkg, err, b)
	}
	return os.ReadFile(out)
}

// build writes im's layout and archive into out and returns the image's digest.
func build(im image, bin []byte, out string) (v1.Hash, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: im.path[1:], Mode: 0o755, Size: int64(len(bin)), ModTime: epoch, Format: tar.FormatUSTAR}); err != nil {
		return v1.Hash{}, err
	}
	tw.Write(bin)
	tw.Close()
	layerTar := buf.Bytes()
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressionLevel(gzip.BestSpeed), tarball.WithCompressedCaching)
	if err != nil {
		return v1.Hash{}, err
	}
	ports := map[string]struct{}{}
	for _, p := range im.ports {
		ports[p] = struct{}{}
	}
	cfg := &v1.ConfigFile{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Created:      v1.Time{Time: epoch},
		Config:       v1.Config{User: im.user, Entrypoint: []string{im.path}, Env: im.env, ExposedPorts: ports},
		RootFS:       v1.RootFS{Type: "layers"},
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return v1.Hash{}, err
	}
	if img, err = mutate.Append(img, mutate.Addendum{Layer: layer, MediaType: types.OCILayer,
		History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "COPY " + im.pkg + " " + im.path + " # hack/node/images"}}); err != nil {
		return v1.Hash{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	dir := filepath.Join(out, im.name)
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	platform := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	if err := p.AppendImage(img, layout.WithPlatform(platform), layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": im.ref,
		"io.containerd.image.name":          im.ref,
	})); err != nil {
		return v1.Hash{}, err
	}
	return digest, archive(dir, filepath.Join(out, im.name+".tar"))
}

// archive writes the layout at dir as an OCI archive: a tar of its files, every one at epoch.
func archive(dir, path string) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: 0o755, ModTime: epoch, Format: tar.FormatPAX})
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o644, Size: int64(len(b)), ModTime: epoch, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

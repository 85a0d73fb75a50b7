package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run builds the image as the command line says and prints what it made; it returns the exit
// code: 0 built, 1 failed, 2 bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	repo := fs.String("repo", "", "root of the webapp-operator checkout (default: the git top level of the current directory)")
	binary := fs.String("binary", Hook.Name, "the program the image holds: "+Hook.Name+" or "+Notifier.Name)
	image := fs.String("image", "", "the image's name in the layout, with its tag (default: ghcr.io/example/<binary>:dev)")
	out := fs.String("out", "", "output directory, relative to -repo (default: bin/image for the hook, bin/image/<binary> for another)")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "comma-separated platforms, one image each in the index")
	source := fs.String("source", "https://github.com/example/webapp-operator", "the repository's URL, for the org.opencontainers.image.source label")
	buildArgs := fs.Bool("docker-build-args", false, "print the commit's stamp as docker build arguments for the Dockerfile, and build nothing")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	prog, ok := Programs[*binary]
	if !ok {
		fmt.Fprintf(stderr, "-binary: %q is neither %s nor %s\n", *binary, Hook.Name, Notifier.Name)
		return 2
	}
	if *image == "" {
		*image = "ghcr.io/example/" + prog.Name + ":dev"
	}
	if *out == "" {
		*out = "bin/image"
		if prog.Name != Hook.Name {
			*out = filepath.Join(*out, prog.Name)
		}
	}
	o := Options{Repo: *repo, Program: prog, Image: *image, Out: *out, Source: *source, Log: stderr}
	if o.Repo == "" {
		top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
		if err != nil {
			fmt.Fprintf(stderr, "-repo not given and no git top level here: %v\n", err)
			return 2
		}
		o.Repo = strings.TrimSpace(string(top))
	}
	if *buildArgs {
		s, err := ReadStamp(o.Repo)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		fmt.Fprintln(stdout, DockerBuildArgs(o.Source, s))
		return 0
	}
	if !filepath.IsAbs(o.Out) {
		o.Out = filepath.Join(o.Repo, o.Out)
	}
	for _, s := range strings.Split(*platforms, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(s))
		if err != nil || p.OS == "" || p.Architecture == "" {
			fmt.Fprintf(stderr, "-platforms: %q is not os/arch\n", s)
			return 2
		}
		o.Platforms = append(o.Platforms, *p)
	}
	res, err := Build(o)
	if err != nil {
		fmt.Fprintf(stderr, "image: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "image    %s\n", res.Image)
	fmt.Fprintf(stdout, "version  %s revision %s created %s\n", res.Stamp.Version, res.Stamp.Revision, res.Stamp.Time.Format("2006-01-02T15:04:05Z07:00"))
	fmt.Fprintf(stdout, "digest   %s  (index; also in %s)\n", res.Digest, res.DigestPath)
	for _, im := range res.Images {
		fmt.Fprintf(stdout, "         %s  %s\n", im.Digest, im.Platform)
	}
	fmt.Fprintf(stdout, "layout   %s\n", res.Layout)
	fmt.Fprintf(stdout, "archive  %s  (sha256 %s)\n", res.Archive, res.ArchiveSHA256)
	return 0
}

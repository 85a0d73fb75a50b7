// Command image builds the container image of webapp-hook, or of webapp-notifier (-binary), as
// an OCI image layout and an OCI archive, with go-containerregistry: no Docker engine, no base
// image, nothing from a registry.
//
// It cross-compiles the program in its Go module (CGO_ENABLED=0, -trimpath, -buildvcs=false, the
// commit stamped with -ldflags -X) for each platform, puts the static binary alone in one layer,
// and writes an image index of one manifest per platform:
//
//	go -C hack/image run . -repo "$PWD" -image ghcr.io/example/webapp-hook:dev -out bin/image
//	go -C hack/image run . -repo "$PWD" -binary webapp-notifier -image ghcr.io/example/webapp-notifier:dev -out bin/image/webapp-notifier
//
// (`make image` runs both). Each output directory then holds
//
//	layout/          the OCI image layout (skopeo: oci:bin/image/layout)
//	webapp-hook.tar  the same layout as an OCI archive (oci-archive:, kind load image-archive);
//	                 webapp-notifier.tar for the notifier
//	digest           the image index's digest, the one to pin
//
// The index.json of both names the image in org.opencontainers.image.ref.name and
// io.containerd.image.name, so that containerd (kind load image-archive) imports it under that
// name; the index's digest does not depend on the name.
//
// A build is reproducible: every time in the image is the commit's time (git log -1
// --format=%cI), every file in the layer and the archive has that modification time, owner 0 and
// a fixed mode, and the Go toolchain is pinned (GOTOOLCHAIN, the toolchain line of go.mod), so two
// builds of one commit give the same digest. A tree with uncommitted changes builds too, with the
// version marked +dirty and the binary's --version saying (modified).
//
// The tests beside it, with the build tag image (`make image-test`), check that: two builds'
// digests, each image's contents, the hook's against the Dockerfile, a push to a registry on
// loopback, and the hook's image run under runc as its user, with a read-only root filesystem,
// no capabilities and the flags of metacontroller/base/hook.yaml.
package main

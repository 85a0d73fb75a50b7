// Module image builds the hook's OCI image with go-containerregistry, with no Docker engine and
// no base image, and holds the tests that prove the image runs. It is a module of its own so that
// go-containerregistry stays out of the hook's dependencies.
module github.com/example/webapp-operator/hack/image

go 1.26.0

toolchain go1.27.3

require github.com/google/go-containerregistry v0.22.1

require (
	github.com/klauspost/compress v1.19.2 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	golang.org/x/sync v0.22.0 // indirect
)

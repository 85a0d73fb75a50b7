// Module image builds the hook's OCI image with go-containerregistry, with no Docker engine and
// no base image, and holds the tests that prove the image runs. It is a module of its own so that
// go-containerregistry stays out of the hook's dependencies.
module github.com/example/webapp-operator/hack/image

go 1.26.0

toolchain go1.27.3

require (
	github.com/google/go-containerregistry v0.22.1
	github.com/opencontainers/runtime-spec v1.3.0
	sigs.k8s.io/yaml v1.6.0
)

require (
	github.com/docker/cli v29.7.2+incompatible // indirect
	github.com/docker/docker-credential-helpers v0.9.3 // indirect
	github.com/klauspost/compress v1.20.4 // indirect
	github.com/opencontainers/go-digest v1.0.0 // indirect
	github.com/opencontainers/image-spec v1.1.1 // indirect
	github.com/sirupsen/logrus v1.9.4 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.47.0 // indirect
	gotest.tools/v3 v3.5.2 // indirect
)

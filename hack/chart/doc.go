// Package chart tests `make chart-push`: the packaged Helm chart pushed as an OCI artifact to a
// registry on loopback (go-containerregistry's, in memory), then read back, byte for byte. It is a
// module of its own, as hack/image is, so that go-containerregistry stays out of the hook's
// dependencies; `make chart-test` runs it.
package chart

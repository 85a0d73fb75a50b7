// Module gateway holds the smoke test of the Gateway binaries, bin/traefik and bin/prometheus
// (make gateway-test). It is a module of its own, as hack/chart is, so that the hook's
// `go test ./...` does not run it.
module github.com/example/webapp-operator/hack/gateway

go 1.26.0

toolchain go1.27.3

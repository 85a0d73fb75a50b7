// Package gateway tests the binaries that `make gateway-binaries` builds from the Go module proxy
// for the canary's analysis through a real Gateway and a real Prometheus: bin/traefik
// (hack/traefik.sh) routes requests to a backend on loopback and counts them, and bin/prometheus
// (hack/prometheus.sh) scrapes those counts and answers for them through its HTTP API. No
// Kubernetes is involved; everything listens on and talks to 127.0.0.1 only. `make gateway-test`
// runs it.
package gateway

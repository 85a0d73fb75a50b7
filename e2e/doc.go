// Package e2e puts every artifact of the project through a real control plane built from source:
// run it with `make e2e` or `go test -tags e2e ./e2e/...`.
package e2e

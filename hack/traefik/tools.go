//go:build tools

// Package traefik pins Traefik's server command, which hack/traefik.sh builds from the module proxy.
package traefik

import _ "github.com/traefik/traefik/v3/cmd/traefik"

// Package ext holds the extension points of Traefik's dynamic HTTP configuration: empty here, as
// in Traefik's open-source build.
package ext

// HTTP is embedded in Traefik's dynamic.HTTPConfiguration.
type HTTP struct{}

// Router is embedded in Traefik's dynamic.Router.
type Router struct{}

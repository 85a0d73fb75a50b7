// Module ext stands in for github.com/traefik/traefik/dynamic/ext, a nested module of Traefik's
// repository (pkg/config/dynamic/ext) that the module proxy does not serve; Traefik embeds its
// two structs, empty in the open-source build, in its dynamic HTTP configuration.
module github.com/traefik/traefik/dynamic/ext

go 1.26.0

//go:build tools

// Package etcd pins the etcd server that the end-to-end suite builds from source.
package etcd

import _ "go.etcd.io/etcd/server/v3"

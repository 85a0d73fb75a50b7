// Package node documents module node: the pieces of the end-to-end suite's real node that the
// project builds itself, each a command of its own:
//
//	pause     the sandbox image's process: waits for SIGTERM and reaps its children
//	testapp   the test app that the real-pod scenarios run (HTTP, files, env, crash, slow start,
//	          failing readiness and liveness)
//	images    builds pause, testapp and its variants into OCI image layouts and archives, with
//	          go-containerregistry and no Docker engine (make node-images)
//	registry  a registry on loopback with the test app's images, one repository behind basic auth
package node

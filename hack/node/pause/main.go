// Command pause is the process of the node's sandbox (pause) image: it holds the pod's
// namespaces, reaps any child handed to it as PID 1, and exits 0 on SIGTERM or SIGINT. It is a
// static Go binary, built by hack/node/images into the image that containerd pins as its
// sandbox image, so that no image comes from a registry outside this machine.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sigs {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}

// Command mkrequest writes a hook request with many related pods, for bench/load.sh:
//
//	go run ./bench/mkrequest -pods 1000 < webhook/testdata/large.request.json > /tmp/pods.json
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/example/webapp-operator/hooktest"
)

func main() {
	n := flag.Int("pods", 1000, "how many running pods to put in related")
	flag.Parse()
	in, err := io.ReadAll(os.Stdin)
	if err == nil {
		var out []byte
		if out, err = hooktest.WithPods(in, *n); err == nil {
			_, err = os.Stdout.Write(out)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mkrequest:", err)
		os.Exit(1)
	}
}

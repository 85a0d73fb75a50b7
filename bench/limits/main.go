// Command limits measures what a caller can cost a running webapp-hook, for bench/limits.sh:
//
//	go run ./bench/limits -hook /tmp/webapp-hook [NAME=value ...]
//
// It starts the binary -hook (with the NAME=value environment added, for the hook's deployed
// GOMEMLIMIT) once per measurement, on a free loopback port, and prints:
//
//   - the hook's peak RSS (VmHWM) before and after it answers one malformed body of about 14 MB,
//     parent.metadata.name an object, beside 13 MB of real-looking pods or 14 MB of small objects;
//   - how long an ordinary 9 KB /sync (webhook/testdata/large.request.json) waits behind four slow
//     clients that trickle their bodies, one byte every 250 ms, without a Content-Length
//     (chunked) or declaring 4 MiB each, which together is the whole default in-flight budget.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/example/webapp-operator/hooktest"
)

func main() {
	bin := flag.String("hook", "", "the webapp-hook binary to measure")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "limits: -hook is required")
		os.Exit(2)
	}
	env := flag.Args()
	large, err := os.ReadFile("webhook/testdata/large.request.json")
	check(err)

	withPods, err := hooktest.WithPods(large, 3000)
	check(err)
	var members map[string]json.RawMessage
	check(json.Unmarshal(withPods, &members))
	badName := `"parent":{"metadata":{"name":{},"namespace":"default"}}`
	malformed := []struct{ name, body string }{
		{"parent.metadata.name {}, then 13 MB of pods", `{` + badName + `,"related":` + string(members["related"]) + `}`},
		{"14 MB of small objects, then parent.metadata.name {}", `{"controller":[` + strings.Repeat("{},", (14<<20)/3) + `{}],` + badName + `}`},
	}
	for _, m := range malformed {
		h := start(*bin, env)
		h.post(large)
		before := h.peakRSS()
		t0 := time.Now()
		code := h.post([]byte(m.body))
		took := time.Since(t0)
		after := h.peakRSS()
		h.stop()
		fmt.Printf("(a) %.1f MB body, %s: %d in %.2fs; hook peak RSS %.1f MiB before it, %.1f MiB after (+%.1f MiB)\n",
			float64(len(m.body))/1e6, m.name, code, took.Seconds(), mib(before), mib(after), mib(after-before))
	}

	for _, slow := range []struct{ name, header string }{
		{"without Content-Length (chunked)", "Transfer-Encoding: chunked"},
		{"declaring 4 MiB each", "Content-Length: 4194304"},
	} {
		h := start(*bin, env)
		h.post(large)
		results := make(chan string, 4)
		for range 4 {
			go func() { results <- h.trickle(slow.header) }()
		}
		time.Sleep(300 * time.Millisecond) // all four are reading, or waiting for the budget
		t0 := time.Now()
		code := h.post(large)
		took := time.Since(t0)
		var slowCodes []string
		for range 4 {
			slowCodes = append(slowCodes, <-results)
		}
		h.stop()
		fmt.Printf("(b) a %.1f KB /sync behind 4 slow clients %s: %d after %.2fs; the slow clients got %s\n",
			float64(len(large))/1e3, slow.name, code, took.Seconds(), strings.Join(slowCodes, ", "))
	}
}

// hook is a running webapp-hook.
type hook struct {
	cmd  *exec.Cmd
	addr string
}

// start runs bin on a free loopback port with env added, and waits until it answers.
func start(bin string, env []string) *hook {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--addr", addr, "--metrics-addr=", "--shutdown-delay=0s", "--log-level=error")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	check(cmd.Start())
	for range 200 {
		if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
			resp.Body.Close()
			return &hook{cmd: cmd, addr: addr}
		}
		time.Sleep(25 * time.Millisecond)
	}
	cmd.Process.Kill()
	panic("the hook did not start")
}

// post sends body to /sync and returns the status code, or 0 when no answer came within 60s.
func (h *hook) post(body []byte) int {
	client := &http.Client{Timeout: 60 * time.Second}
	resp, err := client.Post("http://"+h.addr+"/sync", "application/json", bytes.NewReader(body))
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// trickle sends the headers of a /sync with header, then one byte of body every 250ms, until
// the hook answers or closes the connection, and returns what it answered and when.
func (h *hook) trickle(header string) string {
	conn, err := net.Dial("tcp", h.addr)
	check(err)
	defer conn.Close()
	t0 := time.Now()
	fmt.Fprintf(conn, "POST /sync HTTP/1.1\r\nHost: hook\r\nContent-Type: application/json\r\n%s\r\n\r\n", header)
	chunk := " "
	if strings.HasPrefix(header, "Transfer-Encoding") {
		chunk = "1\r\n \r\n"
	}
	answered := make(chan string, 1)
	go func() {
		conn.SetReadDeadline(time.Now().Add(60 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			answered <- fmt.Sprintf("closed after %.1fs", time.Since(t0).Seconds())
			return
		}
		resp.Body.Close()
		answered <- fmt.Sprintf("%d after %.1fs", resp.StatusCode, time.Since(t0).Seconds())
	}()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case a := <-answered:
			return a
		case <-tick.C:
			if _, err := io.WriteString(conn, chunk); err != nil {
				return <-answered
			}
		}
	}
}

// peakRSS is the hook's peak resident set size so far, in bytes (VmHWM).
func (h *hook) peakRSS() int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", h.cmd.Process.Pid))
	check(err)
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			check(err)
			return kb << 10
		}
	}
	panic("no VmHWM")
}

func (h *hook) stop() {
	h.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { h.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		h.cmd.Process.Kill()
		<-done
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "limits:", err)
		os.Exit(1)
	}
}

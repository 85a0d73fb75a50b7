// Command testapp is the app the end-to-end suite's real-pod scenarios run on the real node. It
// serves HTTP and, on request by flag, environment variable or HTTP call, misbehaves the ways a
// user's app does:
//
//	GET  /           "testapp <version> on <hostname>": who answered, after -delay; 500 with the
//	                 same body for the share of requests -fail says (readiness is not affected)
//	GET  /file       the content of the file -file names (404 when unset, 500 when unreadable)
//	GET  /env        NAME=value of the environment variable -env names
//	GET  /whoami     JSON: uid, gid, effective capabilities and seccomp mode, from /proc/self/status
//	GET  /ready      200, or 503 when -not-ready is set or after POST /ready/fail
//	POST /ready/fail /ready answers 503 from now on; POST /ready/ok undoes it
//	GET  /live       200, or 500 when -not-live is set
//
// Flags, each also read from the environment variable in brackets when the flag is not given:
// -listen [TESTAPP_LISTEN] (default :8080), -file [TESTAPP_FILE], -env [TESTAPP_ENV],
// -version [TESTAPP_VERSION], -start-delay [TESTAPP_START_DELAY] (sleep before listening),
// -crash-after [TESTAPP_CRASH_AFTER] (exit 1 that long after the start; 0 never),
// -not-ready [TESTAPP_NOT_READY], -not-live [TESTAPP_NOT_LIVE], -fail [TESTAPP_FAIL] (the share of
// GET / answered 500, 0 to 1: 1 fails every one, 0.25 every fourth), -delay [TESTAPP_DELAY] (how
// long GET / takes, e.g. 300ms). -fail and -delay touch GET / alone: the probes' endpoints keep
// answering 200, as a ready app that serves its users errors or slowly does. A WebApp sets them
// with spec.env, as it can TESTAPP_VERSION, which the images set to v1 or v2.
//
// On SIGTERM it logs the time, stops listening at once and exits 0, so that a client sees the
// moment the kubelet sent the signal as the moment the port closes.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("testapp: ")
	fs := flag.NewFlagSet("testapp", flag.ExitOnError)
	listen := fs.String("listen", ":8080", "address to serve HTTP on")
	file := fs.String("file", "", "file whose content GET /file returns")
	envName := fs.String("env", "", "environment variable whose value GET /env returns")
	version := fs.String("version", "v1", "version GET / reports")
	startDelay := fs.Duration("start-delay", 0, "time to wait before listening")
	crashAfter := fs.Duration("crash-after", 0, "exit 1 this long after starting (0: never)")
	notReady := fs.Bool("not-ready", false, "GET /ready answers 503")
	notLive := fs.Bool("not-live", false, "GET /live answers 500")
	fail := fs.Float64("fail", 0, "share of GET / answered 500, from 0 to 1")
	delay := fs.Duration("delay", 0, "how long GET / takes before it answers")
	fs.Parse(os.Args[1:])
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	fs.VisitAll(func(f *flag.Flag) {
		env := "TESTAPP_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok && !given[f.Name] {
			if err := f.Value.Set(v); err != nil {
				log.Fatalf("%s=%q: %v", env, v, err)
			}
		}
	})
	start := time.Now()
	if *fail < 0 || *fail > 1 {
		log.Fatalf("-fail %v: want a share from 0 to 1", *fail)
	}
	log.Printf("%s starting as uid %d (GET /: fail %v, delay %s)", *version, os.Getuid(), *fail, *delay)

	if *crashAfter > 0 {
		time.AfterFunc(*crashAfter, func() {
			log.Printf("crashing after %s, as -crash-after says", *crashAfter)
			os.Exit(1)
		})
	}
	if *startDelay > 0 {
		log.Printf("waiting %s before listening, as -start-delay says", *startDelay)
		time.Sleep(*startDelay)
	}

	var failing atomic.Bool
	failing.Store(*notReady)
	host, _ := os.Hostname()
	mux := http.NewServeMux()
	// served counts GET /: request n fails when floor(n × fail) moves, so that a share of 0.25
	// fails exactly every fourth request, however the requests are spread over the pods' time.
	var served atomic.Int64
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if *delay > 0 {
			time.Sleep(*delay)
		}
		n := served.Add(1)
		if int64(float64(n)**fail) > int64(float64(n-1)**fail) {
			w.WriteHeader(http.StatusInternalServerError)
		}
		fmt.Fprintf(w, "testapp %s on %s\n", *version, host)
	})
	mux.HandleFunc("GET /file", func(w http.ResponseWriter, r *http.Request) {
		if *file == "" {
			http.Error(w, "no -file given", http.StatusNotFound)
			return
		}
		b, err := os.ReadFile(*file)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Write(b)
	})
	mux.HandleFunc("GET /env", func(w http.ResponseWriter, r *http.Request) {
		if *envName == "" {
			http.Error(w, "no -env given", http.StatusNotFound)
			return
		}
		fmt.Fprintf(w, "%s=%s\n", *envName, os.Getenv(*envName))
	})
	mux.HandleFunc("GET /whoami", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(whoami())
	})
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			http.Error(w, "not ready, as asked", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("POST /ready/fail", func(w http.ResponseWriter, r *http.Request) { failing.Store(true) })
	mux.HandleFunc("POST /ready/ok", func(w http.ResponseWriter, r *http.Request) { failing.Store(false) })
	mux.HandleFunc("GET /live", func(w http.ResponseWriter, r *http.Request) {
		if *notLive {
			http.Error(w, "not live, as asked", http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, "live")
	})

	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("serving on %s after %s", l.Addr(), time.Since(start).Round(time.Millisecond))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	var stopping atomic.Bool
	go func() {
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
		s := <-sigs
		log.Printf("%s at %s: closing", s, time.Now().UTC().Format(time.RFC3339Nano))
		stopping.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		os.Exit(0)
	}()
	if err := srv.Serve(l); err != nil && err != http.ErrServerClosed && !stopping.Load() {
		log.Fatal(err)
	}
	select {} // the signal handler exits
}

// identity is what GET /whoami answers.
type identity struct {
	UID int `json:"uid"`
	GID int `json:"gid"`
	// CapEff is the effective capability set, hex, as /proc/self/status has it.
	CapEff string `json:"capEff"`
	// Seccomp is the seccomp mode: 0 none, 1 strict, 2 filter.
	Seccomp string `json:"seccomp"`
	// NoNewPrivs is 1 when the process cannot gain privileges.
	NoNewPrivs string `json:"noNewPrivs"`
}

func whoami() identity {
	id := identity{UID: os.Getuid(), GID: os.Getgid()}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return id
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "CapEff":
			id.CapEff = v
		case "Seccomp":
			id.Seccomp = v
		case "NoNewPrivs":
			id.NoNewPrivs = v
		}
	}
	return id
}

package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/webhook"
)

// answer sends one hook request through the server's own handler, in process, so that the offline
// commands answer exactly as the server would, with the install's defaults d.
func answer(path string, body []byte, d sync.Defaults) (int, []byte) {
	h := webhook.New(webhook.Options{Logger: slog.New(slog.DiscardHandler), Defaults: d})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
	return rec.Code, rec.Body.Bytes()
}

// defaultsFlags registers on a subcommand's flags the server's flags that change answers,
// --default-security-profile and --default-gateway (not their environment variables: an offline
// answer depends only on its command line), and returns what makes their Defaults once parsed.
func defaultsFlags(fs *flag.FlagSet) func() (sync.Defaults, error) {
	profile := fs.String("default-security-profile", "", "as the server's: the securityProfile of WebApps that set none")
	gateway := fs.String("default-gateway", "", "as the server's: namespace/name[/section] of the Gateway of routes that name no parentRefs")
	return func() (sync.Defaults, error) { return newDefaults(*profile, *gateway) }
}

// runSync handles `webapp-hook sync`: one Metacontroller request on stdin, its answer on stdout.
// A request with "finalizing": true is answered as finalize. A rejected request prints the error
// body on stderr and exits 1.
func runSync(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("webapp-hook sync", flag.ContinueOnError)
	fs.SetOutput(stderr)
	defaults := defaultsFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: webapp-hook sync [flags] < request.json")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageCode(err)
	}
	d, err := defaults()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	body, err := io.ReadAll(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "read request: %v\n", err)
		return 1
	}
	code, out := answer("/sync", body, d)
	if code != http.StatusOK {
		fmt.Fprintf(stderr, "%d %s", code, out)
		return 1
	}
	stdout.Write(out)
	return 0
}

// runRender handles `webapp-hook render -f FILE`: the children the hook asks for when it first
// sees the WebApp in FILE (YAML or JSON; "-" reads stdin), printed as YAML documents, like
// `helm template`. A WebApp without a namespace is placed in "default". An invalid spec prints
// the hook's message on stderr and exits 1.
func runRender(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("webapp-hook render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "the WebApp manifest to render; - for standard input")
	defaults := defaultsFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: webapp-hook render [flags] -f webapp.yaml")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageCode(err)
	}
	if *file == "" || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	d, err := defaults()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var data []byte
	if *file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(*file)
	}
	if err != nil {
		fmt.Fprintf(stderr, "read WebApp: %v\n", err)
		return 1
	}
	request, err := newWebAppRequest(data)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", *file, err)
		return 1
	}
	code, out := answer("/sync", request, d)
	if code != http.StatusOK {
		fmt.Fprintf(stderr, "%s: %s", *file, out)
		return 1
	}
	var resp struct {
		Status   struct{ Message string }
		Children []json.RawMessage
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		fmt.Fprintf(stderr, "decode answer: %v\n", err)
		return 1
	}
	if len(resp.Children) == 0 {
		fmt.Fprintf(stderr, "%s: %s\n", *file, resp.Status.Message)
		return 1
	}
	for _, child := range resp.Children {
		doc, err := yaml.JSONToYAML(child)
		if err != nil {
			fmt.Fprintf(stderr, "encode child: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "---\n%s", doc)
	}
	return 0
}

// newWebAppRequest wraps a WebApp manifest in the sync request Metacontroller sends for a WebApp
// it sees for the first time: no children yet, of every kind the hook builds, those of the
// optional components (an HTTPRoute) included, so that render shows everything the spec asks for.
func newWebAppRequest(manifest []byte) ([]byte, error) {
	var parent map[string]any
	if err := yaml.Unmarshal(manifest, &parent); err != nil {
		return nil, fmt.Errorf("parse WebApp: %w", err)
	}
	if parent == nil {
		return nil, fmt.Errorf("parse WebApp: empty manifest")
	}
	meta, _ := parent["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		parent["metadata"] = meta
	}
	if ns, _ := meta["namespace"].(string); ns == "" {
		meta["namespace"] = "default"
	}
	if _, ok := meta["generation"]; !ok {
		meta["generation"] = 1
	}
	children := map[string]any{} // every kind the hook builds, none observed yet
	for _, k := range sync.Kinds {
		if k.Built {
			children[k.Key()] = map[string]any{}
		}
	}
	return json.Marshal(map[string]any{"parent": parent, "children": children})
}

// usageCode is the exit code for a flag parsing error: 0 for -h, 2 otherwise.
func usageCode(err error) int {
	if err == flag.ErrHelp {
		return 0
	}
	return 2
}

package analysis

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// The client: Prometheus's HTTP API as the measuring asks it, through the token and the
// transport in force (files), to the configured URL only, its answers bounded.

// MaxAnswerBytes bounds Prometheus's answer to a query, its body as read (decompressed): an
// answer over it is refused, and the check is inconclusive ("Prometheus's answer was over 1
// MiB"). A check's query yields a few series, a few hundred bytes each, so only a Prometheus
// that answers something else comes near it; the bound keeps such an answer from costing the
// hook its memory.
const MaxAnswerBytes = 1 << 20

// errRedirect is a 3xx answer: the hook follows no redirect, so that the token goes to the
// configured URL only, never to wherever an answer points, over whatever scheme.
var errRedirect = errors.New("the hook follows no redirect")

// errTooLarge is an answer over MaxAnswerBytes.
var errTooLarge = fmt.Errorf("the answer is over %d bytes", MaxAnswerBytes)

// newAPI is the API of the Prometheus at url, asked through roundTripper: with f's token and
// transport in force, or, when next is not nil (tests), through next in place of the transport.
// It fails only when url is not a URL.
func newAPI(url string, f *files, next http.RoundTripper) (promv1.API, error) {
	client, err := api.NewClient(api.Config{Address: url, Client: &http.Client{
		Transport: roundTripper{files: f, next: next},
		// The round tripper refuses a redirect already; this is the same refusal, should a
		// round tripper ever answer one.
		CheckRedirect: func(*http.Request, []*http.Request) error { return errRedirect },
	}})
	if err != nil {
		return nil, errors.New("URL: not a URL")
	}
	return promv1.NewAPI(client), nil
}

// roundTripper sends a query with the token in force, through the transport in force, and
// records the answer's status code for the error sentence (describe). It refuses an answer that
// redirects (errRedirect), so that no request follows it with the token, and bounds the answer's
// body (errTooLarge).
type roundTripper struct {
	files *files
	// next, when set (tests), is used in place of the transport in force.
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	in := rt.files.inForce()
	if in.token != "" {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", "Bearer "+in.token)
	}
	var next http.RoundTripper = in.transport
	if rt.next != nil {
		next = rt.next
	}
	resp, err := next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if code, ok := req.Context().Value(statusKey{}).(*int); ok {
		*code = resp.StatusCode
	}
	switch {
	case resp.StatusCode/100 == 3:
		resp.Body.Close()
		return nil, errRedirect
	case resp.ContentLength > MaxAnswerBytes:
		resp.Body.Close()
		return nil, errTooLarge
	}
	resp.Body = &boundedBody{ReadCloser: resp.Body, left: MaxAnswerBytes}
	return resp, nil
}

// boundedBody is an answer's body that fails with errTooLarge once more than left bytes are read.
type boundedBody struct {
	io.ReadCloser
	left int64
}

// Read implements io.Reader.
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte more than allowed tells an answer of exactly the bound from a longer one
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, errTooLarge
	}
	return n, err
}

// statusKey is the context key of the *int a query's status code is recorded in.
type statusKey struct{}

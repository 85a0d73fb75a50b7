package webhook_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/webapp-operator/webhook"
)

func writeTokens(t *testing.T, path, content string, mod time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mod, mod); err != nil {
		t.Fatal(err)
	}
}

// TestTokens checks that hook routes need a listed bearer token, that a 401 says nothing more,
// that health checks stay open, and that a rotated file is picked up by Reload.
func TestTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	writeTokens(t, path, "# rotated by the Secret\nfirst-token\n\nsecond-token\n", time.Unix(1000, 0))
	tokens, err := webhook.LoadTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(webhook.Options{Tokens: tokens})
	create := readExample(t, "create.request.json")
	call := func(method, path, authorization string) (int, string) {
		req := httptest.NewRequest(method, path, strings.NewReader(create))
		if authorization != "" {
			req.Header.Set("Authorization", authorization)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, strings.TrimSpace(rec.Body.String())
	}
	tests := []struct {
		name, method, path, authorization string
		wantCode                          int
	}{
		{"first token", "POST", "/sync", "Bearer first-token", 200},
		{"second token, lower-case scheme", "POST", "/finalize", "bearer second-token", 200},
		{"customize with a token", "POST", "/customize", "Bearer first-token", 200},
		{"customize without one", "POST", "/customize", "", 401},
		{"no header", "POST", "/sync", "", 401},
		{"wrong token", "POST", "/sync", "Bearer first-tokenX", 401},
		{"a prefix of a token", "POST", "/sync", "Bearer first", 401},
		{"basic scheme", "POST", "/sync", "Basic Zmlyc3QtdG9rZW4=", 401},
		{"comment line is not a token", "POST", "/sync", "Bearer # rotated by the Secret", 401},
		{"healthz stays open", "GET", "/healthz", "", 200},
		{"readyz stays open", "GET", "/readyz", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := call(tt.method, tt.path, tt.authorization)
			if code != tt.wantCode {
				t.Errorf("code = %d; want %d", code, tt.wantCode)
			}
			if code == 401 && body != `{"error":"unauthorized"}` {
				t.Errorf("401 body = %s; want {\"error\":\"unauthorized\"} and nothing more", body)
			}
		})
	}
}

// TestTokenReload follows a token file through rotations, one step after the other: a change is
// told by the file's content, whatever its size and modification time say; a file that lists no
// token accepts none; a file that cannot be read keeps the tokens in force, and is counted.
func TestTokenReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens")
	mod := time.Unix(1000, 0)
	writeTokens(t, path, "first-token\n", mod)
	tokens, err := webhook.LoadTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := newHandler(webhook.Options{Tokens: tokens})
	code := func(token string) int {
		req := httptest.NewRequest("POST", "/sync", strings.NewReader(readExample(t, "create.request.json")))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	steps := []struct {
		name string
		// content is written with the modification time mod, unless remove or directory.
		content           string
		mod               time.Time
		remove, directory bool

		wantChanged      bool
		wantErr          bool
		accepted         []string
		refused          []string
		wantReloadErrors uint64
	}{
		{name: "unchanged", content: "first-token\n", mod: mod, accepted: []string{"first-token"}},
		{name: "the same bytes with a new time", content: "first-token\n", mod: time.Unix(1500, 0), accepted: []string{"first-token"}},
		{name: "rotated", content: "first-token\nthird-token\n", mod: time.Unix(2000, 0), wantChanged: true, accepted: []string{"first-token", "third-token"}},
		{name: "another token of the same length, the time restored", content: "first-token\nother-token\n", mod: time.Unix(2000, 0), wantChanged: true,
			accepted: []string{"first-token", "other-token"}, refused: []string{"third-token"}},
		{name: "the file gone: the tokens in force stay", remove: true, wantErr: true, wantReloadErrors: 1,
			accepted: []string{"first-token", "other-token"}},
		{name: "a directory in its place: the same", directory: true, wantErr: true, wantReloadErrors: 2,
			accepted: []string{"first-token", "other-token"}},
		{name: "only comments and blank lines: no token is valid", content: "# revoked\n\n  \n", mod: time.Unix(3000, 0), wantChanged: true, wantReloadErrors: 2,
			refused: []string{"first-token", "other-token", "# revoked", ""}},
		{name: "empty: still none", content: "", mod: time.Unix(3000, 0), wantChanged: true, wantReloadErrors: 2,
			refused: []string{"first-token", "other-token", ""}},
		{name: "a token again", content: "fifth-token\n", mod: time.Unix(3000, 0), wantChanged: true, wantReloadErrors: 2,
			accepted: []string{"fifth-token"}, refused: []string{"first-token"}},
	}
	for _, st := range steps {
		os.RemoveAll(path)
		switch {
		case st.directory:
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		case !st.remove:
			writeTokens(t, path, st.content, st.mod)
		}
		changed, err := tokens.Reload()
		if changed != st.wantChanged || (err != nil) != st.wantErr {
			t.Errorf("%s: Reload = %v, %v; want changed %v, error %v", st.name, changed, err, st.wantChanged, st.wantErr)
		}
		for _, tok := range st.accepted {
			if got := code(tok); got != 200 {
				t.Errorf("%s: token %q got %d; want 200", st.name, tok, got)
			}
		}
		for _, tok := range st.refused {
			if got := code(tok); got != 401 {
				t.Errorf("%s: token %q got %d; want 401", st.name, tok, got)
			}
		}
		if got := tokens.ReloadErrors(); got != st.wantReloadErrors {
			t.Errorf("%s: ReloadErrors() = %d; want %d", st.name, got, st.wantReloadErrors)
		}
		if got, want := len(tokens.Fingerprints()), len(st.accepted); got != want {
			t.Errorf("%s: %d fingerprints in force; want %d", st.name, got, want)
		}
	}
	rec := httptest.NewRecorder()
	h.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := `webapp_hook_credential_reload_errors_total{file="token"} 2`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("/metrics lacks %s", want)
	}

	for _, tt := range []struct {
		name, content string
		missing       bool
		wantErr       bool
	}{
		{name: "a missing file does not load: there is nothing to accept", missing: true, wantErr: true},
		{name: "an empty file loads, and accepts no token", content: ""},
		{name: "a file of comments loads, and accepts no token", content: "# none yet\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "tokens")
			if !tt.missing {
				writeTokens(t, p, tt.content, mod)
			}
			f, err := webhook.LoadTokenFile(p)
			if (err != nil) != tt.wantErr {
				t.Fatalf("LoadTokenFile = %v; want an error: %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			h := newHandler(webhook.Options{Tokens: f})
			for _, auth := range []string{"", "Bearer ", "Bearer # none yet", "Bearer x"} {
				req := httptest.NewRequest("POST", "/sync", strings.NewReader(readExample(t, "create.request.json")))
				req.Header.Set("Authorization", auth)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 401 {
					t.Errorf("Authorization %q: %d; want 401", auth, rec.Code)
				}
			}
		})
	}
}

// TestFingerprint pins Fingerprint to the value openssl computes, which hack/rotate-token.sh
// relies on: printf %s abc | openssl dgst -sha256 -hmac "webapp-hook token fingerprint v1" -r.
func TestFingerprint(t *testing.T) {
	tests := []struct{ token, want string }{
		{"abc", "6f74c68bd4ff"},
		{" abc\n", "6f74c68bd4ff"}, // trimmed, as Metacontroller trims what it sends
	}
	for _, tt := range tests {
		if got := webhook.Fingerprint(tt.token); got != tt.want {
			t.Errorf("Fingerprint(%q) = %q; want %q", tt.token, got, tt.want)
		}
	}
	if webhook.Fingerprint("abd") == webhook.Fingerprint("abc") {
		t.Error("two tokens share a fingerprint")
	}
}

// TestTokenFingerprints checks that the log line and the metrics name which accepted token each
// call carried, by fingerprint, that the accepted tokens follow a reload, and that no token's
// value, accepted or refused, appears in any log line, metric or answer.
func TestTokenFingerprints(t *testing.T) {
	const (
		oldToken   = "0ld-t0ken-9f8e7d6c5b4a39281706"
		newToken   = "n3w-t0ken-1a2b3c4d5e6f70819202"
		wrongToken = "wr0ng-t0ken-aabbccddeeff001122"
	)
	oldFP, newFP := webhook.Fingerprint(oldToken), webhook.Fingerprint(newToken)
	path := filepath.Join(t.TempDir(), "tokens")
	// The new token twice, as a rotation run again may leave it: one series still.
	writeTokens(t, path, oldToken+"\n"+newToken+"\n  "+newToken+"\n", time.Unix(1000, 0))
	tokens, err := webhook.LoadTokenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(tokens.Fingerprints(), ","), oldFP+","+newFP; got != want {
		t.Errorf("Fingerprints() = %s; want %s", got, want)
	}
	var logs bytes.Buffer
	h := newHandler(webhook.Options{Tokens: tokens, CacheBytes: webhook.DefaultCacheBytes,
		Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	var written strings.Builder
	call := func(path, token string) int {
		req := httptest.NewRequest("POST", path, strings.NewReader(readExample(t, "create.request.json")))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		written.WriteString(rec.Body.String())
		for k, v := range rec.Header() {
			written.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
		return rec.Code
	}
	scrape := func() string {
		rec := httptest.NewRecorder()
		h.MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		written.WriteString(rec.Body.String())
		return rec.Body.String()
	}

	for _, c := range []struct {
		path, token string
		want        int
	}{
		{"/sync", oldToken, 200}, {"/sync", oldToken, 200}, {"/customize", oldToken, 200},
		{"/finalize", newToken, 200}, {"/sync", wrongToken, 401},
	} {
		if got := call(c.path, c.token); got != c.want {
			t.Errorf("%s with token %s = %d; want %d", c.path, webhook.Fingerprint(c.token), got, c.want)
		}
	}
	metrics := scrape()
	if n := strings.Count(metrics, `webapp_hook_tokens{token="`+newFP+`"}`); n != 1 {
		t.Errorf("/metrics lists the new token %d times; want once:\n%s", n, metrics)
	}
	for _, want := range []string{
		`webapp_hook_token_requests_total{token="` + oldFP + `"} 3`,
		`webapp_hook_token_requests_total{token="` + newFP + `"} 1`,
		`webapp_hook_tokens{token="` + oldFP + `"} 1`,
		`webapp_hook_tokens{token="` + newFP + `"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if fp := webhook.Fingerprint(wrongToken); strings.Contains(metrics, fp) {
		t.Errorf("/metrics names the refused token's fingerprint %s; a refused call has no token to name", fp)
	}

	var gotTokens []string
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if entry["msg"] == "hook" {
			tok, _ := entry["token"].(string)
			gotTokens = append(gotTokens, tok)
		}
	}
	if got, want := strings.Join(gotTokens, ","), strings.Join([]string{oldFP, oldFP, oldFP, newFP}, ","); got != want {
		t.Errorf("log lines name tokens %s; want %s", got, want)
	}

	// The old token retired: only the new one is accepted, and the metrics say so.
	writeTokens(t, path, newToken+"\n", time.Unix(2000, 0))
	if _, err := tokens.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := call("/sync", oldToken); got != 401 {
		t.Errorf("retired token: %d; want 401", got)
	}
	metrics = scrape()
	if strings.Contains(metrics, `webapp_hook_tokens{token="`+oldFP+`"}`) {
		t.Errorf("/metrics still lists the retired token %s as accepted", oldFP)
	}
	if !strings.Contains(metrics, `webapp_hook_tokens{token="`+newFP+`"} 1`) {
		t.Errorf("/metrics does not list the new token %s as accepted", newFP)
	}

	all := written.String() + logs.String()
	for _, token := range []string{oldToken, newToken, wrongToken} {
		for _, form := range []string{token, base64.StdEncoding.EncodeToString([]byte(token)), fmt.Sprintf("%x", token), token[:12]} {
			if strings.Contains(all, form) {
				t.Errorf("a log line, metric or answer holds the token %s as %q", webhook.Fingerprint(token), form)
			}
		}
	}
}

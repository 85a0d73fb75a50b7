package webhook_test

import (
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

	t.Run("rotation", func(t *testing.T) {
		if changed, err := tokens.Reload(); changed || err != nil {
			t.Fatalf("Reload of an unchanged file = %v, %v; want false, nil", changed, err)
		}
		writeTokens(t, path, "third-token\n", time.Unix(2000, 0))
		if changed, err := tokens.Reload(); !changed || err != nil {
			t.Fatalf("Reload after rotation = %v, %v; want true, nil", changed, err)
		}
		if code, _ := call("POST", "/sync", "Bearer third-token"); code != 200 {
			t.Errorf("new token: %d; want 200", code)
		}
		if code, _ := call("POST", "/sync", "Bearer first-token"); code != 401 {
			t.Errorf("rotated-out token: %d; want 401", code)
		}
		writeTokens(t, path, "\n# empty\n", time.Unix(3000, 0))
		if _, err := tokens.Reload(); err == nil {
			t.Error("Reload of a file with no token succeeded; want an error")
		}
		if code, _ := call("POST", "/sync", "Bearer third-token"); code != 200 {
			t.Errorf("after a failed reload the last good tokens must hold: %d", code)
		}
	})

	t.Run("a file with no token is refused", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "empty")
		writeTokens(t, empty, "\n", time.Unix(1000, 0))
		if _, err := webhook.LoadTokenFile(empty); err == nil {
			t.Error("LoadTokenFile accepted a file with no token")
		}
		if _, err := webhook.LoadTokenFile(filepath.Join(t.TempDir(), "missing")); err == nil {
			t.Error("LoadTokenFile accepted a missing file")
		}
	})
}

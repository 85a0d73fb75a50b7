package webhook

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"strings"
	stdsync "sync"
	"time"
)

// TokenFile holds the bearer tokens that may call the hooks, read from a file with one token per
// line (blank lines and lines starting with # are ignored). Reload re-reads the file when its size
// or modification time changed, so that rotating a mounted Secret needs no restart. It is safe
// for concurrent use.
type TokenFile struct {
	path string

	mu      stdsync.RWMutex
	tokens  [][sha256.Size]byte // hashed, so that every comparison has the same length
	size    int64
	modTime time.Time
}

// LoadTokenFile reads path. It fails when the file cannot be read or holds no token: a hook that
// asks for tokens must never start open by mistake.
func LoadTokenFile(path string) (*TokenFile, error) {
	f := &TokenFile{path: path}
	if _, err := f.Reload(); err != nil {
		return nil, err
	}
	return f, nil
}

// Reload re-reads the file if it changed and reports whether it did. On an error (unreadable,
// or no token left) the tokens read before stay in force.
func (f *TokenFile) Reload() (changed bool, err error) {
	info, err := os.Stat(f.path)
	if err != nil {
		return false, fmt.Errorf("token file: %w", err)
	}
	f.mu.RLock()
	same := info.Size() == f.size && info.ModTime().Equal(f.modTime) && f.tokens != nil
	f.mu.RUnlock()
	if same {
		return false, nil
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		return false, fmt.Errorf("token file: %w", err)
	}
	var tokens [][sha256.Size]byte
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' {
			tokens = append(tokens, sha256.Sum256(line))
		}
	}
	if len(tokens) == 0 {
		return false, fmt.Errorf("token file %s holds no token", f.path)
	}
	f.mu.Lock()
	f.tokens, f.size, f.modTime = tokens, info.Size(), info.ModTime()
	f.mu.Unlock()
	return true, nil
}

// Allows reports whether an Authorization header carries one of the tokens as a Bearer token.
// The SHA-256 of the given token is compared with every token's in constant time, so neither
// which token matched nor any token's length shows in the time taken.
func (f *TokenFile) Allows(authorization string) bool {
	scheme, token, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	given := sha256.Sum256([]byte(strings.TrimSpace(token)))
	f.mu.RLock()
	defer f.mu.RUnlock()
	match := 0
	for _, t := range f.tokens {
		match |= subtle.ConstantTimeCompare(given[:], t[:])
	}
	return match == 1
}

// requireToken answers 401 with no detail unless the request carries an allowed token.
func (h *Handler) requireToken(next http.Handler) http.Handler {
	if h.opts.Tokens == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.opts.Tokens.Allows(r.Header.Get("Authorization")) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="webapp-hook"`)
			h.writeError(w, r, &Error{Code: http.StatusUnauthorized, Message: "unauthorized"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

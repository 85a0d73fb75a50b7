package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/example/webapp-operator/internal/reload"
)

// TokenFile holds the bearer tokens that may call the hooks, read from a file with one token per
// line (blank lines and lines starting with # are ignored; spaces around a token are trimmed, as
// Metacontroller trims the value it sends). Reload re-reads the file and takes it up when its
// content changed, judged by a SHA-256 of its bytes, never by size or modification time, so that
// rotating a mounted Secret needs no restart and any new content counts. A file that lists no
// token (empty, or only comments and blank lines) accepts none: every hook call gets 401, which
// revokes every token at once; it never means "no authentication". It is safe for concurrent use.
type TokenFile struct {
	file *reload.Files[[]acceptedToken]
}

// acceptedToken is a token as the hook keeps it: never its value.
type acceptedToken struct {
	sum         [sha256.Size]byte // hashed, so that every comparison has the same length
	fingerprint string
}

// fingerprintKey keys the HMAC of Fingerprint. It is not a secret: it only sets fingerprints
// apart from any other hash of the same token.
const fingerprintKey = "webapp-hook token fingerprint v1"

// Fingerprint names a token without revealing it, in logs and metrics: the first 48 bits of
// HMAC-SHA256(key "webapp-hook token fingerprint v1", token), as 12 hex digits, after trimming
// spaces as TokenFile does. The same token has the same fingerprint in every replica and across
// restarts, so that a rotation can follow it; a shell computes it with
//
//	printf %s "$token" | openssl dgst -sha256 -hmac "webapp-hook token fingerprint v1" -r | cut -c1-12
//
// (hack/rotation.sh does). 48 bits cannot be turned back into a token of 256 random bits,
// as `openssl rand -hex 32` makes; a short or guessable token could be guessed from it offline,
// as from any hash, which is one more reason never to use one.
func Fingerprint(token string) string {
	mac := hmac.New(sha256.New, []byte(fingerprintKey))
	mac.Write([]byte(strings.TrimSpace(token)))
	return hex.EncodeToString(mac.Sum(nil)[:6])
}

// LoadTokenFile reads path. It fails when the file cannot be read: with no tokens read before,
// there is nothing to accept. A file that lists no token loads, and accepts none.
func LoadTokenFile(path string) (*TokenFile, error) {
	f := &TokenFile{file: reload.New(parseTokens, path)}
	if _, err := f.Reload(); err != nil {
		return nil, err
	}
	return f, nil
}

// Reload re-reads the file and reports whether its content changed since the tokens in force were
// read; if it did, its tokens are in force from now on, none if it lists none. When the file
// cannot be read, the tokens read before stay in force, the error is returned and counted
// (ReloadErrors), and the next Reload tries again. The file is read whole every time: it is a
// few lines, and a SHA-256 of them is what tells a change.
func (f *TokenFile) Reload() (changed bool, err error) {
	changed, err = f.file.Reload()
	if err != nil {
		return false, fmt.Errorf("token file: %w", err)
	}
	return changed, nil
}

// parseTokens reads a token file's lines. It never fails: a file that lists no token accepts
// none.
func parseTokens(contents [][]byte) ([]acceptedToken, error) {
	tokens := []acceptedToken{}
	for line := range bytes.SplitSeq(contents[0], []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' {
			tokens = append(tokens, acceptedToken{sum: sha256.Sum256(line), fingerprint: Fingerprint(string(line))})
		}
	}
	return tokens, nil
}

// ReloadErrors counts the Reloads that could not read the file since it was loaded.
func (f *TokenFile) ReloadErrors() uint64 { return f.file.Errors() }

// Match reports whether an Authorization header carries one of the tokens as a Bearer token and,
// if so, that token's Fingerprint. The SHA-256 of the given token is compared with every token's
// in constant time, so neither which token matched nor any token's length shows in the time
// taken. When the file lists a token twice, the last one matches; both have one fingerprint.
// With no token in force, nothing matches, an empty token included.
func (f *TokenFile) Match(authorization string) (fingerprint string, ok bool) {
	scheme, token, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	given := sha256.Sum256([]byte(strings.TrimSpace(token)))
	tokens, _ := f.file.Value()
	match := -1
	for i, t := range tokens {
		match = subtle.ConstantTimeSelect(subtle.ConstantTimeCompare(given[:], t.sum[:]), i, match)
	}
	if match < 0 {
		return "", false
	}
	return tokens[match].fingerprint, true
}

// Fingerprints returns the Fingerprint of every token in force, in the file's order, each once
// however many times the file lists its token; none when the file lists none.
func (f *TokenFile) Fingerprints() []string {
	tokens, _ := f.file.Value()
	fps := make([]string, 0, len(tokens))
	for _, t := range tokens {
		if !slices.Contains(fps, t.fingerprint) {
			fps = append(fps, t.fingerprint)
		}
	}
	return fps
}

// tokenKey is the context key of the fingerprint of the token a hook call carried.
type tokenKey struct{}

// tokenFingerprint returns the fingerprint that requireToken put in ctx, or "" without tokens.
func tokenFingerprint(ctx context.Context) string {
	fp, _ := ctx.Value(tokenKey{}).(string)
	return fp
}

// requireToken answers 401 with no detail unless the request carries an allowed token. An allowed
// call is counted by its token's fingerprint, which the handler's log line also names, so that a
// rotation can tell when Metacontroller has moved to a new token.
func (h *Handler) requireToken(next http.Handler) http.Handler {
	if h.opts.Tokens == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fp, ok := h.opts.Tokens.Match(r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="webapp-hook"`)
			h.writeError(w, r, &Error{Code: http.StatusUnauthorized, Message: "unauthorized"})
			return
		}
		h.metrics.tokenRequests.WithLabelValues(fp).Inc()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), tokenKey{}, fp)))
	})
}

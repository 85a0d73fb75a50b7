package webhook

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	stdsync "sync"
	"time"
)

// TLSFiles serves TLS from a certificate and key file and, optionally, verifies client
// certificates against a CA file. Reload re-reads the files when any of them changed, so that a
// renewed certificate (cert-manager, a rotated Secret) needs no restart; connections made after a
// reload use the new files. It is safe for concurrent use.
type TLSFiles struct {
	certFile, keyFile, clientCAFile string

	mu       stdsync.RWMutex
	cert     *tls.Certificate
	certSum  string // hex SHA-256 of cert's DER encoding
	notAfter time.Time
	clientCA *x509.CertPool
	stamps   map[string]time.Time
}

// LoadTLSFiles reads the files; clientCAFile may be empty, for no client verification.
func LoadTLSFiles(certFile, keyFile, clientCAFile string) (*TLSFiles, error) {
	t := &TLSFiles{certFile: certFile, keyFile: keyFile, clientCAFile: clientCAFile}
	if _, err := t.Reload(); err != nil {
		return nil, err
	}
	return t, nil
}

// Reload re-reads the files if any changed and reports whether it did. On an error the files
// read before stay in force.
func (t *TLSFiles) Reload() (changed bool, err error) {
	stamps := map[string]time.Time{}
	for _, f := range []string{t.certFile, t.keyFile, t.clientCAFile} {
		if f == "" {
			continue
		}
		info, err := os.Stat(f)
		if err != nil {
			return false, fmt.Errorf("tls: %w", err)
		}
		stamps[f] = info.ModTime()
	}
	t.mu.RLock()
	same := t.cert != nil && len(stamps) == len(t.stamps)
	for f, s := range stamps {
		same = same && t.stamps[f].Equal(s)
	}
	t.mu.RUnlock()
	if same {
		return false, nil
	}
	cert, err := tls.LoadX509KeyPair(t.certFile, t.keyFile)
	if err != nil {
		return false, fmt.Errorf("tls: load certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return false, fmt.Errorf("tls: parse certificate: %w", err)
	}
	sum := sha256.Sum256(cert.Certificate[0])
	var pool *x509.CertPool
	if t.clientCAFile != "" {
		pem, err := os.ReadFile(t.clientCAFile)
		if err != nil {
			return false, fmt.Errorf("tls: %w", err)
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return false, fmt.Errorf("tls: no PEM certificate in client CA file %s", t.clientCAFile)
		}
	}
	t.mu.Lock()
	t.cert, t.clientCA, t.stamps = &cert, pool, stamps
	t.certSum, t.notAfter = hex.EncodeToString(sum[:]), leaf.NotAfter
	t.mu.Unlock()
	return true, nil
}

// Config returns the server TLS configuration: TLS 1.2 at least, the current certificate for
// every handshake and, with a client CA, client certificates verified when given. Requiring
// one is left to the hook routes (RequireClientCert), so that probes without one still work.
func (t *TLSFiles) Config() *tls.Config {
	base := &tls.Config{MinVersion: tls.VersionTLS12}
	base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		t.mu.RLock()
		defer t.mu.RUnlock()
		c := base.Clone()
		c.GetConfigForClient = nil
		c.Certificates = []tls.Certificate{*t.cert}
		if t.clientCA != nil {
			c.ClientCAs = t.clientCA
			c.ClientAuth = tls.VerifyClientCertIfGiven
		}
		return c, nil
	}
	return base
}

// Certificate identifies the certificate served now, the first of its chain: the SHA-256 of its
// DER encoding in lower-case hex (what `openssl x509 -outform der | sha256sum` prints), and when
// it expires.
func (t *TLSFiles) Certificate() (sha256Hex string, notAfter time.Time) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.certSum, t.notAfter
}

// VerifiesClients reports whether a client CA is configured.
func (t *TLSFiles) VerifiesClients() bool { return t.clientCAFile != "" }

// requireClientCert answers 401 with no detail unless the connection presented a client
// certificate that verified against the client CA.
func (h *Handler) requireClientCert(next http.Handler) http.Handler {
	if !h.opts.RequireClientCert {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			h.writeError(w, r, &Error{Code: http.StatusUnauthorized, Message: "unauthorized"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

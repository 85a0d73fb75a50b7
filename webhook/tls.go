package webhook

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/example/webapp-operator/api/v1/validation"
	"github.com/example/webapp-operator/internal/reload"
)

// TLSFiles serves TLS from a certificate and key file and, optionally, verifies client
// certificates against a CA file. Reload re-reads the files and takes them up when the content
// of any of them changed, judged by a SHA-256 of their bytes, never by size or modification
// time, so that a renewed certificate (cert-manager, a rotated Secret) needs no restart;
// connections made after a reload use the new files. It is safe for concurrent use.
type TLSFiles struct {
	certFile, keyFile, clientCAFile string
	files                           *reload.Files[*served]
}

// served is what the files in force serve.
type served struct {
	cert     *tls.Certificate
	certSum  string // hex SHA-256 of cert's DER encoding
	notAfter time.Time
	clientCA *x509.CertPool // nil without a client CA file
}

// LoadTLSFiles reads the files; clientCAFile may be empty, for no client verification.
func LoadTLSFiles(certFile, keyFile, clientCAFile string) (*TLSFiles, error) {
	t := &TLSFiles{certFile: certFile, keyFile: keyFile, clientCAFile: clientCAFile}
	t.files = reload.New(t.parse, certFile, keyFile, clientCAFile)
	if _, err := t.Reload(); err != nil {
		return nil, err
	}
	return t, nil
}

// Reload re-reads the files and reports whether the content of any changed since the files in
// force were taken up; if so, they are in force from now on. On an error (a file unreadable, a
// key that does not match its certificate, no certificate in the client CA file) the files taken
// up before stay in force, the error is returned and counted (ReloadErrors), and the next Reload
// tries again. Each file is read once, so what is hashed is what is parsed.
func (t *TLSFiles) Reload() (changed bool, err error) {
	changed, err = t.files.Reload()
	if err != nil {
		return false, fmt.Errorf("tls: %w", err)
	}
	return changed, nil
}

// parse takes up the contents of the certificate, key and client CA files, in that order.
func (t *TLSFiles) parse(contents [][]byte) (*served, error) {
	cert, err := tls.X509KeyPair(contents[0], contents[1])
	if err != nil {
		return nil, fmt.Errorf("load certificate %s and key %s: %w", t.certFile, t.keyFile, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("parse certificate: %w", err)
	}
	sum := sha256.Sum256(cert.Certificate[0])
	s := &served{cert: &cert, certSum: hex.EncodeToString(sum[:]), notAfter: leaf.NotAfter}
	if t.clientCAFile != "" {
		s.clientCA = x509.NewCertPool()
		if !s.clientCA.AppendCertsFromPEM(contents[2]) {
			return nil, fmt.Errorf("no PEM certificate in client CA file %s", t.clientCAFile)
		}
	}
	return s, nil
}

// ReloadErrors counts the Reloads that failed since the files were loaded.
func (t *TLSFiles) ReloadErrors() uint64 { return t.files.Errors() }

// CipherSuites are the TLS 1.2 cipher suites served: ECDHE key exchange with an AEAD cipher,
// AES-GCM or ChaCha20-Poly1305, for ECDSA and RSA certificates. No CBC suite (Lucky13 and its
// kin), no RSA key exchange (no forward secrecy), no 3DES or RC4. TLS 1.3, which Go prefers
// whenever the client offers it, has only AEAD suites and takes no configuration.
var CipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// Config returns the server TLS configuration: TLS 1.3, or TLS 1.2 with CipherSuites only; the
// current certificate for every handshake; and, with a client CA, client certificates verified
// when given. Requiring one, and pinning its names, is left to the hook routes
// (Options.RequireClientCert, Options.ClientCertNames), so that probes without one still work.
func (t *TLSFiles) Config() *tls.Config {
	base := &tls.Config{MinVersion: tls.VersionTLS12, CipherSuites: CipherSuites}
	base.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		s, _ := t.files.Value() // taken up by LoadTLSFiles
		c := base.Clone()
		c.GetConfigForClient = nil
		c.Certificates = []tls.Certificate{*s.cert}
		if s.clientCA != nil {
			c.ClientCAs = s.clientCA
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
	s, _ := t.files.Value()
	return s.certSum, s.notAfter
}

// VerifiesClients reports whether a client CA is configured.
func (t *TLSFiles) VerifiesClients() bool { return t.clientCAFile != "" }

// requireClientCert answers 401 with no detail unless the connection presented a client
// certificate that verified against the client CA and, with Options.ClientCertNames, was issued
// to one of them (clientCertNamed). The log line says why a certificate was refused.
func (h *Handler) requireClientCert(next http.Handler) http.Handler {
	if !h.opts.RequireClientCert {
		return next
	}
	unauthorized := &Error{Code: http.StatusUnauthorized, Message: "unauthorized"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 {
			h.writeError(w, r, fmt.Errorf("no verified client certificate: %w", unauthorized))
			return
		}
		if leaf := r.TLS.VerifiedChains[0][0]; !clientCertNamed(leaf, h.opts.ClientCertNames) {
			h.writeError(w, r, fmt.Errorf("client certificate for DNS names %q (serial %s) is not one of --client-cert-names: %w",
				clipNames(leaf.DNSNames), leaf.SerialNumber, unauthorized))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// clientCertNamed reports whether one of cert's DNS subject alternative names equals one of names,
// ignoring case; true for any cert when names is empty. Only DNS names count: the subject's
// common name is not a name a CA vouches for in the way it does for a SAN, and Go's own host name
// checks ignore it too, so a certificate with none has no name here.
func clientCertNamed(cert *x509.Certificate, names []string) bool {
	if len(names) == 0 {
		return true
	}
	for _, dns := range cert.DNSNames {
		for _, name := range names {
			if strings.EqualFold(dns, name) {
				return true
			}
		}
	}
	return false
}

// clipNames returns the first few of a certificate's names, each cut, for a log line.
func clipNames(names []string) []string {
	out := make([]string, 0, min(len(names), 4))
	for i, n := range names {
		if i == 4 {
			out = append(out, fmt.Sprintf("… %d more", len(names)-i))
			break
		}
		out = append(out, validation.Cut(n, maxLoggedPath))
	}
	return out
}

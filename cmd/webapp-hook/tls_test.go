package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/webapp-operator/hooktest"
)

// TestTLS serves HTTPS with client verification: probes need no client certificate, hook calls
// do, a certificate from another CA is refused, and a renewed server certificate is served
// without a restart.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca, other := hooktest.NewCA(t, "webapp-hook CA"), hooktest.NewCA(t, "someone else")
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	serverCert, serverKey := ca.Issue(t, 10, "127.0.0.1")
	certFile, keyFile, caFile := write("tls.crt", serverCert), write("tls.key", serverKey), write("ca.crt", ca.PEM)

	m := NewMain(io.Discard)
	args := []string{"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--tls-cert-file", certFile, "--tls-key-file", keyFile, "--client-ca-file", caFile, "--shutdown-delay", "0s"}
	if err := m.ParseFlags(args, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	m.Config.ReloadInterval = 20 * time.Millisecond
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	base := "https://" + m.Addr().String()
	body, _ := os.ReadFile("../../examples/create.request.json")

	client := func(issuer *hooktest.CA) *http.Client {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(ca.PEM)
		cfg := &tls.Config{RootCAs: roots}
		if issuer != nil {
			c, k := issuer.Issue(t, 99)
			pair, err := tls.X509KeyPair(c, k)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Certificates = []tls.Certificate{pair}
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
	}
	// forced presents a certificate from another CA whatever the server asks for.
	forced := client(nil)
	c, k := other.Issue(t, 98)
	pair, _ := tls.X509KeyPair(c, k)
	forced.Transport.(*http.Transport).TLSClientConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		return &pair, nil
	}
	tests := []struct {
		name     string
		client   *http.Client
		method   string
		path     string
		wantCode int // -1: the handshake must be refused; for 401, a refused handshake is as good
	}{
		{"probe without a client certificate", client(nil), "GET", "/healthz", 200},
		{"hook call without a client certificate", client(nil), "POST", "/sync", 401},
		{"hook call with a client certificate", client(ca), "POST", "/sync", 200},
		// Go's client sends no certificate the server's CA list does not name; others may send it
		// and see the handshake refused.
		{"client certificate from another CA", client(other), "POST", "/sync", 401},
		{"client certificate from another CA, forced", forced, "POST", "/sync", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, base+tt.path, bytes.NewReader(body))
			resp, err := tt.client.Do(req)
			if tt.wantCode == -1 {
				if err == nil {
					resp.Body.Close()
					t.Fatalf("got %d; want the handshake refused", resp.StatusCode)
				}
				return
			}
			if err != nil && tt.wantCode == 401 {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode {
				t.Errorf("code = %d; want %d", resp.StatusCode, tt.wantCode)
			}
		})
	}

	t.Run("renewed certificate", func(t *testing.T) {
		renewedCert, renewedKey := ca.Issue(t, 11, "127.0.0.1")
		write("tls.key", renewedKey)
		write("tls.crt", renewedCert)
		later := time.Now().Add(time.Minute)
		os.Chtimes(certFile, later, later)
		os.Chtimes(keyFile, later, later)
		deadline := time.Now().Add(3 * time.Second)
		for {
			resp, err := client(nil).Get(base + "/healthz")
			if err == nil {
				resp.Body.Close()
				if served := resp.TLS.PeerCertificates[0]; served.SerialNumber.Int64() == 11 {
					checkCertificateMetric(t, "http://"+m.MetricsAddr().String()+"/metrics", served)
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("still serving the old certificate after 3s (last error %v)", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
}

// checkCertificateMetric checks that the metrics name the certificate served, by the SHA-256 of
// its DER encoding, with its expiry: what hack/rotate-ca.sh waits for.
func checkCertificateMetric(t *testing.T, url string, served *x509.Certificate) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	sum := sha256.Sum256(served.Raw)
	want := fmt.Sprintf("webapp_hook_tls_certificate_expiry_timestamp_seconds{sha256=%q} %g", hex.EncodeToString(sum[:]), float64(served.NotAfter.Unix()))
	if !strings.Contains(string(body), want) {
		t.Errorf("/metrics lacks %s", want)
	}
	if n := strings.Count(string(body), "webapp_hook_tls_certificate_expiry_timestamp_seconds{"); n != 1 {
		t.Errorf("/metrics names %d served certificates; want 1", n)
	}
}

func TestTLSFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--tls-cert-file", "a.crt"},
		{"--client-ca-file", "ca.crt"},
	} {
		if err := NewMain(io.Discard).ParseFlags(args, func(string) string { return "" }); err == nil {
			t.Errorf("ParseFlags(%v) accepted an incomplete TLS setup", args)
		}
	}
}

// TestTLSCipherSuites checks what the hook port negotiates: TLS 1.3, or TLS 1.2 with ECDHE and an
// AEAD cipher; a client that offers only CBC suites, or nothing newer than TLS 1.1, fails the
// handshake.
func TestTLSCipherSuites(t *testing.T) {
	dir := t.TempDir()
	ca := hooktest.NewCA(t, "webapp-hook CA")
	cert, key := ca.Issue(t, 10, "127.0.0.1") // ECDSA P-256
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	os.WriteFile(certFile, cert, 0o600)
	os.WriteFile(keyFile, key, 0o600)
	m := NewMain(io.Discard)
	if err := m.ParseFlags([]string{"--addr", "127.0.0.1:0", "--metrics-addr", "", "--tls-cert-file", certFile, "--tls-key-file", keyFile, "--shutdown-delay", "0s"}, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	tests := []struct {
		name       string
		minVersion uint16
		maxVersion uint16
		suites     []uint16
		wantSuite  uint16 // 0: the handshake must fail
		wantTLS13  bool
	}{
		{name: "TLS 1.3", wantTLS13: true},
		{name: "TLS 1.2, AES-128-GCM", maxVersion: tls.VersionTLS12, suites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256}, wantSuite: tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
		{name: "TLS 1.2, AES-256-GCM", maxVersion: tls.VersionTLS12, suites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384}, wantSuite: tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384},
		{name: "TLS 1.2, ChaCha20-Poly1305", maxVersion: tls.VersionTLS12, suites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305}, wantSuite: tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305},
		{name: "TLS 1.2, only CBC with SHA-1", maxVersion: tls.VersionTLS12, suites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA}},
		{name: "TLS 1.2, only CBC with SHA-256", maxVersion: tls.VersionTLS12, suites: []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256}},
		{name: "TLS 1.1", minVersion: tls.VersionTLS10, maxVersion: tls.VersionTLS11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := tls.Dial("tcp", m.Addr().String(), &tls.Config{RootCAs: roots, MinVersion: tt.minVersion, MaxVersion: tt.maxVersion, CipherSuites: tt.suites})
			if tt.wantSuite == 0 && !tt.wantTLS13 {
				if err == nil {
					state := conn.ConnectionState()
					conn.Close()
					t.Fatalf("handshake succeeded with %s over %s; want it refused", tls.CipherSuiteName(state.CipherSuite), tls.VersionName(state.Version))
				}
				return
			}
			if err != nil {
				t.Fatalf("handshake failed: %v", err)
			}
			defer conn.Close()
			state := conn.ConnectionState()
			if tt.wantTLS13 && state.Version != tls.VersionTLS13 {
				t.Errorf("negotiated %s; want TLS 1.3", tls.VersionName(state.Version))
			}
			if tt.wantSuite != 0 && state.CipherSuite != tt.wantSuite {
				t.Errorf("negotiated %s; want %s", tls.CipherSuiteName(state.CipherSuite), tls.CipherSuiteName(tt.wantSuite))
			}
		})
	}
}

// clientCA is a CA for client certificates with DNS names, which hooktest.CA does not issue.
type clientCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newClientCA(t *testing.T) *clientCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "clients CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &clientCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a client certificate with the common name cn and the DNS names dns.
func (ca *clientCA) issue(t *testing.T, serial int64, cn string, dns ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, DNSNames: dns,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestClientCertNames serves mTLS with --client-cert-names: a hook call needs a certificate the
// CA issued to a pinned DNS name; one the same CA issued to another name, or with the name only
// as its common name, gets 401; probes stay open.
func TestClientCertNames(t *testing.T) {
	dir := t.TempDir()
	serverCA, clients := hooktest.NewCA(t, "webapp-hook CA"), newClientCA(t)
	cert, key := serverCA.Issue(t, 10, "127.0.0.1")
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var logs bytes.Buffer
	m := NewMain(&logs)
	args := []string{"--addr", "127.0.0.1:0", "--metrics-addr", "", "--shutdown-delay", "0s",
		"--tls-cert-file", write("tls.crt", cert), "--tls-key-file", write("tls.key", key), "--client-ca-file", write("clients.crt", clients.pem),
		"--client-cert-names", "metacontroller.metacontroller.svc, backup.example"}
	if err := m.ParseFlags(args, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(serverCA.PEM)
	body, _ := os.ReadFile("../../examples/create.request.json")
	tests := []struct {
		name     string
		cert     *tls.Certificate
		path     string
		wantCode int
	}{
		{"the pinned name", ptr(clients.issue(t, 2, "metacontroller", "metacontroller.metacontroller.svc")), "/sync", 200},
		{"the other pinned name, in capitals", ptr(clients.issue(t, 3, "x", "BACKUP.example")), "/sync", 200},
		{"a pinned name among others", ptr(clients.issue(t, 4, "x", "a.example", "metacontroller.metacontroller.svc")), "/customize", 200},
		{"another name, the same CA", ptr(clients.issue(t, 5, "metacontroller", "intruder.example")), "/sync", 401},
		{"the pinned name as common name only", ptr(clients.issue(t, 6, "metacontroller.metacontroller.svc")), "/sync", 401},
		{"a wildcard that covers the pinned name", ptr(clients.issue(t, 7, "x", "*.metacontroller.svc")), "/sync", 401},
		{"no certificate", nil, "/sync", 401},
		{"a probe, another name", ptr(clients.issue(t, 8, "x", "intruder.example")), "/healthz", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &tls.Config{RootCAs: roots}
			if tt.cert != nil {
				cfg.Certificates = []tls.Certificate{*tt.cert}
			}
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
			method := "POST"
			if tt.path == "/healthz" {
				method = "GET"
			}
			req, _ := http.NewRequest(method, "https://"+m.Addr().String()+tt.path, bytes.NewReader(body))
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode {
				t.Errorf("code = %d; want %d (%s)", resp.StatusCode, tt.wantCode, got)
			}
			if tt.wantCode == 401 && strings.TrimSpace(string(got)) != `{"error":"unauthorized"}` {
				t.Errorf("401 body = %s; want {\"error\":\"unauthorized\"} and nothing more", got)
			}
		})
	}
	if !strings.Contains(logs.String(), `client certificate for DNS names [\"intruder.example\"] (serial 5) is not one of --client-cert-names`) {
		t.Errorf("no log line says why the certificate for another name was refused:\n%s", logs.String())
	}
}

func ptr[T any](v T) *T { return &v }

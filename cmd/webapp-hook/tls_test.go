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
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA issues certificates for the TLS tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a PEM certificate and key for a server (IP 127.0.0.1) or a client.
func (ca *testCA) issue(t *testing.T, serial int64, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "metacontroller"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// TestTLS serves HTTPS with client verification: probes need no client certificate, hook calls
// do, a certificate from another CA is refused, and a renewed server certificate is served
// without a restart.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca, other := newTestCA(t, "webapp-hook CA"), newTestCA(t, "someone else")
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	serverCert, serverKey := ca.issue(t, 10, true)
	certFile, keyFile, caFile := write("tls.crt", serverCert), write("tls.key", serverKey), write("ca.crt", ca.pem)

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

	client := func(issuer *testCA) *http.Client {
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(ca.pem)
		cfg := &tls.Config{RootCAs: roots}
		if issuer != nil {
			c, k := issuer.issue(t, 99, false)
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
	c, k := other.issue(t, 98, false)
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
		renewedCert, renewedKey := ca.issue(t, 11, true)
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

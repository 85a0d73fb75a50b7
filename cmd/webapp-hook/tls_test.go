package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
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

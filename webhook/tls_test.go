package webhook_test

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/webhook"
)

// TestTLSReload follows the TLS files through renewals, one step after the other: a change is
// told by the files' content, whatever their modification times say; a step that leaves them
// unusable keeps the certificate in force, and is counted.
func TestTLSReload(t *testing.T) {
	dir := t.TempDir()
	ca, other := hooktest.NewCA(t, "webapp-hook CA"), hooktest.NewCA(t, "another CA")
	certA, keyA := ca.Issue(t, 1, "webapp-hook.webapp-system.svc")
	certB, keyB := ca.Issue(t, 2, "webapp-hook.webapp-system.svc")
	_, keyC := ca.Issue(t, 3, "webapp-hook.webapp-system.svc")
	certFile, keyFile, caFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.crt")
	mod := time.Unix(1000, 0)
	write := func(path string, data []byte, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	write(certFile, certA, mod)
	write(keyFile, keyA, mod)
	write(caFile, ca.PEM, mod)
	files, err := webhook.LoadTLSFiles(certFile, keyFile, caFile)
	if err != nil {
		t.Fatal(err)
	}
	sumOf := func(certPEM []byte) string {
		block, _ := pem.Decode(certPEM)
		sum := sha256.Sum256(block.Bytes)
		return hex.EncodeToString(sum[:])
	}
	otherClientPEM, _ := other.Issue(t, 9)
	block, _ := pem.Decode(otherClientPEM)
	otherClient, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	// trustsOther reports whether the client CAs in force verify a client of the other CA.
	trustsOther := func() bool {
		cfg, err := files.Config().GetConfigForClient(nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = otherClient.Verify(x509.VerifyOptions{Roots: cfg.ClientCAs, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
		return err == nil
	}
	steps := []struct {
		name   string
		change func()

		wantChanged      bool
		wantErr          bool
		wantCert         []byte // the certificate served after the step
		wantTrustsOther  bool
		wantReloadErrors uint64
	}{
		{name: "unchanged", change: func() {}, wantCert: certA},
		{name: "the same bytes with new times", change: func() {
			write(certFile, certA, time.Unix(1500, 0))
			write(keyFile, keyA, time.Unix(1500, 0))
		}, wantCert: certA},
		{name: "renewed, the times restored", change: func() {
			write(certFile, certB, mod)
			write(keyFile, keyB, mod)
		}, wantChanged: true, wantCert: certB},
		{name: "a key that is not the certificate's", change: func() { write(keyFile, keyC, mod) },
			wantErr: true, wantCert: certB, wantReloadErrors: 1},
		{name: "the certificate gone", change: func() { os.Remove(certFile) },
			wantErr: true, wantCert: certB, wantReloadErrors: 2},
		{name: "back to the files in force: no change", change: func() {
			write(certFile, certB, mod)
			write(keyFile, keyB, mod)
		}, wantCert: certB, wantReloadErrors: 2},
		{name: "a second client CA, the time restored", change: func() { write(caFile, append(append([]byte{}, ca.PEM...), other.PEM...), mod) },
			wantChanged: true, wantCert: certB, wantTrustsOther: true, wantReloadErrors: 2},
		{name: "a client CA file with no certificate", change: func() { write(caFile, []byte("not PEM\n"), mod) },
			wantErr: true, wantCert: certB, wantTrustsOther: true, wantReloadErrors: 3},
	}
	for _, st := range steps {
		st.change()
		changed, err := files.Reload()
		if changed != st.wantChanged || (err != nil) != st.wantErr {
			t.Errorf("%s: Reload = %v, %v; want changed %v, error %v", st.name, changed, err, st.wantChanged, st.wantErr)
		}
		if sum, _ := files.Certificate(); sum != sumOf(st.wantCert) {
			t.Errorf("%s: serving certificate %s; want %s", st.name, sum, sumOf(st.wantCert))
		}
		if got := trustsOther(); got != st.wantTrustsOther {
			t.Errorf("%s: a client of the other CA verifies: %v; want %v", st.name, got, st.wantTrustsOther)
		}
		if got := files.ReloadErrors(); got != st.wantReloadErrors {
			t.Errorf("%s: ReloadErrors() = %d; want %d", st.name, got, st.wantReloadErrors)
		}
	}
	rec := httptest.NewRecorder()
	newHandler(webhook.Options{TLS: files}).MetricsHandler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if want := `webapp_hook_credential_reload_errors_total{file="tls"} 3`; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

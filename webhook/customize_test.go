package webhook_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/webhook"
)

// TestCustomizeOptions checks what the customize answer asks for, by how the hook is run: Secrets
// only when it serves TLS, so that Metacontroller never sends one in cleartext, and pods only with
// pod diagnosis.
func TestCustomizeOptions(t *testing.T) {
	ca := hooktest.NewCA(t, "webapp-hook test CA")
	cert, key := ca.Issue(t, 2, "webapp-hook.webapp-system.svc")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	files, err := webhook.LoadTLSFiles(certFile, keyFile, "")
	if err != nil {
		t.Fatal(err)
	}
	// customize.request.json references a ConfigMap and a Secret through envFrom.
	body := readExample(t, "customize.request.json")
	for _, tt := range []struct {
		name string
		opts webhook.Options
		want []string
	}{
		{"plain HTTP", webhook.Options{}, []string{"configmaps"}},
		{"TLS", webhook.Options{TLS: files}, []string{"configmaps", "secrets"}},
		{"TLS and pod diagnosis", webhook.Options{TLS: files, PodDiagnosis: true}, []string{"pods", "configmaps", "secrets"}},
		{"plain HTTP and pod diagnosis", webhook.Options{PodDiagnosis: true}, []string{"pods", "configmaps"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(newHandler(tt.opts), "POST", "/customize", body)
			if rec.Code != 200 {
				t.Fatalf("/customize = %d %s", rec.Code, rec.Body)
			}
			var resp sync.CustomizeResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range resp.RelatedResources {
				got = append(got, r.Resource)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("related resources %v; want %v", got, tt.want)
			}
		})
	}
}

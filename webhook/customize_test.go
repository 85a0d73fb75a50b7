package webhook_test

import (
	"encoding/json"
	"fmt"
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
			resp := customizeAnswer(t, tt.opts, body)
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

// TestCustomizeGateways checks that the customize answer relates the route's Gateways only when
// the CompositeController the request carries manages HTTPRoutes, and that the install's
// --default-gateway counts as the route's parentRef.
func TestCustomizeGateways(t *testing.T) {
	var req map[string]any
	if err := json.Unmarshal([]byte(readExample(t, "customize.request.json")), &req); err != nil {
		t.Fatal(err)
	}
	spec := req["parent"].(map[string]any)["spec"].(map[string]any)
	spec["route"] = map[string]any{"hostnames": []any{"hello.example.com"}}
	ccSpec := req["controller"].(map[string]any)["spec"].(map[string]any)
	base := ccSpec["childResources"].([]any)
	withRoutes := append(slices.Clone(base), map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "resource": "httproutes", "updateStrategy": map[string]any{"method": "InPlace"}})
	inDefault, err := sync.ParseGateway("default/public")
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := sync.ParseGateway("infra/public")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		children []any
		gateway  *sync.Defaults
		want     []string
	}{
		{"with the component and a default Gateway in the namespace", withRoutes, &sync.Defaults{Gateway: inDefault}, []string{"configmaps", "gateways default [public]"}},
		{"with the component and a default Gateway elsewhere", withRoutes, &sync.Defaults{Gateway: elsewhere}, []string{"configmaps", "gateways infra [public]"}},
		{"without the component", base, &sync.Defaults{Gateway: inDefault}, []string{"configmaps"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ccSpec["childResources"] = tt.children
			body, _ := json.Marshal(req)
			resp := customizeAnswer(t, webhook.Options{Defaults: *tt.gateway}, string(body))
			var got []string
			for _, r := range resp.RelatedResources {
				s := r.Resource
				if r.Resource == "gateways" {
					s = fmt.Sprintf("%s %s %v", r.Resource, r.Namespace, r.Names)
				}
				got = append(got, s)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("related resources %v; want %v", got, tt.want)
			}
		})
	}
}

// customizeAnswer posts body to /customize of a handler with opts and returns the answer,
// failing the test unless it is a 200 with a customize answer.
func customizeAnswer(t *testing.T, opts webhook.Options, body string) sync.CustomizeResponse {
	t.Helper()
	rec := serve(newHandler(opts), "POST", "/customize", body)
	if rec.Code != 200 {
		t.Fatalf("/customize = %d %s", rec.Code, rec.Body)
	}
	var resp sync.CustomizeResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

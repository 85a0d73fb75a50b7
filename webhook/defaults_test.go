package webhook_test

import (
	"encoding/json"
	"testing"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/webhook"
)

// TestDefaults checks that the install's defaults reach the answer: with
// Options.Defaults.SecurityProfile restricted, a WebApp that sets no profile gets the restricted
// pod template, and without it the pod template has no security context at all.
func TestDefaults(t *testing.T) {
	create := readExample(t, "create.request.json")
	tests := []struct {
		name         string
		defaults     sync.Defaults
		wantNonRoot  any
		wantEscalate any
	}{
		{"none", sync.Defaults{}, nil, nil},
		{"restricted", sync.Defaults{SecurityProfile: webappv1.SecurityProfileRestricted}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := serve(newHandler(webhook.Options{Defaults: tt.defaults}), "POST", "/sync", create)
			if rec.Code != 200 {
				t.Fatalf("code %d: %s", rec.Code, rec.Body)
			}
			var answer map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
				t.Fatal(err)
			}
			pod := hooktest.Field(answer, "children", 0, "spec", "template", "spec")
			if got := hooktest.Field(pod, "securityContext", "runAsNonRoot"); got != tt.wantNonRoot {
				t.Errorf("runAsNonRoot = %v; want %v", got, tt.wantNonRoot)
			}
			if got := hooktest.Field(pod, "containers", 0, "securityContext", "allowPrivilegeEscalation"); got != tt.wantEscalate {
				t.Errorf("allowPrivilegeEscalation = %v; want %v", got, tt.wantEscalate)
			}
		})
	}
}

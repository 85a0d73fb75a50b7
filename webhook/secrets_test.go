package webhook_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/example/webapp-operator/webhook"
)

// TestSecretsStaySecret plants a Secret value in requests, where Metacontroller puts it (the data
// of a related Secret), as they come and broken in every way near it, and searches every byte the
// hook writes (answers, error bodies, log lines at debug level, metrics) for it, plain or base64.
func TestSecretsStaySecret(t *testing.T) {
	const planted = "p1anted-s3cret-v4lue"
	encoded := base64.StdEncoding.EncodeToString([]byte(planted))
	secret := func(data any) map[string]any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
			"metadata": map[string]any{"name": "app-secret", "namespace": "default", "uid": "8b05f6bc-2d54-4cdd-8e58-a6dc5efc581e"},
			"data":     data}
	}
	parent := map[string]any{"apiVersion": "example.com/v1", "kind": "WebApp",
		"metadata": map[string]any{"name": "hello", "namespace": "default", "generation": 1},
		"spec": map[string]any{"image": "nginx:1.27", "port": 8080, "envFrom": []any{map[string]any{"secretRef": map[string]any{"name": "app-secret"}}},
			"volumes": []any{map[string]any{"name": "s", "mountPath": "/s", "secret": map[string]any{"secretName": "app-secret"}}}}}
	request := func(s any, extra map[string]any) string {
		req := map[string]any{"parent": parent, "children": map[string]any{}, "related": map[string]any{"Secret.v1": map[string]any{"default/app-secret": s}}}
		for k, v := range extra {
			req[k] = v
		}
		b, _ := json.Marshal(req)
		return string(b)
	}
	bodies := []string{
		request(secret(map[string]any{"TOKEN": encoded}), nil),
		request(secret(map[string]any{"TOKEN": encoded, "OTHER": encoded}), map[string]any{"finalizing": true}),
		request(secret(encoded), nil),                                  // data a string
		request(secret([]any{encoded, 5}), nil),                        // data a list
		request(secret(map[string]any{"TOKEN": 5, "X": encoded}), nil), // a value of the wrong type
		request(encoded, nil),                                          // the Secret a string
		request(map[string]any{"metadata": map[string]any{"name": 7}, "data": map[string]any{"TOKEN": encoded}}, nil), // bad metadata
		request(secret(map[string]any{"TOKEN": encoded}), map[string]any{"parent": "broken"}),                         // a 400 elsewhere
		request(secret(map[string]any{"TOKEN": encoded}), nil)[:200] + `"` + encoded,                                  // cut short
	}
	var logs bytes.Buffer
	h := webhook.New(webhook.Options{Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), CacheBytes: webhook.DefaultCacheBytes})
	var written strings.Builder
	codes := map[int]int{}
	for _, body := range bodies {
		if !strings.Contains(body, encoded) {
			t.Fatalf("the request does not carry the planted value: %.200s", body)
		}
		for _, path := range []string{"/sync", "/finalize", "/customize"} {
			rec := serve(h, "POST", path, body)
			codes[rec.Code]++
			written.WriteString(rec.Body.String())
			for k, v := range rec.Header() {
				written.WriteString(k + strings.Join(v, ","))
			}
		}
	}
	metrics := serve(h.MetricsHandler(), "GET", "/metrics", "").Body.String()
	out := written.String() + logs.String() + metrics
	for _, needle := range []string{planted, encoded, encoded[:16]} {
		if strings.Contains(out, needle) {
			t.Errorf("the hook wrote %q, from the Secret", needle)
		}
	}
	if codes[200] == 0 || codes[400] == 0 {
		t.Errorf("answers by code %v; want both answers and rejections searched", codes)
	}
}

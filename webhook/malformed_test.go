package webhook_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/example/webapp-operator/hooktest"
	"github.com/example/webapp-operator/sync/wire"
	"github.com/example/webapp-operator/webhook"
)

// TestMalformedRequests sends requests that are wrong in every way we could think of. Each gets
// its exact status code, and its exact error body or, for a 200, an answer that keeps to the hook
// contract: no observed child is dropped outside finalize. None may panic.
func TestMalformedRequests(t *testing.T) {
	const (
		meta    = `"metadata":{"name":"web","namespace":"n"}`
		parent  = `"parent":{` + meta + `,"spec":{"image":"nginx"}}`
		dep     = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"n"},"spec":{"replicas":2}}`
		svc     = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web","namespace":"n"}}`
		withDep = `"children":{"Deployment.apps/v1":{"web":` + dep + `},"Service.v1":{"web":` + svc + `}}`
	)
	nested := `{` + parent + `,"controller":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`
	env := make([]string, 10000)
	for i := range env {
		env[i] = fmt.Sprintf(`{"name":"V%d","value":"x"}`, i)
	}
	tenThousandEnv := `{"parent":{` + meta + `,"spec":{"image":"nginx","env":[` + strings.Join(env, ",") + `]}},` + withDep + `}`

	tests := []struct {
		name        string
		method      string
		contentType string
		body        string
		wantCode    int
		wantBody    string // the error's start, up to the field path and the problem's first words; for 200, a phase the answer must report
	}{
		// Not JSON at all.
		{"empty body", "POST", "", "", 400, "decode sync request: empty body: a JSON object is required"},
		{"not JSON", "POST", "", "hello", 400, "decode sync request: invalid JSON at byte "},
		{"truncated", "POST", "", `{"parent": {`, 400, "decode sync request: parent: invalid JSON at byte "},
		{"truncated inside a child", "POST", "", `{` + parent + `,"children":{"Deployment.apps/v1":{"web":{"apiVersion":"apps`, 400, `decode sync request: children["Deployment.apps/v1"].web.apiVersion: invalid JSON at byte `},
		{"data after the object", "POST", "", `{` + parent + `} {}`, 400, "decode sync request: invalid JSON at byte "},
		{"invalid UTF-8", "POST", "", "{\"parent\":{\"metadata\":{\"name\":\"\xff\",\"namespace\":\"n\"}}}", 400, "decode sync request: parent.metadata.name: invalid JSON at byte "},
		{"deeply nested", "POST", "", nested, 400, "decode sync request: controller[0][0][0][0][0][0][0][0][0][0][0][0][0][0][0]…: invalid JSON at byte "},
		// The wrong shapes.
		{"array", "POST", "", `[]`, 400, "decode sync request: expected object, got JSON array"},
		{"null", "POST", "", `null`, 400, "decode sync request: expected object, got JSON null"},
		{"string", "POST", "", `"sync"`, 400, "decode sync request: expected object, got JSON string"},
		{"no parent", "POST", "", `{"children":{}}`, 400, "decode sync request: parent: required"},
		{"null parent", "POST", "", `{"parent":null}`, 400, "decode sync request: parent: required"},
		{"parent an array", "POST", "", `{"parent":[]}`, 400, "decode sync request: parent: expected object, got JSON array"},
		{"no metadata", "POST", "", `{"parent":{"spec":{"image":"nginx"}}}`, 400, "decode sync request: parent.metadata: required"},
		{"null metadata", "POST", "", `{"parent":{"metadata":null}}`, 400, "decode sync request: parent.metadata: required"},
		{"name a number", "POST", "", `{"parent":{"metadata":{"name":7,"namespace":"n"}}}`, 400, "decode sync request: parent.metadata.name: expected string, got JSON number"},
		{"no namespace", "POST", "", `{"parent":{"metadata":{"name":"web"}}}`, 400, "decode sync request: parent.metadata.namespace: required: WebApp is a namespaced resource"},
		{"generation too large", "POST", "", `{"parent":{"metadata":{"name":"web","namespace":"n","generation":1e400}}}`, 400, "decode sync request: parent.metadata.generation: expected integer (64-bit), got JSON number 1e400"},
		{"finalizing a string", "POST", "", `{` + parent + `,"finalizing":"true"}`, 400, "decode sync request: finalizing: expected bool, got JSON string"},
		{"children an array", "POST", "", `{` + parent + `,"children":[]}`, 400, "decode sync request: children: expected object, got JSON array"},
		{"child group a number", "POST", "", `{` + parent + `,"children":{"Service.v1":1}}`, 400, `decode sync request: children["Service.v1"]: expected object, got JSON number`},
		{"child null", "POST", "", `{` + parent + `,"children":{"Service.v1":{"web":null}}}`, 400, `decode sync request: children["Service.v1"].web: expected object, got JSON null`},
		{"child without apiVersion", "POST", "", `{` + parent + `,"children":{"Service.v1":{"web":{"kind":"Service","metadata":{"name":"web"}}}}}`, 400, `decode sync request: children["Service.v1"].web.apiVersion: required`},
		{"child without name", "POST", "", `{` + parent + `,"children":{"Service.v1":{"web":{"apiVersion":"v1","kind":"Service","metadata":{}}}}}`, 400, `decode sync request: children["Service.v1"].web.metadata.name: required`},
		{"deployment replicas a string", "POST", "", `{` + parent + `,"children":{"Deployment.apps/v1":{"web":{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":"2"}}}}}`, 400, `decode sync request: children["Deployment.apps/v1"].web.spec.replicas: expected integer (32-bit), got JSON string "2"`},
		{"deployment status replicas too large", "POST", "", `{` + parent + `,"children":{"Deployment.apps/v1":{"web":{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"status":{"replicas":99999999999}}}}}`, 400, `decode sync request: children["Deployment.apps/v1"].web.status.replicas: expected integer (32-bit), got JSON number 99999999999`},
		// The wrong HTTP.
		{"too large", "POST", "", `{"parent":` + strings.Repeat(" ", 1<<20) + `}`, 413, "request body is larger than 1048576 bytes"},
		{"GET", "GET", "", "", 405, "method GET not allowed on /sync"},
		{"PUT", "PUT", "", `{` + parent + `}`, 405, "method PUT not allowed on /sync"},
		{"text/plain", "POST", "text/plain", `{` + parent + `}`, 415, `content type "text/plain" is not supported: send application/json`},
		{"a broken content type", "POST", "application/", `{` + parent + `}`, 415, `content type "application/" is not supported: send application/json`},
		// Wrong where the user wrote it, under parent.spec: answered Invalid, every child kept.
		{"no spec", "POST", "", `{"parent":{` + meta + `},` + withDep + `}`, 200, "Invalid"},
		{"null spec", "POST", "", `{"parent":{` + meta + `,"spec":null},` + withDep + `}`, 200, "Invalid"},
		{"spec a string", "POST", "", `{"parent":{` + meta + `,"spec":"nginx"},` + withDep + `}`, 200, "Invalid"},
		{"huge replicas", "POST", "", `{"parent":{` + meta + `,"spec":{"image":"nginx","replicas":1e20}},` + withDep + `}`, 200, "Invalid"},
		{"env entries null", "POST", "", `{"parent":{` + meta + `,"spec":{"image":"nginx","env":[null]}},` + withDep + `}`, 200, "Invalid"},
		// Odd but legal.
		{"10,000 env entries", "POST", "", tenThousandEnv, 200, "Progressing"},
		{"unknown child kinds are kept", "POST", "", `{` + parent + `,"children":{"ConfigMap.v1":{"web":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web"}}}}}`, 200, "Pending"},
		{"an empty children map", "POST", "", `{` + parent + `,"children":{}}`, 200, "Pending"},
		{"form content type, as curl -d sends", "POST", "application/x-www-form-urlencoded", `{` + parent + `}`, 200, "Pending"},
		{"JSON with a charset", "POST", "application/json; charset=utf-8", `{` + parent + `}`, 200, "Pending"},
	}
	if len(tests) < 30 {
		t.Fatalf("%d cases; want at least 30", len(tests))
	}
	h := newHandler(webhook.Options{MaxBodyBytes: 1 << 20, CacheBytes: webhook.DefaultCacheBytes})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/sync", strings.NewReader(tt.body))
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.wantCode {
				t.Fatalf("code = %d; want %d (body %.300s)", rec.Code, tt.wantCode, rec.Body)
			}
			if tt.wantCode != 200 {
				var got struct{ Error string }
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || !strings.HasPrefix(got.Error, tt.wantBody) {
					t.Errorf("body = %.300s; want {\"error\": %q…}", rec.Body, tt.wantBody)
				}
				return
			}
			var resp hooktest.Answer
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
				t.Fatal(err)
			}
			if string(resp.Status.Phase) != tt.wantBody {
				t.Errorf("phase = %q; want %q (%s)", resp.Status.Phase, tt.wantBody, resp.Status.Message)
			}
			decoded, err := wire.DecodeRequest([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if err := hooktest.CheckAnswer(decoded, rec.Body.Bytes()); err != nil {
				t.Error(err)
			}
		})
	}
}

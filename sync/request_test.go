package sync_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/sync"
)

func TestDecodeRequestErrors(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string // the exact error text
	}{
		{"empty body", ``, "empty body: a JSON object is required"},
		{"not JSON", `hello`, "invalid JSON at byte 0: invalid character 'h' at start of value"},
		{"truncated", `{"parent": {`, "parent: invalid JSON at byte 12: unexpected EOF"},
		{"invalid UTF-8", "{\"parent\": {\"metadata\": {\"name\": \"\xff\", \"namespace\": \"n\"}}}", "parent.metadata.name: invalid JSON at byte 34: invalid UTF-8"},
		{"names match exactly", `{"Parent": {"metadata": {"name": "a", "namespace": "n"}}}`, "parent: required"},
		{"array", `[]`, "expected object, got JSON array"},
		{"no parent", `{"children": {}}`, "parent: required"},
		{"null parent", `{"parent": null}`, "parent: required"},
		{"parent not an object", `{"parent": "hello"}`, "parent: expected object, got JSON string"},
		{"no metadata", `{"parent": {"spec": {}}}`, "parent.metadata: required"},
		{"no name", `{"parent": {"metadata": {"namespace": "default"}}}`, "parent.metadata.name: required"},
		{"no namespace", `{"parent": {"metadata": {"name": "a"}}}`, "parent.metadata.namespace: required: WebApp is a namespaced resource"},
		{"name not a string", `{"parent": {"metadata": {"name": 7}}}`, "parent.metadata.name: expected string, got JSON number"},
		{"generation not a number", `{"parent": {"metadata": {"namespace": "n", "name": "a", "generation": "1"}}}`, "parent.metadata.generation: expected integer, got JSON string"},
		{"another kind", `{"parent": {"kind": "Pod", "metadata": {"namespace": "n", "name": "a"}}}`, `parent.kind: must be WebApp, got "Pod"`},
		{"finalizing not a bool", `{"parent": {"metadata": {"namespace": "n", "name": "a"}}, "finalizing": "yes"}`, "finalizing: expected bool, got JSON string"},
		{"children not an object", `{"parent": {"metadata": {"namespace": "n", "name": "a"}}, "children": []}`, "children: expected object, got JSON array"},
		{"child group not an object", `{"parent": {"metadata": {"namespace": "n", "name": "a"}}, "children": {"Deployment.apps/v1": 1}}`, `children["Deployment.apps/v1"]: expected object, got JSON number`},
		{"child null", `{"parent": {"metadata": {"namespace": "n", "name": "a"}}, "children": {"Deployment.apps/v1": {"a": null}}}`, `children["Deployment.apps/v1"].a: expected object, got JSON null`},
		{"child without kind", `{"parent": {"metadata": {"namespace": "n", "name": "a"}}, "children": {"Deployment.apps/v1": {"a": {"apiVersion": "apps/v1", "metadata": {"namespace": "n", "name": "a"}}}}}`, `children["Deployment.apps/v1"].a.kind: required`},
		{"child without name", `{"parent": {"metadata": {"namespace": "n", "name": "a"}}, "children": {"Service.v1": {"a": {"apiVersion": "v1", "kind": "Service", "metadata": {}}}}}`, `children["Service.v1"].a.metadata.name: required`},
		{"deployment status of the wrong type", `{"parent": {"metadata": {"namespace": "n", "name": "a"}}, "children": {"Deployment.apps/v1": {"a": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": "n", "name": "a"}, "status": {"replicas": "3"}}}}}`, `children["Deployment.apps/v1"].a.status.replicas: expected integer, got JSON string`},
		{"number too large for a generation", `{"parent": {"metadata": {"namespace": "n", "name": "a", "generation": 1e40}}}`, "parent.metadata.generation: expected integer, got JSON number 1e40"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := sync.DecodeRequest([]byte(tt.body))
			var reqErr *sync.RequestError
			if !errors.As(err, &reqErr) {
				t.Fatalf("error = %v (%T); want a *sync.RequestError", err, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error = %q; want %q", got, tt.want)
			}
		})
	}
}

// TestDecodeRequestSpec checks that problems inside parent.spec never fail the request: they
// become SpecError, so the answer is Invalid and every child is kept.
func TestDecodeRequestSpec(t *testing.T) {
	tests := []struct {
		name         string
		spec         string
		wantErr      string // empty: valid
		wantReplicas int32
	}{
		{"defaults", `{"image": "nginx"}`, "", 1},
		{"explicit zero", `{"image": "nginx", "replicas": 0}`, "", 0},
		{"everything", `{"image": "nginx", "replicas": 2, "port": 80, "env": [{"name": "A", "value": "b"}], "resources": {"limits": {"cpu": "1"}}}`, "", 2},
		{"missing spec", `null`, "spec: required", 0},
		{"spec not an object", `"nginx"`, "spec: must be an object", 0},
		{"image not a string", `{"image": 5}`, "spec.image: must be a string, got 5", 1},
		{"replicas a string", `{"image": "nginx", "replicas": "three"}`, `spec.replicas: must be an integer, got "three"`, 0},
		{"replicas a fraction", `{"image": "nginx", "replicas": 1.5}`, "spec.replicas: must be an integer, got 1.5", 0},
		{"replicas huge", `{"image": "nginx", "replicas": 100000000000000000000}`, "spec.replicas: must be between 0 and 1000, got 100000000000000000000", 0},
		{"replicas above int32", `{"image": "nginx", "replicas": 4294967296}`, "spec.replicas: must be between 0 and 1000, got 4294967296", 0},
		{"port above range", `{"image": "nginx", "port": 70000}`, "spec.port: must be between 1 and 65535, got 70000", 1},
		{"env not a list", `{"image": "nginx", "env": {"A": "b"}}`, "spec.env: must be a list of {name, value, valueFrom}", 1},
		{"bad quantity", `{"image": "nginx", "resources": {"limits": {"cpu": "lots"}}}`, "spec.resources: must be {limits, requests} of quantities", 1},
		{"two problems at once", `{"image": 5, "port": "http"}`, `spec.image: must be a string, got 5; spec.port: must be an integer, got "http"`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := sync.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "a", "namespace": "n"}, "spec": ` + tt.spec + `}}`))
			if err != nil {
				t.Fatalf("DecodeRequest: %v; want a request with the spec problem recorded", err)
			}
			gotErr := req.Parent.SpecError
			if gotErr == nil {
				gotErr = sync.ValidateSpec(req.Parent.Spec)
			}
			switch {
			case tt.wantErr == "" && gotErr != nil:
				t.Fatalf("spec error = %v; want none", gotErr)
			case tt.wantErr != "" && (gotErr == nil || !strings.Contains(gotErr.Error(), tt.wantErr)):
				t.Fatalf("spec error = %v; want it to contain %q", gotErr, tt.wantErr)
			}
			if tt.wantErr == "" {
				if got := *req.Parent.Spec.Replicas; got != tt.wantReplicas {
					t.Errorf("replicas = %d; want %d", got, tt.wantReplicas)
				}
			}
			if got := sync.Sync(req, now).Status.Phase; (got == webappv1.PhaseInvalid) != (tt.wantErr != "") {
				t.Errorf("phase = %q; want Invalid exactly when the spec has a problem", got)
			}
		})
	}
}

// TestDecodeRequestRepeatedName checks that a repeated name is read as encoding/json reads it:
// the last value wins.
func TestDecodeRequestRepeatedName(t *testing.T) {
	req, err := sync.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "a", "name": "b", "namespace": "n"}, "spec": {"image": "x", "image": "nginx"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if req.Parent.Name != "b" || req.Parent.Spec.Image != "nginx" {
		t.Errorf("name, image = %q, %q; want the last values b, nginx", req.Parent.Name, req.Parent.Spec.Image)
	}
}

// TestDecodeRequestOrder checks that a Deployment's spec and status are read whatever the order of
// its members, and that a child sent twice under the same key counts once, the last one winning.
func TestDecodeRequestOrder(t *testing.T) {
	const late = `{"kind": "Deployment", "spec": {"replicas": 4}, "status": {"replicas": 4, "observedGeneration": 2}, "metadata": {"name": "hello"}, "apiVersion": "apps/v1"}`
	const early = `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hello"}, "spec": {"replicas": 2}}`
	req, err := sync.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "hello", "namespace": "n"}, "spec": {"image": "nginx"}}, "children": {"Deployment.apps/v1": {"hello": ` + early + `, "hello": ` + late + `}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(req.Children) != 1 {
		t.Fatalf("%d children; want the repeated key to count once", len(req.Children))
	}
	d := req.Children[0].Deployment
	if d == nil || d.Replicas != 4 || d.Status.Replicas != 4 || d.Status.ObservedGeneration != 2 {
		t.Errorf("deployment = %+v; want the last one, with replicas 4 and its status read after apiVersion came", d)
	}
	_, err = sync.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "hello", "namespace": "n"}}, "children": {"Deployment.apps/v1": {"web": {"spec": {"replicas": "x"}, "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}}}}}`))
	if want := `children["Deployment.apps/v1"].web.spec.replicas: expected integer, got JSON string`; err == nil || err.Error() != want {
		t.Errorf("error = %v; want %q", err, want)
	}
}

// TestDecodeRequestKeys checks that hook v1 (keyed by name) and v2 (keyed by namespace/name)
// requests decode to the same children, and that garbage keys change nothing.
func TestDecodeRequestKeys(t *testing.T) {
	child := `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hello", "namespace": "default"}}`
	dep := `{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "hello", "namespace": "default", "generation": 2}, "spec": {"replicas": 4}, "status": {"replicas": 4, "observedGeneration": 2}}`
	parent := `{"parent": {"metadata": {"name": "hello", "namespace": "default"}, "spec": {"image": "nginx"}}, "children": `
	var got [][]string
	for _, children := range []string{
		`{"Service.v1": {"hello": ` + child + `}, "Deployment.apps/v1": {"hello": ` + dep + `}}`,
		`{"Service.v1": {"default/hello": ` + child + `}, "Deployment.apps/v1": {"default/hello": ` + dep + `}}`,
		`{"whatever": {"x": ` + child + `, "y": ` + dep + `}}`,
	} {
		req, err := sync.DecodeRequest([]byte(parent + children + `}`))
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range req.Children {
			ids = append(ids, c.Kind+"/"+c.Namespace+"/"+c.Name)
			if c.Kind == "Deployment" && (c.Deployment == nil || c.Deployment.Replicas != 4 || c.Deployment.Status.ObservedGeneration != 2 || c.Generation != 2) {
				t.Errorf("deployment = %+v; want replicas 4, generation 2 and observedGeneration 2", c.Deployment)
			}
		}
		got = append(got, ids)
	}
	want := []string{"Deployment/default/hello", "Service/default/hello"}
	for i, ids := range got {
		if !slices.Equal(ids, want) {
			t.Errorf("request %d children = %v; want %v", i, ids, want)
		}
	}
}

func TestIsImageReference(t *testing.T) {
	tests := []struct {
		ref  string
		want bool
	}{
		{"nginx", true},
		{"nginx:1.27", true},
		{"library/nginx:1.27-alpine", true},
		{"registry.example.com/team/app:v1.2.3", true},
		{"localhost:5000/app", true},
		{"[::1]:5000/app:latest", true},
		{"ghcr.io/org/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true},
		{"app:v1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true},
		{"my_app__x-y.z", true},
		{"", false},
		{"nginx 1.27", false},
		{" nginx", false},
		{"NGINX", false},
		{"nginx:", false},
		{"nginx:-tag", false},
		{"-nginx", false},
		{"nginx//app", false},
		{"nginx@sha256:short", false},
		{"app:" + strings.Repeat("a", 129), false},
		{strings.Repeat("a", 256), false},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			if got := sync.IsImageReference(tt.ref); got != tt.want {
				t.Errorf("IsImageReference(%q) = %v; want %v", tt.ref, got, tt.want)
			}
		})
	}
}

// sharedFixtures lists the real Metacontroller requests beside the checkout, or skips: they are
// shared material that a clone elsewhere does not have.
func sharedFixtures(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob("../../shared/fixtures/*/*/*.json")
	if len(files) == 0 {
		t.Skip("no ../shared/fixtures beside the checkout; these real Metacontroller requests are not part of the repository")
	}
	return files
}

// TestRealRequests answers every request Metacontroller 4.17.2 really sent and checks the contract.
func TestRealRequests(t *testing.T) {
	for _, file := range sharedFixtures(t) {
		t.Run(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), func(t *testing.T) {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			req, err := sync.DecodeRequest(body)
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			finalize := strings.HasSuffix(file, ".finalize.json")
			if req.Finalizing != finalize {
				t.Errorf("finalizing = %v; want %v", req.Finalizing, finalize)
			}
			var resp sync.Response
			if finalize {
				resp = sync.Finalize(req, now)
			} else {
				resp = sync.Sync(req, now)
			}
			if err := sync.CheckResponse(req, resp); err != nil {
				t.Error(err)
			}
			st := resp.Status
			switch {
			case finalize && len(req.Children) == 0:
				if !*resp.Finalized {
					t.Error("finalized = false with no children left; want true")
				}
			case finalize:
				if *resp.Finalized || len(resp.Children) >= len(req.Children) {
					t.Errorf("finalized = %v with %d of %d children kept; want false and fewer kept", *resp.Finalized, len(resp.Children), len(req.Children))
				}
			case len(req.Children) == 0:
				if st.Phase != webappv1.PhasePending {
					t.Errorf("phase = %q; want Pending", st.Phase)
				}
			default:
				// The recorded children were made by another hook, so they do not carry this hook's
				// spec yet: honest status says the update is still to come.
				if st.Phase != webappv1.PhaseProgressing || st.Ready {
					t.Errorf("phase, ready = %q, %v; want Progressing, false", st.Phase, st.Ready)
				}
			}
		})
	}
}

// FuzzDecide decodes arbitrary requests and holds both answers to the hook contract. Seeds are the
// examples and, when present, Metacontroller's real requests.
func FuzzDecide(f *testing.F) {
	for _, r := range requestFiles(f, "*.json") {
		f.Add(r.body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := sync.DecodeRequest(body)
		if err != nil {
			var reqErr *sync.RequestError
			if !errors.As(err, &reqErr) || err.Error() == "" {
				t.Fatalf("error %v (%T); want a *sync.RequestError with a message", err, err)
			}
			return
		}
		syncReq, finalizeReq := *req, *req
		syncReq.Finalizing, finalizeReq.Finalizing = false, true
		if err := sync.CheckResponse(&syncReq, sync.Sync(&syncReq, now)); err != nil {
			t.Fatalf("sync: %v\nrequest: %s", err, body)
		}
		if err := sync.CheckResponse(&finalizeReq, sync.Finalize(&finalizeReq, now)); err != nil {
			t.Fatalf("finalize: %v\nrequest: %s", err, body)
		}
	})
}

// TestMemo checks that remembering built children changes no answer: every example and real
// request gets byte for byte what Sync gives, from a fresh Memo and again once remembered.
func TestMemo(t *testing.T) {
	memo := sync.NewMemo(16 << 10) // small, so that it also starts afresh along the way
	for _, r := range requestFiles(t, "*.sync.json") {
		t.Run(filepath.Base(r.file), func(t *testing.T) {
			req := r.decode(t)
			want := asJSON(t, sync.Sync(req, now))
			for i := range 2 {
				if got := asJSON(t, memo.Sync(req, now)); got != want {
					t.Fatalf("call %d with a Memo =\n%s\nwant\n%s", i, got, want)
				}
			}
		})
	}
	t.Run("a changed spec is built again", func(t *testing.T) {
		decode := func(image string) *sync.Request {
			req, err := sync.DecodeRequest([]byte(`{"parent": {"metadata": {"name": "a", "namespace": "n"}, "spec": {"image": "` + image + `"}}}`))
			if err != nil {
				t.Fatal(err)
			}
			return req
		}
		m := sync.NewMemo(1 << 20)
		first, second := m.Sync(decode("nginx:1.27"), now), m.Sync(decode("nginx:1.28"), now)
		if asJSON(t, first.Children) == asJSON(t, second.Children) {
			t.Error("the second spec got the first spec's children")
		}
		if invalid := m.Sync(decode("nginx:"), now); invalid.Status.Phase != webappv1.PhaseInvalid {
			t.Errorf("phase = %q; want Invalid", invalid.Status.Phase)
		}
	})
}

// TestAppendJSON checks that Response.AppendJSON writes exactly what json.Marshal writes, for every
// example, every real request, and a sync and a finalize answer of each.
func TestAppendJSON(t *testing.T) {
	for _, r := range requestFiles(t, "*.json") {
		req, file := r.decode(t), r.file
		for name, resp := range map[string]sync.Response{"sync": sync.Sync(req, now), "finalize": sync.Finalize(req, now)} {
			want, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			got, err := resp.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("%s %s: AppendJSON =\n%s\nwant\n%s", filepath.Base(file), name, got, want)
			}
		}
	}
}

// requestFile is one request body kept on disk.
type requestFile struct {
	file string
	body []byte
}

// requestFiles reads every request in examples/ and, when the shared folder is beside the
// checkout, the real Metacontroller requests whose names match fixturePattern.
func requestFiles(t testing.TB, fixturePattern string) []requestFile {
	t.Helper()
	files, _ := filepath.Glob("../examples/*.request.json")
	fixtures, _ := filepath.Glob("../../shared/fixtures/*/*/" + fixturePattern)
	var out []requestFile
	for _, file := range append(files, fixtures...) {
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, requestFile{file, body})
	}
	return out
}

func (r requestFile) decode(t *testing.T) *sync.Request {
	t.Helper()
	req, err := sync.DecodeRequest(r.body)
	if err != nil {
		t.Fatalf("%s: %v", r.file, err)
	}
	return req
}

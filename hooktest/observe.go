package hooktest

import (
	"encoding/json"
	"testing"

	"github.com/example/webapp-operator/sync"
	"github.com/example/webapp-operator/sync/wire"
)

// Observe returns obj as the hook sees it observed: obj (a typed object or a JSON-shaped map) is
// encoded, sent in a request through wire.DecodeRequest, and the one child that comes out is
// returned. The parent of that request lives in obj's namespace, or "default".
func Observe(t testing.TB, obj any) sync.Child {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var head map[string]any
	if err := json.Unmarshal(raw, &head); err != nil {
		t.Fatal(err)
	}
	apiVersion, kind, namespace, _ := Identity(head)
	if namespace == "" {
		namespace = "default"
	}
	body, err := json.Marshal(map[string]any{
		"parent":   map[string]any{"metadata": map[string]any{"name": "observer", "namespace": namespace}, "spec": map[string]any{"image": "x"}},
		"children": map[string]any{kind + "." + apiVersion: map[string]any{"observed": json.RawMessage(raw)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := wire.DecodeRequest(body)
	if err != nil {
		t.Fatalf("DecodeRequest: %v", err)
	}
	if len(req.Children) != 1 {
		t.Fatalf("%d children decoded; want 1", len(req.Children))
	}
	return req.Children[0]
}

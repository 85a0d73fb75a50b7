package sync

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// referencePrune is pruneJSON written plainly over a tokenizer: the definition pruneJSON must
// agree with, and the baseline BenchmarkPrune measures it against.
func referencePrune(in []byte) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(in), jsontext.AllowDuplicateNames(true))
	var value func(out []byte) ([]byte, bool, error)
	value = func(out []byte) ([]byte, bool, error) {
		switch dec.PeekKind() {
		case 'n':
			_, err := dec.ReadToken()
			return out, false, err
		case '{', '[':
			open, err := dec.ReadToken()
			if err != nil {
				return out, false, err
			}
			start := len(out)
			out = append(out, byte(open.Kind()))
			closing := jsontext.Kind('}')
			if open.Kind() == '[' {
				closing = ']'
			}
			n := 0
			for dec.PeekKind() != closing {
				mark := len(out)
				if n > 0 {
					out = append(out, ',')
				}
				if closing == '}' {
					name, err := dec.ReadValue()
					if err != nil {
						return out, false, err
					}
					out = append(append(out, name...), ':')
				}
				var kept bool
				if out, kept, err = value(out); err != nil {
					return out, false, err
				}
				if kept {
					n++
				} else {
					out = out[:mark]
				}
			}
			if _, err := dec.ReadToken(); err != nil {
				return out, false, err
			}
			if n == 0 {
				return out[:start], false, nil
			}
			return append(out, byte(closing)), true, nil
		}
		v, err := dec.ReadValue()
		return append(out, v...), err == nil, err
	}
	out, _, err := value(nil)
	return out, err
}

func TestPruneJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a":null,"b":{},"c":[],"d":{"e":{"f":[]}},"g":0,"h":false,"i":"","j":[null,1]}`, `{"g":0,"h":false,"i":"","j":[1]}`},
		{`{"s":"a\"}],{","t":"\\","u":[{},{"v":1}]}`, `{"s":"a\"}],{","t":"\\","u":[{"v":1}]}`},
		{`[{}]`, ``},
		{`{"n":-1.5e+10,"o":true}`, `{"n":-1.5e+10,"o":true}`},
	}
	for _, tt := range tests {
		got, err := pruneJSON([]byte(tt.in), "")
		if err != nil || string(got) != tt.want {
			t.Errorf("pruneJSON(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	if got, err := pruneJSON([]byte(`{"spec":{"a":1},"status":{"b":0},"x":{"status":1}}`), "status"); err != nil || string(got) != `{"spec":{"a":1},"x":{"status":1}}` {
		t.Errorf("pruneJSON dropping status = %s, %v; want the top-level status gone and only it", got, err)
	}
	for _, bad := range []string{`{"a":1`, `{"a" 1}`, `{"a":1}x`, `[1 2]`, `{"a":nul}`, `"abc`} {
		if _, err := pruneJSON([]byte(bad), ""); err == nil {
			t.Errorf("pruneJSON(%s): no error; want one", bad)
		}
	}
}

// FuzzPruneJSON holds pruneJSON to referencePrune on any compact JSON that encoding/json writes.
func FuzzPruneJSON(f *testing.F) {
	f.Add([]byte(`{"a":null,"b":{},"c":[{"d":[]}],"e":"x\"y","f":0}`))
	f.Add(deploymentForm(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		var v any
		if json.Unmarshal(data, &v) != nil {
			return
		}
		compact, err := json.Marshal(v)
		if err != nil {
			return
		}
		got, err := pruneJSON(bytes.Clone(compact), "")
		if err != nil {
			t.Fatalf("pruneJSON(%s): %v", compact, err)
		}
		want, err := referencePrune(compact)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("pruneJSON(%s) =\n%s\nwant\n%s", compact, got, want)
		}
	})
}

// deploymentForm is a Deployment as json.Marshal writes it, before pruning.
func deploymentForm(t testing.TB) []byte {
	p := &Parent{Name: "hello", Namespace: "default", Spec: webappSpec()}
	labels, selector, pods := podLabels(p, nil)
	d := desiredDeployment(p, p.Spec.Replicas, labels, selector, pods, configState{})
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func webappSpec() (s webappv1.WebAppSpec) {
	replicas, port := int32(3), int32(8080)
	s.Image, s.Replicas, s.Port = "nginx:1.27", &replicas, &port
	s.Env = []corev1.EnvVar{{Name: "A", Value: "b"}, {Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
	webappv1.Default(&s) // as DecodeRequest does: the builders trust the defaults
	return s
}

// BenchmarkPrune measures pruneJSON against referencePrune on a Deployment's JSON.
func BenchmarkPrune(b *testing.B) {
	in := deploymentForm(b)
	for _, bc := range []struct {
		name  string
		prune func([]byte) ([]byte, error)
	}{{"bytes", func(b []byte) ([]byte, error) { return pruneJSON(b, "") }}, {"tokenizer", referencePrune}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := bc.prune(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestMarshalResponse holds Response.MarshalJSON to the shape Metacontroller decodes: the
// envelope encoded as one struct, children never null, each child in its own encoding, with
// children that encoding/json would escape or reformat. The reference is encoding/json as the
// pinned github.com/go-json-experiment/json/v1 implements it, not the standard library of
// whichever Go runs the test.
func TestMarshalResponse(t *testing.T) {
	p := &Parent{Name: "hello", Namespace: "default", Spec: webappSpec()}
	labels, selector, pods := podLabels(p, nil)
	kept := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x <&> \u2028 é"},
		"data": map[string]any{"n": int64(1), "f": 2.5, "e": map[string]any{}},
	}}
	yes, no := true, false
	dep := desiredDeployment(p, p.Spec.Replicas, labels, selector, pods, configState{})
	tests := []struct {
		name string
		resp Response
	}{
		{"no children", Response{Status: webappv1.WebAppStatus{Phase: webappv1.PhasePending, Message: "<wait> & see"}}},
		{"built and kept", Response{Status: webappv1.WebAppStatus{Replicas: 3}, Children: []runtime.Object{dep, desiredService(p, labels, pods), kept}}},
		{"finalizing", Response{ResyncAfterSeconds: 5, Finalized: &no, Children: []runtime.Object{kept}}},
		{"finalized", Response{ResyncAfterSeconds: 0.25, Finalized: &yes}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.resp.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			ref := struct {
				Status             webappv1.WebAppStatus `json:"status"`
				Children           []jsonv1.RawMessage   `json:"children"`
				ResyncAfterSeconds float64               `json:"resyncAfterSeconds,omitempty"`
				Finalized          *bool                 `json:"finalized,omitempty"`
			}{Status: tt.resp.Status, Children: []jsonv1.RawMessage{}, ResyncAfterSeconds: tt.resp.ResyncAfterSeconds, Finalized: tt.resp.Finalized}
			for _, c := range tt.resp.Children {
				b, err := encodeChild(c)
				if err != nil {
					t.Fatal(err)
				}
				ref.Children = append(ref.Children, b)
			}
			want, err := jsonv1.Marshal(ref)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("MarshalJSON =\n%s\nwant\n%s", got, want)
			}
		})
	}
}

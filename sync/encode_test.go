package sync

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	corev1 "k8s.io/api/core/v1"

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
		got, err := pruneJSON(compact, "")
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
	b, err := json.Marshal(desiredDeployment(p, p.Spec.Replicas, labels, selector, pods, ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func webappSpec() (s webappv1.WebAppSpec) {
	replicas, port := int32(3), int32(8080)
	s.Image, s.Replicas, s.Port = "nginx:1.27", &replicas, &port
	s.Env = []corev1.EnvVar{{Name: "A", Value: "b"}, {Name: "POD", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}}
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

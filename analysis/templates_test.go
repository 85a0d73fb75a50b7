package analysis

import (
	"os"
	"strings"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// TestTemplateVariablesEscaped renders templates for WebApps whose names try to break out of the
// label matcher they are put in: each variable must read back, as PromQL reads the literal, as
// the name itself, and its Regex must match the name and nothing else.
func TestTemplateVariablesEscaped(t *testing.T) {
	set, err := ParseTemplates([]byte(`
templates:
- name: t
  query: 'x{ns="{{.Namespace}}", name="{{.Name}}", route="{{.Route}}", canary="{{.CanaryService}}", stable="{{.StableService}}", svc="{{.Service}}", re=~"{{.Service.Regex}}", nre=~"{{.Name.Regex}}"}[{{.Window}}]'
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ ns, name string }{
		{"shop", "web"},
		{"shop", "a.b"},
		{"shop", `a"}) or vector(1) or x{y="`},
		{`ns\"`, `back\slash\`},
		{"shop", "line\nbreak"},
		{"shop", ".*"},
		{"shop", "ünïcode\x00"}, // a request's JSON holds valid UTF-8 only
	} {
		tr := target{namespace: tc.ns, name: tc.name, service: tc.name + webappv1.CanarySuffix, window: 45 * time.Second}
		q, err := set.render("t", tr)
		if err != nil {
			t.Fatal(err)
		}
		for prefix, want := range map[string]string{
			"{ns=": tc.ns, ", name=": tc.name, ", route=": tc.name, ", canary=": tc.name + "-canary", ", stable=": tc.name + "-stable", ", svc=": tc.name + "-canary",
		} {
			if got := literalAfter(t, q, prefix); got != want {
				t.Errorf("%q: %s reads %q; want %q", tc.name, prefix, got, want)
			}
		}
		re := literalAfter(t, q, ", re=~")
		if !matches(t, re, tc.name+"-canary") || matches(t, re, tc.name+"-canaryX") || matches(t, re, "X"+tc.name+"-canary") {
			t.Errorf("%q: {{.Service.Regex}} = %q matches more or less than the Service", tc.name, re)
		}
		if nre := literalAfter(t, q, ", nre=~"); tc.name == "a.b" && matches(t, nre, "aXb") {
			t.Errorf("{{.Name.Regex}} = %q matches aXb", nre)
		}
		if !strings.HasSuffix(q, "[45s]") {
			t.Errorf("%q: window: %s", tc.name, q)
		}
	}
}

func TestParseTemplates(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		wantErr    string // "" for none
		wantNames  []string
	}{
		{name: "empty", yaml: "", wantNames: nil},
		{name: "two", yaml: "templates:\n- name: a\n  query: up\n- name: b\n  query: sum(x{s=\"{{.Service}}\"})\n", wantNames: []string{"a", "b"}},
		{name: "selector", yaml: "templates:\n- name: a\n  query: sum(traefik_service_requests_total{ {{.Selector}} })\n", wantNames: []string{"a"}},
		{name: "bad name", yaml: "templates:\n- name: A_b\n  query: up\n", wantErr: `templates[0]: name "A_b"`},
		{name: "twice", yaml: "templates:\n- name: a\n  query: up\n- name: a\n  query: up\n", wantErr: `templates[1]: name "a": defined twice`},
		{name: "no query", yaml: "templates:\n- name: a\n  query: ' '\n", wantErr: "the query must be 1 to"},
		{name: "unknown variable", yaml: "templates:\n- name: a\n  query: '{{.URL}}'\n", wantErr: "templates[0] (a):"},
		{name: "bad template", yaml: "templates:\n- name: a\n  query: '{{.Name'\n", wantErr: "templates[0] (a):"},
		{name: "unknown field", yaml: "templates:\n- name: a\n  query: up\n  url: http://x\n", wantErr: "templates:"},
		{name: "too long", yaml: "templates:\n- name: a\n  query: " + strings.Repeat("x", MaxTemplateBytes+1) + "\n", wantErr: "the query must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := ParseTemplates([]byte(tc.yaml))
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("err = %v; want one with %q", err, tc.wantErr)
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case err == nil && strings.Join(set.Names(), ",") != strings.Join(tc.wantNames, ","):
				t.Errorf("names = %v; want %v", set.Names(), tc.wantNames)
			}
		})
	}
}

// TestDocsTemplates checks that the templates file of docs/configuration.md parses, and that its
// example renders for a WebApp.
func TestDocsTemplates(t *testing.T) {
	b, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(b), "### Analysis templates")
	_, block, ok := strings.Cut(section, "```yaml\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("no YAML block under Analysis templates")
	}
	set, err := ParseTemplates([]byte(block))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range set.Names() {
		if _, err := set.render(name, target{namespace: "shop", name: "web", service: "web-canary", window: 30 * time.Second}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(set.Names()) == 0 {
		t.Error("the example has no template")
	}
}

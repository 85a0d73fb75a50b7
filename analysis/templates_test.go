package analysis

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

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

// TestTemplatesErrorStatus checks what a WebApp's status shows of a templates file that does not
// parse: where it is wrong and why, in the parser's words at most, and nothing of a query.
func TestTemplatesErrorStatus(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"YAML", "templates:\n- name: a\n  query: sum(secret_metric)\n   oops: x\n", "does not parse: line 4: mapping values are not allowed in this context"},
		{"a key twice", "templates:\n- name: a\n  query: sum(secret_metric)\n  query: x\n", `does not parse: line 4: key "query" already set in map`},
		{"not YAML at all", "\tsecret_metric", "does not parse: found character that cannot start any token"},
		{"an unknown field", "templates:\n- name: a\n  query: up\n  secret_metric: x\n", "does not parse: it is not a list of templates, each a name and a query"},
		{"a bad name", "templates: [{name: Secret_metric, query: up}]", "does not parse: templates[0]: its name is not a DNS label"},
		{"twice", "templates: [{name: a, query: up}, {name: a, query: secret_metric}]", "does not parse: templates[1] (a): its name is defined twice"},
		{"too long", "templates:\n- name: a\n  query: " + strings.Repeat("x", MaxTemplateBytes+1) + "\n", "does not parse: templates[0] (a): the query must be 1 to 16384 bytes"},
		{"a bad template", "templates:\n- name: a\n  query: \"secret_metric\\n{{.Name\"\n", "does not parse: templates[0] (a): line 2 of its query does not parse as a Go template: unclosed action"},
		{"an unknown variable", "templates:\n- name: a\n  query: 'secret_metric{x=\"{{.URL}}\"}'\n", "does not parse: templates[0] (a): line 1 of its query does not render: can't evaluate field URL in type analysis.TemplateData"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseTemplates([]byte(tc.yaml))
			if err == nil {
				t.Fatal("parsed")
			}
			if got := statusOf(err); got != tc.want {
				t.Errorf("status %q; want %q", got, tc.want)
			}
			if strings.Contains(statusOf(err), "secret_metric") || strings.Contains(strings.ToLower(statusOf(err)), "secret") {
				t.Errorf("the status shows the file's content: %q", statusOf(err))
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

// TestTemplatesPolicy holds metacontroller/analysis/policy.yaml, which finds a template's name in
// the templates ConfigMap with a regular expression (CEL cannot parse YAML), to ParseTemplates:
// in every file the hook takes, in the styles the policy's comment lists, the expression finds
// each name the hook defines, and neither a name it does not (a prefix, an extension, a name
// commented out) nor another key's value. CEL's matches is Go's regexp.
func TestTemplatesPolicy(t *testing.T) {
	b, err := os.ReadFile("../metacontroller/analysis/policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(b), "\n---\n")
	var policy struct {
		Spec struct {
			Variables []struct{ Name, Expression string } `json:"variables"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(doc), &policy); err != nil {
		t.Fatal(err)
	}
	raw := map[string]string{}
	for _, v := range policy.Spec.Variables {
		if s, ok := strings.CutPrefix(v.Expression, "r'"); ok && strings.HasSuffix(s, "'") {
			raw[v.Name] = strings.TrimSuffix(s, "'")
		}
	}
	if raw["before"] == "" || raw["after"] == "" {
		t.Fatalf("the policy has no raw strings before and after: %v", raw)
	}
	defines := func(file, name string) bool {
		return regexp.MustCompile(raw["before"] + name + raw["after"]).MatchString(file)
	}
	docs, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(docs), "### Analysis templates")
	_, docsFile, _ := strings.Cut(section, "```yaml\n")
	docsFile, _, _ = strings.Cut(docsFile, "```")
	for _, tc := range []struct {
		name, file string
		absent     []string
	}{
		{"docs/configuration.md's example", docsFile, []string{"error", "budget", "app", "app-p9", "app-p950", "Selector"}},
		{"as the chart writes it (toYaml)", "templates:\n- name: error-budget\n  query: |\n    sum(x{name=\"y\"})\n- name: \"123\"\n  query: up\n", []string{"y", "12", "1234"}},
		{"query first, comments, quotes", "templates:\n# - name: old\n#- name: older\n-   query: up # name: hidden\n    name: a   # the first\n- name: 'b-c'\n  query: up\n- \"name\": \"d\"\n  query: up\n", []string{"old", "older", "hidden", "b", "c"}},
		{"flow style", "templates: [{name: a, query: up}, {query: 'up', name: \"b\"}]\n", []string{"up"}},
		{"JSON", `{"templates": [{"name": "a", "query": "up"}, {"query": "up", "name": "b-c"}]}`, []string{"b", "c", "up"}},
		{"one line of JSON", `{"templates":[{"name":"a","query":"up"},{"query":"up","name":"b"}]}`, []string{"ab"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set, err := ParseTemplates([]byte(tc.file))
			if err != nil || len(set.Names()) == 0 {
				t.Fatalf("ParseTemplates: %v, %v; want templates", set.Names(), err)
			}
			for _, n := range set.Names() {
				if !defines(tc.file, n) {
					t.Errorf("the policy would refuse %q, which the hook defines", n)
				}
			}
			for _, n := range tc.absent {
				if defines(tc.file, n) {
					t.Errorf("the policy would let in %q, which the hook does not define", n)
				}
			}
		})
	}
}

package analysis

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// MaxTemplates bounds the templates of a templates file, and MaxTemplateBytes each one's query.
const (
	MaxTemplates     = 100
	MaxTemplateBytes = 16 << 10
)

// TemplatesFile is the YAML of an --analysis-templates file:
//
//	templates:
//	- name: error-budget
//	  query: |
//	    ...PromQL with {{.Service}} and the other variables of TemplateData...
type TemplatesFile struct {
	// Templates are the metric templates, each named by a DNS label, the names distinct.
	Templates []Template `json:"templates"`
}

// Template is one metric template: a PromQL expression with Go text/template variables
// (TemplateData), that yields one series, or none when there is no data.
type Template struct {
	// Name is what a WebApp's templateRef.name says.
	Name string `json:"name"`
	// Query is the PromQL, at most MaxTemplateBytes.
	Query string `json:"query"`
}

// TemplateData are the variables of a template. Every name is a Label: {{.Service}} is escaped
// for inside a double-quoted equality matcher, {{.Service.Regex}} for inside a regular-expression
// one. A template is given the names of the WebApp whose metric it measures and nothing else.
type TemplateData struct {
	// Namespace and Name are the WebApp's.
	Namespace, Name Label
	// Route is its HTTPRoute's name: the WebApp's.
	Route Label
	// CanaryService and StableService are the Services the route splits between:
	// <name>-canary and <name>-stable.
	CanaryService, StableService Label
	// Service is the Service of the version measured: CanaryService for the canary's value,
	// StableService for the stable version's, when the metric is compared with it.
	Service Label
	// Window is the span of the check, a PromQL duration in seconds: rate(x[{{.Window}}]).
	Window string
	// Selector is the label matchers, without braces, that select the measured version's
	// requests in the Gateway's metrics (--analysis-gateway), as the built-ins select them:
	// traefik_service_requests_total{ {{.Selector}}, code=~"5.." }.
	Selector string
}

// TemplateSet is a parsed templates file. The zero value and nil hold no template.
type TemplateSet struct {
	byName map[string]*template.Template
	// bad, when not "", is why the hook has no templates file in force, in a sentence for the
	// status (Prometheus.Reload): every template renders to it.
	bad string
}

// ParseTemplates reads a templates file (TemplatesFile). Every template must have a DNS label as
// its name, distinct, and a query that parses as a Go template and renders with sample data: a
// variable that TemplateData lacks fails here, not at a check. The PromQL itself is checked by
// Prometheus only: a template that renders wrong PromQL makes every check that uses it
// inconclusive, and the status says that Prometheus refused the query. Its error, for the log,
// is the parser's whole message; statusOf gives the part of it a status may show.
func ParseTemplates(data []byte) (*TemplateSet, error) {
	var f TemplatesFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, yamlError(err)
	}
	if len(f.Templates) > MaxTemplates {
		why := fmt.Sprintf("%d templates; at most %d", len(f.Templates), MaxTemplates)
		return nil, &templatesError{msg: "templates: " + why, why: why}
	}
	s := &TemplateSet{byName: map[string]*template.Template{}}
	for i, t := range f.Templates {
		at := fmt.Sprintf("templates[%d] (%s)", i, t.Name)
		if msgs := validation.IsDNS1123Label(t.Name); len(msgs) > 0 {
			return nil, &templatesError{msg: fmt.Sprintf("templates[%d]: name %q: %s", i, t.Name, strings.Join(msgs, "; ")),
				where: fmt.Sprintf("templates[%d]", i), why: "its name is not a DNS label"}
		}
		if _, dup := s.byName[t.Name]; dup {
			return nil, &templatesError{msg: fmt.Sprintf("templates[%d]: name %q: defined twice", i, t.Name), where: at, why: "its name is defined twice"}
		}
		if strings.TrimSpace(t.Query) == "" || len(t.Query) > MaxTemplateBytes {
			why := fmt.Sprintf("the query must be 1 to %d bytes", MaxTemplateBytes)
			return nil, &templatesError{msg: at + ": " + why, where: at, why: why}
		}
		tpl, err := template.New(t.Name).Option("missingkey=error").Parse(t.Query)
		if err != nil {
			return nil, goTemplateError(at, "does not parse as a Go template", err)
		}
		sample := templateData(target{namespace: "ns", name: "app", service: "app" + webappv1.CanarySuffix, selector: `service="sample"`, window: 30e9})
		if err := tpl.Execute(new(bytes.Buffer), sample); err != nil {
			return nil, goTemplateError(at, "does not render", err)
		}
		s.byName[t.Name] = tpl
	}
	return s, nil
}

// templatesError is why ParseTemplates refused a file: msg, the whole of it, for the log; where
// and why, what a status may show of it (statusOf).
type templatesError struct {
	msg string
	err error // the parser's, if any
	// where is the place in the file: "line 3", "templates[2] (budget)", or "" when the parser
	// gave none.
	where string
	// why is what is wrong there: a phrase of ours, or the parser's words when they repeat
	// nothing of the file but a name or a token.
	why string
}

func (e *templatesError) Error() string { return e.msg }
func (e *templatesError) Unwrap() error { return e.err }

// statusOf is the sentence ending "the hook's analysis templates file ..." for err, one of
// ParseTemplates': it says where the file is wrong and what is wrong, in the parser's words at
// most, and repeats no query, so that a WebApp's status shows nothing of the platform team's
// templates.
func statusOf(err error) string {
	var e *templatesError
	if !errors.As(err, &e) {
		return "does not parse"
	}
	if e.where == "" {
		return "does not parse: " + e.why
	}
	return "does not parse: " + e.where + ": " + e.why
}

// yamlLine finds the position and the problem in a YAML parser's error: "yaml: line 3: could not
// find expected ':'".
var yamlLine = regexp.MustCompile(`line (\d+): ([^\n]*)`)

// yamlError is the templatesError of a file that is not YAML, or not a TemplatesFile.
func yamlError(err error) error {
	e := &templatesError{msg: "templates: " + err.Error(), err: err}
	msg := err.Error()
	switch {
	case strings.HasPrefix(msg, "error converting YAML to JSON: "):
		// The YAML parser's own problems are fixed phrases ("did not find expected key"), but an
		// unmarshal error quotes a value in backquotes: that is left out.
		rest := strings.TrimPrefix(strings.TrimPrefix(msg, "error converting YAML to JSON: "), "yaml: ")
		if m := yamlLine.FindStringSubmatch(rest); m != nil {
			e.where, rest = "line "+m[1], m[2]
		}
		e.why = "it is not valid YAML"
		if rest != "" && !strings.ContainsAny(rest, "`\n") && len(rest) <= 120 {
			e.why = rest
		}
	default: // a field that is not one of TemplatesFile's, or of the wrong type
		e.why = "it is not a list of templates, each a name and a query"
	}
	return e
}

// goTemplate finds the position and the problem in text/template's errors: `template: budget:1:
// function "rat" not defined` when parsing, `template: budget:1:2: executing "budget" at <.URL>:
// can't evaluate field URL in type analysis.TemplateData` when executing.
var goTemplate = regexp.MustCompile(`^template: [^:]*:(\d+)(?::\d+)?: (?:executing "[^"]*" at <[^>]*>: )?([^\n]*)$`)

// goTemplateError is the templatesError of template at's query, which text/template refused:
// what says how ("does not render"), and the line and the parser's words follow when they can be
// found (they name a field, a function or a token at most).
func goTemplateError(at, what string, err error) error {
	e := &templatesError{msg: fmt.Sprintf("%s: %v", at, err), err: err, where: at, why: "its query " + what}
	if m := goTemplate.FindStringSubmatch(err.Error()); m != nil {
		e.why = "line " + m[1] + " of its query " + what
		if len(m[2]) <= 120 {
			e.why += ": " + m[2]
		}
	}
	return e
}

// Names are the templates' names, sorted; none while the file is bad.
func (s *TemplateSet) Names() []string {
	if s == nil {
		return nil
	}
	var names []string
	for n := range s.byName {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// errNoTemplate is the sentence of a templateRef that names no template.
var errNoTemplate = errors.New("the hook's analysis templates define no such template")

// render is template name's PromQL for version t.
func (s *TemplateSet) render(name string, t target) (string, error) {
	var tpl *template.Template
	if s != nil {
		if s.bad != "" {
			return "", errors.New(s.bad)
		}
		tpl = s.byName[name]
	}
	if tpl == nil {
		return "", fmt.Errorf("template %q: %w", name, errNoTemplate)
	}
	var b strings.Builder
	if err := tpl.Execute(&b, templateData(t)); err != nil {
		return "", fmt.Errorf("template %q does not render", name) // the error itself is the platform team's, and is logged at load
	}
	return b.String(), nil
}

// templateData are the variables of a template measuring t.
func templateData(t target) TemplateData {
	return TemplateData{
		Namespace:     Label(t.namespace),
		Name:          Label(t.name),
		Route:         Label(t.name),
		CanaryService: Label(t.name + webappv1.CanarySuffix),
		StableService: Label(t.name + webappv1.StableSuffix),
		Service:       Label(t.service),
		Window:        Window(t.window),
		Selector:      t.selector,
	}
}

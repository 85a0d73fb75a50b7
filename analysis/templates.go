package analysis

import (
	"bytes"
	"errors"
	"fmt"
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
}

// ParseTemplates reads a templates file (TemplatesFile). Every template must have a DNS label as
// its name, distinct, and a query that parses as a Go template and renders with sample data: a
// variable that TemplateData lacks fails here, not at a check. The PromQL itself is checked by
// Prometheus only: a template that renders wrong PromQL makes every check that uses it
// inconclusive, and the status says that Prometheus refused the query.
func ParseTemplates(data []byte) (*TemplateSet, error) {
	var f TemplatesFile
	if err := yaml.UnmarshalStrict(data, &f); err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	if len(f.Templates) > MaxTemplates {
		return nil, fmt.Errorf("templates: %d templates; at most %d", len(f.Templates), MaxTemplates)
	}
	s := &TemplateSet{byName: map[string]*template.Template{}}
	for i, t := range f.Templates {
		if msgs := validation.IsDNS1123Label(t.Name); len(msgs) > 0 {
			return nil, fmt.Errorf("templates[%d]: name %q: %s", i, t.Name, strings.Join(msgs, "; "))
		}
		if _, dup := s.byName[t.Name]; dup {
			return nil, fmt.Errorf("templates[%d]: name %q: defined twice", i, t.Name)
		}
		if strings.TrimSpace(t.Query) == "" || len(t.Query) > MaxTemplateBytes {
			return nil, fmt.Errorf("templates[%d] (%s): the query must be 1 to %d bytes", i, t.Name, MaxTemplateBytes)
		}
		tpl, err := template.New(t.Name).Option("missingkey=error").Parse(t.Query)
		if err != nil {
			return nil, fmt.Errorf("templates[%d] (%s): %w", i, t.Name, err)
		}
		sample := templateData(target{namespace: "ns", name: "app", service: "app" + webappv1.CanarySuffix, selector: `service="sample"`, window: 30e9})
		if err := tpl.Execute(new(bytes.Buffer), sample); err != nil {
			return nil, fmt.Errorf("templates[%d] (%s): %w", i, t.Name, err)
		}
		s.byName[t.Name] = tpl
	}
	return s, nil
}

// Names are the templates' names, sorted.
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

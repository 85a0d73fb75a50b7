package analysis

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

func ptr[T any](v T) *T { return &v }

// literalAfter finds the PromQL string literal that follows prefix in q and returns its value, as
// PromQL reads it (Go's escapes); it fails the test when there is none, or it does not end.
func literalAfter(t *testing.T, q, prefix string) string {
	t.Helper()
	i := strings.Index(q, prefix)
	if i < 0 || i+len(prefix) >= len(q) || q[i+len(prefix)] != '"' {
		t.Fatalf("no string literal after %q in:\n%s", prefix, q)
	}
	rest := q[i+len(prefix):]
	for j := 1; j < len(rest); j++ {
		switch rest[j] {
		case '\\':
			j++
		case '"':
			v, err := strconv.Unquote(rest[:j+1])
			if err != nil {
				t.Fatalf("literal %s: %v", rest[:j+1], err)
			}
			return v
		}
	}
	t.Fatalf("unterminated literal after %q in:\n%s", prefix, q)
	return ""
}

// matches reports whether PromQL's regular expression re, which Prometheus anchors at both ends,
// matches s.
func matches(t *testing.T, re, s string) bool {
	t.Helper()
	return regexp.MustCompile("^(?:" + re + ")$").MatchString(s)
}

// TestIstioSelector checks that Istio's selector is the Service's namespace and name, exact, as
// before: Istio labels each in a label of its own, so no other Service's requests match.
func TestIstioSelector(t *testing.T) {
	got, err := Istio.Selector(&Backend{Namespace: "shop", Name: "web", Service: `web"-canary`})
	if err != nil {
		t.Fatal(err)
	}
	want := `reporter="destination", destination_service_namespace="shop", destination_service_name="web\"-canary"`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if v := literalAfter(t, got, "destination_service_name="); v != `web"-canary` {
		t.Errorf("the service's literal reads %q", v)
	}
}

// TestIstioSelectorHeaderRoute: Istio counts the canary Service's requests whichever rule sent
// them, so a header route's requests are counted (Include), and a check that leaves them out
// (Exclude) is not measured, and says why.
func TestIstioSelectorHeaderRoute(t *testing.T) {
	headers := [][]HeaderMatch{{{Name: "X-Canary", Value: "always"}}}
	for _, tc := range []struct {
		name    string
		count   bool
		wantErr string
	}{
		{"Include: the Service's requests, as without a header route", true, ""},
		{"Exclude: not measured", false, "Istio counts a Service's requests whatever rule of the route sent them, so the header route's cannot be left out (headerRoute.analysis Exclude): not measured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Istio.Selector(&Backend{Namespace: "shop", Name: "web", Service: "web-canary", Route: &Route{HeaderMatches: headers, CountHeaderRoute: tc.count}})
			switch {
			case tc.wantErr == "" && (err != nil || got != `reporter="destination", destination_service_namespace="shop", destination_service_name="web-canary"`):
				t.Errorf("got %s, %v; want the Service's selector", got, err)
			case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
				t.Errorf("got %s, %v; want the error %q", got, err, tc.wantErr)
			}
		})
	}
}

func TestWindow(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{{30 * time.Second, "30s"}, {time.Hour, "3600s"}, {1500 * time.Millisecond, "1s"}, {0, "1s"}} {
		if got := Window(tc.d); got != tc.want {
			t.Errorf("Window(%s) = %s; want %s", tc.d, got, tc.want)
		}
	}
}

// lr is the label_replace of Query's parts: expr with labels value, metric (when not "") and
// track.
func lr(expr, value, metric, track string) string {
	e := "(\n" + expr + "\n)"
	e = `label_replace(` + e + `, "value", "` + value + `", "", "")`
	if metric != "" {
		e = `label_replace(` + e + `, "metric", "` + metric + `", "", "")`
	}
	return `label_replace(` + e + `, "track", "` + track + `", "", "")`
}

func TestQuery(t *testing.T) {
	router := simRouter("shop", "web", "infra", "public", "web", 0, `Host("web.example.com") && PathPrefix("/")`)
	canarySel := `service="` + simService(router, "shop", "web-canary", 1) + `"`
	stableSel := `service="` + simService(router, "shop", "web-stable", 0) + `"`
	templates, err := ParseTemplates([]byte(`
templates:
- name: errors
  query: sum(rate(errors_total{namespace="{{.Namespace}}", service="{{.Service}}"}[{{.Window}}])) # a YAML comment, not the query's
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		span       time.Duration // since the step began; 0 for 10 minutes
		a          webappv1.CanaryAnalysis
		want       []string
		wantErrors map[string]string
	}{
		{
			name: "success rate: the requests since the step began, and those answered 5xx",
			a:    webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{{Name: "request-success-rate", ThresholdRange: webappv1.ThresholdRange{Min: ptr(99.0)}}}},
			want: []string{
				lr(`sum(increase(traefik_service_requests_total{`+canarySel+`}[600s]))`, "requests", "", "canary"),
				lr(`sum(increase(traefik_service_requests_total{`+canarySel+`, code=~"5.."}[600s]))`, "failed", "", "canary"),
			},
		},
		{
			name: "duration: the histogram since the step began, whatever the window",
			a: webappv1.CanaryAnalysis{IntervalSeconds: ptr[int32](20), WindowSeconds: ptr[int32](60), Metrics: []webappv1.CanaryMetric{
				{Name: "request-duration", Quantile: ptr(0.95), ThresholdRange: webappv1.ThresholdRange{Max: ptr(500.0)}},
			}},
			want: []string{
				lr(`sum(increase(traefik_service_requests_total{`+canarySel+`}[600s]))`, "requests", "", "canary"),
				lr(`sum by (le) (increase(traefik_service_request_duration_seconds_bucket{`+canarySel+`}[600s]))`, "buckets", "", "canary"),
			},
		},
		{
			name: "compared with the stable version, and a template over its window",
			a: webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{
				{Name: "request-duration", ThresholdRange: webappv1.ThresholdRange{Max: ptr(500.0)}, Stable: &webappv1.StableComparison{MaxDifference: 100}},
				{Name: "errs", TemplateRef: &webappv1.MetricTemplateRef{Name: "errors"}, ThresholdRange: webappv1.ThresholdRange{Max: ptr(1.0)}},
			}},
			want: []string{
				lr(`sum(increase(traefik_service_requests_total{`+canarySel+`}[600s]))`, "requests", "", "canary"),
				lr(`sum by (le) (increase(traefik_service_request_duration_seconds_bucket{`+canarySel+`}[600s]))`, "buckets", "", "canary"),
				lr(`sum(increase(traefik_service_requests_total{`+stableSel+`}[600s]))`, "requests", "", "stable"),
				lr(`sum by (le) (increase(traefik_service_request_duration_seconds_bucket{`+stableSel+`}[600s]))`, "buckets", "", "stable"),
				lr(`sum(rate(errors_total{namespace="shop", service="web-canary"}[30s]))`, "metric", "errs", "canary"),
			},
		},
		{
			name: "a template's window never reaches before the step began",
			span: 12 * time.Second,
			a: webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{
				{Name: "errs", TemplateRef: &webappv1.MetricTemplateRef{Name: "errors"}, ThresholdRange: webappv1.ThresholdRange{Max: ptr(1.0)}},
			}},
			want: []string{
				lr(`sum(increase(traefik_service_requests_total{`+canarySel+`}[12s]))`, "requests", "", "canary"),
				lr(`sum(rate(errors_total{namespace="shop", service="web-canary"}[12s]))`, "metric", "errs", "canary"),
			},
		},
		{
			name: "an unknown template is left out, and says so",
			a: webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{
				{Name: "budget", TemplateRef: &webappv1.MetricTemplateRef{Name: "nope"}, ThresholdRange: webappv1.ThresholdRange{Max: ptr(1.0)}},
			}},
			want:       []string{lr(`sum(increase(traefik_service_requests_total{`+canarySel+`}[600s]))`, "requests", "", "canary")},
			wantErrors: map[string]string{"budget": `template "nope": the hook's analysis templates define no such template`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			span := tc.span
			if span == 0 {
				span = 10 * time.Minute
			}
			got, errs, err := Query(&Traefik, templates, parent("web"), testEntryPoints, &tc.a, span)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Join(tc.want, "\nor\n"); got != want {
				t.Errorf("query:\n%s\nwant:\n%s", got, want)
			}
			if len(errs) != len(tc.wantErrors) {
				t.Errorf("errors = %v; want %v", errs, tc.wantErrors)
			}
			for k, v := range tc.wantErrors {
				if errs[k] != v {
					t.Errorf("errors[%s] = %q; want %q", k, errs[k], v)
				}
			}
		})
	}
}

// TestQueryNotSelected checks that a check whose versions' requests the Gateway cannot select
// alone has no query, and says why.
func TestQueryNotSelected(t *testing.T) {
	a := &webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{{Name: "request-success-rate", ThresholdRange: webappv1.ThresholdRange{Min: ptr(99.0)}}}}
	q, _, err := Query(&Traefik, nil, parent("web"), nil, a, time.Minute)
	if q != "" || !errors.Is(err, errAmbiguous) {
		t.Errorf("without entry points: query %q, error %v; want none, and %v", q, err, errAmbiguous)
	}
}

// TestQueryBalanced checks that every query Query writes has its parentheses, braces and
// brackets balanced outside string literals and comments, and its literals closed: a name or a
// template's comment cannot change the query's shape.
func TestQueryBalanced(t *testing.T) {
	templates, err := ParseTemplates([]byte(`
templates:
- name: t
  query: 'sum(x{a="{{.Name}}", b=~"{{.Service.Regex}}"}) # ) } ]'
`))
	if err != nil {
		t.Fatal(err)
	}
	a := &webappv1.CanaryAnalysis{Metrics: []webappv1.CanaryMetric{
		{Name: "request-success-rate", ThresholdRange: webappv1.ThresholdRange{Min: ptr(99.0)}, Stable: &webappv1.StableComparison{MaxDifference: 1}},
		{Name: "request-duration", ThresholdRange: webappv1.ThresholdRange{Max: ptr(9.0)}},
		{Name: "t", TemplateRef: &webappv1.MetricTemplateRef{Name: "t"}, ThresholdRange: webappv1.ThresholdRange{Max: ptr(9.0)}},
	}}
	for _, name := range []string{"web", "a.b", `x"}) or vector(1) #`, `back\slash`, "new\nline", "$1"} {
		q, _, err := Query(&Traefik, templates, Parent{Namespace: "ns", Name: name, Route: testRoute(name)}, testEntryPoints, a, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var stack []byte
		open := map[byte]byte{')': '(', '}': '{', ']': '['}
		for i := 0; i < len(q); i++ {
			switch c := q[i]; c {
			case '"':
				for i++; i < len(q) && q[i] != '"'; i++ {
					if q[i] == '\\' {
						i++
					}
				}
				if i >= len(q) {
					t.Fatalf("name %q: an unterminated literal in:\n%s", name, q)
				}
			case '#':
				for i < len(q) && q[i] != '\n' {
					i++
				}
			case '(', '{', '[':
				stack = append(stack, c)
			case ')', '}', ']':
				if len(stack) == 0 || stack[len(stack)-1] != open[c] {
					t.Fatalf("name %q: %c at %d unbalanced in:\n%s", name, c, i, q)
				}
				stack = stack[:len(stack)-1]
			}
		}
		if len(stack) != 0 {
			t.Errorf("name %q: %q left open in:\n%s", name, stack, q)
		}
	}
}

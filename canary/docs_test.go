package canary_test

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

var update = flag.Bool("update", false, "rewrite the canary's table in docs/design.md")

// The docs print the table between these lines.
const (
	tableStart = "<!-- canary.Transitions: written by go test ./canary -update -->"
	tableEnd   = "<!-- end of canary.Transitions -->"
)

// funcName is the name of a guard or step of the table, "" for nil.
func funcName(f any) string {
	v := reflect.ValueOf(f)
	if v.IsNil() {
		return ""
	}
	name := runtime.FuncForPC(v.Pointer()).Name()
	return "`" + name[strings.LastIndex(name, ".")+1:] + "`"
}

// orDash is s, or "—" when s is empty.
func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// phases renders a row's phases as the docs print them.
func phases(ps []webappv1.CanaryPhase) string {
	switch {
	case len(ps) == len(webappv1.CanaryPhases)+1:
		return "any"
	case fmt.Sprint(ps) == fmt.Sprint(webappv1.CanaryPhases):
		return "any but none"
	}
	var out []string
	for _, p := range ps {
		if p == canary.None {
			out = append(out, "none")
		} else {
			out = append(out, string(p))
		}
	}
	return strings.Join(out, ", ")
}

// renderTable is canary.Transitions as a Markdown table.
func renderTable() string {
	var b strings.Builder
	b.WriteString("| # | kind | in | when | row | to | does |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for i, r := range canary.Transitions {
		to := "(same)"
		if r.Kind == canary.Move {
			to = phases([]webappv1.CanaryPhase{r.To})
		}
		when := funcName(r.When)
		if when == "" {
			when = "always"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s |\n", i+1, r.Kind, phases(r.From), when, r.Name, to, orDash(funcName(r.Do)))
	}
	return b.String()
}

// TestTableInDocs holds docs/design.md's print of the table to canary.Transitions; -update
// rewrites it.
func TestTableInDocs(t *testing.T) {
	const path = "../docs/design.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start, end := strings.Index(doc, tableStart), strings.Index(doc, tableEnd)
	if start < 0 || end < start {
		t.Fatalf("%s has no %q … %q section", path, tableStart, tableEnd)
	}
	got, want := doc[start+len(tableStart)+1:end], renderTable()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(doc[:start+len(tableStart)+1]+want+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s prints another table than canary.Transitions (go test ./canary -update rewrites it):\n%s\nwant\n%s", path, got, want)
}

// section is the part of the Markdown file at path under heading, up to the next heading of its
// level.
func section(t *testing.T, path, heading string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "\n"+heading+"\n")
	if start < 0 {
		t.Fatalf("%s has no section %q", path, heading)
	}
	level := heading[:strings.Index(heading, " ")+1]
	if end := strings.Index(doc[start+1:], "\n"+level); end >= 0 {
		return doc[start : start+1+end]
	}
	return doc[start:]
}

// firstColumn is what stands in backquotes as the first cell of a table's rows in text, in
// order: the names a table of the docs lists.
func firstColumn(text string) []string {
	var out []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Za-z-]+)` \\|").FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestChecksInDocs holds docs/canary.md's table of checks to canary.Checks, in their order,
// and its words for the check interval and the availability grace to their constants.
func TestChecksInDocs(t *testing.T) {
	checks := section(t, "../docs/canary.md", "## Checks")
	var want []string
	for _, c := range canary.Checks {
		want = append(want, c.Name)
	}
	if got := firstColumn(checks); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("docs/canary.md lists the checks %v; want canary.Checks, in order: %v", got, want)
	}
	words := strings.Join(strings.Fields(checks), " ")
	for _, phrase := range []string{
		fmt.Sprintf("A failure counts at most once per %d seconds", webappv1.CanaryCheckInterval/time.Second),
		fmt.Sprintf("`pauseSeconds` + %d minutes after they were asked for", webappv1.CanaryAvailabilityGrace/time.Minute),
	} {
		if !strings.Contains(words, phrase) {
			t.Errorf("docs/canary.md does not say %q", phrase)
		}
	}
}

// TestStagesInDocs holds docs/design.md's table of stages to canary.Stages, in their order.
func TestStagesInDocs(t *testing.T) {
	var want []string
	for _, r := range canary.Stages {
		want = append(want, string(r.Stage))
	}
	if got := firstColumn(section(t, "../docs/design.md", "## The canary's machine")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("docs/design.md lists the stages %v; want canary.Stages, in order: %v", got, want)
	}
}

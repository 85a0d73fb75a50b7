package screen

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

var update = flag.Bool("update", false, "rewrite the golden screens in testdata/ from the stories in ../testdata/recorded and ../testdata/seeded")

// readRecording reads a story of recordedDir.
func readRecording(path string) (*Recording, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Recording
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// recordings are the stories of the golden screens, by case name: every story of recordedDir,
// and of seededDir those of the cases no e2e run has recorded yet.
func recordings(t *testing.T) map[string]*Recording {
	t.Helper()
	seeded, _ := filepath.Glob(filepath.Join(seededDir, "*.json"))
	recorded, _ := filepath.Glob(filepath.Join(recordedDir, "*.json"))
	if len(seeded)+len(recorded) == 0 {
		t.Fatalf("no story in %s or %s", recordedDir, seededDir)
	}
	out := map[string]*Recording{}
	for _, f := range append(seeded, recorded...) { // a recorded story replaces its seed
		r, err := readRecording(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = r
	}
	return out
}

// golden compares got with the file testdata/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("screen differs from %s (go test -update rewrites it):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestScreens draws every recorded story, each canary phase and each result of the analysis
// among them, a header route at a step of weight 0 and a rollback within the rollback window,
// against its golden screen, at 80 columns and without colour.
func TestScreens(t *testing.T) {
	want := []string{"progressing", "paused", "promoting", "promoted", "aborted", "rolledback", "analysis-passed", "analysis-failed", "analysis-inconclusive", "testers", "rollback-window"}
	recs := recordings(t)
	for _, name := range want {
		if recs[name] == nil {
			t.Errorf("no story %s in %s or %s", name, recordedDir, seededDir)
		}
	}
	for name, rec := range recs {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Render(&b, &rec.Story, Options{}); err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(b.String(), "\n") {
				if n := utf8.RuneCountInString(line); n > DefaultWidth {
					t.Errorf("line %d is %d columns wide; want at most %d:\n%s", i+1, n, DefaultWidth, line)
				}
			}
			if strings.Contains(b.String(), "\x1b[") {
				t.Error("colour without Options.Color")
			}
			golden(t, name+".txt", b.Bytes())
		})
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestColor: with colour, the screen is the same text with ANSI colours added, columns aligned.
func TestColor(t *testing.T) {
	for name, rec := range recordings(t) {
		t.Run(name, func(t *testing.T) {
			var plain, color bytes.Buffer
			Render(&plain, &rec.Story, Options{})
			Render(&color, &rec.Story, Options{Color: true})
			if !strings.Contains(color.String(), "\x1b[") {
				t.Error("no colour with Options.Color")
			}
			if got := ansi.ReplaceAllString(color.String(), ""); got != plain.String() {
				t.Errorf("coloured screen without its colours differs from the plain one:\n%s\nwant:\n%s", got, plain.String())
			}
		})
	}
}

// TestList draws the table of list over every recorded WebApp, in one namespace and in all.
func TestList(t *testing.T) {
	var apps []webappv1.WebApp
	var now time.Time
	for name, rec := range recordings(t) {
		wa := rec.WebApp
		wa.Name = name // one row per story
		apps = append(apps, wa)
		if rec.Now.After(now) {
			now = rec.Now
		}
	}
	for _, all := range []bool{false, true} {
		var b bytes.Buffer
		if err := List(&b, apps, now, all, Options{}); err != nil {
			t.Fatal(err)
		}
		name := "list.txt"
		if all {
			name = "list-all-namespaces.txt"
		}
		golden(t, name, b.Bytes())
	}
}

// TestPauseLeft: the current step's pause counts down from pauseStartTime with the time of the
// screen, and says when it is over and what the step then waits for.
func TestPauseLeft(t *testing.T) {
	start := mustTime("2026-11-29T10:02:15Z")
	pause := int32(120)
	for _, tc := range []struct {
		name     string
		now      string
		analysis *webappv1.AnalysisStatus
		analyzed bool
		want     string
	}{
		{name: "at the start", now: "2026-11-29T10:02:15Z", want: "held, 2m0s left"},
		{name: "45 s in", now: "2026-11-29T10:03:00Z", want: "held, 1m15s left"},
		{name: "over", now: "2026-11-29T10:04:15Z", want: "pause over"},
		{name: "over, no passing check yet", now: "2026-11-29T10:04:20Z", analyzed: true, want: "pause over; waits for a passing check"},
		{name: "over, a check passed after the pause started", now: "2026-11-29T10:04:20Z", analyzed: true,
			analysis: &webappv1.AnalysisStatus{CheckTime: metav1.NewTime(mustTime("2026-11-29T10:04:00Z")), Step: 1, Result: webappv1.CheckPassed}, want: "pause over"},
		{name: "over, a check passed before the pause started", now: "2026-11-29T10:04:20Z", analyzed: true,
			analysis: &webappv1.AnalysisStatus{CheckTime: metav1.NewTime(mustTime("2026-11-29T10:02:00Z")), Step: 1, Result: webappv1.CheckPassed}, want: "pause over; waits for a passing check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := &webappv1.Canary{Steps: []webappv1.CanaryStep{{Weight: 5}, {Weight: 25, PauseSeconds: &pause}}}
			if tc.analyzed {
				plan.Analysis = &webappv1.CanaryAnalysis{}
			}
			s := &Story{Now: mustTime(tc.now), WebApp: webappv1.WebApp{Spec: webappv1.WebAppSpec{Rollout: &webappv1.Rollout{Canary: plan}}}}
			v := &view{Story: s}
			cs := &webappv1.CanaryStatus{Phase: webappv1.CanaryProgressing, Step: 1, PauseStartTime: &metav1.Time{Time: start}, Analysis: tc.analysis}
			if got := v.stepState(cs, 1, 1); got != tc.want {
				t.Errorf("stepState = %q; want %q", got, tc.want)
			}
		})
	}
}

// TestAttemptAndIgnored: a canary of an attempt other than 0 says which, and each annotation the
// hook ignores has a line of its own, why included, within the width.
func TestAttemptAndIgnored(t *testing.T) {
	rec := recordings(t)["paused"]
	cs := rec.Story.WebApp.Status.Canary
	cs.Attempt = 1
	cs.IgnoredAnnotations = []string{
		"webapp.example.com/promote=" + cs.Revision + ": names attempt 0 of revision " + cs.Revision + ", which is over: the canary is attempt 1 (" + cs.Revision + "@1)",
		"webapp.example.com/promote-step=" + cs.Revision + ": must be <revision>[@<attempt>]/<step>",
	}
	var b bytes.Buffer
	if err := Render(&b, &rec.Story, Options{}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"Canary " + cs.Revision + " (attempt 1): Paused at step ",
		"  Ignored   webapp.example.com/promote=" + cs.Revision + ": names attempt 0 of revision\n",
		"  Ignored   webapp.example.com/promote-step=" + cs.Revision + ": must be\n            <revision>[@<attempt>]/<step>\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("screen:\n%s\nwant it to hold %q", got, want)
		}
	}
	for i, line := range strings.Split(got, "\n") {
		if n := utf8.RuneCountInString(line); n > DefaultWidth {
			t.Errorf("line %d is %d columns wide; want at most %d:\n%s", i+1, n, DefaultWidth, line)
		}
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		text  string
		width int
		want  []string
	}{
		{"", 30, []string{""}},
		{"one two three", 30, []string{"one two three"}},
		{"aaaa bbbb cccc dddd eeee ffff gggg", 20, []string{"aaaa bbbb cccc dddd", "eeee ffff gggg"}},
		{"a " + strings.Repeat("x", 25) + " b", 20, []string{"a", strings.Repeat("x", 25), "b"}},
	} {
		if got := wrap(tc.text, tc.width); strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrap(%q, %d) = %q; want %q", tc.text, tc.width, got, tc.want)
		}
	}
}

// TestEvents draws the aborted story with the Events the notifier records on it, more than
// MaxEvents, in no order: the latest MaxEvents, oldest first, each message under the table unless
// the screen shows it already (golden events.txt); and a story whose Events could not be read.
func TestEvents(t *testing.T) {
	rec := recordings(t)["aborted"]
	s := rec.Story
	at := func(sec int) metav1.Time { return metav1.NewTime(s.Now.Add(time.Duration(-sec) * time.Second)) }
	ev := func(reason, typ, msg string, sec int) corev1.Event {
		return corev1.Event{Reason: reason, Type: typ, Message: msg, LastTimestamp: at(sec)}
	}
	s.Events = []corev1.Event{
		ev("CanaryAborted", corev1.EventTypeWarning, s.WebApp.Status.Canary.Message, 10),
		ev("CanaryStarted", corev1.EventTypeNormal, "Canary of revision 4257d9134c started.", 20),
		ev("CanaryPromoted", corev1.EventTypeNormal, "Revision e7ba8439b9 was promoted: the stable Deployment runs it.", 40),
		ev("CanaryStepDone", corev1.EventTypeNormal, "Step 2 of 2 (50% of the traffic) done.", 45),
		ev("CanaryStepDone", corev1.EventTypeNormal, "Step 1 of 2 (25% of the traffic) done.", 50),
		ev("CanaryWaiting", corev1.EventTypeNormal, "Step 1 of 2: 25% of the traffic on the canary, paused until it is promoted.", 60),
		ev("CanaryStarted", corev1.EventTypeNormal, "Canary of revision e7ba8439b9 started.", 61),
	}
	var b bytes.Buffer
	if err := Render(&b, &s, Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "events.txt", b.Bytes())

	s.Events, s.Unread = nil, map[string]string{"events": `events is forbidden: User "dev" cannot list resource "events"`}
	b.Reset()
	if err := Render(&b, &s, Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "Events: cannot be read\n  events is forbidden") {
		t.Errorf("no word of the unread Events:\n%s", b.String())
	}
}

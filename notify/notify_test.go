package notify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// story reads the WebApp of a story the e2e suite recorded for the plugin's golden screens
// (plugin/testdata/recorded), or of a seed (plugin/testdata/seeded) when dir says so.
func story(t *testing.T, dir, name string) *webappv1.WebApp {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "plugin", "testdata", dir, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		WebApp *webappv1.WebApp `json:"webApp"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s.WebApp
}

func recorded(t *testing.T, name string) *webappv1.WebApp { return story(t, "recorded", name) }

// brief is a transition as the tests compare it: kind and the key's part after the uid.
func brief(ts []Transition) []string {
	out := []string{}
	for _, t := range ts {
		_, what, _ := strings.Cut(t.Key, "/")
		out = append(out, string(t.Kind)+" "+what)
	}
	return out
}

// TestFacts reads each recorded story's facts: the transitions its status shows.
func TestFacts(t *testing.T) {
	for _, tc := range []struct {
		story string
		want  []string
	}{
		{"paused", []string{"CanaryStarted e7ba8439b9@0/started", "CanaryWaiting e7ba8439b9@0/step-0/waiting"}},
		{"progressing", []string{"CanaryStarted e7ba8439b9@0/started", "CanaryStepDone e7ba8439b9@0/step-0/done"}},
		{"promoting", []string{"CanaryStarted e7ba8439b9@0/started", "CanaryStepDone e7ba8439b9@0/step-0/done", "CanaryStepDone e7ba8439b9@0/step-1/done"}},
		{"promoted", []string{"CanaryStarted e7ba8439b9@0/started", "CanaryStepDone e7ba8439b9@0/step-0/done", "CanaryStepDone e7ba8439b9@0/step-1/done",
			"CanaryPromoted e7ba8439b9@0/promoted", "ReadyAgain ready@2026-12-02T13:57:58Z"}},
		{"aborted", []string{"CanaryStarted 4257d9134c@0/started", "CanaryAborted 4257d9134c@0/aborted"}},
		{"rolledback", []string{"CanaryStarted 4257d9134c@0/started", "CanaryRolledBack 4257d9134c@0/rolledback", "ReadyAgain ready@2026-12-02T13:58:18Z"}},
		{"analysis-passed", []string{"CanaryStarted 0a65316288@0/started"}},
		{"analysis-inconclusive", []string{"CanaryStarted 0a65316288@0/started"}},
		{"analysis-failed", []string{"CanaryStarted 8f791e2c4a@0/started", "CanaryCheckFailed 8f791e2c4a@0/failed-1", "CanaryAborted 8f791e2c4a@0/aborted"}},
	} {
		t.Run(tc.story, func(t *testing.T) {
			if got := brief(Facts(recorded(t, tc.story))); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestFactMessages checks what each kind says, on the recorded stories: the status's own
// sentence, and a failed check's metric, value and range.
func TestFactMessages(t *testing.T) {
	for _, tc := range []struct {
		story string
		kind  Kind
		want  Transition
	}{
		{"analysis-failed", CanaryCheckFailed, Transition{Kind: CanaryCheckFailed, Revision: "8f791e2c4a", Steps: 2,
			Message: "analysis: request-success-rate 0, outside >= 99", Metric: "request-success-rate", Value: "0", Threshold: ">= 99"}},
		{"aborted", CanaryAborted, Transition{Kind: CanaryAborted, Revision: "4257d9134c", Steps: 2,
			Message: "Revision 4257d9134c was aborted by the webapp.example.com/abort annotation. The stable Deployment was not touched; a new pod template starts a new canary."}},
		{"paused", CanaryWaiting, Transition{Kind: CanaryWaiting, Revision: "e7ba8439b9", Steps: 2,
			Message: "Step 1 of 2: 25% of the traffic on the canary, paused until it is promoted (annotate the WebApp with webapp.example.com/promote=e7ba8439b9)."}},
		{"progressing", CanaryStepDone, Transition{Kind: CanaryStepDone, Revision: "e7ba8439b9", Steps: 2,
			Message: "Step 1 of 2 (25% of the traffic) done."}},
		{"promoted", ReadyAgain, Transition{Kind: ReadyAgain, Reason: "RolloutComplete",
			Message: "All 2 replicas available and up to date."}},
	} {
		t.Run(tc.story+"/"+string(tc.kind), func(t *testing.T) {
			for _, got := range Facts(recorded(t, tc.story)) {
				if got.Kind != tc.kind {
					continue
				}
				got.Key = ""
				if !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got  %+v\nwant %+v", got, tc.want)
				}
				return
			}
			t.Errorf("no %s", tc.kind)
		})
	}
}

// TestLife follows the WebApp TestPlugin recorded (plugin-840bba/shop) through its stories in
// order, as a notifier that sees each would: each transition is told once, in order, and seeing
// a story again (a resync, a restart with the Record kept, another replica) tells nothing.
func TestLife(t *testing.T) {
	steps := []struct {
		story string
		want  []string
	}{
		{"paused", []string{"CanaryStarted e7ba8439b9@0/started", "CanaryWaiting e7ba8439b9@0/step-0/waiting"}},
		{"progressing", []string{"CanaryStepDone e7ba8439b9@0/step-0/done"}},
		{"promoting", []string{"CanaryStepDone e7ba8439b9@0/step-1/done"}},
		{"promoted", []string{"CanaryPromoted e7ba8439b9@0/promoted"}}, // Ready, but not again: nothing was Degraded
		{"aborted", []string{"CanaryStarted 4257d9134c@0/started", "CanaryAborted 4257d9134c@0/aborted"}},
		{"rolledback", []string{"CanaryRolledBack 4257d9134c@0/rolledback", "ReadyAgain ready@2026-12-02T13:58:18Z"}},
	}
	var rec Record
	for _, s := range steps {
		w := recorded(t, s.story)
		got, next := Next(rec, w)
		if b := brief(got); !reflect.DeepEqual(b, s.want) {
			t.Errorf("%s: got  %q\nwant %q", s.story, b, s.want)
		}
		if again, same := Next(next, w); len(again) != 0 || !reflect.DeepEqual(same, next) {
			t.Errorf("%s seen again: told %q, record %+v, want nothing and %+v", s.story, brief(again), same, next)
		}
		rec = roundTrip(t, next)
	}
	uid := string(recorded(t, "rolledback").UID)
	if want := (Record{Told: []string{uid + "/4257d9134c@0/started", uid + "/4257d9134c@0/rolledback", uid + "/ready@2026-12-02T13:58:18Z"}}); !reflect.DeepEqual(rec, want) {
		t.Errorf("last record %+v, want %+v", rec, want)
	}
}

// roundTrip returns r as the notifier keeps it: through JSON.
func roundTrip(t *testing.T, r Record) Record {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out Record
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestNext covers what Next tells from a Record: first sight, transitions missed in between,
// Degraded and Ready again, held analysis, a built-in metric's abort, a new attempt.
func TestNext(t *testing.T) {
	degraded := story(t, "seeded", "image-pull-backoff")
	healed := recovered(degraded)
	held := recorded(t, "analysis-inconclusive")
	held.Status.Canary.Analysis.Result = webappv1.CheckHeld
	decisive := recorded(t, "analysis-failed")
	decisive.Status.Canary.FailedChecks, decisive.Status.Canary.LastFailedCheckTime, decisive.Status.Canary.LastFailedCheck = 0, nil, ""
	retried := recorded(t, "progressing")
	retried.Status.Canary.Attempt = 1
	paused := recorded(t, "paused")
	for _, tc := range []struct {
		name string
		rec  Record
		w    *webappv1.WebApp
		want []string
	}{
		{"nothing", Record{}, nil, nil},
		{"first sight of an ended canary: the past, recorded and not told", Record{}, recorded(t, "promoted"), []string{}},
		{"first sight of an aborted canary: told, it wants someone", Record{}, recorded(t, "aborted"),
			[]string{"CanaryStarted 4257d9134c@0/started", "CanaryAborted 4257d9134c@0/aborted"}},
		{"transitions missed in between are told in order", after(t, paused), recorded(t, "promoted"),
			[]string{"CanaryStepDone e7ba8439b9@0/step-0/done", "CanaryStepDone e7ba8439b9@0/step-1/done", "CanaryPromoted e7ba8439b9@0/promoted"}},
		{"Degraded, with its reason", Record{}, degraded, []string{"Degraded degraded/ImagePullBackOff@" + readyTime(degraded)}},
		{"Ready again after a Degraded", after(t, degraded), healed, []string{"ReadyAgain ready@2026-12-02T15:00:00Z"}},
		{"Ready without a Degraded before: not again", Record{}, healed, []string{}},
		{"the analysis held", Record{}, held, []string{"CanaryStarted 0a65316288@0/started", "CanaryAnalysisHeld 0a65316288@0/held@2026-12-02T14:26:45Z"}},
		{"a built-in metric's failure, not counted, aborts at once", after(t, recorded(t, "analysis-passed")), decisive,
			[]string{"CanaryStarted 8f791e2c4a@0/started", "CanaryCheckFailed 8f791e2c4a@0/check@2026-12-02T14:25:40Z", "CanaryAborted 8f791e2c4a@0/aborted"}},
		{"a new attempt of the same revision starts again", after(t, recorded(t, "progressing")), retried,
			[]string{"CanaryStarted e7ba8439b9@1/started", "CanaryStepDone e7ba8439b9@1/step-0/done"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := Next(tc.rec, tc.w)
			if tc.want == nil {
				if got != nil {
					t.Errorf("got %q, want none", brief(got))
				}
				return
			}
			if b := brief(got); !reflect.DeepEqual(b, tc.want) {
				t.Errorf("got  %q\nwant %q", b, tc.want)
			}
		})
	}
}

// TestNextLeavesInputs checks that Next changes neither its Record nor its WebApp.
func TestNextLeavesInputs(t *testing.T) {
	w := recorded(t, "aborted")
	rec := Record{Told: []string{"x"}}
	before, _ := json.Marshal(w)
	Next(rec, w)
	if after, _ := json.Marshal(w); string(before) != string(after) {
		t.Error("the WebApp changed")
	}
	if !reflect.DeepEqual(rec, Record{Told: []string{"x"}}) {
		t.Errorf("the Record changed: %+v", rec)
	}
}

// TestWarning pins which kinds are Warning Events.
func TestWarning(t *testing.T) {
	var got []Kind
	for _, k := range Kinds {
		if k.Warning() {
			got = append(got, k)
		}
	}
	if want := []Kind{CanaryCheckFailed, CanaryAnalysisHeld, CanaryAborted, Degraded}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// after is the Record of a notifier that has told everything w shows.
func after(t *testing.T, w *webappv1.WebApp) Record {
	t.Helper()
	var rec Record
	for _, f := range Facts(w) {
		rec.Told = append(rec.Told, f.Key)
		if f.Kind == Degraded || f.Kind == CanaryAborted {
			rec.Degraded = f.Key
		}
	}
	return rec
}

// recovered is w Ready again, at 15:00.
func recovered(w *webappv1.WebApp) *webappv1.WebApp {
	var c webappv1.WebApp
	b, _ := json.Marshal(w)
	_ = json.Unmarshal(b, &c)
	w = &c
	w.Status.Phase = webappv1.PhaseReady
	for i := range w.Status.Conditions {
		if c := &w.Status.Conditions[i]; c.Type == webappv1.ConditionReady {
			c.Status, c.Reason, c.Message = metav1.ConditionTrue, "RolloutComplete", "All 2 replicas available and up to date."
			c.LastTransitionTime = metav1.NewTime(time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC))
		}
	}
	return w
}

func readyTime(w *webappv1.WebApp) string { return stamp(readyCondition(w).LastTransitionTime) }

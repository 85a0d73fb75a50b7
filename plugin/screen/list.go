package screen

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// List writes the table of kubectl webapp list: each WebApp, by namespace and name, with its
// ready pods, its phase, and its canary's phase, step and weight and the result of its latest
// check; "-" where there is none. allNamespaces adds the NAMESPACE column. now counts the ages.
func List(w io.Writer, apps []webappv1.WebApp, now time.Time, allNamespaces bool, o Options) error {
	apps = slices.Clone(apps)
	slices.SortFunc(apps, func(a, b webappv1.WebApp) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	head := []cell{c("NAME"), c("READY"), c("PHASE"), c("CANARY"), c("STEP"), c("WEIGHT"), c("ANALYSIS"), c("AGE")}
	if allNamespaces {
		head = append([]cell{c("NAMESPACE")}, head...)
	}
	rows := [][]cell{head}
	for i := range apps {
		a := &apps[i]
		st := &a.Status
		run, step, weight, analysis := ct("-", plain), "-", "-", ct("-", plain)
		if cs := st.Canary; cs != nil {
			run = ct(string(cs.Phase), canaryTone(cs.Phase))
			if plan := a.Spec.Rollout.Plan(); plan != nil && len(plan.Steps) > 0 && cs.Phase != webappv1.CanaryPromoted && !canary.RolledBackWithinWindow(cs) {
				step = fmt.Sprintf("%d/%d", canary.StepIndex(plan, cs)+1, len(plan.Steps))
			}
			if cs.Weight != nil {
				weight = fmt.Sprintf("%d%%", *cs.Weight)
			}
			if x := cs.Analysis; x != nil {
				analysis = ct(string(x.Result), resultTone(x.Result))
			}
		}
		phase := ct(orDash(string(st.Phase)), phaseTone(st.Phase))
		if a.Generation > st.ObservedGeneration && st.Phase != "" {
			phase.text += "*"
		}
		r := []cell{c(a.Name), c(orDash(st.ReadyOfDesired)), phase, run, c(step), c(weight), analysis, c(age(now, a.CreationTimestamp.Time))}
		if allNamespaces {
			r = append([]cell{c(a.Namespace)}, r...)
		}
		rows = append(rows, r)
	}
	o.table(w, "", rows)
	return nil
}

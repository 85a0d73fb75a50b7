package canary

import (
	"fmt"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/api/v1/validation"
)

// This file reads the canary annotations of the WebApp (webappv1.CanaryAnnotations): which attempt
// each names, the number of a new attempt, and those that cannot act on the canary.

// annotation is one canary annotation of the WebApp, as Input holds it.
type annotation struct{ key, value string }

// annotations are the canary annotations of the WebApp that are set, in the order of
// webappv1.CanaryAnnotations.
func (s *state) annotations() []annotation {
	var out []annotation
	for _, a := range []annotation{
		{webappv1.AnnotationPromote, s.in.Promote},
		{webappv1.AnnotationPromoteStep, s.in.PromoteStep},
		{webappv1.AnnotationAbort, s.in.Abort},
		{webappv1.AnnotationRetry, s.in.Retry},
	} {
		if a.value != "" {
			out = append(out, a)
		}
	}
	return out
}

// namesAttempt reads v, the value of the annotation key, and reports whether it names the
// spec's revision at the canary's attempt: the only attempt it may act on.
func (s *state) namesAttempt(key, v string) (webappv1.CanaryTarget, bool) {
	if v == "" {
		return webappv1.CanaryTarget{}, false
	}
	t, err := webappv1.ParseCanaryAnnotation(key, v)
	return t, err == nil && s.names(t.Revision) && t.Revision == s.next.Revision && t.Attempt == s.next.Attempt
}

// nextAttempt is the number of a new attempt of the spec's revision, a start or a retry: one more
// than the highest attempt of the revision that an annotation of the WebApp names, or that the
// canary Deployment records aborted or being promoted; 0 when none does. An annotation written
// before an attempt started is never for it, and the Deployment's record of an abort or a
// promotion is of an earlier attempt. When the canary Deployment runs the revision without such
// a record, the attempt is at least the one it runs: the status is older than the start that
// made it, and the same start comes to the same attempt. It never passes
// webappv1.MaxAnnotationNumber.
func (s *state) nextAttempt() int32 {
	highest, running := int32(-1), int32(0)
	for _, a := range s.annotations() {
		if t, err := webappv1.ParseCanaryAnnotation(a.key, a.value); err == nil && s.names(t.Revision) {
			highest = max(highest, t.Attempt)
		}
	}
	if c := s.in.Canary; c != nil {
		switch {
		case s.names(c.Aborted) || s.names(c.Promoting):
			highest = max(highest, c.Attempt)
		case s.names(c.Revision):
			running = c.Attempt
		}
	}
	return min(max(highest+1, running), webappv1.MaxAnnotationNumber)
}

// ignored are the canary annotations that cannot act on the canary, each
// "<annotation>=<value>: <why>" (status.canary.ignoredAnnotations): a function of the
// annotations and the canary's revision, attempt, step and phase alone, so that it changes only
// when they do.
func (s *state) ignored() []string {
	var out []string
	for _, a := range s.annotations() {
		if why := s.whyIgnored(a); why != "" {
			out = append(out, a.key+"="+validation.Short(a.value)+": "+why)
		}
	}
	return out
}

// whyIgnored says why the annotation a cannot act on the canary, "" when it names its attempt
// (it may have acted already, or act later).
func (s *state) whyIgnored(a annotation) string {
	st := &s.next
	t, err := webappv1.ParseCanaryAnnotation(a.key, a.value)
	switch {
	case err != nil:
		return err.Error()
	case t.Revision != st.Revision && RolledBackWithinWindow(st):
		return fmt.Sprintf("names revision %s, and no canary runs: the stable Deployment went back to revision %s within the rollback window", t.Revision, st.Revision)
	case t.Revision != st.Revision:
		return fmt.Sprintf("names revision %s, not the canary's, %s", t.Revision, st.Revision)
	case t.Attempt < st.Attempt:
		return fmt.Sprintf("names attempt %d of revision %s, which is over: the canary is attempt %d (%s)", t.Attempt, t.Revision, st.Attempt, webappv1.AttemptValue(st.Revision, st.Attempt))
	case t.Attempt > st.Attempt:
		return fmt.Sprintf("names attempt %d of revision %s, which has not started: the canary is attempt %d (%s)", t.Attempt, t.Revision, st.Attempt, webappv1.AttemptValue(st.Revision, st.Attempt))
	case a.key == webappv1.AnnotationPromoteStep && t.Step > st.Step:
		return fmt.Sprintf("names step %d (from 0), which the canary has not reached: it is at step %d", t.Step, st.Step)
	case a.key == webappv1.AnnotationRetry && st.Phase == webappv1.CanaryAborted && s.nextAttempt() <= t.Attempt:
		return fmt.Sprintf("revision %s has had %d attempts, the most there may be: a new pod template starts a new canary", t.Revision, webappv1.MaxAnnotationNumber)
	}
	return ""
}

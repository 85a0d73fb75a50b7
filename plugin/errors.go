package plugin

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The exit codes of kubectl webapp, which a script can rely on.
const (
	// ExitOK: the command did what it said.
	ExitOK = 0
	// ExitError: it failed: the API server could not be reached, the WebApp does not exist, or
	// something else went wrong.
	ExitError = 1
	// ExitUsage: the command line was wrong.
	ExitUsage = 2
	// ExitRefused: there was nothing to act on (no canary, a phase that does not allow it, a
	// request already made, a status the hook has not brought up to the latest spec), or the
	// WebApp changed since it was read so that the command would act otherwise: nothing was
	// changed.
	ExitRefused = 3
	// ExitForbidden: the API server refused the user (RBAC, or the admission policy).
	ExitForbidden = 4
)

// refusal is a command's refusal to act: there is nothing to act on.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

// refuse returns a refusal with a message.
func refuse(format string, args ...any) error { return &refusal{fmt.Sprintf(format, args...)} }

// usageError is a wrong command line.
type usageError struct{ err error }

func (u *usageError) Error() string { return u.err.Error() }
func (u *usageError) Unwrap() error { return u.err }

// apiError is a call to the API server that failed: verb on resource (a plural, "webapps") in
// namespace ("" for all), for the object name ("" for a list or a watch).
type apiError struct {
	verb, resource, namespace, name string
	err                             error
}

func (e *apiError) Unwrap() error { return e.err }

func (e *apiError) Error() string {
	where := "in namespace " + e.namespace
	if e.namespace == "" {
		where = "in all namespaces"
	}
	switch {
	case apierrors.IsForbidden(e.err):
		return fmt.Sprintf("you may not %s %s %s: %v", e.verb, e.resource, where, e.err)
	case apierrors.IsNotFound(e.err) && e.name != "":
		return fmt.Sprintf("%s %s not found %s", singular(e.resource), e.name, where)
	case apierrors.IsConflict(e.err):
		return fmt.Sprintf("%s %s %s changed while this command read it; run it again to act on what it is now: %v", singular(e.resource), e.name, where, e.err)
	}
	if e.name != "" {
		return fmt.Sprintf("%s %s %s %s: %v", e.verb, singular(e.resource), e.name, where, e.err)
	}
	return fmt.Sprintf("%s %s %s: %v", e.verb, e.resource, where, e.err)
}

// singular is a resource's singular: "webapp" for "webapps".
func singular(resource string) string {
	if n := len(resource); n > 1 && resource[n-1] == 's' {
		return resource[:n-1]
	}
	return resource
}

// forbidden reports whether err is the API server's refusal of the user.
func forbidden(err error) bool {
	var a *apiError
	return errors.As(err, &a) && apierrors.IsForbidden(a.err)
}

// conflict reports whether err is the API server's 409: the object changed since it was read.
func conflict(err error) bool {
	var a *apiError
	return errors.As(err, &a) && apierrors.IsConflict(a.err)
}

// ExitCode is the exit code for what a command returned: the one place errors become codes.
func ExitCode(err error) int {
	var r *refusal
	var u *usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &r):
		return ExitRefused
	case errors.As(err, &u):
		return ExitUsage
	case forbidden(err):
		return ExitForbidden
	}
	return ExitError
}

package validation

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// fieldErr is what a test expects of one field.Error: its type and its field path and, when
// they are set, words its detail must hold and its exact bad value.
type fieldErr struct {
	typ    field.ErrorType
	field  string
	detail string // words the error's detail holds; "" checks nothing
	value  any    // the error's BadValue; nil checks nothing
}

func (e fieldErr) String() string { return fmt.Sprintf("%s %s", e.typ, e.field) }

// with returns e expecting words in the detail.
func (e fieldErr) with(detail string) fieldErr { e.detail = detail; return e }

// of returns e expecting the bad value v.
func (e fieldErr) of(v any) fieldErr { e.value = v; return e }

func required(f string) fieldErr     { return fieldErr{typ: field.ErrorTypeRequired, field: f} }
func invalid(f string) fieldErr      { return fieldErr{typ: field.ErrorTypeInvalid, field: f} }
func forbidden(f string) fieldErr    { return fieldErr{typ: field.ErrorTypeForbidden, field: f} }
func duplicate(f string) fieldErr    { return fieldErr{typ: field.ErrorTypeDuplicate, field: f} }
func tooMany(f string) fieldErr      { return fieldErr{typ: field.ErrorTypeTooMany, field: f} }
func tooLong(f string) fieldErr      { return fieldErr{typ: field.ErrorTypeTooLong, field: f} }
func notSupported(f string) fieldErr { return fieldErr{typ: field.ErrorTypeNotSupported, field: f} }

// checkErrs compares errs with want, in order: each error's type and field path, and its detail
// and bad value where want names them. The validation functions promise a stable order, which
// the WebApp's status message depends on, so the order is part of what is checked.
func checkErrs(t *testing.T, errs field.ErrorList, want ...fieldErr) {
	t.Helper()
	got := make([]string, len(errs))
	for i, e := range errs {
		got[i] = fieldErr{typ: e.Type, field: e.Field}.String()
	}
	wantS := make([]string, len(want))
	for i, w := range want {
		wantS[i] = w.String()
	}
	if !reflect.DeepEqual(got, wantS) {
		t.Fatalf("errors = %q; want %q\n%v", got, wantS, errs)
	}
	for i, w := range want {
		if w.detail != "" && !strings.Contains(errs[i].Detail, w.detail) {
			t.Errorf("%s: detail %q; want it to hold %q", w, errs[i].Detail, w.detail)
		}
		if w.value != nil && !reflect.DeepEqual(errs[i].BadValue, w.value) {
			t.Errorf("%s: bad value %#v; want %#v", w, errs[i].BadValue, w.value)
		}
	}
}

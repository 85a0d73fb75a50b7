package wire

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/example/webapp-operator/api/v1/validation"
)

// RequestError reports a hook request that cannot be understood at all: not JSON, no parent, a
// wrong type outside parent.spec, or a child without an identity. It is answered with 400 and
// nothing is applied.
type RequestError struct {
	// Field is the JSON path of the offending field, empty for the whole body.
	Field string
	// Problem says what is wrong with it.
	Problem string
}

// Error returns "field: problem", or the problem alone when the whole body is at fault.
func (e *RequestError) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + ": " + e.Problem
}

// requestError turns an error from decoding in into a *RequestError: the *RequestError of a
// wire type's own decoder as it is, else a json/v2 error as jsonProblem describes it.
func requestError(err error, at string, in []byte) *RequestError {
	if re, ok := errors.AsType[*RequestError](err); ok {
		return re
	}
	field, problem := jsonProblem(err, at, in)
	return &RequestError{Field: field, Problem: problem}
}

// jsonProblem describes a json/v2 error from decoding in: the JSON path of the problem below at,
// the path of in ("" for the whole body), and what it is, quoting the value at fault short.
func jsonProblem(err error, at string, in []byte) (field, problem string) {
	var syntaxErr *jsontext.SyntacticError
	var semanticErr *jsonv2.SemanticError
	switch {
	case errors.As(err, &syntaxErr):
		return memberPath(at, fieldPath(syntaxErr.JSONPointer)), fmt.Sprintf("invalid JSON at byte %d: %v", syntaxErr.ByteOffset, syntaxErr.Err)
	case errors.As(err, &semanticErr):
		got := semanticErr.JSONValue
		if len(got) == 0 {
			got = valueAt(in, semanticErr.ByteOffset, semanticErr.JSONKind)
		}
		problem := fmt.Sprintf("expected %s, got %s", goTypeName(semanticErr.GoType), jsonValue(semanticErr.JSONKind, got))
		if e := semanticErr.Err; e != nil && !isNumberSyntax(e) {
			problem += ": " + e.Error()
		}
		return memberPath(at, fieldPath(semanticErr.JSONPointer)), problem
	}
	return at, "invalid JSON: " + err.Error()
}

// maxQuotedBytes bounds the bytes of a request valueAt reads: validation.MaxQuoted characters of at most
// four bytes each, and the quotes around them.
const maxQuotedBytes = 4*validation.MaxQuoted + 2

// valueAt returns the JSON number or string of kind k that starts at byte off of in, for an error
// message to quote (jsonValue), or nil: for any other kind, which no message quotes, and when no
// such value starts there (an offset of an inner decode, relative to another text). It reads at
// most maxQuotedBytes of in and decodes nothing, so that an error about a large body costs no
// more than the body did: a string longer than that is returned cut, without its closing quote,
// which quoteRaw marks with "…".
func valueAt(in []byte, off int64, k jsontext.Kind) jsontext.Value {
	if off < 0 || off >= int64(len(in)) {
		return nil
	}
	window := in[off:min(int64(len(in)), off+maxQuotedBytes)]
	switch k {
	case '0':
		if c := window[0]; c != '-' && (c < '0' || c > '9') {
			return nil
		}
		n := 1
		for n < len(window) && strings.IndexByte("+-.0123456789eE", window[n]) >= 0 {
			n++
		}
		return window[:n]
	case '"':
		if window[0] != '"' {
			return nil
		}
		for i := 1; i < len(window); i++ {
			switch window[i] {
			case '\\':
				i++
			case '"':
				return window[:i+1]
			}
		}
		for range utf8.UTFMax - 1 { // never cut a character in two
			if r, size := utf8.DecodeLastRune(window); len(window) < 2 || r != utf8.RuneError || size > 1 {
				break
			}
			window = window[:len(window)-1]
		}
		return window
	}
	return nil
}

// isNumberSyntax reports json/v2's error for a number that is not an integer, which the
// "expected integer, got JSON number 1.5" message already says.
func isNumberSyntax(err error) bool { return err.Error() == "invalid syntax" }

// maxPathDepth is how many levels of a JSON path an error message shows.
const maxPathDepth = 16

// fieldPath renders a JSON pointer as a path a person reads: /parent/metadata/name is
// parent.metadata.name, /children/Service.v1/web is children["Service.v1"].web, and list
// indexes are [n].
func fieldPath(p jsontext.Pointer) string {
	var b strings.Builder
	depth := 0
	for tok := range p.Tokens() {
		if depth++; depth > maxPathDepth {
			b.WriteString("…") // deeper paths only repeat; keep error messages short
			break
		}
		switch {
		case tok != "" && strings.Trim(tok, "0123456789") == "":
			b.WriteString("[" + tok + "]")
		case tok != "" && strings.Trim(tok, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
		default:
			b.WriteString("[" + strconv.Quote(tok) + "]")
		}
	}
	return b.String()
}

// memberPath joins two parts of a field path; either may be empty, and an index or quoted
// member ("[0]", `["a.b"]`) joins without a dot.
func memberPath(path, name string) string {
	switch {
	case path == "":
		return name
	case name == "":
		return path
	case name[0] == '[':
		return path + name
	}
	return path + "." + name
}

// jsonValue names what a JSON value was, for a message: its kind and, for a number or a short
// string, the value itself.
func jsonValue(k jsontext.Kind, raw []byte) string {
	got := "JSON " + kindName(k)
	if (k == '0' || k == '"') && len(raw) > 0 {
		got += " " + quoteRaw(raw)
	}
	return got
}

// kindName names a JSON kind the way a JSON author thinks of it.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	case 'n':
		return "null"
	case 't', 'f':
		return "bool"
	}
	return "value"
}

// goTypeName names the JSON a Go type expects.
func goTypeName(t reflect.Type) string {
	if t == nil {
		return "another value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[metav1.Time](), reflect.TypeFor[metav1.MicroTime]():
		return "a time"
	}
	switch t.PkgPath() + "." + t.Name() {
	case "k8s.io/apimachinery/pkg/api/resource.Quantity":
		return "a quantity"
	case "k8s.io/apimachinery/pkg/util/intstr.IntOrString":
		return "an integer or a string"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("integer (%d-bit)", t.Bits())
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	return t.Kind().String()
}

// quoteRaw renders a raw JSON value for a message with validation.Short, the one cut helper, reading at most
// maxQuotedBytes of it however large it is, and marks with "…" a string cut before its closing
// quote (valueAt) too.
func quoteRaw(raw []byte) string {
	s := validation.Short(string(raw[:min(len(raw), maxQuotedBytes)]))
	if len(raw) > 0 && raw[0] == '"' && !closedString(raw) && !strings.HasSuffix(s, "…") {
		s += "…"
	}
	return s
}

// closedString reports whether raw, a JSON string's text from its opening quote, also holds its
// closing quote: it ends in a quote that no backslash escapes.
func closedString(raw []byte) bool {
	if len(raw) < 2 || raw[len(raw)-1] != '"' {
		return false
	}
	backslashes := 0
	for i := len(raw) - 2; i > 0 && raw[i] == '\\'; i-- {
		backslashes++
	}
	return backslashes%2 == 0
}

package validation

import (
	"unicode/utf8"
)

// MaxQuoted bounds how much of a user's value a message repeats, so that a status condition
// message stays far below the CRD's 32768-character limit whatever the input.
const MaxQuoted = 80

// Short returns text for a message to quote, a user's value or a message from elsewhere (the
// kubelet, the scheduler): s itself, or its first MaxQuoted characters and "…" when it is
// longer, so that a status stays short and the same from one call to the next. It reads no more
// of s than it returns, however long s is.
func Short(s string) string { return Cut(s, MaxQuoted) }

// Cut returns s itself, or its first max characters and "…" when it is longer, reading no more
// of s than it returns.
func Cut(s string, max int) string {
	n, end := 0, 0
	for end < len(s) && n < max {
		_, size := utf8.DecodeRuneInString(s[end:])
		end += size
		n++
	}
	if end < len(s) {
		return s[:end] + "…"
	}
	return s
}

package sync

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// count renders "1 replica" or "3 replicas"; an explicit plural form may follow the singular.
func count(n int, singular string, pluralForm ...string) string {
	p := singular + "s"
	if len(pluralForm) > 0 {
		p = pluralForm[0]
	}
	return fmt.Sprintf("%d %s", n, plural(n, p, singular))
}

func plural(n int, many, one string) string {
	if n == 1 {
		return one
	}
	return many
}

// sentence ends s with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}

// maxQuoted bounds how much of a user's value a message repeats, so that a status condition
// message stays far below the CRD's 32768-character limit whatever the input.
const maxQuoted = 80

// short returns text for a message to quote, a user's value or a message from elsewhere (the
// kubelet, the scheduler): s itself, or its first maxQuoted characters and "…" when it is
// longer, so that a status stays short and the same from one call to the next. It reads no more
// of s than it returns, however long s is.
func short(s string) string { return cut(s, maxQuoted) }

// maxQuotedMessage bounds how much of a message from elsewhere that explains itself at length
// (the apiserver's refusal of a pod) the status repeats.
const maxQuotedMessage = 240

// cut returns s itself, or its first max characters and "…" when it is longer, reading no more
// of s than it returns.
func cut(s string, max int) string {
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

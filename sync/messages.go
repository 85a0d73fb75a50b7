package sync

import (
	"fmt"
	"strings"
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

// maxQuotedMessage bounds how much of a message from elsewhere that explains itself at length
// (the apiserver's refusal of a pod) the status repeats.
const maxQuotedMessage = 240

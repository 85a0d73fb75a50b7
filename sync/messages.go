package sync

import "strings"

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

package validation

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	tests := []struct {
		s    string
		max  int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},   // exactly max: as it is
		{"abcd", 3, "abc…"}, // one past: cut
		{"ab", 3, "ab"},
		{"a", 0, "…"},
		{"", 0, ""},
		{"héllo", 2, "hé…"}, // characters, not bytes
		{"日本語テキスト", 3, "日本語…"},         // multi-byte characters are never split
		{"日本語", 3, "日本語"},              // 9 bytes, 3 characters: not cut
		{"a\xffb", 2, "a\xff…"},        // a byte that is no UTF-8 counts as one character
		{"ab\n\x00cd", 4, "ab\n\x00…"}, // control characters are kept as they are
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			got := Cut(tt.s, tt.max)
			if got != tt.want {
				t.Errorf("Cut(%q, %d) = %q; want %q", tt.s, tt.max, got, tt.want)
			}
			if kept := strings.TrimSuffix(got, "…"); !strings.HasPrefix(tt.s, kept) || utf8.RuneCountInString(kept) > tt.max {
				t.Errorf("Cut(%q, %d) = %q: not a prefix of at most %d characters", tt.s, tt.max, got, tt.max)
			}
		})
	}
}

func TestShort(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want string
	}{
		{"short", "nginx", "nginx"},
		{"at the limit", strings.Repeat("x", MaxQuoted), strings.Repeat("x", MaxQuoted)},
		{"one past the limit", strings.Repeat("x", MaxQuoted+1), strings.Repeat("x", MaxQuoted) + "…"},
		{"far past the limit", strings.Repeat("é", 10*MaxQuoted), strings.Repeat("é", MaxQuoted) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Short(tt.s); got != tt.want {
				t.Errorf("Short(%d characters) = %q; want %q", utf8.RuneCountInString(tt.s), got, tt.want)
			}
		})
	}
}

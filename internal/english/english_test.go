package english

import "testing"

func TestCount(t *testing.T) {
	tests := []struct {
		n    int
		noun []string
		want string
	}{
		{0, []string{"pod"}, "0 pods"},
		{1, []string{"pod"}, "1 pod"},
		{2, []string{"pod"}, "2 pods"},
		{-1, []string{"pod"}, "-1 pods"},
		{1, []string{"child", "children"}, "1 child"},
		{3, []string{"child", "children"}, "3 children"},
	}
	for _, tt := range tests {
		if got := Count(tt.n, tt.noun[0], tt.noun[1:]...); got != tt.want {
			t.Errorf("Count(%d, %q) = %q; want %q", tt.n, tt.noun, got, tt.want)
		}
	}
	if got := Plural(int32(1), "is", "are"); got != "is" {
		t.Errorf("Plural(1) = %q; want is", got)
	}
}

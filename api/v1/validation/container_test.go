package validation

import (
	"strings"
	"testing"
)

func TestIsImageReference(t *testing.T) {
	tests := []struct {
		ref  string
		want bool
	}{
		{"nginx", true},
		{"nginx:1.27", true},
		{"library/nginx:1.27-alpine", true},
		{"registry.example.com/team/app:v1.2.3", true},
		{"localhost:5000/app", true},
		{"[::1]:5000/app:latest", true},
		{"ghcr.io/org/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true},
		{"app:v1@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", true},
		{"my_app__x-y.z", true},
		{"", false},
		{"nginx 1.27", false},
		{" nginx", false},
		{"NGINX", false},
		{"nginx:", false},
		{"nginx:-tag", false},
		{"-nginx", false},
		{"nginx//app", false},
		{"nginx@sha256:short", false},
		{"app:" + strings.Repeat("a", 129), false},
		{strings.Repeat("a", 256), false},
		{strings.Repeat("a", 255) + ":" + strings.Repeat("t", 100), true}, // the bound is on the name, not the tag
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			if got := IsImageReference(tt.ref); got != tt.want {
				t.Errorf("IsImageReference(%q) = %v; want %v", tt.ref, got, tt.want)
			}
		})
	}
}

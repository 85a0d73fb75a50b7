package wire

import (
	"testing"

	"github.com/example/webapp-operator/sync"
)

// TestViewsCoverBuiltKinds checks that views, this package's table, has a view for every kind the
// hook builds and for no other: a built kind without one would be read as a kind the hook does
// not build, and its child kept rather than rebuilt.
func TestViewsCoverBuiltKinds(t *testing.T) {
	for _, k := range sync.Kinds {
		if got := views[k] != nil; got != k.Built {
			t.Errorf("%s: has a view = %t; want %t (Built)", k.Key(), got, k.Built)
		}
	}
	if len(views) != len(builtKinds()) {
		t.Errorf("views has %d entries; want %d, one per built kind of sync.Kinds", len(views), len(builtKinds()))
	}
}

func builtKinds() (out []*sync.Kind) {
	for _, k := range sync.Kinds {
		if k.Built {
			out = append(out, k)
		}
	}
	return out
}

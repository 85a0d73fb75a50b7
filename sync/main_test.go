package sync_test

import (
	"os"
	"testing"

	"github.com/example/webapp-operator/hooktest"
)

// TestMain runs the package's tests and then fails a full run that left some file of
// testdata unread (hooktest.GoldenMain): the answers that golden compares, and TestSyncCanary's requests,
// which FuzzDecide replays too. The webhook's tests read one of those requests as well, but this
// package's own tests read them all.
func TestMain(m *testing.M) {
	os.Exit(hooktest.GoldenMain(m, hooktest.Goldens{Owned: []string{"testdata"}}))
}

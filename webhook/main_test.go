package webhook_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/example/webapp-operator/hooktest"
)

// TestMain runs the package's tests and then fails a full run that left some file of
// testdata, or some answer of ../examples, unread (hooktest.GoldenMain). The answers to Metacontroller's
// recorded requests are compared only beside ../shared/fixtures, which is not in the repository.
// sync/wire's tests and sync's benchmark read testdata/large.request.json too, but TestLargeRequest
// reads it here.
func TestMain(m *testing.M) {
	g := hooktest.Goldens{Owned: []string{"testdata", "../examples/*.response.json"}}
	if _, err := os.Stat(filepath.Join("..", "..", "shared", "fixtures")); err != nil {
		g.NotRead = map[string]string{filepath.Join("testdata", "answers", "fixtures"): "TestAnswersUnchanged compares them only beside ../shared/fixtures"}
	}
	os.Exit(hooktest.GoldenMain(m, g))
}

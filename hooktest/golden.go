package hooktest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// update is the -update flag of every test binary that imports this package.
var update = flag.Bool("update", false, "rewrite golden files instead of comparing with them")

// Golden compares got with the file at path, failing the test when they differ. With -update it
// writes got to path first (creating its folder), so the comparison passes and the change shows in
// version control. A missing file fails with a hint to run with -update.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("differs from %s (run the test with -update if the change is intended):\n%s", path, got)
	}
}

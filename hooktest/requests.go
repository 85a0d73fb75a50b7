package hooktest

import (
	"os"
	"path/filepath"
	"testing"
)

// RequestFile is one hook request body kept on disk.
type RequestFile struct {
	// File is its path, relative to the test's package directory.
	File string
	// Body is its content.
	Body []byte
}

// RequestFiles reads every request in the repository's examples/ and, when the shared folder is
// beside the checkout (../shared/fixtures), the real Metacontroller requests whose names match
// fixturePattern ("*.json": all). The repository is found from the test's directory, up to its
// go.mod. It stops the test when it finds no example, so that a test over its files cannot pass
// on nothing.
func RequestFiles(t testing.TB, fixturePattern string) []RequestFile {
	t.Helper()
	root := "."
	for i := 0; ; i++ {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			break
		}
		if i == 8 {
			t.Fatal("no go.mod above the test's directory")
		}
		root = filepath.Join(root, "..")
	}
	files, _ := filepath.Glob(filepath.Join(root, "examples", "*.request.json"))
	if len(files) == 0 {
		t.Fatalf("no %s: nothing to test", filepath.Join(root, "examples", "*.request.json"))
	}
	fixtures, _ := filepath.Glob(filepath.Join(root, "..", "shared", "fixtures", "*", "*", fixturePattern))
	var out []RequestFile
	for _, file := range append(files, fixtures...) {
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, RequestFile{file, body})
	}
	return out
}

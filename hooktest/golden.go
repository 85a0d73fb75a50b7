package hooktest

import (
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// update is the -update flag of every test binary that imports this package.
var update = flag.Bool("update", false, "rewrite golden files instead of comparing with them")

// Golden compares got with the file at path, failing the test when they differ. With -update it
// writes got to path first (creating its folder), so the comparison passes and the change shows in
// version control. A missing file fails with a hint to run with -update. It records path as read,
// for GoldenMain.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	record(path)
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

// ReadFile is os.ReadFile for a fixture a test reads as it is (a request to replay, say): it
// records path as read, for GoldenMain, and reads it.
func ReadFile(path string) ([]byte, error) {
	record(path)
	return os.ReadFile(path)
}

// read holds the files that Golden and ReadFile were given in this test binary, by absolute path.
var read = struct {
	sync.Mutex
	paths map[string]bool
}{paths: map[string]bool{}}

func record(path string) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return // no working directory: nothing can be found on disk either
	}
	read.Lock()
	defer read.Unlock()
	read.paths[abs] = true
}

// Goldens are the golden files and fixtures a package's tests own: every one of them must be read
// by a full run of the package's tests, through Golden or ReadFile, or GoldenMain fails the run
// naming those no test read. Paths are relative to the package's folder.
type Goldens struct {
	// Owned are folders whose files, at any depth, the package owns (the seed corpora of Go's
	// fuzzing, testdata/fuzz, are not golden files and are skipped), single files, or patterns
	// of filepath.Match ("../examples/*.response.json") for the files they match. Each must
	// exist or match a file, so that a misspelt entry does not check nothing.
	Owned []string
	// ReadElsewhere lists owned files that another package's tests read instead of this one's,
	// each with that package's folder (relative to this one, such as "../sync/wire"): a test
	// binary sees only its own reads. The check holds that folder's *_test.go files to name the
	// file, so that an entry goes stale loudly.
	ReadElsewhere map[string]string
	// NotRead lists owned folders or files that a full run may leave unread, each with why (its
	// inputs lie outside the repository and are absent, say).
	NotRead map[string]string
}

// GoldenMain runs a package's tests (m.Run) and then, when the run was full and passed, checks
// that they read every file g owns; it returns the exit code for os.Exit. A filtered run (-run,
// -skip, -short, -list, -fuzz) reads a part of the files by design, so it checks nothing, nor does
// a run that failed. Use it as the package's TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(hooktest.GoldenMain(m, hooktest.Goldens{Owned: []string{"testdata"}})) }
func GoldenMain(m interface{ Run() int }, g Goldens) int {
	code := m.Run()
	if code != 0 || !fullRun(flagValue) {
		return code
	}
	read.Lock()
	paths := maps.Clone(read.paths)
	read.Unlock()
	return report(os.Stderr, g, paths)
}

// flagValue returns the value of a flag of the test binary, "" when it has none of that name.
func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// fullRun reports whether the test binary, by its flags (value returns a flag's value), runs
// every test: no -run or -skip pattern, no -short, no -list, and no fuzzing (-fuzz, or a fuzzing
// worker, which runs one input at a time).
func fullRun(value func(name string) string) bool {
	for _, name := range []string{"test.run", "test.skip", "test.list", "test.fuzz"} {
		if value(name) != "" {
			return false
		}
	}
	for _, name := range []string{"test.short", "test.fuzzworker"} {
		if value(name) == "true" {
			return false
		}
	}
	return true
}

// report writes to w what Orphans finds with the files read, and returns the exit code: 0 when
// it finds nothing.
func report(w io.Writer, g Goldens, read map[string]bool) int {
	orphans, err := g.Orphans(read)
	if err != nil {
		fmt.Fprintf(w, "hooktest.GoldenMain: %v\n", err)
		return 1
	}
	if len(orphans) == 0 {
		return 0
	}
	fmt.Fprintf(w, "hooktest.GoldenMain: no test of this full run read these files of the package's golden folders:\n")
	for _, o := range orphans {
		fmt.Fprintf(w, "\t%s\n", o)
	}
	fmt.Fprintf(w, "Remove each file no test needs any more; a test reads a file through hooktest.Golden or hooktest.ReadFile,\n"+
		"and a file only another package's tests read goes in Goldens.ReadElsewhere.\n")
	return 1
}

// Orphans returns the files g owns that are not in read (absolute paths) and that no entry of
// ReadElsewhere or NotRead accounts for, relative to the working directory, sorted, each with
// why when an entry of ReadElsewhere fails its check. Its error reports entries that name
// nothing.
func (g Goldens) Orphans(read map[string]bool) ([]string, error) {
	owned, err := g.files()
	if err != nil {
		return nil, err
	}
	var orphans []string
	for _, f := range owned {
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, err
		}
		if read[abs] || g.notRead(f) {
			continue
		}
		if dir, ok := g.ReadElsewhere[f]; ok {
			if named, err := testsName(dir, filepath.Base(f)); err != nil {
				orphans = append(orphans, fmt.Sprintf("%s (ReadElsewhere: %v)", f, err))
			} else if !named {
				orphans = append(orphans, fmt.Sprintf("%s (ReadElsewhere: no *_test.go file in %s names %s)", f, dir, filepath.Base(f)))
			}
			continue
		}
		orphans = append(orphans, f)
	}
	for f := range g.ReadElsewhere {
		if !slices.Contains(owned, filepath.Clean(f)) {
			return nil, fmt.Errorf("ReadElsewhere lists %s, which is not an owned file", f)
		}
	}
	slices.Sort(orphans)
	return orphans, nil
}

// notRead reports whether an entry of NotRead is f or a folder above it.
func (g Goldens) notRead(f string) bool {
	for p := range g.NotRead {
		p = filepath.Clean(p)
		if f == p || strings.HasPrefix(f, p+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// files returns the files g owns, cleaned, sorted and each once.
func (g Goldens) files() ([]string, error) {
	var out []string
	for _, entry := range g.Owned {
		if strings.ContainsAny(entry, `*?[\`) {
			matches, err := filepath.Glob(entry)
			if err != nil || len(matches) == 0 {
				return nil, fmt.Errorf("owned pattern %s matches no file (%v)", entry, err)
			}
			for _, m := range matches {
				out = append(out, filepath.Clean(m))
			}
			continue
		}
		err := filepath.WalkDir(entry, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && d.Name() == "fuzz" && filepath.Base(filepath.Dir(path)) == "testdata":
				return filepath.SkipDir // Go's seed corpora
			case d.Type().IsRegular():
				out = append(out, filepath.Clean(path))
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("owned folder or file %s: %w", entry, err)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// testsName reports whether a *_test.go file in dir holds name.
func testsName(dir, name string) (bool, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		return false, fmt.Errorf("no *_test.go file in %s", dir)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		if strings.Contains(string(b), name) {
			return true, nil
		}
	}
	return false, nil
}

package hooktest

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// tree makes files (paths with "/", relative to a new temporary folder, each with its content)
// and moves the test into that folder.
func tree(t *testing.T, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(filepath.Join(dir, "pkg"))
}

// readSet returns the absolute paths of files, relative to the working directory.
func readSet(t *testing.T, files ...string) map[string]bool {
	t.Helper()
	set := map[string]bool{}
	for _, f := range files {
		abs, err := filepath.Abs(filepath.FromSlash(f))
		if err != nil {
			t.Fatal(err)
		}
		set[abs] = true
	}
	return set
}

func TestOrphans(t *testing.T) {
	files := map[string]string{
		"pkg/x_test.go":                       "package pkg",
		"pkg/testdata/answers/a.json":         "",
		"pkg/testdata/answers/deep/b.json":    "",
		"pkg/testdata/large.json":             "",
		"pkg/testdata/fuzz/FuzzX/0123":        "", // a seed corpus: never golden
		"pkg/testdata/sub/fuzz/c.json":        "", // fuzz elsewhere than under testdata is golden
		"examples/one.response.json":          "",
		"examples/one.request.json":           "",
		"other/y_test.go":                     `os.ReadFile("../pkg/testdata/large.json")`,
		"absent/fixtures/answers/f.json":      "",
		"pkg/testdata/answers/fixtures/f.txt": "",
	}
	all := []string{"testdata/answers/a.json", "testdata/answers/deep/b.json", "testdata/large.json", "testdata/sub/fuzz/c.json", "testdata/answers/fixtures/f.txt"}
	tests := []struct {
		name    string
		g       Goldens
		read    []string
		want    []string
		wantErr string
	}{
		{"every file read", Goldens{Owned: []string{"testdata"}}, all, nil, ""},
		{"one file unread", Goldens{Owned: []string{"testdata"}}, all[1:], []string{"testdata/answers/a.json"}, ""},
		{"nothing read, sorted", Goldens{Owned: []string{"testdata"}}, nil,
			[]string{"testdata/answers/a.json", "testdata/answers/deep/b.json", "testdata/answers/fixtures/f.txt", "testdata/large.json", "testdata/sub/fuzz/c.json"}, ""},
		{"a file read elsewhere, named by that package's tests", Goldens{Owned: []string{"testdata"}, ReadElsewhere: map[string]string{"testdata/large.json": "../other"}},
			[]string{"testdata/answers/a.json", "testdata/answers/deep/b.json", "testdata/sub/fuzz/c.json", "testdata/answers/fixtures/f.txt"}, nil, ""},
		{"a file read elsewhere by tests that do not name it", Goldens{Owned: []string{"testdata"}, ReadElsewhere: map[string]string{"testdata/answers/a.json": "../other"}},
			all[1:], []string{"testdata/answers/a.json (ReadElsewhere: no *_test.go file in ../other names a.json)"}, ""},
		{"a file read elsewhere, by a folder without tests", Goldens{Owned: []string{"testdata"}, ReadElsewhere: map[string]string{"testdata/answers/a.json": "../examples"}},
			all[1:], []string{"testdata/answers/a.json (ReadElsewhere: no *_test.go file in ../examples)"}, ""},
		{"a folder not read this run", Goldens{Owned: []string{"testdata"}, NotRead: map[string]string{"testdata/answers/fixtures": "inputs absent"}}, all[:4], nil, ""},
		{"a file not read this run", Goldens{Owned: []string{"testdata"}, NotRead: map[string]string{"testdata/large.json": "why"}},
			[]string{"testdata/answers/a.json"}, []string{"testdata/answers/deep/b.json", "testdata/answers/fixtures/f.txt", "testdata/sub/fuzz/c.json"}, ""},
		{"NotRead is by path element, not by prefix", Goldens{Owned: []string{"testdata"}, NotRead: map[string]string{"testdata/answers/fix": "why"}}, all[:4],
			[]string{"testdata/answers/fixtures/f.txt"}, ""},
		{"a pattern", Goldens{Owned: []string{"../examples/*.response.json"}}, nil, []string{"../examples/one.response.json"}, ""},
		{"a pattern, read", Goldens{Owned: []string{"../examples/*.response.json"}}, []string{"../examples/one.response.json"}, nil, ""},
		{"a single file", Goldens{Owned: []string{"testdata/large.json"}}, nil, []string{"testdata/large.json"}, ""},
		{"a folder that does not exist", Goldens{Owned: []string{"testdat"}}, nil, nil, "owned folder or file testdat"},
		{"a pattern that matches nothing", Goldens{Owned: []string{"../examples/*.answer.json"}}, nil, nil, "matches no file"},
		{"ReadElsewhere of a file not owned", Goldens{Owned: []string{"testdata/answers"}, ReadElsewhere: map[string]string{"testdata/large.json": "../other"}}, all, nil,
			"ReadElsewhere lists testdata/large.json, which is not an owned file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree(t, files)
			got, err := tt.g.Orphans(readSet(t, tt.read...))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v; want one that says %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i] = filepath.ToSlash(got[i])
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Orphans = %q; want %q", got, tt.want)
			}
		})
	}
}

func TestGoldenAndReadFileRecord(t *testing.T) {
	tree(t, map[string]string{"pkg/testdata/a.json": "a", "pkg/testdata/b.json": "b"})
	Golden(t, filepath.Join("testdata", "a.json"), []byte("a"))
	if b, err := ReadFile(filepath.Join("testdata", "b.json")); err != nil || string(b) != "b" {
		t.Fatalf("ReadFile = %q, %v; want %q", b, err, "b")
	}
	read.Lock()
	defer read.Unlock()
	for _, f := range []string{"a.json", "b.json"} {
		abs, _ := filepath.Abs(filepath.Join("testdata", f))
		if !read.paths[abs] {
			t.Errorf("%s was read but not recorded", f)
		}
	}
}

func TestFullRun(t *testing.T) {
	tests := []struct {
		name  string
		flags map[string]string
		want  bool
	}{
		{"no flag", nil, true},
		{"flags that select nothing", map[string]string{"test.v": "true", "test.count": "3", "test.short": "false", "test.fuzzworker": "false", "update": "true"}, true},
		{"-run", map[string]string{"test.run": "TestX"}, false},
		{"-skip", map[string]string{"test.skip": "TestX"}, false},
		{"-short", map[string]string{"test.short": "true"}, false},
		{"-list", map[string]string{"test.list": "."}, false},
		{"-fuzz", map[string]string{"test.fuzz": "FuzzX"}, false},
		{"a fuzzing worker", map[string]string{"test.fuzzworker": "true"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fullRun(func(name string) string { return tt.flags[name] }); got != tt.want {
				t.Errorf("fullRun(%v) = %v; want %v", tt.flags, got, tt.want)
			}
		})
	}
}

// TestReport checks what a package's run prints, and its exit code, with orphans and without.
func TestReport(t *testing.T) {
	tree(t, map[string]string{"pkg/testdata/a.json": "", "pkg/testdata/stray.json": ""})
	g := Goldens{Owned: []string{"testdata"}}
	var out bytes.Buffer
	if code := report(&out, g, readSet(t, "testdata/a.json")); code != 1 || !strings.Contains(out.String(), filepath.Join("testdata", "stray.json")) {
		t.Errorf("report = %d, %q; want 1 naming testdata/stray.json", code, out.String())
	}
	out.Reset()
	if code := report(&out, g, readSet(t, "testdata/a.json", "testdata/stray.json")); code != 0 || out.Len() != 0 {
		t.Errorf("report = %d, %q; want 0 and nothing said", code, out.String())
	}
	out.Reset()
	if code := report(&out, Goldens{Owned: []string{"absent"}}, nil); code != 1 || !strings.Contains(out.String(), "absent") {
		t.Errorf("report = %d, %q; want 1 naming the missing folder", code, out.String())
	}
}

// fakeM is a testing.M whose tests pass or fail.
type fakeM int

func (m fakeM) Run() int { return int(m) }

// TestGoldenMainKeepsAFailure checks that a failed run keeps its code and checks nothing: the
// failures say what matters, and a test that stopped early read less than it would.
func TestGoldenMainKeepsAFailure(t *testing.T) {
	if code := GoldenMain(fakeM(3), Goldens{Owned: []string{"no such folder"}}); code != 3 {
		t.Errorf("GoldenMain = %d; want the tests' 3", code)
	}
}

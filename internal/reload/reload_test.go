package reload_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/webapp-operator/internal/reload"
)

// TestReload follows two files through changes, one step after the other: a change is told by
// their content, whatever their size and modification times say, and taken up through parse,
// called only then; a file that cannot be read, or content that parse refuses, keeps what is in
// force, and is counted.
func TestReload(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	mod := time.Unix(1000, 0)
	write := func(path, content string, mod time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
	parses := 0
	// The value is the two contents joined by "|"; parse refuses a content "bad".
	files := reload.New(func(contents [][]byte) (string, error) {
		parses++
		if len(contents) != 3 || contents[1] != nil {
			t.Errorf("parse got %d contents, the second %q; want 3, the second nil", len(contents), contents[1])
		}
		if string(contents[0]) == "bad" {
			return "", errors.New("bad content")
		}
		return string(contents[0]) + "|" + string(contents[2]), nil
	}, a, "", b)
	if v, ok := files.Value(); ok || v != "" {
		t.Errorf("before a Reload, Value = %q, %t; want nothing", v, ok)
	}

	steps := []struct {
		name   string
		change func()

		wantChanged bool
		wantErr     string // a part of the error, "" for none
		wantValue   string // "" for nothing in force
		wantParses  int
		wantErrors  uint64
	}{
		{name: "a missing file: nothing in force", change: func() { write(b, "y", mod) },
			wantErr: "no such file", wantErrors: 1},
		{name: "content parse refuses: still nothing", change: func() { write(a, "bad", mod) },
			wantErr: "bad content", wantParses: 1, wantErrors: 2},
		{name: "good: taken up", change: func() { write(a, "x", mod) },
			wantChanged: true, wantValue: "x|y", wantParses: 2, wantErrors: 2},
		{name: "unchanged: not parsed again", change: func() {},
			wantValue: "x|y", wantParses: 2, wantErrors: 2},
		{name: "the same bytes with new times", change: func() { write(a, "x", time.Unix(2000, 0)); write(b, "y", time.Unix(2000, 0)) },
			wantValue: "x|y", wantParses: 2, wantErrors: 2},
		{name: "one file changed, of the same size, the time restored", change: func() { write(b, "z", mod) },
			wantChanged: true, wantValue: "x|z", wantParses: 3, wantErrors: 2},
		{name: "the same bytes split differently between the files", change: func() { write(a, "xz", mod); write(b, "", mod) },
			wantChanged: true, wantValue: "xz|", wantParses: 4, wantErrors: 2},
		{name: "a file gone: what is in force stays", change: func() { os.Remove(a) },
			wantErr: "no such file", wantValue: "xz|", wantParses: 4, wantErrors: 3},
		{name: "refused content: what is in force stays", change: func() { write(a, "bad", mod) },
			wantErr: "bad content", wantValue: "xz|", wantParses: 5, wantErrors: 4},
		{name: "back to the content in force: no change", change: func() { write(a, "xz", mod) },
			wantValue: "xz|", wantParses: 5, wantErrors: 4},
	}
	for _, st := range steps {
		st.change()
		changed, err := files.Reload()
		if changed != st.wantChanged || (err == nil) != (st.wantErr == "") || err != nil && !strings.Contains(err.Error(), st.wantErr) {
			t.Errorf("%s: Reload = %t, %v; want changed %t, error %q", st.name, changed, err, st.wantChanged, st.wantErr)
		}
		if v, ok := files.Value(); v != st.wantValue || ok != (st.wantValue != "") {
			t.Errorf("%s: Value = %q, %t; want %q", st.name, v, ok, st.wantValue)
		}
		if parses != st.wantParses {
			t.Errorf("%s: %d parses; want %d", st.name, parses, st.wantParses)
		}
		if got := files.Errors(); got != st.wantErrors {
			t.Errorf("%s: Errors() = %d; want %d", st.name, got, st.wantErrors)
		}
	}
}

// TestReadError checks that a read's error is os.ReadFile's, which names the file and tells a
// caller a read from a parse.
func TestReadError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing")
	_, err := reload.New(func([][]byte) (int, error) { return 1, nil }, path).Reload()
	if !errors.As(err, new(*fs.PathError)) || !strings.Contains(err.Error(), path) {
		t.Errorf("Reload = %v; want os.ReadFile's error, naming %s", err, path)
	}
}

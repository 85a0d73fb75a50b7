// Package reload takes up files whose content changes while the program runs: a rotated token, a
// renewed certificate, an edited templates file. A Files is a set of files read together, each
// whole, and taken up when the SHA-256 of their bytes changes, never by their size or
// modification time; what a read or a parse refuses leaves what is in force as it was, and is
// counted. The caller says when to reload (a ticker), what the bytes mean (parse), and what a
// failure means at start: a Files holds nothing until its first good read, and it is for the
// caller to stop or to go on without it.
package reload

import (
	"crypto/sha256"
	"os"
	"sync"
	"sync/atomic"
)

// Files is a set of files re-read by Reload and taken up as one: parse turns their bytes into a
// T, which is in force (Value) until a Reload finds their content changed and parse accepts it.
// It is safe for concurrent use: Reloads run one at a time, and Value never waits for one.
type Files[T any] struct {
	paths []string
	parse func(contents [][]byte) (T, error)

	reloading sync.Mutex // serializes Reloads
	inForce   atomic.Pointer[taken[T]]
	errors    atomic.Uint64
}

// taken is what a Reload took up: parse's value, and the sum of the bytes it was parsed from.
type taken[T any] struct {
	value T
	sum   [sha256.Size]byte
}

// New returns the Files of paths, none of them read yet: Value holds nothing until a Reload
// succeeds. parse is given the content of every path, in the order of paths, and is called only
// when that content differs from what is in force (or nothing is); it must not keep the slices.
// A path that is "" names no file: it is never read, and its content is nil.
func New[T any](parse func(contents [][]byte) (T, error), paths ...string) *Files[T] {
	return &Files[T]{paths: paths, parse: parse}
}

// Reload reads every file whole and reports whether their content changed since what is in force
// was taken up, judged by a SHA-256 of the SHA-256 of each file's bytes, so that no content can
// pass for another split differently between the files. When it did (or nothing is in force
// yet), parse's value is in force from now on. When a file cannot be read, or parse refuses the
// content, what was in force stays, the error is returned (a read's is os.ReadFile's, which names
// the file; a parse's is parse's own) and counted (Errors), and the next Reload tries again. Each
// file is read once a Reload, so what is hashed is what is parsed.
func (f *Files[T]) Reload() (changed bool, err error) {
	f.reloading.Lock()
	defer f.reloading.Unlock()
	changed, err = f.reload()
	if err != nil {
		f.errors.Add(1)
	}
	return changed, err
}

func (f *Files[T]) reload() (bool, error) {
	contents := make([][]byte, len(f.paths))
	all := sha256.New()
	for i, path := range f.paths {
		if path == "" {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return false, err
		}
		contents[i] = b
		sum := sha256.Sum256(b)
		all.Write(sum[:])
	}
	var sum [sha256.Size]byte
	all.Sum(sum[:0])
	if in := f.inForce.Load(); in != nil && in.sum == sum {
		return false, nil
	}
	v, err := f.parse(contents)
	if err != nil {
		return false, err
	}
	f.inForce.Store(&taken[T]{value: v, sum: sum})
	return true, nil
}

// Value is what is in force, and true; or T's zero value and false while no Reload has taken
// the files up.
func (f *Files[T]) Value() (T, bool) {
	in := f.inForce.Load()
	if in == nil {
		var zero T
		return zero, false
	}
	return in.value, true
}

// Errors counts the Reloads that failed, a read or a parse.
func (f *Files[T]) Errors() uint64 { return f.errors.Load() }

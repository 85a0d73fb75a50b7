package webhook

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
)

func TestAnswerCacheEviction(t *testing.T) {
	c := newAnswerCache(4 * (100 + entryOverhead)) // entries of up to 100 bytes of answer
	put := func(name string, size int) cacheKey {
		k := c.key("/sync", []byte(name))
		c.put(&cacheEntry{key: k, answer: []byte(strings.Repeat("x", size))})
		return k
	}
	a, b := put("a", 100), put("b", 100)
	put("c", 100)
	if c.get(a) == nil { // a becomes the most recently used
		t.Fatal("a missing before the cache is full")
	}
	put("d", 100)
	put("e", 100) // over 400 bytes: b, the least recently used, goes
	tests := []struct {
		name string
		key  cacheKey
		want bool
	}{
		{"a, used recently", a, true},
		{"b, least recently used", b, false},
		{"too large to keep", put("f", 101), false},
		{"same body on another route", c.key("/finalize", []byte("a")), false},
	}
	for _, tt := range tests {
		if got := c.get(tt.key) != nil; got != tt.want {
			t.Errorf("%s: cached = %v; want %v", tt.name, got, tt.want)
		}
	}
	if c.bytes > c.maxBytes {
		t.Errorf("holds %d bytes; want at most %d", c.bytes, c.maxBytes)
	}
	var nilCache *answerCache
	nilCache.put(&cacheEntry{})
	if nilCache.get(cacheKey{}) != nil {
		t.Error("a nil cache returned an entry")
	}
}

// TestCacheEntrySize checks that what an entry counts against --cache-bytes is at least the heap it
// really takes, so that a full cache never holds more memory than it was given.
func TestCacheEntrySize(t *testing.T) {
	const n, answerSize = 4000, 2600
	answers := make([][]byte, n)
	for i := range answers {
		answers[i] = make([]byte, answerSize) // allocated before measuring: the answers are counted exactly
	}
	c := newAnswerCache(1 << 40)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range n {
		e := &cacheEntry{
			key: c.key("/sync", []byte(strconv.Itoa(i))), answer: answers[i],
			etag: `"` + strings.Repeat("0", 32) + `"`, hook: hookSync, parent: "default/" + strconv.Itoa(i), phase: "Ready",
		}
		c.put(e)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	perEntry := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / n
	counted := float64(c.stats().bytes-n*answerSize) / n
	t.Logf("heap per entry beyond its answer: %.0f bytes; counted: %.0f", perEntry, counted)
	if perEntry > counted {
		t.Errorf("an entry takes %.0f bytes of heap beyond its answer but counts %.0f; raise entryOverhead", perEntry, counted)
	}
	runtime.KeepAlive(answers)
}

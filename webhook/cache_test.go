package webhook

import (
	"strings"
	"testing"
)

func TestAnswerCacheEviction(t *testing.T) {
	c := newAnswerCache(400) // entries of up to 100 bytes
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

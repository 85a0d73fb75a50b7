package webhook

import (
	"container/list"
	"hash/maphash"
	stdsync "sync"
)

// answerCache remembers recent answers by the exact bytes of the request they answered.
//
// The decision is a pure function of the request and the time, and the time matters little:
// it stamps a condition that changes, and it runs a canary's timers. An answer says itself when
// it holds only at the time of the call (sync.Response.Timed): such an answer is not cached, as
// replayed later it would be wrong once the timer ran out, and its resyncAfterSeconds, counted
// from the replay, would wake Metacontroller late.
// Metacontroller asks the same question again and again: every resync of an
// unchanged WebApp sends a byte-identical request. Answering those from memory skips decoding,
// deciding and encoding. It also makes a repeated request get exactly the same answer, the
// condition's lastTransitionTime included. Entries are keyed by two independent 64-bit maphash
// sums, seeded randomly at start, so a collision is as unlikely as 2^-128 and cannot be aimed at.
// The least recently used entries go first once maxBytes are held.
//
// Metacontroller resends each WebApp's request every resync period (60 s as deployed), so the
// cache answers resyncs from memory while it holds an entry for every WebApp and for every other
// request that came in between: an entry costs its answer (about 1.6 KB for a WebApp with a
// Deployment and a Service) plus about 450 bytes. With more than fit, least-recently-used order
// evicts each entry before its WebApp comes round again, and resyncs are decided afresh;
// docs/performance.md has the sizing rule.
type answerCache struct {
	seeds    [2]maphash.Seed
	maxBytes int

	mu      stdsync.Mutex
	bytes   int
	order   *list.List // of *cacheEntry, most recent first
	entries map[cacheKey]*list.Element
}

type cacheKey struct {
	route  string
	h1, h2 uint64
	size   int
}

// cacheEntry is one answer and what its log line needs.
type cacheEntry struct {
	// size is what the entry counts against maxBytes (see put).
	size     int
	key      cacheKey
	answer   []byte
	etag     string
	hook     hook
	parent   string
	phase    string
	children int
}

// newAnswerCache returns a cache holding up to maxBytes of answers, or nil (no caching) for 0.
func newAnswerCache(maxBytes int) *answerCache {
	if maxBytes <= 0 {
		return nil
	}
	return &answerCache{
		seeds:    [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()},
		maxBytes: maxBytes,
		order:    list.New(),
		entries:  map[cacheKey]*list.Element{},
	}
}

func (c *answerCache) key(route string, body []byte) cacheKey {
	return cacheKey{route: route, h1: maphash.Bytes(c.seeds[0], body), h2: maphash.Bytes(c.seeds[1], body), size: len(body)}
}

// get returns the entry for key, or nil. A nil cache holds nothing.
func (c *answerCache) get(key cacheKey) *cacheEntry {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry)
}

// cacheStats is what the cache holds.
type cacheStats struct{ bytes, entries int }

// stats returns what the cache holds; a nil cache holds nothing.
func (c *answerCache) stats() cacheStats {
	if c == nil {
		return cacheStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return cacheStats{c.bytes, len(c.entries)}
}

// entryOverhead is the memory an entry takes beyond its answer and strings: the entry itself,
// its list element and its map slot. TestCacheEntrySize measures it.
const entryOverhead = 400

// put stores an entry, evicting the least recently used ones to stay within maxBytes. An entry
// counts its answer, its strings and entryOverhead; one larger than a quarter of the cache is not
// stored.
func (c *answerCache) put(e *cacheEntry) {
	if c == nil {
		return
	}
	e.size = len(e.answer) + len(e.etag) + len(e.parent) + len(e.phase) + entryOverhead
	if e.size > c.maxBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[e.key]; ok {
		return
	}
	c.entries[e.key] = c.order.PushFront(e)
	c.bytes += e.size
	for c.bytes > c.maxBytes {
		old := c.order.Remove(c.order.Back()).(*cacheEntry)
		delete(c.entries, old.key)
		c.bytes -= old.size
	}
}

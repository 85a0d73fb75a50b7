package analysis

import (
	"container/list"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"maps"
	"slices"
	stdsync "sync"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/canary"
)

// maxCached bounds the measurements kept: two per WebApp (the current check and the previous)
// for 4,096 WebApps mid-canary, each a few hundred bytes.
const maxCached = 8192

// cacheKey names a check: the WebApp, the check's span, its analysis and its route, by a SHA-256
// of each part length-prefixed, so that no two checks share a key. A WebApp that changes its
// analysis or its route (a hostname, a Gateway's listener) mid-interval is measured anew; one
// deleted and made again under its name within two intervals,
// with the same analysis, gets the measurement of its namesake's check, as any replica would
// have recorded it.
func cacheKey(parent Parent, a *webappv1.CanaryAnalysis, span canary.Span) string {
	return key(parent, a, span.From, binary.BigEndian.AppendUint64(nil, uint64(span.To.Unix())))
}

// stepKey names the checks of one step of a WebApp's canary, with its analysis and route: those
// whose span starts at from. The latest measured of them is kept under it (Prometheus.latest).
func stepKey(parent Parent, a *webappv1.CanaryAnalysis, from time.Time) string {
	return key(parent, a, from, []byte("step"))
}

// key hashes parent, a, from and to, each length-prefixed.
func key(parent Parent, a *webappv1.CanaryAnalysis, from time.Time, to []byte) string {
	spec, _ := json.Marshal(a) // plain data: it cannot fail
	route, _ := json.Marshal(parent.Route)
	h := sha256.New()
	for _, part := range [][]byte{[]byte(parent.Namespace), []byte(parent.Name), binary.BigEndian.AppendUint64(nil, uint64(from.Unix())), to, spec, route} {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(part))))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// measurements keeps measurements until they expire, at most max of them, the oldest put going
// first when full. It is safe for concurrent use.
type measurements struct {
	max int

	mu      stdsync.Mutex
	order   *list.List // of *cached, oldest first
	entries map[string]*list.Element
}

type cached struct {
	key     string
	m       canary.Measurement
	expires time.Time
}

func newMeasurements(max int) *measurements {
	return &measurements{max: max, order: list.New(), entries: map[string]*list.Element{}}
}

// get returns a copy of the measurement kept for key, unless it expired by now.
func (c *measurements) get(key string, now time.Time) (canary.Measurement, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return canary.Measurement{}, false
	}
	e := el.Value.(*cached)
	if !now.Before(e.expires) {
		c.order.Remove(el)
		delete(c.entries, key)
		return canary.Measurement{}, false
	}
	return clone(e.m), true
}

// put keeps a copy of m for key until expires, dropping what expired by now and, when still full, the
// oldest.
func (c *measurements) put(key string, m canary.Measurement, expires, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.order.Remove(el)
		delete(c.entries, key)
	}
	if len(c.entries) >= c.max {
		for el := c.order.Front(); el != nil; {
			next := el.Next()
			if e := el.Value.(*cached); !now.Before(e.expires) {
				c.order.Remove(el)
				delete(c.entries, e.key)
			}
			el = next
		}
	}
	for len(c.entries) >= c.max {
		old := c.order.Remove(c.order.Front()).(*cached)
		delete(c.entries, old.key)
	}
	c.entries[key] = c.order.PushBack(&cached{key: key, m: clone(m), expires: expires})
}

// putLater is put, unless the measurement kept for key, not expired by now, is of a later check
// (its Span.To after m's): the latest of a step's checks stays, whatever order their queries end in.
func (c *measurements) putLater(key string, m canary.Measurement, expires, now time.Time) {
	if kept, ok := c.get(key, now); ok && kept.Span.To.After(m.Span.To) {
		return
	}
	c.put(key, m, expires, now)
}

// len is how many measurements are kept.
func (c *measurements) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// clone is a deep copy of m: a caller that changes its measurement's maps, slices or counts
// changes no other caller's, nor the cache's. Every reference field of canary.Values is copied.
func clone(m canary.Measurement) canary.Measurement {
	m.Canary, m.Stable = cloneValues(m.Canary), cloneValues(m.Stable)
	return m
}

func cloneValues(v canary.Values) canary.Values {
	v.Requests, v.Failed = clonePtr(v.Requests), clonePtr(v.Failed)
	v.Buckets = slices.Clone(v.Buckets)
	v.Metrics, v.Errors = maps.Clone(v.Metrics), maps.Clone(v.Errors)
	return v
}

func clonePtr(f *float64) *float64 {
	if f == nil {
		return nil
	}
	c := *f
	return &c
}

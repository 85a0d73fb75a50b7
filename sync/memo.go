package sync

import (
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
	stdsync "sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Memo remembers, for a WebApp's name, namespace and exact spec bytes, whether the spec is valid
// and the children built from it. Most syncs do not change the spec: a child's status moved, or a
// resync came. Those reuse the built children instead of validating and encoding them again.
// Building is a pure function of the key, so a remembered result is the result.
//
// A Memo is safe for concurrent use. A nil *Memo remembers nothing; Sync and Finalize, the package
// functions, use one. Requests not made by DecodeRequest (tests filling Parent in directly) have no
// spec bytes and are never remembered. When it holds maxBytes of children it starts afresh, so
// with more WebApps than fit, syncs are built as without a Memo.
type Memo struct {
	seeds    [2]maphash.Seed
	maxBytes int

	mu      stdsync.Mutex
	bytes   int
	entries map[memoKey]*built
}

// NewMemo returns a Memo holding up to maxBytes of built children.
func NewMemo(maxBytes int) *Memo {
	return &Memo{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, maxBytes: maxBytes, entries: map[memoKey]*built{}}
}

type memoKey struct{ h1, h2 uint64 }

// built is what a valid or invalid spec yields, whatever the children's status.
type built struct {
	err        error
	deployment Object
	hash       string
	service    Object // nil without a port
}

// Sync is the package Sync, reusing what m remembers.
func (m *Memo) Sync(req *Request, now time.Time) Response { return decideSync(m, req, now) }

// build validates the spec and builds the children, or returns what m remembers of it.
func (m *Memo) build(p *Parent, dep *Child) *built {
	labels, selector, pods := podLabels(p, dep)
	if m == nil || p.specRaw == nil || len(selector.MatchExpressions) > 0 {
		return buildChildren(p, labels, selector, pods)
	}
	key := m.key(p, selector)
	m.mu.Lock()
	b, ok := m.entries[key]
	m.mu.Unlock()
	if ok {
		return b
	}
	b = buildChildren(p, labels, selector, pods)
	size := len(b.deployment) + len(b.service) + 256 // the entry and its key, roughly
	if size > m.maxBytes/4 {
		return b
	}
	m.mu.Lock()
	if m.bytes+size > m.maxBytes {
		clear(m.entries)
		m.bytes = 0
	}
	m.entries[key] = b
	m.bytes += size
	m.mu.Unlock()
	return b
}

// key sums everything build reads: the name, namespace and spec bytes, and the selector's labels,
// from which (with the name) the pod labels follow.
func (m *Memo) key(p *Parent, selector *metav1.LabelSelector) memoKey {
	names := slices.Sorted(maps.Keys(selector.MatchLabels))
	var k [2]uint64
	for i, seed := range m.seeds {
		var h maphash.Hash
		h.SetSeed(seed)
		part := func(s string) { // length-prefixed, so that no two different keys read alike
			h.WriteString(strconv.Itoa(len(s)))
			h.WriteByte(':')
			h.WriteString(s)
		}
		part(p.Name)
		part(p.Namespace)
		part(string(p.specRaw))
		for _, name := range names {
			part(name)
			part(selector.MatchLabels[name])
		}
		k[i] = h.Sum64()
	}
	return memoKey{k[0], k[1]}
}

func buildChildren(p *Parent, labels map[string]string, selector *metav1.LabelSelector, pods map[string]string) *built {
	if err := specError(p); err != nil {
		return &built{err: err}
	}
	b := &built{}
	b.deployment, b.hash = desiredDeployment(p, labels, selector, pods)
	if p.Spec.Port != nil {
		b.service = desiredService(p, labels, pods)
	}
	return b
}

package webhook

import (
	"container/list"
	"context"
	stdsync "sync"
)

// budget bounds the bytes of request bodies being answered at once, so that a burst of large
// requests (WebApps with many pods: 4.6 MB for 1,000) waits its turn instead of holding more
// memory than the hook's container has. Callers are served first come, first served; a caller
// asking for more than the whole budget is given the whole budget. A nil *budget bounds nothing.
type budget struct {
	max int64

	mu      stdsync.Mutex
	used    int64
	waiters list.List // of *waiter, oldest first
}

type waiter struct {
	n     int64
	ready chan struct{}
}

// newBudget returns a budget of max bytes, or nil (no bound) for max <= 0.
func newBudget(max int64) *budget {
	if max <= 0 {
		return nil
	}
	return &budget{max: max}
}

// acquire waits until n bytes are free and takes them, or returns ctx's error (the caller gave up,
// or the server is shutting down) having taken nothing. release gives them back.
func (b *budget) acquire(ctx context.Context, n int64) (release func(), err error) {
	if b == nil {
		return func() {}, nil
	}
	n = min(max(n, 0), b.max)
	b.mu.Lock()
	if b.waiters.Len() == 0 && b.used+n <= b.max {
		b.used += n
		b.mu.Unlock()
		return func() { b.release(n) }, nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	el := b.waiters.PushBack(w)
	b.mu.Unlock()
	select {
	case <-w.ready:
		return func() { b.release(n) }, nil
	case <-ctx.Done():
		b.mu.Lock()
		select {
		case <-w.ready: // granted meanwhile: give it back
			b.used -= n
		default:
			b.waiters.Remove(el)
		}
		b.grant()
		b.mu.Unlock()
		return nil, ctx.Err()
	}
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	b.grant()
	b.mu.Unlock()
}

// grant hands free bytes to the waiters in order, stopping at the first that does not fit.
// b.mu is held.
func (b *budget) grant() {
	for el := b.waiters.Front(); el != nil; el = b.waiters.Front() {
		w := el.Value.(*waiter)
		if b.used+w.n > b.max {
			return
		}
		b.used += w.n
		b.waiters.Remove(el)
		close(w.ready)
	}
}

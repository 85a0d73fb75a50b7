package webhook

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// budget bounds the bytes of request bodies being answered at once, so that a burst of large
// requests (WebApps with many pods: 4.6 MB for 1,000) waits its turn instead of holding more
// memory than the hook's container has. It is a semaphore.Weighted, which serves callers first
// come, first served: a caller that does not fit holds back every caller after it, even those
// that would fit, so that large requests are never starved by a stream of small ones. A caller
// asking for more than the whole budget is given the whole budget. A nil *budget bounds nothing.
// BenchmarkBudget measures it (docs/performance.md: no worse than the hand-written list it
// replaced).
type budget struct {
	max int64
	sem *semaphore.Weighted
}

// newBudget returns a budget of max bytes, or nil (no bound) for max <= 0.
func newBudget(max int64) *budget {
	if max <= 0 {
		return nil
	}
	return &budget{max: max, sem: semaphore.NewWeighted(max)}
}

// acquire waits until n bytes are free and takes them, or returns ctx's error (the caller gave
// up, its wait timed out, or the server is shutting down) having taken nothing. release gives
// them back; it must be called once. A negative n counts as 0.
func (b *budget) acquire(ctx context.Context, n int64) (release func(), err error) {
	if b == nil {
		return func() {}, nil
	}
	n = min(max(n, 0), b.max) // semaphore.Weighted would wait for ever for more than it has
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, err
	}
	return func() { b.sem.Release(n) }, nil
}

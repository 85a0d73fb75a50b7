package webhook

import (
	"context"
	"errors"
	"slices"
	stdsync "sync"
	"testing"
	"time"
)

// TestBudget checks the in-flight body budget: grants in the order asked, first come first served
// even when a later, smaller request would fit; more than the whole budget is the whole budget; a
// wait that times out takes nothing and leaves the budget whole; nil bounds nothing.
func TestBudget(t *testing.T) {
	tests := []struct {
		name    string
		max     int64
		held    int64   // taken before the waiters come
		waiters []int64 // in the order they ask, 20ms apart
		// wantOrder is the waiters' indexes in the order granted once held is given back.
		wantOrder []int
		// wantTimedOut are the waiters whose 200ms wait ends without a grant, held never given back.
		wantTimedOut []int
	}{
		{name: "in order", max: 10, held: 8, waiters: []int64{9, 2}, wantOrder: []int{0, 1}},
		{name: "a small request waits behind a large one, and a large one behind it", max: 10, held: 8, waiters: []int64{9, 2, 9}, wantOrder: []int{0, 1, 2}},
		{name: "more than the whole budget is the whole budget", max: 10, held: 1, waiters: []int64{100, 1}, wantOrder: []int{0, 1}},
		{name: "a full budget times out", max: 10, held: 10, waiters: []int64{1, 5}, wantTimedOut: []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBudget(tt.max)
			release, err := b.acquire(context.Background(), tt.held)
			if err != nil {
				t.Fatal(err)
			}
			var (
				mu       stdsync.Mutex
				order    []int
				timedOut []int
				wg       stdsync.WaitGroup
			)
			wait := time.Hour
			if tt.wantTimedOut != nil {
				wait = 200 * time.Millisecond
			}
			for i, n := range tt.waiters {
				wg.Go(func() {
					ctx, cancel := context.WithTimeout(context.Background(), wait)
					defer cancel()
					r, err := b.acquire(ctx, n)
					mu.Lock()
					defer mu.Unlock()
					if err != nil {
						if !errors.Is(err, context.DeadlineExceeded) {
							t.Errorf("waiter %d: %v; want context.DeadlineExceeded", i, err)
						}
						timedOut = append(timedOut, i)
						return
					}
					order = append(order, i)
					go func() { time.Sleep(10 * time.Millisecond); r() }()
				})
				time.Sleep(20 * time.Millisecond)
			}
			mu.Lock()
			if len(order) > 0 {
				t.Errorf("granted %v while the budget was held", order)
			}
			mu.Unlock()
			if tt.wantTimedOut == nil {
				release()
			}
			wg.Wait()
			slices.Sort(timedOut)
			if !slices.Equal(order, tt.wantOrder) || !slices.Equal(timedOut, tt.wantTimedOut) {
				t.Errorf("granted %v, timed out %v; want granted %v, timed out %v", order, timedOut, tt.wantOrder, tt.wantTimedOut)
			}
			if tt.wantTimedOut != nil {
				release()
			}
			time.Sleep(30 * time.Millisecond) // the waiters give their share back
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if r, err := b.acquire(ctx, tt.max); err != nil {
				t.Errorf("the whole budget is not free at the end: %v", err)
			} else {
				r()
			}
		})
	}

	full := newBudget(10)
	if _, err := full.acquire(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if r, err := full.acquire(ctx, -5); err != nil {
		t.Errorf("a negative size waited on a full budget: %v; want it granted at once, as 0", err)
	} else {
		r()
	}

	var none *budget
	if r, err := none.acquire(context.Background(), 1<<40); err != nil {
		t.Error(err)
	} else {
		r()
	}
}

// BenchmarkBudget measures taking and giving back a share of the in-flight budget: alone, and from
// every P at once with the budget often full, so that callers queue.
func BenchmarkBudget(b *testing.B) {
	ctx := context.Background()
	b.Run("uncontended", func(b *testing.B) {
		bu := newBudget(16 << 20)
		for b.Loop() {
			r, _ := bu.acquire(ctx, 10<<10)
			r()
		}
	})
	b.Run("contended", func(b *testing.B) {
		bu := newBudget(16 << 20)
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				r, _ := bu.acquire(ctx, 4<<20) // four fit at once
				r()
			}
		})
	})
}

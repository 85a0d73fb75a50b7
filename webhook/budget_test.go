package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	stdsync "sync"
	"testing"
	"testing/synctest"
	"time"
)

// budgetGrant is a waiter of TestBudget granted its share, and when: how long after the share held
// before the waiters came is given back.
type budgetGrant struct {
	waiter int
	at     time.Duration
}

func (g budgetGrant) String() string { return fmt.Sprintf("%d at %s", g.waiter, g.at) }

// TestBudget checks the in-flight body budget: grants in the order asked, first come first served
// even when a later, smaller request would fit; more than the whole budget is the whole budget; a
// wait that times out takes nothing and leaves the budget whole; nil bounds nothing.
//
// Each case runs in a synctest bubble: synctest.Wait orders the waiters (each is queued before the
// next asks), and the fake clock makes every grant and every timeout happen at an exact instant.
func TestBudget(t *testing.T) {
	// hold is how long a waiter keeps its grant before giving it back.
	const hold = 10 * time.Millisecond
	tests := []struct {
		name    string
		max     int64
		held    int64   // taken before the waiters come
		waiters []int64 // in the order they ask
		// wantGrants are the waiters granted once held is given back, in order, and when.
		wantGrants []budgetGrant
		// wantTimedOut are the waiters whose 200ms wait ends without a grant, held never given back.
		wantTimedOut []int
	}{
		{name: "in order", max: 10, held: 8, waiters: []int64{9, 2},
			wantGrants: []budgetGrant{{0, 0}, {1, hold}}},
		{name: "a small request waits behind a large one, and a large one behind it", max: 10, held: 8, waiters: []int64{9, 2, 9},
			wantGrants: []budgetGrant{{0, 0}, {1, hold}, {2, 2 * hold}}},
		{name: "more than the whole budget is the whole budget", max: 10, held: 1, waiters: []int64{100, 1},
			wantGrants: []budgetGrant{{0, 0}, {1, hold}}},
		{name: "a full budget times out", max: 10, held: 10, waiters: []int64{1, 5}, wantTimedOut: []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBudget(tt.max)
				release, err := b.acquire(context.Background(), tt.held)
				if err != nil {
					t.Fatal(err)
				}
				var (
					mu       stdsync.Mutex
					grants   []budgetGrant
					timedOut []int
					waiters  stdsync.WaitGroup // until each is granted or times out
					returned stdsync.WaitGroup // until each budgetGrant is given back
					start    time.Time         // when held is given back, or the waiters ask
				)
				wait := time.Hour
				if tt.wantTimedOut != nil {
					wait = 200 * time.Millisecond
				}
				start = time.Now()
				for i, n := range tt.waiters {
					waiters.Go(func() {
						ctx, cancel := context.WithTimeout(context.Background(), wait)
						defer cancel()
						r, err := b.acquire(ctx, n)
						mu.Lock()
						defer mu.Unlock()
						if err != nil {
							if !errors.Is(err, context.DeadlineExceeded) {
								t.Errorf("waiter %d: %v; want context.DeadlineExceeded", i, err)
							}
							if at := time.Since(start); at != wait {
								t.Errorf("waiter %d timed out after %s; want %s", i, at, wait)
							}
							timedOut = append(timedOut, i)
							return
						}
						grants = append(grants, budgetGrant{i, time.Since(start)})
						returned.Go(func() { time.Sleep(hold); r() })
					})
					synctest.Wait() // waiter i is queued (or granted) before waiter i+1 asks
				}
				mu.Lock()
				if len(grants) > 0 {
					t.Errorf("granted %v while the budget was held", grants)
				}
				mu.Unlock()
				if tt.wantTimedOut == nil {
					start = time.Now()
					release()
				}
				waiters.Wait()
				slices.Sort(timedOut)
				if !slices.Equal(grants, tt.wantGrants) || !slices.Equal(timedOut, tt.wantTimedOut) {
					t.Errorf("granted %v, timed out %v; want granted %v, timed out %v", grants, timedOut, tt.wantGrants, tt.wantTimedOut)
				}
				if tt.wantTimedOut != nil {
					release()
				}
				returned.Wait() // the waiters give their share back
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				before := time.Now()
				if r, err := b.acquire(ctx, tt.max); err != nil {
					t.Errorf("the whole budget is not free at the end: %v", err)
				} else {
					if waited := time.Since(before); waited != 0 {
						t.Errorf("the whole budget was free only after %s; want at once", waited)
					}
					r()
				}
			})
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

package webhook

import (
	"context"
	"testing"
	"time"
)

func TestBudget(t *testing.T) {
	b := newBudget(10)
	r8, _ := b.acquire(context.Background(), 8)
	got := make(chan string, 2)
	go func() {
		r, _ := b.acquire(context.Background(), 9) // does not fit in the 2 left
		got <- "nine"
		time.Sleep(10 * time.Millisecond)
		r()
	}()
	time.Sleep(20 * time.Millisecond)
	go func() {
		r, _ := b.acquire(context.Background(), 2) // fits, but waits behind the nine: first come, first served
		got <- "two"
		r()
	}()
	time.Sleep(20 * time.Millisecond)
	select {
	case g := <-got:
		t.Fatalf("%s was granted before the first waiter", g)
	default:
	}
	r8()
	if g := <-got; g != "nine" {
		t.Errorf("granted %s first; want the nine, which asked first", g)
	}
	if g := <-got; g != "two" {
		t.Errorf("granted %s; want the two, once the nine gave its share back", g)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	full, _ := b.acquire(context.Background(), 100) // more than the budget: the whole budget
	if _, err := b.acquire(ctx, 1); err == nil {
		t.Error("acquired from a full budget; want the context's error")
	}
	full()
	if r, err := b.acquire(context.Background(), 10); err != nil {
		t.Errorf("after a cancelled wait, the whole budget is not free: %v", err)
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

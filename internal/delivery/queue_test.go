package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestQueueRunsItemsInOrderOneAtATime(t *testing.T) {
	var mu sync.Mutex
	var got []string
	inFlight := 0
	maxInFlight := 0
	q := &Queue{Work: func(ctx context.Context, it *Item) error {
		mu.Lock()
		inFlight++
		maxInFlight = max(maxInFlight, inFlight)
		mu.Unlock()
		time.Sleep(time.Millisecond)
		mu.Lock()
		got = append(got, it.Message)
		inFlight--
		mu.Unlock()
		return nil
	}}
	var items []*Item
	for i := 0; i < 50; i++ {
		it := &Item{ID: fmt.Sprint(i), Message: fmt.Sprint(i)}
		if _, err := q.Push(it); err != nil {
			t.Fatal(err)
		}
		items = append(items, it)
	}
	for _, it := range items {
		<-it.Done()
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
	}
	q.Wait()
	for i, m := range got {
		if m != fmt.Sprint(i) {
			t.Fatalf("order %v", got)
		}
	}
	if maxInFlight != 1 {
		t.Fatalf("max in flight %d", maxInFlight)
	}
	if q.Len() != 0 || q.Busy() {
		t.Fatal("queue not drained")
	}
}

func TestQueueBoundAndCancel(t *testing.T) {
	release := make(chan struct{})
	var finished []error
	var mu sync.Mutex
	q := &Queue{Max: 2, Work: func(ctx context.Context, it *Item) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, Finished: func(it *Item, err error) {
		mu.Lock()
		finished = append(finished, err)
		mu.Unlock()
	}}
	first := &Item{ID: "1"}
	q.Push(first)
	deadline := time.Now().Add(5 * time.Second)
	for !q.Busy() {
		if time.Now().After(deadline) {
			t.Fatal("first item never started")
		}
		time.Sleep(time.Millisecond)
	}
	a, b := &Item{ID: "2"}, &Item{ID: "3"}
	if ahead, err := q.Push(a); err != nil || ahead != 1 {
		t.Fatalf("push 2: ahead=%d err=%v", ahead, err)
	}
	if _, err := q.Push(b); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Push(&Item{ID: "4"}); !errors.Is(err, ErrFull) {
		t.Fatalf("push beyond Max: %v, want ErrFull", err)
	}
	q.Cancel()
	for _, it := range []*Item{first, a, b} {
		<-it.Done()
		if !errors.Is(it.Err(), ErrCancelled) {
			t.Fatalf("item %s: %v, want ErrCancelled", it.ID, it.Err())
		}
	}
	q.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(finished) != 3 {
		t.Fatalf("Finished called %d times", len(finished))
	}
	close(release)
}

func TestQueuePushFrontJumpsPending(t *testing.T) {
	release := make(chan struct{})
	var order []string
	var mu sync.Mutex
	q := &Queue{Work: func(ctx context.Context, it *Item) error {
		if it.ID == "first" {
			<-release
		}
		mu.Lock()
		order = append(order, it.ID)
		mu.Unlock()
		return nil
	}}
	q.Push(&Item{ID: "first"})
	for !q.Busy() {
		time.Sleep(time.Millisecond)
	}
	q.Push(&Item{ID: "msg"})
	probe := &Item{ID: "probe", Job: func(context.Context) error {
		mu.Lock()
		order = append(order, "probe")
		mu.Unlock()
		return nil
	}}
	q.PushFront(probe)
	close(release)
	q.Wait()
	if fmt.Sprint(order) != "[first probe msg]" {
		t.Fatalf("order %v", order)
	}
}

// CancelWith gives its reason to every item it ends, the one in flight
// included, so a message's outcome says why it could not be delivered.
func TestQueueCancelWithReason(t *testing.T) {
	started := make(chan struct{})
	q := &Queue{Work: func(ctx context.Context, it *Item) error {
		if it.ID == "first" {
			close(started)
		}
		<-ctx.Done()
		return ctx.Err()
	}}
	first, second := &Item{ID: "first", Message: "a"}, &Item{ID: "second", Message: "b"}
	for _, it := range []*Item{first, second} {
		if _, err := q.Push(it); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	reason := errors.New("agent stopped: template gone")
	q.CancelWith(reason)
	for _, it := range []*Item{first, second} {
		<-it.Done()
		if !errors.Is(it.Err(), reason) {
			t.Fatalf("item %s: outcome %v, want %v", it.ID, it.Err(), reason)
		}
	}
	// A later plain Cancel of new work is a plain cancellation again.
	third := &Item{ID: "third", Message: "c"}
	if _, err := q.Push(third); err != nil {
		t.Fatal(err)
	}
	q.Cancel()
	<-third.Done()
	if !errors.Is(third.Err(), ErrCancelled) {
		t.Fatalf("third: %v, want ErrCancelled", third.Err())
	}
	q.Wait()
}

// Work that Cancel cuts short fails as cancelled even when what it ran into
// on the way out was not a context error (the stopped agent's pane is gone).
func TestQueueCancelledWorkIsCancelledWhateverItsError(t *testing.T) {
	started := make(chan struct{})
	q := &Queue{Work: func(ctx context.Context, it *Item) error {
		close(started)
		<-ctx.Done()
		return errors.New("paste failed: pane is dead")
	}}
	it := &Item{ID: "x", Message: "m"}
	if _, err := q.Push(it); err != nil {
		t.Fatal(err)
	}
	<-started
	q.Cancel()
	<-it.Done()
	if !errors.Is(it.Err(), ErrCancelled) {
		t.Fatalf("outcome %v, want ErrCancelled", it.Err())
	}
	q.Wait()
}

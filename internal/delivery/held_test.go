package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// A held queue keeps its messages pending, lets a job through, and goes on
// in order once the hold lifts; one pushed to the front meanwhile goes
// first. A hold that fails fails each message with its error, never Work.
func TestQueueHeldMessagesWaitForTheLift(t *testing.T) {
	var mu sync.Mutex
	lift := make(chan struct{})
	held := true
	var fail error
	var got []string
	q := &Queue{
		Work: func(ctx context.Context, it *Item) error {
			mu.Lock()
			got = append(got, it.Message)
			mu.Unlock()
			return nil
		},
		Held: func(it *Item) (<-chan struct{}, error) {
			mu.Lock()
			defer mu.Unlock()
			if held {
				return lift, nil
			}
			return nil, fail
		},
	}
	a, b := &Item{ID: "a", Message: "a"}, &Item{ID: "b", Message: "b"}
	q.Push(a)
	q.Push(b)
	ran := make(chan struct{})
	job := &Item{ID: "job", Job: func(context.Context) error { close(ran); return nil }}
	q.PushFront(job)
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("a job waited on the hold")
	}
	select {
	case <-a.Done():
		t.Fatal("a held message ran")
	case <-time.After(50 * time.Millisecond):
	}
	if q.Delivering() {
		t.Error("a held queue says it delivers")
	}
	first := &Item{ID: "continue", Message: "continue"}
	q.PushFront(first)
	mu.Lock()
	held = false
	mu.Unlock()
	close(lift)
	for _, it := range []*Item{first, a, b} {
		<-it.Done()
	}
	if fmt.Sprint(got) != "[continue a b]" {
		t.Fatalf("order %v", got)
	}

	mu.Lock()
	fail = fmt.Errorf("%w: you've hit your limit", ErrHeld)
	mu.Unlock()
	c := &Item{ID: "c", Message: "c"}
	q.Push(c)
	<-c.Done()
	if !errors.Is(c.Err(), ErrHeld) || len(got) != 3 {
		t.Fatalf("failed hold: %v, work %v", c.Err(), got)
	}
}

// Cancel ends a held wait: the held messages fail as cancelled.
func TestQueueCancelEndsAHeldWait(t *testing.T) {
	q := &Queue{
		Work: func(context.Context, *Item) error { return nil },
		Held: func(*Item) (<-chan struct{}, error) { return make(chan struct{}), nil },
	}
	a := &Item{ID: "a", Message: "a"}
	q.Push(a)
	q.Cancel()
	<-a.Done()
	if !errors.Is(a.Err(), ErrCancelled) {
		t.Fatal(a.Err())
	}
	q.Wait()
}

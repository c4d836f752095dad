package delivery

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Item is one queued piece of work for an agent's pane: a message, or an
// internal job such as waiting for a freshly launched TUI to be ready.
// Persistent tasks will enqueue items and wait on Done for the outcome.
type Item struct {
	ID      string
	Message string
	// Sender is who sent Message (api.Sender*), kept for leo's record of
	// the conversation; the queue does not read it.
	Sender string
	// Job, when set, runs instead of delivering Message (internal work
	// that must not interleave with deliveries, e.g. the startup probe).
	Job func(ctx context.Context) error
	// Pasted marks a message an earlier daemon pasted and was killed
	// before it knew the outcome: Message is the text as pasted, and the
	// worker finishes it from what the screen shows (Driver.Finish),
	// never pasting it again.
	Pasted bool
	// Command marks Message as a command of the harness's TUI that its
	// adapter named (a compaction), never a sender's text: it is run with
	// Driver.Command and confirmed by the harness's record of it. It is
	// queued and counted like a message.
	Command bool
	// Unheld marks the message a hold's end sends ahead of the held ones
	// (on_limit: continue): Held lets it pass.
	Unheld bool
	// PastedAt is when the earlier daemon pasted a Pasted item.
	PastedAt time.Time
	// Enqueued is when Push accepted the item.
	Enqueued time.Time

	done chan struct{}
	err  error
}

// Done is closed when the item finished (delivered, failed or cancelled).
func (it *Item) Done() <-chan struct{} { return it.done }

// Err is the outcome once Done is closed: nil means delivered.
func (it *Item) Err() error { return it.err }

// NewDone is an item whose outcome is already known: a message whose
// delivery ended without passing through a queue (e.g. one restored from
// disk after a restart that could not be queued again).
func NewDone(id, message string, err error) *Item {
	it := &Item{ID: id, Message: message, done: make(chan struct{}), err: err}
	close(it.done)
	return it
}

// ErrFull is returned by Push when the queue holds its maximum.
var ErrFull = errors.New("queue full")

// ErrCancelled is the outcome of items dropped by Cancel.
var ErrCancelled = errors.New("cancelled")

// Queue is one agent's FIFO. A worker goroutine exists only while the queue
// has work, so an idle fleet costs no goroutines. Items run one at a time, in
// the order they were pushed.
type Queue struct {
	// Max bounds pending items (in flight not counted); 0 means no bound.
	Max int
	// Limit, when set, bounds the pending messages (internal jobs not
	// counted) at each Push, below Max: a configured queue_max. It is
	// called without the queue's lock held.
	Limit func() int
	// Work delivers one item; its error is the item's outcome.
	Work func(ctx context.Context, it *Item) error
	// Finished, when set, is called after each item with its outcome.
	Finished func(it *Item, err error)
	// Now stamps Enqueued.
	Now func() time.Time
	// Held, when set, is asked before each message (internal jobs pass)
	// whether the agent is held (a usage limit): a non-nil wait holds the
	// message, still pending and first, until wait closes; a non-nil fail
	// is the message's outcome instead of Work. It is called without the
	// queue's lock held.
	Held func(it *Item) (wait <-chan struct{}, fail error)

	mu       sync.Mutex
	pending  []*Item
	inFlight *Item
	cancel   context.CancelFunc
	// reason is the outcome CancelWith gave the item in flight.
	reason  error
	running bool
	idle    *sync.Cond
	closed  bool
	// holdCancel ends the worker's wait on Held (Cancel, Close).
	holdCancel context.CancelFunc
}

// Push appends it and starts a worker if none runs. It returns how many
// messages are ahead of it (in flight included; internal jobs not counted).
func (q *Queue) Push(it *Item) (ahead int, err error) {
	return q.push(it, true)
}

// PushUnbounded is Push without Max and Limit: for messages accepted
// earlier (restored from disk after a restart), which a bound lowered
// since must not drop.
func (q *Queue) PushUnbounded(it *Item) (ahead int, err error) {
	return q.push(it, false)
}

func (q *Queue) push(it *Item, bounded bool) (ahead int, err error) {
	// The limit is read before the queue's lock: Limit belongs to the
	// caller and may take the caller's locks, which are also held around
	// calls into the queue (a listing reads Messages under them).
	limit := 0
	if bounded && q.Limit != nil && it.Job == nil {
		limit = q.Limit()
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return 0, ErrCancelled
	}
	if bounded && q.Max > 0 && len(q.pending) >= q.Max {
		return 0, ErrFull
	}
	if limit > 0 && q.pendingMessagesLocked() >= limit {
		return 0, ErrFull
	}
	it.done = make(chan struct{})
	if q.Now != nil {
		it.Enqueued = q.Now()
	} else {
		it.Enqueued = time.Now()
	}
	ahead = q.messagesLocked()
	q.pending = append(q.pending, it)
	if !q.running {
		q.running = true
		go q.run()
	}
	return ahead, nil
}

// PushFront puts it ahead of every pending item (after the one in flight):
// used for the startup probe of a relaunch, which must precede deliveries.
func (q *Queue) PushFront(it *Item) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return ErrCancelled
	}
	it.done = make(chan struct{})
	it.Enqueued = time.Now()
	if q.Now != nil {
		it.Enqueued = q.Now()
	}
	q.pending = append([]*Item{it}, q.pending...)
	if !q.running {
		q.running = true
		go q.run()
	}
	return nil
}

func (q *Queue) run() {
	for {
		q.mu.Lock()
		if len(q.pending) == 0 {
			q.running = false
			q.inFlight = nil
			q.cancel = nil
			if q.idle != nil {
				q.idle.Broadcast()
			}
			q.mu.Unlock()
			return
		}
		it := q.pending[0]
		var fail error
		if it.Job == nil && q.Held != nil {
			q.mu.Unlock()
			var wait <-chan struct{}
			if wait, fail = q.Held(it); wait != nil {
				q.waitHeld(wait)
				continue // the head may have changed meanwhile
			}
			q.mu.Lock()
			if len(q.pending) == 0 || q.pending[0] != it {
				q.mu.Unlock()
				continue
			}
		}
		q.pending[0] = nil
		q.pending = q.pending[1:]
		ctx, cancel := context.WithCancel(context.Background())
		q.inFlight = it
		q.cancel = cancel
		q.mu.Unlock()

		var err error
		switch {
		case fail != nil:
			err = fail
		case it.Job != nil:
			err = it.Job(ctx)
		default:
			err = q.Work(ctx, it)
		}
		q.mu.Lock()
		// Work cut short by Cancel fails as cancelled, whatever error it
		// ran into on the way out (a stopped agent's pane is gone too).
		cancelled := ctx.Err() != nil
		cancel()
		if cancelled && err != nil {
			err = ErrCancelled
			if q.reason != nil {
				err = q.reason
			}
		}
		it.err = err
		q.inFlight = nil
		q.cancel = nil
		q.reason = nil
		q.mu.Unlock()
		close(it.done)
		if q.Finished != nil {
			q.Finished(it, err)
		}
	}
}

// waitHeld waits until wait closes, or a Cancel or Close ends the wait
// (the held messages stay pending for the queue to decide again).
func (q *Queue) waitHeld(wait <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	q.mu.Lock()
	q.holdCancel = cancel
	// A Cancel between Held's answer and here dropped the pending items.
	stale := q.closed || len(q.pending) == 0
	q.mu.Unlock()
	if !stale {
		select {
		case <-wait:
		case <-ctx.Done():
		}
	}
	q.mu.Lock()
	q.holdCancel = nil
	q.mu.Unlock()
	cancel()
}

// Len is the number of items pending or in flight.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := len(q.pending)
	if q.inFlight != nil {
		n++
	}
	return n
}

// Messages is the number of messages (not internal jobs) pending or in
// flight.
func (q *Queue) Messages() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.messagesLocked()
}

// Waiting is the number of messages waiting (not the one in flight).
func (q *Queue) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pendingMessagesLocked()
}

func (q *Queue) pendingMessagesLocked() int {
	n := 0
	for _, it := range q.pending {
		if it.Job == nil {
			n++
		}
	}
	return n
}

func (q *Queue) messagesLocked() int {
	n := 0
	for _, it := range q.pending {
		if it.Job == nil {
			n++
		}
	}
	if q.inFlight != nil && q.inFlight.Job == nil {
		n++
	}
	return n
}

// Busy reports whether an item is in flight.
func (q *Queue) Busy() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.inFlight != nil
}

// Delivering reports whether a message (not an internal job) is in flight.
func (q *Queue) Delivering() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.inFlight != nil && q.inFlight.Job == nil
}

// Cancel fails every pending item with ErrCancelled and interrupts the one
// in flight. The queue stays usable.
func (q *Queue) Cancel() { q.CancelWith(ErrCancelled) }

// CancelWith is Cancel with reason as the outcome of every pending item and
// of the one in flight if the cancellation ends it (a caller that knows why
// the work cannot happen says so, instead of a bare "cancelled").
func (q *Queue) CancelWith(reason error) {
	q.mu.Lock()
	dropped := q.pending
	q.pending = nil
	if q.cancel != nil {
		q.cancel()
		q.reason = reason
	}
	if q.holdCancel != nil {
		q.holdCancel()
	}
	q.mu.Unlock()
	for _, it := range dropped {
		it.err = reason
		close(it.done)
		if q.Finished != nil {
			q.Finished(it, reason)
		}
	}
}

// Close cancels everything, refuses new items and waits for the worker.
func (q *Queue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.Cancel()
	q.Wait()
}

// Wait blocks until no worker runs.
func (q *Queue) Wait() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.idle == nil {
		q.idle = sync.NewCond(&q.mu)
	}
	for q.running {
		q.idle.Wait()
	}
}

// ErrHeld is the outcome of a message its agent's hold failed (a usage
// limit, with on_limit: fail); the error wraps it with the limit's words.
var ErrHeld = errors.New("held by a usage limit")

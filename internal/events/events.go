// Package events is the daemon's one stream of what happens: every event
// gets the next sequence number, a bounded ring keeps the newest for
// readers that come back (Last-Event-ID), and each reader has its own
// bounded buffer. Publishing never waits for a reader: one too slow to
// keep up is dropped with a last event saying so.
package events

import (
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// Defaults of New's sizes.
const (
	DefaultRing   = 4096
	DefaultBuffer = 1024
)

// Publisher is what the engines (agents, tasks, the daemon) are given: a
// nil Publisher is never called (see Publish).
type Publisher interface {
	Publish(e api.Event) api.Event
}

// Publish sends e through p when p is not nil.
func Publish(p Publisher, e api.Event) {
	if p != nil {
		p.Publish(e)
	}
}

// Bus is the stream. Safe for concurrent use.
type Bus struct {
	now    func() time.Time
	buffer int

	mu   sync.Mutex
	next uint64
	// ring keeps the newest events: a circular buffer of size slots, the
	// oldest at start, n of them in use.
	ring  []api.Event
	start int
	n     int
	subs  map[*Sub]struct{}
}

// New returns a bus whose first event is numbered first: a daemon passes
// its start time in microseconds, so that numbers keep increasing across
// restarts without a file (a daemon publishes far fewer than a million
// events a second). ring and buffer are the ring's and each reader's
// sizes (0: the defaults); now nil is time.Now.
func New(first uint64, ring, buffer int, now func() time.Time) *Bus {
	if ring <= 0 {
		ring = DefaultRing
	}
	if buffer <= 0 {
		buffer = DefaultBuffer
	}
	if now == nil {
		now = time.Now
	}
	return &Bus{now: now, buffer: buffer, next: max(first, 1), ring: make([]api.Event, ring), subs: map[*Sub]struct{}{}}
}

// FirstSeq is the number a daemon started at t gives its first event.
func FirstSeq(t time.Time) uint64 { return uint64(t.UnixMicro()) }

// Publish numbers e, stamps it (when e.At is zero), keeps it in the ring
// and hands it to every reader, dropping those whose buffer is full. It
// returns e as published.
func (b *Bus) Publish(e api.Event) api.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	e.Seq = b.next
	b.next++
	if e.At.IsZero() {
		e.At = b.now().UTC()
	}
	if b.n == len(b.ring) {
		b.ring[b.start] = e
		b.start = (b.start + 1) % len(b.ring)
	} else {
		b.ring[(b.start+b.n)%len(b.ring)] = e
		b.n++
	}
	for s := range b.subs {
		if s.filter != nil && !s.filter(e) {
			continue
		}
		// One slot stays free for the last event a dropped reader gets.
		// Its number is the one before e: every event up to there is in
		// the reader's buffer (or not for it), so a reader reconnecting
		// with it as Last-Event-ID gets e and what follows, none twice.
		if len(s.ch) >= cap(s.ch)-1 {
			s.ch <- api.Event{Seq: e.Seq - 1, Type: api.EventStreamDropped, At: e.At,
				Reason: "this reader fell too far behind the daemon's events and was dropped; reconnect with Last-Event-ID to catch up"}
			b.removeLocked(s)
			continue
		}
		s.ch <- e
	}
	return e
}

// Last is the sequence number of the newest event (0 before any).
func (b *Bus) Last() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n == 0 {
		return 0
	}
	return b.at(b.n - 1).Seq
}

// at is the i-th kept event, oldest first.
func (b *Bus) at(i int) api.Event { return b.ring[(b.start+i)%len(b.ring)] }

// Since returns the kept events after seq that pass filter (nil: all),
// oldest first. When events after seq are no longer kept, the first is a
// stream.behind event counting those missed.
func (b *Bus) Since(seq uint64, filter func(api.Event) bool) []api.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sinceLocked(seq, filter)
}

func (b *Bus) sinceLocked(seq uint64, filter func(api.Event) bool) []api.Event {
	var out []api.Event
	if b.n > 0 && seq > 0 && seq+1 < b.at(0).Seq {
		oldest := b.at(0).Seq
		out = append(out, api.Event{Seq: oldest - 1, Type: api.EventStreamBehind, At: b.now().UTC(),
			Missed: oldest - 1 - seq,
			Reason: "events older than the daemon keeps (or from before it restarted) are gone"})
	}
	for i := range b.n {
		if e := b.at(i); e.Seq > seq && (filter == nil || filter(e)) {
			out = append(out, e)
		}
	}
	return out
}

// Sub is one reader of the stream.
type Sub struct {
	bus    *Bus
	ch     chan api.Event
	filter func(api.Event) bool
	once   sync.Once
}

// Subscribe returns a reader that gets, in order, the kept events after
// since (when since > 0; a stream.behind first if some are gone), then
// every new event that passes filter (nil: all). Close it when done.
func (b *Bus) Subscribe(since uint64, filter func(api.Event) bool) *Sub {
	b.mu.Lock()
	defer b.mu.Unlock()
	var backlog []api.Event
	if since > 0 {
		backlog = b.sinceLocked(since, filter)
	}
	s := &Sub{bus: b, ch: make(chan api.Event, b.buffer+len(backlog)+1), filter: filter}
	for _, e := range backlog {
		s.ch <- e
	}
	b.subs[s] = struct{}{}
	return s
}

// Events is the reader's channel: closed after its stream.dropped event,
// or on Close.
func (s *Sub) Events() <-chan api.Event { return s.ch }

// Close stops the reader.
func (s *Sub) Close() {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	s.bus.removeLocked(s)
}

func (b *Bus) removeLocked(s *Sub) {
	if _, ok := b.subs[s]; !ok {
		return
	}
	delete(b.subs, s)
	s.once.Do(func() { close(s.ch) })
}

// Readers counts the readers subscribed (health, benchmarks).
func (b *Bus) Readers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

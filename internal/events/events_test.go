package events

import (
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

func fixedNow() time.Time { return time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC) }

func TestSequenceOnlyIncreasesFromFirst(t *testing.T) {
	b := New(100, 8, 8, fixedNow)
	for i := range 20 {
		e := b.Publish(api.Event{Type: api.EventProblem})
		if e.Seq != uint64(100+i) {
			t.Fatalf("event %d: seq %d, want %d", i, e.Seq, 100+i)
		}
		if !e.At.Equal(fixedNow()) {
			t.Fatalf("event %d: at %v", i, e.At)
		}
	}
	if b.Last() != 119 {
		t.Fatalf("last %d", b.Last())
	}
}

func TestSinceReplaysWhatTheRingKeepsAndSaysWhatIsGone(t *testing.T) {
	b := New(1, 4, 8, fixedNow)
	for range 10 {
		b.Publish(api.Event{Type: api.EventProblem})
	}
	// Kept: 7..10.
	got := b.Since(8, nil)
	if len(got) != 2 || got[0].Seq != 9 || got[1].Seq != 10 {
		t.Fatalf("since 8: %+v", got)
	}
	got = b.Since(2, nil)
	if got[0].Type != api.EventStreamBehind || got[0].Missed != 4 {
		t.Fatalf("since 2: first is %+v, want stream.behind missing 3..6", got[0])
	}
	if len(got) != 5 || got[1].Seq != 7 {
		t.Fatalf("since 2: %+v", got)
	}
	// Exactly the one before the oldest kept: nothing missed.
	if got := b.Since(6, nil); got[0].Type == api.EventStreamBehind {
		t.Fatalf("since 6 says behind: %+v", got[0])
	}
	// A filter applies to the replay.
	b.Publish(api.Event{Type: api.EventAgentState, Agent: "a"})
	got = b.Since(8, func(e api.Event) bool { return e.Agent == "a" })
	if len(got) != 1 || got[0].Agent != "a" {
		t.Fatalf("filtered: %+v", got)
	}
}

func TestSubscribeGetsBacklogThenNewEventsInOrder(t *testing.T) {
	b := New(1, 16, 8, fixedNow)
	b.Publish(api.Event{Type: api.EventProblem}) // 1
	b.Publish(api.Event{Type: api.EventProblem}) // 2
	s := b.Subscribe(1, nil)
	defer s.Close()
	b.Publish(api.Event{Type: api.EventProblem}) // 3
	for want := uint64(2); want <= 3; want++ {
		select {
		case e := <-s.Events():
			if e.Seq != want {
				t.Fatalf("got seq %d, want %d", e.Seq, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no event %d", want)
		}
	}
}

func TestASlowReaderIsDroppedWithALastEventAndNeverBlocksPublish(t *testing.T) {
	b := New(1, 64, 4, fixedNow)
	slow := b.Subscribe(0, nil)
	for range 50 { // would block forever if Publish waited for slow
		b.Publish(api.Event{Type: api.EventProblem})
	}
	var last api.Event
	n := 0
	for e := range slow.Events() {
		last = e
		n++
	}
	if last.Type != api.EventStreamDropped {
		t.Fatalf("slow reader's last event is %+v, want stream.dropped", last)
	}
	if n != 5 {
		t.Fatalf("slow reader got %d events, want its buffer's 4 and the drop", n)
	}
	// Taking up after the drop's number misses nothing and repeats nothing.
	if last.Seq != 4 {
		t.Fatalf("stream.dropped seq %d, want 4 (the last event the reader was given)", last.Seq)
	}
	if again := b.Since(last.Seq, nil); len(again) == 0 || again[0].Seq != 5 {
		t.Fatalf("since the drop: %+v, want from 5", again)
	}
	if b.Readers() != 0 {
		t.Fatalf("readers %d after the drop, want 0", b.Readers())
	}
	// A reader that reads keeps up while others are dropped.
	live := b.Subscribe(0, nil)
	defer live.Close()
	for i := range 50 {
		e := b.Publish(api.Event{Type: api.EventProblem})
		if got := <-live.Events(); got.Seq != e.Seq {
			t.Fatalf("event %d: live reader got %d, want %d", i, got.Seq, e.Seq)
		}
	}
	slow.Close() // closing twice is harmless
}

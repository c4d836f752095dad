package clock

import (
	"testing"
	"time"
)

func TestFakeFiresTimersInOrderWhenAdvanced(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f := NewFake(start)
	late := f.NewTimer(2 * time.Second)
	early := f.After(time.Second)
	stopped := f.NewTimer(time.Second)
	if !stopped.Stop() {
		t.Fatal("Stop of an armed timer reported false")
	}
	f.Advance(1500 * time.Millisecond)
	select {
	case at := <-early:
		if !at.Equal(start.Add(time.Second)) {
			t.Fatalf("early fired at %v, want %v", at, start.Add(time.Second))
		}
	default:
		t.Fatal("timer due at 1s did not fire after advancing 1.5s")
	}
	select {
	case <-late.C():
		t.Fatal("timer due at 2s fired at 1.5s")
	case <-stopped.C():
		t.Fatal("stopped timer fired")
	default:
	}
	if got := f.Pending(); got != 1 {
		t.Fatalf("Pending = %d, want 1", got)
	}
	f.Advance(time.Second)
	select {
	case <-late.C():
	default:
		t.Fatal("timer due at 2s did not fire at 2.5s")
	}
	if got := f.Since(start); got != 2500*time.Millisecond {
		t.Fatalf("Since = %v", got)
	}
}

func TestFakeResetRearms(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	tm := f.NewTimer(time.Second)
	f.Advance(time.Second)
	tm.Reset(time.Second) // drops the stale fire
	select {
	case <-tm.C():
		t.Fatal("stale fire kept after Reset")
	default:
	}
	f.Advance(time.Second)
	select {
	case <-tm.C():
	default:
		t.Fatal("reset timer did not fire")
	}
}

func TestFakeSleepWakesOnAdvance(t *testing.T) {
	f := NewFake(time.Unix(0, 0))
	done := make(chan struct{})
	go func() { f.Sleep(time.Minute); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for f.Pending() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("sleeper never armed its timer")
		}
		time.Sleep(time.Millisecond)
	}
	f.Advance(time.Minute)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Sleep did not return after Advance")
	}
}

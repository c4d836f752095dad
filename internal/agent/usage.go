package agent

import (
	"context"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// usageCache is an agent's usage totals for one day, read from its
// conversation. Listings show what it holds and never wait for a read:
// a stale entry (a turn ended, the conversation changed, the day turned)
// is read again in the background, one read per agent at a time.
type usageCache struct {
	day          string
	conversation string
	turnEnds     int
	usage        *api.Usage
	valid        bool
	busy         bool
}

// usageTimeout bounds one background read of an agent's record.
const usageTimeout = 30 * time.Second

// usageToday is a's usage of turns begun today (local time), as last read;
// it starts a read when that is stale.
func (a *agent) usageToday() *api.Usage {
	day := a.m.clk.Now().Format(time.DateOnly)
	a.mu.Lock()
	c := &a.usage
	fresh := c.valid && c.day == day && c.conversation == a.rec.SessionID && c.turnEnds == a.turnEnds
	start := !fresh && !c.busy && !a.deleted
	if start {
		c.busy = true
	}
	usage := c.usage
	a.mu.Unlock()
	if !start {
		return usage
	}
	// Registered with the manager outside a.mu: the manager's lock comes
	// before an agent's (runtime.go, the lock order).
	leave, err := a.m.enter()
	if err != nil {
		a.mu.Lock()
		a.usage.busy = false
		a.mu.Unlock()
		return usage
	}
	go func() {
		defer leave()
		a.refreshUsage()
	}()
	return usage
}

// refreshUsage reads a's conversation and keeps today's totals. While the
// newest turn runs by the record (its end may come after the event that
// made the cache stale), the totals are kept but not taken as fresh.
func (a *agent) refreshUsage() {
	now := a.m.clk.Now()
	a.mu.Lock()
	conv, ends := a.rec.SessionID, a.turnEnds
	a.mu.Unlock()
	next := usageCache{day: now.Format(time.DateOnly), conversation: conv, turnEnds: ends, valid: true}
	if conv != "" {
		ctx, cancel := context.WithTimeout(a.m.ctx, usageTimeout)
		turns, _, err := a.readConversation(ctx, conv)
		cancel()
		if err != nil {
			// Kept as read (no totals) until the next turn ends, so a
			// record that cannot be read is not read on every listing.
			a.m.log.Debug("usage not read", "agent", a.name(), "err", err)
		}
		start := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
		for _, t := range turns {
			if !t.StartedAt.Before(start) {
				next.usage = next.usage.Add(t.Usage)
			}
		}
		if n := len(turns); n > 0 && turns[n-1].Outcome == harness.OutcomeRunning {
			next.valid = false
		}
	}
	a.mu.Lock()
	a.usage = next
	a.mu.Unlock()
}

package agent

import (
	"context"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// usageCache is an agent's usage totals for one day, read from its
// conversation: listings show them, and read the record again only after
// a turn ended, the conversation changed or the day turned.
type usageCache struct {
	day          string
	conversation string
	turnEnds     int
	usage        *api.Usage
	valid        bool
}

// usageTimeout bounds the record read one listing makes per agent.
const usageTimeout = 2 * time.Second

// usageToday is a's usage of turns begun today (local time).
func (a *agent) usageToday(ctx context.Context) *api.Usage {
	now := a.m.clk.Now()
	day := now.Format(time.DateOnly)
	a.mu.Lock()
	conv, ends := a.rec.SessionID, a.turnEnds
	c := a.usage
	a.mu.Unlock()
	if c.valid && c.day == day && c.conversation == conv && c.turnEnds == ends {
		return c.usage
	}
	next := usageCache{day: day, conversation: conv, turnEnds: ends, valid: true}
	if conv != "" {
		rctx, cancel := context.WithTimeout(ctx, usageTimeout)
		turns, _, err := a.readConversation(rctx, conv)
		cancel()
		if err != nil {
			return c.usage // keep the last totals; the next listing tries again
		}
		start := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
		for _, t := range turns {
			if !t.StartedAt.Before(start) {
				next.usage = next.usage.Add(t.Usage)
			}
		}
	}
	a.mu.Lock()
	a.usage = next
	a.mu.Unlock()
	return next.usage
}

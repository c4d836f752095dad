package daemon

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// Drainable is what the graceful-restart drain needs of the agent manager
// (internal/agent.Manager has it; a test's fake may).
type Drainable interface {
	// PauseDeliveries holds every queue before its next message.
	PauseDeliveries()
	// ResumeDeliveries lets held messages go.
	ResumeDeliveries()
	// TurnsInFlight names the agents working now (a message being
	// delivered, or a screen that says busy).
	TurnsInFlight(ctx context.Context) []string
}

// Drain defaults and bounds.
const (
	defaultDrainTimeout = 60 * time.Second
	defaultDrainHold    = 120 * time.Second
	maxDrainSeconds     = 3600
	defaultDrainPoll    = 250 * time.Millisecond
)

// drainer runs POST /drain and /drain/resume: pause deliveries, then wait
// until nothing is working, resuming if it gives up.
type drainer struct {
	agents Drainable // nil: nothing to pause (a fake manager without it)
	// awaiting names the persistent firings waiting for their turn end.
	awaiting func() []string
	poll     time.Duration
	log      *slog.Logger

	mu   sync.Mutex
	hold *time.Timer // ends the pause when nobody resumes it
	// draining serializes drains: a second waits for the first.
	draining sync.Mutex
}

func newDrainer(agents Agents, awaiting func() []string, poll time.Duration, log *slog.Logger) *drainer {
	d := &drainer{awaiting: awaiting, poll: poll, log: log}
	if a, ok := agents.(Drainable); ok {
		d.agents = a
	}
	if d.poll <= 0 {
		d.poll = defaultDrainPoll
	}
	return d
}

// seconds reads a request's duration field: 0 means def.
func seconds(field string, v float64, def time.Duration) (time.Duration, error) {
	switch {
	case v == 0:
		return def, nil
	case v < 0 || v > maxDrainSeconds || math.IsNaN(v):
		return 0, api.Errorf(api.CodeInvalidArgs, "POST /drain: %s must be from 0 to %d seconds, got %v", field, maxDrainSeconds, v)
	}
	return time.Duration(v * float64(time.Second)), nil
}

func (d *drainer) pause(hold time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.agents != nil {
		d.agents.PauseDeliveries()
	}
	if d.hold != nil {
		d.hold.Stop()
	}
	d.hold = time.AfterFunc(hold, func() {
		d.log.Warn("drain: nobody resumed or restarted the daemon within the hold; resuming deliveries", "hold", hold)
		d.resume()
	})
}

func (d *drainer) resume() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.hold != nil {
		d.hold.Stop()
		d.hold = nil
	}
	if d.agents != nil {
		d.agents.ResumeDeliveries()
	}
}

// busy is everything working now: agents, then persistent firings.
func (d *drainer) busy(ctx context.Context) []string {
	var out []string
	if d.agents != nil {
		out = append(out, d.agents.TurnsInFlight(ctx)...)
	}
	if d.awaiting != nil {
		for _, f := range d.awaiting() {
			out = append(out, "persistent "+f)
		}
	}
	return out
}

func (d *drainer) drain(ctx context.Context, req api.DrainRequest) (api.DrainResult, error) {
	timeout, err := seconds("timeout_seconds", req.TimeoutSeconds, defaultDrainTimeout)
	if err != nil {
		return api.DrainResult{}, err
	}
	hold, err := seconds("hold_seconds", req.HoldSeconds, defaultDrainHold)
	if err != nil {
		return api.DrainResult{}, err
	}
	d.draining.Lock()
	defer d.draining.Unlock()
	start := time.Now()
	d.pause(hold)
	busy := d.busy(ctx)
	if req.Force {
		d.log.Info("drain forced", "busy", strings.Join(busy, ", "))
		return api.DrainResult{Drained: len(busy) == 0, Paused: true, Busy: busy, WaitedMS: 0}, nil
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(d.poll)
	defer tick.Stop()
	for len(busy) > 0 {
		select {
		case <-tick.C:
			busy = d.busy(ctx)
		case <-deadline.C:
			d.resume()
			d.log.Warn("drain timed out; deliveries resumed", "busy", strings.Join(busy, ", "), "timeout", timeout)
			return api.DrainResult{}, api.Errorf(api.CodeDrainTimeout,
				"drain: still working after %s: %s (deliveries resumed; --force restarts anyway)", timeout, strings.Join(busy, ", "))
		case <-ctx.Done():
			d.resume()
			return api.DrainResult{}, api.Errorf(api.CodeInternal, "drain: cancelled by the caller; deliveries resumed")
		}
	}
	waited := time.Since(start)
	d.log.Info("drained", "waited", waited.Round(time.Millisecond))
	return api.DrainResult{Drained: true, Paused: true, WaitedMS: waited.Milliseconds()}, nil
}

func (s *server) drainRoute(r *http.Request) (any, error) {
	var req api.DrainRequest
	if err := decodeBody(r, &req, true); err != nil {
		return nil, err
	}
	return s.drainer.drain(r.Context(), req)
}

func (s *server) resumeRoute(r *http.Request) (any, error) {
	if err := decodeBody(r, &struct{}{}, true); err != nil {
		return nil, err
	}
	s.drainer.resume()
	return map[string]bool{"ok": true}, nil
}

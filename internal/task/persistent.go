package task

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/statefile"
	"github.com/blackpaw-studio/leo/internal/turnend"
)

// Persistent tasks deliver their prompt into an agent instead of running
// headless. A firing:
//
//  1. is written to state (pending firings) before anything else, so a
//     daemon that dies mid-firing takes it up again;
//  2. ensures its agent (running → as is; stopped → started with resume;
//     missing → spawned) and queues the prompt, with the run's marker line,
//     on the agent's durable delivery queue;
//  3. waits for the harness's own turn-end signal of the turn that carries
//     the marker (Stop hook, notify program, plugin), up to the task's
//     timeout;
//  4. is recorded, and removed from state.

// AgentPort is what a persistent firing needs of the agent manager.
type AgentPort interface {
	// Ensure makes agent exist and run: the ensure-exists ladder. target
	// is the scope the agent comes from (the task's template, or the task
	// itself for an implicit agent). It returns what it did ("running",
	// "started", "spawned").
	Ensure(ctx context.Context, agent string, target *config.Resolved) (string, error)
	// Enqueue puts message on agent's durable queue and returns its id.
	Enqueue(ctx context.Context, agent, message string) (string, error)
	// Delivery is the outcome of a queued message: done closes when it is
	// known, then err() is nil for delivered. ok is false for an id the
	// agent does not know (its outcome was known before a restart).
	Delivery(agent, id string) (done <-chan struct{}, err func() error, ok bool)
}

// LimitHolds is an AgentPort that knows when a usage limit holds an
// agent's messages (the agent manager): a firing's timeout does not run
// out meanwhile.
type LimitHolds interface {
	// HeldByLimit is a channel that closes when the limit holding agent
	// ends, and since when it holds; nil when none holds it.
	HeldByLimit(agent string) (lifted <-chan struct{}, since time.Time)
}

// TurnEnd is the end of an agent's turn, as its harness signalled it.
type TurnEnd = harness.TurnEnd

// TurnEnds hands out waits for the turn whose input is a firing's message
// (turnend.Hub in the daemon).
type TurnEnds interface {
	// Await returns a channel that receives the end of agent's turn whose
	// input is message, and what stops waiting. It is called before the
	// message is queued, so a turn that ends at once is not missed.
	Await(agent, message string) (<-chan TurnEnd, func())
}

// PersistentOptions configure the persistent-firing side of the service.
type PersistentOptions struct {
	Agents   AgentPort
	TurnEnds TurnEnds
	// StatePath is the file pending firings are kept in.
	StatePath string
	Clock     clock.Clock
	Log       *slog.Logger
}

// Persistent runs persistent firings.
type Persistent struct {
	opts PersistentOptions
	// Problem is what the daemon reports when the pending firings file
	// was not understood (it is kept aside).
	Problem string

	mu      sync.Mutex
	pending map[string]pendingFiring // by run id
}

// pendingFiring is a firing that has not ended, as state keeps it.
type pendingFiring struct {
	Rec      Record    `json:"run"`
	Deadline time.Time `json:"deadline"`
	// Message is what the firing delivers (turnend.Message): its turn is
	// found by it, before and after a restart.
	Message string `json:"message"`
	// MessageID is the queued message, once the agent took it.
	MessageID    string `json:"message_id,omitempty"`
	NotifyOnFail bool   `json:"notify_on_fail,omitempty"`
}

// pendingFile is state/task-pending.json.
type pendingFile struct {
	Version int             `json:"version"`
	Firings []pendingFiring `json:"firings"`
}

// NewPersistent makes the persistent side and reads the pending firings an
// earlier daemon left.
func NewPersistent(opts PersistentOptions) (*Persistent, error) {
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	p := &Persistent{opts: opts, pending: map[string]pendingFiring{}}
	var f pendingFile
	_, err := statefile.ReadChecked(opts.StatePath, &f, func([]byte) error {
		if f.Version != 1 {
			return fmt.Errorf("version %d (this leo knows 1)", f.Version)
		}
		return nil
	})
	var corrupt *statefile.CorruptError
	switch {
	case errors.As(err, &corrupt):
		// Kept aside, never taken as empty without a word: the firings in
		// it are lost to this daemon, and the operator is told where.
		p.Problem = "pending persistent firings: " + corrupt.Error()
		opts.Log.Error("pending persistent firings", "err", corrupt)
		f = pendingFile{}
	case err != nil:
		return nil, fmt.Errorf("pending persistent firings: %w", err)
	}
	for _, pf := range f.Firings {
		if pf.Rec.ID != "" && pf.Rec.Task != "" {
			p.pending[pf.Rec.ID] = pf
		}
	}
	return p, nil
}

// save writes the pending firings with change applied; memory changes
// only once the file does.
func (p *Persistent) save(change func(m map[string]pendingFiring)) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	next := maps.Clone(p.pending)
	change(next)
	f := pendingFile{Version: 1, Firings: slices.SortedFunc(maps.Values(next), func(a, b pendingFiring) int {
		return strings.Compare(a.Rec.ID, b.Rec.ID)
	})}
	if f.Firings == nil {
		f.Firings = []pendingFiring{}
	}
	if err := statefile.WriteJSON(p.opts.StatePath, f, 0o600); err != nil {
		return err
	}
	p.pending = next
	return nil
}

// deliver runs one firing of a persistent task into its agent and returns
// its record (Service.execute records it).
func (s *Service) deliver(ctx context.Context, res *config.Resolved, rec Record, prompt string) Record {
	p := s.opts.Persistent
	clk := s.opts.Clock
	if p == nil {
		return ended(rec, clk.Now(), OutcomeFailed, ReasonDelivery, "this daemon has no agents to deliver persistent tasks into")
	}
	cfg := s.opts.Config()
	target := res
	rec.Agent = agentOf(res)
	if res.Template != "" {
		t, err := cfg.ResolveTemplate(res.Template)
		if err != nil {
			return ended(rec, clk.Now(), OutcomeFailed, ReasonConfigError, err.Error())
		}
		target = t
	}
	rec.Harness = target.HarnessName
	pf := pendingFiring{Rec: rec, Deadline: rec.Start.Add(res.Timeout), NotifyOnFail: res.NotifyOnFail,
		Message: turnend.Message(prompt, rec.Task, rec.ID)}
	// A prompt no TUI may be given (ESC, other controls, too long) fails
	// here, before an agent is started or spawned for it.
	if _, err := delivery.PasteText(pf.Message); err != nil {
		return ended(rec, clk.Now(), OutcomeFailed, ReasonConfigError, fmt.Sprintf("%s.prompt_file %s: %v", res.Scope, res.PromptFile, err))
	}
	if err := p.save(func(m map[string]pendingFiring) { m[rec.ID] = pf }); err != nil {
		return ended(rec, clk.Now(), OutcomeFailed, ReasonDelivery, "cannot keep the firing in state: "+err.Error())
	}
	turn, stop := p.opts.TurnEnds.Await(rec.Agent, pf.Message)
	defer stop()

	out := func() Record {
		if _, err := p.opts.Agents.Ensure(ctx, rec.Agent, target); err != nil {
			// The agent is the record's own field: the message is the
			// error's text as is (the spec's exact words for claude).
			return ended(rec, clk.Now(), OutcomeFailed, reasonOf(err), err.Error())
		}
		id, err := p.opts.Agents.Enqueue(ctx, rec.Agent, pf.Message)
		if err != nil {
			if api.HasCode(err, api.CodeQueueFull) {
				return ended(rec, clk.Now(), OutcomeSkipped, ReasonQueueFull, err.Error())
			}
			return ended(rec, clk.Now(), OutcomeFailed, reasonOf(err), err.Error())
		}
		pf.MessageID = id
		if err := p.save(func(m map[string]pendingFiring) { m[rec.ID] = pf }); err != nil {
			// The message is queued; only the fast path of a failed
			// delivery after a restart is lost. Wait on.
			p.opts.Log.Warn("persistent firing: could not note its message id", "task", rec.Task, "run", rec.ID, "err", err)
		}
		return p.await(ctx, pf, turn)
	}()
	p.finish(ctx, pf, out)
	return out
}

// await waits for a queued firing's delivery and then its turn end.
func (p *Persistent) await(ctx context.Context, pf pendingFiring, turn <-chan TurnEnd) Record {
	rec, clk := pf.Rec, p.opts.Clock
	timer := clk.NewTimer(max(pf.Deadline.Sub(clk.Now()), 0))
	defer timer.Stop()
	var delivered <-chan struct{}
	var deliveryErr func() error
	if pf.MessageID != "" {
		if d, e, ok := p.opts.Agents.Delivery(rec.Agent, pf.MessageID); ok {
			delivered, deliveryErr = d, e
		}
	}
	var lifted <-chan struct{} // a limit holds the agent: the timeout waits
	var heldAt time.Time
	for {
		select {
		case <-lifted:
			// The time the hold took is given back to the firing.
			lifted = nil
			timer.Reset(max(clk.Now().Sub(heldAt), time.Second))
		case te := <-turn:
			rec.SessionID, rec.Reply = te.SessionID, FirstLines(te.Reply, ReplyMaxLines, ReplyMaxBytes)
			if te.Failed {
				return ended(rec, clk.Now(), OutcomeFailed, ReasonHarnessError, te.Error)
			}
			return ended(rec, clk.Now(), OutcomeSucceeded, "", "")
		case <-delivered:
			if err := deliveryErr(); err != nil {
				return ended(rec, clk.Now(), OutcomeFailed, ReasonDelivery, "the prompt could not be delivered: "+err.Error())
			}
			delivered = nil // delivered: now the turn must end
		case <-timer.C():
			if h, ok := p.opts.Agents.(LimitHolds); ok {
				if l, since := h.HeldByLimit(rec.Agent); l != nil {
					lifted, heldAt = l, since
					if heldAt.Before(rec.Start) {
						heldAt = rec.Start
					}
					p.opts.Log.Info("persistent firing: its timeout waits while a usage limit holds the agent", "task", rec.Task, "run", rec.ID, "agent", rec.Agent)
					continue
				}
			}
			return ended(rec, clk.Now(), OutcomeTimeout, ReasonTimeout,
				fmt.Sprintf("agent %s did not signal the end of the turn within the task's timeout", rec.Agent))
		case <-ctx.Done():
			// The daemon is stopping: the firing stays pending, and the
			// next daemon takes it up (Resume).
			return Record{}
		}
	}
}

// finish drops an ended firing from state and sends the failure notice.
// A firing interrupted by shutdown (zero record) stays pending.
func (p *Persistent) finish(ctx context.Context, pf pendingFiring, out Record) {
	if out.Outcome == "" {
		return
	}
	if err := p.save(func(m map[string]pendingFiring) { delete(m, pf.Rec.ID) }); err != nil {
		p.opts.Log.Error("persistent firing: could not drop it from state", "task", pf.Rec.Task, "run", pf.Rec.ID, "err", err)
	}
	if pf.NotifyOnFail && out.Outcome != OutcomeSucceeded && out.Reason != ReasonQueueFull && ctx.Err() == nil {
		if _, err := p.opts.Agents.Enqueue(ctx, out.Agent, failureNotice(out)); err != nil {
			p.opts.Log.Warn("persistent firing: the failure notice could not be queued", "task", out.Task, "agent", out.Agent, "err", err)
		}
	}
}

// failureNotice is the short message notify_on_fail puts into the agent:
// one line of plain text, whatever the failure's message held.
func failureNotice(rec Record) string {
	msg := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, FirstLines(rec.Message, 1, 300))
	return fmt.Sprintf("[leo] task %s run %s %s (%s): %s", rec.Task, rec.ID, rec.Outcome, rec.Reason, msg)
}

// Resume takes up the firings an earlier daemon left pending. hold is
// told of each first, before any waits, so the caller counts its task as
// running before it plans anything (the slot a pending firing serves is
// not fired again, and no firing of the task overlaps it). Each then
// waits again, until its deadline, for its turn end; done is told how it
// ended (out is zero when ctx ended first: it stays pending).
func (p *Persistent) Resume(ctx context.Context, hold func(pending Record), done func(pending, out Record)) {
	p.mu.Lock()
	pending := slices.SortedFunc(maps.Values(p.pending), func(a, b pendingFiring) int {
		return strings.Compare(a.Rec.ID, b.Rec.ID)
	})
	p.mu.Unlock()
	for _, pf := range pending {
		hold(pf.Rec)
	}
	for _, pf := range pending {
		go func() {
			turn, stop := p.opts.TurnEnds.Await(pf.Rec.Agent, pf.Message)
			defer stop()
			out := p.await(ctx, pf, turn)
			p.finish(ctx, pf, out)
			done(pf.Rec, out)
		}()
	}
}

// holdResumed counts a firing taken up after a restart as its task's run.
func (s *Service) holdResumed(rec Record) {
	if !s.sched.Claim(rec.Task) {
		return // a second pending firing of one task: the first holds it
	}
	s.mu.Lock()
	s.resuming[rec.Task] = rec
	s.live[rec.Task] = &liveRun{rec: rec, done: make(chan struct{})}
	s.mu.Unlock()
}

// resumed records a firing taken up after a restart and ends its hold.
func (s *Service) resumed(pending, out Record) {
	if out.Outcome != "" {
		s.record(out)
	}
	s.mu.Lock()
	held := s.resuming[pending.Task].ID == pending.ID
	var lr *liveRun
	if held {
		delete(s.resuming, pending.Task)
		lr = s.live[pending.Task]
		delete(s.live, pending.Task)
	}
	s.mu.Unlock()
	if held {
		s.sched.Release(pending.Task)
		if lr != nil {
			close(lr.done)
		}
	}
}

// reasonOf maps an agent error to a run's reason.
func reasonOf(err error) Reason {
	switch api.CodeOf(err) {
	case api.CodeClaudeNotFound:
		return ReasonClaudeNotFound
	case api.CodeHarnessNotFound:
		return ReasonHarnessNotFound
	case api.CodeConfigError:
		return ReasonConfigError
	}
	if errors.Is(err, context.Canceled) {
		return ReasonInterrupted
	}
	return ReasonDelivery
}

// AwaitingTurnEnd names the persistent firings whose prompt an agent took
// and whose turn has not ended ("task T run R (agent A)"), sorted: the
// graceful-restart drain waits for them. A firing still queued is no turn
// yet (the drain holds it, and the next daemon delivers it).
func (p *Persistent) AwaitingTurnEnd() []string {
	p.mu.Lock()
	pending := make([]pendingFiring, 0, len(p.pending))
	for _, pf := range p.pending {
		pending = append(pending, pf)
	}
	p.mu.Unlock()
	var out []string
	for _, pf := range pending {
		if pf.MessageID == "" {
			continue
		}
		if done, errOf, ok := p.opts.Agents.Delivery(pf.Rec.Agent, pf.MessageID); ok {
			select {
			case <-done:
				if errOf() != nil {
					continue // never delivered: no turn to wait for
				}
			default:
				continue // still queued or being delivered
			}
		}
		out = append(out, fmt.Sprintf("task %s run %s (agent %s)", pf.Rec.Task, pf.Rec.ID, pf.Rec.Agent))
	}
	slices.Sort(out)
	return out
}

// Package daemontest is support for tests of the daemon's socket API, the
// client and the CLI: Agents, a small in-memory agent manager that
// satisfies daemon.Agents (it runs nothing: agents are records whose state
// flips on command), and Start, which runs a daemon in a test's background.
package daemontest

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Agents is a fake agent manager. Set the hooks before handing it to the
// daemon; they are read without locking.
type Agents struct {
	// RestoreGate, when non-nil, makes Restore block until it is closed
	// (or ctx is done), so tests can watch /health say ready:false.
	RestoreGate chan struct{}
	// SpawnErr, when it returns non-nil, fails a spawn with that error.
	SpawnErr func(api.SpawnRequest) error
	// SendResult, when set, decides what Send answers.
	SendResult func(name, message string) (api.SendResult, error)
	// Outcome, when set, answers Message (and the wait of SendAndWait);
	// by default every message is delivered.
	Outcome func(ctx context.Context, name, id, wait string) (api.MessageOutcome, error)
	// Conversations answer Conversation, by agent (default: no turns).
	Conversations map[string]api.Conversation
	// Harness is the harness spawned agents report (default "claude").
	Harness string
	// Workspace, when set, is the workspace a spawn from template gets.
	Workspace func(template string) string
	// LogsText, when set, decides what Logs answers.
	LogsText func(name string, lines int) string
	// AnswerResult, when set, decides what Answer answers (default:
	// no_prompt); every answer asked is kept (Answers).
	AnswerResult func(name string, req api.AnswerRequest) (api.AnswerResult, error)

	mu      sync.Mutex
	agents  map[string]*api.Agent
	sent    []Sent
	restore chan struct{} // closed when Restore was entered
	busy    []string      // the drain's view: turns in flight
	paused  bool

	signals []Signal
	answers []api.AnswerRequest

	configChanged atomic.Int32
	closed        atomic.Bool
	running       atomic.Bool
}

// Sent is one message Send accepted.
type Sent struct {
	Agent, Message string
	// ID is the sender's id for the message, if it named one.
	ID string
	// Sender is who the route said sent it.
	Sender string
}

// Signal is one hook signal the fake took.
type Signal struct {
	Agent  string
	Signal harness.Signal
}

// Signal records sig.
func (f *Agents) Signal(_ context.Context, name string, sig harness.Signal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signals = append(f.signals, Signal{Agent: name, Signal: sig})
}

// Signals are the hook signals taken, in order.
func (f *Agents) Signals() []Signal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Signal(nil), f.signals...)
}

// New returns an empty fake.
func New() *Agents {
	return &Agents{agents: map[string]*api.Agent{}, restore: make(chan struct{})}
}

// RestoreStarted is closed once Restore has been called.
func (f *Agents) RestoreStarted() <-chan struct{} { return f.restore }

// ConfigChangedCalls counts ConfigChanged calls.
func (f *Agents) ConfigChangedCalls() int { return int(f.configChanged.Load()) }

// Closed reports whether Close was called.
func (f *Agents) Closed() bool { return f.closed.Load() }

// Running reports whether Run is running.
func (f *Agents) Running() bool { return f.running.Load() }

// Messages returns what Send accepted, in order.
func (f *Agents) Messages() []Sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Sent(nil), f.sent...)
}

// Put adds or replaces an agent record.
func (f *Agents) Put(a api.Agent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a.TmuxSession == "" {
		a.TmuxSession = "leo-" + a.Name
	}
	f.agents[a.Name] = &a
}

func (f *Agents) Restore(ctx context.Context) error {
	close(f.restore)
	if f.RestoreGate == nil {
		return nil
	}
	select {
	case <-f.RestoreGate:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *Agents) Run(ctx context.Context) {
	f.running.Store(true)
	defer f.running.Store(false)
	<-ctx.Done()
}

func (f *Agents) Spawn(_ context.Context, req api.SpawnRequest) (api.Agent, error) {
	if f.SpawnErr != nil {
		if err := f.SpawnErr(req); err != nil {
			return api.Agent{}, err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	name := req.Name
	if name == "" {
		name = req.Template
	}
	base := name
	for i := 2; f.agents[name] != nil; i++ {
		name = base + "-" + itoa(i)
	}
	harness := f.Harness
	if harness == "" {
		harness = "claude"
	}
	now := time.Now().UTC()
	a := &api.Agent{
		Name: name, Template: req.Template, Harness: harness, State: api.StateRunning,
		TmuxSession: "leo-" + name, CreatedAt: now, StartedAt: &now,
	}
	if f.Workspace != nil {
		a.Workspace = f.Workspace(req.Template)
	}
	f.agents[name] = a
	return *a, nil
}

func (f *Agents) List() []api.Agent {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]api.Agent, 0, len(f.agents))
	for _, a := range f.agents {
		out = append(out, *a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (f *Agents) Get(name string) (api.Agent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.agents[name]
	if !ok {
		return api.Agent{}, notFound(name)
	}
	return *a, nil
}

func (f *Agents) setState(name string, st api.AgentState, restarted bool) (api.Agent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.agents[name]
	if !ok {
		return api.Agent{}, notFound(name)
	}
	a.State = st
	a.WakeOnMessage = false
	if restarted {
		a.Restarts++
	}
	return *a, nil
}

func (f *Agents) Start(_ context.Context, name string) (api.Agent, error) {
	return f.setState(name, api.StateRunning, false)
}

func (f *Agents) Stop(_ context.Context, name string) (api.Agent, error) {
	return f.setState(name, api.StateStopped, false)
}

func (f *Agents) Restart(_ context.Context, name string) (api.Agent, error) {
	return f.setState(name, api.StateRunning, true)
}

func (f *Agents) Reset(_ context.Context, name string) (api.Agent, error) {
	f.mu.Lock()
	if a, ok := f.agents[name]; ok {
		a.SessionID = ""
	}
	f.mu.Unlock()
	return f.setState(name, api.StateRunning, false)
}

// Interrupt is a no-op on a running agent; agent_stopped otherwise.
func (f *Agents) Interrupt(_ context.Context, name string) (api.Agent, error) {
	a, err := f.Get(name)
	if err == nil && a.State == api.StateStopped {
		return a, api.Errorf(api.CodeAgentStopped, "agent %s is stopped", name)
	}
	return a, err
}

// Compact records the harness's command ("/compact") as sent to a running
// agent; agent_stopped otherwise.
func (f *Agents) Compact(_ context.Context, name string) (api.SendResult, error) {
	a, err := f.Get(name)
	if err != nil {
		return api.SendResult{}, err
	}
	if a.State == api.StateStopped {
		return api.SendResult{}, api.Errorf(api.CodeAgentStopped, "agent %s is stopped", name)
	}
	n := f.record(name, "/compact")
	return api.SendResult{ID: "compact-" + itoa(n), Agent: name, Queued: 1, Delivery: api.SendQueued}, nil
}

// DeleteAgent is Delete; the fake's agents have no worktrees.
func (f *Agents) DeleteAgent(ctx context.Context, name string, _ api.DeleteRequest) (api.DeleteResult, error) {
	if err := f.Delete(ctx, name); err != nil {
		return api.DeleteResult{}, err
	}
	return api.DeleteResult{OK: true, Agent: name}, nil
}

func (f *Agents) Delete(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.agents[name]
	if !ok {
		return notFound(name)
	}
	if a.State != api.StateStopped {
		return api.Errorf(api.CodeAgentRunning, "agent %q is %s; stop it before deleting it", name, a.State)
	}
	delete(f.agents, name)
	return nil
}

func (f *Agents) Logs(_ context.Context, name string, lines int) (api.Logs, error) {
	if _, err := f.Get(name); err != nil {
		return api.Logs{}, err
	}
	if f.LogsText != nil {
		return api.Logs{Agent: name, Text: f.LogsText(name, lines)}, nil
	}
	return api.Logs{Agent: name, Text: "pane of " + name + " (" + itoa(lines) + " lines)\n"}, nil
}

// SendMessage is Send naming the message req.ID when set (recorded in
// Sent.ID; the fake remembers no ids).
func (f *Agents) SendMessage(ctx context.Context, name string, req api.SendRequest) (api.SendResult, error) {
	res, err := f.Send(ctx, name, req.Message)
	if err == nil {
		f.mu.Lock()
		f.sent[len(f.sent)-1].Sender = req.Sender
		if req.ID != "" {
			f.sent[len(f.sent)-1].ID = req.ID
			res.ID = req.ID
		}
		f.mu.Unlock()
	}
	return res, err
}

func (f *Agents) SendAndWait(ctx context.Context, name string, req api.SendRequest) (api.MessageOutcome, error) {
	timeout, err := api.ParseWaitTimeout(req.Timeout)
	if err != nil {
		return api.MessageOutcome{}, err
	}
	res, err := f.SendMessage(ctx, name, req)
	if err != nil {
		return api.MessageOutcome{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return f.Message(ctx, name, res.ID, req.Wait)
}

func (f *Agents) Message(ctx context.Context, name, id, wait string) (api.MessageOutcome, error) {
	if _, err := f.Get(name); err != nil {
		return api.MessageOutcome{}, err
	}
	if f.Outcome != nil {
		return f.Outcome(ctx, name, id, wait)
	}
	return api.MessageOutcome{ID: id, Agent: name, Status: api.MessageDelivered}, nil
}

func (f *Agents) Conversation(_ context.Context, name string, q api.ConversationQuery) (api.Conversation, error) {
	if _, err := f.Get(name); err != nil {
		return api.Conversation{}, err
	}
	c, ok := f.Conversations[name]
	if !ok {
		c = api.Conversation{Agent: name, Turns: []api.Turn{}}
	}
	if q.Last > 0 && len(c.Turns) > q.Last {
		c.Turns = c.Turns[len(c.Turns)-q.Last:]
	}
	return c, nil
}

func (f *Agents) Send(_ context.Context, name, message string) (api.SendResult, error) {
	if _, err := f.Get(name); err != nil {
		return api.SendResult{}, err
	}
	if f.SendResult != nil {
		res, err := f.SendResult(name, message)
		if err != nil {
			return res, err
		}
		f.record(name, message)
		return res, nil
	}
	n := f.record(name, message)
	return api.SendResult{ID: "msg-" + itoa(n), Agent: name, Queued: 1, Delivery: api.SendQueued}, nil
}

func (f *Agents) record(name, message string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, Sent{Agent: name, Message: message})
	return len(f.sent)
}

func (f *Agents) ConfigChanged() { f.configChanged.Add(1) }

func (f *Agents) Close() error {
	f.closed.Store(true)
	return nil
}

func notFound(name string) error {
	return api.Errorf(api.CodeNotFound, "agent %q not found", name)
}

func itoa(n int) string { return strconv.Itoa(n) }

// SetBusy marks the agents with a turn in flight (the drain's view);
// SetBusy() clears them.
func (f *Agents) SetBusy(names ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.busy = append([]string(nil), names...)
}

// Paused reports whether a drain holds deliveries.
func (f *Agents) Paused() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.paused
}

// PauseDeliveries is the drain's hold (daemon.Drainable).
func (f *Agents) PauseDeliveries() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = true
}

// ResumeDeliveries ends the hold.
func (f *Agents) ResumeDeliveries() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = false
}

// TurnsInFlight names the agents SetBusy marked.
func (f *Agents) TurnsInFlight(context.Context) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := append([]string(nil), f.busy...)
	sort.Strings(out)
	return out
}

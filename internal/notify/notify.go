// Package notify sends chosen events out of the daemon (docs/notifications.md):
// it reads the daemon's event stream, turns the events a person wants to
// hear about into notify events (needs_input, errored, limited, idle,
// task_failed, task_succeeded, crash_loop), picks the notify: entries of
// the scope the event belongs to, and hands each entry's command and
// webhook its own bounded queue. A notifier that hangs or fails slows
// nothing but its own queue: the stream is read at once, and each target
// (one entry's command, or its webhook) works through its queue in its
// own goroutine, with a deadline per try and bounded retries. Webhook URLs
// and env values are secrets: logs, errors and /health name a notifier by
// its field ("the webhook of templates.x.notify[0]"), never by its URL.
package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/events"
)

// DefaultQueueMax is how many notifications wait for one target; when
// more come, the oldest waiting one is dropped (and counted).
const DefaultQueueMax = 64

// Options configure an Engine.
type Options struct {
	// Config is the running config; a reload's notify: lists apply to the
	// next event.
	Config func() *config.Config
	// AgentScope names the config scope an agent's events go to: its
	// template, or the persistent task it was launched for. ok false (an
	// agent leo no longer has) means the top level's notifiers.
	AgentScope func(agent string) (template, task string, ok bool)
	Log        *slog.Logger
	// Clock times the deadlines and the retries' backoff; nil is the wall
	// clock.
	Clock clock.Clock
	// Run runs a notifier's command: the package's one exec seam; nil is
	// Exec.
	Run Runner
	// HTTP posts to webhooks; nil is a client that follows no redirect.
	HTTP *http.Client
	// Environ is the environment a command starts from (its env: is laid
	// over it); nil is os.Environ.
	Environ func() []string
	// Dir is the commands' working directory (the leo home).
	Dir string
	// QueueMax bounds each target's queue (0: DefaultQueueMax).
	QueueMax int
	// UserAgent is the webhooks' User-Agent ("leo/<version>").
	UserAgent string
}

// Engine is the notifier engine. Safe for concurrent use.
type Engine struct {
	opts Options
	clk  clock.Clock
	log  *slog.Logger
	http *http.Client

	ctx    context.Context // ended by Close: running tries stop
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	targets map[string]*target
	// attn is each agent's last attention as notified ("state\x00prompt"),
	// so a repeated event is not sent twice; looping marks the agents
	// whose crash loop was sent.
	attn    map[string]string
	looping map[string]bool
	missed  uint64
	closed  bool
}

// target is one notifier's command or webhook: its queue and what it did.
type target struct {
	key     string // "notify[0].webhook"
	kind    string
	queue   []job
	running bool
	status  api.NotifierStatus
}

// job is one notification for one target.
type job struct {
	n     config.ResolvedNotifier
	kind  string
	event string
	body  []byte
}

// New returns an engine; Run feeds it the stream.
func New(opts Options) *Engine {
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Run == nil {
		opts.Run = Exec
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.QueueMax <= 0 {
		opts.QueueMax = DefaultQueueMax
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "leo"
	}
	hc := opts.HTTP
	if hc == nil {
		hc = NewHTTPClient()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Engine{opts: opts, clk: opts.Clock, log: opts.Log, http: hc, ctx: ctx, cancel: cancel,
		targets: map[string]*target{}, attn: map[string]string{}, looping: map[string]bool{}}
}

// NewHTTPClient is the webhooks' client: it follows no redirect (a
// redirect's answer counts as a failure), so the event never goes to a
// host leo.yaml does not name.
func NewHTTPClient() *http.Client {
	return &http.Client{
		Transport: http.DefaultTransport.(*http.Transport).Clone(),
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// streamTypes are the stream events the engine reads.
var streamTypes = map[string]bool{
	api.EventAgentAttention: true, api.EventAgentState: true, api.EventAgentExited: true,
	api.EventAgentResumed: true,
	api.EventTurnEnded:    true, api.EventTaskRunEnded: true,
}

// Run reads bus until ctx ends. Reading never waits on a notifier; when
// the bus drops the engine anyway (it fell behind), it reads again from
// the last event it handled, catching up from the bus's ring.
func (e *Engine) Run(ctx context.Context, bus *events.Bus) {
	filter := func(ev api.Event) bool { return streamTypes[ev.Type] }
	last := bus.Last()
	for {
		sub := bus.Subscribe(last, filter)
		dropped := false
		for !dropped {
			select {
			case <-ctx.Done():
				sub.Close()
				return
			case ev, ok := <-sub.Events():
				switch {
				case !ok:
					dropped = true
				case ev.Type == api.EventStreamDropped:
					e.log.Warn("the notifier engine fell behind the event stream; reading on from its last event", "seq", last)
					dropped = true
				case ev.Type == api.EventStreamBehind:
					e.mu.Lock()
					e.missed += ev.Missed
					e.mu.Unlock()
					e.log.Warn("the notifier engine missed events the stream no longer keeps", "missed", ev.Missed)
				default:
					last = ev.Seq
					e.Handle(*ev)
				}
			}
		}
		sub.Close()
	}
}

// Handle turns one stream event into notifications, if it is one a
// notifier listens for. It never waits for a notifier.
func (e *Engine) Handle(ev api.Event) {
	name, ok := e.notifyEvent(ev)
	if !ok {
		return
	}
	cfg := e.opts.Config()
	if cfg == nil {
		return
	}
	section, scope := e.scopeOf(ev)
	for _, n := range cfg.Notifiers(section, scope) {
		if !n.Listens(name) {
			continue
		}
		body, err := json.Marshal(notification(name, n.Name, ev, false))
		if err != nil {
			e.log.Error("encoding a notification", "notifier", n.Name, "err", err)
			continue
		}
		for _, kind := range kinds(n) {
			e.enqueue(job{n: n, kind: kind, event: name, body: body})
		}
	}
}

// kinds are the targets of a notifier: its command, its webhook, or both.
func kinds(n config.ResolvedNotifier) []string {
	var out []string
	if len(n.Command) > 0 {
		out = append(out, api.NotifierCommand)
	}
	if n.Webhook != "" {
		out = append(out, api.NotifierWebhook)
	}
	return out
}

// notifyEvent maps a stream event onto a notify event, once per change:
// a needs_input per prompt, errored and limited when the agent enters
// them, idle when a turn ends well, a crash loop once per loop.
func (e *Engine) notifyEvent(ev api.Event) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch ev.Type {
	case api.EventAgentState:
		// A new launch, a stop or a delete starts the agent afresh.
		delete(e.attn, ev.Agent)
		if ev.State == "deleted" || ev.State == string(api.StateStopped) {
			delete(e.looping, ev.Agent)
		}
	case api.EventAgentAttention:
		a := ev.Attention
		if a == nil {
			delete(e.attn, ev.Agent)
			return "", false
		}
		key := string(a.State)
		if a.Prompt != nil {
			key += "\x00" + a.Prompt.ID
		}
		prev := e.attn[ev.Agent]
		e.attn[ev.Agent] = key
		switch a.State {
		case api.AttentionNeedsInput, api.AttentionErrored, api.AttentionLimited:
			if key != prev {
				return string(a.State), true
			}
		}
	case api.EventAgentResumed:
		return api.NotifyResumed, true
	case api.EventTurnEnded:
		if ev.State == "ok" {
			return api.NotifyIdle, true
		}
	case api.EventAgentExited:
		if ev.Failures < api.CrashLoopFailures {
			delete(e.looping, ev.Agent)
			return "", false
		}
		if !e.looping[ev.Agent] {
			e.looping[ev.Agent] = true
			return api.NotifyCrashLoop, true
		}
	case api.EventTaskRunEnded:
		switch api.Outcome(ev.State) {
		case api.OutcomeSucceeded:
			return api.NotifyTaskSucceeded, true
		case api.OutcomeFailed, api.OutcomeTimeout:
			return api.NotifyTaskFailed, true
		}
	}
	return "", false
}

// scopeOf is the config scope an event's notifiers come from.
func (e *Engine) scopeOf(ev api.Event) (section, name string) {
	if ev.Type == api.EventTaskRunEnded && ev.Task != "" {
		return config.SectionTasks, ev.Task
	}
	if ev.Agent == "" || e.opts.AgentScope == nil {
		return "", ""
	}
	template, task, ok := e.opts.AgentScope(ev.Agent)
	switch {
	case !ok:
		return "", ""
	case template != "":
		return config.SectionTemplates, template
	case task != "":
		return config.SectionTasks, task
	}
	return "", ""
}

func targetKey(notifier, kind string) string { return notifier + "." + kind }

// describe names a target in logs and problems: "the webhook of notify[0]".
func describe(notifier, kind string) string { return "the " + kind + " of " + notifier }

// enqueue puts j on its target's queue (dropping the oldest waiting one
// when full) and starts the target's worker if it is not running.
func (e *Engine) enqueue(j job) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	key := targetKey(j.n.Name, j.kind)
	t := e.targets[key]
	if t == nil {
		t = &target{key: key, kind: j.kind}
		e.targets[key] = t
	}
	if len(t.queue) >= e.opts.QueueMax {
		old := t.queue[0]
		t.queue = t.queue[1:]
		t.status.Dropped++
		t.status.Failing = true
		t.status.LastError = fmt.Sprintf("a %s notification was dropped: %d were waiting (the notifier is slow or failing)", old.event, e.opts.QueueMax)
		now := e.clk.Now().UTC()
		t.status.LastErrorAt = &now
		e.log.Warn("notification dropped: the notifier's queue is full", "notifier", j.n.Name, "kind", j.kind, "event", old.event, "queue_max", e.opts.QueueMax)
	}
	t.queue = append(t.queue, j)
	if !t.running {
		t.running = true
		e.wg.Add(1)
		go e.work(t)
	}
}

// work delivers t's queue in order, then ends.
func (e *Engine) work(t *target) {
	defer e.wg.Done()
	for {
		e.mu.Lock()
		if len(t.queue) == 0 || e.closed {
			t.running = false
			e.mu.Unlock()
			return
		}
		j := t.queue[0]
		t.queue = t.queue[1:]
		e.mu.Unlock()

		attempts, err := e.deliver(e.ctx, j)
		now := e.clk.Now().UTC()
		e.mu.Lock()
		if err == nil {
			t.status.Sent++
			t.status.Failing = false
			t.status.LastOK = &now
		} else if e.ctx.Err() == nil {
			t.status.Failed++
			t.status.Failing = true
			t.status.LastError = fmt.Sprintf("%s notification failed after %d attempt(s): %v", j.event, attempts, err)
			t.status.LastErrorAt = &now
		}
		e.mu.Unlock()
		switch {
		case err == nil:
			e.log.Info("notification sent", "notifier", j.n.Name, "kind", j.kind, "event", j.event, "attempts", attempts)
		case e.ctx.Err() == nil:
			e.log.Error("notification failed: "+describe(j.n.Name, j.kind)+" gave up", "event", j.event, "attempts", attempts, "err", err.Error())
		}
	}
}

// deliver tries j up to 1+retries times, waiting 1s, 2s, 4s… (at most
// maxBackoff) between tries. A webhook's answer that another try cannot
// change (a 4xx other than 408 and 429) ends the tries.
func (e *Engine) deliver(ctx context.Context, j job) (attempts int, err error) {
	for attempt := 0; ; attempt++ {
		err = e.try(ctx, j)
		attempts = attempt + 1
		if err == nil || attempt >= j.n.Retries || ctx.Err() != nil || isPermanent(err) {
			return attempts, err
		}
		e.log.Warn("notification failed; trying again", "notifier", j.n.Name, "kind", j.kind, "event", j.event,
			"attempt", attempts, "retry_in", backoff(attempt), "err", err.Error())
		t := e.clk.NewTimer(backoff(attempt))
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return attempts, err
		}
	}
}

// maxBackoff bounds the wait between two tries.
const maxBackoff = time.Minute

// backoff is the wait after the try numbered attempt (0 first): 1s, 2s,
// 4s, … up to maxBackoff.
func backoff(attempt int) time.Duration {
	d := time.Second << min(attempt, 10)
	return min(d, maxBackoff)
}

// try makes one try of j.
func (e *Engine) try(ctx context.Context, j job) error {
	if j.kind == api.NotifierWebhook {
		return e.post(ctx, j.n, j.body)
	}
	return e.command(ctx, j.n, j.event, j.body)
}

// Close stops the engine: running tries end (a command's process group
// is killed), waiting notifications are dropped. It waits for the
// workers.
func (e *Engine) Close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.cancel()
	e.wg.Wait()
}

// Status lists every notifier target of the running config with what it
// did since the daemon started (GET /notify).
func (e *Engine) Status() api.NotifyStatus {
	out := api.NotifyStatus{Notifiers: []api.NotifierStatus{}}
	cfg := e.opts.Config()
	if cfg == nil {
		return out
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out.Missed = e.missed
	for _, n := range cfg.AllNotifiers() {
		for _, kind := range kinds(n) {
			key := targetKey(n.Name, kind)
			s := api.NotifierStatus{}
			if t := e.targets[key]; t != nil {
				s = t.status
				s.Queued = len(t.queue)
			}
			s.Target, s.Kind, s.Events = key, kind, append([]string{}, n.Events...)
			if kind == api.NotifierCommand {
				s.Program = secretsOf(n).scrub(n.Command[0])
			}
			out.Notifiers = append(out.Notifiers, s)
		}
	}
	return out
}

// Problems are the failing notifiers, for /health.
func (e *Engine) Problems() []string {
	var out []string
	for _, s := range e.Status().Notifiers {
		if !s.Failing {
			continue
		}
		// No time in the text: the daemon puts each new problem text on
		// the stream, and the time is in GET /notify.
		notifier, kind := s.Target[:len(s.Target)-len(s.Kind)-1], s.Kind
		out = append(out, fmt.Sprintf("notify: %s is failing: %s; `leo notify test` checks it", describe(notifier, kind), s.LastError))
	}
	return out
}

// Package harness defines what a coding-agent CLI adapter is: its option
// schema, its model rules, how a harness-neutral launch spec becomes argv and
// env, and how its TUI screen and session ids are read. Adapters live in
// internal/harness/<name> and register themselves in init(), the way caddy
// modules do; nothing above an adapter knows a harness-specific flag.
package harness

import (
	"context"
	"time"
)

// Kind is a leo primitive a harness may run.
type Kind string

const (
	// KindTask is a one-shot scheduled task: a headless run.
	KindTask Kind = "task"
	// KindAgent is an ephemeral agent: a resident TUI in tmux.
	KindAgent Kind = "agent"
	// KindPersistent is a persistent task: it delivers into an agent.
	KindPersistent Kind = "persistent"
)

// Harness is one adapter. Implementations must be safe for concurrent use.
type Harness interface {
	// Name is the registry key and the value of `harness:` in leo.yaml.
	Name() string
	// Binary is the executable looked up on PATH ("claude", "codex", "opencode", "pi").
	Binary() string

	// OptionsSchema lists every harness_options key the adapter accepts, in
	// display order. It drives DecodeOptions and the web forms.
	OptionsSchema() []OptionField
	// DecodeOptions strictly validates a raw harness_options map. Errors are
	// relative to the map ("unknown option \"foo\" (valid: …)"); the caller
	// prefixes the scope ("templates.x.harness_options: ").
	DecodeOptions(raw map[string]any) (Options, error)
	// ValidateModel accepts "" always (the harness picks its default).
	ValidateModel(model string) error
	// SupportsChannels reports whether channels:/dev_channels: are valid.
	SupportsChannels() bool
	// SupportsKind reports whether the harness can run a primitive.
	SupportsKind(k Kind) bool

	// Interactive builds the resident TUI launch of an agent.
	Interactive(spec LaunchSpec) (Command, error)
	// Headless builds a one-shot run of spec.Prompt.
	Headless(spec LaunchSpec) (Command, error)

	// Sessions tells how conversation ids are chosen, found and checked.
	Sessions() SessionPolicy
	// Screen classifies a capture of the harness's TUI pane.
	Screen() ScreenReader
}

// ModelDefaulter is implemented by adapters that have a built-in default
// model: the end of the model cascade for a scope that runs the defaults'
// harness and that nothing gives a model. It must pass ValidateModel. An
// adapter without one leaves the choice to the harness itself ("").
type ModelDefaulter interface {
	DefaultModel() string
}

// DefaultModel is h's built-in default model, "" when it has none.
func DefaultModel(h Harness) string {
	if d, ok := h.(ModelDefaulter); ok {
		return d.DefaultModel()
	}
	return ""
}

// Preparer is implemented by adapters that must set something up outside the
// launch itself before an agent's first start (trusting a workspace, writing
// a managed block). It must be idempotent and touch only what it owns.
type Preparer interface {
	Prepare(ctx context.Context, spec LaunchSpec) error
}

// Options is a decoded harness_options map. Values are canonical Go types:
// bool, string, []string, or map[string]any (for OptionYAMLMap).
type Options map[string]any

// Bool returns the value of a tri-state bool option and whether it was set.
func (o Options) Bool(key string) (value, set bool) {
	v, ok := o[key].(bool)
	return v, ok
}

// String returns a string option, "" when unset.
func (o Options) String(key string) string {
	v, _ := o[key].(string)
	return v
}

// Strings returns a string-list option, nil when unset.
func (o Options) Strings(key string) []string {
	v, _ := o[key].([]string)
	return v
}

// Map returns a YAML-map option, nil when unset.
func (o Options) Map(key string) map[string]any {
	v, _ := o[key].(map[string]any)
	return v
}

// Clone returns a shallow copy, so a merge never writes into a caller's map.
func (o Options) Clone() Options {
	out := make(Options, len(o))
	for k, v := range o {
		out[k] = v
	}
	return out
}

// LaunchSpec is one resolved scope turned into plain data: everything an
// adapter needs to build argv and env, and nothing that needs YAML.
type LaunchSpec struct {
	// Name is the agent or task name (used for display names, never for ids).
	Name string
	// Workspace is an absolute directory; the process runs there.
	Workspace string
	// WritableDirs are directories outside Workspace the program must be
	// able to write (a git worktree's own git dir and its repository's
	// common dir, for commits): a sandboxing harness opens them.
	WritableDirs []string
	// Model is "" to let the harness choose.
	Model    string
	MaxTurns int
	Options  Options
	// Channels and DevChannels are only set on channel-supporting harnesses.
	Channels    []string
	DevChannels []string
	// Env is the scope's env: map after ${VAR} expansion. It is passed to the
	// process environment, never to argv.
	Env map[string]string

	// SessionID with Resume=false: claude pins a new conversation with this id.
	// SessionID with Resume=true: continue that conversation.
	// Empty: start fresh (codex/opencode ids are discovered after the first turn).
	SessionID string
	Resume    bool

	// Prompt is the message of a headless run (unused by Interactive).
	Prompt string

	// Bridge wires leo's MCP server into the harness; nil leaves it out
	// (web disabled, or state/api.token missing or empty).
	Bridge *MCPBridge
}

// MCPBridge describes how a harness starts `leo mcp-server`. The server reads
// the token itself from TokenFile, so no secret ever rides in argv.
type MCPBridge struct {
	// Command is the absolute path of the leo binary.
	Command string
	// Args are its arguments (e.g. ["mcp-server"]).
	Args []string
	// Env is the environment of the MCP server process (e.g. LEO_HOME).
	Env map[string]string
	// URL is the daemon's HTTP base URL the MCP server talks to.
	URL string
}

// Command is an argv plus the environment the adapter adds on top of the
// scope env (e.g. OPENCODE_CONFIG_CONTENT). Dir is the working directory.
type Command struct {
	Argv []string
	Env  map[string]string
	Dir  string
}

// SessionPolicy is the session-id bookkeeping of one harness.
type SessionPolicy interface {
	// PinsID reports whether leo chooses the id before the first launch
	// (claude --session-id). Otherwise the id is discovered after the first turn.
	PinsID() bool
	// NewID returns a fresh id for a pinning harness ("" otherwise).
	NewID() string
	// Discover finds the id of the conversation the agent started in
	// q.Workspace at or after q.Since. It returns "" and no error when there is
	// none yet.
	Discover(ctx context.Context, q SessionQuery) (string, error)
	// Exists reports whether a conversation with this id can be resumed
	// (claude transcript, codex rollout, opencode session).
	Exists(ctx context.Context, q SessionQuery, id string) (bool, error)
}

// SessionQuery carries what a lookup needs: where the agent runs and the
// environment it runs with (HOME, CODEX_HOME, CLAUDE_CONFIG_DIR, PATH…).
type SessionQuery struct {
	Workspace string
	Env       map[string]string
	Since     time.Time
	// Exclude lists ids other agents already own: Discover skips them, so
	// agents sharing a workspace each find their own conversation.
	Exclude []string
}

// ScreenState is what a pane capture shows.
type ScreenState int

const (
	// ScreenStarting: nothing recognisable yet (booting, or unknown screen).
	ScreenStarting ScreenState = iota
	// ScreenReady: the input line is visible and the TUI is idle.
	ScreenReady
	// ScreenBusy: a turn is in flight.
	ScreenBusy
	// ScreenDialog: a modal (trust, resume…) waits for keys.
	ScreenDialog
)

func (s ScreenState) String() string {
	switch s {
	case ScreenReady:
		return "ready"
	case ScreenBusy:
		return "busy"
	case ScreenDialog:
		return "dialog"
	default:
		return "starting"
	}
}

// Screen is one classified capture.
type Screen struct {
	State ScreenState
	// Input is the text currently in the input line (trimmed), when visible.
	Input string
	// DialogKeys answers a ScreenDialog (tmux send-keys arguments).
	DialogKeys []string
	// Dialog names the dialog, for logs.
	Dialog string
	// Held: the TUI took the submitted input but holds it until it has
	// finished starting (codex's "Waiting for startup"): neither failed nor
	// a turn yet.
	Held bool
	// Prompt is set, with State ScreenDialog and no DialogKeys, when the
	// screen shows the harness asking a person (a permission prompt, a
	// question): leo never answers it on its own, and messages wait for
	// it without a timeout.
	Prompt *Prompt
}

// ScreenReader classifies plain-text captures (capture-pane -p -J, no SGR).
type ScreenReader interface {
	Classify(capture string) Screen
	// Landed reports whether pasted text shows in the input of this screen.
	Landed(s Screen, pasted string) bool
}

// TurnWitness is implemented by adapters whose harness keeps its own record
// of the turns it took (claude's transcript, codex's rollout, opencode's
// session store). Delivery confirms a submitted message by finding it there:
// an input line that cleared is a hint, the harness's record is proof.
type TurnWitness interface {
	// UserTurns returns the user messages the harness recorded at or after
	// q.Since: in conversation id when id is not "", else in every
	// conversation of q.Workspace whose id is not in q.Exclude. Texts are as
	// the harness stored them; the caller matches them to what it sent.
	UserTurns(ctx context.Context, q SessionQuery, id string) ([]UserTurn, error)
}

// TurnRecorder is implemented by adapters whose harness records the start
// and the end of its turns (codex's rollout: task_started, then
// task_complete or turn_aborted; claude's transcript; opencode's session
// store). A turn runs from its start record to its end record, whatever
// the screen shows — codex hides its busy line while it streams a reply —
// so delivery pastes nothing while the record says a turn runs, and a turn
// whose end is recorded is over at once (no settle wait). Adapters without
// such a record leave the screen as the only witness.
type TurnRecorder interface {
	// TurnActivity reads the turn records at or after q.Since, scoped like
	// TurnWitness.UserTurns (conversation id, or with id "" every
	// conversation of q.Workspace not in q.Exclude that began at or after
	// q.Since: a launch's new conversation, never an older one).
	TurnActivity(ctx context.Context, q SessionQuery, id string) (TurnActivity, error)
}

// TurnActivity is what a harness's own record says of its turns since a
// time.
type TurnActivity struct {
	// Found: there was a record to read. Without one (no conversation
	// yet) nothing is known and the screen decides.
	Found bool
	// Running: the last turn record is a start with no end after it.
	Running bool
	// Ended counts the turns' end records (completed, failed or
	// interrupted).
	Ended int
	// EndsUnrecorded: the harness writes no end for some turns (claude
	// none for a turn interrupted before the model answered), so a turn
	// the record says runs may be over. Such a harness always draws a
	// running turn as busy: delivery takes an idle, empty input line that
	// lasts the settle time as that turn's end.
	EndsUnrecorded bool
	// Failed: the last ended turn failed, in the harness's words; empty
	// when it completed (or was interrupted). Attention shows it as
	// errored where no hook says so (codex runs no notify for a failed
	// turn).
	Failed string
	// Limited: that failure was a usage or rate limit; ResetsAt is when
	// it lifts, when the record says (zero otherwise).
	Limited  bool
	ResetsAt time.Time
	// Reply is the last ended turn's reply where the record holds it
	// (empty when it failed, or the adapter does not read it): the idle
	// detail, and turn.ended's first line, when the record shows a
	// turn's end before the harness's hook says it.
	Reply string
}

// CommandPrefixer is implemented by adapters whose TUI runs input that
// starts with certain characters as a command of its own, not a message to
// the model ("/exit" quits, "!…" runs a shell command). leo delivers
// messages, so a message starting with one is refused.
type CommandPrefixer interface {
	CommandPrefixes() []string
}

// Interrupter is implemented by adapters whose TUI ends the turn in flight
// on a key press (leo_interrupt): the tmux key names to send, in order.
type Interrupter interface {
	InterruptKeys() []string
}

// Compacter is implemented by adapters whose TUI compacts its conversation
// (summarises it to free context) on a command of its own (leo_compact).
// The command text comes only from here, never from a caller.
type Compacter interface {
	// CompactCommand is what is typed into the idle input line, then Enter.
	CompactCommand() string
	// Compactions returns what the harness recorded of compact commands at
	// or after q.Since, scoped like TurnWitness.UserTurns (conversation id,
	// or with id "" every conversation of q.Workspace not in q.Exclude).
	Compactions(ctx context.Context, q SessionQuery, id string) ([]Compaction, error)
}

// Compaction is one compact command in a harness's own record: done, or
// taken and refused.
type Compaction struct {
	SessionID string
	At        time.Time
	// Refused is the harness's own words when it ran the command but did
	// not compact (claude: "Not enough messages to compact."); "" when the
	// conversation was compacted.
	Refused string
}

// InputClearer is implemented by adapters whose TUI has a key that clears
// its input line: the tmux keys that clear it, pressed by leo only while
// the line holds leo's own text — a message an interrupted TUI put back
// (claude does), or a paste of leo's whose delivery failed — never a
// person's typing.
type InputClearer interface {
	ClearInputKeys() []string
}

// UserTurn is one user message in a harness's own record.
type UserTurn struct {
	// SessionID is the conversation the turn belongs to.
	SessionID string
	Text      string
	// At is when the harness recorded it (zero when it does not say).
	At time.Time
}

// GlobalPreparer is implemented by adapters that keep a piece of leo's in
// the harness's own global config (opencode's AGENTS.md managed block). The
// daemon calls it at start and after each reload for every harness the
// config uses. It must touch only what leo owns there.
type GlobalPreparer interface {
	PrepareGlobal(ctx context.Context, spec GlobalSpec) error
}

// GlobalSpec is what a global preparation needs.
type GlobalSpec struct {
	// Env holds HOME and the XDG variables as leo sees them.
	Env map[string]string
	// Nudge is leo's short system-prompt text pointing agents at its tools.
	Nudge string
}

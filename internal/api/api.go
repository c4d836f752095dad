// Package api holds the typed requests, responses and stable error codes of
// the daemon's operations. The socket server, the Go client, and later the
// HTTP API and MCP tools all speak these types, so each surface stays thin.
package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/names"
)

// MaxRequestBody bounds a request body on the socket and the HTTP API; the
// largest is a message to send.
const MaxRequestBody = 4 << 20

// Error is an error with a stable code. It is what every route returns as
// JSON: {"error": code, "message": text}.
type Error struct {
	Code    Code   `json:"error"`
	Message string `json:"message,omitempty"`
	// Cause is the error behind this one, for errors.Is and errors.As in
	// the process that made it; its text is already in Message, and it
	// never crosses the wire.
	Cause error `json:"-"`
}

func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return e.Message
}

// Unwrap is the cause (Errorf's %w).
func (e *Error) Unwrap() error { return e.Cause }

// ErrorCode is e's code. With it an *Error answers a search for any coded
// error (the CLI's errors.As for ErrorCode()) itself, before a coded cause.
func (e *Error) ErrorCode() Code { return e.Code }

// Errorf builds an *Error, formatting as fmt.Errorf does: the text of a %w
// argument goes into the message as %v would put it, and the error itself
// is kept as the cause (every one of them, for several %w).
func Errorf(code Code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	e := &Error{Code: code, Message: err.Error()}
	switch w := err.(type) {
	case interface{ Unwrap() error }:
		e.Cause = w.Unwrap()
	case interface{ Unwrap() []error }:
		e.Cause = err // errors.Is and As walk each of w's
	}
	return e
}

// CheckAgentName is invalid_args for a name that breaks the name rule
// (names.Valid): the client, the CLI and the daemon all check with it, so a
// name such as "", "." or ".." never becomes a request path.
func CheckAgentName(name string) error { return CheckName("agent", name) }

// CheckName is CheckAgentName for any kind of name ("agent", "task").
func CheckName(kind, name string) error {
	if !names.Valid(name) {
		return Errorf(CodeInvalidArgs, "invalid %s name %q: %s", kind, name, names.Rule)
	}
	return nil
}

// CodeOf returns the code of err, CodeInternal for an uncoded error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// HasCode reports whether err carries code.
func HasCode(err error, code Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// Health is GET /health.
type Health struct {
	Version string `json:"version"`
	PID     int    `json:"pid"`
	// Started is when this daemon started: with PID, what tells a restarted
	// daemon from the one before (leo service restart waits for a new one).
	Started time.Time   `json:"started"`
	Ready   bool        `json:"ready"`
	Home    string      `json:"home"`
	Claude  ClaudeState `json:"claude"`
	// Tmux is the version of the tmux binary the daemon runs ("tmux
	// 3.4"), as checked at start.
	Tmux   string `json:"tmux,omitempty"`
	Agents int    `json:"agents"`
	// Problems are what the daemon met and an operator must act on (state
	// it did not understand and left alone, a tmux server that does not
	// answer), in plain words; absent when there are none.
	Problems []string `json:"problems,omitempty"`
	// Web is the web UI and HTTP API: absent when web.enabled is false.
	Web *WebState `json:"web,omitempty"`
}

// WebState is whether the web server listens where the config says.
// Error says why not (the port is taken…); the daemon runs on either way.
type WebState struct {
	URL     string `json:"url"`
	Serving bool   `json:"serving"`
	Error   string `json:"error,omitempty"`
}

// ClaudeState is {"found": false} or {"found": true, "path": "/…/claude"}.
type ClaudeState struct {
	Found bool   `json:"found"`
	Path  string `json:"path,omitempty"`
}

// AgentState is an agent's lifecycle state.
type AgentState string

const (
	StateStarting AgentState = "starting"
	StateRunning  AgentState = "running"
	StateStopped  AgentState = "stopped"
)

// Agent is an agent as listings show it. It never carries env values.
type Agent struct {
	Name     string `json:"name"`
	Template string `json:"template"`
	// Task names the persistent task an implicit agent was launched for,
	// from that task's own scope (tasks.<name>); Template is then empty.
	Task      string     `json:"task,omitempty"`
	Harness   string     `json:"harness"`
	Model     string     `json:"model,omitempty"`
	Workspace string     `json:"workspace"`
	State     AgentState `json:"state"`
	// Attention is what a running agent is doing (absent while stopped):
	// working, needs_input, idle, errored, limited.
	Attention     *Attention `json:"attention,omitempty"`
	WakeOnMessage bool       `json:"wake_on_message"`
	SessionID     string     `json:"session_id,omitempty"`
	TmuxSession   string     `json:"tmux_session"`
	EnvKeys       []string   `json:"env_keys,omitempty"`
	Restarts      int        `json:"restarts"`
	CreatedAt     time.Time  `json:"created_at"`
	StartedAt     *time.Time `json:"started_at,omitempty"`
	LastExit      *Exit      `json:"last_exit,omitempty"`
	// LastError says why a stopped agent is stopped, when leo stopped it
	// (e.g. claude not found at boot). It is not named "error": in every
	// answer that key is reserved for a failure's code.
	LastError string `json:"last_error,omitempty"`
	// UsageToday sums the usage of the agent's turns that started today
	// (local time), from its harness's record; nil when none reported any.
	UsageToday *Usage `json:"usage_today,omitempty"`
	// Queued counts messages waiting for (or being put into) the pane.
	Queued int `json:"queued,omitempty"`
	// HeldUntil is when leo delivers to the agent again after a usage
	// limit held its queue (the reset plus a margin, or a backoff); absent
	// while no limit holds it.
	HeldUntil *time.Time `json:"held_until,omitempty"`
	// Deliveries are the outcomes of the most recent messages, oldest
	// first: a message that could not land shows here as failed.
	Deliveries []Delivery `json:"deliveries,omitempty"`
	// SharesWorkspaceWith, only in a spawn's answer, names the other
	// agents whose workspace is this one's: they work in one checkout.
	SharesWorkspaceWith []string `json:"shares_workspace_with,omitempty"`
	// Worktree is the agent's own git worktree, when it has one.
	Worktree *Worktree `json:"worktree,omitempty"`
}

// Delivery is the outcome of one message sent to an agent.
type Delivery struct {
	ID     string    `json:"id"`
	Status string    `json:"status"` // "delivered" | "failed"
	At     time.Time `json:"at"`
	Error  string    `json:"error,omitempty"`
	// Kind is "" for a message, DeliveryCompact for a compaction
	// (POST /agents/{name}/compact).
	Kind string `json:"kind,omitempty"`
	// From is who signed the message: "agent x" or "task y", from the
	// MessagePrefix line the MCP tool puts first; "" for an unsigned one (a
	// person's leo agent send or the web, a persistent task's prompt).
	From string `json:"from,omitempty"`
	// FirstLine is the message's first line that is not blank, without the
	// signature, cut at FirstLineRunes.
	FirstLine string `json:"first_line,omitempty"`
}

// DeliveryCompact is the Kind of a compaction's outcome.
const DeliveryCompact = "compact"

// MessagePrefix starts a message an agent or task signed (leo_send_message,
// or `leo agent send` run inside an agent), before the sender:
// "[message from agent x] text".
const MessagePrefix = "[message from "

// Signed is message with its sender's line. A line of the message that
// itself starts like a sender's line is marked as quoted, so a message
// cannot pass off a second sender ("…\n[message from human] do X").
func Signed(from, message string) string {
	lines := strings.Split(message, "\n")
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " \t"), MessagePrefix) {
			lines[i] = strings.Replace(l, MessagePrefix, "[quoted "+strings.TrimPrefix(MessagePrefix, "["), 1)
		}
	}
	return MessagePrefix + from + "] " + strings.Join(lines, "\n")
}

// FirstLineRunes bounds Delivery.FirstLine.
const FirstLineRunes = 120

// DescribeMessage is a message's sender and first line for its Delivery.
func DescribeMessage(text string) (from, firstLine string) {
	if rest, ok := strings.CutPrefix(text, MessagePrefix); ok {
		if who, after, ok := strings.Cut(rest, "] "); ok && !strings.ContainsAny(who, "\n]") {
			from, text = who, after
		}
	}
	firstLine = FirstLine(text)
	return from, firstLine
}

// Exit is how an agent's TUI last ended abnormally.
type Exit struct {
	At         time.Time `json:"at"`
	Status     int       `json:"status"`
	Signal     string    `json:"signal,omitempty"`
	StderrTail string    `json:"stderr_tail,omitempty"`
}

// SpawnRequest is POST /agents/spawn.
type SpawnRequest struct {
	Template string `json:"template"`
	Name     string `json:"name,omitempty"`
	// Worktree gives the agent its own git worktree of the repository
	// its template's workspace is in (a template's worktree: true does
	// too), on Branch (default leo/<agent>) from Base (default the
	// repository's HEAD).
	Worktree bool   `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Base     string `json:"base,omitempty"`
}

// SendRequest is POST /agents/{name}/send.
type SendRequest struct {
	Message string `json:"message"`
	// ID, when set, names the message (CheckMessageID): it becomes the
	// message's id, and a send of the same id to the same agent is
	// answered with the first send's answer and never queued again (see
	// RememberedIDs). Empty: the daemon picks an id.
	ID string `json:"id,omitempty"`
	// Wait, when set, makes the send answer with the message's outcome
	// (MessageOutcome) instead of at once: WaitDelivered once the harness
	// took it as a turn (or it failed), WaitReply once that turn ended,
	// with the reply. Timeout bounds the wait (a Go duration, "90s";
	// at most MaxWait; empty: MaxWait); running out answers wait_timeout
	// and never cancels the message.
	Wait    string `json:"wait,omitempty"`
	Timeout string `json:"timeout,omitempty"`
	// Sender is who sends (api.Sender*): the route sets it, never the
	// body, and leo keeps it with the delivered message for the
	// conversation view.
	Sender string `json:"-"`
}

// SendStatus is what a send's answer says of its message.
type SendStatus string

// SendQueued is the only status a send answers today: the message was
// accepted, in order, and written to state/agents.json. Its outcome comes
// later, in the agent's Deliveries under the same id.
const SendQueued SendStatus = "queued"

// SendResult acknowledges a queued message. Delivery is fire-and-forget: the
// caller learns the message was accepted in order; a delivery that later
// fails is recorded on the agent (Deliveries) and in the log, never
// reported as sent.
type SendResult struct {
	ID       string     `json:"id"`
	Agent    string     `json:"agent"`
	Queued   int        `json:"queued"`
	Woke     bool       `json:"woke,omitempty"`
	Delivery SendStatus `json:"delivery"` // always SendQueued
}

// Remembered message ids: an id a sender named (SendRequest.ID) is kept
// with its first answer, per agent, in state/agents.json, for
// RememberedIDFor after it was accepted, the newest RememberedIDs of them.
// A retry within those bounds is answered with the first answer; a later
// one is a new message.
const (
	RememberedIDs   = 256
	RememberedIDFor = 24 * time.Hour
	// MaxMessageIDLen bounds a sender's message id.
	MaxMessageIDLen = 128
)

// CheckMessageID is invalid_args for a sender's message id that is empty,
// longer than MaxMessageIDLen, or holds anything but ASCII letters,
// digits and "-_.:" (a UUID passes). It is a log field and a path segment
// later, so nothing in it needs quoting.
func CheckMessageID(id string) error {
	if id == "" || len(id) > MaxMessageIDLen {
		return Errorf(CodeInvalidArgs, "id: a message id is 1-%d characters, got %d", MaxMessageIDLen, len(id))
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return Errorf(CodeInvalidArgs, "id %q: a message id holds only ASCII letters, digits and - _ . : (a UUID will do)", clipID(id))
		}
	}
	return nil
}

func clipID(id string) string {
	if len(id) > 40 {
		return id[:40] + "…"
	}
	return id
}

// Logs is GET /agents/{name}/logs.
type Logs struct {
	Agent string `json:"agent"`
	Text  string `json:"text"`
}

// ReloadResult is POST /config/reload.
type ReloadResult struct {
	OK       bool     `json:"ok"`
	Warnings []string `json:"warnings,omitempty"`
}

// Template is a template as GET /templates lists it: what spawning it
// launches. HarnessInherited: the template sets no harness of its own (it
// runs defaults.harness). Never carries env values.
type Template struct {
	Name             string `json:"name"`
	Harness          string `json:"harness"`
	HarnessInherited bool   `json:"harness_inherited"`
	Model            string `json:"model,omitempty"`
	Workspace        string `json:"workspace,omitempty"`
}

// WriteJSON answers v as JSON with status: the one encoder of the socket
// and the HTTP API (HTML characters are not escaped: the answers are JSON,
// never HTML).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// Package mcp is leo's MCP server (`leo mcp-server`, stdio): the leo_*
// tools a harness's agent calls through the bridge. Every tool but
// leo_skill is one call of the daemon's HTTP API through internal/client;
// the daemon decides, the tools only translate. A tool's error carries the
// API's code first ("agent_stopped: …"). The sender of a message is the
// agent (or task) the server was launched for, never a tool argument.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Daemon is what the tools call: *client.Client (NewHTTP) in production.
type Daemon interface {
	List(ctx context.Context) ([]api.Agent, error)
	Spawn(ctx context.Context, req api.SpawnRequest) (api.Agent, error)
	Stop(ctx context.Context, name string) (api.Agent, error)
	Reset(ctx context.Context, name string) (api.Agent, error)
	Interrupt(ctx context.Context, name string) (api.Agent, error)
	Compact(ctx context.Context, name string) (api.SendResult, error)
	SendMessage(ctx context.Context, name string, req api.SendRequest) (api.SendResult, error)
	Message(ctx context.Context, name, id, wait string, timeout time.Duration) (api.MessageOutcome, error)
	ListTasks(ctx context.Context) ([]api.Task, error)
	RunTask(ctx context.Context, name string, wait bool) (api.TaskRun, error)
	EnableTask(ctx context.Context, name string) (api.Task, error)
	DisableTask(ctx context.Context, name string) (api.Task, error)
	ListTemplates(ctx context.Context) ([]api.Template, error)
}

var _ Daemon = (*client.Client)(nil)

// Options configure a server.
type Options struct {
	// Daemon is the HTTP API client; nil when it cannot be made, in which
	// case every tool but leo_skill answers Unavailable.
	Daemon Daemon
	// Unavailable says why there is no Daemon (e.g. no token file).
	Unavailable error
	// Sender is whom the server speaks for.
	Sender Sender
	// Version is leo's version, reported to the client.
	Version string
}

// Sender is the agent or the task whose run the server was launched for
// (the bridge's LEO_AGENT / LEO_TASK). Both empty: nobody, and messages
// are refused (see docs/mcp.md).
type Sender struct {
	Agent string
	Task  string
}

// SenderFromEnv reads the sender from the bridge's environment.
func SenderFromEnv(getenv func(string) string) Sender {
	return Sender{Agent: strings.TrimSpace(getenv(harness.BridgeAgentEnv)), Task: strings.TrimSpace(getenv(harness.BridgeTaskEnv))}
}

// Label is how a message is signed: the agent's name, or "task <name>";
// "" for nobody.
func (s Sender) Label() string {
	switch {
	case s.Agent != "":
		return s.Agent
	case s.Task != "":
		return "task " + s.Task
	}
	return ""
}

// MessagePrefix is what every message starts with, before the sender.
const MessagePrefix = api.MessagePrefix

// NewServer builds the server with every tool.
func NewServer(opts Options) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "leo", Title: "leo", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: "leo keeps coding agents alive in tmux and runs scheduled tasks. Call leo_skill first: it explains the leo_* tools.",
	})
	t := &tools{opts: opts}
	t.register(s)
	return s
}

// Run serves opts on the stdio transport until the client goes away.
func Run(ctx context.Context, opts Options) error {
	return NewServer(opts).Run(ctx, &sdk.StdioTransport{})
}

type tools struct{ opts Options }

// Tool arguments. Fields without omitempty are required.
type (
	noArgs    struct{}
	skillArgs struct {
		Topic string `json:"topic,omitempty" jsonschema:"one of: overview, messaging, agents, tasks (default overview)"`
	}
	sendArgs struct {
		To             string `json:"to" jsonschema:"the name of the agent to message (see leo_list_agents)"`
		Message        string `json:"message" jsonschema:"the message text; leo signs it with your name"`
		ID             string `json:"id,omitempty" jsonschema:"optional: a name for this message (letters, digits, - _ . :; a UUID will do). If a call times out or its outcome is unknown, call again with the same id and text: a message leo already accepted is answered with the first answer, never sent twice"`
		WaitForReply   bool   `json:"wait_for_reply,omitempty" jsonschema:"optional: wait for the agent's reply to this message (the final text of the turn it started) and answer with it"`
		TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"optional, with wait_for_reply: how long to wait, 1-600 (default 50, within most clients' tool time limit). If the turn is still going then, the answer has no reply: call leo_get_reply with the message id later"`
	}
	replyArgs struct {
		Agent          string `json:"agent" jsonschema:"the agent the message was sent to"`
		MessageID      string `json:"message_id" jsonschema:"the id leo_send_message answered"`
		TimeoutSeconds *int   `json:"timeout_seconds,omitempty" jsonschema:"optional: how long to wait for the reply, 0-600 (default 50; 0 answers at once)"`
	}
	spawnArgs struct {
		Template string `json:"template" jsonschema:"the template to launch (see leo_list_templates)"`
		Name     string `json:"name,omitempty" jsonschema:"the new agent's name; leo picks one when empty"`
		Worktree bool   `json:"worktree,omitempty" jsonschema:"optional: give the agent its own git worktree and branch of the repository the template's workspace is in"`
		Branch   string `json:"branch,omitempty" jsonschema:"optional, with worktree: the new branch (default leo/<agent>)"`
		Base     string `json:"base,omitempty" jsonschema:"optional, with worktree: what the branch starts from (default the repository's HEAD)"`
	}
	agentArgs struct {
		Name string `json:"name" jsonschema:"the agent's name (see leo_list_agents)"`
	}
	taskArgs struct {
		Name string `json:"name" jsonschema:"the task's name (see leo_list_tasks)"`
	}
	toggleArgs struct {
		Name    string `json:"name" jsonschema:"the task's name (see leo_list_tasks)"`
		Enabled bool   `json:"enabled" jsonschema:"true enables the task's schedule, false disables it"`
	}
)

var (
	readOnly = &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}
	changes  = &sdk.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)}
	// drops work in flight or the conversation the agent sees.
	disrupts = &sdk.ToolAnnotations{DestructiveHint: new(true), OpenWorldHint: new(false)}
)

func (t *tools) register(s *sdk.Server) {
	sdk.AddTool(s, &sdk.Tool{Name: "leo_skill", Annotations: readOnly,
		Description: "How to use leo and its tools: what leo is, messaging other agents, spawning and managing agents, tasks. Call it first."},
		t.skill)
	sdk.AddTool(s, &sdk.Tool{Name: "leo_send_message", Annotations: changes,
		Description: "Send a message to another leo agent. It arrives as \"[message from <you>] <message>\". By default fire-and-forget (the answer says it is queued, with the message id); with wait_for_reply the answer is the agent's reply to it (reply.text), or, if its turn outlasts timeout_seconds, the outcome so far: then call leo_get_reply with the id. A parked agent is woken; a stopped one is an error. Give an id to make a retry safe: an error \"outcome_unknown\" means the message may have been accepted; call again with the same id."},
		t.send)
	sdk.AddTool(s, &sdk.Tool{Name: "leo_get_reply", Annotations: readOnly,
		Description: "The outcome of a message you sent with leo_send_message: queued, in_flight, delivered or failed (with the reason), what it waits for, and once the turn it started ended, the agent's reply (reply.text) with the turn's outcome and usage. Waits up to timeout_seconds for the reply; call again if it has none yet."},
		call(t, func(ctx context.Context, d Daemon, a replyArgs) (any, error) {
			wait := defaultReplyWait
			if a.TimeoutSeconds != nil {
				var err error
				if wait, err = replySeconds(*a.TimeoutSeconds); err != nil {
					return nil, err
				}
			}
			return awaitReply(ctx, d, a.Agent, a.MessageID, wait)
		}))
	sdk.AddTool(s, &sdk.Tool{Name: "leo_list_agents", Annotations: readOnly,
		Description: "List leo's agents: name, template, harness, state, attention (working, needs_input with the prompt, idle with the last reply's first line, errored, limited), recent deliveries."},
		call(t, func(ctx context.Context, d Daemon, _ noArgs) (any, error) { return d.List(ctx) }))
	sdk.AddTool(s, &sdk.Tool{Name: "leo_spawn_agent", Annotations: changes,
		Description: "Start a new agent from a leo template (see leo_list_templates)."},
		call(t, func(ctx context.Context, d Daemon, a spawnArgs) (any, error) {
			return d.Spawn(ctx, api.SpawnRequest{Template: a.Template, Name: a.Name, Worktree: a.Worktree, Branch: a.Branch, Base: a.Base})
		}))
	sdk.AddTool(s, &sdk.Tool{Name: "leo_stop_agent", Annotations: disrupts,
		Description: "Stop an agent. Its conversation is kept; it is not deleted."},
		call(t, func(ctx context.Context, d Daemon, a agentArgs) (any, error) { return d.Stop(ctx, a.Name) }))
	sdk.AddTool(s, &sdk.Tool{Name: "leo_list_tasks", Annotations: readOnly,
		Description: "List leo's tasks: schedule, next run, enabled, running."},
		call(t, func(ctx context.Context, d Daemon, _ noArgs) (any, error) { return d.ListTasks(ctx) }))
	sdk.AddTool(s, &sdk.Tool{Name: "leo_run_task", Annotations: changes,
		Description: "Start a run of a leo task now; it does not wait for the run to end."},
		call(t, func(ctx context.Context, d Daemon, a taskArgs) (any, error) { return d.RunTask(ctx, a.Name, false) }))
	sdk.AddTool(s, &sdk.Tool{Name: "leo_toggle_task", Annotations: changes,
		Description: "Enable or disable a leo task's schedule (leo edits leo.yaml and reloads)."},
		call(t, func(ctx context.Context, d Daemon, a toggleArgs) (any, error) {
			if a.Enabled {
				return d.EnableTask(ctx, a.Name)
			}
			return d.DisableTask(ctx, a.Name)
		}))
	sdk.AddTool(s, &sdk.Tool{Name: "leo_list_templates", Annotations: readOnly,
		Description: "List the templates agents can be spawned from, with their harness."},
		call(t, func(ctx context.Context, d Daemon, _ noArgs) (any, error) { return d.ListTemplates(ctx) }))
	sdk.AddTool(s, &sdk.Tool{Name: "leo_clear", Annotations: disrupts,
		Description: "Give an agent a new, empty conversation (leo relaunches it on a fresh session; nothing is deleted)."},
		call(t, func(ctx context.Context, d Daemon, a agentArgs) (any, error) { return d.Reset(ctx, a.Name) }))
	sdk.AddTool(s, &sdk.Tool{Name: "leo_compact", Annotations: changes,
		Description: "Compact an agent's conversation (its harness summarises it to free context). Queued behind the messages waiting for the agent and run when its input line is idle; the answer's id names the outcome in the agent's deliveries (kind compact), failed if the harness refused or recorded no compaction."},
		call(t, func(ctx context.Context, d Daemon, a agentArgs) (any, error) { return d.Compact(ctx, a.Name) }))
	sdk.AddTool(s, &sdk.Tool{Name: "leo_interrupt", Annotations: disrupts,
		Description: "Interrupt the turn an agent is working on (its harness's interrupt key); it stays running."},
		call(t, func(ctx context.Context, d Daemon, a agentArgs) (any, error) { return d.Interrupt(ctx, a.Name) }))
}

// call makes a tool of one daemon call: its answer is the JSON of what the
// API answered, its error the API's code and message.
func call[In any](t *tools, f func(ctx context.Context, d Daemon, in In) (any, error)) sdk.ToolHandlerFor[In, any] {
	return func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		if err := rawArguments(req); err != nil {
			return nil, nil, toolError(err)
		}
		if t.opts.Daemon == nil {
			return nil, nil, toolError(t.unavailable())
		}
		out, err := f(ctx, t.opts.Daemon, in)
		if err != nil {
			return nil, nil, toolError(err)
		}
		return jsonResult(out)
	}
}

func (t *tools) unavailable() error {
	if t.opts.Unavailable != nil {
		return t.opts.Unavailable
	}
	return api.Errorf(api.CodeDaemonDown, "leo's MCP server has no connection to the leo daemon")
}

// rawArguments refuses arguments whose JSON the SDK decoded into other
// text than was sent (invalid UTF-8, a lone surrogate escape: both become
// U+FFFD unasked). The SDK keeps the raw arguments, so they are checked
// by the same rule as a socket or HTTP body.
func rawArguments(req *sdk.CallToolRequest) error {
	if req == nil || req.Params == nil {
		return nil
	}
	return api.CheckJSONText(req.Params.Name+": arguments", req.Params.Arguments)
}

func (t *tools) send(ctx context.Context, req *sdk.CallToolRequest, a sendArgs) (*sdk.CallToolResult, any, error) {
	if err := rawArguments(req); err != nil {
		return nil, nil, toolError(err)
	}
	from := t.opts.Sender.Label()
	switch {
	case from == "":
		return nil, nil, toolError(api.Errorf(api.CodeInvalidArgs,
			"leo_send_message: this leo MCP server was not started for a leo agent or task (LEO_AGENT and LEO_TASK are unset), so a message would have no sender; people send with `leo agent send`"))
	case a.To == t.opts.Sender.Agent:
		return nil, nil, toolError(api.Errorf(api.CodeInvalidArgs, "leo_send_message: to is %q, which is you; message another agent (see leo_list_agents)", a.To))
	case strings.TrimSpace(a.Message) == "":
		return nil, nil, toolError(api.Errorf(api.CodeInvalidArgs, "leo_send_message: message is empty"))
	}
	if t.opts.Daemon == nil {
		return nil, nil, toolError(t.unavailable())
	}
	wait, err := waitSeconds(a.TimeoutSeconds, a.WaitForReply)
	if err != nil {
		return nil, nil, toolError(err)
	}
	r, err := t.opts.Daemon.SendMessage(ctx, a.To, api.SendRequest{Message: signed(from, a.Message), ID: a.ID})
	if err != nil {
		return nil, nil, toolError(err)
	}
	if !a.WaitForReply {
		return jsonResult(r)
	}
	out, err := awaitReply(ctx, t.opts.Daemon, a.To, r.ID, wait)
	if err != nil {
		// The message is queued already: the answer names it, so the
		// caller asks for its reply later instead of sending it again.
		return jsonResult(api.MessageOutcome{ID: r.ID, Agent: r.Agent, Status: api.MessageQueued,
			Waiting: "the wait for its reply failed (" + toolError(err).Error() + "); call leo_get_reply with this id"})
	}
	return jsonResult(out)
}

// Waits for a reply within an MCP call: most clients give a tool about a
// minute, so the default stays under that; a longer turn is asked about
// again with leo_get_reply.
const (
	defaultReplyWait = 50 * time.Second
	maxReplyWait     = 600 * time.Second
)

// waitSeconds reads a tool's timeout_seconds (0: the default when the
// tool waits).
func waitSeconds(n int, waits bool) (time.Duration, error) {
	switch {
	case n > 0 && !waits:
		return 0, api.Errorf(api.CodeInvalidArgs, "timeout_seconds: only with wait_for_reply")
	case n == 0 && waits:
		return defaultReplyWait, nil
	}
	return replySeconds(n)
}

// replySeconds is n seconds of wait, from 0 to maxReplyWait.
func replySeconds(n int) (time.Duration, error) {
	if n < 0 || time.Duration(n)*time.Second > maxReplyWait {
		return 0, api.Errorf(api.CodeInvalidArgs, "timeout_seconds: %d is not from 0 to %d", n, int(maxReplyWait/time.Second))
	}
	return time.Duration(n) * time.Second, nil
}

// awaitReply waits up to wait for message id's reply and answers with its
// outcome; a wait that runs out answers the outcome so far (no reply
// yet), never an error: the message goes on.
func awaitReply(ctx context.Context, d Daemon, agent, id string, wait time.Duration) (api.MessageOutcome, error) {
	if wait <= 0 {
		return d.Message(ctx, agent, id, "", 0)
	}
	out, err := d.Message(ctx, agent, id, api.WaitReply, wait)
	if api.HasCode(err, api.CodeWaitTimeout) {
		return d.Message(ctx, agent, id, "", 0)
	}
	return out, err
}

// signed is message with its sender's line (api.Signed).
func signed(from, message string) string { return api.Signed(from, message) }

func jsonResult(v any) (*sdk.CallToolResult, any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, nil, toolError(api.Errorf(api.CodeInternal, "encode the answer: %w", err))
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: string(data)}}}, nil, nil
}

// toolError is the text a tool error shows the model: the API's code, then
// its message.
func toolError(err error) error {
	var e *api.Error
	if errors.As(err, &e) {
		return fmt.Errorf("%s: %s", e.Code, e.Error())
	}
	return fmt.Errorf("%s: %v", api.CodeInternal, err)
}

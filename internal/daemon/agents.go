package daemon

import (
	"context"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Agents is what the daemon needs of the agent manager (internal/agent).
// The socket routes call it and nothing else, so the same operations can be
// exposed over HTTP and MCP later. Errors are *api.Error with stable codes.
type Agents interface {
	// Restore adopts live sessions and relaunches agents that should run;
	// the daemon reports ready only after it returns.
	Restore(ctx context.Context) error
	// Run supervises agents and sweeps idle ones until ctx is done.
	Run(ctx context.Context)

	Spawn(ctx context.Context, req api.SpawnRequest) (api.Agent, error)
	List() []api.Agent
	Get(name string) (api.Agent, error)
	Start(ctx context.Context, name string) (api.Agent, error)
	Stop(ctx context.Context, name string) (api.Agent, error)
	Restart(ctx context.Context, name string) (api.Agent, error)
	Reset(ctx context.Context, name string) (api.Agent, error)
	// DeleteAgent deletes a stopped agent and what req says of its
	// worktree.
	DeleteAgent(ctx context.Context, name string, req api.DeleteRequest) (api.DeleteResult, error)
	Logs(ctx context.Context, name string, lines int) (api.Logs, error)
	// SendMessage queues req.Message; a req.ID already accepted is
	// answered with its first answer.
	SendMessage(ctx context.Context, name string, req api.SendRequest) (api.SendResult, error)
	// SendAndWait queues req.Message and waits (req.Wait, req.Timeout)
	// for its outcome: wait_timeout never cancels the message.
	SendAndWait(ctx context.Context, name string, req api.SendRequest) (api.MessageOutcome, error)
	// Message is a message's outcome; wait ("", api.WaitDelivered,
	// api.WaitReply) waits until ctx ends (wait_timeout).
	Message(ctx context.Context, name, id, wait string) (api.MessageOutcome, error)
	// Conversation reads an agent's conversation from its harness's record.
	Conversation(ctx context.Context, name string, q api.ConversationQuery) (api.Conversation, error)
	// Interrupt presses the harness's interrupt key in the agent's pane.
	Interrupt(ctx context.Context, name string) (api.Agent, error)
	// Answer gives a person's answer to the prompt the agent's screen
	// shows (no_prompt, prompt_changed, prompt_unanswerable, not_offered:
	// nothing pressed).
	Answer(ctx context.Context, name string, req api.AnswerRequest) (api.AnswerResult, error)
	// Compact queues the harness's compact command for the agent.
	Compact(ctx context.Context, name string) (api.SendResult, error)

	// Signal takes what an agent's harness told leo's hook, as its adapter
	// read it: the agent's attention changes by it.
	Signal(ctx context.Context, name string, sig harness.Signal)

	// ConfigChanged tells the manager a reload swapped the config.
	ConfigChanged()
	// Close stops supervision. It never kills agents' tmux sessions: the
	// next daemon adopts them.
	Close() error
}

package agent

import (
	"context"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/config"
)

// TaskAgents adapts the Manager to what persistent task firings need of it
// (task.AgentPort): the ensure-exists ladder, the durable queue, and a
// message's outcome by id.
type TaskAgents struct{ M *Manager }

// Ensure runs the ladder for agent from target: a template's resolved
// scope (the task's template:), or the task's own (an implicit agent).
func (p TaskAgents) Ensure(ctx context.Context, agent string, target *config.Resolved) (string, error) {
	t := EnsureTarget{Task: target.Name}
	switch {
	case strings.HasPrefix(target.Scope, "templates."):
		t = EnsureTarget{Template: target.Name}
	case target.Template != "":
		t = EnsureTarget{Template: target.Template}
	}
	return p.M.Ensure(ctx, agent, t)
}

// Enqueue puts message on agent's durable queue and returns its id.
func (p TaskAgents) Enqueue(ctx context.Context, agent, message string) (string, error) {
	it, _, err := p.M.Enqueue(ctx, agent, message)
	if err != nil {
		return "", err
	}
	return it.ID, nil
}

// Delivery is message id's outcome (see Manager.Await); ok is false for an
// id the agent does not know.
func (p TaskAgents) Delivery(agent, id string) (done <-chan struct{}, err func() error, ok bool) {
	it, aerr := p.M.Await(agent, id)
	if aerr != nil {
		return nil, nil, false
	}
	return it.Done(), it.Err, true
}

// HeldByLimit is Manager.HeldByLimit (task.LimitHolds): a persistent
// firing's timeout waits while a usage limit holds its agent.
func (p TaskAgents) HeldByLimit(agent string) (<-chan struct{}, time.Time) {
	return p.M.HeldByLimit(agent)
}

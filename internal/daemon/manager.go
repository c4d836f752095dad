package daemon

import "github.com/blackpaw-studio/leo/internal/agent"

// The real agent manager is what the daemon hosts unless a test passes
// another; this line keeps the two in step at compile time.
var _ Agents = (*agent.Manager)(nil)

func newAgentManager(d AgentDeps) (Agents, error) {
	m, err := agent.New(agent.Options{
		Home:      d.Home,
		Tmux:      d.Tmux,
		Config:    d.Config,
		Resolver:  d.Resolver,
		Log:       d.Log,
		LeoBinary: d.LeoBinary,
		Events:    d.Events,
	})
	if err != nil {
		return nil, err // not a typed nil inside the interface
	}
	return m, nil
}

package cli

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
)

// completionTimeout bounds the daemon call behind one <Tab>: a shell waits
// for it, so a daemon that does not answer costs this much, then the files.
const completionTimeout = 500 * time.Millisecond

// What the first argument of a command names, for shell completion.
const (
	completeAgent    = "agent"
	completeTemplate = "template"
	completeTask     = "task"
)

// nameCompletions maps command paths to what their first argument names.
var nameCompletions = map[string]string{
	"agent status": completeAgent, "agent start": completeAgent, "agent stop": completeAgent,
	"agent restart": completeAgent, "agent reset": completeAgent, "agent delete": completeAgent,
	"agent logs": completeAgent, "agent send": completeAgent, "agent compact": completeAgent,
	"agent attach": completeAgent, "attach": completeAgent,
	"agent spawn": completeTemplate, "template show": completeTemplate,
	"run": completeTask, "task run": completeTask, "task history": completeTask,
	"task logs": completeTask, "task enable": completeTask, "task disable": completeTask,
}

// addNameCompletions gives the commands of nameCompletions a completion
// of their first argument: agent, template or task names.
func addNameCompletions(f *Factory, c *cobra.Command) {
	if kind, ok := nameCompletions[strings.TrimPrefix(c.CommandPath(), "leo ")]; ok && c.ValidArgsFunction == nil {
		c.ValidArgsFunction = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeNames(cmd.Context(), f, kind, toComplete), cobra.ShellCompDirectiveNoFileComp
		}
	}
	for _, sub := range c.Commands() {
		addNameCompletions(f, sub)
	}
}

// completeNames lists the names of kind starting with prefix: the running
// daemon's, or — when it is down or slow — those in leo.yaml and
// state/agents.json, read and never written. Any failure is no names:
// completion prints nothing of its own, on stdout or stderr.
func completeNames(ctx context.Context, f *Factory, kind, prefix string) []cobra.Completion {
	h, err := f.Home()
	if err != nil {
		return nil
	}
	if ctx == nil {
		ctx = context.Background()
	}
	names, err := daemonNames(ctx, h, kind)
	if err != nil {
		names = fileNames(h, f.Getenv, kind)
	}
	var out []cobra.Completion
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func daemonNames(ctx context.Context, h home.Home, kind string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	c := client.New(h)
	defer c.Close()
	var names []string
	switch kind {
	case completeAgent:
		as, err := c.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			names = append(names, a.Name)
		}
	case completeTemplate:
		ts, err := c.ListTemplates(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			names = append(names, t.Name)
		}
	case completeTask:
		ts, err := c.ListTasks(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range ts {
			names = append(names, t.Name)
		}
	}
	return names, nil
}

// fileNames reads the names from the home's files. agents.json is parsed
// here, not through the agent store, which keeps a file it cannot read
// aside: completion must never move a file.
func fileNames(h home.Home, getenv func(string) string, kind string) []string {
	if kind == completeAgent {
		data, err := os.ReadFile(h.AgentsPath())
		if err != nil {
			return nil
		}
		var file struct {
			Agents []struct {
				Name string `json:"name"`
			} `json:"agents"`
		}
		if json.Unmarshal(data, &file) != nil {
			return nil
		}
		var names []string
		for _, a := range file.Agents {
			if api.CheckAgentName(a.Name) == nil {
				names = append(names, a.Name)
			}
		}
		return names
	}
	cfg, err := config.Load(h.ConfigPath, config.WithGetenv(getenv))
	if err != nil {
		return nil
	}
	if kind == completeTemplate {
		return cfg.TemplateNames()
	}
	return cfg.TaskNames()
}

package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/task"
)

func init() { register(newStatusCmd) }

// StatusOptions are the inputs of `leo status`.
type StatusOptions struct {
	IO      *IOStreams
	Home    home.Home
	Getenv  func(string) string
	Version string
	JSON    bool
	Now     func() time.Time
	// Managed and Registered are the Factory's seams, already asked.
	Managed    ManagedInfo
	Registered func(ctx context.Context) (*bool, string)
}

// statusJSON is `leo status --json`. Field names are an API (docs/cli.md).
type statusJSON struct {
	OK      bool             `json:"ok"`
	Version string           `json:"version"`
	Home    string           `json:"home"`
	Config  statusConfigJSON `json:"config"`
	Daemon  daemonState      `json:"daemon"`
	Managed ManagedInfo      `json:"managed"`
	Service serviceJSON      `json:"service"`
	// Agents is null when no daemon answers (only the daemon knows them).
	Agents *agentsJSON     `json:"agents"`
	Tasks  tasksJSON       `json:"tasks"`
	Web    webState        `json:"web"`
	Claude api.ClaudeState `json:"claude"`
}

type statusConfigJSON struct {
	Path  string `json:"path"`
	Found bool   `json:"found"`
}

type serviceJSON struct {
	// Registered is null when this build or platform cannot tell.
	Registered *bool  `json:"registered"`
	Message    string `json:"message,omitempty"`
}

// agentsJSON is the fleet by state: names, sorted, per state.
type agentsJSON struct {
	Total    int      `json:"total"`
	Running  []string `json:"running"`
	Starting []string `json:"starting"`
	Stopped  []string `json:"stopped"`
	// Attention names the running agents per attention state (every state
	// a key, each list sorted).
	Attention map[api.AttentionState][]string `json:"attention"`
}

type tasksJSON struct {
	Total   int `json:"total"`
	Enabled int `json:"enabled"`
	// Running are the tasks with a run in progress.
	Running []string `json:"running"`
	// Next is the earliest planned firing (null when none is planned, or
	// no daemon runs: nothing fires then).
	Next *nextFiringJSON `json:"next"`
	// Failing are the tasks whose last run did not succeed.
	Failing []failingJSON `json:"failing"`
	// Source is "daemon" (what the daemon plans) or "config" (no daemon:
	// the tasks of leo.yaml and their recorded history).
	Source string `json:"source"`
}

type nextFiringJSON struct {
	Task string    `json:"task"`
	At   time.Time `json:"at"`
}

type failingJSON struct {
	Task    string      `json:"task"`
	Run     string      `json:"run"`
	Outcome api.Outcome `json:"outcome"`
	Reason  api.Reason  `json:"reason,omitempty"`
	Start   time.Time   `json:"start"`
	Message string      `json:"message,omitempty"`
}

func newStatusCmd(f *Factory) *cobra.Command {
	opts := &StatusOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "One screen: daemon, service, agents, tasks, web URL, claude",
		Long: `Show this home's leo on one screen: the daemon (pid, uptime, version,
ready), whether the install is managed by an app and registered with the
service manager, the agents by state, the tasks (the next firing and those
whose last run failed), the web UI's URL and whether claude is found.

It works with the daemon down and says so; the exit status is 0 whatever it
reports. Only a broken leo.yaml (unreadable, not YAML, invalid, or a
--config file that does not exist) fails it, with config_error (exit 3). A
home with no leo.yaml yet is reported as such.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := f.Home()
			if err != nil {
				return err
			}
			opts.Home, opts.Getenv, opts.Version, opts.Now = h, f.Getenv, f.Version, f.Now
			opts.Managed = f.managedInfo(h)
			opts.Registered = func(ctx context.Context) (*bool, string) { return f.serviceRegisteredOf(ctx, h) }
			return runStatus(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

func runStatus(ctx context.Context, opts *StatusOptions) error {
	cfg, found, err := statusConfig(opts.Home, opts.Getenv)
	if err != nil {
		return err
	}
	now := nowOr(opts.Now)
	st := statusJSON{
		OK: true, Version: opts.Version, Home: opts.Home.Root,
		Config:  statusConfigJSON{Path: opts.Home.ConfigPath, Found: found},
		Daemon:  probeDaemon(ctx, opts.Home, now),
		Managed: opts.Managed,
	}
	st.Web = webOf(cfg, st.Daemon)
	if opts.Registered != nil {
		st.Service.Registered, st.Service.Message = opts.Registered(ctx)
	}
	st.Claude = claudeOf(st.Daemon, opts.Getenv, opts.Managed)
	var warnings []string
	// A daemon still restoring agents holds its other routes until it is
	// ready; status does not wait for it.
	if st.Daemon.Answering && st.Daemon.Ready {
		c := client.New(opts.Home)
		defer c.Close()
		if agents, err := c.List(ctx); err == nil {
			st.Agents = agentsByState(agents)
		} else {
			warnings = append(warnings, "agents: "+err.Error())
		}
		if tasks, err := c.ListTasks(ctx); err == nil {
			st.Tasks = tasksSummary(tasks, "daemon")
		} else {
			warnings = append(warnings, "tasks: "+err.Error())
			st.Tasks = tasksSummary(nil, "daemon")
		}
	} else {
		tasks, w := tasksFromConfig(cfg, opts.Home)
		warnings = append(warnings, w...)
		st.Tasks = tasksSummary(tasks, "config")
	}
	// Warnings are progress, not the answer: stderr, in either mode.
	for _, w := range warnings {
		fmt.Fprintf(opts.IO.ErrOut, "leo: status: %s\n", cell(w, 300))
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, st)
	}
	return writeStatusText(opts.IO, st, now)
}

func agentsByState(agents []api.Agent) *agentsJSON {
	out := &agentsJSON{Total: len(agents), Running: []string{}, Starting: []string{}, Stopped: []string{},
		Attention: map[api.AttentionState][]string{}}
	for _, st := range api.AttentionStates {
		out.Attention[st] = []string{}
	}
	for _, a := range agents {
		if a.Attention != nil {
			out.Attention[a.Attention.State] = append(out.Attention[a.Attention.State], a.Name)
		}
		switch a.State {
		case api.StateRunning:
			out.Running = append(out.Running, a.Name)
		case api.StateStarting:
			out.Starting = append(out.Starting, a.Name)
		default:
			out.Stopped = append(out.Stopped, a.Name)
		}
	}
	for _, l := range [][]string{out.Running, out.Starting, out.Stopped} {
		slices.Sort(l)
	}
	for _, l := range out.Attention {
		slices.Sort(l)
	}
	return out
}

func tasksSummary(tasks []api.Task, source string) tasksJSON {
	out := tasksJSON{Total: len(tasks), Running: []string{}, Failing: []failingJSON{}, Source: source}
	for _, t := range tasks {
		if t.Enabled {
			out.Enabled++
		}
		if t.Running {
			out.Running = append(out.Running, t.Name)
		}
		if t.Enabled && t.NextRun != nil && (out.Next == nil || t.NextRun.Before(out.Next.At)) {
			out.Next = &nextFiringJSON{Task: t.Name, At: *t.NextRun}
		}
		if r := t.LastRun; r != nil && r.Outcome != api.OutcomeSucceeded && r.Outcome != api.OutcomeRunning {
			out.Failing = append(out.Failing, failingJSON{Task: t.Name, Run: r.ID, Outcome: r.Outcome,
				Reason: r.Reason, Start: r.Start, Message: r.Message})
		}
	}
	return out
}

// tasksFromConfig is the task list without a daemon: the config's tasks
// and each one's last recorded run. It never creates the history
// directory.
func tasksFromConfig(cfg *config.Config, h home.Home) ([]api.Task, []string) {
	if cfg == nil {
		return nil, nil
	}
	var hist *task.History
	var warnings []string
	if _, err := os.Stat(h.TaskHistoryDir()); err == nil {
		if hist, err = task.OpenHistory(h.TaskHistoryDir(), 0); err != nil {
			warnings = append(warnings, err.Error())
		}
	}
	var out []api.Task
	for _, name := range cfg.TaskNames() {
		t := taskFromConfig(cfg, name)
		if hist != nil {
			rec, ok, err := hist.Last(name)
			if err != nil {
				warnings = append(warnings, err.Error())
			} else if ok {
				t.LastRun = &rec
			}
		}
		out = append(out, t)
	}
	return out, warnings
}

func writeStatusText(io *IOStreams, st statusJSON, now time.Time) error {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-9s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	cfgText := st.Config.Path
	if !st.Config.Found {
		cfgText += " (none yet — run 'leo setup')"
	}
	line("leo", "%s, home %s", st.Version, st.Home)
	line("config", "%s", cfgText)

	d := st.Daemon
	switch {
	case d.Answering:
		ready := "ready"
		if !d.Ready {
			ready = "restoring agents (not ready yet)"
		}
		up := ""
		if d.UptimeSeconds != nil {
			up = ", up " + ago(time.Duration(*d.UptimeSeconds)*time.Second)
		}
		line("daemon", "running, pid %d, leo %s%s, %s", d.PID, cell(d.Version, 40), up, ready)
	case d.Running:
		line("daemon", "holds the lock (pid %d) but does not answer: %s", d.PID, cell(d.Message, 200))
	default:
		line("daemon", "not running — %s", client.StartHint)
	}

	install := "not managed (CLI install)"
	if st.Managed.Managed {
		install = fmt.Sprintf("managed by %s (launchd job %s)", cell(orDash(st.Managed.Manager), 40), cell(st.Managed.Label, 100))
	}
	if st.Managed.Warning != "" {
		install += "; marker ignored: " + cell(st.Managed.Warning, 200)
	}
	line("install", "%s", install)
	switch {
	case st.Service.Registered == nil:
		line("service", "registration unknown%s", suffix(st.Service.Message))
	case *st.Service.Registered:
		line("service", "registered with the service manager")
	default:
		line("service", "not registered — 'leo service install' starts it at login")
	}

	if a := st.Agents; a == nil && d.Answering {
		line("agents", "unknown until the daemon has restored them")
	} else if a == nil {
		line("agents", "unknown (the daemon does not answer)")
	} else if a.Total == 0 {
		line("agents", "none — spawn one with: leo agent spawn <template>")
	} else {
		var parts []string
		for _, g := range []struct {
			state string
			names []string
		}{{"running", a.Running}, {"starting", a.Starting}, {"stopped", a.Stopped}} {
			if len(g.names) > 0 {
				parts = append(parts, fmt.Sprintf("%s %d (%s)", g.state, len(g.names), cell(strings.Join(g.names, ", "), 120)))
			}
		}
		line("agents", "%d — %s", a.Total, strings.Join(parts, ", "))
		parts = parts[:0]
		for _, st := range api.AttentionStates {
			if names := a.Attention[st]; len(names) > 0 {
				parts = append(parts, fmt.Sprintf("%s %d (%s)", attentionWords(st), len(names), cell(strings.Join(names, ", "), 120)))
			}
		}
		if len(parts) > 0 {
			line("attention", "%s", strings.Join(parts, ", "))
		}
	}

	t := st.Tasks
	switch {
	case t.Total == 0:
		line("tasks", "none")
	default:
		text := fmt.Sprintf("%d (%d enabled)", t.Total, t.Enabled)
		if len(t.Running) > 0 {
			text += "; running: " + cell(strings.Join(t.Running, ", "), 120)
		}
		switch {
		case t.Next != nil:
			text += fmt.Sprintf("; next: %s at %s", t.Next.Task, whenText(t.Next.At, now))
		case t.Source == "config":
			text += "; nothing fires while the daemon is down"
		}
		line("tasks", "%s", text)
		for _, fl := range t.Failing {
			what := string(fl.Outcome)
			if fl.Reason != "" {
				what += " (" + string(fl.Reason) + ")"
			}
			line("failing", "%s: %s %s — leo task history %s", fl.Task, cell(what, 40), relTime(fl.Start, now), fl.Task)
		}
	}

	if st.Web.Enabled {
		line("web", "%s", webLine(st.Web, st.Daemon.Answering))
	} else {
		line("web", "off (web.enabled is false in leo.yaml)")
	}
	if st.Claude.Found {
		line("claude", "%s", st.Claude.Path)
	} else {
		line("claude", "not found — %s", claude.NotFoundMessage)
	}
	for _, p := range d.Problems {
		line("problem", "%s", cell(p, 300))
	}
	_, err := io.Out.Write([]byte(b.String()))
	return err
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return " (" + cell(msg, 200) + ")"
}

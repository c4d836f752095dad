package task

import (
	"context"
	"log/slog"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/home"
)

// HomeOptions are the service options of leo home h: history in
// state/task-history/, run logs in state/logs/, headless runs through a
// Runner that finds harnesses with resolver and gives them the MCP bridge
// of leoBinary. The daemon adds persistent firings; `leo run` without a
// daemon uses them as they are.
func HomeOptions(h home.Home, cfg func() *config.Config, resolver binpath.Resolver, leoBinary string, log *slog.Logger) (ServiceOptions, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hist, err := OpenHistory(h.TaskHistoryDir(), cfg().Scheduler.HistoryKeepOrDefault())
	if err != nil {
		return ServiceOptions{}, err
	}
	runner := Runner{Resolver: resolver, LogDir: h.LogsDir(), Log: log}
	return ServiceOptions{
		Config:  cfg,
		History: hist,
		Oneshot: func(ctx context.Context, j Job) Record {
			r := runner // logs_keep as the config says now, reloads included
			r.LogsKeep = cfg().Scheduler.LogsKeepOrDefault()
			return r.Run(ctx, j)
		},
		Bridge:        func(c *config.Config) *harness.MCPBridge { return c.MCPBridge(h, leoBinary) },
		ReadLog:       func(name, runID string) (api.TaskLog, error) { return ReadLog(h.LogsDir(), name, runID) },
		MaxConcurrent: func() int { return cfg().Scheduler.MaxConcurrentRunsOrDefault() },
		Log:           log,
		Home:          h.Root,
	}, nil
}

// RunOnce runs one-shot task name once, in this process and in the
// foreground, on the same path the daemon runs a task by hand, and records
// it in the home's history: `leo run` when no daemon runs. A persistent
// task delivers into an agent, which only a daemon has.
func RunOnce(ctx context.Context, opts ServiceOptions, name string) (Record, error) {
	cfg := opts.Config()
	res, err := cfg.ResolveTask(name)
	if err != nil {
		if _, ok := cfg.Tasks[name]; !ok {
			return Record{}, api.Errorf(api.CodeNotFound, "task %q not found (tasks: %v)", name, cfg.TaskNames())
		}
		return Record{}, api.Errorf(api.CodeConfigError, "%w", err)
	}
	if res.Runtime == config.RuntimePersistent {
		return Record{}, api.Errorf(api.CodeDaemonDown,
			"task %s is persistent: it delivers into agent %s, which needs the daemon (start it with 'leo service')", name, agentOf(res))
	}
	svc := NewService(opts)
	svc.runCtx = ctx
	rec, done, err := svc.Start(ctx, name)
	if err != nil {
		return Record{}, err
	}
	<-done
	out, ok := svc.Result(name, rec.ID)
	if !ok {
		return Record{}, api.Errorf(api.CodeInternal, "run %s of task %s ended but its record cannot be read", rec.ID, name)
	}
	return out, nil
}

// agentOf is the agent a persistent task delivers into: its template's,
// or an implicit one named after the task.
func agentOf(res *config.Resolved) string {
	if res.Template != "" {
		return res.Template
	}
	return res.Name
}

// Offline answers the task reads — the list, history and run logs — from
// the files of home h and the config cfg, for a leo with no daemon
// running. It writes nothing: history is opened with ReadHistory, and
// nothing is scheduled or run (no task has a next run).
type Offline struct{ svc *Service }

// OpenOffline reads h's task files as cfg describes the tasks.
func OpenOffline(h home.Home, cfg *config.Config) *Offline {
	logs := h.LogsDir()
	return &Offline{svc: NewService(ServiceOptions{
		Config:  func() *config.Config { return cfg },
		History: ReadHistory(h.TaskHistoryDir()),
		ReadLog: func(name, runID string) (api.TaskLog, error) { return ReadLog(logs, name, runID) },
	})}
}

// List is every task of the config, with its last run from history.
func (o *Offline) List() []api.Task { return o.svc.List() }

// TaskHistory is Service.TaskHistory from the files.
func (o *Offline) TaskHistory(name string, limit int) (api.TaskHistory, error) {
	return o.svc.TaskHistory(name, limit)
}

// AllHistory is Service.AllHistory from the files.
func (o *Offline) AllHistory(limit int) (api.TaskHistory, error) { return o.svc.AllHistory(limit) }

// Log is Service.Log from the files.
func (o *Offline) Log(name, runID string) (api.TaskLog, error) { return o.svc.Log(name, runID) }

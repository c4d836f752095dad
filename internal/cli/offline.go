package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/task"
)

// Reading what is on disk needs no daemon (issue 15.6). The commands that
// only read files leo keeps — `agent list` (state/agents.json), `task
// list` (leo.yaml and history), `task history` and `task logs` — ask the
// daemon when one answers, and otherwise read the same files themselves,
// read-only, through the readers the daemon uses (task.Offline,
// agent.ReadListing). Such an answer says so: one line on stderr, and
// "live": false in the JSON object (true when the daemon answered). A
// daemon that holds the home's lock but does not answer is still
// daemon_down: the files may be mid-change under it.

// readCommand completes cmd like daemonCommand, with an offline path: run
// is given the daemon's client first; when that answers daemon_down and no
// daemon holds the home's lock, run is called again with a nil client, to
// read the home's files. (Each read command asks the daemon once, before
// it prints anything.)
func readCommand(f *Factory, cmd *cobra.Command, asJSON *bool, run func(ctx context.Context, c *client.Client, h home.Home, args []string) error) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		h, err := f.Home()
		if err != nil {
			return err
		}
		c := client.New(h)
		defer c.Close()
		err = run(cmd.Context(), c, h, args)
		if !client.IsDaemonDown(err) {
			return err
		}
		if held, _, _ := lockfile.Probe(h.LockPath()); held {
			return err
		}
		return run(cmd.Context(), nil, h, args)
	}
	addJSONFlag(cmd, asJSON)
	return cmd
}

// offlineNote is the stderr line of an answer read from disk.
func offlineNote(ios *IOStreams, what string) {
	fmt.Fprintf(ios.ErrOut, "leo: no leo daemon runs for this home — %s; %s\n", what, client.StartHint)
}

// taskReader is where the task listings come from: the daemon's client,
// or offlineTasks.
type taskReader interface {
	ListTasks(ctx context.Context) ([]api.Task, error)
	TaskHistory(ctx context.Context, name string, limit int) (api.TaskHistory, error)
	AllHistory(ctx context.Context, limit int) (api.TaskHistory, error)
	TaskLog(ctx context.Context, name, run string) (api.TaskLog, error)
}

// offlineTasks answers taskReader from a home's files (task.Offline).
type offlineTasks struct{ o *task.Offline }

func (t offlineTasks) ListTasks(context.Context) ([]api.Task, error) { return t.o.List(), nil }
func (t offlineTasks) TaskHistory(_ context.Context, name string, limit int) (api.TaskHistory, error) {
	return t.o.TaskHistory(name, limit)
}
func (t offlineTasks) AllHistory(_ context.Context, limit int) (api.TaskHistory, error) {
	return t.o.AllHistory(limit)
}
func (t offlineTasks) TaskLog(_ context.Context, name, run string) (api.TaskLog, error) {
	return t.o.Log(name, run)
}

// taskSource is c, or h's files when c is nil (no daemon): then the
// config is read as it is on disk, not validated (a missing prompt file
// does not hide the history).
func taskSource(f *Factory, c *client.Client, h home.Home) (taskReader, bool, error) {
	if c != nil {
		return c, false, nil
	}
	cfg, err := readConfig(h, f.Getenv)
	if err != nil {
		return nil, false, err
	}
	return offlineTasks{task.OpenOffline(h, cfg)}, true, nil
}

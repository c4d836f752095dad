package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/humantime"
	"github.com/blackpaw-studio/leo/internal/lockfile"
)

func init() { register(newTaskCmd) }

func newTaskCmd(f *Factory) *cobra.Command {
	cmd := groupCommand("task", "List tasks, their history and logs; enable or disable them")
	cmd.Long = `Tasks are prompts leo runs on a schedule (tasks: in leo.yaml). The daemon
plans and runs them and records every run; these commands ask it over
<home>/state/leo.sock. 'leo run <task>' runs one now.`
	cmd.AddCommand(
		newTaskListCmd(f),
		newTaskHistoryCmd(f),
		newTaskLogsCmd(f),
		newTaskSetEnabledCmd(f, true),
		newTaskSetEnabledCmd(f, false),
		newTaskRunCmd(f),
	)
	return cmd
}

// taskNameArg checks argument i, a task name, by the rule the daemon uses.
func taskNameArg(i int) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if i >= len(args) {
			return nil
		}
		return api.CheckName("task", args[i])
	}
}

// reachDaemon asks h's daemon whether it is there. up: it answered. Not up
// and no error: no daemon holds the home's lock, so the CLI may do the
// work itself. An error: a daemon holds the lock but does not answer
// (stuck, or still starting); doing the work alone could do it twice.
func reachDaemon(ctx context.Context, h home.Home) (c *client.Client, up bool, err error) {
	c = client.New(h)
	if _, err := c.Health(ctx); err == nil {
		return c, true, nil
	} else if !client.IsDaemonDown(err) {
		return c, false, err
	} else if held, _, _ := lockfile.Probe(h.LockPath()); held {
		return c, false, err
	}
	return c, false, nil
}

// --- list ---

// TaskListOptions are the inputs of `leo task list`.
type TaskListOptions struct {
	IO     *IOStreams
	Client taskReader
	JSON   bool
	Now    func() time.Time
	// Offline: no daemon runs; Client reads the home's files.
	Offline bool
}

// taskListJSON is `leo task list --json`. Field names are an API (those
// of api.Task). Live is false when no daemon runs and the list was read
// from leo.yaml and history (no next runs then).
type taskListJSON struct {
	Tasks []api.Task `json:"tasks"`
	Live  bool       `json:"live"`
}

func newTaskListCmd(f *Factory) *cobra.Command {
	opts := &TaskListOptions{IO: f.IO}
	return readCommand(f, &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List tasks: runtime, harness, schedule in words, next run, last outcome",
		Long: `List tasks: runtime, harness, schedule in words, next run, last outcome.
With no daemon running, the list is read from leo.yaml and the run history
(no next runs: nothing is scheduled until the daemon starts).`,
		Args: cobra.NoArgs,
	}, &opts.JSON, func(ctx context.Context, c *client.Client, h home.Home, _ []string) error {
		var err error
		if opts.Client, opts.Offline, err = taskSource(f, c, h); err != nil {
			return err
		}
		return runTaskList(ctx, opts)
	})
}

func runTaskList(ctx context.Context, opts *TaskListOptions) error {
	tasks, err := opts.Client.ListTasks(ctx)
	if err != nil {
		return err
	}
	if tasks == nil {
		tasks = []api.Task{}
	}
	for i := range tasks {
		if tasks[i].ScheduleWords == "" && tasks[i].Schedule != "" {
			tasks[i].ScheduleWords = config.DescribeSchedule(tasks[i].Schedule)
		}
	}
	if opts.Offline {
		offlineNote(opts.IO, "read from leo.yaml and the run history; nothing is scheduled until it starts")
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, taskListJSON{Tasks: tasks, Live: !opts.Offline})
	}
	if len(tasks) == 0 {
		_, err := fmt.Fprintln(opts.IO.Out, "no tasks — add one under tasks: in leo.yaml (docs/configuration/reference.md)")
		return err
	}
	now := nowOr(opts.Now)
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tRUNTIME\tHARNESS\tSCHEDULE\tTIMEZONE\tNEXT RUN\tLAST RUN")
	for _, t := range tasks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(t.Name, 63), cell(t.Runtime, 20), cell(t.Harness, 20),
			cell(scheduleText(t), 60), cell(t.Timezone, 40), nextRunText(t, now), lastRunText(t, now))
	}
	return tw.Flush()
}

func scheduleText(t api.Task) string {
	switch {
	case t.Schedule == "":
		return "manual only"
	case t.ScheduleWords != "":
		return t.ScheduleWords
	}
	return t.Schedule
}

func nextRunText(t api.Task, now time.Time) string {
	switch {
	case t.Running:
		return "running now"
	case !t.Enabled:
		return "disabled"
	case t.NextRun == nil:
		return "-"
	}
	return whenText(*t.NextRun, now)
}

func lastRunText(t api.Task, now time.Time) string {
	r := t.LastRun
	if r == nil {
		return "-"
	}
	what := string(r.Outcome)
	if r.Reason != "" {
		what += " (" + string(r.Reason) + ")"
	}
	return cell(what, 40) + " " + relTime(r.Start, now)
}

// whenText is a time as a person reads it in a listing (humantime.When).
func whenText(t, now time.Time) string { return humantime.When(t, now) }

// relTime is "in 5m" or "3h ago".
func relTime(t, now time.Time) string { return humantime.Rel(t, now) }

// cell makes text from the daemon (a harness's error message, a reply)
// safe for one table cell: control characters become spaces and a long
// text is cut.
func cell(s string, maxRunes int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	if utf8.RuneCountInString(s) > maxRunes {
		s = string([]rune(s)[:maxRunes-1]) + "…"
	}
	return s
}

// --- history ---

// TaskHistoryOptions are the inputs of `leo task history`.
type TaskHistoryOptions struct {
	IO     *IOStreams
	Client taskReader
	Name   string // "" is every task
	Limit  int
	JSON   bool
	Now    func() time.Time
	// Offline: no daemon runs; Client reads the home's files.
	Offline bool
}

// taskHistoryJSON is `leo task history --json`: api.TaskHistory, and
// whether a daemon answered (false: read from the history files).
type taskHistoryJSON struct {
	api.TaskHistory
	Live bool `json:"live"`
}

func newTaskHistoryCmd(f *Factory) *cobra.Command {
	opts := &TaskHistoryOptions{IO: f.IO}
	cmd := readCommand(f, &cobra.Command{
		Use:   "history [<name>]",
		Short: "Show the recent runs of a task (or of every task), oldest first",
		Long: `Show the recent runs of a task, or of every task by start time: when each
started, why (schedule, catch_up, manual, persistent), how it ended and the
reason of a failure. Run ids name the logs: leo task logs <name> --run <id>.
With no daemon running, the history files are read directly.`,
		Args: cobra.MatchAll(cobra.MaximumNArgs(1), taskNameArg(0), func(*cobra.Command, []string) error {
			if opts.Limit < 1 {
				return usageErrorf("--limit must be at least 1, got %d", opts.Limit)
			}
			return nil
		}),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, h home.Home, args []string) error {
		var err error
		if opts.Client, opts.Offline, err = taskSource(f, c, h); err != nil {
			return err
		}
		if len(args) == 1 {
			opts.Name = args[0]
		}
		return runTaskHistory(ctx, opts)
	})
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", 20, "how many runs (the newest)")
	return cmd
}

func runTaskHistory(ctx context.Context, opts *TaskHistoryOptions) error {
	var hist api.TaskHistory
	var err error
	if opts.Name == "" {
		hist, err = opts.Client.AllHistory(ctx, opts.Limit)
	} else {
		hist, err = opts.Client.TaskHistory(ctx, opts.Name, opts.Limit)
	}
	if err != nil {
		return err
	}
	if hist.Runs == nil {
		hist.Runs = []api.TaskRun{}
	}
	if opts.Offline {
		offlineNote(opts.IO, "read from the history files")
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, taskHistoryJSON{TaskHistory: hist, Live: !opts.Offline})
	}
	for _, d := range hist.Dropped {
		fmt.Fprintf(opts.IO.ErrOut, "leo: warning: history: %s\n", cell(d, 200))
	}
	if len(hist.Runs) == 0 {
		what := "no runs yet"
		if opts.Name != "" {
			what += " of " + opts.Name
		}
		_, err := fmt.Fprintln(opts.IO.Out, what)
		return err
	}
	now := nowOr(opts.Now)
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STARTED\tTASK\tRUN\tTRIGGER\tOUTCOME\tTOOK\tDETAIL")
	for _, r := range hist.Runs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", whenText(r.Start, now), cell(r.Task, 63), cell(r.ID, 40),
			cell(string(r.Trigger), 20), cell(string(r.Outcome), 20), tookText(r), runDetail(r))
	}
	return tw.Flush()
}

func tookText(r api.TaskRun) string { return humantime.Took(r.Start, r.End) }

// runDetail is why a run ended as it did, in one cell.
func runDetail(r api.TaskRun) string {
	var parts []string
	if r.Reason != "" {
		parts = append(parts, string(r.Reason))
	}
	if r.Message != "" {
		parts = append(parts, r.Message)
	}
	detail := strings.Join(parts, ": ")
	if r.ResetsAt != nil {
		// A limited run: when its limit resets, in RFC 3339 UTC.
		detail = "resets " + r.ResetsAt.UTC().Format(time.RFC3339) + "; " + detail
	}
	if r.Attempt > 1 {
		detail += fmt.Sprintf(" (attempt %d)", r.Attempt)
	}
	return cell(strings.TrimSpace(detail), 100)
}

// --- logs ---

// TaskLogsOptions are the inputs of `leo task logs`.
type TaskLogsOptions struct {
	IO     *IOStreams
	Client taskReader
	Name   string
	Run    string
	JSON   bool
	// Offline: no daemon runs; Client reads the home's files.
	Offline bool
}

// taskLogJSON is `leo task logs --json`: api.TaskLog, and whether a daemon
// answered (false: read from the log file).
type taskLogJSON struct {
	api.TaskLog
	Live bool `json:"live"`
}

func newTaskLogsCmd(f *Factory) *cobra.Command {
	opts := &TaskLogsOptions{IO: f.IO}
	cmd := readCommand(f, &cobra.Command{
		Use:   "logs <name>",
		Short: "Print the output of a task's run (the newest, or --run ID)",
		Long: `Print the output of a one-shot task's run: the newest, or --run ID (leo task
history <name> lists the ids). An unknown task is not_found. A persistent
task's runs are turns in its agent's conversation and keep no run log: the
answer (not_found) names the agent to look at. With no daemon running, the
log file is read directly.`,
		Args: cobra.MatchAll(cobra.ExactArgs(1), taskNameArg(0)),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, h home.Home, args []string) error {
		var err error
		if opts.Client, opts.Offline, err = taskSource(f, c, h); err != nil {
			return err
		}
		opts.Name = args[0]
		return runTaskLogs(ctx, opts)
	})
	cmd.Flags().StringVar(&opts.Run, "run", "", "the run id (leo task history <name> lists them); default the newest run")
	return cmd
}

func runTaskLogs(ctx context.Context, opts *TaskLogsOptions) error {
	l, err := opts.Client.TaskLog(ctx, opts.Name, opts.Run)
	if err != nil {
		return err
	}
	if opts.Offline {
		offlineNote(opts.IO, "read from the log file")
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, taskLogJSON{TaskLog: l, Live: !opts.Offline})
	}
	text := l.Text
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err = io.WriteString(opts.IO.Out, text)
	return err
}

// --- enable | disable ---

// TaskSetEnabledOptions are the inputs of `leo task enable|disable`.
type TaskSetEnabledOptions struct {
	IO      *IOStreams
	Home    home.Home
	Getenv  func(string) string
	Name    string
	Enabled bool
	JSON    bool
}

func newTaskSetEnabledCmd(f *Factory, enabled bool) *cobra.Command {
	opts := &TaskSetEnabledOptions{IO: f.IO, Getenv: f.Getenv, Enabled: enabled}
	verb, short := "enable", "Enable a task: its schedule fires again"
	if !enabled {
		verb, short = "disable", "Disable a task: its schedule stops (leo run still runs it by hand)"
	}
	cmd := &cobra.Command{
		Use:   verb + " <name>",
		Short: short,
		Long: short + `.

leo sets tasks.<name>.enabled in leo.yaml, changing only that value: the
rest of the file (comments, order, formatting) stays as written. The edit
is validated and atomic. The daemon makes the edit and applies it at once;
when no daemon runs, leo edits the file itself and the daemon reads it
when it starts.`,
		Args: cobra.MatchAll(cobra.ExactArgs(1), taskNameArg(0)),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, err := f.Home()
			if err != nil {
				return err
			}
			opts.Home, opts.Name = h, args[0]
			return runTaskSetEnabled(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

func runTaskSetEnabled(ctx context.Context, opts *TaskSetEnabledOptions) error {
	c, up, err := reachDaemon(ctx, opts.Home)
	if err != nil {
		return err
	}
	var t api.Task
	if up {
		if opts.Enabled {
			t, err = c.EnableTask(ctx, opts.Name)
		} else {
			t, err = c.DisableTask(ctx, opts.Name)
		}
		if err != nil {
			return err
		}
	} else {
		if t, err = setEnabledInFile(opts); err != nil {
			return err
		}
		fmt.Fprintf(opts.IO.ErrOut, "leo: no leo daemon runs; edited %s directly (the daemon reads it when it starts)\n", opts.Home.ConfigPath)
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, t)
	}
	state := "enabled"
	if !t.Enabled {
		state = "disabled"
	}
	_, err = fmt.Fprintf(opts.IO.Out, "tasks.%s: %s\n", t.Name, state)
	return err
}

// setEnabledInFile is enable/disable without a daemon: the same edit the
// daemon makes, then the task as the new file describes it.
func setEnabledInFile(opts *TaskSetEnabledOptions) (api.Task, error) {
	path := opts.Home.ConfigPath
	err := config.SetTaskEnabled(path, opts.Name, opts.Enabled, config.WithGetenv(opts.Getenv))
	if errors.Is(err, config.ErrUnknownScope) {
		if cfg, rerr := readConfig(opts.Home, opts.Getenv); rerr == nil {
			return api.Task{}, unknownScopeError("task", opts.Name, cfg.TaskNames())
		}
		return api.Task{}, api.Errorf(api.CodeNotFound, "%w", err)
	}
	if err != nil {
		return api.Task{}, configEditError(opts.Home, err)
	}
	cfg, err := readConfig(opts.Home, opts.Getenv)
	if err != nil {
		return api.Task{}, err
	}
	return taskFromConfig(cfg, opts.Name), nil
}

// taskFromConfig is a task as listings show it, from the config alone (no
// daemon: no next run, no last run).
func taskFromConfig(cfg *config.Config, name string) api.Task {
	t := api.Task{Name: name, Timezone: time.Local.String()}
	r, err := cfg.ResolveTask(name)
	if err != nil {
		return t
	}
	t.Runtime, t.Harness, t.Model = r.Runtime, r.HarnessName, r.Model
	t.HarnessInherited = r.HarnessInherited
	t.Schedule, t.Enabled, t.CatchUp = r.Schedule, r.Enabled, r.CatchUp
	if r.Schedule != "" {
		t.ScheduleWords = config.DescribeSchedule(r.Schedule)
	}
	if r.Timezone != "" {
		t.Timezone = r.Timezone
	}
	if r.Runtime == config.RuntimePersistent {
		t.Agent = cmp.Or(r.Template, name)
	}
	return t
}

package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/home"
)

func init() { register(newRunCmd) }

// RunOptions are the inputs of `leo run`.
type RunOptions struct {
	IO     *IOStreams
	Config *config.Config
	Home   home.Home
	// Executable is the leo binary the MCP bridge would start.
	Executable string
	Task       string
	DryRun     bool
	Detach     bool
	JSON       bool
}

func newRunCmd(f *Factory) *cobra.Command {
	opts := &RunOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "run <task>",
		Short: "Run a task now and print how it ended (--dry-run: show what it would launch)",
		Long: `Run tasks.<task> now, whatever its schedule and even when it is disabled.

The daemon runs it, exactly as a scheduled firing (one run of a task at a
time; the daemon-wide cap on concurrent runs applies), and records it in
the task's history with the trigger "manual". leo waits for the run to end
and prints its outcome; the exit status is non-zero when the run did not
succeed. --detach returns at once with the run id instead.

When no daemon runs for this home, leo runs the task itself in the
foreground and says so on stderr.

--dry-run starts nothing: it prints the resolved harness, model and
workspace and the argv and environment of the headless run (for a
persistent task: of its target agent's launch). Values from env: and
anything that looks like a credential are shown as ***.`,
		Args: cobra.MatchAll(cobra.ExactArgs(1), func(*cobra.Command, []string) error {
			if opts.DryRun && opts.Detach {
				return usageErrorf("--detach and --dry-run do not go together: a dry run starts nothing")
			}
			return nil
		}),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Task = args[0]
			if !opts.DryRun {
				if err := api.CheckName("task", opts.Task); err != nil {
					return err
				}
				return runTaskNow(cmd.Context(), f, opts)
			}
			cfg, h, err := f.LoadConfig()
			if err != nil {
				return err
			}
			opts.Config, opts.Home = cfg, h
			opts.Executable = f.LeoBinary()
			return runRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print what would be launched; start nothing")
	cmd.Flags().BoolVar(&opts.Detach, "detach", false, "start the run in the daemon and return at once with its id")
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

// newTaskRunCmd is `leo task run <task>`, where a user of the task group
// looks for it: the same command as `leo run <task>`.
func newTaskRunCmd(f *Factory) *cobra.Command {
	cmd := newRunCmd(f)
	cmd.Short = "Run a task now (the same as 'leo run <task>')"
	return cmd
}

// Waiting for a run through the daemon: each attempt may take the task's
// timeout; runWaitSlack covers the pause before a retry and a wait for a
// free run slot, runWaitMargin the start and the record.
const (
	runWaitSlack  = 5 * time.Minute
	runWaitMargin = 5 * time.Minute
)

// runWait is how long `leo run` waits for the daemon's answer: every
// attempt's timeout and some slack, from the task as leo.yaml says
// (client.RunWaitTimeout when the file does not resolve it; the daemon
// runs what it loaded).
func runWait(h home.Home, getenv func(string) string, task string) time.Duration {
	cfg, err := readConfig(h, getenv)
	if err != nil {
		return client.RunWaitTimeout
	}
	r, err := cfg.ResolveTask(task)
	if err != nil || r.Timeout <= 0 {
		return client.RunWaitTimeout
	}
	attempts := time.Duration(r.Retries + 1)
	return attempts*(r.Timeout+runWaitSlack) + runWaitMargin
}

// runTaskNow is `leo run <task>` without --dry-run: through the daemon when
// one runs, else in the foreground through f.RunTaskLocally.
func runTaskNow(ctx context.Context, f *Factory, opts *RunOptions) error {
	h, err := f.Home()
	if err != nil {
		return err
	}
	opts.Home = h
	c, up, err := reachDaemon(ctx, h)
	if err != nil {
		return err
	}
	if up {
		if opts.Detach {
			rec, err := c.RunTask(ctx, opts.Task, false)
			if err != nil {
				return err
			}
			return reportStarted(opts, rec)
		}
		wait := runWait(h, f.Getenv, opts.Task)
		wctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		rec, err := c.RunTask(wctx, opts.Task, true)
		if err != nil {
			if ctx.Err() != nil {
				return api.Errorf(api.CodeInternal, "stopped waiting; the run of task %s goes on in the daemon (leo task history %s)", opts.Task, opts.Task)
			}
			return err
		}
		return reportRun(opts, rec)
	}

	if opts.Detach {
		return api.Errorf(api.CodeDaemonDown, "--detach needs the leo daemon, and none runs for this home (start it with 'leo service'); without --detach leo runs the task itself in the foreground")
	}
	cfg, h, err := f.LoadConfig()
	if err != nil {
		return err
	}
	if _, ok := cfg.Tasks[opts.Task]; !ok {
		return unknownScopeError("task", opts.Task, cfg.TaskNames())
	}
	if f.RunTaskLocally == nil {
		return api.Errorf(api.CodeUnsupported, "no leo daemon runs for this home, and this build cannot run a task without one: start the daemon with 'leo service'")
	}
	fmt.Fprintf(opts.IO.ErrOut, "leo: no leo daemon runs for this home; running tasks.%s here in the foreground\n", opts.Task)
	rec, err := f.RunTaskLocally(ctx, cfg, h, opts.Task)
	if err != nil {
		return err
	}
	return reportRun(opts, rec)
}

// reportStarted prints a detached run.
func reportStarted(opts *RunOptions, rec api.TaskRun) error {
	if opts.JSON {
		return writeJSON(opts.IO.Out, rec)
	}
	_, err := fmt.Fprintf(opts.IO.Out, "started tasks.%s run %s — follow it: leo task history %s; its output: leo task logs %s --run %s\n",
		opts.Task, rec.ID, opts.Task, opts.Task, rec.ID)
	return err
}

// runFailedError is a run that ended without success: exit 1, and the
// JSON failure carries the run's record next to error and message.
type runFailedError struct {
	run api.TaskRun
}

func (e *runFailedError) Error() string {
	r := e.run
	msg := fmt.Sprintf("tasks.%s run %s %s", r.Task, r.ID, outcomeWords(r.Outcome))
	if r.Reason != "" {
		msg += " (" + string(r.Reason) + ")"
	}
	if r.Message != "" {
		msg += ": " + cell(r.Message, 300)
	}
	return msg
}

func (e *runFailedError) ErrorCode() api.Code { return api.CodeRunFailed }

func (e *runFailedError) JSONBody() any {
	return struct {
		Error   api.Code    `json:"error"`
		Message string      `json:"message"`
		Run     api.TaskRun `json:"run"`
	}{api.CodeRunFailed, e.Error(), e.run}
}

func outcomeWords(o api.Outcome) string {
	switch o {
	case api.OutcomeTimeout:
		return "timed out"
	case api.OutcomeSkipped:
		return "was skipped"
	case api.OutcomeLimited:
		return "was stopped by a usage limit"
	case api.OutcomeFailed:
		return "failed"
	}
	return "ended " + string(o)
}

// reportRun prints a finished run; one that did not succeed is an error.
func reportRun(opts *RunOptions, rec api.TaskRun) error {
	if rec.Task == "" {
		rec.Task = opts.Task
	}
	var failed error
	if rec.Outcome != api.OutcomeSucceeded {
		failed = &runFailedError{run: rec}
	}
	if opts.JSON {
		if failed != nil {
			return failed
		}
		return writeJSON(opts.IO.Out, rec)
	}
	if err := printRun(opts.IO.Out, rec); err != nil {
		return err
	}
	return failed
}

// maxReplyLines bounds the reply shown after a run; history keeps the
// first lines, the log has everything.
const maxReplyLines = 20

func printRun(w io.Writer, r api.TaskRun) error {
	p := &fieldPrinter{w: w}
	took := tookText(r)
	if took != "-" {
		took = " in " + took
	} else {
		took = ""
	}
	p.title("tasks.%s run %s: %s%s", r.Task, cell(r.ID, 40), cell(string(r.Outcome), 20), took)
	if r.Reason != "" || r.Message != "" {
		p.field("reason", runDetail(api.TaskRun{Reason: r.Reason, Message: r.Message}))
	}
	if r.ResetsAt != nil {
		p.field("resets at", r.ResetsAt.UTC().Format(time.RFC3339))
	}
	if r.Harness != "" {
		h := r.Harness
		if r.Attempt > 0 {
			h += fmt.Sprintf(" (attempt %d)", r.Attempt)
		}
		p.field("harness", h)
	}
	if r.Agent != "" {
		p.field("agent", r.Agent)
	}
	if r.ExitCode != nil {
		p.field("exit code", fmt.Sprint(*r.ExitCode))
	}
	if r.SessionID != "" {
		p.field("session", cell(r.SessionID, 100))
	}
	if u := usageText(r.Usage, r.CostUSD); u != "" {
		p.field("usage", u)
	}
	for _, warn := range r.Warnings {
		p.field("warning", cell(warn, 200))
	}
	if reply := strings.TrimRight(r.Reply, "\n"); reply != "" {
		p.printf("  reply:\n")
		lines := strings.Split(reply, "\n")
		for i, line := range lines {
			if i == maxReplyLines {
				p.printf("    | … (%d more lines)\n", len(lines)-maxReplyLines)
				break
			}
			p.printf("    | %s\n", cell(line, 500))
		}
	}
	switch {
	case r.ID != "" && r.Agent != "":
		// A persistent run's output is the agent's pane, not a log file.
		p.field("output", fmt.Sprintf("in agent %s: leo agent logs %s", r.Agent, r.Agent))
	case r.ID != "":
		p.field("output", fmt.Sprintf("leo task logs %s --run %s", r.Task, r.ID))
	}
	return p.err
}

// envVarJSON is one variable the run would add to leo's own environment.
type envVarJSON struct {
	Name   string `json:"name"`
	Value  string `json:"value"`  // "***" when masked
	Source string `json:"source"` // "env" (the scope's env:) | "harness" (added by the adapter)
	Masked bool   `json:"masked"`
}

// dryRunJSON is `leo run <task> --dry-run --json`. Field names are an API.
type dryRunJSON struct {
	Task             string       `json:"task"`
	Scope            string       `json:"scope"`
	Runtime          string       `json:"runtime"` // "oneshot" | "persistent"
	Launch           string       `json:"launch"`  // "headless" | "interactive"
	Agent            string       `json:"agent,omitempty"`
	Harness          string       `json:"harness"`
	HarnessInherited bool         `json:"harness_inherited"`
	Model            string       `json:"model"`
	ModelInherited   bool         `json:"model_inherited"`
	Workspace        string       `json:"workspace"`
	Dir              string       `json:"dir"`
	PromptFile       string       `json:"prompt_file"`
	Timeout          string       `json:"timeout"`
	Retries          int          `json:"retries"`
	Argv             []string     `json:"argv"`
	Env              []envVarJSON `json:"env"`
}

func runRun(opts *RunOptions) error {
	cfg := opts.Config
	task, err := cfg.ResolveTask(opts.Task)
	if err != nil {
		if _, ok := cfg.Tasks[opts.Task]; !ok {
			return unknownScopeError("task", opts.Task, cfg.TaskNames())
		}
		return invalidConfigError(cfg.Path, err)
	}
	prompt, err := os.ReadFile(task.PromptFile)
	if err != nil {
		return api.Errorf(api.CodeConfigError, "%s.prompt_file: cannot read %s: %w", task.Scope, task.PromptFile, err)
	}

	out := dryRunJSON{
		Task: opts.Task, Scope: task.Scope, Runtime: task.Runtime,
		PromptFile: task.PromptFile, Timeout: formatDuration(task.Timeout), Retries: task.Retries,
	}
	launch := task // the scope whose harness and env the launch uses
	var cmd harness.Command
	if task.Runtime == config.RuntimePersistent {
		// A persistent task delivers its prompt into an agent: the agent of
		// its template, or an implicit one named after the task. What leo
		// launches is that agent's TUI.
		out.Launch, out.Agent = "interactive", opts.Task
		if task.Template != "" {
			out.Agent = task.Template
			if launch, err = cfg.ResolveTemplate(task.Template); err != nil {
				return invalidConfigError(cfg.Path, err)
			}
		}
		spec := launch.LaunchSpec()
		spec.Name = out.Agent
		spec.Bridge = cfg.MCPBridge(opts.Home, opts.Executable).For(harness.BridgeAgentEnv, out.Agent)
		cmd, err = launch.Harness.Interactive(spec)
	} else {
		out.Launch = "headless"
		spec := launch.LaunchSpec()
		spec.Prompt = string(prompt)
		spec.Bridge = cfg.MCPBridge(opts.Home, opts.Executable).For(harness.BridgeTaskEnv, opts.Task)
		cmd, err = launch.Harness.Headless(spec)
	}
	if err != nil {
		return api.Errorf(api.CodeConfigError, "%s: the %s harness cannot build the launch: %w", launch.Scope, launch.HarnessName, err)
	}

	out.Harness, out.HarnessInherited = launch.HarnessName, launch.HarnessInherited
	out.Model, out.ModelInherited = launch.Model, launch.ModelInherited
	out.Workspace, out.Dir = launch.Workspace, cmd.Dir
	s := newScrubber(configSecrets(cfg))
	out.Argv = maskArgv(s, cmd.Argv)
	out.Env = maskEnv(s, launch.Env, cmd.Env)

	if opts.JSON {
		return writeJSON(opts.IO.Out, out)
	}
	return printDryRun(opts.IO.Out, out, len(prompt))
}

// configSecrets gathers every env: value of the config, expanded: a dry run
// hides them all wherever they appear (a prompt quoting another scope's
// token included), not only the launching scope's.
func configSecrets(cfg *config.Config) map[string]string {
	all := map[string]string{}
	add := func(scope string, r *config.Resolved) {
		if r == nil {
			return
		}
		for k, v := range r.Env {
			all[scope+"."+k] = v
		}
	}
	for _, name := range cfg.TemplateNames() {
		r, _ := cfg.ResolveTemplate(name)
		add("templates."+name, r)
	}
	for _, name := range cfg.TaskNames() {
		r, _ := cfg.ResolveTask(name)
		add("tasks."+name, r)
	}
	return all
}

// maskArgv hides secrets in argv: scope env values wherever they appear,
// secret-named keys inside JSON arguments (--mcp-config) and the value of a
// secret-named key=value argument (codex -c overrides).
func maskArgv(s *scrubber, argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		switch {
		case strings.HasPrefix(a, "{") || strings.HasPrefix(a, "["):
			out[i] = s.maskJSON(a)
		default:
			if k, _, ok := strings.Cut(a, "="); ok && looksSecret(strings.TrimLeft(k, "-")) {
				out[i] = k + "=" + masked
				continue
			}
			out[i] = s.scrub(a)
		}
	}
	return out
}

// maskEnv lists what the run adds to leo's environment, sorted by name:
// every env: value masked; an adapter's variable masked when its name looks
// like a credential, its JSON (OPENCODE_CONFIG_CONTENT) shown with secret
// keys masked, and any env: value inside it scrubbed.
func maskEnv(s *scrubber, scopeEnv, adapterEnv map[string]string) []envVarJSON {
	vars := []envVarJSON{}
	for name := range scopeEnv {
		if _, overridden := adapterEnv[name]; overridden {
			continue
		}
		vars = append(vars, envVarJSON{Name: name, Value: masked, Source: "env", Masked: true})
	}
	for name, value := range adapterEnv {
		v := envVarJSON{Name: name, Source: "harness"}
		switch {
		case looksSecret(name):
			v.Value, v.Masked = masked, true
		case strings.HasPrefix(strings.TrimSpace(value), "{"):
			v.Value = s.maskJSON(value)
			v.Masked = v.Value != value
		default:
			v.Value = s.scrub(value)
			v.Masked = v.Value != value
		}
		vars = append(vars, v)
	}
	sort.Slice(vars, func(i, j int) bool { return vars[i].Name < vars[j].Name })
	return vars
}

// maxShownArg is the longest argument printed whole in the human view (the
// prompt usually); --json always carries the whole argv.
const maxShownArg = 400

func printDryRun(w io.Writer, d dryRunJSON, promptBytes int) error {
	p := &fieldPrinter{w: w}
	if d.Runtime == config.RuntimePersistent {
		p.title("%s (dry run: nothing is started) — persistent: delivers the prompt into agent %q", d.Scope, d.Agent)
	} else {
		p.title("%s (dry run: nothing is started) — one-shot headless run", d.Scope)
	}
	p.field("harness", markInherited(d.Harness, d.HarnessInherited))
	p.field("model", markInherited(orDefault(d.Model), d.ModelInherited))
	p.field("workspace", d.Workspace)
	p.field("prompt_file", fmt.Sprintf("%s (%d bytes)", d.PromptFile, promptBytes))
	p.field("timeout", fmt.Sprintf("%s, retries %d", d.Timeout, d.Retries))
	if d.Launch == "interactive" {
		p.printf("  launch of agent %q when it is not running (tmux session leo-%s, in %s):\n", d.Agent, d.Agent, d.Dir)
	} else {
		p.printf("  argv (run in %s):\n", d.Dir)
	}
	shown := make([]string, len(d.Argv))
	for i, a := range d.Argv {
		shown[i] = shellQuote(shorten(a))
	}
	p.printf("    %s\n", strings.Join(shown, " "))
	p.printf("  env (added to leo's own environment; env: values hidden):\n")
	if len(d.Env) == 0 {
		p.printf("    (none)\n")
	}
	for _, v := range d.Env {
		value := v.Value
		if value != masked {
			value = shellQuote(shorten(value))
		}
		p.printf("    %s=%s  (%s)\n", v.Name, value, sourceLabel(v.Source))
	}
	return p.err
}

// shorten cuts a very long argument (a prompt, usually) for the human view.
func shorten(a string) string {
	if len(a) <= maxShownArg {
		return a
	}
	cut := maxShownArg
	for cut > 0 && !utf8.RuneStart(a[cut]) {
		cut--
	}
	return a[:cut] + fmt.Sprintf("… (%d bytes)", len(a))
}

// shellQuote renders an argument the way a POSIX shell would read it back:
// bare when safe, in single quotes otherwise, and as $'…' when it holds
// control characters such as newlines.
func shellQuote(a string) string {
	if a != "" && strings.Trim(a, safeShellChars) == "" {
		return a
	}
	if strings.ContainsFunc(a, unicode.IsControl) {
		var b strings.Builder
		b.WriteString("$'")
		for i := 0; i < len(a); {
			r, size := utf8.DecodeRuneInString(a[i:])
			switch {
			case r == '\\' || r == '\'':
				b.WriteByte('\\')
				b.WriteRune(r)
			case r == '\n':
				b.WriteString(`\n`)
			case r == '\t':
				b.WriteString(`\t`)
			case r == '\r':
				b.WriteString(`\r`)
			case unicode.IsControl(r), r == utf8.RuneError && size == 1:
				// Byte by byte: a C1 control (U+0080…) is two bytes in
				// UTF-8, and an invalid byte must come back as itself.
				for j := i; j < i+size; j++ {
					fmt.Fprintf(&b, `\x%02x`, a[j])
				}
			default:
				b.WriteString(a[i : i+size])
			}
			i += size
		}
		b.WriteString("'")
		return b.String()
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

const safeShellChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-"

func sourceLabel(source string) string {
	if source == "env" {
		return "env:"
	}
	return "set by the " + source
}

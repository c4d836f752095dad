package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/blackpaw-studio/leo/internal/agent"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/humantime"
	"github.com/blackpaw-studio/leo/internal/mcp"
)

func init() { register(newAgentCmd) }

func newAgentCmd(f *Factory) *cobra.Command {
	cmd := groupCommand("agent", "Spawn, list, steer and attach to agents")
	cmd.Long = `Agents are harness TUIs (claude, codex, opencode) that the leo daemon keeps
running in tmux, one session leo-<name> each. These commands talk to the
daemon over <home>/state/leo.sock; start it with 'leo service'.`
	cmd.AddCommand(
		newAgentSpawnCmd(f),
		newAgentListCmd(f),
		newAgentStatusCmd(f),
		newAgentDeleteCmd(f),
		newAgentLogsCmd(f),
		newAgentSendCmd(f),
		newAgentMessageCmd(f),
		newAgentConversationCmd(f),
		newAgentCompactCmd(f),
		newAgentApproveCmd(f),
		newAgentDenyCmd(f),
		newAgentAnswerCmd(f),
		newAgentAttachCmd(f),
	)
	for _, v := range agentVerbs {
		cmd.AddCommand(newAgentVerbCmd(f, v))
	}
	return cmd
}

// daemonCommand completes cmd, one of the `leo agent` commands, which all
// reach the daemon the same way: --json is bound to *asJSON, and RunE gets
// a client for f's home and hands it, with the arguments, to run, which
// fills the command's options and calls its run function. Checks that need
// no daemon go in cmd.Args, so a bad command line fails before the home is
// resolved. The client bounds each call (client.ReadTimeout and the like),
// so a daemon that does not answer costs seconds and is named.
func daemonCommand(f *Factory, cmd *cobra.Command, asJSON *bool, run func(ctx context.Context, c *client.Client, args []string) error) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		h, err := f.Home()
		if err != nil {
			return err
		}
		return run(cmd.Context(), client.New(h), args)
	}
	addJSONFlag(cmd, asJSON)
	return cmd
}

// agentNameArg checks argument i, an agent name, by the rule the daemon
// uses, before anything reaches the daemon: "", "." or ".." would otherwise
// become a request path.
func agentNameArg(i int) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if i >= len(args) {
			return nil
		}
		return api.CheckAgentName(args[i])
	}
}

// nowOr is now(), or the wall clock when now is nil (tests pin it).
func nowOr(now func() time.Time) time.Time {
	if now == nil {
		return time.Now()
	}
	return now()
}

// --- spawn ---

// AgentSpawnOptions are the inputs of `leo agent spawn`.
type AgentSpawnOptions struct {
	IO       *IOStreams
	Client   *client.Client
	Template string
	Name     string
	JSON     bool
	// Worktree, Branch and Base: the agent's own git worktree.
	Worktree bool
	Branch   string
	Base     string
}

func newAgentSpawnCmd(f *Factory) *cobra.Command {
	opts := &AgentSpawnOptions{IO: f.IO}
	cmd := daemonCommand(f, &cobra.Command{
		Use:   "spawn <template>",
		Short: "Spawn an agent from a template",
		Long: `Spawn an agent from templates.<template> in leo.yaml. Its name is --name, or
the template's name; a name already taken gets a numeric suffix.

With --worktree (or worktree: true on the template) the agent gets its own
git worktree of the repository the template's workspace is in, on a new
branch (--branch, default leo/<agent>) from --base (default the
repository's HEAD), and runs in it.`,
		Args: cobra.ExactArgs(1),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, args []string) error {
		opts.Client, opts.Template = c, args[0]
		return runAgentSpawn(ctx, opts)
	})
	cmd.Flags().StringVar(&opts.Name, "name", "", "agent name (lowercase letters, digits and -)")
	cmd.Flags().BoolVar(&opts.Worktree, "worktree", false, "give the agent its own git worktree and branch")
	cmd.Flags().StringVar(&opts.Branch, "branch", "", "the worktree's new branch (default leo/<agent>; needs --worktree or worktree: true)")
	cmd.Flags().StringVar(&opts.Base, "base", "", "what the branch starts from (default the repository's HEAD)")
	cmd.Args = cobra.MatchAll(cobra.ExactArgs(1), func(*cobra.Command, []string) error {
		if opts.Name == "" {
			return nil
		}
		return api.CheckAgentName(opts.Name)
	})
	return cmd
}

func runAgentSpawn(ctx context.Context, opts *AgentSpawnOptions) error {
	a, err := opts.Client.Spawn(ctx, api.SpawnRequest{Template: opts.Template, Name: opts.Name,
		Worktree: opts.Worktree, Branch: opts.Branch, Base: opts.Base})
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, a)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "spawned %s (%s, %s) in tmux session %s — attach: leo attach %s\n",
		a.Name, a.Harness, a.State, a.TmuxSession, a.Name)
	if w := a.Worktree; err == nil && w != nil {
		_, err = fmt.Fprintf(opts.IO.Out, "worktree %s on branch %s (from %s)\n", w.Path, w.Branch, orDash(w.Base))
	}
	if err == nil && len(a.SharesWorkspaceWith) > 0 {
		_, err = fmt.Fprintf(opts.IO.Out, "note: %s shares its workspace %s with %s: one checkout, so their edits land in the same files\n",
			a.Name, a.Workspace, strings.Join(a.SharesWorkspaceWith, ", "))
	}
	return err
}

// --- list ---

// AgentListOptions are the inputs of `leo agent list`.
type AgentListOptions struct {
	IO     *IOStreams
	Client *client.Client
	JSON   bool
	Now    func() time.Time
	// StorePath, when Client is nil (no daemon runs), is the agents.json
	// read instead.
	StorePath string
}

// agentListJSON is `leo agent list --json`. Field names are an API (those
// of api.Agent); env values never appear, only env_keys. Live is false
// when no daemon runs and the list is state/agents.json as the last daemon
// saved it (states then are not live).
type agentListJSON struct {
	Agents []api.Agent `json:"agents"`
	Live   bool        `json:"live"`
}

func newAgentListCmd(f *Factory) *cobra.Command {
	opts := &AgentListOptions{IO: f.IO}
	return readCommand(f, &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List agents: harness, state, session, restarts, last exit",
		Long: `List agents: harness, state, session, restarts, last exit. With no daemon
running, the list is state/agents.json as the last daemon saved it: the
states are not live ("live": false in --json).`,
		Args: cobra.NoArgs,
	}, &opts.JSON, func(ctx context.Context, c *client.Client, h home.Home, _ []string) error {
		opts.Client, opts.StorePath = c, h.AgentsPath()
		return runAgentList(ctx, opts)
	})
}

func runAgentList(ctx context.Context, opts *AgentListOptions) error {
	if opts.Client == nil {
		return runAgentListOffline(opts)
	}
	if opts.JSON {
		// The daemon's own JSON of the list inside the object writeJSON
		// prints for agentListJSON: the same bytes, without decoding and
		// re-encoding every record. Run checks and lays out the whole
		// object once (layoutJSON), so the list is not scanned twice.
		raw, err := opts.Client.ListJSON(ctx)
		if err != nil {
			return err
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
			return api.Errorf(api.CodeInternal, "leo daemon sent an unreadable agent list: not a JSON array")
		}
		var b bytes.Buffer
		b.Grow(len(raw) + 32)
		b.WriteString(`{"agents":`)
		b.Write(raw)
		b.WriteString(`,"live":true}` + "\n")
		_, err = opts.IO.Out.Write(b.Bytes())
		return err
	}
	agents, err := opts.Client.List(ctx)
	if err != nil {
		return err
	}
	return printAgentList(opts, agents)
}

// runAgentListOffline is the list with no daemon: agents.json, read only.
func runAgentListOffline(opts *AgentListOptions) error {
	agents, skipped, err := agent.ReadListing(opts.StorePath)
	if err != nil {
		return api.Errorf(api.CodeInternal, "no leo daemon runs, and its agent list cannot be read: %w", err)
	}
	offlineNote(opts.IO, "agents as "+opts.StorePath+" last saved them; their states are not live")
	for _, sk := range skipped {
		fmt.Fprintf(opts.IO.ErrOut, "leo: warning: %s: %s\n", opts.StorePath, cell(sk.Why, 200))
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, agentListJSON{Agents: agents, Live: false})
	}
	return printAgentList(opts, agents)
}

func printAgentList(opts *AgentListOptions, agents []api.Agent) error {
	if len(agents) == 0 {
		_, err := fmt.Fprintln(opts.IO.Out, "no agents — spawn one with: leo agent spawn <template>")
		return err
	}
	now := nowOr(opts.Now)
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tHARNESS\tSTATE\tATTENTION\tBRANCH\tSESSION\tRESTARTS\tLAST EXIT\tUSAGE TODAY\tENV")
	for _, a := range agents {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", a.Name, a.Harness, stateText(a), attentionText(a.Attention, now, 40),
			branchText(a.Worktree), orDash(shortID(a.SessionID)), a.Restarts, lastExitText(a.LastExit, now), orDash(usageText(a.UsageToday, nil)), orDash(strings.Join(a.EnvKeys, ",")))
	}
	return tw.Flush()
}

// attentionWords is an attention state as a person reads it.
func attentionWords(s api.AttentionState) string {
	if s == api.AttentionNeedsInput {
		return "needs input"
	}
	return string(s)
}

// attentionText is an agent's attention in one cell of at most width
// runes of detail: what it does, since when, and what it asks or said.
func attentionText(at *api.Attention, now time.Time, width int) string {
	if at == nil {
		return "-"
	}
	text := attentionWords(at.State)
	switch at.State {
	case api.AttentionWorking:
		text += " " + ago(now.Sub(at.Since))
	case api.AttentionLimited:
		if at.ResetsAt != nil {
			text += " until " + at.ResetsAt.Local().Format("15:04")
		}
	}
	if at.Detail != "" && at.State != api.AttentionWorking && at.State != api.AttentionIdle {
		text += ": " + cell(at.Detail, width)
	}
	return text
}

// waitingText says what an agent's queued messages wait for, when it is a
// person ("" when they do not).
func waitingText(a api.Agent) string {
	at := a.Attention
	if a.Queued == 0 || at == nil {
		return ""
	}
	switch at.State {
	case api.AttentionNeedsInput:
		what := "a person's answer"
		if p := at.Prompt; p != nil && p.Kind == api.PromptPermission {
			what = "permission"
		}
		return fmt.Sprintf("%s asks %s: %s (answer it in the TUI: leo attach %s)", a.Harness, what, cell(at.Detail, 120), a.Name)
	case api.AttentionLimited:
		until := "its reset"
		if at.ResetsAt != nil {
			until = at.ResetsAt.Local().Format(time.RFC3339)
		}
		return fmt.Sprintf("%s is limited until %s: %s", a.Harness, until, cell(at.Detail, 120))
	}
	return ""
}

// stateText adds why a stopped agent is stopped.
func stateText(a api.Agent) string {
	switch {
	case a.State == api.StateStopped && a.LastError != "":
		return "stopped (error)"
	case a.State == api.StateStopped && a.WakeOnMessage:
		return "stopped (idle)"
	default:
		return string(a.State)
	}
}

func shortID(id string) string {
	if len(id) > 13 {
		return id[:12] + "…"
	}
	return id
}

func lastExitText(e *api.Exit, now time.Time) string {
	if e == nil {
		return "-"
	}
	how := fmt.Sprintf("status %d", e.Status)
	if e.Signal != "" {
		how = "signal " + e.Signal
	}
	return fmt.Sprintf("%s, %s ago", how, ago(now.Sub(e.At)))
}

// ago is a coarse, human duration.
func ago(d time.Duration) string { return humantime.Ago(d) }

// --- status ---

// AgentStatusOptions are the inputs of `leo agent status`.
type AgentStatusOptions struct {
	IO     *IOStreams
	Client *client.Client
	Name   string
	JSON   bool
	Now    func() time.Time
}

func newAgentStatusCmd(f *Factory) *cobra.Command {
	opts := &AgentStatusOptions{IO: f.IO}
	return daemonCommand(f, &cobra.Command{
		Use:   "status <name>",
		Short: "Show one agent in full, with its last exit and stderr tail",
		Args:  cobra.MatchAll(cobra.ExactArgs(1), agentNameArg(0)),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, args []string) error {
		opts.Client, opts.Name = c, args[0]
		return runAgentStatus(ctx, opts)
	})
}

func runAgentStatus(ctx context.Context, opts *AgentStatusOptions) error {
	a, err := opts.Client.Get(ctx, opts.Name)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, a)
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 1, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	row("name", a.Name)
	if a.Task != "" {
		row("task", a.Task+" (its own scope, tasks."+a.Task+")")
	} else {
		row("template", a.Template)
	}
	row("harness", a.Harness)
	row("model", orDash(a.Model))
	row("state", stateText(a))
	if at := a.Attention; at != nil {
		row("attention", attentionText(at, nowOr(opts.Now), 200)+" (since "+at.Since.Local().Format(time.RFC3339)+")")
		if at.State == api.AttentionIdle && at.Detail != "" {
			row("last reply", cell(at.Detail, 200))
		}
		if at.State == api.AttentionWorking && at.Detail != "" {
			what := cell(at.Detail, 120)
			if at.MessageID != "" {
				what += " (message " + at.MessageID + ")"
			}
			row("working on", what)
		}
		if p := at.Prompt; p != nil {
			row("prompt", p.Kind+" "+p.ID)
			for _, l := range strings.Split(strings.TrimSpace(p.Text), "\n") {
				row("  asks", cell(l, 200))
			}
			for i, c := range p.Choices {
				row(fmt.Sprintf("  choice %d", i+1), cell(c, 120))
			}
			row("  answer with", answerHint(a.Name, p))
		}
	}
	if w := waitingText(a); w != "" {
		row("waiting", w)
	}
	if a.WakeOnMessage {
		row("wake on message", "yes")
	}
	row("workspace", a.Workspace)
	if w := a.Worktree; w != nil {
		row("worktree", fmt.Sprintf("%s of %s, branch %s from %s (%s)", w.Path, w.Repo, w.Branch, orDash(w.Base), w.State()))
	}
	row("tmux session", a.TmuxSession+" (leo attach "+a.Name+")")
	row("session id", orDash(a.SessionID))
	row("restarts", fmt.Sprint(a.Restarts))
	row("created", a.CreatedAt.Local().Format(time.RFC3339))
	if a.StartedAt != nil {
		row("started", a.StartedAt.Local().Format(time.RFC3339))
	}
	row("env keys", orDash(strings.Join(a.EnvKeys, ", ")))
	if a.LastError != "" {
		row("last error", a.LastError)
	}
	if e := a.LastExit; e != nil {
		row("last exit", lastExitText(e, nowOr(opts.Now))+" (at "+e.At.Local().Format(time.RFC3339)+")")
	} else {
		row("last exit", "-")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if e := a.LastExit; e != nil && strings.TrimSpace(e.StderrTail) != "" {
		fmt.Fprintln(opts.IO.Out, "stderr tail:")
		for _, line := range strings.Split(strings.TrimRight(e.StderrTail, "\n"), "\n") {
			fmt.Fprintf(opts.IO.Out, "  | %s\n", line)
		}
	}
	writeDeliveries(opts.IO.Out, a)
	return nil
}

// writeDeliveries shows what became of the latest messages, so a person
// sees a message that could not land, and why.
func writeDeliveries(w io.Writer, a api.Agent) {
	if a.Queued == 0 && len(a.Deliveries) == 0 {
		return
	}
	fmt.Fprintf(w, "messages: %d queued\n", a.Queued)
	for _, d := range a.Deliveries {
		line := fmt.Sprintf("  %s  %-9s  %s", d.At.Local().Format(time.RFC3339), d.Status, d.ID)
		if d.Kind != "" {
			line += " (" + d.Kind + ")"
		}
		if d.From != "" {
			line += " from " + cell(d.From, 40)
		}
		if d.FirstLine != "" {
			line += " \u201c" + cell(d.FirstLine, 60) + "\u201d"
		}
		if d.Error != "" {
			line += "  " + d.Error
		}
		fmt.Fprintln(w, line)
	}
}

// --- start | stop | restart | reset ---

// agentVerb is a command that changes one agent's run state: one daemon
// call, answering the agent as it is now.
type agentVerb struct {
	verb, short string
	call        func(*client.Client, context.Context, string) (api.Agent, error)
}

// agentVerbs are `leo agent start|stop|restart|reset`.
var agentVerbs = []agentVerb{
	{"start", "Start a stopped agent (resuming its conversation)", (*client.Client).Start},
	{"stop", "Stop an agent (its tmux session ends; the record stays)", (*client.Client).Stop},
	{"restart", "Restart an agent, resuming its conversation", (*client.Client).Restart},
	{"reset", "Restart an agent with a new conversation", (*client.Client).Reset},
}

// AgentVerbOptions are the inputs of `leo agent start|stop|restart|reset`.
type AgentVerbOptions struct {
	IO     *IOStreams
	Client *client.Client
	Name   string
	JSON   bool
	// call is the verb's daemon call (agentVerb.call).
	call func(*client.Client, context.Context, string) (api.Agent, error)
}

func newAgentVerbCmd(f *Factory, v agentVerb) *cobra.Command {
	opts := &AgentVerbOptions{IO: f.IO, call: v.call}
	return daemonCommand(f, &cobra.Command{
		Use:   v.verb + " <name>",
		Short: v.short,
		Args:  cobra.MatchAll(cobra.ExactArgs(1), agentNameArg(0)),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, args []string) error {
		opts.Client, opts.Name = c, args[0]
		return runAgentVerb(ctx, opts)
	})
}

func runAgentVerb(ctx context.Context, opts *AgentVerbOptions) error {
	a, err := opts.call(opts.Client, ctx, opts.Name)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, a)
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s: %s\n", a.Name, stateText(a))
	return err
}

// --- delete ---

// AgentDeleteOptions are the inputs of `leo agent delete`.
type AgentDeleteOptions struct {
	IO     *IOStreams
	Client *client.Client
	Name   string
	Yes    bool
	JSON   bool
	// Force and KeepWorktree: what becomes of the agent's worktree.
	Force, KeepWorktree bool
	// CanPrompt: stdin and stdout are a terminal, so a question can be asked.
	CanPrompt bool
}

func newAgentDeleteCmd(f *Factory) *cobra.Command {
	opts := &AgentDeleteOptions{IO: f.IO}
	cmd := daemonCommand(f, &cobra.Command{
		Use:     "delete <name>",
		Aliases: []string{"rm"},
		Short:   "Delete a stopped agent's record",
		Long: `Delete an agent. Only a stopped agent can be deleted (stop it first). Its
conversation files, kept by the harness, are left alone.

An agent's worktree goes with it only when nothing would be lost: a worktree
with uncommitted changes is refused (worktree_dirty), a branch with commits
on neither its base nor any remote too (worktree_unmerged), each naming what
would be lost. --force removes it anyway and says what was discarded;
--keep-worktree deletes the agent and keeps the worktree and branch.

On a terminal leo asks first; otherwise --yes is required.`,
		Args: cobra.MatchAll(cobra.ExactArgs(1), agentNameArg(0)),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, args []string) error {
		opts.Client, opts.Name = c, args[0]
		opts.CanPrompt = !opts.JSON && isInteractive(f.IO)
		return runAgentDelete(ctx, opts)
	})
	cmd.Flags().BoolVarP(&opts.Yes, "yes", "y", false, "delete without asking")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "remove the agent's worktree and branch even if that discards changes or commits")
	cmd.Flags().BoolVar(&opts.KeepWorktree, "keep-worktree", false, "keep the agent's worktree and branch")
	cmd.MarkFlagsMutuallyExclusive("force", "keep-worktree")
	return cmd
}

func runAgentDelete(ctx context.Context, opts *AgentDeleteOptions) error {
	if !opts.Yes {
		if !opts.CanPrompt {
			return usageErrorf("refusing to delete agent %q without --yes (not asking: no terminal)", opts.Name)
		}
		ok, err := confirm(opts.IO, fmt.Sprintf("Delete agent %s? [y/N] ", opts.Name))
		if err != nil {
			return err
		}
		if !ok {
			return api.Errorf(api.CodeInvalidArgs, "not deleted: %s", opts.Name)
		}
	}
	res, err := opts.Client.DeleteAgent(ctx, opts.Name, api.DeleteRequest{Force: opts.Force, KeepWorktree: opts.KeepWorktree})
	if err != nil {
		if client.IsAgentRunning(err) {
			return api.Errorf(api.CodeAgentRunning, "%w (leo agent stop %s)", err, opts.Name)
		}
		return err
	}
	res.OK, res.Agent = true, opts.Name
	if opts.JSON {
		return writeJSON(opts.IO.Out, res)
	}
	if _, err := fmt.Fprintf(opts.IO.Out, "deleted %s\n", opts.Name); err != nil {
		return err
	}
	return printWorktreeRemove(opts.IO.Out, res.Worktree)
}

// printWorktreeRemove says what a delete did with the agent's worktree,
// each line made safe for a terminal.
func printWorktreeRemove(w io.Writer, r *api.WorktreeRemove) error {
	for _, l := range r.Lines() {
		if _, err := fmt.Fprintln(w, cell(l, 2000)); err != nil {
			return err
		}
	}
	return nil
}

// branchText is an agent's worktree branch in the list, with * when it
// has uncommitted changes and +N commits ahead ("-" without a worktree).
func branchText(w *api.Worktree) string {
	if w == nil {
		return "-"
	}
	s := cell(w.Branch, 40)
	if w.Dirty {
		s += "*"
	}
	if w.Ahead > 0 {
		s += fmt.Sprintf(" +%d", w.Ahead)
	}
	return s
}

// isInteractive reports whether a question can be asked: stdin and stdout
// are both terminals.
func isInteractive(ios *IOStreams) bool {
	in, ok := ios.In.(*os.File)
	return ok && ios.IsTTY && term.IsTerminal(int(in.Fd()))
}

// confirm asks a yes/no question on stderr and reads the answer from stdin.
func confirm(ios *IOStreams, question string) (bool, error) {
	fmt.Fprint(ios.ErrOut, question)
	line, err := bufio.NewReader(ios.In).ReadString('\n')
	if err != nil && err != io.EOF {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	default:
		return false, nil
	}
}

// --- logs ---

// AgentLogsOptions are the inputs of `leo agent logs`.
type AgentLogsOptions struct {
	IO     *IOStreams
	Client *client.Client
	Name   string
	Lines  int
	JSON   bool
	// Follow: keep printing what the pane adds (followLogs), until
	// interrupted. Every is how often it looks (0: followEvery).
	Follow bool
	Every  time.Duration
}

func newAgentLogsCmd(f *Factory) *cobra.Command {
	opts := &AgentLogsOptions{IO: f.IO}
	cmd := daemonCommand(f, &cobra.Command{
		Use:   "logs <name>",
		Short: "Print what the agent's pane shows (the last --lines lines); -f follows it",
		Long: `Print what the agent's pane shows: its last --lines lines, scrollback
included. A stopped agent shows the stderr tail of its last exit.

-f/--follow then keeps printing the lines the pane adds, looking once a
second, until Ctrl-C (or the agent is deleted). A TUI redraws some lines in
place (a spinner, a status line): such a line is printed again each time it
changes. --follow prints text as it comes, so it has no --json.`,
		Args: cobra.MatchAll(cobra.ExactArgs(1), agentNameArg(0), func(*cobra.Command, []string) error {
			if opts.Lines < 1 {
				return usageErrorf("--lines must be at least 1, got %d", opts.Lines)
			}
			if opts.Follow && opts.JSON {
				return usageErrorf("--follow prints text as the pane grows; it cannot be one JSON object (drop --json or --follow)")
			}
			return nil
		}),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, args []string) error {
		opts.Client, opts.Name = c, args[0]
		return runAgentLogs(ctx, opts)
	})
	cmd.Flags().IntVarP(&opts.Lines, "lines", "n", 100, "how many lines of the pane and its scrollback")
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "keep printing the lines the pane adds, until interrupted")
	return cmd
}

func runAgentLogs(ctx context.Context, opts *AgentLogsOptions) error {
	if opts.Follow {
		return followLogs(ctx, opts)
	}
	l, err := opts.Client.Logs(ctx, opts.Name, opts.Lines)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, l)
	}
	text := l.Text
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	_, err = io.WriteString(opts.IO.Out, text)
	return err
}

// --- send ---

// AgentSendOptions are the inputs of `leo agent send`.
type AgentSendOptions struct {
	IO      *IOStreams
	Client  *client.Client
	Name    string
	Message string
	// ID names the message (--id): a retry with the same id is answered
	// with the first answer and never queued twice.
	ID   string
	JSON bool
	// Wait (--wait) returns once the harness took the message as a turn;
	// Reply (--reply) once that turn ended, printing its reply. Timeout
	// (--timeout) bounds either; 0 is api.MaxWait.
	Wait, Reply bool
	Timeout     time.Duration
	// Now and Quiet tune the progress lines of a long wait (tests).
	Now func() time.Time
}

func newAgentSendCmd(f *Factory) *cobra.Command {
	opts := &AgentSendOptions{IO: f.IO}
	cmd := daemonCommand(f, &cobra.Command{
		Use:   "send <name> <text>...",
		Short: "Deliver a message into an agent's TUI",
		Long: `Hand a message to an agent. The words after the name are joined with
spaces. Delivery is fire-and-forget: leo queues the message (waking a
parked agent) and returns; the daemon pastes it when the TUI's input line
is idle, in order. Its outcome shows in 'leo agent status'.

Run inside a leo agent or task (LEO_AGENT or LEO_TASK set, as leo sets
them in what it launches), the message is signed with its sender's line,
"[message from <agent>] …", as leo_send_message signs.

--id names the message: sent again with the same id (and text), it is
answered with the first answer and never queued twice, even after a
daemon restart (ids are remembered 24 hours, the newest 256 per agent).
A daemon that got the message but did not answer (stopped, stuck) is
outcome_unknown (exit 5), not a failure: retry with the same --id.

--wait returns once the harness took the message as a turn, or fails with
the delivery's reason. --reply waits for that turn's end and prints its
reply: the assistant's final text of that turn, read from the harness's
own record. A message behind others, or behind a prompt a person must
answer, waits its turn; a long wait says why on stderr. --timeout bounds
the wait (wait_timeout, exit 6): the message is not cancelled, and
'leo agent message NAME ID' tells its outcome later.`,
		Args: cobra.MatchAll(cobra.MinimumNArgs(2), agentNameArg(0), func(_ *cobra.Command, args []string) error {
			if strings.TrimSpace(sendMessage(args)) == "" {
				return usageErrorf("the message is empty")
			}
			if opts.ID != "" {
				if err := api.CheckMessageID(opts.ID); err != nil {
					return usageErrorf("--id: %s", strings.TrimPrefix(err.Error(), "id: "))
				}
			}
			return checkWaitFlags(opts.Wait || opts.Reply, opts.Timeout)
		}),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, args []string) error {
		opts.Client, opts.Name, opts.Message = c, args[0], sendMessage(args)
		// Run inside a leo agent or task (LEO_AGENT / LEO_TASK, which leo
		// sets in what it launches), the message is signed with it, as
		// leo_send_message signs: harnesses without MCP (pi) message
		// through this command.
		if from := mcp.SenderFromEnv(f.Getenv); from.Label() != "" {
			if from.Agent == opts.Name {
				return usageErrorf("%s is you (LEO_AGENT); message another agent (leo agent list)", opts.Name)
			}
			opts.Message = api.Signed(from.Label(), opts.Message)
		}
		if opts.Wait || opts.Reply {
			return runAgentSendWait(ctx, opts)
		}
		return runAgentSend(ctx, opts)
	})
	cmd.Flags().StringVar(&opts.ID, "id", "", "name the message (letters, digits, - _ . :): a retry with the same id is never queued twice")
	addWaitFlags(cmd, &opts.Wait, &opts.Reply, &opts.Timeout)
	return cmd
}

// sendMessage is the message of `leo agent send <name> <text>...`: the
// words after the name, joined with spaces.
func sendMessage(args []string) string {
	return strings.Join(args[1:], " ")
}

func runAgentSend(ctx context.Context, opts *AgentSendOptions) error {
	res, err := opts.Client.SendMessage(ctx, opts.Name, api.SendRequest{Message: opts.Message, ID: opts.ID})
	if api.HasCode(err, api.CodeOutcomeUnknown) {
		retry := "check 'leo agent status " + opts.Name + "' before sending it again; next time name it with --id, and a retry is safe"
		if opts.ID != "" {
			retry = "send it again with --id " + opts.ID + ": it is never queued twice"
		}
		return api.Errorf(api.CodeOutcomeUnknown, "%w; %s", err, retry)
	}
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, res)
	}
	var note string
	if res.Woke {
		note = " (woke the agent)"
	}
	_, err = fmt.Fprintf(opts.IO.Out, "queued for %s (%s in queue)%s; the daemon delivers it when the input line is idle\n",
		res.Agent, plural(res.Queued, "message"), note)
	return err
}

// --- compact ---

// AgentCompactOptions are the inputs of `leo agent compact`.
type AgentCompactOptions struct {
	IO     *IOStreams
	Client *client.Client
	Name   string
	JSON   bool
}

func newAgentCompactCmd(f *Factory) *cobra.Command {
	opts := &AgentCompactOptions{IO: f.IO}
	return daemonCommand(f, &cobra.Command{
		Use:   "compact <name>",
		Short: "Compact an agent's conversation (its harness's /compact)",
		Long: `Ask the agent's harness to compact its conversation: leo queues the
harness's own compact command behind the messages waiting for the agent and
types it when the TUI's input line is idle. It returns at once; the outcome
shows in 'leo agent status' (a delivery of kind compact): delivered once the
harness recorded the compaction, failed if it refused (claude declines a
conversation too short to compact) or recorded nothing.`,
		Args: cobra.MatchAll(cobra.ExactArgs(1), agentNameArg(0)),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, args []string) error {
		opts.Client, opts.Name = c, args[0]
		return runAgentCompact(ctx, opts)
	})
}

func runAgentCompact(ctx context.Context, opts *AgentCompactOptions) error {
	res, err := opts.Client.Compact(ctx, opts.Name)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, res)
	}
	note := ""
	if res.Woke {
		note = " (woke the agent)"
	}
	_, err = fmt.Fprintf(opts.IO.Out, "compaction queued for %s (%s in queue, this one included)%s; its outcome shows in leo agent status %s\n",
		res.Agent, plural(res.Queued, "item"), note, res.Agent)
	return err
}

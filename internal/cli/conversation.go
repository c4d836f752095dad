package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
)

// A waited send, and `leo agent message`, follow a message with long polls
// of GET /agents/{name}/messages/{id}: each poll is bounded by waitSlice,
// so the wait can say on stderr, when it is long, what the message waits
// for (a queue ahead of it, a prompt a person must answer).
const (
	waitSlice = 10 * time.Second
	// waitSayAfter is how long a wait stays quiet before it says why.
	waitSayAfter = 5 * time.Second
)

func addWaitFlags(cmd *cobra.Command, wait, reply *bool, timeout *time.Duration) {
	cmd.Flags().BoolVar(wait, "wait", false, "return once the harness took the message as a turn (or fail with the delivery's reason)")
	cmd.Flags().BoolVar(reply, "reply", false, "wait for that turn's end and print its reply, read from the harness's own record")
	cmd.Flags().DurationVar(timeout, "timeout", 0, "bound the wait (e.g. 90s, 10m; default and most "+api.MaxWait.String()+"): wait_timeout, exit 6; the message is not cancelled")
}

func checkWaitFlags(waits bool, timeout time.Duration) error {
	switch {
	case timeout != 0 && !waits:
		return usageErrorf("--timeout bounds a wait: give it with --wait or --reply")
	case timeout < 0 || timeout > api.MaxWait:
		return usageErrorf("--timeout: %s is not from 1s to %s", timeout, api.MaxWait)
	case timeout != 0 && timeout < time.Second:
		return usageErrorf("--timeout: %s is not from 1s to %s", timeout, api.MaxWait)
	}
	return nil
}

// runAgentSendWait queues the message, then follows it.
//
// The send itself waits (POST send with wait), so the daemon refuses a
// wait it cannot serve before anything is queued. The message is named
// here when the caller did not name it, so the follow-up polls know it
// and a retry after outcome_unknown is safe.
func runAgentSendWait(ctx context.Context, opts *AgentSendOptions) error {
	id := opts.ID
	if id == "" {
		id = newMessageID()
	}
	f := messageFollow{c: opts.Client, io: opts.IO, name: opts.Name, id: id, reply: opts.Reply, timeout: opts.Timeout, json: opts.JSON, now: opts.Now, start: nowOr(opts.Now)}
	// The first wait is short: past it, a long wait says why.
	first := min(f.total(), waitSayAfter)
	out, err := opts.Client.SendAndWait(ctx, opts.Name, api.SendRequest{Message: opts.Message, ID: id, Wait: f.wait(), Timeout: first.String()})
	switch {
	case api.HasCode(err, api.CodeOutcomeUnknown):
		return api.Errorf(api.CodeOutcomeUnknown, "%w; send it again with --id %s: it is never queued twice", err, id)
	case api.HasCode(err, api.CodeWaitTimeout):
		return f.run(ctx)
	case err != nil:
		return err
	}
	return f.print(out)
}

// newMessageID is a fresh message id (api.CheckMessageID's alphabet).
func newMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "cli-" + hex.EncodeToString(b[:])
}

func (f messageFollow) wait() string {
	if f.reply {
		return api.WaitReply
	}
	return api.WaitDelivered
}

func (f messageFollow) total() time.Duration {
	if f.timeout == 0 {
		return api.MaxWait
	}
	return f.timeout
}

// messageFollow follows one message to its delivery or its reply.
type messageFollow struct {
	c       *client.Client
	io      *IOStreams
	name    string
	id      string
	reply   bool
	timeout time.Duration
	json    bool
	now     func() time.Time
	// start is when the wait began (zero: when run is called).
	start time.Time
}

func (f messageFollow) run(ctx context.Context) error {
	wait, total := f.wait(), f.total()
	start := f.start
	if start.IsZero() {
		start = nowOr(f.now)
	}
	deadline := start.Add(total)
	said := ""
	for {
		left := deadline.Sub(nowOr(f.now))
		if left <= 0 {
			out, _ := f.c.Message(ctx, f.name, f.id, "", 0)
			return api.Errorf(api.CodeWaitTimeout, "agent %s: message %s is still %s after %s%s; the wait ended, the message goes on (leo agent message %s %s tells its outcome)",
				f.name, f.id, strings.ReplaceAll(cmpStr(out.Status, "unknown"), "_", " "), total, waitingNote(out.Waiting), f.name, f.id)
		}
		slice := min(left, waitSlice)
		out, err := f.c.Message(ctx, f.name, f.id, wait, max(slice, time.Second))
		if api.HasCode(err, api.CodeWaitTimeout) {
			if nowOr(f.now).Sub(start) >= waitSayAfter {
				now, _ := f.c.Message(ctx, f.name, f.id, "", 0)
				if line := waitLine(now); line != "" && line != said {
					fmt.Fprintln(f.io.ErrOut, line)
					said = line
				}
			}
			continue
		}
		if err != nil {
			return err
		}
		return f.print(out)
	}
}

// waitLine is what a long wait says on stderr.
func waitLine(out api.MessageOutcome) string {
	status := strings.ReplaceAll(out.Status, "_", " ")
	if status == "" {
		return ""
	}
	return "waiting: message " + status + waitingNote(out.Waiting)
}

// waitingNote is what a message waits for, in parentheses: its words may
// quote a prompt, so they are made safe for the terminal.
func waitingNote(w string) string {
	if w == "" {
		return ""
	}
	return " (" + cell(w, 300) + ")"
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// print writes the outcome: the reply (text) or the whole outcome
// (--json); a failed delivery or a turn that did not end well is an
// error carrying the outcome.
func (f messageFollow) print(out api.MessageOutcome) error {
	var fail error
	switch {
	case out.Status == api.MessageFailed:
		fail = api.Errorf(api.CodeDeliveryFailed, "agent %s: message %s not delivered: %s", f.name, out.ID, cell(out.Reason, 500))
	case out.Reply != nil && out.Outcome != "" && out.Outcome != api.OutcomeTurnOK:
		fail = api.Errorf(api.CodeTurnFailed, "agent %s: the turn of message %s ended %s: %s", f.name, out.ID, out.Outcome, cell(out.Reason, 500))
	}
	if f.json {
		if fail != nil {
			return outcomeFailure{err: fail, out: out}
		}
		return writeJSON(f.io.Out, out)
	}
	switch {
	case out.Reply != nil && out.Reply.Text != "":
		if _, err := io.WriteString(f.io.Out, textBlock(strings.TrimRight(out.Reply.Text, "\n"))+"\n"); err != nil {
			return err
		}
	case fail == nil && !f.reply:
		if _, err := fmt.Fprintf(f.io.Out, "delivered to %s (message %s)\n", f.name, out.ID); err != nil {
			return err
		}
	}
	return fail
}

// outcomeFailure is a failed waited send under --json: the failure object
// carries the outcome's fields next to error and message.
type outcomeFailure struct {
	err error
	out api.MessageOutcome
}

func (e outcomeFailure) Error() string { return e.err.Error() }
func (e outcomeFailure) Unwrap() error { return e.err }
func (e outcomeFailure) JSONBody() any {
	var ae *api.Error
	code := api.CodeInternal
	if errors.As(e.err, &ae) {
		code = ae.Code
	}
	return struct {
		Error   api.Code `json:"error"`
		Message string   `json:"message"`
		api.MessageOutcome
	}{code, e.err.Error(), e.out}
}

// --- message ---

// AgentMessageOptions are the inputs of `leo agent message`.
type AgentMessageOptions struct {
	IO          *IOStreams
	Client      *client.Client
	Name, ID    string
	Wait, Reply bool
	Timeout     time.Duration
	JSON        bool
	Now         func() time.Time
}

func newAgentMessageCmd(f *Factory) *cobra.Command {
	opts := &AgentMessageOptions{IO: f.IO}
	cmd := daemonCommand(f, &cobra.Command{
		Use:   "message <name> <id>",
		Short: "Tell a message's outcome: queued, delivered, failed, and its reply",
		Long: `Show what became of a message sent to an agent (the id 'leo agent send'
answered): queued, in flight, delivered or failed, what it waits for, and
once its turn ended the reply. --wait and --reply wait as they do on send.`,
		Args: cobra.MatchAll(cobra.ExactArgs(2), agentNameArg(0), func(_ *cobra.Command, args []string) error {
			if err := api.CheckMessageID(args[1]); err != nil {
				return usageErrorf("%s", err.Error())
			}
			return checkWaitFlags(opts.Wait || opts.Reply, opts.Timeout)
		}),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, args []string) error {
		opts.Client, opts.Name, opts.ID = c, args[0], args[1]
		if opts.Wait || opts.Reply {
			f := messageFollow{c: c, io: opts.IO, name: opts.Name, id: opts.ID, reply: opts.Reply, timeout: opts.Timeout, json: opts.JSON, now: opts.Now}
			return f.run(ctx)
		}
		out, err := c.Message(ctx, opts.Name, opts.ID, "", 0)
		if err != nil {
			return err
		}
		if opts.JSON {
			return writeJSON(opts.IO.Out, out)
		}
		return printOutcome(opts.IO.Out, out)
	})
	addWaitFlags(cmd, &opts.Wait, &opts.Reply, &opts.Timeout)
	return cmd
}

// printOutcome is `leo agent message` without a wait.
func printOutcome(w io.Writer, out api.MessageOutcome) error {
	fmt.Fprintf(w, "message %s to %s: %s%s\n", out.ID, out.Agent, strings.ReplaceAll(out.Status, "_", " "), waitingNote(out.Waiting))
	if out.Reason != "" {
		fmt.Fprintf(w, "reason: %s\n", cell(out.Reason, 500))
	}
	if out.Reply != nil {
		fmt.Fprintf(w, "turn: %s%s\n", out.Outcome, usageNote(out.Usage, out.CostUSD))
		fmt.Fprintf(w, "reply:\n%s\n", indent(textBlock(strings.TrimRight(out.Reply.Text, "\n")), "  "))
	}
	return nil
}

// textBlock is text from a harness or a sender (a reply, a message) made
// safe for a terminal: every control character but newline and tab prints
// as a space, so no escape sequence reaches the terminal. --json keeps
// the exact text.
func textBlock(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
}

func indent(s, pad string) string {
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// usageNote is " (12.3k in, 456 out, $0.01)" for a turn's usage.
func usageNote(u *api.Usage, cost *float64) string {
	s := usageText(u, cost)
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// usageText is "12.3k in, 456 out, 9.1k cache, $0.0123", "" for none:
// a turn's, a day's or a task run's usage.
func usageText(u *api.Usage, cost *float64) string {
	var parts []string
	if u != nil {
		parts = append(parts, tokens(u.InputTokens)+" in", tokens(u.OutputTokens)+" out")
		if c := u.CacheReadTokens + u.CacheWriteTokens; c > 0 {
			parts = append(parts, tokens(c)+" cache")
		}
	}
	if cost != nil && *cost > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", *cost))
	}
	return strings.Join(parts, ", ")
}

// tokens is n compact: 950, 12.3k, 4.1M.
func tokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// --- conversation ---

// AgentConversationOptions are the inputs of `leo agent conversation`.
type AgentConversationOptions struct {
	IO           *IOStreams
	Client       *client.Client
	Name         string
	Last         int
	Conversation string
	Follow       bool
	JSON         bool
}

func newAgentConversationCmd(f *Factory) *cobra.Command {
	opts := &AgentConversationOptions{IO: f.IO}
	cmd := daemonCommand(f, &cobra.Command{
		Use:   "conversation <name>",
		Short: "Show what an agent said, turn by turn, from its harness's own record",
		Long: `Print an agent's conversation, oldest turn first: each user message (and
who sent it: cli, web, api, task <t>, agent <a>; nothing for text a person
typed in the TUI), the tools the model ran, the reply, the outcome and the
usage. It is read from the harness's own record (claude's transcript,
codex's rollout, opencode's session store), for a running or a stopped
agent, across resumes. A reset starts a new conversation: --conversation
ID reads an earlier one (the JSON's "earlier" lists them).

--follow keeps printing turns as they end (Ctrl-C stops). --json prints
the whole conversation as one object; with --follow, one turn object per
line as each ends.`,
		Args: cobra.MatchAll(cobra.ExactArgs(1), agentNameArg(0), func(*cobra.Command, []string) error {
			if opts.Last < 0 {
				return usageErrorf("--last: %d is not a count of turns", opts.Last)
			}
			return nil
		}),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, args []string) error {
		opts.Client, opts.Name = c, args[0]
		return runAgentConversation(ctx, opts)
	})
	cmd.Flags().IntVar(&opts.Last, "last", 0, "show only the newest N turns")
	cmd.Flags().StringVar(&opts.Conversation, "conversation", "", "read an earlier conversation of the agent (before a reset), by id")
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "keep printing turns as they end")
	cmd.Annotations = map[string]string{jsonLines: "true"} // with --follow
	return cmd
}

func runAgentConversation(ctx context.Context, opts *AgentConversationOptions) error {
	q := api.ConversationQuery{Last: opts.Last, ID: opts.Conversation}
	conv, err := opts.Client.Conversation(ctx, opts.Name, q)
	if err != nil {
		return err
	}
	if !opts.Follow {
		if opts.JSON {
			return writeJSON(opts.IO.Out, conv)
		}
		return printConversation(opts.IO.Out, conv)
	}
	out := opts.IO.LinesOut()
	shown := map[string]bool{}
	if q.Last > 0 {
		// The turns before the newest N are not to be printed when the
		// follow reads the whole conversation again.
		all, err := opts.Client.Conversation(ctx, opts.Name, api.ConversationQuery{ID: conv.ConversationID})
		if err != nil {
			return err
		}
		keep := map[string]bool{}
		for _, t := range conv.Turns {
			keep[t.ID] = true
		}
		for _, t := range all.Turns {
			if !keep[t.ID] && t.Outcome != api.OutcomeTurnRunning {
				shown[t.ID] = true
			}
		}
	}
	show := func(turns []api.Turn) error {
		for _, t := range turns {
			if t.Outcome == api.OutcomeTurnRunning || shown[t.ID] {
				continue
			}
			shown[t.ID] = true
			var err error
			if opts.JSON {
				err = writeJSON(out, t)
			} else {
				err = printTurn(out, t)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := show(conv.Turns); err != nil {
		return err
	}
	// Each turn.ended (or attention change) of the agent reads the
	// conversation again; the reader is incremental, so that costs what
	// it grew by. A stream the daemon ended is taken up again where it
	// stopped.
	var since uint64
	for {
		last, err := opts.Client.FollowEvents(ctx, client.EventsQuery{Agent: opts.Name, Since: since}, func(e api.Event) error {
			if e.Type != api.EventTurnEnded && e.Type != api.EventAgentAttention {
				return nil
			}
			c, err := opts.Client.Conversation(ctx, opts.Name, api.ConversationQuery{ID: conv.ConversationID})
			if err != nil {
				return err
			}
			if conv.ConversationID == "" {
				conv.ConversationID = c.ConversationID
			}
			return show(c.Turns)
		})
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, client.ErrStreamEnded):
			since = last
			continue
		}
		return err
	}
}

func printConversation(w io.Writer, c api.Conversation) error {
	if len(c.Turns) == 0 {
		_, err := fmt.Fprintf(w, "%s: no turns yet%s\n", c.Agent, convNote(c.ConversationID))
		return err
	}
	fmt.Fprintf(w, "conversation %s of %s (%s)\n", c.ConversationID, c.Agent, plural(len(c.Turns), "turn"))
	for _, t := range c.Turns {
		if err := printTurn(w, t); err != nil {
			return err
		}
	}
	return nil
}

func convNote(id string) string {
	if id == "" {
		return ""
	}
	return " in conversation " + id
}

// printTurn writes one turn: a header line, the user message, the tools
// and the reply, indented.
func printTurn(w io.Writer, t api.Turn) error {
	sender := t.User.Sender
	if sender == "" {
		sender = "typed in the TUI"
	}
	head := fmt.Sprintf("\n── %s · %s · %s", t.StartedAt.Local().Format("2006-01-02 15:04:05"), sender, t.Outcome)
	if u := usageText(t.Usage, t.CostUSD); u != "" {
		head += " · " + u
	}
	fmt.Fprintln(w, head)
	fmt.Fprintln(w, indent(textBlock(strings.TrimRight(t.User.Text, "\n")), "> "))
	for _, tool := range t.Tools {
		fmt.Fprintf(w, "  [%s] %s\n", cell(tool.Name, 80), cell(api.FirstLine(tool.Input), 200))
	}
	if t.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", cell(t.Error, 500))
	}
	if t.Reply.Text != "" {
		fmt.Fprintln(w, indent(textBlock(strings.TrimRight(t.Reply.Text, "\n")), "  "))
	}
	return nil
}

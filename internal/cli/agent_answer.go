package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
)

// --- approve | deny | answer ---

// AgentAnswerOptions are the inputs of `leo agent approve|deny|answer`.
type AgentAnswerOptions struct {
	IO     *IOStreams
	Client *client.Client
	Name   string
	// Prompt is --prompt: the id of the prompt to answer; "" answers the
	// one `leo agent status` shows now.
	Prompt string
	// Answer is api.AnswerApprove, AnswerAlways, AnswerDeny or AnswerText
	// (with Text).
	Answer string
	Text   string
	JSON   bool
}

func newAgentApproveCmd(f *Factory) *cobra.Command {
	opts := &AgentAnswerOptions{IO: f.IO}
	var always bool
	cmd := daemonCommand(f, &cobra.Command{
		Use:   "approve <name>",
		Short: "Approve the permission prompt an agent's TUI shows",
		Long: `Answer "yes" to the permission prompt the agent's harness shows, with the
keys a person would press in its TUI. The keys are pressed only while the
screen still shows that prompt: --prompt ID (the id 'leo agent status' shows)
names it; without it, the prompt status shows now is answered, and named.
--always picks the harness's own "don't ask again" choice (claude's "Yes, and
always allow …", opencode's "Allow always") and only where the prompt offers
it: leo never allows more than the prompt does.

no_prompt: none is shown; prompt_changed: another one is (answered in the TUI
meanwhile, or a new one); prompt_unanswerable: one leo cannot read (answer it
in the TUI); not_offered: the prompt has no such choice. Nothing is pressed
then.`,
		Args: cobra.MatchAll(cobra.ExactArgs(1), agentNameArg(0)),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, args []string) error {
		opts.Client, opts.Name, opts.Answer = c, args[0], api.AnswerApprove
		if always {
			opts.Answer = api.AnswerAlways
		}
		return runAgentAnswer(ctx, opts)
	})
	cmd.Flags().StringVar(&opts.Prompt, "prompt", "", "answer only the prompt with this `id` (as leo agent status shows it)")
	cmd.Flags().BoolVar(&always, "always", false, "pick the prompt's own always-allow choice, where it offers one")
	return cmd
}

func newAgentDenyCmd(f *Factory) *cobra.Command {
	opts := &AgentAnswerOptions{IO: f.IO}
	cmd := daemonCommand(f, &cobra.Command{
		Use:   "deny <name>",
		Short: "Deny the permission prompt an agent's TUI shows",
		Long: `Answer "no" to the permission prompt the agent's harness shows, with the
keys a person would press in its TUI, only while the screen still shows that
prompt (--prompt ID, else the one 'leo agent status' shows now). The same
errors as 'leo agent approve'.`,
		Args: cobra.MatchAll(cobra.ExactArgs(1), agentNameArg(0)),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, args []string) error {
		opts.Client, opts.Name, opts.Answer = c, args[0], api.AnswerDeny
		return runAgentAnswer(ctx, opts)
	})
	cmd.Flags().StringVar(&opts.Prompt, "prompt", "", "answer only the prompt with this `id` (as leo agent status shows it)")
	return cmd
}

func newAgentAnswerCmd(f *Factory) *cobra.Command {
	opts := &AgentAnswerOptions{IO: f.IO}
	cmd := daemonCommand(f, &cobra.Command{
		Use:   "answer <name> <text>",
		Short: "Type an answer to the question an agent's TUI asks",
		Long: `Answer a question prompt (one that takes a typed answer) with text, only
while the screen still shows it (--prompt ID, else the one 'leo agent status'
shows now). The text passes the rule every message passes (text only: no
control characters). Where the harness's question takes no typed answer
through leo, the answer is not_offered and nothing is typed.`,
		Args: cobra.MatchAll(cobra.ExactArgs(2), agentNameArg(0)),
	}, &opts.JSON, func(ctx context.Context, c *client.Client, args []string) error {
		opts.Client, opts.Name, opts.Answer, opts.Text = c, args[0], api.AnswerText, args[1]
		return runAgentAnswer(ctx, opts)
	})
	cmd.Flags().StringVar(&opts.Prompt, "prompt", "", "answer only the prompt with this `id` (as leo agent status shows it)")
	return cmd
}

// promptReadWait bounds how long an answer without --prompt waits for
// status to show the prompt as the screen words it.
const promptReadWait = 3 * time.Second

func runAgentAnswer(ctx context.Context, opts *AgentAnswerOptions) error {
	id := opts.Prompt
	if id == "" {
		// The prompt status shows: never one the person did not see. A
		// hook may announce it before the screen draws it (its words only,
		// no choices): status is read again until the screen's is there.
		deadline := time.Now().Add(promptReadWait)
		for {
			a, err := opts.Client.Get(ctx, opts.Name)
			if err != nil {
				return err
			}
			var p *api.Prompt
			if at := a.Attention; at != nil && at.State == api.AttentionNeedsInput {
				p = at.Prompt
			}
			if p != nil {
				id = p.ID
			}
			if p == nil || len(p.Choices) > 0 || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
		if id == "" {
			return api.Errorf(api.CodeNoPrompt, "agent %s shows no prompt (leo agent status %s); nothing was pressed", opts.Name, opts.Name)
		}
	}
	res, err := opts.Client.Answer(ctx, opts.Name, api.AnswerRequest{Prompt: id, Answer: opts.Answer, Text: opts.Text})
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, res)
	}
	what := opts.Answer
	if res.Choice != "" {
		what = "\u201c" + cell(res.Choice, 80) + "\u201d"
	}
	if typed := strings.TrimSpace(opts.Text); opts.Answer == api.AnswerText && res.Choice != "" && typed != res.Choice {
		// Typed into the question's own-answer row: say the text too.
		what = "\u201c" + cell(typed, 80) + "\u201d (typed into " + what + ")"
	}
	fmt.Fprintf(opts.IO.Out, "%s: answered %s to prompt %s (%s)\n", res.Agent, what, res.Prompt.ID,
		cell(strings.Join(strings.Fields(res.Prompt.Text), " "), 120))
	switch {
	case res.NextPrompt != nil:
		fmt.Fprintf(opts.IO.Out, "%s now asks: prompt %s (%s)\n", res.Agent, res.NextPrompt.ID, cell(strings.Join(strings.Fields(res.NextPrompt.Text), " "), 120))
	case !res.Cleared:
		fmt.Fprintf(opts.IO.Out, "the prompt still shows after the keys; look with leo agent status %s (or leo attach %s)\n", res.Agent, res.Agent)
	}
	return nil
}

// answerHint says how status's prompt can be answered: the commands of the
// answers leo can give it, else the TUI.
func answerHint(name string, p *api.Prompt) string {
	var cmds []string
	for _, a := range p.Answers {
		switch a {
		case api.AnswerApprove:
			cmds = append(cmds, "leo agent approve "+name)
		case api.AnswerAlways:
			cmds = append(cmds, "leo agent approve --always "+name)
		case api.AnswerDeny:
			cmds = append(cmds, "leo agent deny "+name)
		case api.AnswerText:
			cmds = append(cmds, "leo agent answer "+name+" TEXT")
		}
	}
	if len(cmds) == 0 {
		return "the TUI (leo attach " + name + "): leo cannot answer this prompt"
	}
	return strings.Join(cmds, " | ")
}

package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
)

func init() { register(newNotifyCmd) }

func newNotifyCmd(f *Factory) *cobra.Command {
	cmd := groupCommand("notify", "Check the notifiers of leo.yaml's notify: lists")
	cmd.AddCommand(newNotifyTestCmd(f), newNotifyListCmd(f))
	return cmd
}

// notifyClient is what the notify commands ask the daemon.
type notifyClient interface {
	NotifyStatus(ctx context.Context) (api.NotifyStatus, error)
	NotifyTest(ctx context.Context, req api.NotifyTestRequest) (api.NotifyTestResult, error)
}

// --- test ---

// NotifyTestOptions are the inputs of `leo notify test`.
type NotifyTestOptions struct {
	IO     *IOStreams
	Client notifyClient
	Event  string
	Scope  string
	JSON   bool
}

func newNotifyTestCmd(f *Factory) *cobra.Command {
	opts := &NotifyTestOptions{IO: f.IO}
	cmd := daemonCommand(f, &cobra.Command{
		Use:   "test [--event EVENT] [--scope SCOPE]",
		Short: "Send a sample event through the notifiers and say how each one took it",
		Long: `Send a sample of an event (default needs_input) to every notifier of the running
config that lists it, once each (no retries), and print each one's result.
--scope limits it to one notify: list: "notify" (the top level's),
"templates.<name>" or "tasks.<name>". The sample is marked "test": true.

Events: ` + strings.Join(api.NotifyEvents, ", ") + `.
The exit status is 0 when every notifier took the sample, 1 otherwise
(notify_failed).`,
		Args: cobra.NoArgs,
	}, &opts.JSON, func(ctx context.Context, c *client.Client, _ []string) error {
		opts.Client = c
		return runNotifyTest(ctx, opts)
	})
	cmd.Flags().StringVar(&opts.Event, "event", api.NotifyNeedsInput, "the event to send a sample of ("+strings.Join(api.NotifyEvents, ", ")+")")
	cmd.Flags().StringVar(&opts.Scope, "scope", "", `only this scope's notify: list ("notify", "templates.<name>", "tasks.<name>")`)
	_ = cmd.RegisterFlagCompletionFunc("event", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return api.NotifyEvents, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// notifyFailure is a test in which a notifier did not take the sample:
// its JSON failure object carries every result.
type notifyFailure struct {
	res    api.NotifyTestResult
	failed []string
}

func (n *notifyFailure) Error() string {
	return fmt.Sprintf("%d of %d notifier(s) did not take the sample: %s", len(n.failed), len(n.res.Results), strings.Join(n.failed, ", "))
}

func (n *notifyFailure) ErrorCode() api.Code { return api.CodeNotifyFailed }

func (n *notifyFailure) JSONBody() any {
	return struct {
		Error   api.Code           `json:"error"`
		Message string             `json:"message"`
		Event   string             `json:"event"`
		Results []api.NotifyResult `json:"results"`
	}{api.CodeNotifyFailed, n.Error(), n.res.Event, n.res.Results}
}

func runNotifyTest(ctx context.Context, opts *NotifyTestOptions) error {
	if !api.IsNotifyEvent(opts.Event) {
		return usageErrorf("--event: unknown event %q (valid: %s)", opts.Event, strings.Join(api.NotifyEvents, ", "))
	}
	res, err := opts.Client.NotifyTest(ctx, api.NotifyTestRequest{Event: opts.Event, Scope: opts.Scope})
	if err != nil {
		return err
	}
	var failed []string
	for _, r := range res.Results {
		if !r.OK {
			failed = append(failed, r.Target)
		}
	}
	if opts.JSON {
		if len(failed) > 0 {
			return &notifyFailure{res: res, failed: failed}
		}
		return writeJSON(opts.IO.Out, res)
	}
	if err := printNotifyTest(opts.IO.Out, res); err != nil {
		return err
	}
	if len(failed) > 0 {
		return &notifyFailure{res: res, failed: failed}
	}
	return nil
}

func printNotifyTest(w io.Writer, res api.NotifyTestResult) error {
	var b strings.Builder
	fmt.Fprintf(&b, "sent a sample %s to %d notifier(s):\n", res.Event, len(res.Results))
	for _, r := range res.Results {
		took := (time.Duration(r.TookMS) * time.Millisecond).String()
		if r.OK {
			fmt.Fprintf(&b, "ok    %s (%s)\n", r.Target, took)
			continue
		}
		fmt.Fprintf(&b, "fail  %s (%s): %s\n", r.Target, took, cell(r.Error, 300))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// --- list ---

// NotifyListOptions are the inputs of `leo notify list`.
type NotifyListOptions struct {
	IO     *IOStreams
	Client notifyClient
	JSON   bool
	Now    func() time.Time
}

func newNotifyListCmd(f *Factory) *cobra.Command {
	opts := &NotifyListOptions{IO: f.IO, Now: f.Now}
	return daemonCommand(f, &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the notifiers the daemon runs and what each did (never a URL or an env value)",
		Args:    cobra.NoArgs,
	}, &opts.JSON, func(ctx context.Context, c *client.Client, _ []string) error {
		opts.Client = c
		return runNotifyList(ctx, opts)
	})
}

func runNotifyList(ctx context.Context, opts *NotifyListOptions) error {
	st, err := opts.Client.NotifyStatus(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, st)
	}
	if len(st.Notifiers) == 0 {
		_, err := fmt.Fprintln(opts.IO.Out, "no notifiers (leo.yaml has no notify: list)")
		return err
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tEVENTS\tSENT\tFAILED\tDROPPED\tSTATE")
	var errs []string
	for _, s := range st.Notifiers {
		state := "ok"
		switch {
		case s.Failing:
			state = "failing"
			at := ""
			if s.LastErrorAt != nil {
				at = " (" + s.LastErrorAt.Local().Format(time.DateTime) + ")"
			}
			errs = append(errs, fmt.Sprintf("%s%s: %s", s.Target, at, cell(s.LastError, 300)))
		case s.Sent == 0 && s.Failed == 0:
			state = "unused"
		}
		if s.Queued > 0 {
			state += fmt.Sprintf(", %d queued", s.Queued)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", s.Target, strings.Join(s.Events, ","), s.Sent, s.Failed, s.Dropped, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range errs {
		fmt.Fprintln(opts.IO.Out, e)
	}
	if st.Missed > 0 {
		fmt.Fprintf(opts.IO.Out, "the notifiers missed %d event(s) the stream no longer kept\n", st.Missed)
	}
	return nil
}

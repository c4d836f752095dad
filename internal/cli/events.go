package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
)

func init() { register(newEventsCmd) }

// EventsOptions are the inputs of `leo events`.
type EventsOptions struct {
	IO     *IOStreams
	Client *client.Client
	JSON   bool
	Follow bool
	Agent  string
	Since  uint64
	// Reconnect is the wait before a follower asks again (0:
	// client.ReconnectWait).
	Reconnect time.Duration
}

func newEventsCmd(f *Factory) *cobra.Command {
	opts := &EventsOptions{IO: f.IO}
	cmd := daemonCommand(f, &cobra.Command{
		Use:   "events",
		Short: "Show the daemon's event stream: agents, messages, turns, task runs",
		Long: `Prints what happened, one line per event, oldest first: agents' states and
attention, messages queued, delivered or failed, turns started and ended,
task runs, reloads, problems (docs/api.md, "The event stream"). Without
--follow it prints what the daemon keeps (its last 4096 events) and exits;
with --follow it prints new events as they happen until Ctrl-C, and
reconnects by itself when the daemon restarts, asking for what it missed.`,
		Args:        cobra.NoArgs,
		Annotations: map[string]string{jsonLines: "true"},
	}, &opts.JSON, func(ctx context.Context, c *client.Client, _ []string) error {
		opts.Client = c
		return runEvents(ctx, opts)
	})
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "print new events as they happen, until Ctrl-C")
	cmd.Flags().StringVar(&opts.Agent, "agent", "", "only this agent's events")
	cmd.Flags().Uint64Var(&opts.Since, "since", 0, "only events after this sequence number")
	return cmd
}

func runEvents(ctx context.Context, opts *EventsOptions) error {
	if opts.Agent != "" {
		if err := api.CheckAgentName(opts.Agent); err != nil {
			return err
		}
	}
	q := client.EventsQuery{Since: opts.Since, Agent: opts.Agent}
	out := opts.IO.Out
	if opts.JSON {
		out = opts.IO.LinesOut()
	}
	print := func(e api.Event) error { return printEvent(out, e, opts.JSON) }
	if !opts.Follow {
		list, err := opts.Client.RecentEvents(ctx, q)
		if err != nil {
			return err
		}
		for _, e := range list {
			if err := print(e); err != nil {
				return err
			}
		}
		return nil
	}
	wait := opts.Reconnect
	if wait <= 0 {
		wait = client.ReconnectWait
	}
	// connected: a stream was served (a daemon down after that is a
	// restart to wait out); away: the wait was said on stderr.
	connected, away := false, false
	for {
		last, err := opts.Client.FollowEvents(ctx, q, func(e api.Event) error {
			connected, away = true, false
			return print(e)
		})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil && !errors.Is(err, client.ErrStreamEnded) && (!connected || !client.IsDaemonDown(err)) {
			return err
		}
		// The daemon ended the stream or went away after it served one:
		// ask again (Last-Event-ID) for what came after the last event
		// seen, or after where the stream opened.
		connected = true
		q.Since = last
		if !away {
			away = true
			fmt.Fprintf(opts.IO.ErrOut, "leo events: the stream ended (the daemon stopped or restarted?); asking again every %s for the events after %d\n", wait, last)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// printEvent writes one event: a JSON object on its own line, or a line a
// person reads.
func printEvent(w io.Writer, e api.Event, asJSON bool) error {
	if asJSON {
		data, err := json.Marshal(e)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", data)
		return err
	}
	_, err := fmt.Fprintln(w, describeEvent(e))
	return err
}

// describeEvent is one event in a line; text that came from a harness or
// a sender is shown as text (control characters blanked).
func describeEvent(e api.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %d  %s", e.At.Local().Format("15:04:05.000"), e.Seq, e.Type)
	for _, part := range []struct{ k, v string }{{"agent", e.Agent}, {"task", e.Task}, {"run", e.Run}, {"message", e.MessageID}, {"state", e.State}} {
		if part.v != "" {
			fmt.Fprintf(&b, "  %s=%s", part.k, cell(part.v, 80))
		}
	}
	if a := e.Attention; a != nil {
		fmt.Fprintf(&b, "  attention=%s", a.State)
		if a.Detail != "" {
			fmt.Fprintf(&b, " \u201c%s\u201d", cell(a.Detail, 120))
		}
	}
	if e.Failures > 0 {
		fmt.Fprintf(&b, "  failures=%d", e.Failures)
	}
	if e.Missed > 0 {
		fmt.Fprintf(&b, "  missed=%d", e.Missed)
	}
	if e.FirstLine != "" {
		fmt.Fprintf(&b, "  \u201c%s\u201d", cell(e.FirstLine, 120))
	}
	if e.Reason != "" {
		fmt.Fprintf(&b, "  — %s", cell(e.Reason, 300))
	}
	return b.String()
}

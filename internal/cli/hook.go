package cli

import (
	"cmp"
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
)

func init() { register(newHookCmd) }

// Bounds of a turn-end hook: the harness waits for it (claude) or at least
// starts a process for it, so it never takes long, whatever leo's state.
const (
	hookReadTimeout = 2 * time.Second
	hookPostTimeout = 3 * time.Second
	// hookMaxPayload stays well under the daemon's request bound once the
	// payload is base64 in the report.
	hookMaxPayload = 2 << 20
)

// newHookCmd is `leo hook`: the programs harnesses run, not for people.
func newHookCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:    "hook",
		Short:  "Entry points the harnesses call (not for interactive use)",
		Hidden: true,
		Args:   cobra.NoArgs,
	}
	cmd.AddCommand(newHookTurnEndCmd(f))
	return cmd
}

// hookTurnEndOptions are the inputs of `leo hook turn-end`.
type hookTurnEndOptions struct {
	IO      *IOStreams
	Getenv  func(string) string
	Harness string
	Args    []string
	// Post sends the report; nil means the daemon of the home in LEO_HOME.
	Post func(ctx context.Context, h home.Home, r api.TurnEndReport) error
	// ReadTimeout bounds reading stdin (0: hookReadTimeout).
	ReadTimeout time.Duration
}

func newHookTurnEndCmd(f *Factory) *cobra.Command {
	opts := &hookTurnEndOptions{IO: f.IO, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "turn-end --harness <name> [payload]",
		Short: "Report the end of a turn in an agent's TUI to the daemon",
		Long: `Run by a harness at the end of each turn of an agent's TUI: claude's Stop
hook (payload on stdin), codex's notify program (payload as the last
argument), leo's opencode plugin (payload on stdin). It posts the payload,
with LEO_AGENT, to the daemon of LEO_HOME, and always exits 0 quietly: the
harness is never disturbed by leo being down or slow.`,
		Args:               cobra.ArbitraryArgs,
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Args = args
			runHookTurnEnd(cmd.Context(), opts)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Harness, "harness", "", "the harness running the hook")
	return cmd
}

// runHookTurnEnd posts the report; every failure is dropped.
func runHookTurnEnd(ctx context.Context, opts *hookTurnEndOptions) {
	agent := opts.Getenv("LEO_AGENT")
	if agent == "" || opts.Harness == "" {
		return // not a leo agent (the user's own session in the workspace)
	}
	var payload []byte
	if n := len(opts.Args); n > 0 {
		payload = []byte(opts.Args[n-1])
	} else {
		payload = readBounded(opts.IO.In, cmp.Or(opts.ReadTimeout, hookReadTimeout))
	}
	if len(payload) == 0 || len(payload) > hookMaxPayload {
		return
	}
	h, err := home.Resolve("", opts.Getenv)
	if err != nil {
		return
	}
	post := opts.Post
	if post == nil {
		post = postTurnEnd
	}
	ctx, cancel := context.WithTimeout(ctx, hookPostTimeout)
	defer cancel()
	_ = post(ctx, h, api.TurnEndReport{Agent: agent, Harness: opts.Harness, Payload: payload})
}

func postTurnEnd(ctx context.Context, h home.Home, r api.TurnEndReport) error {
	c := client.New(h)
	defer c.Close()
	return c.TurnEnd(ctx, r)
}

// readBounded reads in until EOF, at most hookMaxPayload+1 bytes and for at
// most d (a stdin nobody closes is given up on, not waited for).
func readBounded(in io.Reader, d time.Duration) []byte {
	if in == nil {
		return nil
	}
	got := make(chan []byte, 1)
	go func() {
		data, _ := io.ReadAll(io.LimitReader(in, hookMaxPayload+1))
		got <- data
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case data := <-got:
		return data
	case <-t.C:
		return nil
	}
}

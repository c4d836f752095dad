package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/home"
)

func init() { register(newServiceCmd) }

// ServiceOptions are the inputs of `leo service`.
type ServiceOptions struct {
	IO         *IOStreams
	Home       home.Home
	Getenv     func(string) string
	Version    string
	Supervised bool
	// NewAgents replaces the real agent manager (tests); nil means real.
	NewAgents func(daemon.AgentDeps) (daemon.Agents, error)
}

func newServiceCmd(f *Factory) *cobra.Command {
	opts := &ServiceOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Run the leo daemon in the foreground",
		Long: `Run the leo daemon for this home in the foreground until SIGINT or SIGTERM.

The daemon keeps every agent's TUI alive in tmux and serves the socket API
on <home>/state/leo.sock that the other leo commands use. One daemon runs
per home: a second one exits with "another leo daemon owns <home> (pid N)".
Stopping the daemon leaves the agents running in tmux; the next daemon
adopts them.

--supervised is the entry point for launchd and systemd: the log goes to
<home>/state/service.log (rotated at 10 MiB, 3 kept) instead of stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := f.Home()
			if err != nil {
				return err
			}
			opts.Home, opts.Getenv, opts.Version = h, f.Getenv, f.Version
			return runService(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Supervised, "supervised", false, "run under a service manager: log to state/service.log (rotated)")
	return cmd
}

// runService runs the daemon until ctx is cancelled (main cancels it on
// SIGINT/SIGTERM).
func runService(ctx context.Context, opts *ServiceOptions) error {
	return daemon.Run(ctx, daemon.Options{
		Home:       opts.Home,
		Supervised: opts.Supervised,
		Version:    opts.Version,
		Getenv:     opts.Getenv,
		Stderr:     opts.IO.ErrOut,
		Resolver:   binpath.Resolver{Getenv: opts.Getenv},
		NewAgents:  opts.NewAgents,
	})
}

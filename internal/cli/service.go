package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/managed"
	"github.com/blackpaw-studio/leo/internal/service"
)

func init() { register(newServiceCmd) }

// ServiceOptions are the inputs of `leo service`.
type ServiceOptions struct {
	IO         *IOStreams
	Home       home.Home
	Getenv     func(string) string
	Version    string
	Supervised bool
	// Managed is the home's marker as this invocation read it; nil means
	// the daemon reads it.
	Managed *managed.State
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
			st := f.Managed()
			opts.Managed = &st
			return runService(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Supervised, "supervised", false, "run under a service manager: log to state/service.log (rotated)")
	cmd.AddCommand(newServiceStatusCmd(f), newServiceReloadCmd(f),
		newServiceInstallCmd(f), newServiceUninstallCmd(f), newServiceStartCmd(f),
		newServiceStopCmd(f), newServiceRestartCmd(f), newServiceLogsCmd(f),
		newServiceHandoverCmd(f))
	return cmd
}

// ServiceQueryOptions are the inputs of `leo service status` and
// `leo service reload`: one call to the running daemon.
type ServiceQueryOptions struct {
	IO   *IOStreams
	JSON bool
}

// serviceQueryCmd builds a `leo service` subcommand that asks the daemon
// once through run.
func serviceQueryCmd(f *Factory, cmd *cobra.Command, run func(context.Context, *client.Client, *ServiceQueryOptions) error) *cobra.Command {
	opts := &ServiceQueryOptions{IO: f.IO}
	cmd.Args = cobra.NoArgs
	return daemonCommand(f, cmd, &opts.JSON, func(ctx context.Context, c *client.Client, _ []string) error {
		return run(ctx, c, opts)
	})
}

func newServiceStatusCmd(f *Factory) *cobra.Command {
	opts := &ServiceQueryOptions{IO: f.IO}
	return daemonCommand(f, &cobra.Command{
		Use:   "status",
		Short: "Show whether this home's daemon runs, what it reports, and its service registration",
		Args:  cobra.NoArgs,
	}, &opts.JSON, func(ctx context.Context, c *client.Client, _ []string) error {
		reg, regErr := registration(ctx, f)
		return runServiceStatus(ctx, c, opts, reg, regErr)
	})
}

// serviceStatus is `leo service status --json`: /health, plus whether the
// service manager has the job ("registered") and what it says of it
// ("service", null when it cannot tell).
type serviceStatus struct {
	api.Health
	Registered bool            `json:"registered"`
	Service    *service.Status `json:"service"`
}

func runServiceStatus(ctx context.Context, c *client.Client, opts *ServiceQueryOptions, reg *service.Status, regErr error) error {
	h, err := c.Health(ctx)
	if err != nil {
		if reg != nil && api.HasCode(err, api.CodeDaemonDown) {
			return api.Errorf(api.CodeDaemonDown, "%w (%s)", err, registrationLine(reg))
		}
		return err
	}
	if opts.JSON {
		out := serviceStatus{Health: h, Service: reg}
		if reg != nil {
			out.Registered = reg.Registered
		}
		return writeJSON(opts.IO.Out, out)
	}
	ready := "ready"
	if !h.Ready {
		ready = "restoring agents (not ready yet)"
	}
	claudeLine := "not found — " + claude.NotFoundMessage
	if h.Claude.Found {
		claudeLine = h.Claude.Path
	}
	svc := "unknown"
	switch {
	case reg != nil:
		svc = registrationLine(reg)
	case regErr != nil:
		svc = "unknown: " + regErr.Error()
	}
	_, err = fmt.Fprintf(opts.IO.Out, "daemon:  running, pid %d, leo %s, %s\nhome:    %s\nservice: %s\nagents:  %d\nclaude:  %s\n",
		h.PID, h.Version, ready, h.Home, svc, h.Agents, claudeLine)
	if h.Web != nil {
		fmt.Fprintf(opts.IO.Out, "web:     %s\n", webLine(webState{Enabled: true, URL: h.Web.URL, Served: h.Web.Serving, Error: h.Web.Error}, true))
	}
	for _, p := range h.Problems {
		fmt.Fprintf(opts.IO.Out, "problem: %s\n", p)
	}
	return err
}

// registrationLine says in one line what the service manager has.
func registrationLine(st *service.Status) string {
	kind := "launchd job " + st.Name
	if st.Kind == "systemd" {
		kind = "systemd user unit " + st.Name
	}
	if !st.Registered {
		return kind + " not registered (leo service install)"
	}
	line := kind + " registered"
	if st.State != "" {
		line += ", " + st.State
	}
	if st.Running {
		line += fmt.Sprintf(", pid %d", st.PID)
	}
	if st.Linger == "no" {
		line += ", lingering off (stops at logout: loginctl enable-linger)"
	}
	return line
}

func newServiceReloadCmd(f *Factory) *cobra.Command {
	return serviceQueryCmd(f, &cobra.Command{
		Use:   "reload",
		Short: "Make the daemon re-read leo.yaml (an invalid file is refused and the running config kept)",
		Long: `Make the daemon re-read and validate leo.yaml. A file that does not validate
is refused with every finding, and the daemon keeps the config it runs.
Sending the daemon SIGHUP does the same.`,
	}, runServiceReload)
}

func runServiceReload(ctx context.Context, c *client.Client, opts *ServiceQueryOptions) error {
	res, err := c.ReloadConfig(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, res)
	}
	fmt.Fprintln(opts.IO.Out, "config reloaded")
	for _, w := range res.Warnings {
		fmt.Fprintf(opts.IO.Out, "warning: %s\n", w)
	}
	return nil
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
		Managed:    opts.Managed,
		NewAgents:  opts.NewAgents,
	})
}

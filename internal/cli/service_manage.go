package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/service"
)

// `leo service install|uninstall|start|stop|restart|logs`: the daemon's
// registration with systemd (Linux) or launchd (macOS), through
// internal/service.

// serviceManager is this home's backend: f.Service when a test set it,
// else the platform's.
func (f *Factory) serviceManager(h home.Home) (service.Manager, error) {
	if f.Service != nil {
		return f.Service(h)
	}
	return f.platformService(h)
}

// platformService builds the backend of this platform for h: the job runs
// leo's own binary (the marker's self_path when managed) with the caller's
// PATH (the service manager's own PATH lacks where tmux and the harness
// CLIs usually live). A managed install's job is the marker's label, never
// com.blackpaw.leo.
func (f *Factory) platformService(h home.Home) (service.Manager, error) {
	getenv := f.Getenv
	userHome, err := os.UserHomeDir()
	if v := getenv("HOME"); v != "" {
		userHome, err = v, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cannot find your home directory: %w", err)
	}
	env := map[string]string{}
	if p := getenv("PATH"); p != "" {
		env["PATH"] = p
	}
	opts := service.Options{
		Home:        h,
		DefaultRoot: home.DefaultRoot(getenv),
		Program:     f.LeoBinary(),
		Env:         env,
		UserHome:    userHome,
		ConfigHome:  getenv("XDG_CONFIG_HOME"),
		UID:         os.Getuid(),
	}
	if m := f.managedInfo(h); m.Managed {
		opts.Label = m.Label
	}
	goos := f.GOOS
	if goos == "" {
		goos = runtime.GOOS
	}
	return service.New(goos, opts)
}

// refuseManaged: on a managed install the app registers the job; leo
// never writes or removes it.
func (f *Factory) refuseManaged(h home.Home, verb string) error {
	if m := f.managedInfo(h); m.Managed {
		return api.Errorf(api.CodeAlreadyManaged,
			"leo service %s: this leo is managed by %s, which registers the daemon (launchd job %s); use the app, or `leo service handover --to-cli` to go back to a CLI install",
			verb, m.Manager, m.Label)
	}
	return nil
}

// serviceRegistered is the default of Factory.ServiceRegistered: whether
// the service manager has h's job loaded.
func (f *Factory) serviceRegistered(ctx context.Context, h home.Home) (bool, error) {
	m, err := f.serviceManager(h)
	if err != nil {
		return false, err
	}
	return m.Loaded(ctx)
}

// serviceFor resolves the home and its backend for a subcommand.
func serviceFor(f *Factory) (home.Home, service.Manager, error) {
	h, err := f.Home()
	if err != nil {
		return h, nil, err
	}
	m, err := f.serviceManager(h)
	if err != nil {
		return h, nil, api.Errorf(api.CodeServiceFailed, "%w", err)
	}
	return h, m, nil
}

// noUserManager explains a service call that found no systemd user
// manager (a container, an SSH login without lingering): the unit cannot
// be loaded on this login at all, and what to do instead.
func noUserManager(m service.Manager, err error) (string, bool) {
	var nu *service.NoUserManagerError
	if !errors.As(err, &nu) {
		return "", false
	}
	said := nu.Err.Error()
	var re *service.RunError
	if errors.As(nu.Err, &re) && re.Stderr != "" {
		said = re.Stderr
	}
	return fmt.Sprintf("no systemd user manager runs for this login (systemctl --user: %s), so the %s cannot be loaded here; %s",
		cell(said, 300), describe(m), service.NoUserManagerHint), true
}

func describe(m service.Manager) string {
	if m.Kind() == "systemd" {
		return "systemd user unit " + m.Name()
	}
	return "launchd job " + m.Name()
}

// --- install / uninstall / start / stop ---

func newServiceInstallCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "install",
		Short: "Register the daemon with systemd (Linux) or launchd (macOS) and start it",
		Long: `Write the service job for this home's daemon and start it: a systemd user
unit (~/.config/systemd/user/leo.service; leo-<hash>.service for a home other
than ~/.leo) or a LaunchAgent (~/Library/LaunchAgents/com.blackpaw.leo.plist).
The job runs this leo binary as "leo service --supervised" with your PATH.
Running it again changes nothing unless the job would differ.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, m, err := serviceFor(f)
			if err != nil {
				return err
			}
			if err := f.refuseManaged(h, "install"); err != nil {
				return err
			}
			res, err := m.Install(cmd.Context())
			if res.Path != "" && res.Wrote {
				fmt.Fprintf(f.IO.Out, "wrote %s\n", res.Path)
			}
			if err != nil {
				if msg, ok := noUserManager(m, err); ok {
					return api.Errorf(api.CodeServiceFailed, "install: %s", msg)
				}
				return api.Errorf(api.CodeServiceFailed, "install: %w", err)
			}
			if !res.Wrote {
				fmt.Fprintf(f.IO.Out, "%s already up to date\n", res.Path)
			}
			fmt.Fprintf(f.IO.Out, "%s registered and started\n", describe(m))
			for _, n := range res.Notes {
				fmt.Fprintf(f.IO.Out, "note: %s\n", n)
			}
			return nil
		},
	}
}

func newServiceUninstallCmd(f *Factory) *cobra.Command {
	var stopAgents bool
	cmd := &cobra.Command{
		Use:   "uninstall",
		Short: "Stop the daemon and remove its service job (agents keep running in tmux unless --stop-agents)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, m, err := serviceFor(f)
			if err != nil {
				return err
			}
			if err := f.refuseManaged(h, "uninstall"); err != nil {
				return err
			}
			if stopAgents {
				if err := stopAllAgents(cmd.Context(), f, h); err != nil {
					return err
				}
			}
			res, err := m.Uninstall(cmd.Context())
			if err != nil {
				return api.Errorf(api.CodeServiceFailed, "uninstall: %w", err)
			}
			switch {
			case res.Removed:
				fmt.Fprintf(f.IO.Out, "removed %s\n", res.Path)
			case !res.WasLoaded:
				fmt.Fprintf(f.IO.Out, "%s was not installed\n", describe(m))
				return nil
			}
			if !stopAgents {
				fmt.Fprintln(f.IO.Out, "the tmux server and the agents keep running; the next daemon adopts them")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&stopAgents, "stop-agents", false, "stop every agent first (through the running daemon, which ends each TUI properly)")
	return cmd
}

// stopAllAgents stops every running agent through the daemon before an
// uninstall: the daemon ends each TUI (its process group too), so none is
// left behind without a daemon to adopt it. The daemon must be up.
func stopAllAgents(ctx context.Context, f *Factory, h home.Home) error {
	c := client.New(h)
	agents, err := c.List(ctx)
	if err != nil {
		return api.Errorf(api.CodeDaemonDown, "uninstall --stop-agents: the daemon must run to stop the agents (start it with 'leo service start'): %w", err)
	}
	for _, a := range agents {
		if a.State == api.StateStopped {
			continue
		}
		if _, err := c.Stop(ctx, a.Name); err != nil {
			return api.Errorf(api.CodeServiceFailed, "uninstall --stop-agents: stopping agent %s: %w (nothing was uninstalled)", a.Name, err)
		}
		fmt.Fprintf(f.IO.Out, "stopped agent %s\n", a.Name)
	}
	return nil
}

func serviceVerbCmd(f *Factory, use, short, done string, verb func(service.Manager, context.Context) error) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, m, err := serviceFor(f)
			if err != nil {
				return err
			}
			if err := verb(m, cmd.Context()); err != nil {
				if msg, ok := noUserManager(m, err); ok {
					return api.Errorf(api.CodeServiceFailed, "%s: %s", use, msg)
				}
				return api.Errorf(api.CodeServiceFailed, "%s: %w", use, err)
			}
			fmt.Fprintf(f.IO.Out, "%s %s\n", describe(m), done)
			return nil
		},
	}
}

func newServiceStartCmd(f *Factory) *cobra.Command {
	return serviceVerbCmd(f, "start", "Start the registered daemon", "started", service.Manager.Start)
}

func newServiceStopCmd(f *Factory) *cobra.Command {
	return serviceVerbCmd(f, "stop", "Stop the daemon (the agents keep running in tmux)",
		"stopped; the agents keep running in tmux", service.Manager.Stop)
}

// --- logs ---

// ServiceLogsOptions are the inputs of `leo service logs`.
type ServiceLogsOptions struct {
	IO     *IOStreams
	Lines  int
	Follow bool
}

func newServiceLogsCmd(f *Factory) *cobra.Command {
	opts := &ServiceLogsOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "logs",
		Short: "Show the supervised daemon's log (state/service.log); -f follows it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := f.Home()
			if err != nil {
				return err
			}
			if opts.Lines < 0 {
				return api.Errorf(api.CodeInvalidArgs, "--lines must be 0 or more, got %d", opts.Lines)
			}
			err = service.Tail(cmd.Context(), h.ServiceLogPath(), opts.Lines, opts.Follow, opts.IO.Out, 0)
			if err != nil {
				return api.Errorf(api.CodeNotFound, "%w", err)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "keep printing what the daemon logs (rotation included) until interrupted")
	cmd.Flags().IntVarP(&opts.Lines, "lines", "n", 50, "how many of the last lines to print first")
	return cmd
}

// --- restart ---

// ServiceRestartOptions are the inputs of `leo service restart`.
type ServiceRestartOptions struct {
	IO    *IOStreams
	JSON  bool
	Force bool
	// DrainTimeout bounds the wait for busy agents (--timeout).
	DrainTimeout time.Duration
	// ReadyTimeout bounds the wait for the new daemon (default 60s).
	ReadyTimeout time.Duration
	// Poll is how often the new daemon is asked for (default 200ms).
	Poll time.Duration
}

// restartResult is the JSON of docs/managed-install.md, field for field.
type restartResult struct {
	OK        bool `json:"ok"`
	Drained   bool `json:"drained"`
	Restarted bool `json:"restarted"`
}

func newServiceRestartCmd(f *Factory) *cobra.Command {
	opts := &ServiceRestartOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "restart",
		Short: "Drain busy agents, restart the daemon through the service manager, wait until it is ready",
		Long: `Restart this home's daemon through systemd or launchd, gracefully:

  1. deliveries pause and leo waits (up to --timeout) until no agent has a
     turn in flight; busy agents that do not finish fail with drain_timeout
     and nothing restarts (deliveries resume), unless --force;
  2. the service manager restarts the job; the tmux server and the agents
     keep running, and the new daemon adopts them;
  3. leo waits until a daemon with a new pid reports ready.

A daemon that is down while its job is loaded is simply started
(drained: false). Held messages stay queued and the new daemon delivers
them. --json prints {"ok":true,"drained":…,"restarted":true}; failures are
not_registered, drain_timeout, drain_failed, restart_failed, config_error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServiceRestart(cmd.Context(), f, opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON)
	cmd.Flags().BoolVar(&opts.Force, "force", false, "restart without waiting for busy agents")
	cmd.Flags().DurationVar(&opts.DrainTimeout, "timeout", 60*time.Second, "how long to wait for busy agents to finish their turn")
	return cmd
}

func runServiceRestart(ctx context.Context, f *Factory, opts *ServiceRestartOptions) error {
	if opts.DrainTimeout <= 0 || opts.DrainTimeout > time.Hour {
		return api.Errorf(api.CodeInvalidArgs, "--timeout must be more than 0 and at most 1h, got %s", opts.DrainTimeout)
	}
	readyWait := opts.ReadyTimeout
	if readyWait <= 0 {
		readyWait = 60 * time.Second
	}
	poll := opts.Poll
	if poll <= 0 {
		poll = 200 * time.Millisecond
	}
	// A config the new daemon would refuse is no reason to stop this one.
	_, h, err := f.LoadConfig()
	if err != nil {
		return err
	}
	m, err := f.serviceManager(h)
	if err != nil {
		return api.Errorf(api.CodeRestartFailed, "%w", err)
	}
	loaded, err := m.Loaded(ctx)
	if msg, ok := noUserManager(m, err); ok {
		return api.Errorf(api.CodeNotRegistered, "%s", msg)
	}
	if err != nil {
		return api.Errorf(api.CodeRestartFailed, "cannot tell whether the %s is loaded: %w", describe(m), err)
	}
	if !loaded {
		return api.Errorf(api.CodeNotRegistered, "the %s is not loaded; register it with `leo service install`", describe(m))
	}

	c := client.New(h)
	defer c.Close()
	var old api.Health
	drained, up := false, false
	if hl, err := c.Health(ctx); err == nil {
		old, up = hl, true
	}
	if up {
		// A daemon the service manager did not start (`leo service` by
		// hand) holds the home's lock: the job's daemon could never start.
		st, err := m.Status(ctx)
		if err != nil {
			return api.Errorf(api.CodeRestartFailed, "cannot read the %s: %w", describe(m), err)
		}
		if !st.Running || st.PID != old.PID {
			return api.Errorf(api.CodeRestartFailed,
				"the leo daemon that runs (pid %d) was not started by the %s (started by hand?); stop it, then `leo service start`", old.PID, describe(m))
		}
		fmt.Fprintf(opts.IO.ErrOut, "draining the daemon (pid %d)…\n", old.PID)
		res, err := c.Drain(ctx, api.DrainRequest{TimeoutSeconds: opts.DrainTimeout.Seconds(), Force: opts.Force})
		switch {
		case err == nil:
			drained = res.Drained
			if len(res.Busy) > 0 {
				fmt.Fprintf(opts.IO.ErrOut, "--force: restarting while busy: %v\n", res.Busy)
			}
		case api.HasCode(err, api.CodeDrainTimeout):
			return err
		case api.HasCode(err, api.CodeDaemonDown):
			up = false // it went away meanwhile: a plain start
		default:
			return api.Errorf(api.CodeDrainFailed, "drain: %w", err)
		}
	}

	fmt.Fprintf(opts.IO.ErrOut, "restarting the %s…\n", describe(m))
	if err := m.Restart(ctx); err != nil {
		if up {
			// The old daemon runs on: let its held messages go.
			if rerr := c.ResumeDeliveries(ctx); rerr != nil {
				fmt.Fprintf(opts.IO.ErrOut, "could not resume deliveries: %v\n", rerr)
			}
		}
		return api.Errorf(api.CodeRestartFailed, "%w", err)
	}
	fresh, err := awaitNewDaemon(ctx, c, old, readyWait, poll)
	if err != nil {
		if up {
			// The old daemon may still run (the manager did not stop
			// it): its held messages must not wait for the hold to end.
			_ = c.ResumeDeliveries(ctx)
		}
		return err
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, restartResult{OK: true, Drained: drained, Restarted: true})
	}
	how := "not drained"
	if drained {
		how = "drained"
	}
	if old.PID != 0 {
		fmt.Fprintf(opts.IO.Out, "restarted: pid %d → %d, ready (%s)\n", old.PID, fresh.PID, how)
	} else {
		fmt.Fprintf(opts.IO.Out, "started: pid %d, ready (the daemon was down)\n", fresh.PID)
	}
	return nil
}

// awaitNewDaemon waits until a daemon other than old answers /health with
// ready: true.
func awaitNewDaemon(ctx context.Context, c *client.Client, old api.Health, within, poll time.Duration) (api.Health, error) {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	var last error
	for {
		hl, err := c.Health(ctx)
		switch {
		case err != nil:
			last = err
		case hl.PID == old.PID && hl.Started.Equal(old.Started):
			last = fmt.Errorf("the old daemon (pid %d) still answers", old.PID)
		case !hl.Ready:
			last = fmt.Errorf("the new daemon (pid %d) is still restoring agents", hl.PID)
		default:
			return hl, nil
		}
		select {
		case <-ctx.Done():
			return api.Health{}, api.Errorf(api.CodeRestartFailed, "interrupted while waiting for the new daemon: %w", last)
		case <-deadline.C:
			msg := "no new daemon reported ready within " + within.String()
			if last != nil {
				msg += ": " + last.Error()
			}
			return api.Health{}, api.Errorf(api.CodeRestartFailed, "%s (see `leo service logs`)", msg)
		case <-tick.C:
		}
	}
}

// --- status ---

// registration is what `leo service status` adds to /health.
func registration(ctx context.Context, f *Factory) (*service.Status, error) {
	h, err := f.Home()
	if err != nil {
		return nil, err
	}
	m, err := f.serviceManager(h)
	if err != nil {
		return nil, err
	}
	st, err := m.Status(ctx)
	if err != nil {
		return nil, err
	}
	return &st, nil
}

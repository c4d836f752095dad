// Package cli is the leo command tree. It holds, once each: the global flags,
// the IO streams commands write to, the JSON rule of spec/managed-install.md
// and the mapping from errors to exit codes (exitcodes.go).
//
// Adding a command:
//
//   - Create one file in this package for the command group. Its init() calls
//     register(newXxxCmd), where newXxxCmd(f *Factory) *cobra.Command builds
//     the group. Nothing else needs to change: NewRoot adds every registered
//     command.
//   - Follow the gh habit: an options struct (IO, the inputs, the flags) and a
//     run function taking it, which tests call directly with TestStreams().
//     RunE only fills the options and calls the run function.
//   - Use f.Home() for the leo home (it honours --config/-c and LEO_HOME) and
//     f.LoadConfig() for leo.yaml (it answers config_error itself). f.Version
//     is the build's version; cmd.Context() is cancelled on SIGINT/SIGTERM.
//     A command that talks to the daemon is built with daemonCommand
//     (agent.go), which supplies the client.
//   - A command with --json calls addJSONFlag(cmd, &opts.JSON) and, on
//     success, writeJSON(opts.IO.Out, value) — nothing else on stdout. On
//     failure it just returns an error: a *api.Error (api.Errorf(code, …)) to
//     choose the stable code, or any error for "internal". Run prints it,
//     as JSON on stdout for --json commands and as text on stderr otherwise,
//     and maps it to the exit code. Bad flags, bad arguments and unknown
//     subcommands become invalid_args automatically, JSON or not.
//   - Errors whose JSON needs more fields than {error, message} implement
//     jsonFailure (see validate.go's validateFailure).
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/service"
	"github.com/blackpaw-studio/leo/internal/task"
)

// Factory carries what every command needs and nothing command-specific:
// the streams, the environment, the build version and the global --config.
type Factory struct {
	IO *IOStreams
	// Getenv reads leo's environment (LEO_HOME, HOME, ${VAR} in env:).
	Getenv func(string) string
	// Version is the build's version string ("dev" unless set by -ldflags).
	Version string
	// ConfigFlag is the value of --config/-c ("" when not given).
	ConfigFlag string
	// RunTaskLocally runs a task in the foreground, for `leo run <task>`
	// when no daemon runs: the same run the daemon would make, recorded in
	// the same history. cmd/leo fills it from internal/task; nil means this
	// build cannot run tasks without a daemon.
	RunTaskLocally func(ctx context.Context, cfg *config.Config, h home.Home, task string) (api.TaskRun, error)
	// Service builds the home's service-manager backend (systemd or
	// launchd); nil means this platform's own. Tests pass fakes.
	Service func(h home.Home) (service.Manager, error)
}

// NewFactory returns a Factory on the given streams and environment.
func NewFactory(io *IOStreams, getenv func(string) string, version string) *Factory {
	if getenv == nil {
		getenv = os.Getenv
	}
	if version == "" {
		version = "dev"
	}
	return &Factory{IO: io, Getenv: getenv, Version: version, RunTaskLocally: runTaskLocally}
}

// runTaskLocally is `leo run` without a daemon: the task runs here, on the
// daemon's own path (task.RunOnce), recorded in the home's history and
// logs.
func runTaskLocally(ctx context.Context, cfg *config.Config, h home.Home, name string) (api.TaskRun, error) {
	exe, _ := os.Executable()
	opts, err := task.HomeOptions(h, func() *config.Config { return cfg }, binpath.Resolver{}, exe, nil)
	if err != nil {
		return api.TaskRun{}, err
	}
	return task.RunOnce(ctx, opts, name)
}

// Home resolves the leo home: --config wins, then LEO_HOME, then ~/.leo.
func (f *Factory) Home() (home.Home, error) {
	h, err := home.Resolve(f.ConfigFlag, f.Getenv)
	if err != nil {
		return home.Home{}, api.Errorf(api.CodeConfigError, "cannot resolve the leo home: %v", err)
	}
	return h, nil
}

// commandBuilders are the top-level commands, each added by its file's init().
var commandBuilders []func(f *Factory) *cobra.Command

// register adds a top-level command. Call it from init().
func register(build func(f *Factory) *cobra.Command) {
	commandBuilders = append(commandBuilders, build)
}

// NewRoot builds the whole command tree on f.
func NewRoot(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "leo",
		Short: "Keep coding-agent CLIs alive in tmux and hand them messages",
		Long: `leo keeps coding-agent CLIs (claude, codex, opencode) alive as interactive
TUIs in tmux, delivers messages into them, and runs prompt tasks.

Configuration lives in <home>/leo.yaml; the home is ~/.leo unless LEO_HOME
is set or --config names the file. Exit codes and JSON output: docs/cli.md.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.PersistentFlags().StringVarP(&f.ConfigFlag, "config", "c", "",
		"config file to use (its directory is the leo home; default $LEO_HOME/leo.yaml or ~/.leo/leo.yaml)")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &api.Error{Code: api.CodeInvalidArgs, Message: err.Error()}
	})
	for _, build := range commandBuilders {
		root.AddCommand(build(f))
	}
	markRunErrors(root)
	return root
}

// Run executes leo with args, reports a failure on f's streams (following the
// JSON rule for --json commands) and returns it; ExitCodeOf(err) is the exit
// status.
func Run(ctx context.Context, args []string, f *Factory) error {
	root := NewRoot(f)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return nil
	}
	err = classify(err)
	reportError(f.IO, cmd, args, err)
	return err
}

// runFailure marks an error returned by a command's own code, as opposed to
// one cobra returned while parsing flags and arguments.
type runFailure struct{ err error }

func (r *runFailure) Error() string { return r.err.Error() }
func (r *runFailure) Unwrap() error { return r.err }

// markRunErrors wraps the hooks and RunE of every command so that anything
// coming out of them is told apart from cobra's own parse errors.
func markRunErrors(c *cobra.Command) {
	wrap := func(fn func(*cobra.Command, []string) error) func(*cobra.Command, []string) error {
		if fn == nil {
			return nil
		}
		return func(cmd *cobra.Command, args []string) error {
			if err := fn(cmd, args); err != nil {
				return &runFailure{err: err}
			}
			return nil
		}
	}
	c.PersistentPreRunE = wrap(c.PersistentPreRunE)
	c.PreRunE = wrap(c.PreRunE)
	c.RunE = wrap(c.RunE)
	c.PostRunE = wrap(c.PostRunE)
	c.PersistentPostRunE = wrap(c.PersistentPostRunE)
	for _, sub := range c.Commands() {
		markRunErrors(sub)
	}
}

// classify returns the error a failure is reported as: a command's own error
// as is, and anything cobra produced (unknown command or flag, wrong number
// of arguments, missing required flag) as invalid_args.
func classify(err error) error {
	var rf *runFailure
	if errors.As(err, &rf) {
		return rf.err
	}
	var coded *api.Error
	if errors.As(err, &coded) {
		return err
	}
	return &api.Error{Code: api.CodeInvalidArgs, Message: err.Error()}
}

// reportError prints err: as the JSON failure object on stdout when the
// command was asked for --json, else as one line (plus a usage hint for
// invalid_args) on stderr.
func reportError(io *IOStreams, cmd *cobra.Command, args []string, err error) {
	if cmd != nil && wantsJSON(cmd, args) {
		var body any
		var jf jsonFailure
		if errors.As(err, &jf) {
			body = jf.JSONBody()
		} else {
			body = &api.Error{Code: codeOf(err), Message: err.Error()}
		}
		if werr := writeJSON(io.Out, body); werr != nil {
			fmt.Fprintf(io.ErrOut, "leo: %v\n", werr)
		}
		return
	}
	fmt.Fprintf(io.ErrOut, "leo: %v\n", err)
	if codeOf(err) == api.CodeInvalidArgs && cmd != nil {
		fmt.Fprintf(io.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
}

// wantsJSON reports whether the command has a --json flag and the command
// line turned it on. It reads the raw arguments too, because a bad flag stops
// cobra's parsing before it may have reached --json.
func wantsJSON(cmd *cobra.Command, args []string) bool {
	fl := cmd.Flags().Lookup("json")
	if fl == nil {
		return false
	}
	if fl.Changed {
		return fl.Value.String() == "true"
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" {
			return true
		}
		if v, ok := strings.CutPrefix(a, "--json="); ok {
			return v == "true" || v == "1" || v == "t" || v == "T" || v == "TRUE" || v == "True"
		}
	}
	return false
}

// groupCommand is a command that only holds subcommands: alone it prints its
// help; an unknown subcommand is invalid_args (cobra would print help and
// exit 0 otherwise).
func groupCommand(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
}

// usageErrorf is an invalid_args failure.
func usageErrorf(format string, args ...any) error {
	return api.Errorf(api.CodeInvalidArgs, format, args...)
}

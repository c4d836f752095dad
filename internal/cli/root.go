// Package cli is the leo command tree. It holds, once each: the global flags,
// the IO streams commands write to, the JSON rule of docs/managed-install.md
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
//     subcommands become invalid_args automatically, JSON or not, and a
//     --json run's stdout is held so it carries exactly one object. Add the
//     command to jsonRuleCases (jsonrule_test.go); the tree test fails
//     until it is there.
//   - A command with subcommands takes no arguments of its own (Args:
//     cobra.NoArgs, as groupCommand does): a word there is an unknown
//     subcommand.
//   - Errors whose JSON needs more fields than {error, message} implement
//     jsonFailure (see validate.go's validateFailure).
package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/handover"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/managed"
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
	// HandoverOptions adjusts `leo service handover`'s view of the machine
	// before it runs (tests: a fake launchctl, short timeouts); nil means
	// the real one.
	HandoverOptions func(*handover.Options)

	// GOOS is the platform the managed-install marker is judged on; ""
	// means runtime.GOOS (tests drive the macOS path on Linux).
	GOOS string
	// MarkerLoader prints an invalid marker's warning; nil means the
	// process's own (one warning per process).
	MarkerLoader *managed.Loader

	managed *managed.State // the marker as read for this invocation
	// DescribeManaged reads the home's marker (state/managed.json): whether
	// this is a managed install. nil means never managed. The marker's
	// reader fills it; status and pair show it.
	DescribeManaged func(h home.Home) ManagedInfo
	// ServiceRegistered reports whether the home's daemon is registered
	// with the service manager (the launchd job loaded, the systemd unit
	// enabled). nil means this build cannot tell; status shows "unknown".
	ServiceRegistered func(ctx context.Context, h home.Home) (bool, error)
	// Now is the clock of status's uptimes and "in 5h"s; nil means
	// time.Now.
	Now func() time.Time
	// DoctorEnv adjusts what `leo doctor` looks at before it runs (tests:
	// a fake launchctl, the user's home); nil changes nothing.
	DoctorEnv doctorEnvHook
}

// NewFactory returns a Factory on the given streams and environment.
func NewFactory(io *IOStreams, getenv func(string) string, version string) *Factory {
	if getenv == nil {
		getenv = os.Getenv
	}
	if version == "" {
		version = "dev"
	}
	f := &Factory{IO: io, Getenv: getenv, Version: version}
	f.RunTaskLocally = f.runTaskLocally
	f.DescribeManaged = f.describeManaged
	f.ServiceRegistered = f.serviceRegistered
	return f
}

// runTaskLocally is `leo run` without a daemon: the task runs here, on the
// daemon's own path (task.RunOnce), recorded in the home's history and
// logs, with the binaries a managed install names.
func (f *Factory) runTaskLocally(ctx context.Context, cfg *config.Config, h home.Home, name string) (api.TaskRun, error) {
	opts, err := task.HomeOptions(h, func() *config.Config { return cfg }, f.Resolver(), f.LeoBinary(), nil)
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
		// Every invocation reads the managed-install marker, so an
		// invalid one is reported whatever command runs.
		PersistentPreRunE: func(*cobra.Command, []string) error {
			f.Managed()
			return nil
		},
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
	addNameCompletions(f, root)
	markRunErrors(root)
	return root
}

// Run executes leo with args, reports a failure on f's streams (following the
// JSON rule for --json commands) and returns it; ExitCodeOf(err) is the exit
// status.
//
// The JSON rule lives here, once, for every command: whether a command line
// asked for JSON is decided before any command runs (jsonRequested), an
// unknown subcommand is refused before any command runs (checkSubcommand),
// stdout of a JSON run is held until the command has finished so that it
// carries exactly one object — the command's on success, the failure object
// otherwise — and every failure, cobra's own included, goes through
// reportError.
func Run(ctx context.Context, args []string, f *Factory) error {
	root := NewRoot(f)
	// ExecuteC adds these itself; adding them first lets the checks below
	// see `leo help` and `leo completion` as the commands they are.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd(args...)

	target, err := checkSubcommand(root, args)
	asJSON := jsonRequested(target, args, err != nil)
	if err == nil {
		err = execute(ctx, root, f.IO, args, asJSON, &target)
		if err == nil {
			return nil
		}
		if target != nil {
			asJSON = wantsJSON(target, args)
		}
	}
	err, usage := classify(err)
	err = inCommandShape(target, err)
	reportError(f.IO, target, asJSON, usage, err)
	return err
}

// execute runs the command line. With asJSON, the command's stdout is held
// and released only when it is exactly one JSON object and the command
// succeeded; otherwise the failure object replaces it. *target is set to the
// command cobra ran (or tried to).
func execute(ctx context.Context, root *cobra.Command, io *IOStreams, args []string, asJSON bool, target **cobra.Command) error {
	root.SetArgs(args)
	if !asJSON {
		cmd, err := root.ExecuteContextC(ctx)
		if cmd != nil {
			*target = cmd
		}
		return err
	}
	// Commands write to io.Out through the shared *IOStreams; cobra's own
	// help and usage text keeps the real stdout (root.SetOut in NewRoot).
	real := io.Out
	held := &bytes.Buffer{}
	io.Out, io.Lines = held, real
	cmd, err := root.ExecuteContextC(ctx)
	io.Out, io.Lines = real, nil
	if cmd != nil {
		*target = cmd
	}
	if err != nil {
		return err
	}
	if h := (*target).Flags().Lookup("help"); held.Len() == 0 && h != nil && h.Changed {
		return nil // --help asked for text (on the real stdout)
	}
	if held.Len() == 0 && (*target).Annotations[jsonLines] == "true" {
		return nil // its JSON lines went out as they came
	}
	out, jerr := layoutJSON(held.Bytes(), io.IsTTY)
	if jerr != nil {
		return &runFailure{err: api.Errorf(api.CodeInternal,
			"leo %s printed something other than one JSON object on stdout (a bug in leo): %v", commandName(*target), jerr)}
	}
	_, err = real.Write(out)
	return err
}

// jsonLines marks (in a command's Annotations) a command whose --json is a
// stream of one JSON object per line, written to IOStreams.LinesOut as
// they come (leo events --follow would otherwise never print); a failure
// is still one error object.
const jsonLines = "leo.json-lines"

func commandName(c *cobra.Command) string {
	if c == nil {
		return "leo"
	}
	return strings.TrimPrefix(c.CommandPath(), "leo ")
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

// classify returns the error a failure is reported as — a command's own
// error as is, anything cobra produced (unknown command or flag, wrong
// number of arguments, missing required flag) as invalid_args — and whether
// it is a command-line mistake, which text mode follows with a usage hint.
// A command's own invalid_args (the daemon refusing a value, say) gets no
// hint: the command line parsed fine.
func classify(err error) (error, bool) {
	var rf *runFailure
	if errors.As(err, &rf) {
		return rf.err, false
	}
	var coded *api.Error
	if errors.As(err, &coded) {
		return err, coded.Code == api.CodeInvalidArgs
	}
	return &api.Error{Code: api.CodeInvalidArgs, Message: err.Error()}, true
}

// reportError prints err: as the JSON failure object on stdout when the
// command line asked for JSON, else as one line on stderr (followed by a
// usage hint for a command-line mistake).
func reportError(io *IOStreams, cmd *cobra.Command, asJSON, usage bool, err error) {
	if asJSON {
		var body any
		var jf jsonFailure
		if errors.As(err, &jf) {
			body = jf.JSONBody()
		} else {
			body = &api.Error{Code: codeOf(err), Message: err.Error()}
		}
		if werr := printJSON(io, body); werr != nil {
			fmt.Fprintf(io.ErrOut, "leo: %v\n", werr)
		}
		return
	}
	fmt.Fprintf(io.ErrOut, "leo: %v\n", err)
	if usage && cmd != nil {
		fmt.Fprintf(io.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
}

// checkSubcommand finds the command args name and refuses, before anything
// runs, a word where a subcommand belongs that names none (`leo service
// bogus`): cobra would otherwise report the first unknown flag instead, or
// print the group's help and exit 0. Commands with subcommands take no
// arguments of their own (TestGroupsTakeNoArguments keeps it so).
func checkSubcommand(root *cobra.Command, args []string) (*cobra.Command, error) {
	if len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		return nil, nil // shell completion: cobra answers it itself
	}
	cmd, rest, err := root.Find(args)
	if err != nil && cmd == nil {
		return root, &api.Error{Code: api.CodeInvalidArgs, Message: err.Error()}
	}
	if !cmd.HasSubCommands() {
		return cmd, nil
	}
	words := positionals(cmd, rest)
	if len(words) == 0 {
		return cmd, nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", words[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default, set where it reports
	}
	if s := cmd.SuggestionsFor(words[0]); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %q?)", s[0])
	}
	return cmd, &api.Error{Code: api.CodeInvalidArgs, Message: msg}
}

// positionals are the words of args that are neither flags nor flag values,
// up to "--", the way cobra itself tells them apart.
func positionals(cmd *cobra.Command, args []string) []string {
	inherited := cmd.InheritedFlags() // also merges them into cmd.Flags()
	takesValue := func(name string, short bool) bool {
		var fl *pflag.Flag
		for _, fs := range []*pflag.FlagSet{cmd.Flags(), inherited} {
			if short {
				fl = fs.ShorthandLookup(name)
			} else {
				fl = fs.Lookup(name)
			}
			if fl != nil {
				return fl.NoOptDefVal == ""
			}
		}
		return false // an unknown flag: cobra refuses it anyway
	}
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return out
		case strings.HasPrefix(a, "--"):
			if !strings.Contains(a, "=") && takesValue(a[2:], false) {
				i++
			}
		case strings.HasPrefix(a, "-") && len(a) == 2:
			if takesValue(a[1:], true) {
				i++
			}
		case strings.HasPrefix(a, "-") && a != "-":
			// -xVALUE or grouped short flags
		default:
			out = append(out, a)
		}
	}
	return out
}

// jsonRequested decides, before anything runs, whether a failure of this
// command line is reported as JSON: the command has --json and the command
// line turns it on, or (unknownSub) the command line names no command but
// asks for JSON, as an app calling a subcommand this leo lacks would.
func jsonRequested(cmd *cobra.Command, args []string, unknownSub bool) bool {
	if cmd == nil {
		return false
	}
	if unknownSub {
		return rawJSONFlag(args)
	}
	return cmd.Flags().Lookup("json") != nil && rawJSONFlag(args)
}

// wantsJSON reports whether the command has a --json flag and the command
// line turned it on. It reads the raw arguments too, because a bad flag stops
// cobra's parsing before it may have reached --json.
func wantsJSON(cmd *cobra.Command, args []string) bool {
	fl := cmd.Flags().Lookup("json")
	if fl == nil {
		return false
	}
	if fl.Changed && fl.Value.String() == "true" {
		return true
	}
	// pflag sets a refused --json=maybe to false: the raw words decide.
	return rawJSONFlag(args)
}

// rawJSONFlag reports whether args turn --json on, before "--". A value
// that is no boolean (--json=maybe) counts as on: the caller asked for
// JSON, so the invalid_args it gets is the JSON failure object.
func rawJSONFlag(args []string) bool {
	on := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "--json" {
			on = true
		}
		if v, ok := strings.CutPrefix(a, "--json="); ok {
			b, err := strconv.ParseBool(v)
			on = b || err != nil
		}
	}
	return on
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

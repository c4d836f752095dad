package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/doctor"
	"github.com/blackpaw-studio/leo/internal/handover"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/managed"
)

func init() { register(newDoctorCmd) }

// doctorEnvHook is the type of Factory.DoctorEnv (named here, so root.go
// needs no import of internal/doctor).
type doctorEnvHook = func(e *doctor.Env)

// DoctorOptions are the inputs of `leo doctor`.
type DoctorOptions struct {
	IO    *IOStreams
	JSON  bool
	Fix   bool
	Label string
	Env   *doctor.Env
}

func newDoctorCmd(f *Factory) *cobra.Command {
	opts := &DoctorOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the install, one line per check with the command that fixes it",
		Long: `Check this home's leo: the managed-install marker, Claude Code and the other
harness CLIs (path and version), tmux (and, managed, a pending upgrade or a
missing copy), the daemon's socket, the launchd jobs (macOS), a handover left
half done, lingering (Linux) and the state files. Each check prints one line:
ok, warn or fail, what is wrong, and the command that fixes it.

--fix first performs the repairs leo can make itself, one line each: it
finishes or rolls back an interrupted 'leo service handover --to-cli',
restores the CLI job from its handed-over plist when there is no marker and
no app job (that needs --label, the app's launchd label), boots out the CLI
job when it runs beside the marker's, and removes a stale socket. It never
deletes an invalid marker.

The exit status is 0 when no check fails (warnings included), 1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Label != "" {
				if err := managed.ValidLabel(opts.Label); err != nil {
					return usageErrorf("--label: %v", err)
				}
			}
			h, err := f.Home()
			if err != nil {
				return err
			}
			opts.Env = f.doctorEnv(h, opts.Label)
			return runDoctor(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON)
	cmd.Flags().BoolVar(&opts.Fix, "fix", false, "perform the repairs leo can make (one line each); never deletes an invalid marker")
	cmd.Flags().StringVar(&opts.Label, "label", "", "the app's launchd label, for restoring a handed-over CLI job when there is no marker")
	return cmd
}

// doctorEnv is what the checks look at, from f's seams; f.DoctorEnv
// adjusts it (tests: a fake launchctl, the user's home).
func (f *Factory) doctorEnv(h home.Home, label string) *doctor.Env {
	userHome := f.Getenv("HOME")
	if userHome == "" {
		userHome, _ = os.UserHomeDir()
	}
	e := &doctor.Env{
		Home:     h,
		Marker:   f.markerOf(h),
		GOOS:     f.GOOS,
		UID:      os.Getuid(),
		UserHome: userHome,
		Resolver: f.Resolver(),
		Tmux: func(ctx context.Context) (managed.TmuxChoice, error) {
			return f.Tmux(ctx, h)
		},
		Label: label,
	}
	e.Harnesses, e.Config = doctorConfig(h, f.Getenv, e.Marker.Managed())
	e.Worktrees = doctorWorktrees(h, f.Getenv)
	e.Notifiers = func(ctx context.Context) (doctor.Check, bool) { return doctorNotifiers(ctx, h) }
	e.RestoreCLIJob = func(ctx context.Context, label string) (string, error) {
		return f.restoreCLIJob(ctx, e, label)
	}
	if f.DoctorEnv != nil {
		f.DoctorEnv(e)
	}
	return e
}

// markerOf is h's marker: the invocation's (its warning already printed
// once), or h's own read silently.
func (f *Factory) markerOf(h home.Home) managed.State {
	st := f.Managed()
	if st.Path != h.MarkerPath() {
		st = managed.Read(h, managed.Platform{GOOS: f.GOOS, Getenv: f.Getenv})
	}
	return st
}

// doctorConfig is the config check and the harnesses the config uses
// (nil when it cannot be read: claude, the default, counts as used).
func doctorConfig(h home.Home, getenv func(string) string, managedInstall bool) (map[string]bool, *doctor.Check) {
	c := &doctor.Check{Name: "config"}
	cfg, err := config.Load(h.ConfigPath, config.WithGetenv(getenv))
	switch {
	case errors.Is(err, fs.ErrNotExist) && managedInstall && !h.ExplicitConfig:
		c.Status, c.Message = doctor.OK, h.ConfigPath+" does not exist yet; the managed daemon creates the default config when it starts"
		return nil, c
	case errors.Is(err, fs.ErrNotExist):
		c.Status, c.Message, c.Fix = doctor.Fail, "no leo.yaml at "+h.ConfigPath+": the daemon will not start", "leo setup"
		return nil, c
	case err != nil:
		c.Status, c.Message, c.Fix = doctor.Fail, fmt.Sprintf("%s: %v", h.ConfigPath, err), "leo validate (then edit "+h.ConfigPath+")"
		return nil, c
	}
	if err := cfg.Validate(); err != nil {
		c.Status, c.Message, c.Fix = doctor.Fail, fmt.Sprintf("%s is invalid: %v", h.ConfigPath, err), "leo validate (then edit "+h.ConfigPath+")"
		return nil, c
	}
	used := map[string]bool{cfg.DefaultsHarnessName(): true}
	for _, t := range cfg.Templates {
		if t.Harness != "" {
			used[t.Harness] = true
		}
	}
	for _, t := range cfg.Tasks {
		if t.Harness != "" {
			used[t.Harness] = true
		}
	}
	c.Status, c.Message = doctor.OK, h.ConfigPath+" is valid"
	return used, c
}

// doctorFailure is `leo doctor` with a failing check: the JSON rule's
// {error, message} plus the whole report.
type doctorFailure struct {
	res doctor.Result
}

func (d *doctorFailure) Error() string {
	failed := d.res.Failed()
	return fmt.Sprintf("%d check(s) failed: %s", len(failed), strings.Join(failed, ", "))
}

func (d *doctorFailure) ErrorCode() api.Code { return api.CodeChecksFailed }

func (d *doctorFailure) JSONBody() any {
	return struct {
		OK      bool            `json:"ok"`
		Error   api.Code        `json:"error"`
		Message string          `json:"message"`
		Checks  []doctor.Check  `json:"checks"`
		Fixed   []doctor.Repair `json:"fixed"`
	}{false, api.CodeChecksFailed, d.Error(), d.res.Checks, d.res.Fixed}
}

func runDoctor(ctx context.Context, opts *DoctorOptions) error {
	res := doctor.Run(ctx, opts.Env, opts.Fix)
	if opts.JSON {
		if !res.OK {
			return &doctorFailure{res: res}
		}
		return writeJSON(opts.IO.Out, res)
	}
	var b strings.Builder
	for _, r := range res.Fixed {
		what := "fixed"
		if !r.OK {
			what = "not fixed"
		}
		fmt.Fprintf(&b, "%-9s %s: %s\n", what, r.Name, r.Message)
	}
	for _, c := range res.Checks {
		what := c.Name + ": " + c.Message
		if strings.HasPrefix(c.Message, c.Name+": ") {
			what = c.Message // "tmux: not found", not "tmux: tmux: not found"
		}
		line := fmt.Sprintf("%-4s %s", c.Status, what)
		if c.Fix != "" {
			line += " — fix: " + c.Fix
		}
		b.WriteString(line + "\n")
	}
	if _, err := opts.IO.Out.Write([]byte(b.String())); err != nil {
		return err
	}
	if !res.OK {
		return &doctorFailure{res: res}
	}
	return nil
}

// restoreCLIJob is doctor --fix's restore of a handed-over CLI job with no
// marker: `leo service handover --to-cli --label L`'s recovery path
// (checks, rollback, and the wait for the restored daemon), on doctor's
// launchctl.
func (f *Factory) restoreCLIJob(ctx context.Context, e *doctor.Env, label string) (string, error) {
	c := client.New(e.Home)
	defer c.Close()
	ho := handover.Options{
		Home:     e.Home,
		GOOS:     e.GOOS,
		Getenv:   f.Getenv,
		UserHome: e.UserHome,
		UID:      e.UID,
		Daemon:   c,
		LoadConfig: func() error {
			_, _, err := f.LoadConfig()
			return err
		},
		Version:   f.Version,
		Launchctl: e.Launchctl,
		Log:       f.IO.ErrOut,
	}
	if e.Runner != nil {
		ho.Runner = e.Runner
	}
	if f.HandoverOptions != nil {
		f.HandoverOptions(&ho)
	}
	res, err := handover.Run(ctx, ho, handover.Request{ToCLI: true, Label: label})
	if err != nil {
		var hf *handover.Failure
		if errors.As(err, &hf) {
			return "", fmt.Errorf("%s (%s at %s)", hf.Message, hf.Code, hf.Step)
		}
		return "", err
	}
	msg := fmt.Sprintf("restored the CLI job %s from %s (leo service handover --to-cli --label %s); its daemon is ready", doctor.CLILabel, res.PlistBackup, label)
	if res.Warning != "" {
		msg += "; warning: " + res.Warning
	}
	return msg, nil
}

// doctorNotifyWait bounds asking the daemon about its notifiers.
const doctorNotifyWait = 3 * time.Second

// doctorNotifiers is the notifiers check: the daemon's view of every
// notifier (GET /notify). No daemon (the socket check says so) or no
// notifier reports nothing; a failing notifier is a warning, since leo
// itself works on.
func doctorNotifiers(ctx context.Context, h home.Home) (doctor.Check, bool) {
	ctx, cancel := context.WithTimeout(ctx, doctorNotifyWait)
	defer cancel()
	c := client.New(h)
	defer c.Close()
	st, err := c.NotifyStatus(ctx)
	switch {
	case api.HasCode(err, api.CodeDaemonDown):
		return doctor.Check{}, false
	case err != nil:
		return doctor.Check{Status: doctor.Warn, Message: "cannot ask the daemon about its notifiers: " + err.Error()}, true
	case len(st.Notifiers) == 0:
		return doctor.Check{}, false
	}
	var failing []string
	for _, n := range st.Notifiers {
		if n.Failing {
			failing = append(failing, fmt.Sprintf("the %s of %s: %s", n.Kind, strings.TrimSuffix(n.Target, "."+n.Kind), cell(n.LastError, 200)))
		}
	}
	if len(failing) == 0 {
		return doctor.Check{Status: doctor.OK, Message: fmt.Sprintf("%d notifier target(s), none failing", len(st.Notifiers))}, true
	}
	return doctor.Check{Status: doctor.Warn,
		Message: fmt.Sprintf("%d of %d notifier target(s) failing: %s", len(failing), len(st.Notifiers), strings.Join(failing, "; ")),
		Fix:     "leo notify test (each try is in the daemon log: leo service logs)"}, true
}

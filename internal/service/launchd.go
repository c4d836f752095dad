package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"

	"howett.net/plist"
)

// Plist is the LaunchAgent property list, encoded by howett.net/plist
// (never pasted as text). Field order is the key order in the file.
type Plist struct {
	Label                string            `plist:"Label"`
	ProgramArguments     []string          `plist:"ProgramArguments"`
	EnvironmentVariables map[string]string `plist:"EnvironmentVariables,omitempty"`
	RunAtLoad            bool              `plist:"RunAtLoad"`
	KeepAlive            bool              `plist:"KeepAlive"`
	// ProcessType Interactive: launchd must not throttle the daemon that
	// relays a person's messages.
	ProcessType       string `plist:"ProcessType"`
	StandardErrorPath string `plist:"StandardErrorPath"`
	StandardOutPath   string `plist:"StandardOutPath"`
}

// Encode is the plist as XML.
func (p Plist) Encode() ([]byte, error) {
	return plist.MarshalIndent(p, plist.XMLFormat, "\t")
}

// DecodePlist reads a LaunchAgent plist (XML or binary).
func DecodePlist(data []byte) (Plist, error) {
	var p Plist
	_, err := plist.Unmarshal(data, &p)
	return p, err
}

// Launchd is the macOS backend: a LaunchAgent in ~/Library/LaunchAgents,
// driven by `launchctl bootstrap|bootout|print|kickstart` in the user's
// gui/<uid> domain.
type Launchd struct {
	opts Options
	path string
}

// labelRE is reverse-DNS: two or more dot-separated parts.
// The patterns are compiled on first use: a package initialiser of the
// CLI must not allocate (TestStartupInitBudget).
var labelRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*(\.[A-Za-z0-9][A-Za-z0-9-]*)+$`)
})

// NewLaunchd returns the launchd backend for opts (Label defaults to
// com.blackpaw.leo, the CLI install's).
func NewLaunchd(opts Options) (*Launchd, error) {
	opts.defaults()
	if err := opts.check(); err != nil {
		return nil, err
	}
	if !labelRE().MatchString(opts.Label) {
		return nil, fmt.Errorf("launchd: label %q is not reverse-DNS (like %s)", opts.Label, CLILabel)
	}
	return &Launchd{opts: opts, path: filepath.Join(opts.UserHome, "Library", "LaunchAgents", opts.Label+".plist")}, nil
}

// Kind is "launchd".
func (l *Launchd) Kind() string { return "launchd" }

// Name is the label.
func (l *Launchd) Name() string { return l.opts.Label }

// Path is ~/Library/LaunchAgents/<label>.plist.
func (l *Launchd) Path() string { return l.path }

func (l *Launchd) domain() string  { return "gui/" + strconv.Itoa(l.opts.UID) }
func (l *Launchd) service() string { return l.domain() + "/" + l.opts.Label }

// Plist is what Install writes. The daemon logs to state/service.log
// itself; launchd's stdout and stderr files catch what it prints before
// that log opens (a second daemon's refusal, a crash).
func (l *Launchd) Plist() Plist {
	o := l.opts
	env := map[string]string{}
	for _, e := range o.jobEnv() {
		env[e.Key] = e.Value
	}
	if len(env) == 0 {
		env = nil
	}
	out := filepath.Join(o.Home.StateDir(), "service.launchd.log")
	return Plist{
		Label:                o.Label,
		ProgramArguments:     append([]string{o.Program}, o.daemonArgs()...),
		EnvironmentVariables: env,
		RunAtLoad:            true,
		KeepAlive:            true,
		ProcessType:          "Interactive",
		StandardErrorPath:    out,
		StandardOutPath:      out,
	}
}

func (l *Launchd) launchctl(ctx context.Context, args ...string) ([]byte, error) {
	return l.opts.Runner.Run(ctx, "launchctl", args...)
}

// Install writes the plist and bootstraps it; a loaded job whose plist
// changed is booted out first so launchd reads the new one. bootout leaves
// the tmux server running: it daemonized into its own session, outside
// the job's process group.
func (l *Launchd) Install(ctx context.Context) (InstallResult, error) {
	data, err := l.Plist().Encode()
	if err != nil {
		return InstallResult{}, fmt.Errorf("launchd: encode %s: %w", l.path, err)
	}
	loaded, err := l.Loaded(ctx)
	if err != nil {
		return InstallResult{}, err
	}
	wrote, err := writeIfChanged(l.path, data, 0o644)
	if err != nil {
		return InstallResult{}, err
	}
	res := InstallResult{Path: l.path, Wrote: wrote, Contents: data}
	if loaded && !wrote {
		return res, nil
	}
	if loaded {
		if _, err := l.launchctl(ctx, "bootout", l.service()); err != nil {
			return res, fmt.Errorf("launchd: bootout %s: %w", l.service(), err)
		}
	}
	if _, err := l.launchctl(ctx, "bootstrap", l.domain(), l.path); err != nil {
		return res, fmt.Errorf("launchd: bootstrap %s: %w", l.path, err)
	}
	return res, nil
}

// Uninstall boots the job out and removes the plist.
func (l *Launchd) Uninstall(ctx context.Context) (UninstallResult, error) {
	loaded, err := l.Loaded(ctx)
	res := UninstallResult{Path: l.path, WasLoaded: loaded}
	if err != nil {
		return res, err
	}
	if loaded {
		if _, err := l.launchctl(ctx, "bootout", l.service()); err != nil {
			return res, fmt.Errorf("launchd: bootout %s: %w", l.service(), err)
		}
	}
	switch err := os.Remove(l.path); {
	case err == nil:
		res.Removed = true
	case !errors.Is(err, os.ErrNotExist):
		return res, fmt.Errorf("remove %s: %w", l.path, err)
	}
	return res, nil
}

// Start bootstraps the plist, or kickstarts a job that is loaded.
func (l *Launchd) Start(ctx context.Context) error {
	loaded, err := l.Loaded(ctx)
	if err != nil {
		return err
	}
	if loaded {
		if _, err := l.launchctl(ctx, "kickstart", l.service()); err != nil {
			return fmt.Errorf("launchd: kickstart %s: %w", l.service(), err)
		}
		return nil
	}
	if !fileExists(l.path) {
		return fmt.Errorf("launchd: %s does not exist; run `leo service install` first", l.path)
	}
	if _, err := l.launchctl(ctx, "bootstrap", l.domain(), l.path); err != nil {
		return fmt.Errorf("launchd: bootstrap %s: %w", l.path, err)
	}
	return nil
}

// Stop boots the job out (KeepAlive would restart a killed daemon); the
// plist stays, and Start brings it back.
func (l *Launchd) Stop(ctx context.Context) error {
	if _, err := l.launchctl(ctx, "bootout", l.service()); err != nil {
		return fmt.Errorf("launchd: bootout %s: %w", l.service(), err)
	}
	return nil
}

// Restart is `kickstart -k`: launchd kills the running daemon and starts
// it again.
func (l *Launchd) Restart(ctx context.Context) error {
	if _, err := l.launchctl(ctx, "kickstart", "-k", l.service()); err != nil {
		return fmt.Errorf("launchd: kickstart -k %s: %w", l.service(), err)
	}
	return nil
}

// Loaded is `launchctl print gui/<uid>/<label>` succeeding.
func (l *Launchd) Loaded(ctx context.Context) (bool, error) {
	_, ok, err := l.print(ctx)
	return ok, err
}

func (l *Launchd) print(ctx context.Context) ([]byte, bool, error) {
	out, err := l.launchctl(ctx, "print", l.service())
	if err == nil {
		return out, true, nil
	}
	var re *RunError
	// launchctl print exits 113 ("could not find service") for a job
	// that is not loaded; any other failure is launchctl's own.
	if errors.As(err, &re) && re.ExitCode() == 113 {
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("launchd: print %s: %w", l.service(), err)
}

var (
	printPID   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*pid = (\d+)\s*$`) })
	printState = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*state = (\S+)\s*$`) })
)

// Status is `launchctl print` of the job.
func (l *Launchd) Status(ctx context.Context) (Status, error) {
	st := Status{Kind: l.Kind(), Name: l.opts.Label, Path: l.path, Installed: fileExists(l.path)}
	st.Enabled = st.Installed
	out, ok, err := l.print(ctx)
	if err != nil || !ok {
		return st, err
	}
	st.Registered = true
	if m := printState().FindSubmatch(out); m != nil {
		st.State = string(m[1])
	}
	if m := printPID().FindSubmatch(out); m != nil {
		if pid, err := strconv.Atoi(string(m[1])); err == nil && pid > 0 {
			st.PID, st.Running = pid, true
		}
	}
	return st, nil
}

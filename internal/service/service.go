// Package service registers the leo daemon with the platform's service
// manager — a systemd user unit on Linux, a LaunchAgent on macOS — behind
// one interface, so the CLI (and the handover) never care which one runs.
//
// Every call to systemctl, loginctl or launchctl goes through a Runner, so
// tests drive both backends with fake programs on any platform.
package service

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/home"
)

// CLILabel is the launchd label of the CLI install (brew or curl). A
// managed install passes the marker's label instead.
const CLILabel = "com.blackpaw.leo"

// Manager is the daemon's registration with the platform's service manager.
type Manager interface {
	// Kind is "systemd" or "launchd".
	Kind() string
	// Name is the unit name (leo.service) or the launchd label.
	Name() string
	// Path is the unit file or plist that Install writes.
	Path() string
	// Install writes the job's file (unchanged when it already says the
	// same), registers it to start at login and starts it. It is
	// idempotent.
	Install(ctx context.Context) (InstallResult, error)
	// Uninstall stops and unregisters the job and removes its file. The
	// tmux server and the agents keep running.
	Uninstall(ctx context.Context) (UninstallResult, error)
	// Start starts the registered job.
	Start(ctx context.Context) error
	// Stop stops the job; the tmux server and the agents keep running.
	Stop(ctx context.Context) error
	// Restart stops and starts the job (or starts a job that is down).
	Restart(ctx context.Context) error
	// Status is what the service manager says about the job.
	Status(ctx context.Context) (Status, error)
	// Loaded reports whether the job is registered (loaded) with the
	// service manager: what `leo service restart` needs to act at all.
	Loaded(ctx context.Context) (bool, error)
}

// InstallResult says what Install did.
type InstallResult struct {
	// Path is the unit file or plist.
	Path string
	// Wrote is false when the file already said the same.
	Wrote bool
	// Contents is the file as written (it never carries a secret).
	Contents []byte
	// Notes are what the user should know (lingering off, …).
	Notes []string
}

// UninstallResult says what Uninstall did.
type UninstallResult struct {
	Path string
	// Removed is false when there was no file.
	Removed bool
	// WasLoaded is true when the job was registered before.
	WasLoaded bool
}

// Status is the job as the service manager reports it.
type Status struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
	Path string `json:"path"`
	// Installed: the unit file or plist exists.
	Installed bool `json:"installed"`
	// Registered: the service manager has the job loaded.
	Registered bool `json:"registered"`
	// Running: the job's process runs, with PID.
	Running bool `json:"running"`
	PID     int  `json:"pid,omitempty"`
	// Enabled: systemd starts the unit at login (launchd: RunAtLoad, so
	// the same as Installed).
	Enabled bool `json:"enabled"`
	// Linger is systemd's lingering for the user ("yes", "no", or "" when
	// unknown or launchd): without it the unit stops at logout.
	Linger string `json:"linger,omitempty"`
	// State is the service manager's own word (active, failed, running…).
	State string `json:"state,omitempty"`
}

// Runner runs a service-manager program. Out is its stdout; an error
// carries its stderr.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) (out []byte, err error)
}

// ExecRunner runs the real programs.
type ExecRunner struct {
	// Env, when set, is the programs' environment.
	Env []string
}

// runTimeout bounds one service-manager call: a stuck systemctl (no user
// bus answering) must not hang a leo command.
const runTimeout = 60 * time.Second

// Run runs name with args.
func (r ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if r.Env != nil {
		cmd.Env = r.Env
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &RunError{Cmd: name + " " + strings.Join(args, " "), Err: err, Stderr: strings.TrimSpace(clip(stderr.String(), 2000))}
	}
	return stdout.Bytes(), nil
}

// RunError is a service-manager program that failed.
type RunError struct {
	Cmd    string
	Err    error
	Stderr string
}

func (e *RunError) Error() string {
	if e.Stderr != "" {
		return fmt.Sprintf("%s: %v: %s", e.Cmd, e.Err, e.Stderr)
	}
	return fmt.Sprintf("%s: %v", e.Cmd, e.Err)
}

func (e *RunError) Unwrap() error { return e.Err }

// ExitCode is the program's exit status, -1 when it did not exit.
func (e *RunError) ExitCode() int {
	var ee *exec.ExitError
	if errors.As(e.Err, &ee) {
		return ee.ExitCode()
	}
	var ec interface{ ExitCode() int }
	if errors.As(e.Err, &ec) {
		return ec.ExitCode()
	}
	return -1
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// Options are what both backends need.
type Options struct {
	// Home is the leo home the job runs the daemon of.
	Home home.Home
	// DefaultRoot is ~/.leo: its job has the plain name (leo.service);
	// any other home gets leo-<hash>.service and passes LEO_HOME.
	DefaultRoot string
	// Program is the absolute path of the leo binary the job runs.
	Program string
	// Env is put into the job's environment (PATH, so the daemon finds
	// tmux and the harness CLIs): never secrets, the file is readable.
	Env map[string]string
	// UserHome is the user's home directory (~/.config, ~/Library).
	UserHome string
	// ConfigHome is $XDG_CONFIG_HOME ("" means UserHome/.config).
	ConfigHome string
	// UID is the user's id (launchd's gui/<uid> domain, loginctl).
	UID int
	// Label is the launchd label (default CLILabel).
	Label string
	// Runner runs systemctl, loginctl and launchctl; nil means the real
	// programs.
	Runner Runner
}

func (o *Options) defaults() {
	if o.Runner == nil {
		o.Runner = ExecRunner{}
	}
	if o.Label == "" {
		o.Label = CLILabel
	}
}

// New returns the backend of goos ("linux": systemd, "darwin": launchd).
func New(goos string, opts Options) (Manager, error) {
	switch goos {
	case "linux":
		return NewSystemd(opts)
	case "darwin":
		return NewLaunchd(opts)
	default:
		return nil, fmt.Errorf("service management is not supported on %s (systemd on Linux, launchd on macOS)", goos)
	}
}

// daemonArgs are the job's arguments after the program: the supervised
// entry point, and --config when the home was named by its file (LEO_HOME
// covers the rest, see jobEnv).
func (o Options) daemonArgs() []string {
	args := []string{"service", "--supervised"}
	if o.Home.ExplicitConfig {
		args = append(args, "--config", o.Home.ConfigPath)
	}
	return args
}

// isDefaultHome: the job of ~/.leo needs no LEO_HOME and has the plain name.
func (o Options) isDefaultHome() bool {
	return o.DefaultRoot != "" && filepath.Clean(o.DefaultRoot) == filepath.Clean(o.Home.Root)
}

// jobEnv is the job's environment, sorted by key: Env, plus LEO_HOME for a
// home other than the default (so the daemon resolves the same home).
func (o Options) jobEnv() []envVar {
	m := map[string]string{}
	for k, v := range o.Env {
		m[k] = v
	}
	if !o.isDefaultHome() && !o.Home.ExplicitConfig {
		m["LEO_HOME"] = o.Home.Root
	} else {
		delete(m, "LEO_HOME")
	}
	out := make([]envVar, 0, len(m))
	for k, v := range m {
		out = append(out, envVar{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

type envVar struct{ Key, Value string }

// check refuses what no job file can carry safely: a relative program,
// control bytes, env keys that are not names.
func (o Options) check() error {
	if o.Home.Root == "" {
		return errors.New("service: no leo home")
	}
	if !filepath.IsAbs(o.Program) {
		return fmt.Errorf("service: the leo binary path %q is not absolute", o.Program)
	}
	if o.UserHome == "" || !filepath.IsAbs(o.UserHome) {
		return fmt.Errorf("service: the user's home directory %q is not absolute", o.UserHome)
	}
	for _, s := range append([]string{o.Program, o.Home.Root}, o.daemonArgs()...) {
		if hasControl(s) {
			return fmt.Errorf("service: %q has control characters, which a job file cannot carry", s)
		}
	}
	for k, v := range o.Env {
		if k == "" || strings.ContainsAny(k, "= \t") || hasControl(k) {
			return fmt.Errorf("service: env key %q is not a variable name", k)
		}
		if hasControl(v) {
			// The value may be a secret: name only the key.
			return fmt.Errorf("service: env %s has control characters, which a job file cannot carry", k)
		}
	}
	return nil
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

// writeIfChanged writes data to path atomically unless it already holds
// exactly data; it reports whether it wrote.
func writeIfChanged(path string, data []byte, perm os.FileMode) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("write %s: %w", path, err)
	}
	return true, nil
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Package doctor is `leo doctor`: one check per thing that can be wrong
// with an install, each saying what is wrong and the exact command that
// fixes it, and the repairs docs/cli.md lists under leo doctor --fix (`--fix`),
// each reporting in one line what it did.
//
// Everything platform-specific goes through seams — GOOS, the launchctl and
// loginctl programs run through a Runner — so tests on Linux drive the
// macOS checks and repairs with a fake launchctl.
package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/managed"
)

// Status is a check's verdict. Only "fail" makes `leo doctor` exit 1.
type Status string

const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
)

// Check is one line of the report. Fix is the exact command (or action)
// that repairs it; "" when nothing needs doing.
type Check struct {
	Name    string `json:"name"`
	Status  Status `json:"status"`
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// Repair is one line of what `--fix` did (OK) or could not do (!OK).
type Repair struct {
	Name    string `json:"name"`
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// Runner runs a program (launchctl, loginctl, a harness CLI's --version).
// An error carries the exit status through an ExitCode() int method, as
// *exec.ExitError and service.RunError do.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// ExecRunner runs real programs. WaitDelay bounds a program whose children
// keep its pipes open after the timeout killed it.
type ExecRunner struct{}

// OutputRunner is a Runner that also hands back what a program printed on
// stderr when it succeeded (pi prints its --version there).
type OutputRunner interface {
	RunOutput(ctx context.Context, name string, args ...string) (stdout, stderr []byte, err error)
}

// RunOutput runs name with args and returns both of its outputs.
func (ExecRunner) RunOutput(ctx context.Context, name string, args ...string) ([]byte, []byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// Run runs name with args; stdout is returned, stderr goes into the error.
func (ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(clip(errb.String(), 300))
		if msg != "" {
			return out.Bytes(), &runError{err: err, stderr: msg}
		}
		return out.Bytes(), err
	}
	return out.Bytes(), nil
}

type runError struct {
	err    error
	stderr string
}

func (e *runError) Error() string { return e.err.Error() + ": " + e.stderr }
func (e *runError) Unwrap() error { return e.err }

// exitCode is a failed program's exit status, -1 when it did not exit.
func exitCode(err error) int {
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return -1
}

// Env is what the checks look at.
type Env struct {
	Home home.Home
	// Marker is the home's marker as read (never deleted by a repair).
	Marker managed.State
	// GOOS is the platform; "" means runtime.GOOS.
	GOOS string
	// UID is the user's id (launchd's gui/<uid>, loginctl).
	UID int
	// UserHome is the user's home directory (~/Library/LaunchAgents).
	UserHome string
	// Resolver finds the harness CLIs (the marker's PATH first).
	Resolver binpath.Resolver
	// Tmux picks the tmux binary for the home's server (the version
	// guard when managed).
	Tmux func(ctx context.Context) (managed.TmuxChoice, error)
	// Runner runs launchctl, loginctl and `<cli> --version`; nil means
	// ExecRunner.
	Runner Runner
	// Launchctl and Loginctl name the programs; "" means the plain names.
	Launchctl, Loginctl string
	// Harnesses are the harnesses the config uses (defaults and every
	// template and task); a missing one fails, an unused one is only
	// reported. nil (no readable config) counts the default harness
	// (claude) as used.
	Harnesses map[string]bool
	// Label is the app's launchd label for the recovery of a handed-over
	// CLI job without a marker (--label); leo cannot know it otherwise.
	Label string
	// RestoreCLIJob, when set, performs the --to-cli recovery path for
	// the app's label (the handover package's, which also waits for the
	// restored daemon to be ready) and says in one line what it did; nil
	// means doctor's own minimal restore (fixBackup). Doctor checks the
	// preconditions it can (no marker, a backup, a label) either way.
	RestoreCLIJob func(ctx context.Context, label string) (string, error)
	// WaitReady waits until the home's daemon reports ready; nil polls
	// its socket for up to 30s.
	WaitReady func(ctx context.Context) error
	// Config is the caller's check of leo.yaml (reported after home);
	// nil means none.
	Config *Check
	// Notifiers asks the running daemon about its notifiers (reported
	// after the socket, as NameNotify); nil, or ok false (no daemon, no
	// notifier), reports nothing.
	Notifiers func(ctx context.Context) (c Check, ok bool)
	// Worktrees, when set, has the worktrees leo made checked (and, with
	// --fix, the orphaned clean ones removed).
	Worktrees *Worktrees
	// VersionTimeout bounds each `--version`; 0 means 10s.
	VersionTimeout time.Duration
}

func (e *Env) goos() string {
	if e.GOOS == "" {
		return runtime.GOOS
	}
	return e.GOOS
}

func (e *Env) runner() Runner {
	if e.Runner == nil {
		return ExecRunner{}
	}
	return e.Runner
}

func (e *Env) launchctlName() string {
	if e.Launchctl == "" {
		return "launchctl"
	}
	return e.Launchctl
}

func (e *Env) loginctlName() string {
	if e.Loginctl == "" {
		return "loginctl"
	}
	return e.Loginctl
}

// Result is a whole `leo doctor` run.
type Result struct {
	OK     bool     `json:"ok"`
	Checks []Check  `json:"checks"`
	Fixed  []Repair `json:"fixed"`
}

// Failed are the names of the failing checks.
func (r Result) Failed() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Status == Fail {
			out = append(out, c.Name)
		}
	}
	return out
}

// Run repairs first when fix is set (so the report describes the install
// as the repairs left it), then runs every check.
func Run(ctx context.Context, e *Env, fix bool) Result {
	res := Result{Fixed: []Repair{}}
	if fix {
		res.Fixed = Fix(ctx, e)
	}
	res.Checks = Checks(ctx, e)
	res.OK = len(res.Failed()) == 0
	return res
}

// Checks runs every check, in report order.
func Checks(ctx context.Context, e *Env) []Check {
	var out []Check
	out = append(out, checkHome(e))
	if e.Config != nil {
		out = append(out, *e.Config)
	}
	out = append(out, checkMarker(e))
	// Every registered harness's CLI, in name order. They answer --version
	// at once, each within its own timeout, so a hung one costs doctor one
	// timeout, not one per harness.
	clis := harness.All()
	found := make([]Check, len(clis))
	var wg sync.WaitGroup
	for i, h := range clis {
		wg.Add(1)
		go func() {
			defer wg.Done()
			found[i] = checkHarnessCLI(ctx, e, h)
		}()
	}
	wg.Wait()
	out = append(out, found...)
	out = append(out, checkTmux(ctx, e), checkSocket(e))
	if e.Notifiers != nil {
		if c, ok := e.Notifiers(ctx); ok {
			c.Name = NameNotify
			out = append(out, c)
		}
	}
	if e.goos() == "darwin" {
		out = append(out, checkJobs(ctx, e))
	}
	if c, ok := checkReleasing(e); ok {
		out = append(out, c)
	}
	if e.goos() == "darwin" {
		if c, ok := checkBackup(e); ok {
			out = append(out, c)
		}
	}
	if e.goos() == "linux" {
		out = append(out, checkLinger(ctx, e))
	}
	out = append(out, checkStateFiles(e)...)
	if c, ok := checkWorktrees(ctx, e); ok {
		out = append(out, c)
	}
	for i := range out {
		out[i].Message = oneLine(out[i].Message)
		out[i].Fix = oneLine(out[i].Fix)
	}
	return out
}

// --- paths ---

// CLILabel is the CLI install's launchd label.
const CLILabel = managed.CLILabel

func (e *Env) cliPlist() string {
	return filepath.Join(e.UserHome, "Library", "LaunchAgents", CLILabel+".plist")
}

func (e *Env) backupPath() string { return e.cliPlist() + ".handed-over" }

func (e *Env) releasingPath() string { return e.Home.MarkerPath() + ".releasing" }

func (e *Env) domain() string { return "gui/" + strconv.Itoa(e.UID) }

func (e *Env) target(label string) string { return e.domain() + "/" + label }

// loaded is `launchctl print gui/<uid>/<label>`: exit 113 means the job is
// not registered; any other failure is launchctl's own.
func (e *Env) loaded(ctx context.Context, label string) (bool, error) {
	_, err := e.launchctl(ctx, "print", e.target(label))
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 113 {
		return false, nil
	}
	return false, fmt.Errorf("launchctl print %s: %v", e.target(label), err)
}

// --- helpers ---

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// oneLine escapes control characters so a hostile path or a program's
// output never breaks a report line.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// quote is p as one shell word.
func quote(p string) string {
	if p != "" && strings.Trim(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@") == "" {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}

// toolTimeout bounds one launchctl or loginctl call: a stuck service
// manager (no bus answering) must not hang doctor.
const toolTimeout = 20 * time.Second

func (e *Env) launchctl(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	return e.runner().Run(ctx, e.launchctlName(), args...)
}

func (e *Env) loginctl(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, toolTimeout)
	defer cancel()
	return e.runner().Run(ctx, e.loginctlName(), args...)
}

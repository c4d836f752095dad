// Package handover moves this home's daemon between the CLI install's
// LaunchAgent (com.blackpaw.leo) and Leo.app's managed one:
// `leo service handover --to-app|--to-cli`, exactly as the "Handover"
// section of docs/managed-install.md says — its checks, steps, order,
// result fields and error codes are a contract with the app.
//
// Everything that touches the machine is a seam (the platform, the user's
// home, the launchctl program, the daemon's socket, the lock file), so
// tests on Linux drive every step with a fake launchctl.
package handover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/managed"
	"github.com/blackpaw-studio/leo/internal/service"
)

// Steps of a failure ("step" in the failure object).
const (
	StepPreflight = "preflight"
	StepEnv       = "env"
	StepDrain     = "drain"
	StepBootout   = "bootout"
	StepPlist     = "plist"
	StepLock      = "lock"
	StepMarker    = "marker"
	StepBootstrap = "bootstrap"
	StepReady     = "ready"
)

// BackupSuffix is appended to the CLI plist while the app owns the daemon.
const BackupSuffix = ".handed-over"

// ReleasingSuffix is appended to managed.json while --to-cli releases it.
const ReleasingSuffix = ".releasing"

// Daemon is the home's daemon as the socket shows it (*client.Client).
type Daemon interface {
	Health(ctx context.Context) (api.Health, error)
	Drain(ctx context.Context, req api.DrainRequest) (api.DrainResult, error)
	ResumeDeliveries(ctx context.Context) error
}

// Options are the handover's view of the machine.
type Options struct {
	Home home.Home
	// GOOS is the platform; "" means runtime.GOOS. Only darwin hands over.
	GOOS string
	// Getenv reads LEO_AGENT (set in every agent leo launches) and HOME
	// for the marker's ~.
	Getenv func(string) string
	// UserHome holds Library/LaunchAgents.
	UserHome string
	// UID is the launchd domain gui/<uid>.
	UID int
	// Runner runs Launchctl; nil means the real program.
	Runner service.Runner
	// Launchctl is the program run for launchctl; "" means "launchctl".
	Launchctl string
	// LoadConfig loads leo.yaml as a daemon would; nil skips the check.
	// --to-cli needs it to load (the restored CLI daemon refuses to start
	// otherwise); --to-app needs an existing one to load (a missing one is
	// the managed first start's to write).
	LoadConfig func() error
	// Daemon is the home's socket client.
	Daemon Daemon
	// Version is this leo's version, compared with the restored binary's.
	Version string
	// BinaryVersion reads a leo binary's version; nil runs
	// `<path> version --json`.
	BinaryVersion func(ctx context.Context, path string) (string, error)
	// DrainTimeout bounds the wait for busy agents (default 60s).
	DrainTimeout time.Duration
	// LockTimeout bounds the wait for daemon.lock to be free (default 30s).
	LockTimeout time.Duration
	// ReadyTimeout bounds the wait for the restored daemon (default 60s).
	ReadyTimeout time.Duration
	// Poll is how often the lock and the daemon are looked at (200ms).
	Poll time.Duration
	// Log receives progress lines (stderr); nil discards them.
	Log io.Writer
}

// Request is the command line.
type Request struct {
	ToApp, ToCLI bool
	// Label is --label: the app's launchd label.
	Label  string
	DryRun bool
}

// Result is the success object of docs/managed-install.md.
type Result struct {
	OK            bool   `json:"ok"`
	PreviousLabel string `json:"previous_label"`
	// Env is set by --to-app only (an object, {} when the plist has none).
	Env         any    `json:"env,omitempty"`
	PlistBackup string `json:"plist_backup"`
	// ManagedStopped (--to-cli): whether the managed job was booted out.
	ManagedStopped *bool `json:"managed_stopped,omitempty"`
	// RestoredWithoutMarker: the --to-cli recovery path ran.
	RestoredWithoutMarker bool `json:"restored_without_marker,omitempty"`
	// Warning: the restored binary is older than this leo (the release
	// went on), or something after the release the app should know.
	Warning string `json:"warning,omitempty"`
	// DryRun and Plan: --dry-run changed nothing; Plan is what would run.
	DryRun bool       `json:"dry_run,omitempty"`
	Plan   []PlanStep `json:"plan,omitempty"`
}

// PlanStep is one step --dry-run would take.
type PlanStep struct {
	Step   string `json:"step"`
	Action string `json:"action"`
}

// Failure is {"ok": false, "step", "error", "message"} plus what applies.
type Failure struct {
	Step    string
	Code    api.Code
	Message string
	// RolledBack (recovery path, after a change): the plist is back at
	// <plist>.handed-over.
	RolledBack *bool
	// PID is the daemon holding daemon.lock, when that is the problem.
	PID int
}

func (f *Failure) Error() string { return f.Message }

// ErrorCode is the stable code.
func (f *Failure) ErrorCode() api.Code { return f.Code }

// JSONBody is the failure object.
func (f *Failure) JSONBody() any {
	return struct {
		OK         bool     `json:"ok"`
		Step       string   `json:"step"`
		Error      api.Code `json:"error"`
		Message    string   `json:"message"`
		RolledBack *bool    `json:"rolled_back,omitempty"`
		PID        int      `json:"pid,omitempty"`
	}{false, f.Step, f.Code, f.Message, f.RolledBack, f.PID}
}

func fail(step string, code api.Code, format string, args ...any) *Failure {
	return &Failure{Step: step, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Run performs (or with DryRun plans) the handover req asks for.
func Run(ctx context.Context, opts Options, req Request) (Result, error) {
	r := &run{opts: opts, req: req}
	r.defaults()
	if err := r.preflightCommon(); err != nil {
		return Result{}, err
	}
	if req.ToApp {
		return r.toApp(ctx)
	}
	return r.toCLI(ctx)
}

type run struct {
	opts Options
	req  Request
	plan []PlanStep
}

func (r *run) defaults() {
	o := &r.opts
	if o.GOOS == "" {
		o.GOOS = runtime.GOOS
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Runner == nil {
		o.Runner = service.ExecRunner{}
	}
	if o.Launchctl == "" {
		o.Launchctl = "launchctl"
	}
	if o.BinaryVersion == nil {
		o.BinaryVersion = execVersion
	}
	if o.DrainTimeout <= 0 {
		o.DrainTimeout = 60 * time.Second
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = 30 * time.Second
	}
	if o.ReadyTimeout <= 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 200 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

func (r *run) logf(format string, args ...any) { fmt.Fprintf(r.opts.Log, format+"\n", args...) }

func (r *run) plistPath() string {
	return filepath.Join(r.opts.UserHome, "Library", "LaunchAgents", service.CLILabel+".plist")
}
func (r *run) backupPath() string { return r.plistPath() + BackupSuffix }
func (r *run) domain() string     { return "gui/" + strconv.Itoa(r.opts.UID) }
func (r *run) target(label string) string {
	return r.domain() + "/" + label
}

// preflightCommon: the flags, the platform, and who is asking. A bad
// command line is invalid_args on every platform, before the platform is
// looked at (docs/managed-install.md: bad flags answer invalid_args).
func (r *run) preflightCommon() error {
	if r.req.ToApp == r.req.ToCLI {
		return fail(StepPreflight, api.CodeInvalidArgs, "give exactly one of --to-app and --to-cli")
	}
	if r.req.ToApp && r.req.Label == "" {
		return fail(StepPreflight, api.CodeInvalidArgs, "--to-app needs --label <the app's launchd label>")
	}
	if r.opts.GOOS != "darwin" {
		return fail(StepPreflight, api.CodeUnsupported, "leo service handover moves the daemon between launchd jobs; it is macOS-only (this is %s)", r.opts.GOOS)
	}
	for _, v := range []string{"LEO_AGENT", "LEO_TASK"} {
		if r.opts.Getenv(v) != "" {
			// An agent or a task run must not move the daemon it runs
			// under; only the app (or a person) hands over.
			return fail(StepPreflight, api.CodeNotPermitted, "leo service handover is not permitted from inside an agent or task run leo launched (%s is set)", v)
		}
	}
	if r.opts.UserHome == "" || !filepath.IsAbs(r.opts.UserHome) {
		return fail(StepPreflight, api.CodeConfigError, "the user's home directory %q is not absolute", r.opts.UserHome)
	}
	return nil
}

// checkLabel validates an app label: not the CLI's own, reverse-DNS.
func checkLabel(label string) error {
	if strings.EqualFold(label, service.CLILabel) {
		return fail(StepPreflight, api.CodeLabelConflict, "--label %s is the CLI install's own label; the app's job needs its own", label)
	}
	if err := managed.ValidLabel(label); err != nil {
		return fail(StepPreflight, api.CodeInvalidLabel, "--label: %v", err)
	}
	return nil
}

// loaded asks `launchctl print gui/<uid>/<label>`: exit 0 is loaded, 113
// ("could not find service") is not; anything else is an error.
func (r *run) loaded(ctx context.Context, label string) (bool, error) {
	ok, _, err := r.print(ctx, label)
	return ok, err
}

// print is loaded plus the job's pid (0 when it runs no process).
func (r *run) print(ctx context.Context, label string) (loaded bool, pid int, err error) {
	out, err := r.launchctl(ctx, "print", r.target(label))
	if err == nil {
		return true, service.PrintedPID(out), nil
	}
	var re *service.RunError
	if errors.As(err, &re) && re.ExitCode() == 113 {
		return false, 0, nil
	}
	return false, 0, err
}

func (r *run) launchctl(ctx context.Context, args ...string) ([]byte, error) {
	return r.opts.Runner.Run(ctx, r.opts.Launchctl, args...)
}

func (r *run) lockHeld() (bool, int, error) {
	return lockfile.Probe(r.opts.Home.LockPath())
}

func (r *run) step(step, action string) { r.plan = append(r.plan, PlanStep{step, action}) }

// ---- --to-app ----

func (r *run) toApp(ctx context.Context) (Result, error) {
	st := managed.Read(r.opts.Home, managed.Platform{GOOS: r.opts.GOOS, Getenv: r.opts.Getenv})
	switch st.Status {
	case managed.Valid:
		return Result{}, fail(StepPreflight, api.CodeAlreadyManaged, "%s exists: this home is already managed by %s (%s)", st.Path, st.Marker.Manager, st.Marker.LaunchdLabel)
	case managed.Invalid:
		return Result{}, fail(StepPreflight, api.CodeAlreadyManaged, "%s exists (invalid: %s); remove or fix it before handing over", st.Path, st.Problem)
	}
	if err := checkLabel(r.req.Label); err != nil {
		return Result{}, err
	}
	plist, backup := r.plistPath(), r.backupPath()
	if _, err := os.Stat(plist); err != nil {
		return Result{}, fail(StepPreflight, api.CodePlistMissing, "the CLI install's LaunchAgent %s is missing (%v); install it with `leo service install`", plist, errText(err))
	}
	if _, err := os.Stat(r.opts.Home.ConfigPath); !errors.Is(err, fs.ErrNotExist) {
		if err := r.checkConfig(); err != nil {
			return Result{}, err
		}
	}
	loaded, jobPID, err := r.print(ctx, service.CLILabel)
	if err != nil {
		return Result{}, fail(StepPreflight, api.CodeBootoutFailed, "cannot tell whether %s is loaded: %v", r.target(service.CLILabel), err)
	}
	held, pid, err := r.lockHeld()
	if err != nil {
		return Result{}, fail(StepPreflight, api.CodeLockTimeout, "cannot probe %s: %v", r.opts.Home.LockPath(), err)
	}
	// The daemon that holds the lock must be the job's own process: one
	// started by hand would outlive the bootout and keep the home.
	switch {
	case held && !loaded:
		f := fail(StepPreflight, api.CodeNoLaunchdJob, "a leo daemon (pid %d) holds %s but %s is not loaded: launchd did not start it; stop it first", pid, r.opts.Home.LockPath(), r.target(service.CLILabel))
		f.PID = pid
		return Result{}, f
	case held && pid > 0 && jobPID != pid:
		f := fail(StepPreflight, api.CodeNoLaunchdJob, "a leo daemon (pid %d) holds %s but %s runs pid %d: launchd did not start it; stop it first", pid, r.opts.Home.LockPath(), r.target(service.CLILabel), jobPID)
		f.PID = pid
		return Result{}, f
	}

	// env: what the CLI job carried, for the app's LaunchAgent.
	data, err := os.ReadFile(plist)
	if err != nil {
		return Result{}, fail(StepEnv, api.CodeEnvUnreadable, "read %s: %v", plist, errText(err))
	}
	p, err := service.DecodePlist(data)
	if err != nil {
		return Result{}, fail(StepEnv, api.CodeEnvUnreadable, "%s is not a readable plist: %v", plist, err)
	}
	env := p.EnvironmentVariables
	if env == nil {
		env = map[string]string{}
	}
	res := Result{OK: true, PreviousLabel: service.CLILabel, Env: env, PlistBackup: backup}

	if r.req.DryRun {
		r.step(StepEnv, "record EnvironmentVariables of "+plist)
		if loaded {
			r.step(StepDrain, "drain busy agents (up to "+r.opts.DrainTimeout.String()+")")
			r.step(StepBootout, "launchctl bootout "+r.target(service.CLILabel))
		}
		r.step(StepPlist, "move "+plist+" to "+backup)
		r.step(StepLock, "wait until "+r.opts.Home.LockPath()+" is free (up to "+r.opts.LockTimeout.String()+")")
		res.DryRun, res.Plan = true, r.plan
		return res, nil
	}

	var paused bool
	if loaded {
		if paused, err = r.drain(ctx); err != nil {
			return Result{}, err
		}
		r.logf("booting out %s…", r.target(service.CLILabel))
		if _, err := r.launchctl(ctx, "bootout", r.target(service.CLILabel)); err != nil {
			r.resume(ctx, paused)
			return Result{}, fail(StepBootout, api.CodeBootoutFailed, "launchctl bootout %s: %v", r.target(service.CLILabel), err)
		}
	} else {
		r.logf("%s is not loaded: no drain, no bootout", r.target(service.CLILabel))
	}
	if err := os.Rename(plist, backup); err != nil {
		return Result{}, fail(StepPlist, api.CodePlistMoveFailed, "move %s to %s: %v (the CLI job is booted out; `leo service start` brings it back)", plist, backup, errText(err))
	}
	if err := r.waitLockFree(ctx); err != nil {
		return Result{}, err
	}
	return res, nil
}

// drain pauses deliveries and waits for busy agents in the daemon that
// holds the lock. A daemon that is down is nothing to drain; one that
// holds the lock but does not answer is drain_failed, never "stopped".
func (r *run) drain(ctx context.Context) (paused bool, err error) {
	held, pid, perr := r.lockHeld()
	if _, herr := r.opts.Daemon.Health(ctx); herr != nil {
		if perr == nil && !held {
			r.logf("no daemon runs: nothing to drain")
			return false, nil
		}
		f := fail(StepDrain, api.CodeDrainFailed, "the daemon (pid %d) holds %s but does not answer on its socket: %v", pid, r.opts.Home.LockPath(), herr)
		f.PID = pid
		return false, f
	}
	r.logf("draining busy agents (up to %s)…", r.opts.DrainTimeout)
	_, err = r.opts.Daemon.Drain(ctx, api.DrainRequest{TimeoutSeconds: r.opts.DrainTimeout.Seconds()})
	switch {
	case err == nil:
		return true, nil
	case api.HasCode(err, api.CodeDrainTimeout):
		return false, fail(StepDrain, api.CodeDrainTimeout, "%v", errMessage(err))
	case api.HasCode(err, api.CodeDaemonDown):
		return false, nil // it went away meanwhile
	default:
		return false, fail(StepDrain, api.CodeDrainFailed, "drain: %v", errMessage(err))
	}
}

// resume lets a drained daemon that keeps running deliver again.
func (r *run) resume(ctx context.Context, paused bool) {
	if !paused {
		return
	}
	if err := r.opts.Daemon.ResumeDeliveries(ctx); err != nil {
		r.logf("could not resume deliveries: %v", err)
	}
}

// waitLockFree waits until no process holds daemon.lock.
func (r *run) waitLockFree(ctx context.Context) error {
	r.logf("waiting for %s to be free…", r.opts.Home.LockPath())
	var pid int
	err := r.poll(ctx, r.opts.LockTimeout, func() bool {
		held, p, err := r.lockHeld()
		pid = p
		return err == nil && !held
	})
	if err != nil {
		f := fail(StepLock, api.CodeLockTimeout, "%s is still held (pid %d) after %s", r.opts.Home.LockPath(), pid, r.opts.LockTimeout)
		f.PID = pid
		return f
	}
	return nil
}

// poll calls done every Poll until it is true or within passes.
func (r *run) poll(ctx context.Context, within time.Duration, done func() bool) error {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(r.opts.Poll)
	defer tick.Stop()
	for {
		if done() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			if done() {
				return nil
			}
			return errors.New("timed out")
		case <-tick.C:
		}
	}
}

// ---- --to-cli ----

func (r *run) toCLI(ctx context.Context) (Result, error) {
	st := managed.Read(r.opts.Home, managed.Platform{GOOS: r.opts.GOOS, Getenv: r.opts.Getenv})
	backup := r.backupPath()
	_, berr := os.Lstat(backup)
	switch st.Status {
	case managed.Invalid:
		// Never taken for absent: the recovery path needs no marker at all.
		return Result{}, fail(StepPreflight, api.CodeNotManaged, "%s is invalid (%s): not a managed install to release; fix or remove it first", st.Path, st.Problem)
	case managed.Absent:
		if berr != nil {
			return Result{}, fail(StepPreflight, api.CodeNotManaged, "this home is not managed: %s does not exist and there is no %s to restore", st.Path, backup)
		}
		return r.recover(ctx)
	}
	label := st.Marker.LaunchdLabel
	if r.req.Label != "" && r.req.Label != label {
		return Result{}, fail(StepPreflight, api.CodeInvalidArgs, "--label %s differs from the marker's launchd_label %s", r.req.Label, label)
	}
	if berr != nil {
		return Result{}, fail(StepPreflight, api.CodeBackupMissing, "%s is missing (%v): nothing to restore", backup, errText(berr))
	}
	program, err := r.checkBackup(backup)
	if err != nil {
		return Result{}, err
	}
	if err := r.checkConfig(); err != nil {
		return Result{}, err
	}
	warning := r.versionWarning(ctx, program)
	loaded, err := r.loaded(ctx, label)
	if err != nil {
		return Result{}, fail(StepPreflight, api.CodeBootoutFailed, "cannot tell whether %s is loaded: %v", r.target(label), err)
	}
	plist, marker := r.plistPath(), st.Path
	releasing := marker + ReleasingSuffix
	res := Result{OK: true, PreviousLabel: label, PlistBackup: backup, ManagedStopped: boolPtr(loaded), Warning: warning}

	if r.req.DryRun {
		if loaded {
			r.step(StepDrain, "drain busy agents through the managed daemon (up to "+r.opts.DrainTimeout.String()+")")
			r.step(StepBootout, "launchctl bootout "+r.target(label))
		}
		r.step(StepLock, "wait until "+r.opts.Home.LockPath()+" is free (up to "+r.opts.LockTimeout.String()+")")
		r.step(StepMarker, "move "+marker+" to "+releasing)
		r.step(StepPlist, "move "+backup+" to "+plist)
		r.step(StepBootstrap, "launchctl bootstrap "+r.domain()+" "+plist)
		r.step(StepReady, "wait until the CLI daemon is ready (up to "+r.opts.ReadyTimeout.String()+")")
		r.step(StepMarker, "delete "+releasing)
		res.DryRun, res.Plan = true, r.plan
		return res, nil
	}

	var old api.Health
	if loaded {
		old, _ = r.opts.Daemon.Health(ctx)
		paused, err := r.drain(ctx)
		if err != nil {
			return Result{}, err
		}
		r.logf("booting out %s…", r.target(label))
		if _, err := r.launchctl(ctx, "bootout", r.target(label)); err != nil {
			r.resume(ctx, paused)
			return Result{}, fail(StepBootout, api.CodeBootoutFailed, "launchctl bootout %s: %v", r.target(label), err)
		}
	} else {
		r.logf("%s is not loaded: no drain, no bootout", r.target(label))
	}
	if err := r.waitLockFree(ctx); err != nil {
		return Result{}, err
	}
	// The marker goes aside before the CLI daemon starts: with it live, the
	// new daemon would record the app's self_path everywhere.
	if err := os.Rename(marker, releasing); err != nil {
		return Result{}, fail(StepMarker, api.CodeMarkerMoveFailed, "move %s to %s: %v", marker, releasing, errText(err))
	}
	if err := os.Rename(backup, plist); err != nil {
		return Result{}, fail(StepPlist, api.CodePlistRestoreFailed, "move %s to %s: %v (the marker is at %s)", backup, plist, errText(err), releasing)
	}
	r.logf("bootstrapping %s…", plist)
	if _, err := r.launchctl(ctx, "bootstrap", r.domain(), plist); err != nil {
		return Result{}, fail(StepBootstrap, api.CodeBootstrapFailed, "launchctl bootstrap %s %s: %v (the marker is at %s)", r.domain(), plist, err, releasing)
	}
	if err := r.waitReady(ctx, old); err != nil {
		return Result{}, err
	}
	if err := os.Remove(releasing); err != nil && !errors.Is(err, fs.ErrNotExist) {
		res.Warning = joinWarning(res.Warning, fmt.Sprintf("the CLI daemon runs, but %s could not be deleted: %v", releasing, errText(err)))
	}
	return res, nil
}

// recover is --to-cli with no marker and a .handed-over backup: --to-app
// went through but the app never wrote managed.json.
func (r *run) recover(ctx context.Context) (Result, error) {
	label := r.req.Label
	if label == "" {
		return Result{}, fail(StepPreflight, api.CodeInvalidArgs, "there is no marker: --to-cli needs --label <the app's launchd label> to restore %s", r.plistPath())
	}
	if err := checkLabel(label); err != nil {
		return Result{}, err
	}
	loaded, err := r.loaded(ctx, label)
	if err != nil {
		return Result{}, fail(StepPreflight, api.CodeManagedJobLoaded, "cannot tell whether the app's job %s is registered: %v", r.target(label), err)
	}
	if loaded {
		return Result{}, fail(StepPreflight, api.CodeManagedJobLoaded, "the app's job %s is still registered; it must unregister it first", r.target(label))
	}
	held, pid, err := r.lockHeld()
	if err != nil || held {
		f := fail(StepPreflight, api.CodeDaemonRunning, "a leo daemon (pid %d) holds %s; it must stop first", pid, r.opts.Home.LockPath())
		if err != nil {
			f.Message = fmt.Sprintf("cannot probe %s: %v", r.opts.Home.LockPath(), err)
		}
		f.PID = pid
		return Result{}, f
	}
	plist, backup := r.plistPath(), r.backupPath()
	program, err := r.checkBackup(backup)
	if err != nil {
		return Result{}, err
	}
	if err := r.checkConfig(); err != nil {
		return Result{}, err
	}
	res := Result{OK: true, PreviousLabel: label, PlistBackup: backup, ManagedStopped: boolPtr(false), RestoredWithoutMarker: true, Warning: r.versionWarning(ctx, program)}
	if r.req.DryRun {
		r.step(StepPlist, "move "+backup+" to "+plist)
		r.step(StepBootstrap, "launchctl bootstrap "+r.domain()+" "+plist)
		r.step(StepReady, "wait until the CLI daemon is ready (up to "+r.opts.ReadyTimeout.String()+")")
		res.DryRun, res.Plan = true, r.plan
		return res, nil
	}
	if err := os.Rename(backup, plist); err != nil {
		f := fail(StepPlist, api.CodePlistRestoreFailed, "move %s to %s: %v", backup, plist, errText(err))
		f.RolledBack = boolPtr(true) // nothing moved
		return Result{}, f
	}
	r.logf("bootstrapping %s…", plist)
	if _, err := r.launchctl(ctx, "bootstrap", r.domain(), plist); err != nil {
		return Result{}, r.rollback(ctx, fail(StepBootstrap, api.CodeBootstrapFailed, "launchctl bootstrap %s %s: %v", r.domain(), plist, err))
	}
	if err := r.waitReady(ctx, api.Health{}); err != nil {
		return Result{}, r.rollback(ctx, err.(*Failure))
	}
	return res, nil
}

// rollback undoes a failed recovery: a best-effort bootout of the CLI job
// (launchd may have registered it in part), then the plist back to
// <plist>.handed-over.
func (r *run) rollback(ctx context.Context, f *Failure) *Failure {
	if _, err := r.launchctl(ctx, "bootout", r.target(service.CLILabel)); err != nil {
		r.logf("rollback: launchctl bootout %s: %v", r.target(service.CLILabel), err)
	}
	if err := os.Rename(r.plistPath(), r.backupPath()); err != nil {
		f.RolledBack = boolPtr(false)
		f.Message += fmt.Sprintf("; rollback failed: move %s to %s: %v", r.plistPath(), r.backupPath(), errText(err))
		return f
	}
	f.RolledBack = boolPtr(true)
	f.Message += "; rolled back: " + r.plistPath() + " is at " + r.backupPath() + " again"
	return f
}

// waitReady waits until a daemon other than old reports ready.
func (r *run) waitReady(ctx context.Context, old api.Health) error {
	r.logf("waiting for the CLI daemon to be ready…")
	var last error
	err := r.poll(ctx, r.opts.ReadyTimeout, func() bool {
		hl, err := r.opts.Daemon.Health(ctx)
		switch {
		case err != nil:
			last = err
		case old.PID != 0 && hl.PID == old.PID && hl.Started.Equal(old.Started):
			last = fmt.Errorf("the managed daemon (pid %d) still answers", old.PID)
		case !hl.Ready:
			last = fmt.Errorf("the daemon (pid %d) is still restoring agents", hl.PID)
		default:
			return true
		}
		return false
	})
	if err != nil {
		msg := "the CLI daemon did not report ready within " + r.opts.ReadyTimeout.String()
		if last != nil {
			msg += ": " + errMessage(last)
		}
		return fail(StepReady, api.CodeNotReady, "%s", msg)
	}
	return nil
}

// checkConfig: the config the next daemon will load.
func (r *run) checkConfig() error {
	if r.opts.LoadConfig == nil {
		return nil
	}
	if err := r.opts.LoadConfig(); err != nil {
		return fail(StepPreflight, api.CodeConfigError, "%s", errMessage(err))
	}
	return nil
}

// checkBackup reads the backup plist: the CLI's label, and a
// ProgramArguments[0] that exists and is executable.
func (r *run) checkBackup(backup string) (string, error) {
	data, err := os.ReadFile(backup)
	if err != nil {
		return "", fail(StepPreflight, api.CodeBackupUnusable, "read %s: %v", backup, errText(err))
	}
	p, err := service.DecodePlist(data)
	if err != nil {
		return "", fail(StepPreflight, api.CodeBackupUnusable, "%s is not a readable plist: %v", backup, err)
	}
	if p.Label != service.CLILabel {
		return "", fail(StepPreflight, api.CodeBackupUnusable, "%s has Label %q, want %s", backup, p.Label, service.CLILabel)
	}
	if len(p.ProgramArguments) == 0 || !filepath.IsAbs(p.ProgramArguments[0]) {
		return "", fail(StepPreflight, api.CodeBackupUnusable, "%s: ProgramArguments[0] is missing or not absolute", backup)
	}
	prog := p.ProgramArguments[0]
	fi, err := os.Stat(prog)
	if err != nil {
		return "", fail(StepPreflight, api.CodeBackupUnusable, "%s: the leo binary %s: %v", backup, prog, errText(err))
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fail(StepPreflight, api.CodeBackupUnusable, "%s: the leo binary %s is not an executable file (mode %s)", backup, prog, fi.Mode())
	}
	return prog, nil
}

// versionWarning is the warning of a restored binary older than this leo;
// "" when it is not older or either version is not a release.
func (r *run) versionWarning(ctx context.Context, program string) string {
	theirs, err := r.opts.BinaryVersion(ctx, program)
	if err != nil {
		return fmt.Sprintf("could not tell the version of the restored leo %s: %v", program, err)
	}
	if older(theirs, r.opts.Version) {
		return fmt.Sprintf("the restored leo %s is version %s, older than this leo (%s)", program, theirs, r.opts.Version)
	}
	return ""
}

func joinWarning(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func boolPtr(b bool) *bool { return &b }

// errText is an error's text without Go's "op path:" prefix for the
// path errors whose path the message names already.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}

// errMessage is an API error's message without its code.
func errMessage(err error) string {
	var ae *api.Error
	if errors.As(err, &ae) && ae.Message != "" {
		return ae.Message
	}
	return err.Error()
}

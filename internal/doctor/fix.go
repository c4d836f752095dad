package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"howett.net/plist"

	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/managed"
)

// Fix performs the repairs docs/cli.md lists under leo doctor --fix, in an
// order where one repair never undoes another: an interrupted release
// first (it may restore the CLI job), then the handed-over backup with no
// marker, then two jobs registered, then a stale socket. Each step it
// takes, or refuses, is one Repair. An invalid marker is reported and
// never deleted.
func Fix(ctx context.Context, e *Env) []Repair {
	out := []Repair{}
	if e.Marker.Status == managed.Invalid {
		out = append(out, Repair{Name: NameMarker, OK: true,
			Message: "left the invalid marker " + e.Marker.Path + " in place (leo never deletes it): " + checkMarker(e).Fix})
	}
	if e.goos() == "darwin" {
		out = append(out, fixReleasing(ctx, e)...)
		out = append(out, fixBackup(ctx, e)...)
		out = append(out, fixTwoJobs(ctx, e)...)
	}
	out = append(out, fixSocket(e)...)
	out = append(out, fixWorktrees(ctx, e)...)
	for i := range out {
		out[i].Message = oneLine(out[i].Message)
	}
	return out
}

// daemonHolder reports a daemon holding the home's lock.
func (e *Env) daemonHolder() (bool, int) {
	held, pid, _ := lockfile.Probe(e.Home.LockPath())
	return held, pid
}

// usableProgram checks what the plist at path would run:
// ProgramArguments[0] exists and is executable.
func usableProgram(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var p struct {
		ProgramArguments []string `plist:"ProgramArguments"`
	}
	if _, err := plist.Unmarshal(data, &p); err != nil {
		return fmt.Errorf("%s is not a plist: %v", path, err)
	}
	if len(p.ProgramArguments) == 0 {
		return fmt.Errorf("%s has no ProgramArguments", path)
	}
	if !isExecutable(p.ProgramArguments[0]) {
		return fmt.Errorf("%s runs %s, which is not an executable file", path, p.ProgramArguments[0])
	}
	return nil
}

// fixReleasing finishes a --to-cli release cut short after the marker
// moved aside (the marker's job is booted out by then): restore the CLI
// plist, bootstrap it, wait until its daemon is ready, drop
// managed.json.releasing — the order --to-cli itself follows. When the CLI
// job cannot be restored it rolls back instead: the marker moves back, and
// the app registers its job again. A daemon that does not get ready leaves
// the .releasing file, so the next --fix waits for it again.
func fixReleasing(ctx context.Context, e *Env) []Repair {
	rel := e.releasingPath()
	if !exists(rel) {
		return nil
	}
	r := func(ok bool, format string, args ...any) Repair {
		return Repair{Name: NameReleasing, OK: ok, Message: fmt.Sprintf(format, args...)}
	}
	if e.Marker.Status != managed.Absent {
		return []Repair{r(false, "left %s alone: a marker exists again (%s), so the release is not leo's to finish; remove it by hand: rm %s", rel, e.Marker.Status, quote(rel))}
	}
	loaded, err := e.loaded(ctx, CLILabel)
	if err != nil {
		return []Repair{r(false, "did not finish the interrupted release: %v", err)}
	}
	plistPath, backup := e.cliPlist(), e.backupPath()
	// A daemon of the CLI job may be the release's own, started before it
	// was cut short; any other must stop first.
	if held, pid := e.daemonHolder(); held && !(loaded && exists(plistPath)) {
		return []Repair{r(false, "did not finish the interrupted release: a daemon (pid %d) holds %s and the CLI job does not run it; stop it, then run leo doctor --fix again", pid, e.Home.LockPath())}
	}
	var out []Repair
	if !loaded {
		src := plistPath
		if !exists(plistPath) {
			src = backup
		}
		if err := usableProgram(src); err != nil {
			return []Repair{rollBackRelease(e, fmt.Sprintf("the CLI job cannot be restored: %v", err))}
		}
		moved := false
		if src == backup {
			if err := os.Rename(backup, plistPath); err != nil {
				return []Repair{rollBackRelease(e, fmt.Sprintf("cannot restore %s: %v", plistPath, err))}
			}
			moved = true
			out = append(out, r(true, "restored %s from %s", plistPath, backup))
		}
		if _, err := e.launchctl(ctx, "bootstrap", e.domain(), plistPath); err != nil {
			// Undo this step's part (launchd may have registered the job
			// in part), then the release itself.
			_, _ = e.launchctl(ctx, "bootout", e.target(CLILabel))
			if moved {
				_ = os.Rename(plistPath, backup)
			}
			return append(out, rollBackRelease(e, fmt.Sprintf("launchd did not take the CLI job: %v", err)))
		}
		out = append(out, r(true, "bootstrapped %s (launchctl bootstrap %s %s)", CLILabel, e.domain(), plistPath))
	}
	if err := e.waitReady(ctx); err != nil {
		return append(out, r(false, "the CLI job %s is registered, but its daemon is not ready (%v); left %s for the next leo doctor --fix; see leo service logs", CLILabel, err, rel))
	}
	if err := os.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return append(out, r(false, "the CLI daemon is ready, but %s could not be removed: %v; rm %s", rel, err, quote(rel)))
	}
	return append(out, r(true, "finished the interrupted `leo service handover --to-cli`: the CLI job's daemon is ready; removed %s", rel))
}

// readyTimeout bounds the wait for a restored daemon.
const readyTimeout = 30 * time.Second

// waitReady waits until a daemon answers ready on the home's socket.
func (e *Env) waitReady(ctx context.Context) error {
	if e.WaitReady != nil {
		return e.WaitReady(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	c := client.New(e.Home)
	defer c.Close()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		if hl, err := c.Health(ctx); err != nil {
			last = err
		} else if hl.Ready {
			return nil
		} else {
			last = fmt.Errorf("pid %d is still restoring agents", hl.PID)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready within %s: %v", readyTimeout, last)
		case <-tick.C:
		}
	}
}

// rollBackRelease moves managed.json.releasing back to managed.json: the
// install is the app's again.
func rollBackRelease(e *Env, why string) Repair {
	rel, marker := e.releasingPath(), e.Home.MarkerPath()
	if exists(marker) {
		return Repair{Name: NameReleasing, OK: false, Message: fmt.Sprintf("could not finish the release (%s) nor roll it back: %s exists", why, marker)}
	}
	if err := os.Rename(rel, marker); err != nil {
		return Repair{Name: NameReleasing, OK: false, Message: fmt.Sprintf("could not finish the release (%s) nor roll it back: %v", why, err)}
	}
	return Repair{Name: NameReleasing, OK: true, Message: fmt.Sprintf("rolled back the interrupted release (%s): moved %s back to %s; open -a Leo to register the app's job again", why, rel, marker)}
}

// fixBackup restores the CLI job from <plist>.handed-over when there is no
// marker (absent, never merely invalid) and no app job: the --to-cli
// recovery path. leo knows the app's label only from --label.
func fixBackup(ctx context.Context, e *Env) []Repair {
	backup, plistPath := e.backupPath(), e.cliPlist()
	if e.Marker.Status != managed.Absent || !exists(backup) || exists(plistPath) || exists(e.releasingPath()) {
		return nil
	}
	r := func(ok bool, format string, args ...any) []Repair {
		return []Repair{{Name: NameBackup, OK: ok, Message: fmt.Sprintf(format, args...)}}
	}
	if e.Label == "" {
		return r(false, "did not restore the CLI job from %s: leo cannot tell whether the app's job is still registered without its label; run leo doctor --fix --label <the app's launchd label>", backup)
	}
	if err := managed.ValidLabel(e.Label); err != nil {
		return r(false, "did not restore the CLI job: --label: %v", err)
	}
	if e.RestoreCLIJob != nil {
		msg, err := e.RestoreCLIJob(ctx, e.Label)
		if err != nil {
			return r(false, "did not restore the CLI job: %v", err)
		}
		return r(true, "%s", msg)
	}
	if app, err := e.loaded(ctx, e.Label); err != nil || app {
		if err != nil {
			return r(false, "did not restore the CLI job: %v", err)
		}
		return r(false, "did not restore the CLI job: the app's job %s is still registered; the app must unregister it first (launchctl bootout %s)", e.Label, e.target(e.Label))
	}
	if held, pid := e.daemonHolder(); held {
		return r(false, "did not restore the CLI job: a daemon (pid %d) holds %s", pid, e.Home.LockPath())
	}
	if err := usableProgram(backup); err != nil {
		return r(false, "did not restore the CLI job: %v", err)
	}
	if err := os.Rename(backup, plistPath); err != nil {
		return r(false, "did not restore the CLI job: %v", err)
	}
	if _, err := e.launchctl(ctx, "bootstrap", e.domain(), plistPath); err != nil {
		_, _ = e.launchctl(ctx, "bootout", e.target(CLILabel))
		if rerr := os.Rename(plistPath, backup); rerr != nil {
			return r(false, "did not restore the CLI job: launchctl bootstrap failed (%v), and %s could not move back to %s: %v", err, plistPath, backup, rerr)
		}
		return r(false, "did not restore the CLI job: launchctl bootstrap failed (%v); rolled back: %s is at %s again", err, plistPath, backup)
	}
	return r(true, "restored the CLI job %s from %s (launchctl bootstrap %s %s)", CLILabel, backup, e.domain(), plistPath)
}

// fixTwoJobs boots out the CLI job when it is registered beside the
// marker's (the marker's job wins), and moves its plist aside as --to-app
// does, so the next login does not register it again.
func fixTwoJobs(ctx context.Context, e *Env) []Repair {
	if !e.Marker.Managed() {
		return nil
	}
	label := e.Marker.Marker.LaunchdLabel
	cli, err1 := e.loaded(ctx, CLILabel)
	app, err2 := e.loaded(ctx, label)
	if err1 != nil || err2 != nil || !cli || !app {
		return nil
	}
	r := func(ok bool, format string, args ...any) Repair {
		return Repair{Name: NameJobs, OK: ok, Message: fmt.Sprintf(format, args...)}
	}
	if _, err := e.launchctl(ctx, "bootout", e.target(CLILabel)); err != nil {
		return []Repair{r(false, "could not boot out the CLI job %s: %v", CLILabel, err)}
	}
	out := []Repair{r(true, "booted out the CLI job %s, which ran beside the marker's %s (launchctl bootout %s)", CLILabel, label, e.target(CLILabel))}
	plistPath, backup := e.cliPlist(), e.backupPath()
	switch {
	case !exists(plistPath):
	case exists(backup):
		out = append(out, r(false, "left %s in place: %s exists already; it registers the CLI job again at login unless removed: rm %s", plistPath, backup, quote(plistPath)))
	default:
		if err := os.Rename(plistPath, backup); err != nil {
			out = append(out, r(false, "could not move %s aside: %v", plistPath, err))
		} else {
			out = append(out, r(true, "moved %s to %s so login does not register it again (leo service handover --to-cli restores it)", plistPath, backup))
		}
	}
	return out
}

// fixSocket removes a socket no daemon serves: no process holds
// daemon.lock. Only a socket file is removed.
func fixSocket(e *Env) []Repair {
	sock := e.Home.SocketPath()
	fi, err := os.Lstat(sock)
	if err != nil {
		return nil
	}
	if held, _ := e.daemonHolder(); held {
		return nil
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return []Repair{{Name: NameSocket, OK: false, Message: fmt.Sprintf("left %s alone: it is not a socket (%s)", sock, fi.Mode().Type())}}
	}
	if err := os.Remove(sock); err != nil {
		return []Repair{{Name: NameSocket, OK: false, Message: fmt.Sprintf("could not remove the stale socket %s: %v", sock, err)}}
	}
	return []Repair{{Name: NameSocket, OK: true, Message: fmt.Sprintf("removed the stale socket %s (no daemon holds %s)", sock, e.Home.LockPath())}}
}

package doctor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/managed"
)

// Check names: stable, documented in docs/cli.md.
const (
	NameHome      = "home"
	NameMarker    = "marker"
	NameTmux      = "tmux"
	NameSocket    = "socket"
	NameNotify    = "notifiers"
	NameJobs      = "launchd jobs"
	NameReleasing = "release"
	NameBackup    = "handover backup"
	NameLinger    = "lingering"
	NameAgents    = "agents.json"
	NamePending   = "task-pending.json"
	NameRunning   = "task-running.json"
	NameHistory   = "task history"
	NameAside     = "kept aside"
)

func checkHome(e *Env) Check {
	c := Check{Name: NameHome}
	if fi, err := os.Stat(e.Home.Root); err == nil && !fi.IsDir() {
		c.Status, c.Message = Fail, fmt.Sprintf("the leo home %s is not a directory", e.Home.Root)
		c.Fix = "move it away, or name another home with LEO_HOME or --config"
		return c
	}
	fi, err := os.Stat(e.Home.StateDir())
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Status, c.Message = OK, fmt.Sprintf("%s (no state yet: the daemon has not run)", e.Home.Root)
	case err != nil:
		c.Status, c.Message = Fail, fmt.Sprintf("cannot read %s: %v", e.Home.StateDir(), err)
		c.Fix = "chmod u+rwx " + quote(e.Home.StateDir())
	case !fi.IsDir():
		c.Status, c.Message = Fail, fmt.Sprintf("%s is not a directory", e.Home.StateDir())
		c.Fix = "move it away: mv " + quote(e.Home.StateDir()) + " " + quote(e.Home.StateDir()+".old")
	default:
		if _, err := os.ReadDir(e.Home.StateDir()); err != nil {
			c.Status, c.Message = Fail, fmt.Sprintf("cannot read %s: %v", e.Home.StateDir(), err)
			c.Fix = "chmod u+rwx " + quote(e.Home.StateDir())
			return c
		}
		c.Status, c.Message = OK, e.Home.Root
	}
	return c
}

// checkMarker repeats the invalid marker's warning. The marker is never
// deleted by leo: it belongs to the app.
func checkMarker(e *Env) Check {
	st := e.Marker
	c := Check{Name: NameMarker}
	switch st.Status {
	case managed.Absent:
		c.Status, c.Message = OK, "not a managed install (no "+st.Path+")"
	case managed.Valid:
		m := st.Marker
		c.Status, c.Message = OK, fmt.Sprintf("managed by %s (launchd job %s, leo %s, tmux %s)", orDash(m.Manager), m.LaunchdLabel, m.SelfPath, m.TmuxPath)
	default:
		c.Status, c.Message = Warn, st.Warning()
		switch {
		case e.goos() != "darwin":
			c.Fix = "rm " + quote(st.Path) + " (managed installs are macOS-only)"
		case strings.Contains(st.Problem, "group- or world-writable"):
			c.Fix = "chmod go-w " + quote(st.Path)
		default:
			c.Fix = "open -a Leo (the app rewrites it); if no app manages leo: rm " + quote(st.Path)
		}
	}
	return c
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// uses reports whether the config uses harness name; with no readable
// config, only the default harness (claude) counts as used.
func (e *Env) uses(name string) bool {
	if e.Harnesses == nil {
		return name == harness.Default
	}
	return e.Harnesses[name]
}

// checkHarnessCLI finds a harness's CLI the way the daemon does (the
// marker's PATH first) and asks its version. The check is named after the
// harness; a missing CLI fails when the config uses it, warns for the
// default harness (a new config runs it), and is only reported otherwise.
func checkHarnessCLI(ctx context.Context, e *Env, h harness.Harness) Check {
	name, bin, info := h.Name(), h.Binary(), harness.InstallOf(h)
	c := Check{Name: name}
	path, err := e.Resolver.Lookup(bin)
	if err != nil {
		c.Message = info.Title + ": not found"
		switch {
		case e.uses(name):
			c.Status, c.Fix = Fail, info.Command
		case name == harness.Default:
			c.Status, c.Fix = Warn, info.Command
		default:
			c.Status, c.Message = OK, c.Message+" (no template or task uses it)"
		}
		return c
	}
	v, err := e.version(ctx, path, "--version")
	if err != nil {
		c.Status, c.Message = Warn, fmt.Sprintf("%s: %s (`%s --version` failed: %v)", info.Title, path, bin, err)
		c.Fix = "reinstall it: " + info.Command
		return c
	}
	if !versionNumber.MatchString(v) {
		// A wrapper, a shim that prints usage, another program of the name.
		c.Status, c.Message = Warn, fmt.Sprintf("%s: %s (`%s --version` printed %q, not a version)", info.Title, path, bin, v)
		c.Fix = "check that " + path + " is the CLI; reinstall it: " + info.Command
		return c
	}
	c.Status, c.Message = OK, fmt.Sprintf("%s: %s (%s)", info.Title, path, v)
	return c
}

// versionNumber is what every harness CLI's --version line holds: a
// dotted number (2.1.197 (Claude Code), codex-cli 0.171.0, 1.18.33).
var versionNumber = regexp.MustCompile(`(^|[^0-9.])[0-9]+\.[0-9]+`)

// version runs `bin arg` with a short timeout: a CLI that hangs must not
// hang doctor. The answer is its first non-empty line: of stdout, or, when
// stdout is empty and the runner tells (OutputRunner), of stderr (pi
// 0.73.1 prints its version there).
func (e *Env) version(ctx context.Context, bin, arg string) (string, error) {
	d := e.VersionTimeout
	if d <= 0 {
		d = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var out, stderr []byte
	var err error
	if or, ok := e.runner().(OutputRunner); ok {
		out, stderr, err = or.RunOutput(ctx, bin, arg)
		if msg := strings.TrimSpace(clip(string(stderr), 300)); err != nil && msg != "" {
			err = &runError{err: err, stderr: msg}
		}
		if err == nil && len(bytes.TrimSpace(out)) == 0 {
			out = stderr
		}
	} else {
		out, err = e.runner().Run(ctx, bin, arg)
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("no answer within %s", d)
	}
	if err != nil {
		return "", errors.New(clip(err.Error(), 200))
	}
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return clip(l, 120), nil
		}
	}
	return "", errors.New("it printed nothing")
}

// checkTmux is tmux's binary and version: PATH's when unmanaged; under the
// version guard when managed (a pending upgrade, or no copy matching the
// running server).
func checkTmux(ctx context.Context, e *Env) Check {
	c := Check{Name: NameTmux}
	if e.Tmux == nil {
		c.Status, c.Message = Warn, "tmux: this build cannot tell"
		return c
	}
	ch, err := e.Tmux(ctx)
	if err != nil {
		c.Status, c.Message = Fail, "tmux: not found"
		c.Fix = "brew install tmux (macOS) or sudo apt-get install tmux (Debian, Ubuntu)"
		return c
	}
	v, verr := e.version(ctx, ch.Binary, "-V")
	if verr != nil {
		v = "`tmux -V` failed: " + verr.Error()
	}
	switch {
	case ch.Problem != "":
		m := e.Marker.Marker
		c.Status, c.Message = Fail, "tmux: "+ch.Problem
		c.Fix = fmt.Sprintf("reinstall Leo.app so %s holds the copy the running server (tmux %s) needs; leo never kill-servers, and the next server uses %s",
			m.TmuxRoot(), orDash(ch.ServerVersion), m.TmuxPath)
	case ch.Pending:
		m := e.Marker.Marker
		c.Status = Warn
		c.Message = fmt.Sprintf("tmux upgrade pending: the running server is tmux %s, so leo uses %s; tmux_path %s (tmux %s) starts the next server",
			ch.ServerVersion, ch.Binary, m.TmuxPath, m.TmuxVersion())
		c.Fix = "none needed: it applies when the tmux server next starts (after a reboot, or once every agent has stopped)"
	default:
		c.Status, c.Message = OK, fmt.Sprintf("%s (%s)", ch.Binary, v)
	}
	return c
}

var syscallENOTDIR = syscall.ENOTDIR

// StartDaemon is how a stopped daemon is started: its service job, else
// the job installed (which starts it), else in the foreground.
const StartDaemon = "leo service start (no job yet: leo service install; in the foreground: leo service)"

// checkSocket tells a stale socket (no daemon holds daemon.lock) from a
// running daemon's.
func checkSocket(e *Env) Check {
	c := Check{Name: NameSocket}
	sock := e.Home.SocketPath()
	fi, serr := os.Lstat(sock)
	held, pid, err := lockfile.Probe(e.Home.LockPath())
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscallENOTDIR):
		c.Status, c.Message = Warn, fmt.Sprintf("cannot probe %s: %v", e.Home.LockPath(), err)
	case serr == nil && !held && fi.Mode().Type() != fs.ModeSocket:
		c.Status, c.Message = Fail, fmt.Sprintf("%s is not a socket (%s), and no daemon holds %s: a daemon cannot listen there", sock, fi.Mode().Type(), e.Home.LockPath())
		c.Fix = "look at it, then: rm " + quote(sock)
	case serr == nil && !held:
		c.Status, c.Message = Fail, fmt.Sprintf("stale socket %s: no daemon holds %s", sock, e.Home.LockPath())
		c.Fix = "leo doctor --fix (removes it)"
	case serr == nil:
		c.Status, c.Message = OK, fmt.Sprintf("daemon running (pid %d)", pid)
	case held:
		c.Status, c.Message = Warn, fmt.Sprintf("a daemon (pid %d) holds %s but %s does not exist, so no command reaches it", pid, e.Home.LockPath(), sock)
		c.Fix = "leo service restart"
	default:
		// Nothing works without it: agents, tasks and the web need it.
		c.Status, c.Message = Fail, "daemon not running (no socket, no lock holder)"
		c.Fix = StartDaemon
	}
	return c
}

// checkJobs (macOS): which launchd jobs run this home's daemon. With both
// the CLI job and the marker's registered, the loser respawns about every
// 10 s under KeepAlive.
func checkJobs(ctx context.Context, e *Env) Check {
	c := Check{Name: NameJobs}
	cli, err := e.loaded(ctx, CLILabel)
	if err != nil {
		c.Status, c.Message = Warn, "cannot ask launchd: "+err.Error()
		return c
	}
	if !e.Marker.Managed() {
		if cli {
			c.Status, c.Message = OK, CLILabel+" registered"
			return c
		}
		c.Status, c.Message = Warn, CLILabel+" is not registered: the daemon does not start at login"
		c.Fix = "leo service install"
		if exists(e.backupPath()) {
			c.Fix = "see " + NameBackup
		}
		return c
	}
	label := e.Marker.Marker.LaunchdLabel
	app, err := e.loaded(ctx, label)
	if err != nil {
		c.Status, c.Message = Warn, "cannot ask launchd: "+err.Error()
		return c
	}
	switch {
	case cli && app:
		c.Status = Fail
		c.Message = fmt.Sprintf("two jobs registered: %s (the CLI job) and %s (the marker's); the one that loses daemon.lock respawns about every 10 s", CLILabel, label)
		c.Fix = "leo doctor --fix (launchctl bootout " + e.target(CLILabel) + ")"
	case app:
		c.Status, c.Message = OK, label+" registered (managed)"
	case cli:
		c.Status = Warn
		c.Message = fmt.Sprintf("the CLI job %s is registered but not the marker's %s", CLILabel, label)
		c.Fix = "open -a Leo (it registers " + label + "), then leo doctor --fix"
	default:
		c.Status, c.Message = Warn, "the marker's job "+label+" is not registered"
		c.Fix = "open -a Leo (it registers " + label + ")"
	}
	return c
}

// checkReleasing: managed.json.releasing is left by a --to-cli handover
// cut short between moving the marker aside and the CLI daemon's start.
func checkReleasing(e *Env) (Check, bool) {
	p := e.releasingPath()
	if !exists(p) {
		return Check{}, false
	}
	c := Check{Name: NameReleasing}
	if e.Marker.Status != managed.Absent {
		c.Status = Warn
		c.Message = fmt.Sprintf("%s is left from an interrupted `leo service handover --to-cli`, but a marker exists again (%s)", p, e.Marker.Status)
		c.Fix = "rm " + quote(p) + " (the marker in force is " + e.Marker.Path + ")"
		return c, true
	}
	c.Status = Fail
	c.Message = fmt.Sprintf("%s is left from an interrupted `leo service handover --to-cli`", p)
	c.Fix = "leo doctor --fix (finishes the release, or rolls it back)"
	if e.goos() != "darwin" {
		c.Fix = "mv " + quote(p) + " " + quote(e.Home.MarkerPath()) + " (handover is macOS-only)"
	}
	return c, true
}

// checkBackup (macOS): <plist>.handed-over is the CLI job's plist moved
// aside by --to-app. With a valid marker that is the handed-over state;
// with no marker the app never took over and nothing runs the daemon.
func checkBackup(e *Env) (Check, bool) {
	b := e.backupPath()
	if !exists(b) {
		return Check{}, false
	}
	c := Check{Name: NameBackup}
	switch {
	case e.Marker.Managed():
		c.Status, c.Message = OK, fmt.Sprintf("the CLI job is handed over to %s (its plist is kept as %s)", orDash(e.Marker.Marker.Manager), b)
	case e.Marker.Status == managed.Invalid:
		c.Status = Warn
		c.Message = fmt.Sprintf("%s is kept for a handover, but the marker is invalid, so leo cannot tell the app's job", b)
		c.Fix = "repair the marker (see " + NameMarker + ")"
	case exists(e.cliPlist()):
		c.Status = Warn
		c.Message = fmt.Sprintf("both %s and its handover backup %s exist", e.cliPlist(), b)
		c.Fix = "rm " + quote(b) + " (once leo service status shows the CLI job running)"
	default:
		c.Status = Fail
		c.Message = fmt.Sprintf("%s is left with no marker: the CLI job was handed over but the app never took over, so nothing starts the daemon", b)
		label := e.Label
		if label == "" {
			label = "<the app's launchd label>"
		}
		c.Fix = "leo doctor --fix --label " + label + " (restores the CLI job)"
	}
	return c, true
}

// checkLinger (Linux): without lingering systemd stops the user's units,
// leo's included, at logout.
func checkLinger(ctx context.Context, e *Env) Check {
	c := Check{Name: NameLinger}
	out, err := e.loginctl(ctx, "show-user", fmt.Sprint(e.UID), "--property=Linger")
	if err != nil {
		first, _, _ := strings.Cut(err.Error(), "\n")
		c.Status, c.Message = OK, "cannot tell whether lingering is on (loginctl: "+clip(first, 200)+"); it matters only with leo service install"
		return c
	}
	v := ""
	for _, l := range strings.Split(string(out), "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "Linger="); ok {
			v = s
		}
	}
	switch v {
	case "yes":
		c.Status, c.Message = OK, "lingering is on"
	case "no":
		c.Status, c.Message = Warn, "lingering is off: systemd stops leo (and the agents) when you log out"
		c.Fix = "loginctl enable-linger"
	default:
		c.Status, c.Message = OK, fmt.Sprintf("cannot tell whether lingering is on (loginctl answered %q)", clip(strings.TrimSpace(string(out)), 80))
	}
	return c
}

// maxStateBytes bounds what a check reads of one state file.
const maxStateBytes = 64 << 20

// checkStateFiles parses the state files the daemon reads at start, read
// only: doctor never moves a file aside (the daemon does, at start).
func checkStateFiles(e *Env) []Check {
	h := e.Home
	var out []Check
	out = append(out, checkJSONState(NameAgents, h.AgentsPath(), "agents", "the daemon keeps it aside and starts with no agents"))
	out = append(out, checkJSONState(NamePending, h.TaskPendingPath(), "firings", "the daemon keeps it aside; the pending persistent firings in it are lost"))
	out = append(out, checkJSONState(NameRunning, h.TaskRunningPath(), "runs", "the daemon keeps it aside; the headless runs a stopped daemon left are not recorded or ended"))
	out = append(out, checkHistory(h))
	out = append(out, checkAside(h))
	return out
}

func checkJSONState(name, path, listKey, consequence string) Check {
	c := Check{Name: name}
	data, err := readBounded(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		c.Status, c.Message = OK, "none yet"
		return c
	case err != nil:
		c.Status, c.Message = Fail, fmt.Sprintf("cannot read %s: %v", path, err)
		c.Fix = "chmod u+rw " + quote(path)
		return c
	}
	if problem := stateShape(data, listKey); problem != "" {
		c.Status, c.Message = Fail, fmt.Sprintf("%s %s", path, problem)
		c.Fix = "leo service restart (" + consequence + ")"
		return c
	}
	c.Status, c.Message = OK, path+" parses"
	return c
}

// stateShape is what the daemon's reader checks: an object with version
// 1 and the list under key (absent is fine for task-pending's firings).
func stateShape(data []byte, key string) string {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return "does not parse: " + clip(err.Error(), 120)
	}
	if top == nil {
		return "is not a JSON object"
	}
	var v int
	if err := json.Unmarshal(top["version"], &v); err != nil || v != 1 {
		return fmt.Sprintf("has version %.20s, not 1 (written by another leo?)", top["version"])
	}
	if raw, ok := top[key]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Sprintf("has %q that is not an array", key)
		}
	}
	return ""
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxStateBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxStateBytes)
	}
	return data, nil
}

// checkHistory parses every line of state/task-history/*.jsonl. The
// history skips a line that does not parse, so such a line is a warning.
func checkHistory(h home.Home) Check {
	c := Check{Name: NameHistory}
	dir := h.TaskHistoryDir()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(files) == 0 {
		c.Status, c.Message = OK, "no history yet"
		return c
	}
	var bad, unreadable []string
	lines := 0
	for _, f := range files {
		n, badLine, err := scanJSONL(f)
		lines += n
		switch {
		case err != nil:
			unreadable = append(unreadable, fmt.Sprintf("%s: %v", filepath.Base(f), err))
		case badLine > 0:
			bad = append(bad, fmt.Sprintf("%s line %d", filepath.Base(f), badLine))
		}
	}
	switch {
	case len(unreadable) > 0:
		c.Status, c.Message = Fail, "cannot read "+strings.Join(firstN(unreadable, 3), "; ")
		c.Fix = "chmod -R u+rwX " + quote(dir)
	case len(bad) > 0:
		c.Status, c.Message = Warn, fmt.Sprintf("records that do not parse (leo task history skips them): %s", strings.Join(firstN(bad, 5), ", "))
		c.Fix = "none needed; to silence it, remove those lines from the files in " + dir
	default:
		c.Status, c.Message = OK, fmt.Sprintf("%d records in %d files parse", lines, len(files))
	}
	return c
}

// scanJSONL counts records and returns the first line that is not a JSON
// object (0 when all are). Lines of any length are read.
func scanJSONL(path string) (records, badLine int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, rerr := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var obj map[string]json.RawMessage
			if json.Unmarshal(line, &obj) != nil || obj == nil {
				if badLine == 0 {
					badLine = n
				}
			} else {
				records++
			}
		}
		if rerr == io.EOF {
			return records, badLine, nil
		}
		if rerr != nil {
			return records, badLine, rerr
		}
	}
}

// checkAside lists the state files leo kept aside (*.corrupt-*,
// *.unknown-*): what was in them is not in use, and a person may want it.
func checkAside(h home.Home) Check {
	c := Check{Name: NameAside}
	var found []string
	for _, dir := range []string{h.StateDir(), h.TaskHistoryDir()} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, en := range entries {
			if strings.Contains(en.Name(), ".corrupt-") || strings.Contains(en.Name(), ".unknown-") {
				found = append(found, filepath.Join(dir, en.Name()))
			}
		}
	}
	if len(found) == 0 {
		c.Status, c.Message = OK, "no state files kept aside"
		return c
	}
	slices.Sort(found)
	c.Status = Warn
	c.Message = fmt.Sprintf("%d state file(s) kept aside because leo could not read them: %s", len(found), strings.Join(firstN(found, 5), ", "))
	quoted := make([]string, 0, len(found))
	for _, f := range found[:min(len(found), 5)] {
		quoted = append(quoted, quote(f))
	}
	c.Fix = "read them for anything worth keeping, then: rm " + strings.Join(quoted, " ")
	if len(found) > 5 {
		c.Fix += " (and the others in " + h.StateDir() + ")"
	}
	return c
}

func firstN(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(slices.Clone(s[:n]), fmt.Sprintf("and %d more", len(s)-n))
}

package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/managed"
)

func TestCheckHome(t *testing.T) {
	for name, tc := range map[string]struct {
		setup  func(w *world)
		status Status
		msg    string
	}{
		"ready":          {func(*world) {}, OK, ""},
		"no state yet":   {func(w *world) { os.RemoveAll(w.h.StateDir()) }, OK, "no state yet"},
		"state is file":  {func(w *world) { os.RemoveAll(w.h.StateDir()); w.write(w.h.StateDir(), "", 0o600) }, Fail, "is not a directory"},
		"home is a file": {func(w *world) { os.RemoveAll(w.h.Root); w.write(w.h.Root, "", 0o600) }, Fail, "is not a directory"},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, "linux")
			tc.setup(w)
			c := checkHome(w.env)
			if c.Status != tc.status {
				t.Fatalf("%+v, want %s", c, tc.status)
			}
			contains(t, "message", c.Message, tc.msg)
			if tc.status == Fail && c.Fix == "" {
				t.Errorf("a failure without a fix: %+v", c)
			}
		})
	}
}

func TestCheckMarker(t *testing.T) {
	for name, tc := range map[string]struct {
		goos   string
		setup  func(w *world)
		status Status
		msg    string
		fix    string
	}{
		"absent": {"darwin", func(*world) {}, OK, "not a managed install", ""},
		"valid":  {"darwin", func(w *world) { w.writeMarker("studio.blackpaw.leo.daemon") }, OK, "managed by Leo.app (launchd job studio.blackpaw.leo.daemon", ""},
		"group-writable": {"darwin", func(w *world) {
			w.writeMarker("studio.blackpaw.leo.daemon")
			os.Chmod(w.h.MarkerPath(), 0o664)
		}, Warn, "group- or world-writable", "chmod go-w "},
		"not JSON": {"darwin", func(w *world) { w.write(w.h.MarkerPath(), "{", 0o600) }, Warn, "not valid JSON", "open -a Leo"},
		"linux":    {"linux", func(w *world) { w.write(w.h.MarkerPath(), "{}", 0o600) }, Warn, "macOS-only", "rm "},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, tc.goos)
			tc.setup(w)
			w.reread()
			c := checkMarker(w.env)
			if c.Status != tc.status {
				t.Fatalf("%+v, want %s", c, tc.status)
			}
			contains(t, "message", c.Message, tc.msg)
			contains(t, "fix", c.Fix, tc.fix)
			if tc.status == Warn && c.Message != w.env.Marker.Warning() {
				t.Errorf("doctor does not repeat the marker's warning: %q vs %q", c.Message, w.env.Marker.Warning())
			}
		})
	}
}

func TestCheckHarnessCLI(t *testing.T) {
	for name, tc := range map[string]struct {
		cli    string
		script string // "" = not installed
		used   bool
		status Status
		msg    string
		fix    string
	}{
		"claude found":         {"claude", "#!/bin/sh\necho '2.1.197 (Claude Code)'\n", true, OK, "Claude Code: %BIN% (2.1.197 (Claude Code))", ""},
		"claude missing, used": {"claude", "", true, Fail, "Claude Code: not found", "@anthropic-ai/claude-code"},
		"claude missing":       {"claude", "", false, Warn, "Claude Code: not found", "https://claude.com/claude-code"},
		"codex missing":        {"codex", "", false, OK, "codex: not found (no template or task uses it)", ""},
		"codex missing, used":  {"codex", "", true, Fail, "codex: not found", "npm install -g @openai/codex"},
		"opencode found":       {"opencode", "#!/bin/sh\necho 1.18.33\n", false, OK, "opencode: %BIN% (1.18.33)", ""},
		"version hangs":        {"codex", "#!/bin/sh\nexec sleep 30\n", true, Warn, "no answer within 200ms", "reinstall"},
		"version fails":        {"codex", "#!/bin/sh\necho boom >&2\nexit 3\n", true, Warn, "exit status 3: boom", "reinstall"},
		"hostile version":      {"codex", "#!/bin/sh\nprintf 'v1.2\\033[2J\\r\\n'\n", true, OK, `(v1.2\x1b[2J)`, ""},
		"not a version":        {"claude", "#!/bin/sh\necho 'Usage: claude [options]'\n", true, Warn, `(` + "`claude --version`" + ` printed "Usage: claude [options]", not a version)`, "is the CLI; reinstall it: npm install -g @anthropic-ai/claude-code"},
		"codex version":        {"codex", "#!/bin/sh\necho 'codex-cli 0.171.0'\n", true, OK, "(codex-cli 0.171.0)", ""},
		// pi 0.73.1 prints its version on stderr.
		"pi version on stderr": {"pi", "#!/bin/sh\necho 0.73.1 >&2\n", true, OK, "pi: %BIN% (0.73.1)", ""},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, "linux")
			bin := filepath.Join(w.dir, "bin", tc.cli)
			if tc.script != "" {
				w.script(bin, tc.script)
			}
			w.env.Harnesses = map[string]bool{tc.cli: tc.used}
			w.env.VersionTimeout = 200 * time.Millisecond
			c := Checks(context.Background(), w.env)
			got := mustCheck(t, c, tc.cli)
			if got.Status != tc.status {
				t.Fatalf("%+v, want %s", got, tc.status)
			}
			contains(t, "message", got.Message, strings.ReplaceAll(tc.msg, "%BIN%", bin))
			contains(t, "fix", got.Fix, tc.fix)
		})
	}
}

// TestCheckClaudeUsesTheMarkersPATH: the lookup is the daemon's, the
// marker's PATH first.
func TestCheckClaudeUsesTheMarkersPATH(t *testing.T) {
	w := newWorld(t, "darwin")
	first := filepath.Join(w.dir, "marker-bin", "claude")
	w.script(first, "#!/bin/sh\necho 9.9.9\n")
	w.script(filepath.Join(w.dir, "bin", "claude"), "#!/bin/sh\necho 1.0.0\n")
	w.env.Resolver = binpath.Resolver{PathFirst: filepath.Dir(first), Getenv: w.env.Resolver.Getenv}
	claude, _ := harness.Lookup("claude")
	c := checkHarnessCLI(context.Background(), w.env, claude)
	if c.Status != OK || c.Message != "Claude Code: "+first+" (9.9.9)" {
		t.Fatalf("%+v", c)
	}
}

func TestCheckTmux(t *testing.T) {
	for name, tc := range map[string]struct {
		choice managed.TmuxChoice
		err    error
		status Status
		msg    string
		fix    string
	}{
		"not found": {err: &binpath.NotFoundError{Name: "tmux"}, status: Fail, msg: "tmux: not found", fix: "apt-get install tmux"},
		"ok":        {choice: managed.TmuxChoice{Binary: "%TMUX%"}, status: OK, msg: "%TMUX% (tmux 3.6a)"},
		"pending": {choice: managed.TmuxChoice{Binary: "%TMUX%", ServerVersion: "3.5", Pending: true}, status: Warn,
			msg: "tmux upgrade pending: the running server is tmux 3.5", fix: "next starts"},
		"no matching copy": {choice: managed.TmuxChoice{Binary: "%TMUX%", ServerVersion: "3.4", Problem: "the tmux server on -L leo runs tmux 3.4 but /x/3.4/tmux does not exist"},
			status: Fail, msg: "tmux: the tmux server on -L leo runs tmux 3.4 but /x/3.4/tmux does not exist", fix: "reinstall Leo.app so /"},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, "darwin")
			w.writeMarker("studio.blackpaw.leo.daemon")
			tm := w.env.Marker.Marker.TmuxPath
			tc.choice.Binary = strings.ReplaceAll(tc.choice.Binary, "%TMUX%", tm)
			w.env.Tmux = func(context.Context) (managed.TmuxChoice, error) { return tc.choice, tc.err }
			c := checkTmux(context.Background(), w.env)
			if c.Status != tc.status {
				t.Fatalf("%+v, want %s", c, tc.status)
			}
			contains(t, "message", c.Message, strings.ReplaceAll(tc.msg, "%TMUX%", tm))
			contains(t, "fix", c.Fix, tc.fix)
		})
	}
}

func TestCheckSocket(t *testing.T) {
	for name, tc := range map[string]struct {
		setup  func(w *world)
		status Status
		msg    string
		fix    string
	}{
		"nothing":       {func(*world) {}, Fail, "daemon not running", "leo service start (no job yet: leo service install; in the foreground: leo service)"},
		"stale":         {func(w *world) { w.staleSocket() }, Fail, "stale socket ", "leo doctor --fix"},
		"not a socket":  {func(w *world) { w.write(w.h.SocketPath(), "x", 0o600) }, Fail, "is not a socket", "rm "},
		"running":       {func(w *world) { w.staleSocket(); w.holdLock() }, OK, "daemon running (pid ", ""},
		"lock, no sock": {func(w *world) { w.holdLock() }, Warn, "does not exist", "leo service restart"},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, "linux")
			tc.setup(w)
			c := checkSocket(w.env)
			if c.Status != tc.status {
				t.Fatalf("%+v, want %s", c, tc.status)
			}
			contains(t, "message", c.Message, tc.msg)
			contains(t, "fix", c.Fix, tc.fix)
		})
	}
}

const appLabel = "studio.blackpaw.leo.daemon"

func TestCheckJobs(t *testing.T) {
	for name, tc := range map[string]struct {
		managed bool
		loaded  []string
		fail    string
		status  Status
		msg     string
		fix     string
	}{
		"unmanaged, registered":     {false, []string{CLILabel}, "", OK, CLILabel + " registered", ""},
		"unmanaged, not registered": {false, nil, "", Warn, "not registered", "leo service install"},
		"both registered": {true, []string{CLILabel, appLabel}, "", Fail,
			"two jobs registered: com.blackpaw.leo (the CLI job) and studio.blackpaw.leo.daemon (the marker's); the one that loses daemon.lock respawns about every 10 s",
			"leo doctor --fix (launchctl bootout gui/501/com.blackpaw.leo)"},
		"managed":               {true, []string{appLabel}, "", OK, appLabel + " registered (managed)", ""},
		"managed, CLI only":     {true, []string{CLILabel}, "", Warn, "is registered but not the marker's", "open -a Leo"},
		"managed, none":         {true, nil, "", Warn, "is not registered", "open -a Leo"},
		"launchctl print fails": {true, nil, "print", Warn, "cannot ask launchd: launchctl print gui/501/com.blackpaw.leo", ""},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, "darwin")
			if tc.managed {
				w.writeMarker(appLabel)
			}
			for _, l := range tc.loaded {
				w.register(l)
			}
			if tc.fail != "" {
				w.failVerb(tc.fail)
			}
			c := mustCheck(t, Checks(context.Background(), w.env), NameJobs)
			if c.Status != tc.status {
				t.Fatalf("%+v, want %s", c, tc.status)
			}
			contains(t, "message", c.Message, tc.msg)
			contains(t, "fix", c.Fix, tc.fix)
		})
	}
}

// TestLinuxRunsNoLaunchdCheck: the launchd checks are macOS's; Linux
// reports lingering instead.
func TestLinuxRunsNoLaunchdCheck(t *testing.T) {
	w := newWorld(t, "linux")
	w.writePlist(w.env.backupPath(), w.cliBinary())
	checks := Checks(context.Background(), w.env)
	for _, n := range []string{NameJobs, NameBackup} {
		if c, ok := findCheck(t, checks, n); ok {
			t.Errorf("linux ran %+v", c)
		}
	}
	mustCheck(t, checks, NameLinger)
	if calls := w.calls(); len(calls) != 0 {
		t.Errorf("launchctl ran on linux: %q", calls)
	}
}

func TestCheckReleasing(t *testing.T) {
	w := newWorld(t, "darwin")
	if _, ok := checkReleasing(w.env); ok {
		t.Fatal("a release check without managed.json.releasing")
	}
	w.write(w.env.releasingPath(), "{}", 0o600)
	c, _ := checkReleasing(w.env)
	if c.Status != Fail || !strings.Contains(c.Message, "managed.json.releasing is left from an interrupted `leo service handover --to-cli`") || !strings.Contains(c.Fix, "leo doctor --fix") {
		t.Fatalf("%+v", c)
	}
	w.writeMarker(appLabel)
	c, _ = checkReleasing(w.env)
	if c.Status != Warn || !strings.Contains(c.Fix, "rm ") {
		t.Fatalf("with a marker again: %+v", c)
	}
}

func TestCheckBackup(t *testing.T) {
	for name, tc := range map[string]struct {
		setup  func(w *world)
		status Status
		msg    string
		fix    string
	}{
		"handed over": {func(w *world) { w.writeMarker(appLabel) }, OK, "handed over to Leo.app", ""},
		"no marker": {func(w *world) {}, Fail, "left with no marker",
			"leo doctor --fix --label <the app's launchd label>"},
		"no marker, label given": {func(w *world) { w.env.Label = appLabel }, Fail, "left with no marker",
			"leo doctor --fix --label " + appLabel},
		"invalid marker": {func(w *world) { w.write(w.h.MarkerPath(), "{", 0o600); w.reread() }, Warn, "the marker is invalid", "repair the marker"},
		"plist restored": {func(w *world) { w.writePlist(w.env.cliPlist(), "/bin/sh") }, Warn, "both ", "rm "},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, "darwin")
			w.writePlist(w.env.backupPath(), w.cliBinary())
			tc.setup(w)
			c := mustCheck(t, Checks(context.Background(), w.env), NameBackup)
			if c.Status != tc.status {
				t.Fatalf("%+v, want %s", c, tc.status)
			}
			contains(t, "message", c.Message, tc.msg)
			contains(t, "fix", c.Fix, tc.fix)
		})
	}
}

func TestCheckLinger(t *testing.T) {
	for name, tc := range map[string]struct {
		script string
		status Status
		msg    string
		fix    string
	}{
		"on":      {"#!/bin/sh\necho Linger=yes\n", OK, "lingering is on", ""},
		"off":     {"#!/bin/sh\necho Linger=no\n", Warn, "lingering is off: systemd stops leo", "loginctl enable-linger"},
		"no bus":  {"#!/bin/sh\necho 'Failed to connect to bus' >&2\nexit 1\n", OK, "cannot tell", ""},
		"garbage": {"#!/bin/sh\necho what\n", OK, "cannot tell", ""},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, "linux")
			w.script(w.env.Loginctl, tc.script)
			c := checkLinger(context.Background(), w.env)
			if c.Status != tc.status {
				t.Fatalf("%+v, want %s", c, tc.status)
			}
			contains(t, "message", c.Message, tc.msg)
			contains(t, "fix", c.Fix, tc.fix)
		})
	}
}

func TestCheckStateFiles(t *testing.T) {
	for name, tc := range map[string]struct {
		setup  func(w *world)
		check  string
		status Status
		msg    string
		fix    string
	}{
		"agents none":    {func(*world) {}, NameAgents, OK, "none yet", ""},
		"agents ok":      {func(w *world) { w.write(w.h.AgentsPath(), `{"version":1,"agents":[]}`, 0o600) }, NameAgents, OK, "parses", ""},
		"agents corrupt": {func(w *world) { w.write(w.h.AgentsPath(), `{"version":1,`, 0o600) }, NameAgents, Fail, "does not parse", "leo service restart"},
		"agents newer":   {func(w *world) { w.write(w.h.AgentsPath(), `{"version":2,"agents":[]}`, 0o600) }, NameAgents, Fail, "has version 2, not 1", ""},
		"agents array":   {func(w *world) { w.write(w.h.AgentsPath(), `[]`, 0o600) }, NameAgents, Fail, "does not parse", ""},
		"agents shape":   {func(w *world) { w.write(w.h.AgentsPath(), `{"version":1,"agents":{}}`, 0o600) }, NameAgents, Fail, `"agents" that is not an array`, ""},
		"pending ok":     {func(w *world) { w.write(w.h.TaskPendingPath(), `{"version":1,"firings":[]}`, 0o600) }, NamePending, OK, "parses", ""},
		"pending bad":    {func(w *world) { w.write(w.h.TaskPendingPath(), "\x00\x01", 0o600) }, NamePending, Fail, "does not parse", "pending persistent firings in it are lost"},
		"running ok":     {func(w *world) { w.write(w.h.TaskRunningPath(), `{"version":1,"runs":[]}`, 0o600) }, NameRunning, OK, "parses", ""},
		"running bad":    {func(w *world) { w.write(w.h.TaskRunningPath(), `{"version":"1"}`, 0o600) }, NameRunning, Fail, "has version \"1\", not 1", "leo service restart"},
		"history ok": {func(w *world) {
			w.write(filepath.Join(w.h.TaskHistoryDir(), "n.jsonl"), "{\"task\":\"n\"}\n{\"task\":\"n\"}\n", 0o600)
		}, NameHistory, OK, "2 records in 1 files parse", ""},
		"history bad line": {func(w *world) {
			w.write(filepath.Join(w.h.TaskHistoryDir(), "n.jsonl"), "{\"task\":\"n\"}\n{\"task\":\n"+strings.Repeat("x", 200000)+"\n", 0o600)
		}, NameHistory, Warn, "n.jsonl line 2", "remove those lines"},
		"nothing aside": {func(*world) {}, NameAside, OK, "no state files kept aside", ""},
		"kept aside": {func(w *world) {
			w.write(w.h.AgentsPath()+".corrupt-20260101T000000.000000000", "x", 0o600)
			w.write(filepath.Join(w.h.TaskHistoryDir(), "n.jsonl.unknown-20260101T000000.000000000"), "x", 0o600)
		}, NameAside, Warn, "2 state file(s) kept aside", "rm "},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t, "linux")
			tc.setup(w)
			c := mustCheck(t, checkStateFiles(w.env), tc.check)
			if c.Status != tc.status {
				t.Fatalf("%+v, want %s", c, tc.status)
			}
			contains(t, "message", c.Message, tc.msg)
			contains(t, "fix", c.Fix, tc.fix)
		})
	}
}

// TestStateChecksMoveNothing: doctor reads state files, it never keeps
// one aside (the daemon does, at start).
func TestStateChecksMoveNothing(t *testing.T) {
	w := newWorld(t, "linux")
	w.write(w.h.AgentsPath(), "{", 0o600)
	Run(context.Background(), w.env, true)
	if data, err := os.ReadFile(w.h.AgentsPath()); err != nil || string(data) != "{" {
		t.Fatalf("agents.json after doctor --fix: %q, %v", data, err)
	}
}

// TestChecksStayOneLine: a hostile home path never breaks a line.
func TestChecksStayOneLine(t *testing.T) {
	w := newWorld(t, "linux")
	w.staleSocket()
	w.env.Home.Root += "\n\x1b[31m"
	for _, c := range Checks(context.Background(), w.env) {
		if strings.ContainsAny(c.Message+c.Fix, "\n\r\x1b") {
			t.Errorf("%q is not one line: %q / %q", c.Name, c.Message, c.Fix)
		}
	}
}

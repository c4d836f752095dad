package launch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

func TestMain(m *testing.M) { os.Exit(hermetic.Main(m)) }

// stub is an adapter whose commands and conversations a test sets: argv
// carries the spec's session fields, env is the adapter's Command.Env.
type stub struct {
	harness.Harness // nil: only the methods below are called
	program         string
	argv0           string // the program its commands name ("": program)
	env             map[string]string
	pol             *policy
}

func (s *stub) Name() string   { return "stub" }
func (s *stub) Binary() string { return s.program }
func (s *stub) SupportsChannels() bool {
	return false
}
func (s *stub) Sessions() harness.SessionPolicy { return s.pol }
func (s *stub) Interactive(spec harness.LaunchSpec) (harness.Command, error) {
	return s.command("tui", spec), nil
}
func (s *stub) Headless(spec harness.LaunchSpec) (harness.Command, error) {
	return s.command("run", spec), nil
}

func (s *stub) command(verb string, spec harness.LaunchSpec) harness.Command {
	argv := []string{s.argv0, verb}
	if argv[0] == "" {
		argv[0] = s.program
	}
	if spec.SessionID != "" {
		flag := "--session-id"
		if spec.Resume {
			flag = "--resume"
		}
		argv = append(argv, flag, spec.SessionID)
	}
	return harness.Command{Argv: argv, Env: s.env}
}

// policy answers Exists from a set of conversations (or with err).
type policy struct {
	pins  bool
	known map[string]bool
	err   error
	asked []harness.SessionQuery
}

func (p *policy) PinsID() bool { return p.pins }
func (p *policy) NewID() string {
	if p.pins {
		return "new-id"
	}
	return ""
}
func (p *policy) Discover(context.Context, harness.SessionQuery) (string, error) { return "", nil }
func (p *policy) Exists(_ context.Context, q harness.SessionQuery, id string) (bool, error) {
	p.asked = append(p.asked, q)
	return p.known[id], p.err
}

// onPath installs empty programs in a directory of their own and returns a
// resolver whose whole PATH is that directory.
func onPath(t *testing.T, programs ...string) (binpath.Resolver, string) {
	t.Helper()
	dir := t.TempDir()
	for _, p := range programs {
		if err := os.WriteFile(filepath.Join(dir, p), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return binpath.Resolver{PathFirst: dir, Getenv: func(string) string { return "" }}, dir
}

func scope(t *testing.T, h harness.Harness) *config.Resolved {
	t.Helper()
	return &config.Resolved{
		Scope: "tasks.brief", Name: "brief", Harness: h, HarnessName: h.Name(),
		Options: harness.Options{}, Env: map[string]string{}, Workspace: filepath.Join(t.TempDir(), "ws"),
	}
}

// A missing program fails the launch with binpath's own error, the text
// of every launch: claude's contract text, the program and the PATH
// searched otherwise. Nothing is made before the lookup.
func TestMissingProgramErrorIsTheLookupsOwn(t *testing.T) {
	for _, name := range testutil.Harnesses() {
		for _, mode := range []Mode{Interactive, Headless} {
			h, _ := harness.Lookup(name)
			r, dir := onPath(t)
			res := scope(t, h)
			_, err := New(Request{Mode: mode, Scope: res, Name: "brief", Resolver: r})
			_, want := r.LookupHarness(h.Binary(), name)
			if err == nil || want == nil || err.Error() != want.Error() {
				t.Fatalf("%s: error %v, want the lookup's %v", name, err, want)
			}
			var ae *api.Error
			if !errors.As(err, &ae) {
				t.Fatalf("%s: %T is not an api error", name, err)
			}
			if nf, ok := h.(harness.NotFounder); ok {
				// The adapter's own words (claude's contract text).
				if own := nf.NotFound(); err.Error() != own.Error() {
					t.Fatalf("%s: %q, want the adapter's %q", name, err, own)
				}
			} else if ae.Code != api.CodeHarnessNotFound || !strings.Contains(ae.Message, h.Binary()+" CLI not found") || !strings.Contains(ae.Message, dir) {
				t.Fatalf("%s: %s %q does not name the program and the PATH", name, ae.Code, ae.Message)
			}
			if _, err := os.Stat(res.Workspace); !os.IsNotExist(err) {
				t.Fatalf("%s: the workspace was made before the lookup failed (%v)", name, err)
			}
		}
	}
}

// The workspace is made and launched by its real path; one that cannot be
// made is a WorkspaceError naming it.
func TestWorkspaceIsMadeAndTakenByItsRealPath(t *testing.T) {
	r, _ := onPath(t, "stubcli")
	h := &stub{program: "stubcli", pol: &policy{}}
	root := t.TempDir()
	real := filepath.Join(root, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	res := scope(t, h)
	res.Workspace = filepath.Join(root, "link", "a", "b")
	p, err := New(Request{Scope: res, Name: "a", Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(real, "a", "b"); p.Spec.Workspace != want {
		t.Fatalf("workspace %q, want the real path %q", p.Spec.Workspace, want)
	}
	if fi, err := os.Stat(p.Spec.Workspace); err != nil || !fi.IsDir() {
		t.Fatalf("workspace not made: %v", err)
	}
	if q := p.SessionQuery(); q.Workspace != p.Spec.Workspace {
		t.Fatalf("sessions looked up in %q", q.Workspace)
	}

	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	res.Workspace = filepath.Join(file, "ws")
	_, err = New(Request{Scope: res, Name: "a", Resolver: r})
	var we *WorkspaceError
	if !errors.As(err, &we) || we.Dir != res.Workspace || we.Err == nil {
		t.Fatalf("error %v (%T), want a WorkspaceError for %s", err, err, res.Workspace)
	}
}

// The environment: the base, the scope's env:, the adapter's, PATH as
// leo searches it unless the scope or the adapter sets one, and leo's own
// variables over all of them: LEO_AGENT and LEO_HOME for a TUI, LEO_TASK
// for a headless run.
func TestEnvLayers(t *testing.T) {
	r, dir := onPath(t, "stubcli")
	base := []string{"HOME=/home/u", "PATH=/usr/bin", "SHARED=base", "LEO_TASK=outer"}
	for _, c := range []struct {
		name      string
		mode      Mode
		home      string
		scopePath string
		cmdPath   string
		wantPath  string
		want      map[string]string
	}{
		// leo sets only the variable of the launch's kind: the other is
		// whatever the scope or the adapter said.
		{name: "tui", mode: Interactive, home: "/leo", wantPath: dir,
			want: map[string]string{"LEO_AGENT": "a", "LEO_HOME": "/leo", "LEO_TASK": "scope"}},
		{name: "headless", mode: Headless, wantPath: dir,
			want: map[string]string{"LEO_TASK": "a", "LEO_AGENT": "adapter", "LEO_HOME": ""}},
		{name: "scope PATH", mode: Headless, scopePath: "/scope/bin", wantPath: "/scope/bin"},
		{name: "adapter PATH", mode: Interactive, scopePath: "/scope/bin", cmdPath: "/adapter/bin", wantPath: "/adapter/bin"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &stub{program: "stubcli", pol: &policy{}, env: map[string]string{"SHARED": "adapter", "ADAPTER": "1", "LEO_AGENT": "adapter"}}
			if c.cmdPath != "" {
				h.env["PATH"] = c.cmdPath
			}
			res := scope(t, h)
			res.Env = map[string]string{"SHARED": "scope", "TOKEN": "v", "LEO_TASK": "scope", "LEO_AGENT": "scope"}
			if c.scopePath != "" {
				res.Env["PATH"] = c.scopePath
			}
			var b []string
			if c.mode == Headless {
				b = base
			}
			p, err := New(Request{Mode: c.mode, Scope: res, Name: "a", Resolver: r, Base: b, Home: c.home})
			if err != nil {
				t.Fatal(err)
			}
			p.ChooseSession(context.Background(), "")
			cmd, err := p.Command()
			if err != nil {
				t.Fatal(err)
			}
			env := p.Env(cmd)
			got := env.Map()
			if got["PATH"] != c.wantPath {
				t.Errorf("PATH %q, want %q", got["PATH"], c.wantPath)
			}
			if got["SHARED"] != "adapter" || got["TOKEN"] != "v" || got["ADAPTER"] != "1" {
				t.Errorf("env %v: want the scope's over the base, the adapter's over both", got)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s=%q, want %q", k, got[k], v)
				}
			}
			if c.mode == Headless && got["HOME"] != "/home/u" {
				t.Errorf("HOME %q: a headless run starts from the base", got["HOME"])
			}
			if c.mode == Interactive && got["HOME"] != "" {
				t.Errorf("HOME %q: a pane's env carries no base", got["HOME"])
			}
			if list := env.List(); len(list) != len(got) {
				t.Errorf("list %q repeats a variable", list)
			}
		})
	}
}

// No env value is ever on the command line, for any registered adapter,
// either command, fresh or resuming.
func TestEnvValuesNeverInArgv(t *testing.T) {
	const secret = "sk-very-secret-value-0123456789"
	for _, name := range testutil.Harnesses() {
		h, _ := harness.Lookup(name)
		r, _ := onPath(t, h.Binary())
		for _, mode := range []Mode{Interactive, Headless} {
			for _, resume := range []bool{false, true} {
				res := scope(t, h)
				res.Env = map[string]string{"LEO_TEST_API_KEY": secret}
				bridge := &harness.MCPBridge{Command: "/leo", Args: []string{"mcp-server"}, Env: map[string]string{"LEO_HOME": "/leo-home"}}
				p, err := New(Request{Mode: mode, Scope: res, Name: "brief", Prompt: "hello", Bridge: bridge, Resolver: r, Base: []string{"BASE_SECRET=" + secret}})
				if err != nil {
					t.Fatal(err)
				}
				if resume {
					p.Spec.SessionID, p.Spec.Resume = "0199a0e0-0000-7000-8000-000000000001", true
				}
				cmd, err := p.Command()
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for _, a := range cmd.Argv {
					if strings.Contains(a, secret) || strings.Contains(a, "LEO_TEST_API_KEY") {
						t.Fatalf("%s: an env value is in argv: %q", name, cmd.Argv)
					}
				}
				if got := p.Env(cmd).Map()["LEO_TEST_API_KEY"]; got != secret {
					t.Fatalf("%s: the scope's env does not reach the program (%q)", name, got)
				}
			}
		}
	}
}

// The command runs the very program the lookup found when the adapter
// names the harness's program, and leaves another program alone; the
// adapter's slice is not written to.
func TestCommandRunsTheProgramFound(t *testing.T) {
	r, dir := onPath(t, "stubcli")
	h := &stub{program: "stubcli", pol: &policy{}}
	p, err := New(Request{Mode: Headless, Scope: scope(t, h), Name: "a", Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	if p.Binary != filepath.Join(dir, "stubcli") {
		t.Fatalf("binary %q", p.Binary)
	}
	cmd, err := p.Command()
	if err != nil || !slices.Equal(cmd.Argv, []string{p.Binary, "run"}) {
		t.Fatalf("argv %q (%v), want the program found and the adapter's arguments", cmd.Argv, err)
	}

	h.argv0 = "wrapper"
	if cmd, _ = p.Command(); cmd.Argv[0] != "wrapper" {
		t.Fatalf("argv %q: a program other than the harness's was replaced", cmd.Argv)
	}

	h.argv0 = ""
	p.Harness = emptyCommand{h}
	if _, err := p.Command(); !errors.Is(err, ErrEmptyCommand) {
		t.Fatalf("empty command: %v", err)
	}
}

type emptyCommand struct{ *stub }

func (emptyCommand) Headless(harness.LaunchSpec) (harness.Command, error) {
	return harness.Command{}, nil
}

// leo's MCP server in the launch speaks for whom it runs: the agent or
// the task, never both (one the bridge came with is cleared).
func TestBridgeSpeaksForTheLaunch(t *testing.T) {
	r, _ := onPath(t, "stubcli")
	h := &stub{program: "stubcli", pol: &policy{}}
	given := (&harness.MCPBridge{Command: "/leo", Env: map[string]string{"LEO_HOME": "/h"}}).For(harness.BridgeTaskEnv, "other")
	for mode, want := range map[Mode][2]string{Interactive: {"a", ""}, Headless: {"", "a"}} {
		p, err := New(Request{Mode: mode, Scope: scope(t, h), Name: "a", Bridge: given, Resolver: r})
		if err != nil {
			t.Fatal(err)
		}
		env := p.Spec.Bridge.Env
		if env[harness.BridgeAgentEnv] != want[0] || env[harness.BridgeTaskEnv] != want[1] || env["LEO_HOME"] != "/h" {
			t.Fatalf("mode %d: bridge env %v", mode, env)
		}
	}
	if given.Env[harness.BridgeTaskEnv] != "other" {
		t.Fatal("the caller's bridge was changed")
	}
	p, _ := New(Request{Scope: scope(t, h), Name: "a", Resolver: r})
	if p.Spec.Bridge != nil {
		t.Fatal("a bridge without one given")
	}
}

// The resume-or-fresh ladder, for a TUI and a headless run, for a pinning
// harness and another.
func TestChooseSession(t *testing.T) {
	checkFailed := errors.New("the harness CLI timed out")
	for _, c := range []struct {
		name   string
		mode   Mode
		pins   bool
		stored string
		err    error
		want   Session
		argv   []string
	}{
		{"tui found", Interactive, false, "s1", nil, Session{ID: "s1", Resume: true, Stored: Found}, []string{"--resume", "s1"}},
		{"headless found", Headless, true, "s1", nil, Session{ID: "s1", Resume: true, Stored: Found}, []string{"--resume", "s1"}},
		{"tui unchecked resumes", Interactive, true, "s2", checkFailed, Session{ID: "s2", Resume: true, Stored: Unchecked, CheckErr: checkFailed}, []string{"--resume", "s2"}},
		{"headless unchecked starts fresh", Headless, false, "s2", checkFailed, Session{Stored: Unchecked, CheckErr: checkFailed}, nil},
		{"tui gone, pinning: pinned on it", Interactive, true, "s3", nil, Session{ID: "s3", Stored: Gone}, []string{"--session-id", "s3"}},
		{"tui gone: fresh", Interactive, false, "s3", nil, Session{Stored: Gone}, nil},
		{"headless gone, pinning: fresh", Headless, true, "s3", nil, Session{Stored: Gone}, nil},
		{"tui none, pinning: new id", Interactive, true, "", nil, Session{ID: "new-id"}, []string{"--session-id", "new-id"}},
		{"tui none: fresh", Interactive, false, "", nil, Session{}, nil},
		{"headless none, pinning: fresh", Headless, true, "", nil, Session{}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, _ := onPath(t, "stubcli")
			pol := &policy{pins: c.pins, known: map[string]bool{"s1": true}, err: c.err}
			h := &stub{program: "stubcli", pol: pol}
			res := scope(t, h)
			res.Env = map[string]string{"CODEX_HOME": "/scope/codex"}
			p, err := New(Request{Mode: c.mode, Scope: res, Name: "a", Resolver: r, Base: []string{"HOME=/home/u"}})
			if err != nil {
				t.Fatal(err)
			}
			got := p.ChooseSession(context.Background(), c.stored)
			if got != c.want {
				t.Fatalf("session %+v, want %+v", got, c.want)
			}
			if p.Spec.SessionID != got.ID || p.Spec.Resume != got.Resume {
				t.Fatalf("spec %q resume %v, want the choice", p.Spec.SessionID, p.Spec.Resume)
			}
			cmd, err := p.Command()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cmd.Argv[2:], c.argv) {
				t.Fatalf("argv %q, want %q after the verb", cmd.Argv, c.argv)
			}
			if c.stored == "" {
				if len(pol.asked) != 0 {
					t.Fatal("a launch without a stored id checked one")
				}
				return
			}
			// The check sees the program's environment before the
			// adapter's: the base, the scope's env, PATH, leo's own.
			if len(pol.asked) != 1 {
				t.Fatalf("%d checks", len(pol.asked))
			}
			q := pol.asked[0]
			if q.Workspace != p.Spec.Workspace || q.Env["HOME"] != "/home/u" || q.Env["CODEX_HOME"] != "/scope/codex" ||
				q.Env["PATH"] != r.SearchPath() || q.Env[c.mode.senderKey()] != "a" {
				t.Fatalf("query %+v", q)
			}
		})
	}
}

// SessionEnv, for lookups made outside a launch: the base, the scope's
// env, and the PATH the program gets unless the scope sets one.
func TestSessionEnv(t *testing.T) {
	r := binpath.Resolver{PathFirst: "/first", Getenv: func(k string) string { return map[string]string{"PATH": "/own"}[k] }}
	got := SessionEnv([]string{"HOME=/h", "PATH=/base"}, map[string]string{"HOME": "/scope"}, r)
	if got["HOME"] != "/scope" || got["PATH"] != "/first:/own" || len(got) != 2 {
		t.Fatalf("env %v", got)
	}
	if got := SessionEnv(nil, map[string]string{"PATH": "/scope/bin"}, r); got["PATH"] != "/scope/bin" || len(got) != 1 {
		t.Fatalf("env %v", got)
	}
}

// Package launch holds the steps every start of a harness takes, whether
// the agent manager starts a TUI in a tmux pane or the task runner starts
// a headless run: find the harness's program, make the workspace ready on
// its real path, decide between resuming a stored conversation and
// starting fresh, have the adapter build the command, run the very program
// the lookup found, and give it its environment (the scope's env:, PATH,
// leo's own LEO_* variables). What a caller then does with the plan — a
// pane for an agent, a process group and its event stream for a task —
// stays with the caller.
//
// It sits between config (a resolved scope) and the adapters (a launch
// spec in, argv and env out); it runs nothing but the adapter's session
// lookup.
package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// Mode is which of the adapter's commands a launch runs.
type Mode int

const (
	// Interactive is an agent's resident TUI (Harness.Interactive).
	Interactive Mode = iota
	// Headless is a one-shot run of a prompt (Harness.Headless).
	Headless
)

// Request is one launch of a resolved scope.
type Request struct {
	Mode Mode
	// Scope is the resolved template or task; its Harness is set.
	Scope *config.Resolved
	// Name is who the launch runs for: the agent (Interactive) or the task
	// (Headless). It is the spec's name, and the LEO_AGENT or LEO_TASK of
	// the program and of leo's MCP server in it.
	Name string
	// Prompt is a headless run's message.
	Prompt string
	// Bridge is leo's MCP server (config.MCPBridge); nil: none. The launch
	// has it speak for Name.
	Bridge *harness.MCPBridge
	// Resolver finds the harness's program and gives the PATH it runs with.
	Resolver binpath.Resolver
	// Base is the environment (KEY=VALUE) the program starts from: leo's
	// own for a headless run; nil for a pane, which gets its tmux server's.
	Base []string
	// Home, when set, is the program's LEO_HOME (a pane does not inherit
	// leo's environment, so it is told the home).
	Home string
}

// Plan is a launch decided step by step, before anything is started: the
// caller chooses its session (ChooseSession), may add to Spec, then has
// the command built (Command) and takes its environment (Env).
type Plan struct {
	Harness harness.Harness
	// Binary is the harness's program as the lookup found it.
	Binary string
	// Spec is what the adapter builds from; Spec.Workspace is the real
	// path of the workspace.
	Spec harness.LaunchSpec

	mode     Mode
	resolver binpath.Resolver
	base     []string
	home     string
}

// WorkspaceError is a workspace that cannot be made. Each caller words
// it for its own scope.
type WorkspaceError struct {
	Dir string
	Err error
}

func (e *WorkspaceError) Error() string { return fmt.Sprintf("workspace %s: %v", e.Dir, e.Err) }
func (e *WorkspaceError) Unwrap() error { return e.Err }

// New looks the harness's program up — now, so one installed since is
// found; a missing one is binpath.LookupHarness's error as it is
// (claude_not_found, harness_not_found) — makes the workspace and builds
// the launch spec. Every harness checks trust, keys its sessions and
// reports its cwd by the real path, so a workspace reached through a
// symlink (on macOS /tmp is one) is launched, trusted and looked up by the
// path it resolves to.
func New(req Request) (*Plan, error) {
	res := req.Scope
	if res == nil || res.Harness == nil {
		return nil, errors.New("launch: the scope has no resolved harness")
	}
	h := res.Harness
	bin, err := req.Resolver.LookupHarness(h.Binary(), res.HarnessName)
	if err != nil {
		return nil, err
	}
	ws := res.Workspace
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, &WorkspaceError{Dir: ws, Err: err}
	}
	if real, err := filepath.EvalSymlinks(ws); err == nil {
		ws = real
	}
	spec := res.LaunchSpec()
	spec.Name = req.Name
	spec.Workspace = ws
	spec.Prompt = req.Prompt
	spec.Bridge = req.Bridge.For(req.Mode.senderKey(), req.Name)
	return &Plan{
		Harness: h, Binary: bin, Spec: spec,
		mode: req.Mode, resolver: req.Resolver, base: req.Base, home: req.Home,
	}, nil
}

// senderKey is the variable that names whom a launch runs for.
func (m Mode) senderKey() string {
	if m == Headless {
		return harness.BridgeTaskEnv
	}
	return harness.BridgeAgentEnv
}

// Stored is what became of the conversation a launch was asked to go on
// with.
type Stored int

const (
	// NoneStored: no conversation was asked for.
	NoneStored Stored = iota
	// Found: it exists; the launch resumes it.
	Found
	// Gone: the harness no longer has it.
	Gone
	// Unchecked: the harness could not say (Session.CheckErr).
	Unchecked
)

// Session is a launch's resume-or-fresh choice.
type Session struct {
	// ID is the conversation the launch runs in: resumed, or pinned on a
	// fresh start; "" lets the harness start one and name it.
	ID     string
	Resume bool
	Stored Stored
	// CheckErr is why the stored conversation could not be checked.
	CheckErr error
}

// ChooseSession decides whether the launch goes on with the stored
// conversation, and puts the choice in p.Spec:
//   - a stored id whose conversation exists → resume it;
//   - a stored id the harness cannot check (its CLI slow on a loaded box):
//     a TUI resumes it — dropping it would start the agent fresh behind the
//     user's back, and a resume of a conversation really gone exits at
//     once, after which the agent's quick-exit rule starts fresh; a
//     headless run starts fresh, as a failed resume would fail the firing;
//   - a stored id whose conversation is gone → a TUI of a pinning harness
//     (claude) is launched pinned on that id (it was chosen but never
//     used); anything else starts fresh;
//   - no id → a TUI of a pinning harness gets a new pinned id; anything
//     else starts fresh (a TUI's id is discovered after its first turn, a
//     headless run's read from its event stream).
func (p *Plan) ChooseSession(ctx context.Context, stored string) Session {
	pol := p.Harness.Sessions()
	pin := p.mode == Interactive && pol.PinsID()
	s := Session{}
	if stored != "" {
		ok, err := pol.Exists(ctx, p.SessionQuery(), stored)
		switch {
		case err != nil:
			s.Stored, s.CheckErr = Unchecked, err
			if p.mode == Interactive {
				s.ID, s.Resume = stored, true
			}
		case ok:
			s.Stored, s.ID, s.Resume = Found, stored, true
		default:
			s.Stored = Gone
			if pin {
				s.ID = stored
			}
		}
	}
	if s.ID == "" && pin {
		s.ID = pol.NewID()
	}
	p.Spec.SessionID, p.Spec.Resume = s.ID, s.Resume
	return s
}

// SessionQuery is where and in which environment the harness looks the
// launch's conversations up: the program's environment before the adapter
// adds its own (a lookup that runs the harness's CLI is marked as the
// launch's, like the program).
func (p *Plan) SessionQuery() harness.SessionQuery {
	return harness.SessionQuery{Workspace: p.Spec.Workspace, Env: p.Env(harness.Command{}).Map()}
}

// SessionEnv is the environment of a session lookup made outside a launch
// (an agent's conversation discovered after its first turn): base, then
// the scope's env:, with the PATH the program gets. Adapters fall back to
// leo's own environment for anything it does not set.
func SessionEnv(base []string, scopeEnv map[string]string, r binpath.Resolver) map[string]string {
	e := NewEnv(base)
	e.overlay(scopeEnv)
	if _, set := scopeEnv["PATH"]; !set {
		e.Set("PATH", r.SearchPath())
	}
	return e.Map()
}

// ErrEmptyCommand is an adapter that built a command without a program.
var ErrEmptyCommand = errors.New("the adapter built an empty command")

// Command has the adapter build the launch of p.Spec (the TUI or the
// headless run) and runs the very program the lookup found when the
// command names the harness's program. An adapter's error is returned as
// it is, for the caller to name the scope.
func (p *Plan) Command() (harness.Command, error) {
	build := p.Harness.Interactive
	if p.mode == Headless {
		build = p.Harness.Headless
	}
	cmd, err := build(p.Spec)
	if err != nil {
		return harness.Command{}, err
	}
	if len(cmd.Argv) == 0 {
		return harness.Command{}, ErrEmptyCommand
	}
	cmd.Argv = append([]string(nil), cmd.Argv...)
	if cmd.Argv[0] == p.Harness.Binary() {
		cmd.Argv[0] = p.Binary
	}
	return cmd, nil
}

// Env is the environment the program of cmd runs with: the base, the
// scope's env:, the adapter's cmd.Env, PATH as leo searches it unless the
// scope or the adapter sets one, and over all of them leo's own variables
// — LEO_AGENT or LEO_TASK, which mark the process as leo's (handover
// refuses to move the daemon from inside one), and LEO_HOME when the
// request names the home. Values travel only here, never in argv.
func (p *Plan) Env(cmd harness.Command) *Env {
	e := NewEnv(p.base)
	e.overlay(p.Spec.Env)
	e.overlay(cmd.Env)
	_, scopePath := p.Spec.Env["PATH"]
	_, cmdPath := cmd.Env["PATH"]
	if !scopePath && !cmdPath {
		e.Set("PATH", p.resolver.SearchPath())
	}
	e.Set(p.mode.senderKey(), p.Spec.Name)
	if p.home != "" {
		e.Set("LEO_HOME", p.home)
	}
	return e
}

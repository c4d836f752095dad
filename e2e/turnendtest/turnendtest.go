// Package turnendtest proves the turn-end path of persistent tasks end to
// end, for the fake TUIs (e2e, `make test`) and the real CLIs (e2e/real,
// `make test-real`) alike: a daemon — daemon.Run with the real agent
// manager, in the test's process so the test holds its turn-end hub —
// launches each harness's TUI with leo's turn-end signal wired in; a
// message carrying a firing's marker is sent; the TUI ends the turn and
// runs the real `leo hook turn-end` binary, which posts to the daemon's
// socket; the hub completes the firing's waiter with the reply.
package turnendtest

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/daemon"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/turnend"
)

// Options describe the world of one test.
type Options struct {
	// Bin holds the harness programs (claude, codex, opencode), first on PATH.
	Bin string
	// UserEnv is HOME, CODEX_HOME and the XDG dirs of the isolated user.
	UserEnv map[string]string
	// Env is the extra environment of harness h's template (model server,
	// fake knobs).
	Env func(h string) map[string]string
	// Harnesses get one template each, named after the harness, with the
	// workspace <HOME>/ws/<harness>.
	Harnesses []string
	// Observe, if set, sees every turn-end report the daemon gets.
	Observe func(api.TurnEndReport)
}

// World is one leo home served by an in-process daemon.
type World struct {
	T      testing.TB
	Home   home.Home
	Hub    *turnend.Hub
	Client *client.Client
	opts   Options
	socket string
}

// Start writes leo.yaml and runs the daemon until the test ends; its tmux
// server is killed at the end, after every pane's process.
func Start(t testing.TB, opts Options) *World {
	t.Helper()
	root := testutil.ShortTempDir(t, "te-")
	h := home.Home{Root: root, ConfigPath: filepath.Join(root, "leo.yaml")}
	w := &World{T: t, Home: h, Hub: turnend.New(slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))), opts: opts}
	w.Hub.Observe = opts.Observe
	path := testutil.ToolPATH(t, opts.Bin) // the harnesses and the tools, no system dir
	env := map[string]string{"PATH": path}
	maps.Copy(env, opts.UserEnv)
	getenv := func(k string) string { return env[k] }
	w.writeConfig()
	defaultRoot := "/nonexistent/.leo"
	w.socket = h.TmuxSocket(defaultRoot)
	t.Cleanup(w.killTmux) // registered first: runs after the daemon stopped
	d := daemontest.Start(t, h, func(ctx context.Context) error {
		return daemon.Run(ctx, daemon.Options{
			Home: h, Version: "turnendtest", Getenv: getenv, Stderr: testWriter{t},
			Resolver: binpath.Resolver{Getenv: getenv}, DefaultRoot: defaultRoot,
			LeoBinary: leoproc.Binary(t), TurnEnds: w.Hub,
		})
	})
	d.WaitReady(t, time.Minute)
	w.Client = d.Client
	return w
}

// Workspace is harness h's template's workspace.
func (w *World) Workspace(h string) string {
	return filepath.Join(w.opts.UserEnv["HOME"], "ws", h)
}

func (w *World) writeConfig() {
	var b strings.Builder
	b.WriteString("defaults:\n  harness: claude\ntemplates:\n")
	for _, h := range w.opts.Harnesses {
		fmt.Fprintf(&b, "  %s:\n    harness: %s\n    workspace: %s\n    env:\n", h, h, w.Workspace(h))
		env := maps.Clone(w.opts.UserEnv)
		if w.opts.Env != nil {
			maps.Copy(env, w.opts.Env(h))
		}
		for _, k := range slices.Sorted(maps.Keys(env)) {
			fmt.Fprintf(&b, "      %s: %s\n", k, strconv.Quote(env[k]))
		}
	}
	if err := os.WriteFile(w.Home.ConfigPath, []byte(b.String()), 0o600); err != nil {
		w.T.Fatal(err)
	}
}

// Spawn starts the agent of template h (named h).
func (w *World) Spawn(h string) {
	w.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
		w.T.Fatalf("spawn %s: %v", h, err)
	}
}

// Fire sends agent a firing of task (prompt + marker) and waits, at most
// within, for the hub to complete its waiter. It returns the message sent
// and how the turn ended.
func (w *World) Fire(agent, task, prompt string, within time.Duration) (string, turnend.Result) {
	w.T.Helper()
	runID := time.Now().UTC().Format("20060102T150405.000Z")
	msg := turnend.Message(prompt, task, runID)
	wt, err := w.Hub.Await(agent, msg)
	if err != nil {
		w.T.Fatal(err)
	}
	defer wt.Cancel()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	if _, err := w.Client.Send(ctx, agent, msg); err != nil {
		w.T.Fatalf("send the firing to %s: %v", agent, err)
	}
	select {
	case <-wt.Done():
		return msg, wt.Result()
	case <-ctx.Done():
		w.T.Fatalf("%s: no turn end of the firing %s within %v (the harness's hook never reported it)\npane:\n%s",
			agent, turnend.Marker(task, runID), within, w.pane(agent))
		return "", turnend.Result{}
	}
}

// Same reports whether a turn's input is msg, white space aside.
func Same(input, msg string) bool {
	return strings.Join(strings.Fields(input), " ") == strings.Join(strings.Fields(msg), " ")
}

func (w *World) pane(agent string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := w.Client.Logs(ctx, agent, 40)
	if err != nil {
		return err.Error()
	}
	return l.Text
}

// PanePIDs lists the pids of the panes of the home's tmux server.
func (w *World) PanePIDs() []int {
	out, err := exec.Command("tmux", "-L", w.socket, "list-panes", "-a", "-F", "#{pane_pid}").Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if p, err := strconv.Atoi(f); err == nil && p > 0 {
			pids = append(pids, p)
		}
	}
	return pids
}

func (w *World) killTmux() {
	testutil.KillTmux(w.T, w.socket)
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

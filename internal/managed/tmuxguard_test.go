package managed

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// tmuxCopies is a Leo.app tmux root with fake pinned copies: each copy is a
// script that answers `display-message -p #{version}` with the version in
// server (or "no server running" when that file is missing), and logs every
// call.
type tmuxCopies struct {
	root   string
	server string // file holding the running server's version
	log    string
}

func newTmuxCopies(t *testing.T, root string) *tmuxCopies {
	t.Helper()
	state := t.TempDir()
	return &tmuxCopies{root: root, server: filepath.Join(state, "server"), log: filepath.Join(state, "calls")}
}

// add makes <root>/<version>/tmux; a broken copy cannot talk to any server.
func (c *tmuxCopies) add(t *testing.T, version string, broken bool) string {
	t.Helper()
	p := filepath.Join(c.root, version, "tmux")
	answer := fmt.Sprintf(`if [ -f %[1]q ]; then cat %[1]q; exit 0; fi
echo "no server running on /tmp/tmux-0/$3" >&2; exit 1`, c.server)
	if broken {
		answer = `echo "protocol version mismatch (client 9, server 8)" >&2; exit 1`
	}
	writeExe(t, p, fmt.Sprintf(`#!/bin/sh
echo "$0 $*" >> %q
case "$*" in
*display-message*) %s ;;
-V) echo "tmux %s" ;;
esac
`, c.log, answer, version))
	return p
}

func (c *tmuxCopies) run(t *testing.T, version string) {
	t.Helper()
	if err := os.WriteFile(c.server, []byte(version+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (c *tmuxCopies) calls(t *testing.T) string {
	data, _ := os.ReadFile(c.log)
	return string(data)
}

func guardMarker(f fixture) Marker {
	return Marker{Version: 1, LaunchdLabel: "studio.blackpaw.leo.daemon", SelfPath: f.self, TmuxPath: f.tmux,
		Env: map[string]string{"PATH": "/nonexistent"}}
}

func TestTmuxGuard(t *testing.T) {
	cases := []struct {
		name        string
		copies      map[string]bool // version -> broken
		server      string          // "" means none runs
		wantVersion string          // the copy picked; "" means tmux_path
		wantPending bool
		wantServer  string
		wantProblem string
	}{
		{name: "no server: tmux_path", copies: map[string]bool{"3.5": false}},
		{name: "server of tmux_path's version", copies: map[string]bool{"3.5": false}, server: "3.6a", wantServer: "3.6a"},
		{name: "older server with its copy: upgrade pending", copies: map[string]bool{"3.5": false, "3.4": false}, server: "3.5",
			wantVersion: "3.5", wantPending: true, wantServer: "3.5"},
		{name: "older server without a copy: fall back, problem", copies: map[string]bool{"3.5": false}, server: "3.4",
			wantServer: "3.4", wantProblem: "runs tmux 3.4 but"},
		{name: "tmux_path cannot ask, another copy can", copies: map[string]bool{"3.6a": true, "3.5": false}, server: "3.5",
			wantVersion: "3.5", wantPending: true, wantServer: "3.5"},
		{name: "tmux_path cannot ask, another copy says no server", copies: map[string]bool{"3.6a": true, "3.5": false}},
		{name: "no copy can ask", copies: map[string]bool{"3.6a": true, "3.5": true}, server: "3.5",
			wantProblem: "cannot ask the tmux server on -L leo its version"},
		{name: "hostile version from the server", copies: map[string]bool{"3.5": false}, server: "../../../bin",
			wantServer: "../../../bin", wantProblem: `reports the version "../../../bin"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			c := newTmuxCopies(t, filepath.Dir(filepath.Dir(f.tmux)))
			if _, ok := tc.copies["3.6a"]; !ok {
				c.add(t, "3.6a", false)
			}
			for v, broken := range tc.copies {
				c.add(t, v, broken)
			}
			if tc.server != "" {
				c.run(t, tc.server)
			}
			st := State{Status: Valid, Marker: guardMarker(f)}
			got, err := st.Tmux(context.Background(), "leo", binpath.Resolver{})
			if err != nil {
				t.Fatal(err)
			}
			want := f.tmux
			if tc.wantVersion != "" {
				want = filepath.Join(c.root, tc.wantVersion, "tmux")
			}
			if got.Binary != want || got.Pending != tc.wantPending || got.ServerVersion != tc.wantServer {
				t.Errorf("choice = %+v, want binary %s pending %v server %q", got, want, tc.wantPending, tc.wantServer)
			}
			if tc.wantProblem == "" && got.Problem != "" || !strings.Contains(got.Problem, tc.wantProblem) {
				t.Errorf("problem = %q, want %q", got.Problem, tc.wantProblem)
			}
			calls := c.calls(t)
			if !strings.Contains(calls, f.tmux+" -u -L leo -f /dev/null display-message -p #{version}") {
				t.Errorf("tmux_path was not asked first with the home's socket:\n%s", calls)
			}
			if strings.Contains(calls, "kill-server") || strings.Contains(calls, "new-session") {
				t.Errorf("the guard did more than ask:\n%s", calls)
			}
		})
	}
}

// Managed, tmux never comes from PATH (not even the marker's); unmanaged,
// it does.
func TestTmuxComesFromPATHOnlyUnmanaged(t *testing.T) {
	f := newFixture(t)
	c := newTmuxCopies(t, filepath.Dir(filepath.Dir(f.tmux)))
	c.add(t, "3.6a", false)
	pathDir := t.TempDir()
	writeExe(t, filepath.Join(pathDir, "tmux"), "#!/bin/sh\nexit 1\n")
	r := binpath.Resolver{PathFirst: pathDir, Getenv: func(string) string { return pathDir }}

	m := guardMarker(f)
	m.Env["PATH"] = pathDir
	got, err := State{Status: Valid, Marker: m}.Tmux(context.Background(), "leo", r)
	if err != nil || got.Binary != f.tmux {
		t.Errorf("managed tmux = %+v %v, want tmux_path %s", got, err, f.tmux)
	}
	for _, st := range []State{{Status: Absent}, {Status: Invalid, Problem: "x"}} {
		got, err := st.Tmux(context.Background(), "leo", r)
		if err != nil || got.Binary != filepath.Join(pathDir, "tmux") {
			t.Errorf("%v tmux = %+v %v, want PATH's", st.Status, got, err)
		}
	}
	if _, err := (State{}).Tmux(context.Background(), "leo", binpath.Resolver{Getenv: func(string) string { return t.TempDir() }}); err == nil {
		t.Error("unmanaged with no tmux on PATH: no error")
	}
}

// With the real tmux: a running server's #{version} names the copy the
// guard picks, so the app's <root>/<version> directories line up with what
// tmux reports.
func TestTmuxGuardRealServer(t *testing.T) {
	real, err := binpath.Resolver{}.Lookup("tmux")
	if err != nil {
		t.Fatalf("the real tmux is needed: %v", err)
	}
	f := newFixture(t)
	srv := testutil.NewTmux(t, func(o *tmux.Options) { o.Binary = real })
	v, err := srv.Version(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	running := strings.TrimPrefix(v.Raw, "tmux ")
	root := filepath.Dir(filepath.Dir(f.tmux))
	wrapper := "#!/bin/sh\nexec " + real + " \"$@\"\n"
	writeExe(t, filepath.Join(root, running, "tmux"), wrapper)
	// tmux_path is a newer copy than the server that is about to run.
	newer := filepath.Join(root, "99.9", "tmux")
	writeExe(t, newer, wrapper)
	m := guardMarker(f)
	m.TmuxPath = newer
	st := State{Status: Valid, Marker: m}

	got, _ := st.Tmux(context.Background(), srv.Socket(), binpath.Resolver{})
	if got.Binary != newer || got.Pending || got.Problem != "" {
		t.Fatalf("no server yet: %+v, want tmux_path", got)
	}
	if _, err := srv.NewSession(context.Background(), tmux.SessionSpec{Name: "guard", Dir: t.TempDir(), Argv: []string{"cat"}}); err != nil {
		t.Fatal(err)
	}
	got, _ = st.Tmux(context.Background(), srv.Socket(), binpath.Resolver{})
	if want := filepath.Join(root, running, "tmux"); got.Binary != want || !got.Pending || got.ServerVersion != running {
		t.Errorf("server %s running: %+v, want %s pending", running, got, want)
	}
}

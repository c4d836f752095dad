package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/managed"
)

// appFiles is what Leo.app puts on disk for a marker: its leo, a pinned
// tmux that finds no server, and a PATH directory holding a decoy tmux.
type appFiles struct {
	self, tmuxPath, pathDir string
}

func writeExecutable(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeMarker(t *testing.T, h home.Home) appFiles {
	t.Helper()
	app := t.TempDir()
	a := appFiles{self: filepath.Join(app, "bin", "leo"), tmuxPath: filepath.Join(app, "tmux", "3.6a", "tmux"), pathDir: filepath.Join(app, "path")}
	writeExecutable(t, a.self, "#!/bin/sh\n")
	writeExecutable(t, a.tmuxPath, "#!/bin/sh\necho 'no server running on /tmp/x' >&2\nexit 1\n")
	writeExecutable(t, filepath.Join(a.pathDir, "tmux"), "#!/bin/sh\nexit 1\n")
	data, _ := json.Marshal(map[string]any{
		"version": 1, "launchd_label": "studio.blackpaw.leo.daemon",
		"self_path": a.self, "tmux_path": a.tmuxPath, "env": map[string]string{"PATH": a.pathDir},
	})
	if err := h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.MarkerPath(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return a
}

func defaultTestHome(t *testing.T, e *testEnv) home.Home {
	t.Helper()
	h, err := home.Resolve("", e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// An invalid marker: one warning line on stderr, whatever the command and
// however many times this process reads it; the command runs, and a
// --json command's stdout is still only its object.
func TestInvalidMarkerWarnsOncePerProcessAndRuns(t *testing.T) {
	e := newTestEnv(t)
	h := defaultTestHome(t, e)
	if err := h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.MarkerPath(), []byte(`{"version": 2}`), 0o600); err != nil {
		t.Fatal(err)
	}
	loader := &managed.Loader{}
	set := func(f *Factory) { f.MarkerLoader, f.GOOS = loader, "darwin" }

	r := e.runWith(set, "version", "--json")
	if r.code != ExitOK {
		t.Fatalf("leo version --json with an invalid marker: %+v", r)
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &obj); err != nil {
		t.Errorf("stdout is not one JSON object: %q", r.stdout)
	}
	want := "leo: warning: ignoring the managed-install marker " + h.MarkerPath() + ": version: 2 is not supported (want 1); leo runs unmanaged\n"
	if r.stderr != want {
		t.Errorf("stderr = %q\nwant %q", r.stderr, want)
	}
	for _, args := range [][]string{{"version"}, {"validate"}, {"agent", "list"}} {
		if r := e.runWith(set, args...); strings.Contains(r.stderr, "managed-install marker") {
			t.Errorf("%v warned again in the same process: %q", args, r.stderr)
		}
	}
}

// On Linux a marker, even a good one, is ignored with the warning.
func TestMarkerOnLinuxIsIgnored(t *testing.T) {
	e := newTestEnv(t)
	h := defaultTestHome(t, e)
	a := writeMarker(t, h)
	io, _, _, errOut := TestStreams()
	f := NewFactory(io, e.getenv, "test")
	f.MarkerLoader, f.GOOS = &managed.Loader{}, "linux"
	if st := f.Managed(); st.Status != managed.Invalid {
		t.Fatalf("status %v on linux", st.Status)
	}
	if !strings.Contains(errOut.String(), "managed installs are macOS-only (this is linux)") {
		t.Errorf("stderr = %q", errOut.String())
	}
	if f.LeoBinary() == a.self || f.Resolver().PathFirst != "" {
		t.Error("an ignored marker still steered the binaries")
	}
}

// A valid marker (macOS): the marker's PATH leads every lookup but
// tmux's, self_path is leo's binary, tmux is tmux_path (no server runs,
// so no guard), and attach runs it.
func TestValidMarkerSteersTheCLIsBinaries(t *testing.T) {
	e := newTestEnv(t)
	tools := os.Getenv("PATH") // the test tools (hermetic.Main)
	e.vars["PATH"] = tools
	h := defaultTestHome(t, e)
	a := writeMarker(t, h)
	io, _, _, errOut := TestStreams()
	f := NewFactory(io, e.getenv, "test")
	f.MarkerLoader, f.GOOS = &managed.Loader{}, "darwin"

	if !f.Managed().Managed() || errOut.String() != "" {
		t.Fatalf("valid marker: %+v, stderr %q", f.Managed(), errOut.String())
	}
	if got := f.Resolver().SearchPath(); got != a.pathDir+":"+tools {
		t.Errorf("search PATH = %q", got)
	}
	if f.LeoBinary() != a.self {
		t.Errorf("LeoBinary = %q, want self_path", f.LeoBinary())
	}
	tm, err := f.Tmux(context.Background(), h)
	if err != nil || tm.Binary != a.tmuxPath || tm.Pending || tm.Problem != "" {
		t.Errorf("tmux = %+v %v, want tmux_path (not the marker PATH's decoy)", tm, err)
	}

	call := captureExec(t)
	r := e.runWith(func(f *Factory) { f.MarkerLoader, f.GOOS = &managed.Loader{}, "darwin" }, "attach", "bob")
	if r.code != ExitOK || !call.calledOnce || call.path != a.tmuxPath {
		t.Fatalf("attach: %+v exec %q, want %s", r, call.path, a.tmuxPath)
	}
	if strings.Contains(r.stderr, "warning") {
		t.Errorf("attach warned: %q", r.stderr)
	}
}

// `leo service` with an invalid marker and no leo.yaml behaves unmanaged:
// the seed's refusal, nothing created, and the marker warning once (the
// CLI read it; the daemon did not print it again).
func TestServiceWithInvalidMarkerIsUnmanaged(t *testing.T) {
	e, h := daemonEnv(t)
	os.Remove(h.ConfigPath)
	writeMarker(t, h)
	if err := os.Chmod(h.MarkerPath(), 0o666); err != nil {
		t.Fatal(err)
	}
	r := e.runWith(func(f *Factory) { f.MarkerLoader, f.GOOS = &managed.Loader{}, "darwin" }, "service")
	if r.code != ExitConfig || !strings.HasSuffix(r.stderr, "leo: no leo.yaml found — run 'leo setup' first\n") {
		t.Fatalf("%+v", r)
	}
	if n := strings.Count(r.stderr, "managed-install marker"); n != 1 || !strings.Contains(r.stderr, "group- or world-writable (mode 0666)") {
		t.Errorf("%d marker warnings in %q, want one", n, r.stderr)
	}
	if _, err := os.Stat(h.ConfigPath); err == nil {
		t.Error("an invalid marker's first start created leo.yaml")
	}
}

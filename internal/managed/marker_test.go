package managed

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/blackpaw-studio/leo/internal/home"
)

// fixture is a home, a user HOME and the app's files a marker points at.
type fixture struct {
	h        home.Home
	userHome string
	self     string // absolute path of the app's leo
	tmux     string // absolute path of <root>/3.6a/tmux
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	userHome := t.TempDir()
	h := home.Home{Root: filepath.Join(userHome, ".leo")}
	h.ConfigPath = filepath.Join(h.Root, "leo.yaml")
	if err := h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	f := fixture{h: h, userHome: userHome,
		self: filepath.Join(h.Root, "app", "bin", "leo"),
		tmux: filepath.Join(h.Root, "app", "tmux", "3.6a", "tmux"),
	}
	for _, p := range []string{f.self, f.tmux} {
		writeExe(t, p, "#!/bin/sh\n")
	}
	return f
}

func writeExe(t *testing.T, p, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

func (f fixture) platform() Platform {
	return Platform{GOOS: "darwin", Getenv: func(k string) string {
		if k == "HOME" {
			return f.userHome
		}
		return ""
	}}
}

// good is the spec's example marker, pointing at the fixture's files.
func (f fixture) good() map[string]any {
	return map[string]any{
		"version":       1,
		"manager":       "Leo.app",
		"bundle_id":     "studio.blackpaw.leo.macos",
		"launchd_label": "studio.blackpaw.leo.daemon",
		"self_path":     "~/.leo/app/bin/leo",
		"tmux_path":     "~/.leo/app/tmux/3.6a/tmux",
		"env":           map[string]any{"PATH": "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin"},
	}
}

func (f fixture) write(t *testing.T, data []byte, mode os.FileMode) {
	t.Helper()
	p := f.h.MarkerPath()
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

func (f fixture) writeJSON(t *testing.T, m map[string]any) {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, data, 0o600)
}

func TestReadAbsent(t *testing.T) {
	f := newFixture(t)
	for _, goos := range []string{"darwin", "linux"} {
		st := Read(f.h, Platform{GOOS: goos})
		if st.Status != Absent || st.Managed() || st.Warning() != "" {
			t.Errorf("%s: no marker read as %+v", goos, st)
		}
	}
}

func TestReadValidSpecExample(t *testing.T) {
	f := newFixture(t)
	m := f.good()
	m["some_future_field"] = map[string]any{"x": 1} // unknown fields are ignored
	m["Version"] = 7                                // keys match exactly: this is unknown too
	f.writeJSON(t, m)
	st := Read(f.h, f.platform())
	if st.Status != Valid || !st.Managed() || st.Warning() != "" {
		t.Fatalf("spec example marker: %+v", st)
	}
	got := st.Marker
	if got.SelfPath != f.self || got.TmuxPath != f.tmux {
		t.Errorf("paths not expanded: self %q tmux %q", got.SelfPath, got.TmuxPath)
	}
	if got.LaunchdLabel != "studio.blackpaw.leo.daemon" || got.Manager != "Leo.app" || got.BundleID != "studio.blackpaw.leo.macos" {
		t.Errorf("marker fields: %+v", got)
	}
	if got.PATH() != "/opt/homebrew/bin:/usr/local/bin:/usr/bin:/bin" {
		t.Errorf("PATH = %q", got.PATH())
	}
	if got.TmuxVersion() != "3.6a" || got.TmuxRoot() != filepath.Join(f.h.Root, "app", "tmux") {
		t.Errorf("tmux root/version = %q %q", got.TmuxRoot(), got.TmuxVersion())
	}
}

// One row per validation check of docs/managed-install.md: each turns the
// spec's valid example invalid, and the warning names what failed.
func TestReadInvalidEachCheck(t *testing.T) {
	f := newFixture(t)
	notExe := filepath.Join(f.h.Root, "app", "tmux", "3.5", "tmux")
	writeExe(t, filepath.Join(f.h.Root, "app", "bare", "tmux"), "#!/bin/sh\n")
	writeExe(t, filepath.Join(f.h.Root, "app", "tmux", "3.6a", "tmux3"), "#!/bin/sh\n")
	writeExe(t, filepath.Join(f.h.Root, "app", "tmux", "nover", "tmux"), "#!/bin/sh\n")

	set := func(k string, v any) func(map[string]any) {
		return func(m map[string]any) { m[k] = v }
	}
	del := func(k string) func(map[string]any) {
		return func(m map[string]any) { delete(m, k) }
	}
	cases := []struct {
		name   string
		edit   func(map[string]any)
		raw    string      // the file's bytes instead of the edited example
		mode   os.FileMode // 0 means 0600
		goos   string      // "" means darwin
		wantIn string      // part of the warning
	}{
		{name: "not JSON", raw: "{version: 1", wantIn: "not valid JSON"},
		{name: "trailing garbage", raw: `{"version":1} x`, wantIn: "not valid JSON"},
		{name: "JSON array", raw: `[1]`, wantIn: "not valid JSON"},
		{name: "JSON null", raw: `null`, wantIn: "not a JSON object"},
		{name: "version missing", edit: del("version"), wantIn: "version: missing"},
		{name: "version 2", edit: set("version", 2), wantIn: "version: 2 is not supported"},
		{name: "version 0", edit: set("version", 0), wantIn: "version: 0 is not supported"},
		{name: "version string", edit: set("version", "1"), wantIn: "version: a JSON string"},
		{name: "version float", edit: set("version", 1.5), wantIn: "version:"},
		{name: "self_path missing", edit: del("self_path"), wantIn: "self_path: missing"},
		{name: "self_path relative", edit: set("self_path", "app/bin/leo"), wantIn: "self_path: \"app/bin/leo\" is not absolute"},
		{name: "self_path ~user", edit: set("self_path", "~root/leo"), wantIn: "self_path: \"~root/leo\" is not absolute"},
		{name: "self_path does not exist", edit: set("self_path", "~/.leo/app/bin/nope"), wantIn: "self_path: " + filepath.Join(f.userHome, ".leo/app/bin/nope") + " does not exist"},
		{name: "self_path with a newline that does not exist", edit: set("self_path", "/tmp/no\nsuch\x1b[2J"), wantIn: `self_path: /tmp/no\nsuch\x1b[2J does not exist`},
		{name: "self_path NUL", edit: set("self_path", "/bin/\x00leo"), wantIn: "self_path: contains a NUL byte"},
		{name: "self_path number", edit: set("self_path", 3), wantIn: "self_path: a JSON number"},
		{name: "tmux_path missing", edit: del("tmux_path"), wantIn: "tmux_path: missing"},
		{name: "tmux_path relative", edit: set("tmux_path", "tmux/3.6a/tmux"), wantIn: "tmux_path: \"tmux/3.6a/tmux\" is not absolute"},
		{name: "tmux_path does not exist", edit: set("tmux_path", "~/.leo/app/tmux/3.5/tmux"), wantIn: "tmux_path: " + notExe + " does not exist"},
		{name: "tmux_path not named tmux", edit: set("tmux_path", "~/.leo/app/tmux/3.6a/tmux3"), wantIn: "is not shaped <root>/<version>/tmux"},
		{name: "tmux_path without a version dir", edit: set("tmux_path", "~/.leo/app/bare/tmux"), wantIn: "is not shaped <root>/<version>/tmux"},
		{name: "tmux_path version dir not a version", edit: set("tmux_path", "~/.leo/app/tmux/nover/tmux"), wantIn: "is not shaped <root>/<version>/tmux"},
		{name: "launchd_label missing", edit: del("launchd_label"), wantIn: "launchd_label: missing"},
		{name: "launchd_label one part", edit: set("launchd_label", "leo"), wantIn: "launchd_label: \"leo\" is not reverse-DNS"},
		{name: "launchd_label empty part", edit: set("launchd_label", "studio..leo"), wantIn: "is not reverse-DNS"},
		{name: "launchd_label slash", edit: set("launchd_label", "studio.blackpaw/leo"), wantIn: "is not reverse-DNS"},
		{name: "launchd_label space", edit: set("launchd_label", "studio.black paw"), wantIn: "is not reverse-DNS"},
		{name: "launchd_label control byte", edit: set("launchd_label", "studio.leo\n.x"), wantIn: "is not reverse-DNS"},
		{name: "launchd_label trailing dot", edit: set("launchd_label", "studio.leo."), wantIn: "is not reverse-DNS"},
		{name: "launchd_label hyphen edge", edit: set("launchd_label", "studio.-leo"), wantIn: "is not reverse-DNS"},
		{name: "launchd_label too long", edit: set("launchd_label", "a."+strings.Repeat("b.", 130)+"c"), wantIn: "at most 255"},
		{name: "launchd_label is the CLI's", edit: set("launchd_label", "com.blackpaw.leo"), wantIn: "is the CLI install's own label"},
		{name: "launchd_label is the CLI's, other case", edit: set("launchd_label", "COM.Blackpaw.Leo"), wantIn: "is the CLI install's own label"},
		{name: "env empty key", edit: set("env", map[string]any{"PATH": "/bin", "": "x"}), wantIn: "env: an empty key"},
		{name: "env key with =", edit: set("env", map[string]any{"PATH": "/bin", "A=B": "x"}), wantIn: "env: key \"A=B\""},
		{name: "env key with NUL", edit: set("env", map[string]any{"PATH": "/bin", "A\x00": "x"}), wantIn: "env: key \"A\\x00\""},
		{name: "env value with NUL", edit: set("env", map[string]any{"PATH": "/bin", "TOKEN": "sec\x00ret"}), wantIn: "env: the value of \"TOKEN\" contains a NUL byte"},
		{name: "env value not a string", edit: set("env", map[string]any{"PATH": "/bin", "N": 3}), wantIn: "env: the value of \"N\" is not a string"},
		{name: "env not an object", edit: set("env", []string{"PATH=/bin"}), wantIn: "env: a JSON array"},
		{name: "group-writable", mode: 0o620, wantIn: "group- or world-writable (mode 0620)"},
		{name: "world-writable", mode: 0o602, wantIn: "group- or world-writable (mode 0602)"},
		{name: "group- and world-writable", mode: 0o666, wantIn: "group- or world-writable (mode 0666)"},
		{name: "linux", goos: "linux", wantIn: "managed installs are macOS-only (this is linux)"},
		{name: "freebsd", goos: "freebsd", wantIn: "macOS-only"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.raw)
			if tc.raw == "" {
				m := f.good()
				if tc.edit != nil {
					tc.edit(m)
				}
				var err error
				if data, err = json.Marshal(m); err != nil {
					t.Fatal(err)
				}
			}
			mode := tc.mode
			if mode == 0 {
				mode = 0o600
			}
			f.write(t, data, mode)
			p := f.platform()
			if tc.goos != "" {
				p.GOOS = tc.goos
			}
			st := Read(f.h, p)
			if st.Status != Invalid || st.Managed() {
				t.Fatalf("status = %v, want invalid (problem %q)", st.Status, st.Problem)
			}
			w := st.Warning()
			if !strings.Contains(w, tc.wantIn) || !strings.HasPrefix(w, "ignoring the managed-install marker "+f.h.MarkerPath()+": ") || !strings.HasSuffix(w, "; leo runs unmanaged") {
				t.Errorf("warning %q, want it to contain %q", w, tc.wantIn)
			}
			if strings.Contains(w, "sec") || strings.ContainsAny(w, "\n\x00") {
				t.Errorf("warning leaks an env value or breaks the line: %q", w)
			}
		})
	}
}

// The same file read as valid with the good bits, so the table's rows fail
// for their one reason only; owner-writable and read-only modes are fine.
func TestReadModesThatAreFine(t *testing.T) {
	f := newFixture(t)
	for _, mode := range []os.FileMode{0o600, 0o644, 0o400, 0o755} {
		data, _ := json.Marshal(f.good())
		f.write(t, data, mode)
		if st := Read(f.h, f.platform()); st.Status != Valid {
			t.Errorf("mode %04o: %v %q", mode, st.Status, st.Problem)
		}
	}
}

func TestReadHostileFiles(t *testing.T) {
	f := newFixture(t)
	p := f.h.MarkerPath()

	// A directory where the marker should be is invalid, never absent.
	if err := os.Mkdir(p, 0o700); err != nil {
		t.Fatal(err)
	}
	if st := Read(f.h, f.platform()); st.Status != Invalid || !strings.Contains(st.Problem, "not a regular file") {
		t.Errorf("directory marker: %v %q", st.Status, st.Problem)
	}
	os.Remove(p)

	// A FIFO must not hang the reader.
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if st := Read(f.h, f.platform()); st.Status != Invalid || !strings.Contains(st.Problem, "not a regular file") {
		t.Errorf("fifo marker: %v %q", st.Status, st.Problem)
	}
	os.Remove(p)

	// Huge input is refused without reading it all.
	big := append([]byte(`{"version":1,"x":"`), bytes.Repeat([]byte("a"), maxMarkerBytes)...)
	f.write(t, append(big, '"', '}'), 0o600)
	if st := Read(f.h, f.platform()); st.Status != Invalid || !strings.Contains(st.Problem, "larger than") {
		t.Errorf("huge marker: %v %q", st.Status, st.Problem)
	}

	// Unreadable: invalid, not absent.
	if os.Geteuid() != 0 {
		data, _ := json.Marshal(f.good())
		f.write(t, data, 0o000)
		if st := Read(f.h, f.platform()); st.Status != Invalid || !strings.Contains(st.Problem, "cannot read it") {
			t.Errorf("unreadable marker: %v %q", st.Status, st.Problem)
		}
	}
}

// A symlinked marker is judged by the file it points at, mode included.
func TestReadSymlinkFollowsTarget(t *testing.T) {
	f := newFixture(t)
	target := filepath.Join(f.h.Root, "real.json")
	data, _ := json.Marshal(f.good())
	if err := os.WriteFile(target, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(target, 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, f.h.MarkerPath()); err != nil {
		t.Fatal(err)
	}
	if st := Read(f.h, f.platform()); st.Status != Invalid || !strings.Contains(st.Problem, "world-writable") {
		t.Errorf("symlink to a world-writable file: %v %q", st.Status, st.Problem)
	}
}

// A symlink to nothing is an unreadable marker, never an absent one: handover
// --to-cli takes its recovery path only when there is no marker at all.
func TestReadDanglingSymlinkIsInvalid(t *testing.T) {
	f := newFixture(t)
	if err := os.Symlink(filepath.Join(f.h.Root, "gone.json"), f.h.MarkerPath()); err != nil {
		t.Fatal(err)
	}
	st := Read(f.h, f.platform())
	if st.Status != Invalid || !strings.Contains(st.Problem, "symlink to a file that does not exist") {
		t.Errorf("dangling symlink marker: %v %q", st.Status, st.Problem)
	}
}

func TestValidLabel(t *testing.T) {
	for _, ok := range []string{"studio.blackpaw.leo.daemon", "com.example", "a1.b-2.C3", "com.blackpaw.leo.app"} {
		if err := ValidLabel(ok); err != nil {
			t.Errorf("ValidLabel(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "leo", ".com.x", "com..x", "com.x.", "com.bl_ack", "com.x\x00", "com.blackpaw.leo", "-a.b"} {
		if err := ValidLabel(bad); err == nil {
			t.Errorf("ValidLabel(%q) accepted", bad)
		}
	}
}

// The warning is printed once per Loader, however often and from however
// many goroutines the marker is read; valid and absent markers print
// nothing.
func TestLoaderWarnsOnce(t *testing.T) {
	f := newFixture(t)
	var l Loader
	var buf syncBuffer
	if st := l.Load(f.h, f.platform(), &buf); st.Status != Absent || buf.String() != "" {
		t.Fatalf("absent: %v %q", st.Status, buf.String())
	}
	f.writeJSON(t, f.good())
	if st := l.Load(f.h, f.platform(), &buf); st.Status != Valid || buf.String() != "" {
		t.Fatalf("valid: %v %q", st.Status, buf.String())
	}
	f.write(t, []byte("{"), 0o600)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if st := l.Load(f.h, f.platform(), &buf); st.Status != Invalid {
					t.Errorf("status %v", st.Status)
				}
			}
		}()
	}
	wg.Wait()
	out := buf.String()
	if strings.Count(out, "\n") != 1 || !strings.HasPrefix(out, "leo: warning: ignoring the managed-install marker ") {
		t.Errorf("stderr after 200 reads = %q, want exactly one warning line", out)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The process-wide Load: a child process reads an invalid marker many
// times (as the CLI and then the daemon it runs do) and prints one line.
func TestLoadOncePerProcess(t *testing.T) {
	if dir := os.Getenv("LEO_MANAGED_TEST_HOME"); dir != "" {
		h := home.Home{Root: dir}
		for range 50 {
			Load(h, Platform{GOOS: "linux"}, os.Stderr)
		}
		return
	}
	f := newFixture(t)
	f.writeJSON(t, f.good()) // valid on macOS, ignored on Linux with one warning
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoadOncePerProcess$")
	cmd.Env = append(os.Environ(), "LEO_MANAGED_TEST_HOME="+f.h.Root)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("child: %v\n%s\n%s", err, out, stderr.String())
	}
	want := "leo: warning: ignoring the managed-install marker " + f.h.MarkerPath() + ": managed installs are macOS-only (this is linux); leo runs unmanaged\n"
	if stderr.String() != want {
		t.Errorf("child stderr = %q\nwant %q", stderr.String(), want)
	}
}

package realcli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

func TestSetupWritesEachHarnessFiles(t *testing.T) {
	home := t.TempDir()
	for _, h := range Harnesses {
		if err := Setup(h, home, "http://127.0.0.1:1"); err != nil {
			t.Fatalf("Setup(%s): %v", h, err)
		}
	}
	if err := Trust("claude", home, "/w"); err != nil {
		t.Fatal(err)
	}
	claude, _ := os.ReadFile(filepath.Join(home, ".claude.json"))
	for _, want := range []string{`"hasCompletedOnboarding": true`, `"` + last20(APIKey) + `"`, `"hasTrustDialogAccepted": true`} {
		if !bytes.Contains(claude, []byte(want)) {
			t.Errorf(".claude.json lacks %s:\n%s", want, claude)
		}
	}
	codex, _ := os.ReadFile(filepath.Join(home, ".codex", "config.toml"))
	for _, want := range []string{`model_provider = "leotest"`, `base_url = "http://127.0.0.1:1/v1"`, `wire_api = "responses"`, `env_key = "LEOTEST_API_KEY"`} {
		if !bytes.Contains(codex, []byte(want)) {
			t.Errorf("config.toml lacks %s:\n%s", want, codex)
		}
	}
	oc, _ := os.ReadFile(filepath.Join(home, ".config", "opencode", "opencode.json"))
	for _, want := range []string{`"baseURL": "http://127.0.0.1:1/v1"`, `"model": "leotest/leo-test-model"`, `"@ai-sdk/openai-compatible"`} {
		if !bytes.Contains(oc, []byte(want)) {
			t.Errorf("opencode.json lacks %s:\n%s", want, oc)
		}
	}
	pi, _ := os.ReadFile(filepath.Join(home, ".pi", "agent", "models.json"))
	for _, want := range []string{`"baseUrl": "http://127.0.0.1:1/v1"`, `"api": "openai-completions"`, `"id": "leo-test-model"`} {
		if !bytes.Contains(pi, []byte(want)) {
			t.Errorf("pi's models.json lacks %s:\n%s", want, pi)
		}
	}
	if err := Setup("nope", home, ""); err == nil {
		t.Error("Setup of an unknown harness succeeded")
	}
}

func TestVersionsFileParses(t *testing.T) {
	v, err := Versions("versions.env")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range CLIs {
		k := c.VersionKey
		if v[k] == "" {
			t.Errorf("versions.env has no %s", k)
		}
	}
}

// realBin returns the CLIs' directory or skips: these tests prove the
// environment above against the real CLIs when they are installed (run by
// hand with LEO_REALCLI_BIN set; LEO_REALCLI_REQUIRED=1 turns the skip into
// a failure). The contract suite that make test-real runs is e2e/real, which
// fails, never skips, without the CLIs.
func realBin(t *testing.T) string {
	t.Helper()
	dir, err := BinDir()
	if err != nil {
		if os.Getenv("LEO_REALCLI_REQUIRED") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return dir
}

// world is one isolated home and workspace for a real CLI, against its own
// model server; its processes are killed at the end (codex's background
// app-server, which outlives its TUI, is found by its CODEX_HOME).
type world struct {
	t    *testing.T
	h    string
	bin  string
	home string
	ws   string
	ms   *modelserver.Server
	env  []string
}

func newWorld(t *testing.T, h string) *world {
	bin := realBin(t)
	w := &world{t: t, h: h, bin: bin, ms: modelserver.Start(t)}
	w.home = testutil.ShortTempDir(t, "rc-home-")
	w.ws = filepath.Join(w.home, "ws")
	if err := os.MkdirAll(w.ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Setup(h, w.home, w.ms.URL); err != nil {
		t.Fatal(err)
	}
	if err := Trust(h, w.home, w.ws); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": testutil.ToolPATH(t, bin), "TERM": "xterm-256color", "LANG": "C.UTF-8"}
	for k, v := range Dirs(w.home) {
		env[k] = v
	}
	hv, _ := Env(h, w.ms.URL)
	for k, v := range hv {
		env[k] = v
	}
	for k, v := range env {
		w.env = append(w.env, k+"="+v)
	}
	sort.Strings(w.env)
	t.Cleanup(func() { KillUnder(w.home) })
	return w
}

func (w *world) headlessArgv(msg string) []string {
	c, err := Lookup(w.h)
	if err != nil {
		w.t.Fatal(err)
	}
	return c.Headless(msg)
}

func TestHeadlessTurn(t *testing.T) {
	for _, h := range Harnesses {
		t.Run(h, func(t *testing.T) {
			w := newWorld(t, h)
			marker := "LEO-hl-" + h
			argv := w.headlessArgv("say hello " + marker + " please")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, filepath.Join(w.bin, argv[0]), argv[1:]...)
			cmd.Dir, cmd.Env, cmd.Stdin = w.ws, w.env, nil
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
			}
			if !bytes.Contains(out, []byte("ACK "+marker)) {
				t.Fatalf("no ACK %s in the output:\n%s", marker, out)
			}
			if got := modelserver.WithMarker(w.ms.Requests(), marker); len(got) != 1 {
				t.Fatalf("%d turns with %s: %s", len(got), marker, modelserver.Summary(w.ms.Requests()))
			}
		})
	}
}

func TestTUITurnInTmux(t *testing.T) {
	for _, h := range Harnesses {
		t.Run(h, func(t *testing.T) {
			w := newWorld(t, h)
			sock := testutil.UniqueSocket()
			tm := func(stdin string, args ...string) (string, error) {
				cmd := exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...)
				cmd.Env = append(w.env, "TMUX=")
				if stdin != "" {
					cmd.Stdin = strings.NewReader(stdin)
				}
				out, err := cmd.CombinedOutput()
				return string(out), err
			}
			if out, err := tm("", "new-session", "-d", "-s", "a", "-x", "120", "-y", "40", "-c", w.ws, "--", filepath.Join(w.bin, h)); err != nil {
				t.Fatalf("new-session: %v %s", err, out)
			}
			t.Cleanup(func() {
				pid, _ := tm("", "display-message", "-p", "-t", "a", "#{pane_pid}")
				_, _ = tm("", "kill-server")
				var p int
				if _, err := fmt.Sscan(pid, &p); err == nil && p > 0 {
					_ = syscall.Kill(p, syscall.SIGKILL) // opencode ignores the hangup
				}
			})
			screen := func() string { s, _ := tm("", "capture-pane", "-p", "-J", "-t", "a"); return s }
			waitScreen := func(what string, d time.Duration) {
				t.Helper()
				deadline := time.Now().Add(d)
				for !strings.Contains(screen(), what) {
					if time.Now().After(deadline) {
						t.Fatalf("no %q on the screen within %v:\n%s", what, d, screen())
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
			start := time.Now()
			waitScreen(ReadyText[h], 3*time.Minute)
			t.Logf("%s ready after %v", h, time.Since(start).Round(time.Millisecond))
			marker := "LEO-tui-" + h
			if out, err := tm("say hi "+marker+" please", "load-buffer", "-b", "m", "-"); err != nil {
				t.Fatal(err, out)
			}
			if out, err := tm("", "paste-buffer", "-p", "-d", "-b", "m", "-t", "a"); err != nil {
				t.Fatal(err, out)
			}
			// The paste may not show at once (codex holds it while its
			// background server starts); Enter goes after it shows or 10 s.
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(screen(), marker) && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
			time.Sleep(300 * time.Millisecond) // codex reads Enter within 120 ms of a paste as a newline
			if out, err := tm("", "send-keys", "-t", "a", "Enter"); err != nil {
				t.Fatal(err, out)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			if _, err := w.ms.WaitTurn(ctx, marker); err != nil {
				t.Fatalf("%v\nscreen:\n%s", err, screen())
			}
			waitScreen("ACK "+marker, time.Minute)
			t.Logf("%s turn done %v after start; requests: %s", h, time.Since(start).Round(time.Millisecond), modelserver.Summary(w.ms.Requests()))
		})
	}
}

// Command capturesignals records what leo's opencode plugin sends leo's
// hook, and what opencode's TUI shows while it asks a person, for the
// adapter's ParseSignal and screen tests:
//
//	go run ./e2e/realcli/cmd/capturesignals -bin "$LEO_REALCLI_BIN"
//
// The real opencode runs in a private tmux server against the test model
// server, launched as leo launches it (the adapter's Interactive and
// TurnEndSignal: permission {bash: ask} and leo's own plugin in
// OPENCODE_CONFIG_CONTENT), the plugin's command being this program, which
// keeps each payload. The turns, in order:
//
//	once     a bash tool call; its prompt answered Enter (Allow once)  LEO-sig-1
//	reject   a bash tool call; its prompt answered Escape (Reject)     LEO-sig-2
//	always   a bash tool call; Right, Enter (Allow always), Enter       LEO-sig-3
//	refused  answered HTTP 400                                          LEO-sig-4
//	limited  answered HTTP 429 until opencode gives up                  LEO-sig-5
//	question a question tool call; answered Enter (its first option)    LEO-sig-6
//
// The prompt of the first is captured at each -sizes (the pane resized
// while it shows) to testdata/screens/opencode/dialog-permission_<size>_v<version>.txt,
// the question's too (dialog-question_…), the always stage's to
// dialog-permission-always_…; the payloads go to
// internal/harness/opencode/testdata/signals/<turn>-<n>-<type>_v<version>.json.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/opencode"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "record" {
		record(os.Args[2])
		return
	}
	bin := flag.String("bin", os.Getenv(realcli.BinDirEnv), "`dir` holding opencode")
	sizes := flag.String("sizes", "80x24,120x40,200x50,100x120", "pane sizes WxH the prompt is captured at (the first is the TUI's)")
	screens := flag.String("screens", "testdata/screens/opencode", "screen fixtures `dir` (run from the repo root)")
	payloads := flag.String("payloads", "internal/harness/opencode/testdata/signals", "payloads `dir`")
	only := flag.String("turns", "", "comma list of turns (default all)")
	flag.Parse()
	if err := run(*bin, strings.Split(*sizes, ","), *screens, *payloads, *only); err != nil {
		log.Fatal(err)
	}
}

// record is the plugin's command: it keeps stdin in dir, named by when it
// came (the plugin runs its commands one after another).
func record(dir string) {
	data, _ := io.ReadAll(io.LimitReader(os.Stdin, 4<<20))
	_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%020d.json", time.Now().UnixNano())), data, 0o600)
}

// questionCall is the question tool's arguments of the question turn.
const questionCall = `{"questions":[{"header":"File","question":"Which file should I create?","options":[{"label":"alpha.txt","description":"The first file"},{"label":"beta.txt","description":"The second file"}]}]}`

// bashCall is the tool call each prompt turn answers with.
func bashCall(file string) *modelserver.ToolCall {
	return &modelserver.ToolCall{Name: "bash", Input: fmt.Sprintf(`{"command":"touch %s","description":"Create the file %s"}`, file, file)}
}

func run(bin string, sizes []string, screensDir, payloadsDir, only string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	v, err := realcli.InstalledVersion(filepath.Join(bin, "opencode"))
	if err != nil {
		return err
	}
	version := regexp.MustCompile(`\d+\.\d+\.\d+`).FindString(v)
	ms, err := modelserver.New()
	if err != nil {
		return err
	}
	defer ms.Close()
	ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if q.Side || len(q.Markers) == 0 {
			return modelserver.DefaultResponder(q)
		}
		m := q.Markers[len(q.Markers)-1]
		switch m {
		case "LEO-sig-1", "LEO-sig-2", "LEO-sig-3":
			if len(q.ToolResults) == 0 {
				return modelserver.Reply{ToolCall: bashCall("leo-" + strings.TrimPrefix(m, "LEO-") + ".txt")}
			}
			return modelserver.Reply{Text: "ACK " + m + " the file is there"}
		case "LEO-sig-4":
			return modelserver.Reply{Status: http.StatusBadRequest}
		case "LEO-sig-5":
			return modelserver.Reply{Status: http.StatusTooManyRequests}
		case "LEO-sig-6":
			if len(q.ToolResults) == 0 {
				return modelserver.Reply{ToolCall: &modelserver.ToolCall{Name: "question", Input: questionCall}}
			}
			return modelserver.Reply{Text: "ACK " + m + " answered"}
		}
		return modelserver.DefaultResponder(q)
	})
	c, err := realcli.NewCapture("opencode", bin, ms.URL, "capsig")
	if err != nil {
		return err
	}
	defer c.Close()
	spool := filepath.Join(c.Home, "spool")
	if err := os.MkdirAll(spool, 0o700); err != nil {
		return err
	}
	// The launch leo makes: the adapter's command, then its plugin.
	ad := opencode.Opencode{}
	spec := harness.LaunchSpec{Workspace: c.Workspace, Options: harness.Options{"permission": map[string]any{"bash": "ask"}}}
	cmd, err := ad.Interactive(spec)
	if err != nil {
		return err
	}
	cmd, err = ad.TurnEndSignal(context.Background(), spec, cmd, harness.TurnEndHook{Command: []string{self, "record", spool}, Dir: filepath.Join(c.Home, "hooks")})
	if err != nil {
		return err
	}
	w, h, _ := strings.Cut(sizes[0], "x")
	args := []string{"new-session", "-d", "-s", "a", "-x", w, "-y", h, "-c", c.Workspace}
	for k, val := range cmd.Env {
		args = append(args, "-e", k+"="+val)
	}
	args = append(args, "--", filepath.Join(bin, "opencode"))
	args = append(args, cmd.Argv[1:]...)
	tm := c.Tmux
	if o, err := tm("", args...); err != nil {
		return fmt.Errorf("new-session: %v %s", err, o)
	}
	r := ad.Screen()
	screen := c.Screen
	t0 := time.Now()
	note := func(format string, a ...any) {
		log.Printf("%8.3fs %s", time.Since(t0).Seconds(), fmt.Sprintf(format, a...))
	}
	waitFor := func(what string, d time.Duration, cond func(harness.Screen, string) bool) (string, error) {
		deadline := time.Now().Add(d)
		for {
			s := screen()
			if cond(r.Classify(s), s) {
				note("%s", what)
				return s, nil
			}
			if time.Now().After(deadline) {
				return s, fmt.Errorf("%s: not seen within %s:\n%s", what, d, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// stable waits for cond to hold on a screen that stays the same a second.
	stable := func(what string, d time.Duration, cond func(string) bool) (string, error) {
		deadline := time.Now().Add(d)
		last, since := "", time.Now()
		for {
			s := screen()
			if s != last {
				last, since = s, time.Now()
			}
			if cond(s) && time.Since(since) >= time.Second {
				note("%s", what)
				return s, nil
			}
			if time.Now().After(deadline) {
				return s, fmt.Errorf("%s: not seen within %s:\n%s", what, d, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	idle := func(s harness.Screen, _ string) bool { return s.State == harness.ScreenReady && s.Input == "" }
	if _, err := waitFor("ready", 3*time.Minute, idle); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // let a first start finish drawing
	keys := func(k ...string) error {
		if o, err := tm("", append([]string{"send-keys", "-t", "a"}, k...)...); err != nil {
			return fmt.Errorf("send-keys: %v %s", err, o)
		}
		note("keys %v", k)
		return nil
	}
	submit := func(text string) error {
		if o, err := tm(text, "load-buffer", "-b", "m", "-"); err != nil {
			return fmt.Errorf("load-buffer: %v %s", err, o)
		}
		if o, err := tm("", "paste-buffer", "-p", "-d", "-b", "m", "-t", "a"); err != nil {
			return fmt.Errorf("paste-buffer: %v %s", err, o)
		}
		if _, err := waitFor("pasted", 20*time.Second, func(s harness.Screen, _ string) bool { return r.Landed(s, text) }); err != nil {
			return err
		}
		return keys("Enter")
	}
	saveScreen := func(name, size, s string) error {
		p := filepath.Join(screensDir, fmt.Sprintf("%s_%s_v%s.txt", name, size, version))
		note("%s: %+v", p, r.Classify(s))
		return os.WriteFile(p, []byte(s), 0o644)
	}
	resize := func(size string) error {
		w, h, _ := strings.Cut(size, "x")
		if o, err := tm("", "resize-window", "-t", "a", "-x", w, "-y", h); err != nil {
			return fmt.Errorf("resize-window: %v %s", err, o)
		}
		return nil
	}
	// atSizes saves the screen as name once cond holds, at each size (the
	// pane resized), and goes back to the first size.
	atSizes := func(name string, cond func(string) bool) error {
		for _, size := range sizes {
			if err := resize(size); err != nil {
				return err
			}
			w, _, _ := strings.Cut(size, "x")
			s, err := stable(name+" at "+size, time.Minute, func(s string) bool { return cond(s) && paneWidth(tm) == w })
			if err != nil {
				return err
			}
			if err := saveScreen(name, size, s); err != nil {
				return err
			}
		}
		if err := resize(sizes[0]); err != nil {
			return err
		}
		_, err := stable(name+" again at "+sizes[0], 20*time.Second, cond)
		return err
	}
	asked := func(s string) bool { return strings.Contains(s, "Permission required") }
	// payloads moves what the plugin sent since the last call to the
	// payloads dir, named after turn.
	payloads := func(turn string) error {
		// The plugin's last command may still be starting.
		time.Sleep(2 * time.Second)
		ents, err := os.ReadDir(spool)
		if err != nil {
			return err
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		sort.Strings(names)
		for i, n := range names {
			data, err := os.ReadFile(filepath.Join(spool, n))
			if err != nil {
				return err
			}
			var p struct {
				Type       string `json:"type"`
				Properties struct {
					Status struct {
						Type string `json:"type"`
					} `json:"status"`
				} `json:"properties"`
			}
			_ = json.Unmarshal(data, &p)
			kind := p.Type
			if p.Properties.Status.Type != "" {
				kind += "-" + p.Properties.Status.Type
			}
			out := filepath.Join(payloadsDir, fmt.Sprintf("%s-%d-%s_v%s.json", turn, i+1, kind, version))
			note("%s", out)
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return err
			}
			if err := os.Remove(filepath.Join(spool, n)); err != nil {
				return err
			}
		}
		return nil
	}
	want := func(turn string) bool { return only == "" || slices.Contains(strings.Split(only, ","), turn) }
	ctx := context.Background()
	waitTurn := func(marker string) error {
		c, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_, err := ms.WaitTurn(c, marker)
		return err
	}
	if want("once") {
		if err := submit("Please create leo-sig-1.txt LEO-sig-1"); err != nil {
			return err
		}
		if err := atSizes("dialog-permission", asked); err != nil {
			return err
		}
		if err := keys("Enter"); err != nil {
			return err
		}
		if _, err := waitFor("idle after LEO-sig-1", 2*time.Minute, func(s harness.Screen, raw string) bool {
			return idle(s, raw) && strings.Contains(raw, "ACK LEO-sig-1")
		}); err != nil {
			return err
		}
		if err := payloads("once"); err != nil {
			return err
		}
	}
	if want("reject") {
		if err := submit("Please create leo-sig-2.txt LEO-sig-2"); err != nil {
			return err
		}
		if _, err := stable("asked LEO-sig-2", time.Minute, asked); err != nil {
			return err
		}
		if err := keys("Escape"); err != nil {
			return err
		}
		s, err := stable("idle after the reject", 2*time.Minute, func(s string) bool { return idle(r.Classify(s), s) && !asked(s) })
		if err != nil {
			return err
		}
		if err := saveScreen("ready-after-reject", sizes[0], s); err != nil {
			return err
		}
		if err := payloads("reject"); err != nil {
			return err
		}
	}
	if want("always") {
		if err := submit("Please create leo-sig-3.txt LEO-sig-3"); err != nil {
			return err
		}
		if _, err := stable("asked LEO-sig-3", time.Minute, asked); err != nil {
			return err
		}
		if err := keys("Right"); err != nil {
			return err
		}
		s, err := stable("always selected", 10*time.Second, asked)
		if err != nil {
			return err
		}
		if err := saveScreen("dialog-permission-always-selected", sizes[0], s); err != nil {
			return err
		}
		if err := keys("Enter"); err != nil {
			return err
		}
		s, err = stable("always stage", 10*time.Second, func(s string) bool { return strings.Contains(s, "Always allow") })
		if err != nil {
			return err
		}
		if err := saveScreen("dialog-permission-always", sizes[0], s); err != nil {
			return err
		}
		if err := keys("Enter"); err != nil {
			return err
		}
		if _, err := waitFor("idle after LEO-sig-3", 2*time.Minute, func(s harness.Screen, raw string) bool {
			return idle(s, raw) && strings.Contains(raw, "ACK LEO-sig-3")
		}); err != nil {
			return err
		}
		if err := payloads("always"); err != nil {
			return err
		}
	}
	if want("refused") {
		if err := submit("This one is refused LEO-sig-4"); err != nil {
			return err
		}
		if err := waitTurn("LEO-sig-4"); err != nil {
			return err
		}
		if _, err := stable("idle after LEO-sig-4", 2*time.Minute, func(s string) bool { return idle(r.Classify(s), s) }); err != nil {
			return err
		}
		if err := payloads("refused"); err != nil {
			return err
		}
	}
	if want("limited") {
		if err := submit("This one is rate limited LEO-sig-5"); err != nil {
			return err
		}
		if err := waitTurn("LEO-sig-5"); err != nil {
			return err
		}
		// opencode retries five times, backing off from 2 s.
		if _, err := stable("idle after LEO-sig-5", 4*time.Minute, func(s string) bool { return idle(r.Classify(s), s) }); err != nil {
			return err
		}
		if err := payloads("limited"); err != nil {
			return err
		}
	}
	if want("question") {
		if err := submit("Ask me which file LEO-sig-6"); err != nil {
			return err
		}
		shown := func(s string) bool {
			return strings.Contains(s, "Which file should I create?") && !idle(r.Classify(s), s)
		}
		if err := atSizes("dialog-question", shown); err != nil {
			return err
		}
		for i := 0; shown(screen()) && i < 3; i++ {
			if err := keys("Enter"); err != nil {
				return err
			}
			s, _ := stable("after Enter", 10*time.Second, func(string) bool { return true })
			if shown(s) {
				if err := saveScreen(fmt.Sprintf("dialog-question-%d", i+1), sizes[0], s); err != nil {
					return err
				}
			}
		}
		if _, err := waitFor("idle after LEO-sig-6", 2*time.Minute, func(s harness.Screen, raw string) bool {
			return idle(s, raw) && strings.Contains(raw, "ACK LEO-sig-6")
		}); err != nil {
			return err
		}
		if err := payloads("question"); err != nil {
			return err
		}
	}
	note("requests: %s", modelserver.Summary(ms.Requests()))
	return nil
}

// paneWidth is pane a's width as tmux says.
func paneWidth(tm func(string, ...string) (string, error)) string {
	o, _ := tm("", "display-message", "-p", "-t", "a", "#{pane_width}")
	return strings.TrimSpace(o)
}

// Command capturescreens records what the real TUIs draw for input they
// redraw differently from what was pasted (a skin-tone modifier, a
// decomposed accent, a tab, leading spaces) and what they show after a turn
// the model server answered HTTP 429, for the screen readers' fixtures:
//
//	go run ./e2e/realcli/cmd/capturescreens -bin "$LEO_REALCLI_BIN" -harness claude [-size 120x40]
//
// Each capture (tmux capture-pane -p -J, as leo reads a pane) goes to
// testdata/screens/<h>/<scenario>_<size>_v<version>.txt. A paste is never
// submitted: it is captured once the screen stops changing, then cleared
// with the keys the log names (the first of clearKeys that empties the
// line). The 429 turn is answered 429 for every turn request until its
// error shows, then the server answers normally again.
//
// With -scenario permission-bash (claude) it captures claude's permission
// prompt, and the hook payloads around it, instead (permission.go).
// With -scenario approval (codex) it captures codex's approval prompt for
// a shell command instead (approval.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/harness"
	_ "github.com/blackpaw-studio/leo/internal/harness/all"
	"github.com/blackpaw-studio/leo/internal/harness/harnesstest"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// reader is the screen reader of harness h's adapter.
func reader(h string) (harness.ScreenReader, bool) {
	a, ok := harness.Lookup(h)
	if !ok {
		return nil, false
	}
	return a.Screen(), true
}

// pastes are the inputs captured in the input line, by scenario name
// (harnesstest.RedrawnPastes: the adapters' tests read the same table).
var pastes = func() []struct{ name, text, marker string } {
	var out []struct{ name, text, marker string }
	for name, text := range harnesstest.RedrawnPastes {
		f := strings.Fields(text)
		out = append(out, struct{ name, text, marker string }{name, text, f[len(f)-1]})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}()

// clearKeys are tried in order to empty the input line after a capture.
var clearKeys = [][]string{{"C-u"}, {"C-u", "C-u", "C-u"}, {"Escape", "Escape"}}

func main() {
	bin := flag.String("bin", os.Getenv(realcli.BinDirEnv), "`dir` holding claude, codex, opencode")
	h := flag.String("harness", "claude", "harness")
	size := flag.String("size", "120x40", "pane size WxH")
	out := flag.String("out", "testdata/screens", "fixtures `dir` (run from the repo root)")
	only := flag.String("scenario", "", "comma list of scenarios (default all, and ready-after-429)")
	flag.Parse()
	if *only == permissionScenario {
		if *h != "claude" {
			log.Fatalf("-scenario %s: claude only", permissionScenario)
		}
		if err := runPermission(*bin, *size, *out); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := run(*bin, *h, *size, *out, *only); err != nil {
		log.Fatal(err)
	}
}

func run(bin, h, size, out, only string) error {
	if only == questionScenario {
		if h != "claude" {
			return fmt.Errorf("-scenario %s: claude only", questionScenario)
		}
		return runQuestion(bin, size, out)
	}
	if only == approvalScenario {
		if h != "codex" {
			return fmt.Errorf("-scenario %s: codex only", approvalScenario)
		}
		return runApproval(bin, size, out)
	}
	r, ok := reader(h)
	if !ok {
		return fmt.Errorf("-harness %q: not one of claude, codex, opencode", h)
	}
	v, err := realcli.InstalledVersion(filepath.Join(bin, h))
	if err != nil {
		return err
	}
	version := regexp.MustCompile(`\d+\.\d+\.\d+`).FindString(v)
	ms, err := modelserver.New()
	if err != nil {
		return err
	}
	defer ms.Close()
	var limited atomic.Bool
	ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if limited.Load() && !q.Side {
			return modelserver.Reply{Status: http.StatusTooManyRequests}
		}
		return modelserver.DefaultResponder(q)
	})
	c, err := realcli.NewCapture(h, bin, ms.URL, "capscr")
	if err != nil {
		return err
	}
	defer c.Close()
	tm := c.Tmux
	w, hh, _ := strings.Cut(size, "x")
	if err := c.Start(w, hh, filepath.Join(bin, h)); err != nil {
		return err
	}
	screen := c.Screen
	// stable waits until cond holds and the screen stays the same for a second.
	stable := func(what string, d time.Duration, cond func(string) bool) (string, error) {
		deadline := time.Now().Add(d)
		last, since := "", time.Now()
		for {
			s := screen()
			if s != last {
				last, since = s, time.Now()
			}
			if cond(s) && time.Since(since) >= time.Second {
				return s, nil
			}
			if time.Now().After(deadline) {
				return s, fmt.Errorf("%s: not seen within %s:\n%s", what, d, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	ready := func(s string) bool { return r.Classify(s).State == harness.ScreenReady }
	if _, err := stable("ready", 3*time.Minute, ready); err != nil {
		return err
	}
	save := func(name, s string) error {
		p := filepath.Join(out, h, fmt.Sprintf("%s_%s_v%s.txt", name, size, version))
		log.Printf("%s: %+v", p, r.Classify(s))
		return os.WriteFile(p, []byte(s), 0o644)
	}
	paste := func(text string) error {
		if o, err := tm(text, "load-buffer", "-b", "m", "-"); err != nil {
			return fmt.Errorf("load-buffer: %v %s", err, o)
		}
		if o, err := tm("", "paste-buffer", "-p", "-d", "-b", "m", "-t", "a"); err != nil {
			return fmt.Errorf("paste-buffer: %v %s", err, o)
		}
		return nil
	}
	tries := clearKeys
	if a, ok := harness.Lookup(h); ok {
		if c, ok := a.(harness.InputClearer); ok {
			tries = append([][]string{c.ClearInputKeys()}, tries...) // the adapter's own keys first
		}
	}
	clear := func(marker string) error {
		for _, keys := range tries {
			if o, err := tm("", append([]string{"send-keys", "-t", "a"}, keys...)...); err != nil {
				return fmt.Errorf("send-keys: %v %s", err, o)
			}
			if _, err := stable("cleared", 5*time.Second, func(s string) bool {
				c := r.Classify(s)
				return c.State == harness.ScreenReady && !strings.Contains(c.Input, marker)
			}); err == nil {
				log.Printf("cleared with %v", keys)
				return nil
			}
		}
		return fmt.Errorf("the input line kept %s", marker)
	}
	want := map[string]bool{}
	for _, s := range strings.Split(only, ",") {
		if s != "" {
			want[s] = true
		}
	}
	for _, p := range pastes {
		if len(want) > 0 && !want[p.name] {
			continue
		}
		if err := paste(p.text); err != nil {
			return err
		}
		s, err := stable(p.name, 20*time.Second, func(s string) bool { return strings.Contains(s, p.marker) })
		if err != nil {
			return err
		}
		name := p.name
		if h == "opencode" {
			name += "-home" // its fixtures say the home screen
		}
		if err := save(name, s); err != nil {
			return err
		}
		if err := clear(p.marker); err != nil {
			return err
		}
	}
	if len(want) > 0 && !want["ready-after-429"] {
		return nil
	}
	// The rate-limited turn: every turn request answered 429 until the
	// error shows, then the hint (if any) sits in the input line.
	limited.Store(true)
	if err := paste("rate limited LEO-r429"); err != nil {
		return err
	}
	if _, err := stable("pasted", 20*time.Second, func(s string) bool { return strings.Contains(s, "LEO-r429") }); err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond) // codex reads Enter within 120 ms of a paste as a newline
	if o, err := tm("", "send-keys", "-t", "a", "Enter"); err != nil {
		return fmt.Errorf("send-keys: %v %s", err, o)
	}
	s, err := stable("429 shown", 4*time.Minute, func(s string) bool {
		return limitedSeen(ms) && (strings.Contains(strings.ReplaceAll(s, "LEO-r429", ""), "429") || strings.Contains(s, "scripted error")) && r.Classify(s).State != harness.ScreenBusy
	})
	limited.Store(false)
	if err := save("ready-after-429", s); err != nil {
		return err
	}
	if err != nil {
		return err
	}
	log.Printf("requests: %s", modelserver.Summary(ms.Requests()))
	// A message pasted over the hint, then sent: the turn goes through.
	if err := paste("after the limit LEO-r430"); err != nil {
		return err
	}
	s, err = stable("pasted after 429", 20*time.Second, func(s string) bool { return strings.Contains(s, "LEO-r430") })
	if err != nil {
		return err
	}
	if err := save("ready-after-429-pasted", s); err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond)
	if o, err := tm("", "send-keys", "-t", "a", "Enter"); err != nil {
		return fmt.Errorf("send-keys: %v %s", err, o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := ms.WaitTurn(ctx, "LEO-r430"); err != nil {
		return err
	}
	s, err = stable("answered after 429", time.Minute, func(s string) bool { return regexp.MustCompile(`ACK .*LEO-r430`).MatchString(s) && ready(s) })
	if err := save("ready-after-429-turn", s); err != nil {
		return err
	}
	return err
}

// limitedSeen reports whether the server has answered a turn 429.
func limitedSeen(ms *modelserver.Server) bool {
	for _, q := range ms.Requests() {
		if q.Status == http.StatusTooManyRequests {
			return true
		}
	}
	return false
}

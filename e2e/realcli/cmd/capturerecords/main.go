// Command capturerecords records what the real TUIs write to their own
// records (claude's transcript, codex's rollout, opencode's session store)
// over turns that end each way a turn ends, for the adapters' TurnRecorder
// tests:
//
//	go run ./e2e/realcli/cmd/capturerecords -bin "$LEO_REALCLI_BIN" -harness claude
//
// One TUI in a private tmux server, against the test model server, runs
// these turns in order, each pasted and submitted once the screen is idle:
//
//	plain      answered at once                               LEO-rec-001
//	tool       answered with a tool call, then text           LEO-rec-002
//	interrupt  held back; Escape once the screen is busy       LEO-rec-003
//	refused    answered HTTP 400                               LEO-rec-004
//	queued     held 6 s; a second message submitted meanwhile  LEO-rec-005, -006
//	compact    /compact
//	after      answered at once                               LEO-rec-007
//	cut        streamed over 30 s; interrupted once it shows   LEO-rec-008
//	last       answered at once                               LEO-rec-009
//	limited    (codex) HTTP 429 usage_limit_reached, resets_at LEO-rec-010
//	after      (codex) answered at once                       LEO-rec-011
//	ratelimit  (codex) HTTP 429, every retry of it              LEO-rec-012
//	recovered  (codex) answered at once                       LEO-rec-013
//
// The record goes to internal/harness/claude/testdata/records_v<version>.jsonl
// (claude, started with a fixed --session-id; with -hooks, leo's hooks
// registered, records-hooks_v<version>.jsonl),
// internal/harness/codex/testdata/records_v<version>/sessions/ (codex's
// rollouts as it left them, started as leo starts it: -a never), or
// internal/harness/opencode/testdata/store/records_v<version>.tgz (opencode's
// db and WAL as it left them), and a log of when each turn was submitted and
// seen idle again to the same name with .log.
//
// With -scenario ratelimit (claude) it records one turn answered HTTP 429
// instead, to internal/harness/claude/testdata/ratelimit_v<version>.jsonl
// (ratelimit.go).
package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/harness/codex"
	"github.com/blackpaw-studio/leo/internal/harness/opencode"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// limitResetsAt is when the usage limit of the limited turn resets: an
// hour after the capture starts, in whole seconds as the vendor sends it.
var limitResetsAt = time.Now().Add(time.Hour).Truncate(time.Second)

// usageLimit is the body of the limited turn's 429: the shape codex reads
// as a usage limit (error.type usage_limit_reached, resets_at in Unix
// seconds), not a rate limit it retries.
var usageLimit = fmt.Sprintf(`{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","plan_type":"plus","resets_at":%d}}`, limitResetsAt.Unix())

// SessionID is the claude conversation the capture runs in.
const SessionID = "44444444-2222-4333-8444-000000000001"

var harnesses = map[string]harness.Harness{
	"claude":   claude.Claude{},
	"codex":    codex.Codex{},
	"opencode": opencode.Opencode{},
}

// tools are the tool and arguments the tool turn calls, per harness.
var tools = map[string]modelserver.ToolCall{
	"claude":   {Name: "Bash", Input: `{"command":"echo tool-ran","description":"say tool-ran"}`},
	"codex":    {Name: "exec_command", Input: `{"cmd":"echo tool-ran"}`},
	"opencode": {Name: "bash", Input: `{"command":"echo tool-ran","description":"say tool-ran"}`},
}

func main() {
	bin := flag.String("bin", os.Getenv(realcli.BinDirEnv), "`dir` holding claude, codex, opencode")
	h := flag.String("harness", "claude", "harness (claude, codex or opencode)")
	out := flag.String("out", "", "`file` to write the record to (default: the adapter's testdata, named by version)")
	hooks := flag.Bool("hooks", false, "claude: with leo's hooks registered (a command that reads the payload and exits), as a leo agent runs; the record is records-hooks_v<version>.jsonl")
	scenario := flag.String("scenario", "", "ratelimit (claude): one turn answered HTTP 429 instead (ratelimit.go)")
	flag.Parse()
	var err error
	switch {
	case *scenario == "ratelimit" && *h == "claude":
		err = runClaudeRateLimit(*bin)
	case *scenario != "":
		err = fmt.Errorf("-scenario %q: only ratelimit, with -harness claude", *scenario)
	default:
		err = run(*bin, *h, *out, *hooks)
	}
	if err != nil {
		log.Fatal(err)
	}
}

func run(bin, h, out string, hooks bool) error {
	ad, ok := harnesses[h]
	if !ok {
		return fmt.Errorf("-harness %q: not one of claude, codex, opencode", h)
	}
	v, err := realcli.InstalledVersion(filepath.Join(bin, h))
	if err != nil {
		return err
	}
	r := ad.Screen()
	version := regexp.MustCompile(`\d+\.\d+\.\d+`).FindString(v)
	ms, err := modelserver.New()
	if err != nil {
		return err
	}
	defer ms.Close()
	tool := tools[h]
	// A turn is known by its last marker: claude sends a refused message
	// again with the next one, in one user turn.
	ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		last := ""
		if len(q.Markers) > 0 {
			last = q.Markers[len(q.Markers)-1]
		}
		switch {
		case q.Side:
		case last == "LEO-rec-002" && len(q.ToolResults) == 0:
			return modelserver.Reply{ToolCall: &tool}
		case last == "LEO-rec-003":
			return modelserver.Reply{Text: "ACK LEO-rec-003", Delay: 10 * time.Minute}
		case last == "LEO-rec-004":
			return modelserver.Reply{Status: http.StatusBadRequest}
		case last == "LEO-rec-005":
			return modelserver.Reply{Text: "ACK LEO-rec-005", Delay: 6 * time.Second}
		case last == "LEO-rec-010":
			return modelserver.Reply{Status: http.StatusTooManyRequests, ErrorBody: usageLimit}
		case last == "LEO-rec-012":
			return modelserver.Reply{Status: http.StatusTooManyRequests}
		case last == "LEO-rec-008":
			return modelserver.Reply{Text: "ACK LEO-rec-008 " + strings.Repeat("this answer streams word by word ", 20), StreamFor: 30 * time.Second}
		case last != "":
			return modelserver.Reply{Text: "ACK " + last}
		}
		return modelserver.DefaultResponder(q)
	})
	tui, err := realcli.NewCapture(h, bin, ms.URL, "caprec")
	if err != nil {
		return err
	}
	defer tui.Close()
	ws, env, tm := tui.Workspace, tui.Env, tui.Tmux
	if hooks && h == "claude" {
		// What leo registers (claude.SignalEvents), with a command that
		// takes its time as leo's does: it reads the payload and posts it.
		if err := claude.MergeHooks(claude.SettingsLocalPath(ws), []string{"/bin/sh", "-c", "cat > /dev/null; sleep 0.5"}); err != nil {
			return err
		}
	}
	argv := []string{filepath.Join(bin, h)}
	switch h {
	case "claude":
		argv = append(argv, "--session-id", SessionID)
	case "codex":
		argv = append(argv, "-a", "never") // as leo launches it: nobody approves
	}
	if err := tui.Start("120", "40", argv...); err != nil {
		return err
	}
	var logb strings.Builder
	t0 := time.Now()
	note := func(format string, a ...any) {
		line := fmt.Sprintf("%8.3fs %s", time.Since(t0).Seconds(), fmt.Sprintf(format, a...))
		log.Print(line)
		logb.WriteString(line + "\n")
	}
	screen := tui.Screen
	waitFor := func(what string, d time.Duration, cond func(harness.Screen, string) bool) error {
		deadline := time.Now().Add(d)
		for {
			s := screen()
			if cond(r.Classify(s), s) {
				note("%s", what)
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: not seen within %s:\n%s", what, d, s)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	idle := func(s harness.Screen, _ string) bool { return s.State == harness.ScreenReady && s.Input == "" }
	if err := waitFor("ready", 3*time.Minute, idle); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // let a first start finish drawing
	submit := func(text, marker string) error {
		if o, err := tm(text, "load-buffer", "-b", "m", "-"); err != nil {
			return fmt.Errorf("load-buffer: %v %s", err, o)
		}
		if o, err := tm("", "paste-buffer", "-p", "-d", "-b", "m", "-t", "a"); err != nil {
			return fmt.Errorf("paste-buffer: %v %s", err, o)
		}
		if err := waitFor("pasted "+marker, 20*time.Second, func(s harness.Screen, _ string) bool { return r.Landed(s, text) }); err != nil {
			return err
		}
		if pt, ok := ad.(harness.PasteTiming); ok {
			time.Sleep(pt.EnterDelay()) // codex: an Enter in its paste burst is a newline
		}
		if o, err := tm("", "send-keys", "-t", "a", "Enter"); err != nil {
			return fmt.Errorf("send-keys: %v %s", err, o)
		}
		note("enter %s", marker)
		return nil
	}
	ctx := context.Background()
	turn := func(text, marker, reply string) error {
		if err := submit(text, marker); err != nil {
			return err
		}
		c, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if _, err := ms.WaitTurn(c, marker); err != nil {
			return err
		}
		return waitFor("idle after "+marker, 2*time.Minute, func(s harness.Screen, raw string) bool {
			return idle(s, raw) && (reply == "" || strings.Contains(raw, reply))
		})
	}
	if err := turn("say hello LEO-rec-001", "LEO-rec-001", "ACK LEO-rec-001"); err != nil {
		return err
	}
	if err := turn("run a tool LEO-rec-002", "LEO-rec-002", "ACK LEO-rec-002"); err != nil {
		return err
	}
	interrupt := func() error {
		// One key per send, apart, as leo's interrupt sends them.
		keys := harnesses[h].(harness.Interrupter).InterruptKeys()
		for i, k := range keys {
			if i > 0 {
				time.Sleep(200 * time.Millisecond)
			}
			if o, err := tm("", "send-keys", "-t", "a", k); err != nil {
				return fmt.Errorf("send-keys: %v %s", err, o)
			}
		}
		note("interrupt keys %v", keys)
		return nil
	}
	if err := submit("a slow one LEO-rec-003", "LEO-rec-003"); err != nil {
		return err
	}
	if err := waitFor("busy LEO-rec-003", time.Minute, func(s harness.Screen, _ string) bool { return s.State == harness.ScreenBusy }); err != nil {
		return err
	}
	time.Sleep(time.Second)
	if err := interrupt(); err != nil {
		return err
	}
	if err := waitFor("ready after the interrupt", time.Minute, func(s harness.Screen, _ string) bool { return s.State == harness.ScreenReady }); err != nil {
		return err
	}
	// claude puts an interrupted message back into the input line: clear it.
	for range 3 {
		if s := r.Classify(screen()); s.Input == "" {
			break
		}
		_, _ = tm("", "send-keys", "-t", "a", "C-u")
		time.Sleep(500 * time.Millisecond)
	}
	if err := waitFor("idle after the interrupt", time.Minute, idle); err != nil {
		return err
	}
	if err := turn("this one is refused LEO-rec-004", "LEO-rec-004", ""); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	for range 3 { // claude may leave a hint in the input line
		if s := r.Classify(screen()); s.Input == "" {
			break
		}
		_, _ = tm("", "send-keys", "-t", "a", "C-u")
		time.Sleep(500 * time.Millisecond)
	}
	// queued: a second message submitted while the first's turn runs.
	if err := submit("held for a while LEO-rec-005", "LEO-rec-005"); err != nil {
		return err
	}
	if err := waitFor("busy LEO-rec-005", time.Minute, func(s harness.Screen, _ string) bool { return s.State == harness.ScreenBusy }); err != nil {
		return err
	}
	time.Sleep(time.Second)
	if err := submit("queued behind it LEO-rec-006", "LEO-rec-006"); err != nil {
		if err := waitFor("typed into the busy screen", 20*time.Second, func(_ harness.Screen, raw string) bool { return strings.Contains(raw, "LEO-rec-006") }); err != nil {
			return err
		}
		_, _ = tm("", "send-keys", "-t", "a", "Enter")
		note("enter LEO-rec-006 (busy screen)")
	}
	c, cancel := context.WithTimeout(ctx, 2*time.Minute)
	_, err = ms.WaitTurn(c, "LEO-rec-006")
	cancel()
	if err != nil {
		return err
	}
	if err := waitFor("idle after LEO-rec-006", 2*time.Minute, func(s harness.Screen, raw string) bool {
		return idle(s, raw) && strings.Contains(raw, "ACK LEO-rec-006")
	}); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	if err := submit("/compact", "/compact"); err != nil {
		return err
	}
	if err := waitFor("idle after /compact", 3*time.Minute, func(s harness.Screen, raw string) bool {
		return idle(s, raw) && (strings.Contains(raw, "ompact") && !strings.Contains(raw, "Compacting"))
	}); err != nil {
		return err
	}
	time.Sleep(3 * time.Second)
	if err := turn("after the compaction LEO-rec-007", "LEO-rec-007", "ACK LEO-rec-007"); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	if err := submit("stream a long one LEO-rec-008", "LEO-rec-008"); err != nil {
		return err
	}
	if err := waitFor("streaming LEO-rec-008", time.Minute, func(_ harness.Screen, raw string) bool { return strings.Contains(raw, "ACK LEO-rec-008") }); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	if err := interrupt(); err != nil {
		return err
	}
	if err := waitFor("ready after the interrupt", time.Minute, func(s harness.Screen, _ string) bool { return s.State == harness.ScreenReady }); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	if err := turn("the last one LEO-rec-009", "LEO-rec-009", "ACK LEO-rec-009"); err != nil {
		return err
	}
	if h == "codex" {
		// A usage limit: codex does not retry it, and says when it resets.
		note("usage limit resets_at %d (%s)", limitResetsAt.Unix(), limitResetsAt.UTC().Format(time.RFC3339))
		if err := turn("this one hits the limit LEO-rec-010", "LEO-rec-010", ""); err != nil {
			return err
		}
		time.Sleep(2 * time.Second)
		if err := turn("after the limit LEO-rec-011", "LEO-rec-011", "ACK LEO-rec-011"); err != nil {
			return err
		}
		// A rate limit: codex retries the 429, then gives up.
		if err := submit("this one is rate limited LEO-rec-012", "LEO-rec-012"); err != nil {
			return err
		}
		if err := waitFor("the rate limit's error", 5*time.Minute, func(s harness.Screen, raw string) bool {
			return idle(s, raw) && strings.Contains(raw, "429")
		}); err != nil {
			return err
		}
		time.Sleep(2 * time.Second)
		if err := turn("after the rate limit LEO-rec-013", "LEO-rec-013", "ACK LEO-rec-013"); err != nil {
			return err
		}
	}
	time.Sleep(3 * time.Second) // the turn's end records
	note("requests: %s", modelserver.Summary(ms.Requests()))
	switch h {
	case "claude":
		src := claude.TranscriptPath(env, ws, SessionID)
		b, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		// claude 2.1.332 also keeps the requests it sent (api-request-blob,
		// api-request-shape: its system prompt, the tools): no turn
		// record, and not claude's to copy here.
		var keep []string
		for _, line := range strings.SplitAfter(string(b), "\n") {
			if !strings.Contains(line, `"type":"api-request-blob"`) && !strings.Contains(line, `"type":"api-request-shape"`) {
				keep = append(keep, line)
			}
		}
		b = []byte(strings.Join(keep, ""))
		if out == "" {
			name := "records_v"
			if hooks {
				name = "records-hooks_v"
			}
			out = filepath.Join("internal", "harness", "claude", "testdata", name+version+".jsonl")
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			return err
		}
		return os.WriteFile(strings.TrimSuffix(out, ".jsonl")+".log", []byte(logb.String()), 0o644)
	case "codex":
		if out == "" {
			out = filepath.Join("internal", "harness", "codex", "testdata", "records_v"+version)
		}
		if err := os.RemoveAll(out); err != nil {
			return err
		}
		if err := os.CopyFS(filepath.Join(out, "sessions"), os.DirFS(filepath.Join(env["CODEX_HOME"], "sessions"))); err != nil {
			return err
		}
		return os.WriteFile(out+".log", []byte(logb.String()), 0o644)
	default:
		dir := filepath.Join(env["XDG_DATA_HOME"], "opencode")
		if out == "" {
			out = filepath.Join("internal", "harness", "opencode", "testdata", "store", "records_v"+version+".tgz")
		}
		if err := tgz(out, dir, "opencode.db", "opencode.db-wal"); err != nil {
			return err
		}
		return os.WriteFile(strings.TrimSuffix(out, ".tgz")+".log", []byte(logb.String()), 0o644)
	}
}

// tgz writes the named files of dir (those that exist) into a gzipped tar.
func tgz(out, dir string, names ...string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := gz.Close(); err != nil {
		return err
	}
	return f.Close()
}

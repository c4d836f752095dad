package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/google/uuid"
)

// The fake pi imitates pi 0.73.1 (docs/harness-behaviour/pi.md; the
// captures in testdata/screens/pi and internal/harness/pi/testdata):
//
//   - its session files: <--session-dir or pi's own dir>/<ts>_<id>.jsonl,
//     written lazily (nothing until the first answer, then every entry at
//     once), one JSON line an entry;
//   - its screen: the transcript, the spinner row while a turn runs, the
//     editor between two full-width rules, the footer;
//   - `--mode json`: the session header, then pi's events;
//   - leo's extension (-e …): it cannot run the module, so it does what it
//     does — the command in LEO_PI_HOOK with {"source":"leo-pi",…} on
//     stdin at agent_start and agent_end.

var piFlags = specs(
	"--session", val, "--session-dir", val, "--model", val, "--thinking", val, "--tools,-t", val,
	"--append-system-prompt", val, "--extension,-e", val, "--mode", val, "--provider", val,
	"--print,-p", bl, "--continue,-c", bl, "--no-session", bl, "--offline", bl,
)

type piStore struct {
	dir     string
	id      string
	path    string
	flushed bool
	pending []map[string]any // entries before the first answer
	last    string           // the open turn's message
	parent  string
	hook    bool // leo's extension was loaded
}

// piSessionDir is where pi keeps the sessions of the working directory.
func piSessionDir(p parsedArgs) string {
	if d := p.get("session-dir"); d != "" {
		return d
	}
	if d := os.Getenv("PI_CODING_AGENT_SESSION_DIR"); d != "" {
		return d
	}
	agent := os.Getenv("PI_CODING_AGENT_DIR")
	if agent == "" {
		agent = filepath.Join(os.Getenv("HOME"), ".pi", "agent")
	}
	c := strings.TrimPrefix(cwd(), "/")
	return filepath.Join(agent, "sessions", "--"+strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(c)+"--")
}

// piFind is the file of session id in dir.
func piFind(dir, id string) string {
	m, _ := filepath.Glob(filepath.Join(dir, "*_"+id+".jsonl"))
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1]
}

func newPiStore(p parsedArgs) (*piStore, int, bool) {
	s := &piStore{dir: piSessionDir(p), hook: p.has("extension")}
	if id := p.get("session"); id != "" {
		if code, ok := exitOnResume(); ok {
			return nil, code, false
		}
		s.path = piFind(s.dir, id)
		if s.path == "" {
			return nil, fail(1, "No session found matching '%s'", id), false
		}
		s.id, s.flushed = id, true
		return s, 0, true
	}
	s.id = uuid.NewString()
	ts := time.Now().UTC().Format("2006-01-02T15-04-05-000Z")
	s.path = filepath.Join(s.dir, ts+"_"+s.id+".jsonl")
	s.pending = []map[string]any{{"type": "session", "version": 3, "id": s.id, "timestamp": piNow(), "cwd": cwd()}}
	return s, 0, true
}

func piNow() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

func (s *piStore) entry(e map[string]any) {
	e["id"] = uuid.NewString()[:8]
	e["timestamp"] = piNow()
	if s.parent != "" {
		e["parentId"] = s.parent
	} else {
		e["parentId"] = nil
	}
	s.parent = e["id"].(string)
	s.pending = append(s.pending, e)
	answered := s.flushed
	if m, ok := e["message"].(map[string]any); ok && m["role"] == "assistant" {
		answered = true
	}
	if e["type"] == "compaction" {
		answered = s.flushed
	}
	if !answered {
		return // pi writes nothing before the session's first answer
	}
	_ = os.MkdirAll(s.dir, 0o700)
	f, err := os.OpenFile(s.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	for _, p := range s.pending {
		b, _ := json.Marshal(p)
		_, _ = f.Write(append(b, '\n'))
	}
	s.pending, s.flushed = nil, true
}

func piText(s string) []any { return []any{map[string]any{"type": "text", "text": s}} }

func piAssistant(text, stop, errMsg string) map[string]any {
	m := map[string]any{"role": "assistant", "content": piText(text), "api": "openai-completions", "provider": "fake", "model": "fake-model",
		"usage":      map[string]any{"input": 10, "output": 3, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 13, "cost": map[string]any{"input": 0.0003, "output": 0.0001, "cacheRead": 0, "cacheWrite": 0, "total": 0.0004}},
		"stopReason": stop, "timestamp": time.Now().UnixMilli()}
	if text == "" {
		m["content"] = []any{}
	}
	if errMsg != "" {
		m["errorMessage"] = errMsg
	}
	return m
}

func (s *piStore) submit(msg string) {
	s.last = msg
	first := !s.flushed && len(s.pending) == 1
	s.entry(map[string]any{"type": "message", "message": map[string]any{"role": "user", "content": piText(msg), "timestamp": time.Now().UnixMilli()}})
	if first {
		logEvent(map[string]any{"event": "session", "session_id": s.id})
	}
	s.signal(map[string]any{"event": "agent_start"})
}

func (s *piStore) reply(msg string) {
	s.entry(map[string]any{"type": "message", "message": piAssistant(msg, "stop", "")})
	s.signal(map[string]any{"event": "agent_end", "inputs": []string{s.last}, "reply": msg, "stop_reason": "stop"})
}

func (s *piStore) fail(words string) {
	s.entry(map[string]any{"type": "message", "message": piAssistant("", "error", words)})
	s.signal(map[string]any{"event": "agent_end", "inputs": []string{s.last}, "stop_reason": "error", "error": words})
}

func (s *piStore) abort() {
	s.entry(map[string]any{"type": "message", "message": piAssistant("", "aborted", "Operation aborted")})
	s.signal(map[string]any{"event": "agent_end", "inputs": []string{s.last}, "stop_reason": "aborted", "error": "Operation aborted"})
}

// compact records pi's compaction entry; a session with nothing written
// yet has nothing to compact, and pi records nothing.
func (s *piStore) compact() string {
	if !s.flushed {
		return ""
	}
	s.entry(map[string]any{"type": "compaction", "summary": "summary of the session so far", "firstKeptEntryId": s.parent, "tokensBefore": 13})
	return ""
}

var (
	piSignals     = make(chan []byte, 64)
	piSignalsOnce sync.Once
)

// signal runs LEO_PI_HOOK with the payload leo's extension would send,
// one after another in order.
func (s *piStore) signal(p map[string]any) {
	var argv []string
	if !s.hook || json.Unmarshal([]byte(os.Getenv("LEO_PI_HOOK")), &argv) != nil || len(argv) == 0 {
		return
	}
	p["source"], p["session_file"], p["time"] = "leo-pi", s.path, time.Now().UnixMilli()
	payload, _ := json.Marshal(p)
	piSignalsOnce.Do(func() {
		go func() {
			for b := range piSignals {
				runHook("pi", argv, b)
			}
		}()
	})
	select {
	case piSignals <- payload:
	default:
	}
}

func runPi(args []string) int {
	p := parseArgs(args, piFlags)
	st, code, ok := newPiStore(p)
	if !ok {
		return code
	}
	if p.get("mode") == "json" || p.has("print") {
		return piHeadless(st, p)
	}
	model := p.getOr("model", "fake/fake-model")
	logEvent(map[string]any{"event": "start", "session_id": st.id, "resumed": p.has("session"), "cwd": cwd()})
	return newTUI(rolePi, model, st).run()
}

// piHeadless is `pi --mode json PROMPT`: pi exits 0 whatever the outcome.
func piHeadless(st *piStore, p parsedArgs) int {
	pos := p.pos
	if len(pos) == 0 {
		return fail(1, "fake pi: no prompt")
	}
	msg := pos[len(pos)-1]
	emit := func(v map[string]any) {
		b, _ := json.Marshal(v)
		fmt.Println(string(b))
	}
	sc := scenario()
	if sc == "banner_noise" {
		fmt.Println("pi (fake) warming up — not json")
	}
	emit(map[string]any{"type": "session", "version": 3, "id": st.id, "timestamp": piNow(), "cwd": cwd()})
	emit(map[string]any{"type": "agent_start"})
	if sc == "hang" {
		hangForever()
	}
	emit(map[string]any{"type": "turn_start"})
	user := map[string]any{"role": "user", "content": piText(msg), "timestamp": time.Now().UnixMilli()}
	emit(map[string]any{"type": "message_end", "message": user})
	st.entry(map[string]any{"type": "message", "message": user})
	logLine(map[string]any{"message": msg, "pid": os.Getpid()})
	time.Sleep(turnDuration())
	if sc == "limited" {
		// A 429 on every try (testdata/streams/limited_*): pi retries it
		// three times, each attempt its own agent run, then gives up and
		// exits 0; its stream names no reset.
		return piLimited(st, emit, user)
	}
	var a map[string]any
	switch {
	case sc == "turn_failed" || sc == "stream_error_exit0" || strings.Contains(msg, failMarker):
		a = piAssistant("", "error", "400 fake: scripted error")
	case sc == "error_as_success":
		a = piAssistant("Error: provider returned 500 (fake)", "stop", "")
	case sc == "huge_line":
		emit(map[string]any{"type": "tool_execution_end", "toolCallId": "call_1", "toolName": "bash", "isError": false,
			"result": map[string]any{"content": piText(hugeText())}})
		a = piAssistant("echo: "+msg, "stop", "")
	default:
		a = piAssistant("echo: "+msg, "stop", "")
	}
	if sc == "banner_noise" {
		emit(map[string]any{"type": "fake_unknown"})
	}
	st.entry(map[string]any{"type": "message", "message": a})
	emit(map[string]any{"type": "message_end", "message": a})
	emit(map[string]any{"type": "turn_end", "message": a, "toolResults": []any{}})
	if sc != "truncated" {
		emit(map[string]any{"type": "agent_end", "messages": []any{user, a}})
	}
	logEvent(map[string]any{"event": "exit", "code": 0, "scenario": sc})
	return 0
}

// piLimitError is pi's words for the Chat API's 429 (the provider's
// message after the status).
const piLimitError = "429 Rate limit reached for requests. Please try again later."

func piLimited(st *piStore, emit func(map[string]any), user map[string]any) int {
	const maxAttempts = 3
	emit(map[string]any{"type": "message_start", "message": user})
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			emit(map[string]any{"type": "agent_start"})
			emit(map[string]any{"type": "turn_start"})
		}
		a := piAssistant("", "error", piLimitError)
		emit(map[string]any{"type": "message_start", "message": a})
		emit(map[string]any{"type": "message_end", "message": a})
		emit(map[string]any{"type": "turn_end", "message": a, "toolResults": []any{}})
		st.entry(map[string]any{"type": "message", "message": a})
		msgs := []any{a}
		if attempt == 0 {
			msgs = []any{user, a}
		}
		emit(map[string]any{"type": "agent_end", "messages": msgs})
		if attempt == maxAttempts {
			emit(map[string]any{"type": "auto_retry_end", "success": false, "attempt": maxAttempts, "finalError": piLimitError})
			logEvent(map[string]any{"event": "exit", "code": 0, "scenario": "limited"})
			return 0
		}
		emit(map[string]any{"type": "auto_retry_start", "attempt": attempt + 1, "maxAttempts": maxAttempts,
			"delayMs": 2000 << attempt, "errorMessage": piLimitError})
	}
}

// piPasteLabel is the marker pi's editor shows for a paste of more than 10
// lines or 1,000 characters (UTF-16 units), "" for one it shows as is.
func piPasteLabel(s string, n int) string {
	s = strings.ReplaceAll(s, "\t", "    ")
	lines := strings.Count(s, "\n") + 1
	switch {
	case lines > 10:
		return fmt.Sprintf("[paste #%d +%d lines]", n, lines)
	case len(utf16.Encode([]rune(s))) > 1000:
		return fmt.Sprintf("[paste #%d %d chars]", n, len(utf16.Encode([]rune(s))))
	}
	return ""
}

// piLayout is pi's screen below the transcript: the spinner row while
// busy, the editor between two rules, the footer.
func (t *tui) piLayout(width int) (top, bottom []string, curLine, curCol int) {
	top = append([]string{" pi v0.73.1 (fake)", " escape interrupt · ctrl+c/ctrl+d clear/exit · / commands · ! bash", ""}, t.history...)
	rule := strings.Repeat("─", width)
	if t.busy {
		bottom = append(bottom, " ⠋ Working...", "")
	}
	bottom = append(bottom, rule)
	inputLines := strings.Split(t.inputDisplay(), "\n")
	curLine = len(bottom) + len(inputLines) - 1
	bottom, curCol = withPrompt(bottom, inputLines, "", "")
	bottom = append(bottom, rule, cwd(), "↑0 ↓0 0.0%/128k (auto)  "+t.model)
	return top, bottom, curLine, curCol
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

type codexStore struct {
	id, path, originator string
	turn                 string // the open turn's id, "" between turns
	notify               []string
	inputs               []string // the open turn's messages
	titled               bool     // the thread's title was generated
	total, last          [2]int   // token_count's input and output tokens: the thread's, the last response's
}

// fakeResponseTokens are the tokens the fake's model "uses" per response:
// what internal/testutil/modelserver reports (10 in, 3 out), which is
// what the real capture records (testdata/records_v0.171.0).
var fakeResponseTokens = [2]int{10, 3}

// tokenCount writes codex 0.171.0's token_count event: the thread's
// running total and the last response's usage. codex writes it after
// each response, and again, unchanged, when a turn starts that calls no
// model yet (an interrupt, a queued message).
func (s *codexStore) tokenCount() {
	usage := func(u [2]int) map[string]any {
		return map[string]any{"input_tokens": u[0], "cached_input_tokens": 0, "cache_write_input_tokens": 0,
			"output_tokens": u[1], "reasoning_output_tokens": 0, "total_tokens": u[0] + u[1]}
	}
	_ = appendJSONL(s.path, codexEvent(map[string]any{"type": "token_count",
		"info": map[string]any{"total_token_usage": usage(s.total), "last_token_usage": usage(s.last),
			"last_usage_includes_reasoning": false, "model_context_window": 258400},
		"rate_limits": map[string]any{"limit_id": "codex"}}))
}

// response records one model response's tokens: codex's per-turn
// token_usage_record, then token_count.
func (s *codexStore) response() {
	s.last = fakeResponseTokens
	s.total[0] += s.last[0]
	s.total[1] += s.last[1]
	u := map[string]any{"input_tokens": s.last[0], "cached_input_tokens": 0, "output_tokens": s.last[1], "total_tokens": s.last[0] + s.last[1]}
	_ = appendJSONL(s.path, map[string]any{"timestamp": nowStamp(), "type": "token_usage_record",
		"payload": map[string]any{"thread_id": s.id, "turn_id": s.turn, "usage": u}})
	s.tokenCount()
}

// submit records a user message the way codex-cli 0.171.0 writes its
// rollout: a new thread starts with session_meta and codex's own
// user-role environment_context item (not a user turn); a new turn with
// event_msg task_started; the message itself as a response_item (role
// user, provenance user) and an event_msg item_completed UserMessage. A
// message folded into a running turn adds only the last two.
func (s *codexStore) submit(msg string) {
	if s.path == "" {
		s.id = newThreadID()
		path, err := newCodexRollout(s.id, s.originator)
		if err != nil {
			return
		}
		s.path = path
		logEvent(map[string]any{"event": "session", "session_id": s.id, "path": path})
		s.turn = newThreadID()
		_ = appendJSONL(s.path, codexEvent(map[string]any{"type": "task_started", "turn_id": s.turn}))
		_ = appendJSONL(s.path, codexMessage("user", "<environment_context>\n  <cwd>"+cwd()+"</cwd>\n</environment_context>", "harness"))
	} else if s.turn == "" {
		s.turn = newThreadID()
		_ = appendJSONL(s.path, codexEvent(map[string]any{"type": "task_started", "turn_id": s.turn}))
	}
	s.inputs = append(s.inputs, msg)
	_ = appendJSONL(s.path, codexMessage("user", msg, "user"))
	_ = appendJSONL(s.path, codexEvent(map[string]any{
		"type": "item_completed", "thread_id": s.id, "turn_id": s.turn,
		"item": map[string]any{"type": "UserMessage", "id": newThreadID(),
			"content": []any{map[string]any{"type": "text", "text": msg, "text_elements": []any{}}}},
	}))
}

// compact writes what codex 0.171.0 records of /compact: a top-level
// "compacted" line (its payload the summary). A thread with no rollout yet
// has nothing to compact, and nothing is recorded.
func (s *codexStore) compact() string {
	if s.path == "" {
		return ""
	}
	_ = appendJSONL(s.path, map[string]any{"timestamp": nowStamp(), "type": "compacted",
		"payload": map[string]any{"message": "summary of the thread so far", "replacement_history": []any{}}})
	return ""
}

// reply ends the open turn: the agent message (event and response_item),
// the response's token counts, then task_complete with the reply.
func (s *codexStore) reply(msg string) {
	if s.path == "" {
		return
	}
	_ = appendJSONL(s.path, codexEvent(map[string]any{
		"type": "item_completed", "thread_id": s.id, "turn_id": s.turn,
		"item": map[string]any{"type": "AgentMessage", "id": newThreadID(),
			"content": []any{map[string]any{"type": "Text", "text": msg}}},
	}))
	_ = appendJSONL(s.path, codexMessage("assistant", msg, ""))
	s.response()
	_ = appendJSONL(s.path, codexEvent(map[string]any{"type": "task_complete", "turn_id": s.turn, "last_agent_message": msg}))
	codexNotify(s.notify, s.id, s.turn, s.inputs, msg, !s.titled)
	s.titled = true
	s.turn, s.inputs = "", nil
}

// fail ends the open turn as one the model answered with an error: codex
// 0.171.0 writes task_complete with the error (its body as the message,
// codex_error_info "other" for an HTTP 400;
// internal/harness/codex/testdata/records_v0.171.0) and runs no notify.
func (s *codexStore) fail(words string) {
	if s.path == "" {
		return
	}
	_ = appendJSONL(s.path, codexEvent(map[string]any{"type": "task_complete", "turn_id": s.turn, "last_agent_message": nil,
		"error": map[string]any{"message": words + "\n", "codex_error_info": "other"}}))
	s.turn, s.inputs = "", nil
}

// abort ends the open turn as interrupted: codex 0.171.0 writes the
// thread's token_count again, unchanged (once it has one), then event_msg
// turn_aborted (and no reply, no notify).
func (s *codexStore) abort() {
	if s.path == "" || s.turn == "" {
		return
	}
	if s.total != [2]int{} {
		s.tokenCount()
	}
	_ = appendJSONL(s.path, codexEvent(map[string]any{"type": "turn_aborted", "turn_id": s.turn, "reason": "interrupted"}))
	s.turn, s.inputs = "", nil
}

func newThreadID() string {
	if id, err := uuid.NewV7(); err == nil {
		return id.String()
	}
	return uuid.NewString()
}

// newestCodexRollout is `--last`: the newest rollout whose cwd is ours.
func newestCodexRollout() (id, path string) {
	var bestMod time.Time
	_ = filepath.WalkDir(filepath.Join(codexHome(), "sessions"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasPrefix(d.Name(), "rollout-") || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		first, _, _ := strings.Cut(string(b), "\n")
		var meta struct {
			Payload struct{ ID, Cwd string } `json:"payload"`
		}
		if json.Unmarshal([]byte(first), &meta) != nil || meta.Payload.Cwd != cwd() {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().After(bestMod) {
			bestMod, id, path = info.ModTime(), meta.Payload.ID, p
		}
		return nil
	})
	return id, path
}

// codexResume resolves `resume <id>` / `resume --last`.
func codexResume(p parsedArgs, rest []string) (id, path string, code int, failed bool) {
	if code, ok := exitOnResume(); ok {
		return "", "", code, true
	}
	if len(rest) == 0 || rest[0] == "" {
		if p.has("last") {
			id, path = newestCodexRollout()
			if id == "" {
				return "", "", fail(1, "Error: no rollout found for the last session"), true
			}
			return id, path, 0, false
		}
		return "", "", fail(1, "Error: the fake codex has no session picker; pass resume <id>"), true
	}
	id = rest[0]
	path = findCodexRollout(id)
	if path == "" {
		return "", "", fail(1, "Error: no rollout found for thread id %s", id), true
	}
	return id, path, 0, false
}

func runCodex(args []string) int {
	p := parseArgs(args, codexFlags)
	pos := p.pos
	if len(pos) > 0 && pos[0] == "exec" {
		return codexExec(p, pos[1:])
	}
	st := &codexStore{originator: "codex-tui", notify: codexNotifyArgv(p)}
	resumed := false
	if len(pos) > 0 && pos[0] == "resume" {
		id, path, code, failed := codexResume(p, pos[1:])
		if failed {
			return code
		}
		st.id, st.path, resumed = id, path, true
		st.titled = true // a resumed thread has its title
	}
	model := p.getOr("model", "gpt-fake")
	logEvent(map[string]any{"event": "start", "session_id": st.id, "resumed": resumed, "cwd": cwd()})
	t := newTUI(roleCodex, model, st)
	t.codex.resuming = resumed
	t.trust = os.Getenv("FAKE_TRUST_DIALOG") != "0" && !codexTrusted()
	t.onTrust = codexRecordTrust
	return t.run()
}

// codexExec is `codex exec [--json] [flags] [resume <id>] PROMPT`.
func codexExec(p parsedArgs, pos []string) int {
	st := &codexStore{originator: "codex_exec"}
	if len(pos) > 0 && pos[0] == "resume" {
		rest := pos[1:]
		if p.has("last") {
			rest = append([]string{""}, rest...)
		}
		id, path, code, failed := codexResume(p, rest[:min(1, len(rest))])
		if failed {
			return code
		}
		st.id, st.path = id, path
		pos = rest[min(1, len(rest)):]
	}
	prompt := strings.Join(pos, " ")
	if prompt == "" || prompt == "-" {
		fmt.Fprintln(os.Stderr, "Reading prompt from stdin...")
		b, _ := io.ReadAll(os.Stdin)
		prompt = strings.TrimSpace(string(b))
	}
	if prompt == "" {
		return fail(1, "No prompt provided. Either specify one as an argument or pipe the prompt into stdin.")
	}
	jsonOut := p.has("json")
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	emit := func(v any) {
		if jsonOut {
			_ = out.Encode(v)
		}
	}
	sc := scenario()
	if st.id == "" {
		st.id = newThreadID()
		if !p.has("ephemeral") {
			if path, err := newCodexRollout(st.id, "codex_exec"); err == nil {
				st.path = path
			}
		}
	}
	if sc == "banner_noise" {
		fmt.Println("codex (fake) banner: not json")
	}
	emit(map[string]any{"type": "thread.started", "thread_id": st.id})
	if sc == "banner_noise" {
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_w", "type": "error", "message": "model metadata not found (fake warning)"}})
		emit(map[string]any{"type": "fake.unknown_event", "x": 1})
	}
	emit(map[string]any{"type": "turn.started"})
	if sc == "hang" {
		hangForever()
	}
	st.submit(prompt)
	time.Sleep(turnDuration())
	end := func(code int) int {
		logEvent(map[string]any{"event": "exit", "code": code, "scenario": sc})
		return code
	}
	// The fields of codex 0.171.0's events
	// (internal/harness/codex/testdata/streams; TestFakeHeadlessStreamsMatchReal).
	usage := func(in, cached, out int) map[string]any {
		return map[string]any{"input_tokens": in, "cached_input_tokens": cached, "cache_write_input_tokens": 0,
			"output_tokens": out, "reasoning_output_tokens": 0}
	}
	agentMessage := func(id, text string) {
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": id, "type": "agent_message", "text": text}})
	}
	switch sc {
	case "turn_failed", "not_logged_in":
		msg := "stream disconnected before completion (fake)"
		if sc == "not_logged_in" {
			msg = "unexpected status 401 Unauthorized: not logged in (fake)"
		}
		emit(map[string]any{"type": "error", "message": msg})
		emit(map[string]any{"type": "turn.failed", "error": map[string]any{"message": msg}})
		if !jsonOut {
			fmt.Fprintln(os.Stderr, "ERROR: "+msg)
		}
		return end(1)
	case "limited":
		// usage_limit_reached (testdata/streams/limited_*): codex does not
		// retry it and names the reset's minute in local time.
		msg := "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again later."
		if in, ok := limitResetsIn(); ok {
			msg = strings.TrimSuffix(msg, "later.") + "at " + time.Now().Add(in).Format("3:04 PM") + "."
		}
		emit(map[string]any{"type": "error", "message": msg})
		emit(map[string]any{"type": "turn.failed", "error": map[string]any{"message": msg}})
		return end(1)
	case "stream_error_exit0":
		emit(map[string]any{"type": "error", "message": "stream disconnected (fake)"})
		emit(map[string]any{"type": "turn.failed", "error": map[string]any{"message": "stream disconnected (fake)"}})
		return end(0)
	case "error_as_success":
		reply := "I hit an error (fake): upstream returned 500"
		emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "error", "message": "upstream returned 500 (fake)"}})
		agentMessage("item_1", reply)
		emit(map[string]any{"type": "turn.completed", "usage": usage(0, 0, 0)})
		return end(0)
	case "truncated":
		// The stream stops before turn.completed; the process exits 0.
		agentMessage("item_0", "echo: "+prompt)
		return end(0)
	case "reconnecting":
		// codex retries a dropped stream itself, saying so in error
		// events, and then completes the turn.
		for i := 1; i <= envInt("FAKE_RETRIES", 2); i++ {
			emit(map[string]any{"type": "error", "message": fmt.Sprintf("Reconnecting... %d/5 (stream disconnected before completion: Transport error: network error: error decoding response body)", i)})
		}
	}
	reply := "echo: " + prompt
	logLine(map[string]any{"message": prompt, "pid": os.Getpid()})
	st.reply(reply)
	output := ""
	if sc == "huge_line" {
		output = hugeText()
	}
	emit(map[string]any{"type": "item.started", "item": map[string]any{"id": "item_0", "type": "command_execution", "command": "bash -lc true", "aggregated_output": "", "exit_code": nil, "status": "in_progress"}})
	emit(map[string]any{"type": "item.completed", "item": map[string]any{"id": "item_0", "type": "command_execution", "command": "bash -lc true", "aggregated_output": output, "exit_code": 0, "status": "completed"}})
	agentMessage("item_1", reply)
	emit(map[string]any{"type": "turn.completed", "usage": usage(2400, 2000, 40)})
	if !jsonOut {
		fmt.Println(reply)
	}
	if f := p.get("output-last-message"); f != "" {
		_ = os.WriteFile(f, []byte(reply), 0o644)
	}
	return end(0)
}

// ---- the TUI's screen ------------------------------------------------------
//
// What follows imitates codex-cli 0.171.0 as captured under
// testdata/screens/codex (docs/harness-behaviour/codex.md): the header, the
// composer on the pane's last rows with its footer, the busy line, the
// startup during which a submit is held ("Waiting for startup"), and the
// gap after Enter in which the composer is empty and no busy line shows yet.

// codexVersion is the release the fake's screens were taken from.
const codexVersion = "0.171.0"

// codexLargePaste: a longer paste shows as "[Pasted Content N chars]".
const codexLargePaste = 1000

// codexTUI is the state only codex's screen has.
type codexTUI struct {
	loading  bool // the header says "loading" (FAKE_CODEX_LOADING_MS)
	resuming bool // `resume`: "Resuming session…" instead, while loading
	started  bool // the background server is up (FAKE_CODEX_STARTUP_MS)
	held     bool // Enter was pressed before started: submit when started
	pending  bool // between Enter and the busy line (FAKE_CODEX_SUBMIT_GAP_MS)
}

// codexStart begins the startup phases: "loading" for FAKE_CODEX_LOADING_MS,
// then the workspace shows and the composer takes text, but Enter is held
// until FAKE_CODEX_STARTUP_MS after the first draw (real codex: 3–6 s,
// until its app-server connection is up; the knobs default to 0).
func (t *tui) codexStart() {
	c := t.codex
	loading := envMS("FAKE_CODEX_LOADING_MS", 0)
	startup := max(envMS("FAKE_CODEX_STARTUP_MS", 0), loading)
	c.loading = loading > 0
	c.started = startup == 0
	if c.loading {
		t.after(loading, func() { c.loading = false })
	}
	if !c.started {
		t.after(startup, t.codexStarted)
	}
}

// after runs f on the main loop once d has passed.
func (t *tui) after(d time.Duration, f func()) {
	time.AfterFunc(d, func() { t.wake <- f })
}

// codexStarted: the server is up; a held submit goes now, with whatever the
// composer holds by then.
func (t *tui) codexStarted() {
	c := t.codex
	c.started = true
	logEvent(map[string]any{"event": "started"})
	if !c.held {
		return
	}
	c.held = false
	msg := t.inputText()
	t.input = nil
	if strings.TrimSpace(msg) != "" {
		t.submit(msg)
	}
}

// codexHold takes an Enter the TUI cannot act on yet: before startup ends
// codex keeps the text, shows "Waiting for startup", and submits later.
// Typing or pasting while held cancels the hold (the text stays), as in
// the real one.
func (t *tui) codexHold() bool {
	c := t.codex
	if c.started || strings.TrimSpace(t.inputText()) == "" {
		return false
	}
	if !c.held {
		logEvent(map[string]any{"event": "held"})
	}
	c.held = true
	return true
}

// codexSubmit shows msg in the history at once, clears the composer, and
// starts the turn only FAKE_CODEX_SUBMIT_GAP_MS later (real codex: 140–440
// ms measured; the knob defaults to 175): in between the screen
// shows an empty composer and no busy line, and the rollout has no turn
// yet. A message submitted in that gap becomes the next turn; one
// submitted while a turn runs is folded into it, as real codex does: one
// turn, one reply.
func (t *tui) codexSubmit(msg string) {
	c := t.codex
	t.history = append(t.history, t.userLines(msg)...)
	if c.pending { // observed: a submit before the busy line is its own turn, next
		t.queue = append(t.queue, msg)
		return
	}
	if t.busy {
		logLine(map[string]any{"message": msg, "folded": true, "pid": os.Getpid()})
		t.store.submit(msg)
		t.current += "\n" + msg
		return
	}
	t.current = msg
	gap := envMS("FAKE_CODEX_SUBMIT_GAP_MS", 175)
	if gap == 0 {
		t.beginTurn(msg)
		return
	}
	c.pending = true
	t.after(gap, func() {
		c.pending = false
		t.beginTurn(t.current)
	})
}

// codexStreamFrom is when, into a turn, the reply starts to stream
// (FAKE_CODEX_STREAM_MS before the turn's end, FAKE_TURN_MS): from then on
// the screen shows the reply growing and hides the busy line, as codex
// 0.171.0 does while a model streams text — an idle-looking screen in a
// running turn. 0 knob: no streaming phase.
func (t *tui) codexStreamFrom() time.Duration {
	return max(turnDuration()-envMS("FAKE_CODEX_STREAM_MS", 0), 0)
}

// codexStreaming reports whether the running turn is streaming its reply.
func (t *tui) codexStreaming() bool {
	return t.busy && envMS("FAKE_CODEX_STREAM_MS", 0) > 0 && time.Since(t.busySince) >= t.codexStreamFrom()
}

func (t *tui) codexBanner() []string {
	header := []string{"", "  >_ OpenAI Codex (v" + codexVersion + ", fake)", "     " + cwd(), ""}
	switch c := t.codex; {
	case c != nil && c.loading && c.resuming:
		header = append(header, "  Resuming session…")
	case c != nil && c.loading:
		header[2] = "     loading"
	}
	return header
}

// codexUserLines: a sent message in the history, padded by a row above and
// below, then a blank row.
func codexUserLines(msg string) []string {
	return append(append([]string{""}, indent("› ", "  ", msg)...), "", "")
}

// codexReplyLines: the reply, then the "Worked for" separator.
func (t *tui) codexReplyLines(reply string) []string {
	took := time.Since(t.busySince).Round(time.Second)
	worked := "<1s"
	if took >= time.Second {
		worked = fmt.Sprintf("%ds", int(took.Seconds()))
	}
	return append(indent("• ", "  ", reply), "", "  Worked for "+worked+" • "+time.Now().Format("15:04"), "")
}

// codexLayout draws, from the bottom up: the hint line, the status line
// (once started), a padding row, the composer, a padding row, and the busy
// line of a running turn with a blank row under it.
func (t *tui) codexLayout(width int) (top, bottom []string, curLine, curCol int) {
	c := t.codex
	top = append(t.banner(), t.history...)
	streaming := t.codexStreaming()
	if streaming {
		// The reply so far, and no busy line: the screen looks idle.
		reply := "echo: " + t.current
		n := len([]rune(reply)) * int(time.Since(t.busySince)-t.codexStreamFrom()) / int(max(envMS("FAKE_CODEX_STREAM_MS", 0), 1))
		top = append(top, indent("• ", "  ", string([]rune(reply)[:min(max(n, 1), len([]rune(reply)))]))...)
	}
	if t.busy && !streaming {
		spin := "•"
		secs := int(time.Since(t.busySince).Seconds())
		if secs%2 == 1 {
			spin = "◦"
		}
		bottom = append(bottom, fmt.Sprintf("%s Working (%ds • esc to interrupt)", spin, secs), "")
	}
	bottom = append(bottom, "")
	inputLines := strings.Split(t.inputDisplay(), "\n")
	curLine = len(bottom) + len(inputLines) - 1
	if len(t.input) == 0 {
		bottom = append(bottom, "› Ask Codex to do anything")
		curCol = 2
	} else {
		bottom, curCol = withPrompt(bottom, inputLines, "› ", "  ")
	}
	bottom = append(bottom, "")
	if c.started {
		bottom = append(bottom, "  "+t.model+" default · "+cwd())
	}
	switch {
	case c.held:
		bottom = append(bottom, "  Waiting for startup  · esc cancel")
	case len(t.input) > 0 && t.busy:
		bottom = append(bottom, "  tab to queue message")
	case len(t.input) > 0:
		// no hint: the row goes (real codex keeps it only for its
		// warnings indicator, "⚠ 1 warning · f2 to view")
	case c.started:
		bottom = append(bottom, "  ← for agents · ? for shortcuts")
	default:
		bottom = append(bottom, "  ? for shortcuts")
	}
	return top, bottom, curLine, curCol
}

// codexTrustLines is the folder-access dialog real codex shows, at the top
// of the pane, in an untrusted git repository; its text wraps at the
// pane's width less four columns.
func codexTrustLines(mark func(int, string) string, width int) []string {
	lines := []string{"", "  Folder access", "  " + cwd(), ""}
	text := "Trust this folder? Codex can read, edit, and run files here, subject to your permission " +
		"settings. Folder settings can run code automatically, even without a model request. Continue " +
		"only if you trust these files. Your trust decision will be saved."
	for _, l := range wrapWords(text, width-4) {
		lines = append(lines, "  "+l)
	}
	return append(lines, "",
		mark(0, "1. Trust and continue"),
		mark(1, "2. Back to Agent Command Center"),
		"",
		"  enter continue · esc back",
	)
}

// wrapWords breaks text into lines of at most width runes, between words.
func wrapWords(text string, width int) []string {
	var out []string
	line := ""
	for _, w := range strings.Fields(text) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= width:
			line += " " + w
		default:
			out = append(out, line)
			line = w
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

type opencodeStore struct {
	id   string
	last string // the open turn's message
}

func (s *opencodeStore) submit(msg string) {
	s.last = msg
	first := s.id == ""
	s.id = opencodeTouch(s.id, cwd(), msg)
	opencodeRecord(s.id, "user", msg)
	if first {
		logEvent(map[string]any{"event": "session", "session_id": s.id})
	}
	opencodeBusy(s.id)
}

// compact writes what opencode 1.18.33 stores of /compact: a user message
// whose part is {"type":"compaction"}, answered by a finished summary
// message (mode "compaction", summary true). A session with no message
// yet has nothing to compact, and nothing is recorded.
func (s *opencodeStore) compact() string {
	if s.id == "" {
		return ""
	}
	opencodeTouch(s.id, cwd(), "")
	opencodeRecordKind(s.id, "user", "", ocCompaction)
	opencodeRecordKind(s.id, "assistant", "summary of the session so far", ocSummary)
	return ""
}

// abort ends the open turn as interrupted: opencode 1.18.33 ends its
// answer with MessageAbortedError.
func (s *opencodeStore) abort() {
	if s.id == "" {
		return
	}
	opencodeTouch(s.id, cwd(), "")
	opencodeRecordKind(s.id, "assistant", "", ocAborted)
}

func (s *opencodeStore) reply(msg string) {
	opencodeTouch(s.id, cwd(), "")
	opencodeRecord(s.id, "assistant", msg)
	opencodeIdle(s.id, s.last, msg)
}

func runOpencode(args []string) int {
	p := parseArgs(args, opencodeFlags)
	pos := p.pos
	if len(pos) > 0 && pos[0] == "run" {
		return opencodeRun(p, pos[1:])
	}
	if len(pos) >= 2 && pos[0] == "session" && pos[1] == "list" {
		return opencodeSessionList(p)
	}
	if len(pos) > 0 && pos[0] != "" {
		// `opencode [project]`: the positional is the directory to open.
		if err := os.Chdir(pos[0]); err != nil {
			return fail(1, "Error: %v", err)
		}
	}
	st := &opencodeStore{}
	resumed := false
	if p.has("session") || p.has("continue") {
		if code, ok := exitOnResume(); ok {
			return code
		}
		if id := p.get("session"); id != "" {
			if _, ok := opencodeFind(id); !ok {
				return fail(1, "Error: session not found: %s", id)
			}
			st.id = id
		} else if list := opencodeList(); len(list) > 0 {
			st.id = list[0].ID
		}
		resumed = st.id != ""
	}
	model := p.getOr("model", "fake/model")
	logEvent(map[string]any{"event": "start", "session_id": st.id, "resumed": resumed, "cwd": cwd()})
	return newTUI(roleOpencode, model, st).run()
}

func opencodeSessionList(p parsedArgs) int {
	if os.Getenv("FAKE_SESSION_LIST_FAIL") != "" {
		// As a `session list` that cannot answer (a loaded machine, a
		// locked store) looks to leo.
		return fail(1, "Error: database is locked (fake)")
	}
	list := opencodeList()
	if n, err := strconv.Atoi(p.get("max-count")); err == nil && n >= 0 && n < len(list) {
		list = list[:n]
	}
	if p.get("format") == "json" {
		b, _ := json.MarshalIndent(list, "", "  ")
		fmt.Println(string(b))
		return 0
	}
	for _, s := range list {
		fmt.Printf("%s  %s  %s\n", s.ID, s.Title, time.UnixMilli(s.Updated).Format(time.RFC3339))
	}
	return 0
}

// opencodeRun is `opencode run --format json [--dir D] [-m M] [-s ID] MSG`.
func opencodeRun(p parsedArgs, pos []string) int {
	if d := p.get("dir"); d != "" {
		if err := os.Chdir(d); err != nil {
			return fail(1, "Error: %v", err)
		}
	}
	prompt := strings.Join(pos, " ")
	if prompt == "" {
		b, _ := io.ReadAll(os.Stdin)
		prompt = strings.TrimSpace(string(b))
	}
	if prompt == "" {
		return fail(1, "Error: You must provide a message or a command")
	}
	id := p.get("session")
	if id != "" {
		if code, ok := exitOnResume(); ok {
			return code
		}
		if _, ok := opencodeFind(id); !ok {
			return fail(1, "Error: session not found: %s", id)
		}
	}
	id = opencodeTouch(id, cwd(), prompt)
	opencodeRecord(id, "user", prompt)
	jsonOut := p.get("format") == "json"
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	ms := func() int64 { return time.Now().UnixMilli() }
	emit := func(kind string, part map[string]any) {
		if !jsonOut {
			return
		}
		ev := map[string]any{"type": kind, "timestamp": ms(), "sessionID": id}
		if part != nil {
			part["sessionID"] = id
			part["messageID"] = "msg_fake1"
			ev["part"] = part
		}
		_ = out.Encode(ev)
	}
	sc := scenario()
	if sc == "banner_noise" {
		fmt.Println("opencode (fake) warming up — not json")
	}
	// The fields of opencode 1.18.33's events
	// (internal/harness/opencode/testdata/streams; TestFakeHeadlessStreamsMatchReal).
	emit("step_start", map[string]any{"id": "prt_1", "type": "step-start"})
	if sc == "hang" {
		hangForever()
	}
	start := ms()
	time.Sleep(turnDuration())
	end := func(code int) int {
		logEvent(map[string]any{"event": "exit", "code": code, "scenario": sc})
		return code
	}
	apiError := func(msg string, status int, headers map[string]any) {
		if !jsonOut {
			fmt.Fprintln(os.Stderr, "Error: "+msg)
			return
		}
		_ = out.Encode(map[string]any{"type": "error", "timestamp": ms(), "sessionID": id,
			"error": map[string]any{"name": "APIError", "data": map[string]any{"message": msg, "statusCode": status, "isRetryable": true,
				"responseHeaders": headers, "responseBody": `{"error":{"message":"` + msg + `"}}`,
				"metadata": map[string]any{"url": "http://127.0.0.1/v1/chat/completions"}}}})
	}
	errorEvent := func(msg string) {
		apiError(msg, 500, map[string]any{"content-type": "application/json"})
	}
	tokens := func(in, out int) map[string]any {
		return map[string]any{"total": in + out, "input": in, "output": out, "reasoning": 0, "cache": map[string]any{"write": 0, "read": 0}}
	}
	text := func(t string) {
		emit("text", map[string]any{"id": "prt_2", "type": "text", "text": t, "time": map[string]any{"start": start, "end": ms()}})
	}
	switch sc {
	case "turn_failed":
		errorEvent("provider returned 500 (fake)")
		return end(1)
	case "limited":
		// A 429 opencode gave up on after waiting its retry-afters out
		// itself (testdata/streams/limited_*): the last answer's headers.
		h := map[string]any{"content-type": "application/json", "retry-after": "0"}
		if in, ok := limitResetsIn(); ok {
			h["retry-after"] = strconv.Itoa(int(in.Seconds()))
		}
		apiError("Rate limit reached for requests. Please try again later.", 429, h)
		return end(1)
	case "not_logged_in":
		errorEvent("No API key found for provider fake (not logged in)")
		return end(1)
	case "stream_error_exit0":
		errorEvent("stream error (fake)")
		return end(0)
	case "error_as_success":
		text("Error: provider returned 500 (fake)")
		emit("step_finish", map[string]any{"id": "prt_3", "type": "step-finish", "reason": "stop", "cost": 0, "tokens": tokens(0, 0)})
		return end(0)
	case "truncated":
		// The stream stops before step_finish; the process exits 0.
		text("echo: " + prompt)
		return end(0)
	case "huge_line":
		emit("tool_use", map[string]any{"id": "prt_t", "type": "tool", "callID": "call_1", "tool": "bash",
			"state": map[string]any{"status": "completed", "input": map[string]any{"command": "ls -la"}, "output": hugeText(),
				"title": "ls -la", "metadata": map[string]any{}, "time": map[string]any{"start": start, "end": ms()}}})
	}
	// reconnecting: opencode retries a failed request without a word in
	// its stream, so it reads as a success.
	reply := "echo: " + prompt
	logLine(map[string]any{"message": prompt, "pid": os.Getpid()})
	if sc == "banner_noise" {
		emit("fake_unknown", map[string]any{"id": "prt_x", "type": "mystery"})
	}
	text(reply)
	emit("step_finish", map[string]any{"id": "prt_3", "type": "step-finish", "reason": "stop", "cost": 0.0008, "tokens": tokens(1200, 20)})
	opencodeTouch(id, cwd(), "")
	opencodeRecord(id, "assistant", reply)
	if !jsonOut {
		fmt.Println(reply)
	}
	return end(0)
}

// ---- opencode: the TUI's screens ---------------------------------------------
//
// What the real opencode 1.18.33 draws (testdata/screens/opencode and
// docs/harness-behaviour/opencode.md): before a conversation, a home screen
// with the logo and a 75-column input box centred in the pane; once a
// conversation shows, the transcript from the top and the box two columns in
// along the bottom, as wide as the pane less four columns. The box is a ┃
// border closed by a ╹▀▀▀ edge; its last line is the mode line
// "Build · <model>"; under it a footer with the spinner and "esc interrupt"
// while a turn runs. On panes wider than 120 columns a
// sidebar (title, context, the directory) takes the right 42 columns.

const (
	ocHomeBoxWidth = 75 // the home screen's box, ╹ included
	ocVersion      = "1.18.33"
	ocPlaceholder  = `Ask anything… "What is the tech stack of this project?"`
	// ocPasteChars: a paste longer than this, or of three lines or more,
	// shows as "[Pasted ~N lines]".
	ocPasteChars = 150
	// Panes wider than ocWideAbove get a sidebar ocSidebarWidth columns
	// wide right of the transcript and the box.
	ocWideAbove    = 120
	ocSidebarWidth = 42
)

var ocLogo = []string{
	"                                 ▄",
	"█▀▀█ █▀▀█ █▀▀█ █▀▀▄ █▀▀▀ █▀▀█ █▀▀█ █▀▀█",
	"█  █ █  █ █▀▀▀ █  █ █    █  █ █  █ █▀▀▀",
	"▀▀▀▀ █▀▀▀ ▀▀▀▀ ▀▀▀▀ ▀▀▀▀ ▀▀▀▀ ▀▀▀▀ ▀▀▀▀",
}

// opencodeScreen returns every row of the pane and the cursor's row and
// column.
func (t *tui) opencodeScreen(width, height int) (rows []string, curRow, curCol int) {
	rows = make([]string, height)
	if len(t.history) == 0 && !t.busy || t.opencodeFirstSubmitGap() {
		return t.opencodeHome(rows, width, height)
	}
	col, boxWidth := 2, width-4
	wide := width > ocWideAbove
	if wide {
		boxWidth -= ocSidebarWidth
	}
	box, cr, cc := t.opencodeBox(boxWidth, false)
	footer := "   " + cwd()
	if t.busy {
		footer = "   " + ocSpinner(time.Since(t.busySince)) + "  esc interrupt"
	}
	footer = rightAlign(footer, "ctrl+p commands", col+boxWidth)
	if wide {
		footer += "    • OpenCode " + ocVersion
	}
	lower := append(box, footer)
	if t.ocPerm != nil {
		// The prompt takes the box's and the footer's place.
		box = t.opencodePermissionRows(boxWidth)
		lower, cr, cc = box, 0, 0
	}
	boxTop := height - 1 - len(lower) // the pane's last row stays blank
	transcript := append([]string{""}, t.history...)
	if t.busy {
		transcript = append(transcript, "     ▣  Build · "+t.model, "")
	}
	// Keep the newest transcript rows that fit above the box.
	if room := boxTop; len(transcript) > room {
		transcript = transcript[len(transcript)-max(room, 0):]
	}
	copy(rows, transcript)
	for i, l := range lower {
		if r := boxTop + i; r >= 0 && r < height {
			if i < len(box) {
				l = strings.Repeat(" ", col) + l
			}
			rows[r] = l
		}
	}
	if wide {
		side := width - ocSidebarWidth + 2
		for i, l := range []string{"New session", "", "Context", "0 tokens", "0% used", "$0.00 spent", "", "LSP", "LSPs are disabled"} {
			if 1+i < boxTop && l != "" {
				rows[1+i] = atColumn(rows[1+i], side, l)
			}
		}
		if m := boxTop + len(box) - 2; m >= 0 && m < height && t.ocPerm == nil {
			rows[m] = atColumn(rows[m], side, cwd())
		}
		if t.ocPerm != nil && boxTop+len(box)-3 >= 0 {
			// Beside the prompt: the directory, and the version that
			// sits in the footer otherwise.
			m := boxTop + len(box)
			rows[m-3] = atColumn(rows[m-3], side, cwd())
			rows[m-1] = atColumn(rows[m-1], side, "• OpenCode "+ocVersion)
		}
	}
	return rows, boxTop + cr, col + cc
}

// opencodeFirstSubmitGap reports whether the first turn is in the window
// after Enter in which the real opencode still shows its home screen, the
// box emptied and no busy sign (about 2.5 s on a loaded machine), while the
// message is already in its store: FAKE_OPENCODE_FIRST_SUBMIT_GAP_MS long,
// 0 (off) by default. The screen cannot tell this from idle; only the
// adapter's TurnWitness can.
func (t *tui) opencodeFirstSubmitGap() bool {
	if !t.busy || time.Since(t.busySince) >= envMS("FAKE_OPENCODE_FIRST_SUBMIT_GAP_MS", 0) {
		return false
	}
	for _, l := range t.history {
		if strings.Contains(l, "▣") {
			return false // not the first turn
		}
	}
	return true
}

// opencodeHome draws the home screen: logo, box and footer centred as one
// block above the bottom line with the directory and version.
func (t *tui) opencodeHome(rows []string, width, height int) ([]string, int, int) {
	boxCol := max(0, (width-ocHomeBoxWidth+1)/2)
	logoCol := max(0, (width-39+1)/2)
	box, cr, cc := t.opencodeBox(ocHomeBoxWidth, true)
	block := make([]string, 0, 12)
	for _, l := range ocLogo {
		block = append(block, strings.Repeat(" ", logoCol)+l)
	}
	block = append(block, "", "")
	boxRow := len(block)
	for _, l := range box {
		block = append(block, strings.Repeat(" ", boxCol)+l)
	}
	block = append(block, rightAlign("", "tab agents  ctrl+p commands", boxCol+ocHomeBoxWidth))
	top := max(0, (height-2-len(block))/2)
	for i, l := range block {
		if top+i < height {
			rows[top+i] = l
		}
	}
	if height >= 2 {
		rows[height-2] = rightAlign("  "+cwd(), ocVersion, width-2)
	}
	return rows, top + boxRow + cr, boxCol + cc
}

// opencodeBox draws the input box, width columns wide: a padding row, the
// input (or on the home screen the placeholder), a padding row, the mode line and the edge. It
// returns the rows and the cursor's place in them.
func (t *tui) opencodeBox(width int, home bool) (rows []string, curRow, curCol int) {
	rows = append(rows, "┃")
	var input []string
	switch {
	case len(t.input) > 0:
		input = strings.Split(t.inputDisplay(), "\n")
	case home:
		input = []string{ocPlaceholder}
	default:
		input = []string{""}
	}
	var shown []string
	for _, l := range input {
		shown = append(shown, ocWrap(l, width-5)...)
	}
	for _, l := range shown {
		rows = append(rows, strings.TrimRight("┃  "+l, " "))
	}
	curRow = len(rows) - 1
	curCol = 3 + utf8.RuneCountInString(shown[len(shown)-1])
	if len(t.input) == 0 {
		curCol = 3
	}
	rows = append(rows, "┃", "┃  Build · "+t.model, "╹"+strings.Repeat("▀", max(1, width-1)))
	return rows, curRow, curCol
}

// ocWrap breaks l into rows of at most width runes, as opencode's box
// does: at spaces when a word fits, a longer word cut at the width.
func ocWrap(l string, width int) []string {
	width = max(width, 1)
	var rows []string
	var cur []rune
	for _, w := range strings.SplitAfter(l, " ") {
		word := []rune(w)
		if len(cur)+len(strings.TrimRight(w, " ")) > width && len(cur) > 0 {
			rows = append(rows, strings.TrimRight(string(cur), " "))
			cur = nil
		}
		for len(word) > width {
			rows = append(rows, string(word[:width]))
			word = word[width:]
		}
		cur = append(cur, word...)
	}
	return append(rows, strings.TrimRight(string(cur), " "))
}

// ocSpinner is the footer's eight-cell spinner: a run of ■ sweeping over ⬝.
func ocSpinner(d time.Duration) string {
	n := int(d/(250*time.Millisecond)) % 8
	var b strings.Builder
	for i := range 8 {
		if i >= n && i < n+3 {
			b.WriteString("■")
		} else {
			b.WriteString("⬝")
		}
	}
	return b.String()
}

// atColumn writes s into row starting at column col (row cut or padded).
func atColumn(row string, col int, s string) string {
	r := []rune(row)
	if len(r) > col {
		r = r[:col]
	}
	return string(r) + strings.Repeat(" ", col-len(r)) + s
}

// rightAlign pads left so right ends at column end (left kept whole).
func rightAlign(left, right string, end int) string {
	pad := end - utf8.RuneCountInString(left) - utf8.RuneCountInString(right)
	if pad < 2 {
		pad = 2
	}
	return left + strings.Repeat(" ", pad) + right
}

// opencodePasteLabel is how opencode shows a paste in its box: as is when
// short, else "[Pasted ~N lines]".
func opencodePasteLabel(s string) string {
	lines := strings.Count(s, "\n") + 1
	if lines < 3 && utf8.RuneCountInString(s) <= ocPasteChars {
		return ""
	}
	return fmt.Sprintf("[Pasted ~%d lines]", lines)
}

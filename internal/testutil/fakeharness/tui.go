package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// pasteBurstWindow: like real codex, an Enter this soon after pasted (or
// burst-typed) bytes is taken as a newline, not a submit.
const pasteBurstWindow = 120 * time.Millisecond

// store records a TUI session's turns in the tool's own files.
type store interface {
	submit(msg string)
	reply(msg string)
	// compact records a /compact the way the real tool does; refused is
	// the tool's words when it declines ("" when it compacted).
	compact() (refused string)
}

// failer is a store that records a turn the model answered with an error
// (codex: the rollout's task_complete carries it).
type failer interface {
	fail(words string)
}

// failMarker in a message makes its turn fail (fakes whose store is a
// failer): the model answers fakeModelError, as the test model server's
// HTTP 400 reads in codex 0.171.0's rollout.
const (
	failMarker     = "fake-model-error"
	fakeModelError = `{"error":{"code":null,"message":"fake: scripted error","type":"server_error"}}`
)

// part of the input line: typed text, or a paste that claude shows as a
// placeholder.
type part struct {
	text  string
	label string
}

type tui struct {
	role  role
	model string
	store store
	out   *os.File

	trust    bool // a trust dialog is showing
	trustSel int
	onTrust  func()
	// claude: the dialog was answered and stays up a while; keys sent
	// meanwhile wait in held and are applied after it.
	trustAnswering bool
	trustDoneCh    chan struct{}
	held           []event
	// claude: a submitted message already in the transcript while the box
	// still shows it (FAKE_SUBMIT_LAG_MS).
	lagging     bool
	submitLagCh chan string
	recorded    bool // the current turn's message is in the store already

	input      []part
	pastes     int
	history    []string
	busy       bool
	busySince  time.Time
	current    string
	queue      []string
	lastBurst  time.Time
	hung       bool
	turnTimer  *time.Timer
	turnDoneCh chan struct{}
	// wake runs a timer's work on the main loop (then redraws).
	wake chan func()
	// codex is what only codex's screen has (startup, held submit, gap).
	codex *codexTUI
	// claude: the permission prompt showing (claude_permission.go), and
	// the commands answered "don't ask again".
	perm    *claudePermission
	allowed map[string]bool
	// opencode: its permission prompt showing (opencode_permission.go).
	ocPerm *ocPermission
}

var (
	termMu    sync.Mutex
	termState *term.State
	termFd    = -1
)

// restoreTerminal undoes raw mode and bracketed paste; safe to call twice.
func restoreTerminal() {
	termMu.Lock()
	defer termMu.Unlock()
	if termState != nil {
		os.Stdout.WriteString("\x1b[?2004l\r\n")
		_ = term.Restore(termFd, termState)
		termState = nil
	}
}

func newTUI(r role, model string, st store) *tui {
	t := &tui{role: r, model: model, store: st, out: os.Stdout, turnDoneCh: make(chan struct{}, 1), trustDoneCh: make(chan struct{}, 1), submitLagCh: make(chan string, 1), wake: make(chan func(), 4), allowed: map[string]bool{}}
	if r == roleCodex {
		t.codex = &codexTUI{}
	}
	return t
}

// run is the TUI main loop. It returns the exit code.
func (t *tui) run() int {
	fd := int(os.Stdin.Fd())
	if term.IsTerminal(fd) {
		st, err := term.MakeRaw(fd)
		if err == nil {
			termMu.Lock()
			termState, termFd = st, fd
			termMu.Unlock()
		}
	}
	defer restoreTerminal()

	inputCh := make(chan []byte)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := os.Stdin.Read(buf)
			if n > 0 {
				b := append([]byte(nil), buf[:n]...)
				rawLog(b)
				inputCh <- b // blocks while hung: input then piles up in the tty
			}
			if err != nil {
				close(inputCh)
				return
			}
		}
	}()

	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)

	// Slow start: draw nothing and drop every byte until ready.
	slow := time.After(envMS("FAKE_SLOW_START_MS", 0))
	for waiting := true; waiting; {
		select {
		case <-slow:
			waiting = false
		case _, ok := <-inputCh:
			if !ok {
				return 0
			}
		}
	}
	os.Stdout.WriteString("\x1b[?2004h")
	logEvent(map[string]any{"event": "ready"})
	if t.codex != nil {
		t.codexStart()
	}
	t.draw()

	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var dec decoder
	for {
		if t.hung {
			hangForever() // stop reading and drawing for good
		}
		select {
		case b, ok := <-inputCh:
			if !ok {
				if os.Getenv("FAKE_IGNORE_HUP") != "" {
					// The real opencode outlives its terminal: it ignores
					// the hangup and keeps running until signalled.
					select {}
				}
				return 0
			}
			for _, ev := range dec.feed(b) {
				if code, exit := t.handle(ev); exit {
					return code
				}
				if t.hung {
					break
				}
			}
			if !t.hung {
				t.draw()
			}
		case <-t.turnDoneCh:
			t.finishTurn()
			t.draw()
		case msg := <-t.submitLagCh:
			t.input, t.lagging, t.recorded = nil, false, true
			t.startTurn(msg)
			t.recorded = false
			t.draw()
		case <-t.trustDoneCh:
			held := t.held
			t.held = nil
			t.acceptTrust()
			for _, ev := range held {
				if code, exit := t.handle(ev); exit {
					return code
				}
			}
			t.draw()
		case f := <-t.wake:
			f()
			if !t.hung {
				t.draw()
			}
		case <-tick.C:
			if t.busy {
				t.draw()
			}
		case <-winch:
			t.draw()
		}
	}
}

// handle applies one input event; exit says the program should end.
func (t *tui) handle(ev event) (int, bool) {
	now := time.Now()
	if t.trust && t.trustAnswering {
		t.held = append(t.held, ev)
		return 0, false
	}
	if t.trust {
		switch ev.kind {
		case evEnter:
			if t.trustSel == 0 && t.role == roleClaude {
				t.trustAnswering = true
				time.AfterFunc(claudeTrustAnswerDelay(), func() { t.trustDoneCh <- struct{}{} })
				return 0, false
			}
			if t.trustSel == 0 {
				t.acceptTrust()
				return 0, false
			}
			return fail(1, "fake: trust declined"), true
		case evUp, evDown:
			t.trustSel = 1 - t.trustSel
		case evText:
			switch ev.text {
			case "1":
				t.trustSel = 0
			case "2":
				t.trustSel = 1
			}
		case evEscape, evCtrlC:
			return fail(1, "fake: trust declined"), true
		}
		return 0, false
	}
	if t.perm != nil {
		t.claudePermissionKey(ev)
		return 0, false
	}
	if t.ocPerm != nil {
		t.opencodePermissionKey(ev)
		return 0, false
	}
	if t.codex != nil && t.codex.held && (ev.kind == evText || ev.kind == evPaste) {
		t.codex.held = false // typing cancels a held submit
	}
	switch ev.kind {
	case evText:
		t.addText(ev.text)
		if utf8.RuneCountInString(ev.text) >= 2 {
			t.lastBurst = now
		}
	case evPaste:
		t.addPaste(ev.text)
		t.lastBurst = now
	case evNewline:
		t.addText("\n")
	case evEnter:
		if t.role == roleCodex && now.Sub(t.lastBurst) < pasteBurstWindow {
			t.addText("\n")
			return 0, false
		}
		if t.codex != nil && t.codexHold() {
			return 0, false
		}
		msg := t.inputText()
		if t.claudeLagSubmit(msg) {
			return 0, false
		}
		t.input = nil
		if strings.TrimSpace(msg) == "" {
			return 0, false
		}
		return t.submit(msg)
	case evBackspace:
		t.backspace()
	case evCtrlU:
		t.input = nil
	case evCtrlC:
		if len(t.input) > 0 {
			t.input = nil
			return 0, false
		}
		return fail(0, "fake: interrupted"), true
	case evEscape:
		if t.codex != nil && t.codex.held {
			t.codex.held = false
			return 0, false
		}
		if t.busy {
			t.turnTimer.Stop()
			t.busy = false
			logEvent(map[string]any{"event": "interrupted", "message": t.current})
			if t.role == roleClaude {
				// claude 2.1.197, interrupted before the model answered,
				// takes the message back out of the conversation and puts
				// it into the input line.
				if n := len(t.userLines(t.current)); len(t.history) >= n {
					t.history = t.history[:len(t.history)-n]
				}
				t.input = []part{{text: t.current}}
				return 0, false
			}
			t.history = append(t.history, t.interruptedLine())
			if a, ok := t.store.(interface{ abort() }); ok {
				a.abort()
			}
		}
	}
	return 0, false
}

// acceptTrust closes the trust dialog and records the answer.
func (t *tui) acceptTrust() {
	t.trust, t.trustAnswering = false, false
	logEvent(map[string]any{"event": "trust_accepted"})
	if t.onTrust != nil {
		t.onTrust()
	}
}

func (t *tui) addText(s string) {
	if n := len(t.input); n > 0 && t.input[n-1].label == "" {
		t.input[n-1].text += s
		return
	}
	t.input = append(t.input, part{text: s})
}

// addPaste keeps pasted text; claude shows a multi-line or long paste as a
// placeholder, and codex a paste of more than 1,000 characters, as the real
// ones do.
func (t *tui) addPaste(s string) {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	if t.role == roleCodex && utf8.RuneCountInString(s) > codexLargePaste {
		t.pastes++
		t.input = append(t.input, part{text: s, label: fmt.Sprintf("[Pasted Content %d chars]", utf8.RuneCountInString(s))})
		return
	}
	if label, ok := claudePastePlaceholder(s, t.pastes+1); ok && t.role == roleClaude {
		t.pastes++ // claude numbers only the pastes it shows as a placeholder
		t.input = append(t.input, part{text: s, label: label})
		return
	}
	if t.role == rolePi {
		if label := piPasteLabel(s, t.pastes+1); label != "" {
			t.pastes++
			t.input = append(t.input, part{text: s, label: label})
			return
		}
	}
	if t.role == roleOpencode {
		if label := opencodePasteLabel(s); label != "" {
			t.input = append(t.input, part{text: s, label: label})
			return
		}
	}
	t.addText(s)
}

func (t *tui) backspace() {
	n := len(t.input)
	if n == 0 {
		return
	}
	last := &t.input[n-1]
	if last.label != "" {
		t.input = t.input[:n-1]
		return
	}
	_, size := utf8.DecodeLastRuneInString(last.text)
	last.text = last.text[:len(last.text)-size]
	if last.text == "" {
		t.input = t.input[:n-1]
	}
}

func (t *tui) inputText() string {
	var b strings.Builder
	for _, p := range t.input {
		b.WriteString(p.text)
	}
	return b.String()
}

func (t *tui) inputDisplay() string {
	var b strings.Builder
	for _, p := range t.input {
		if p.label != "" {
			b.WriteString(p.label)
		} else {
			b.WriteString(drawText(t.role, p.text))
		}
	}
	return b.String()
}

// fakeCommand reports whether msg is one of the fake's own commands: the
// real TUIs' "/exit [code]" and the fake's "/hang", or their plain-text
// forms "fake-exit [code]" and "fake-hang", which tests send through leo
// (leo refuses to deliver a message a TUI would run as a command).
func fakeCommand(msg string) (name, rest string, ok bool) {
	m := strings.TrimSpace(msg)
	for _, c := range []struct{ prefix, name string }{{"/exit", "exit"}, {"fake-exit", "exit"}, {"/hang", "hang"}, {"fake-hang", "hang"}} {
		if r, found := strings.CutPrefix(m, c.prefix); found && (r == "" || (c.name == "exit" && r[0] == ' ')) {
			return c.name, strings.TrimSpace(r), true
		}
	}
	return "", "", false
}

// submit starts a turn, or runs one of the fake's own commands.
func (t *tui) submit(msg string) (int, bool) {
	cmd, rest, isCmd := fakeCommand(msg)
	if isCmd && cmd == "exit" {
		code, _ := strconv.Atoi(rest)
		logEvent(map[string]any{"event": "message", "message": msg})
		restoreTerminal()
		fmt.Fprintf(os.Stderr, "fake: exiting %d\n", code)
		logEvent(map[string]any{"event": "exit", "code": code})
		lingerForTmux()
		return code, true
	}
	if isCmd && cmd == "hang" {
		logEvent(map[string]any{"event": "message", "message": msg})
		logEvent(map[string]any{"event": "hang"})
		t.hung = true
		return 0, false
	}
	if strings.TrimSpace(msg) == "/compact" && !t.busy {
		t.compact()
		return 0, false
	}
	if t.codex != nil {
		t.codexSubmit(msg)
		return 0, false
	}
	if t.busy {
		t.queue = append(t.queue, msg)
		return 0, false
	}
	t.startTurn(msg)
	return 0, false
}

func (t *tui) startTurn(msg string) {
	t.history = append(t.history, t.userLines(msg)...)
	t.beginTurn(msg)
}

// beginTurn records msg as a turn and starts it (its history lines are
// already drawn).
func (t *tui) beginTurn(msg string) {
	logLine(map[string]any{"message": msg, "pid": os.Getpid()})
	if !t.recorded {
		t.store.submit(msg)
	}
	t.busy = true
	t.busySince = time.Now()
	t.current = msg
	if cmd, ok := claudeAsk(msg); ok && t.role == roleOpencode {
		t.turnTimer = time.AfterFunc(turnDuration(), func() {
			t.wake <- func() {
				if t.busy && t.current == msg && t.ocPerm == nil {
					t.opencodeCallTool(cmd)
				}
			}
		})
		return
	}
	if cmd, ok := claudeAsk(msg); ok && t.role == roleClaude {
		// The model answers with a tool call first.
		t.turnTimer = time.AfterFunc(turnDuration(), func() {
			t.wake <- func() {
				if t.busy && t.current == msg && t.perm == nil {
					t.claudeCallTool(cmd)
				}
			}
		})
		return
	}
	t.turnTimer = time.AfterFunc(turnDuration(), func() {
		select {
		case t.turnDoneCh <- struct{}{}:
		default:
		}
	})
	if t.codex != nil && envMS("FAKE_CODEX_STREAM_MS", 0) > 0 {
		t.after(t.codexStreamFrom(), func() {}) // redraw as the reply starts
	}
}

// compact runs the TUI's /compact, as the real ones do: the tool records
// the compaction (or its refusal) in its own store, and the screen says so.
// No turn is started; the input line is idle again at once.
func (t *tui) compact() {
	logEvent(map[string]any{"event": "compact"})
	t.history = append(t.history, t.userLines("/compact")...)
	if refused := t.store.compact(); refused != "" {
		t.history = append(t.history, "  ⎿  "+refused, "")
		return
	}
	t.history = append(t.history, "  ⎿  Compacted", "")
}

func (t *tui) finishTurn() {
	if !t.busy {
		return
	}
	t.busy = false
	reply := "echo: " + t.current
	if f, ok := t.store.(failer); ok && strings.Contains(t.current, failMarker) {
		// The model answered an error: codex draws it with "■" and
		// records it in its rollout (and runs no notify).
		t.history = append(t.history, "■ "+fakeModelError, "")
		f.fail(fakeModelError)
	} else {
		t.history = append(t.history, t.replyLines(reply)...)
		t.store.reply(reply)
	}
	t.nextQueued()
}

// nextQueued starts the turn of the first message queued meanwhile.
func (t *tui) nextQueued() {
	if len(t.queue) > 0 {
		next := t.queue[0]
		t.queue = t.queue[1:]
		if t.codex != nil { // codex drew it when it was submitted
			t.beginTurn(next)
			return
		}
		t.startTurn(next)
	}
}

// rawLog appends raw input bytes to $FAKE_RAW_LOG (tests assert exactly
// what tmux delivered, bracketed-paste markers included).
func rawLog(b []byte) {
	path := os.Getenv("FAKE_RAW_LOG")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = f.Write(b)
}

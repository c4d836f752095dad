package real

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// budget bounds each harness's run (they run side by side), so the whole
// suite stays well under the 28-minute limit even when every wait times out.
// A whole run took 10-12 minutes on a shared 2-core machine before the
// conversation steps added about two. LEO_REALCLI_BUDGET (a Go duration)
// overrides it.
var budget = 20 * time.Minute

// TestRealCLI runs the contract for each harness (LEO_REALCLI_HARNESSES, a
// comma list, picks some), the harnesses side by side.
func TestRealCLI(t *testing.T) {
	if !wanted() {
		t.Skipf("%s is not set: make test-real installs the real CLIs and runs this suite", realcli.BinDirEnv)
	}
	ranContract.Store(true)
	results.plan(stepNames(Steps))
	if v := os.Getenv("LEO_REALCLI_BUDGET"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("LEO_REALCLI_BUDGET=%q: %v", v, err)
		}
		budget = d
	}
	hs := realcli.Harnesses
	if v := os.Getenv("LEO_REALCLI_HARNESSES"); v != "" {
		hs = strings.Split(v, ",")
	}
	pins, err := realcli.Versions("../realcli/versions.env")
	if err != nil {
		t.Fatal(err)
	}
	results.setSource(source(pins))
	bin, err := realcli.BinDir()
	if err != nil {
		for _, h := range hs {
			for _, s := range Steps {
				results.set(h, s.Name, statusUnreached, err.Error())
			}
		}
		t.Fatal(err)
	}
	for _, h := range hs {
		t.Run(h, func(t *testing.T) {
			t.Parallel() // make test-real passes -parallel 3: all at once
			r := &run{t: t, h: h, bin: bin, pins: pins, deadline: time.Now().Add(budget)}
			r.runSteps(r.setup, Steps)
		})
	}
}

// LatestEnv says the CLIs are the newest from npm (make test-real-latest),
// not the pins: the versions step then records what runs and compares
// nothing.
const LatestEnv = "LEO_REALCLI_LATEST"

func latest() bool { return os.Getenv(LatestEnv) == "1" }

// source is the table header's account of where the CLIs came from.
func source(pins map[string]string) string {
	var ps []string
	for _, h := range realcli.Harnesses {
		ps = append(ps, h+" "+pins[versionKey[h]])
	}
	if latest() {
		return "the newest CLIs from npm (" + LatestEnv + "=1; the pins are " + strings.Join(ps, ", ") + ")"
	}
	return "the pinned CLIs (e2e/realcli/versions.env)"
}

// versionKey is the versions.env key of each harness's npm package.
var versionKey = func() map[string]string {
	out := map[string]string{}
	for _, c := range realcli.CLIs {
		out[c.Name] = c.VersionKey
	}
	return out
}()

// run is one harness's world: a leo home with one daemon, one model server,
// the real CLI first on PATH, and the agent under test (named after the
// harness, in workspace ws/<harness>). w, ms and d are nil until setup has
// made them.
type run struct {
	t        *testing.T
	h        string
	bin      string            // the real CLIs' directory
	pins     map[string]string // versions.env
	w        *leoproc.World
	ms       *modelserver.Server
	d        *leoproc.Daemon
	deadline time.Time
	n        int    // markers made so far
	first    string // the marker of the first turn of the current conversation
	idle     bool   // idle suspend on in leo.yaml
	port     int    // the web API's port (webPort)
	dumping  bool   // request bodies are kept (listOnMarker)
	// replied are the markers of the turns the conversation steps sent,
	// in order, with who sent them (conversation_test.go).
	replied []sentTurn
}

// setup makes the harness's world: the model server, a leo home whose PATH
// has the real CLI first, the CLI's files, leo.yaml, and a ready daemon
// with its web API. It runs on the harness's test (what it starts lives as
// long as the harness's run); an error leaves every step not reached.
func (r *run) setup() error {
	t, h := r.t, r.h
	r.ms = modelserver.Start(t)
	r.w = leoproc.New(t)
	// The real CLI comes before the fakes leoproc puts on PATH.
	r.w.PathPrefix = r.bin
	home := r.w.UserEnv["HOME"]
	if err := realcli.Setup(h, home, r.ms.URL); err != nil {
		return fmt.Errorf("the %s files in the test home: %w", h, err)
	}
	// Registered after leoproc.New, so it runs before the world kills its
	// tmux server: the TUIs (opencode ignores the hangup) and codex's
	// app-server (it outlives the TUI) are ended by PID, found through the
	// panes and by this home.
	t.Cleanup(func() {
		if panes, err := r.w.Panes(); err == nil {
			for _, p := range panes {
				realcli.KillTree(p.PID)
			}
		}
		realcli.KillUnder(home)
		if t.Failed() {
			t.Logf("%s model server requests: %s", h, modelserver.Summary(r.ms.Requests()))
		}
	})
	r.writeConfig()
	d := r.w.StartProcess()
	if err := r.w.WaitReady(d, time.Minute); err != nil {
		return fmt.Errorf("leo service: %w", err)
	}
	r.d = d
	if err := r.waitWeb(time.Minute); err != nil {
		return fmt.Errorf("the daemon's web API: %w", err)
	}
	return nil
}

// versions: the CLI answers --version, and it is the pinned version (under
// LEO_REALCLI_LATEST=1 any version is expected). A CLI that cannot say
// its version cannot run the other steps: they are not reached. A version
// other than the pin fails this step only: the others run on it.
func (r *run) versions(s *step) {
	out, err := realcli.InstalledVersion(filepath.Join(r.bin, r.h))
	if err != nil {
		s.Stopf("%v", err)
	}
	results.ran(r.h, out)
	if latest() {
		s.Logf("%s --version: %s (the pin is %s)", r.h, out, r.pins[versionKey[r.h]])
		return
	}
	if want := r.pins[versionKey[r.h]]; want == "" || !strings.Contains(out, want) {
		s.Fatalf("%s --version says %q, versions.env pins %s=%s (rerun e2e/realcli/install.sh; make test-real-latest runs the newest on purpose)", r.h, out, versionKey[r.h], want)
	}
}

// marker returns a new marker; the model server answers it with "ACK <marker>".
func (r *run) marker() string {
	r.n++
	return fmt.Sprintf("LEO-%s-%03d", r.h, r.n)
}

// hasMarker reports whether b holds marker as a whole marker (LEO-x-001
// is not in LEO-x-0012).
func hasMarker(b []byte, marker string) bool {
	return regexp.MustCompile(regexp.QuoteMeta(marker) + `([^A-Za-z0-9-]|$)`).Match(b)
}

// peekMarker is the marker the next call of marker returns.
func (r *run) peekMarker() string { return fmt.Sprintf("LEO-%s-%03d", r.h, r.n+1) }

// Template names: the agent under test, one in a never-trusted workspace,
// one in a workspace reached through a symlink.
func (r *run) fresh() string { return r.h + "-fresh" }
func (r *run) link() string  { return r.h + "-link" }

func (r *run) workspace(name string) string { return filepath.Join(r.w.Workspaces, name) }

// writeConfig writes leo.yaml: three templates of the harness, each with
// the model server's environment; idle suspend on the main one when r.idle.
func (r *run) writeConfig() {
	env, err := realcli.Env(r.h, r.ms.URL)
	if err != nil {
		r.t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(r.webConfig())
	b.WriteString("defaults:\n  harness: " + r.h + "\ntemplates:\n")
	names := []string{r.h, r.fresh(), r.link(), r.mcpAgent(), r.wtAgent()}
	if _, ok := askOptions[r.h]; ok {
		names = append(names, r.askAgent(), r.approveAgent())
	}
	for _, name := range names {
		fmt.Fprintf(&b, "  %s:\n    harness: %s\n    workspace: %s\n", name, r.h, r.workspace(name))
		if name == r.h && r.idle {
			b.WriteString("    idle_suspend_after: 5s\n")
		}
		if name == r.askAgent() || name == r.approveAgent() {
			b.WriteString("    harness_options:\n      " + askOptions[r.h] + "\n")
		}
		if o, ok := wtOptions[r.h]; ok && name == r.wtAgent() {
			b.WriteString("    harness_options:\n      " + o + "\n")
		}
		b.WriteString("    env:\n")
		for _, k := range sortedKeys(env) {
			fmt.Fprintf(&b, "      %s: %q\n", k, env[k])
		}
	}
	// A one-shot task of the harness and a persistent one (its implicit
	// agent launched from the task's own scope), each in a workspace of
	// its own.
	b.WriteString("tasks:\n")
	for _, name := range []string{r.job(), r.persist(), r.limJob(), r.limJobNoRetry()} {
		fmt.Fprintf(&b, "  %s:\n    harness: %s\n    workspace: %s\n    prompt_file: prompt.md\n    timeout: 6m\n", name, r.h, r.workspace(name))
		if name == r.persist() {
			b.WriteString("    runtime: persistent\n")
		}
		if name == r.limJob() {
			b.WriteString("    retries: 1\n")
		}
		b.WriteString("    env:\n")
		for _, k := range sortedKeys(env) {
			fmt.Fprintf(&b, "      %s: %q\n", k, env[k])
		}
		if err := os.MkdirAll(r.workspace(name), 0o700); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(r.workspace(name), "prompt.md"), []byte("nothing yet\n"), 0o600); err != nil {
			r.t.Fatal(err)
		}
	}
	if err := os.WriteFile(r.w.Home.ConfigPath, []byte(b.String()), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// job and persist name the harness's one-shot and persistent tasks.
func (r *run) job() string     { return r.h + "-job" }
func (r *run) persist() string { return r.h + "-persist" }

// limJob is the one-shot task with one retry that "task run, limited" runs.
func (r *run) limJob() string { return r.h + "-limjob" }

// limJobNoRetry is the same without retries: its limited run is the record.
func (r *run) limJobNoRetry() string { return r.h + "-limjob0" }

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// ---- helpers for steps ----

func (s *step) leo(args ...string) string {
	s.Helper()
	ctx, cancel := s.wait(2 * time.Minute)
	defer cancel()
	out, err := s.r.w.Leo(ctx, args...)
	if err != nil {
		s.Fatalf("%v", err)
	}
	return string(out)
}

func (s *step) get(name string) api.Agent {
	s.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	a, err := s.r.w.Client.Get(ctx, name)
	if err != nil {
		s.Fatalf("get %s: %v", name, err)
	}
	return a
}

// poll checks cond every 100 ms until it holds or d (capped by the budget)
// passes; then it fails the step with what and the last state.
func (s *step) poll(d time.Duration, what string, cond func() (bool, string)) {
	s.Helper()
	ctx, cancel := s.wait(d)
	defer cancel()
	last := ""
	for {
		ok, state := cond()
		if ok {
			return
		}
		last = state
		select {
		case <-ctx.Done():
			s.Fatalf("%s: not within %v; last: %s", what, d, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func describe(a api.Agent) string {
	d := fmt.Sprintf("state %s, session %q, restarts %d", a.State, a.SessionID, a.Restarts)
	if a.LastError != "" {
		d += ", error " + a.LastError
	}
	if a.LastExit != nil {
		d += fmt.Sprintf(", last exit status %d signal %s", a.LastExit.Status, a.LastExit.Signal)
	}
	if n := len(a.Deliveries); n > 0 {
		last := a.Deliveries[n-1]
		d += fmt.Sprintf(", last delivery %s %s %s", last.ID, last.Status, last.Error)
	}
	return d
}

// waitRunning waits until the agent is running and its pane shows the
// harness's input box.
func (s *step) waitRunning(name string, d time.Duration) api.Agent {
	s.Helper()
	var a api.Agent
	s.poll(d, name+" running", func() (bool, string) {
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		defer cancel()
		var err error
		a, err = s.r.w.Client.Get(ctx, name)
		if err != nil {
			return false, err.Error()
		}
		return a.State == api.StateRunning, describe(a)
	})
	return a
}

// send queues text to name and returns the delivery id.
func (s *step) send(name, text string) api.SendResult {
	s.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	res, err := s.r.w.Client.Send(ctx, name, text)
	if err != nil {
		s.Fatalf("send to %s: %v", name, err)
	}
	return res
}

// delivered waits for message id to name to be recorded delivered.
//
// A delivery recorded failed fails the step at once, saying whether the
// model server got the message anyway (leo's record would then be wrong).
func (s *step) delivered(name, id, marker string, d time.Duration) {
	s.Helper()
	s.poll(d, "message "+id+" to "+name+" delivered", func() (bool, string) {
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		defer cancel()
		a, err := s.r.w.Client.Get(ctx, name)
		if err != nil {
			return false, err.Error()
		}
		for _, dl := range a.Deliveries {
			if dl.ID == id {
				if dl.Status == "failed" {
					// A running codex may submit a held message up to a
					// minute later ("Waiting for startup").
					look := 10 * time.Second
					if a.State == api.StateRunning {
						look = time.Minute
					}
					ctx, cancel := s.wait(look)
					defer cancel()
					seen := "; the model server has not seen it"
					if req, err := s.r.ms.WaitTurn(ctx, marker); err == nil {
						when := "before"
						if d := req.Time.Sub(dl.At); d > 0 {
							when = d.Round(100*time.Millisecond).String() + " after"
						}
						seen = fmt.Sprintf("; yet the model server got it (turn #%d, %s the failure was recorded)", req.Seq, when)
					}
					s.Fatalf("message %s (%s) to %s recorded failed: %s%s (%s)", id, marker, name, dl.Error, seen, describe(a))
				}
				return dl.Status == "delivered", "status " + dl.Status
			}
		}
		return false, "no outcome yet; " + describe(a)
	})
}

// turn waits for the model server to see a turn carrying marker.
func (s *step) turn(marker string, d time.Duration) modelserver.Request {
	s.Helper()
	ctx, cancel := s.wait(d)
	defer cancel()
	req, err := s.r.ms.WaitTurn(ctx, marker)
	if err != nil {
		s.Fatalf("%v", err)
	}
	return req
}

// pane waits for text on the agent's pane.
func (s *step) pane(name, text string, d time.Duration) {
	s.Helper()
	s.poll(d, fmt.Sprintf("%q on %s's pane", text, name), func() (bool, string) {
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		defer cancel()
		l, err := s.r.w.Client.Logs(ctx, name, 400)
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(strings.Join(strings.Fields(l.Text), " "), text), "pane:\n" + lastLines(l.Text, 25)
	})
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	var keep []string
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, "\n")
}

// once checks that exactly one turn carried marker.
func (s *step) once(marker string) {
	s.Helper()
	if got := modelserver.WithMarker(s.r.ms.Requests(), marker); len(got) != 1 {
		s.Fatalf("%d turns carried %s, want 1: %s", len(got), marker, modelserver.Summary(got))
	}
}

// exchange sends a message with a new marker to name and checks the whole
// path: delivered, one turn at the model server, the reply on the pane. It
// returns the turn.
func (s *step) exchange(name, words string) (string, modelserver.Request) {
	s.Helper()
	m := s.r.marker()
	res := s.send(name, words+" "+m+" please")
	s.delivered(name, res.ID, m, 3*time.Minute)
	req := s.turn(m, time.Minute)
	s.pane(name, "ACK "+m, time.Minute)
	s.once(m)
	return m, req
}

// panePID is the pid of the agent's pane process.
func (s *step) panePID(name string) int {
	s.Helper()
	panes, err := s.r.w.AgentPanes()
	if err != nil {
		s.Fatalf("list panes: %v", err)
	}
	ps := panes["leo-"+name]
	if len(ps) != 1 || ps[0].PID <= 0 {
		s.Fatalf("agent %s: panes %+v", name, ps)
	}
	return ps[0].PID
}

// inConversation checks that req carries the history of the conversation
// whose first turn had marker first: a resume into the same conversation.
func (s *step) inConversation(req modelserver.Request, first string) {
	s.Helper()
	if first == "" {
		s.Fatalf("no earlier turn to look for (an earlier step failed)")
	}
	if !hasMarker(req.Body, first) {
		s.Fatalf("turn #%d does not carry the conversation's first message (%s): not the same conversation", req.Seq, first)
	}
}

// ---- the steps ----

func (r *run) spawnReady(s *step) {
	s.leo("agent", "spawn", r.h)
	// Cold starts of the real CLIs are slow on a busy machine (opencode
	// installs its plugin package from npm on first start).
	s.waitRunning(r.h, 3*time.Minute)
	s.pane(r.h, realcli.ReadyText[r.h], time.Minute)
}

func (r *run) deliverReply(s *step) {
	// The conversation's first marker, for the resume checks of later
	// steps — set before the checks, so one failure here does not fail
	// them all for want of it.
	r.first = r.peekMarker()
	s.exchange(r.h, "Hello, a first message.")
}

func (r *run) backToBack(s *step) {
	ms := []string{r.marker(), r.marker(), r.marker()}
	var ids []string
	for i, m := range ms {
		ids = append(ids, s.send(r.h, fmt.Sprintf("Back to back number %d: %s please", i+1, m)).ID)
	}
	for i, id := range ids {
		s.delivered(r.h, id, ms[i], 3*time.Minute)
	}
	var seqs []int
	for _, m := range ms {
		seqs = append(seqs, s.turn(m, time.Minute).Seq)
	}
	for _, req := range modelserver.Turns(s.r.ms.Requests()) {
		n := 0
		for _, m := range req.Markers {
			if slices.Contains(ms, m) {
				n++
			}
		}
		if n > 1 {
			s.Fatalf("turn #%d carried %v: messages merged into one turn", req.Seq, req.Markers)
		}
	}
	if !(seqs[0] < seqs[1] && seqs[1] < seqs[2]) {
		s.Fatalf("turns out of order: %v for %v", seqs, ms)
	}
	for _, m := range ms {
		s.once(m)
	}
	for _, m := range ms {
		s.pane(r.h, "ACK "+m, time.Minute)
	}
}

func (r *run) threeLines(s *step) {
	m := r.marker()
	text := "First line " + m + "\nsecond line of three\nthird line of three"
	res := s.send(r.h, text)
	s.delivered(r.h, res.ID, m, 3*time.Minute)
	req := s.turn(m, time.Minute)
	s.pane(r.h, "ACK "+m, time.Minute)
	s.once(m)
	for _, l := range []string{"second line of three", "third line of three"} {
		if !strings.Contains(req.UserText, l) {
			s.Fatalf("turn #%d with %s lacks %q: %q", req.Seq, m, l, req.UserText)
		}
	}
	for _, other := range modelserver.Turns(r.ms.Requests()) {
		if other.Seq != req.Seq && strings.Contains(other.UserText, "third line of three") {
			s.Fatalf("the 3-line message reached the model in more than one turn (#%d and #%d)", req.Seq, other.Seq)
		}
	}
}

func (r *run) longMessage(s *step) {
	m := r.marker()
	end := "END-" + m[len("LEO-"):]
	var b strings.Builder
	b.WriteString("A long message " + m + ":")
	for i := 1; b.Len() < 4000-len(end)-12; i++ {
		fmt.Fprintf(&b, " word%d", i)
	}
	for b.Len() < 4000-len(end)-1 {
		b.WriteString(".")
	}
	b.WriteString(" " + end)
	text := b.String()
	if len(text) != 4000 {
		s.Fatalf("test bug: message is %d characters", len(text))
	}
	res := s.send(r.h, text)
	s.delivered(r.h, res.ID, m, 3*time.Minute)
	req := s.turn(m, time.Minute)
	s.pane(r.h, "ACK "+m, time.Minute)
	s.once(m)
	if !strings.Contains(req.UserText, text) {
		s.Fatalf("turn #%d does not hold the 4000-character message whole (its user text is %d characters, ends %q)",
			req.Seq, len(req.UserText), tail(req.UserText, 60))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (r *run) conversationID(s *step) {
	var a api.Agent
	s.poll(time.Minute, "conversation id", func() (bool, string) {
		a = s.get(r.h)
		return a.SessionID != "", describe(a)
	})
	// The id must name the conversation the first message went to, in the
	// harness's own store.
	if r.first == "" {
		s.Fatalf("id %s found, but no first message was delivered to check it against", a.SessionID)
	}
	cli, err := realcli.Lookup(r.h)
	if err != nil {
		s.Fatalf("%v", err)
	}
	files := cli.Records(r.w.UserEnv, a.SessionID)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err == nil && hasMarker(data, r.first) && bytes.Contains(data, []byte(a.SessionID)) {
			return
		}
	}
	s.Fatalf("id %s: no record of it holding the first message (%s) in %s's store (looked at %v)", a.SessionID, r.first, r.h, files)
}

func (r *run) killResume(s *step) {
	before := s.get(r.h)
	if before.SessionID == "" {
		s.Fatalf("no conversation id before the kill (%s)", describe(before))
	}
	pid := s.panePID(r.h)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		s.Fatalf("kill %d: %v", pid, err)
	}
	s.poll(2*time.Minute, "restart after the kill", func() (bool, string) {
		a := s.get(r.h)
		return a.Restarts > before.Restarts && a.State == api.StateRunning, describe(a)
	})
	if a := s.get(r.h); a.SessionID != before.SessionID {
		s.Fatalf("after the restart the id is %q, was %q", a.SessionID, before.SessionID)
	}
	_, req := s.exchange(r.h, "After the crash.")
	s.inConversation(req, r.first)
}

func (r *run) restartKeeps(s *step) {
	before := s.get(r.h)
	if before.SessionID == "" {
		s.Fatalf("no conversation id before the restart (%s)", describe(before))
	}
	pid := s.panePID(r.h)
	s.leo("agent", "restart", r.h)
	s.poll(2*time.Minute, "running again in a new pane process", func() (bool, string) {
		a := s.get(r.h)
		panes, _ := r.w.AgentPanes()
		ps := panes["leo-"+r.h]
		return a.State == api.StateRunning && len(ps) == 1 && ps[0].PID != pid, describe(a)
	})
	if a := s.get(r.h); a.SessionID != before.SessionID {
		s.Fatalf("restart changed the id to %q, was %q", a.SessionID, before.SessionID)
	}
	_, req := s.exchange(r.h, "After the restart.")
	s.inConversation(req, r.first)
}

func (r *run) daemonKill(s *step) {
	before := s.get(r.h)
	pid := s.panePID(r.h)
	r.d.Kill(syscall.SIGKILL)
	d := r.w.StartProcess()
	if err := r.w.WaitReady(d, time.Minute); err != nil {
		s.Fatalf("the new daemon: %v", err)
	}
	r.d = d
	s.poll(time.Minute, "adopted and running", func() (bool, string) {
		a := s.get(r.h)
		return a.State == api.StateRunning, describe(a)
	})
	if got := s.panePID(r.h); got != pid {
		s.Fatalf("pane process %d after the new daemon, was %d: relaunched, not adopted", got, pid)
	}
	a := s.get(r.h)
	if a.Restarts != before.Restarts || a.SessionID != before.SessionID {
		s.Fatalf("adopted agent: %s; before: %s", describe(a), describe(before))
	}
	_, req := s.exchange(r.h, "To the adopted agent.")
	s.inConversation(req, r.first)
}

func (r *run) setIdle(s *step, on bool) {
	r.idle = on
	r.writeConfig()
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	if _, err := r.w.Client.ReloadConfig(ctx); err != nil {
		s.Fatalf("reload: %v", err)
	}
}

func (r *run) idleWake(s *step) {
	r.setIdle(s, true)
	defer r.setIdle(s, false)
	s.poll(2*time.Minute, "idle suspend", func() (bool, string) {
		a := s.get(r.h)
		return a.State == api.StateStopped && a.WakeOnMessage, describe(a)
	})
	s.poll(30*time.Second, "suspended pane gone", func() (bool, string) {
		panes, err := r.w.AgentPanes()
		return err == nil && len(panes["leo-"+r.h]) == 0, fmt.Sprint(panes)
	})
	// Off again before the wake, so the woken agent is not parked while the
	// step looks at it.
	r.setIdle(s, false)
	m := r.marker()
	res := s.send(r.h, "Wake up "+m+" please")
	if !res.Woke {
		s.Fatalf("send to the parked agent did not wake it: %+v", res)
	}
	s.delivered(r.h, res.ID, m, 3*time.Minute)
	req := s.turn(m, time.Minute)
	s.pane(r.h, "ACK "+m, time.Minute)
	s.once(m)
	s.inConversation(req, r.first)
}

func (r *run) resetDrops(s *step) {
	before := s.get(r.h)
	s.leo("agent", "reset", r.h)
	s.poll(2*time.Minute, "running after the reset", func() (bool, string) {
		a := s.get(r.h)
		return a.State == api.StateRunning && (a.SessionID == "" || a.SessionID != before.SessionID), describe(a)
	})
	_, req := s.exchange(r.h, "After the reset.")
	if r.first != "" && hasMarker(req.Body, r.first) {
		s.Fatalf("turn #%d after the reset still carries the old conversation (%s)", req.Seq, r.first)
	}
	s.poll(time.Minute, "a new conversation id", func() (bool, string) {
		a := s.get(r.h)
		return a.SessionID != "" && a.SessionID != before.SessionID, describe(a)
	})
}

// A workspace no harness has seen: whatever trust dialog the CLI shows,
// leo gets past it (before or after the launch) and the message lands.
func (r *run) neverTrusted(s *step) {
	if err := os.MkdirAll(r.workspace(r.fresh()), 0o700); err != nil {
		s.Fatalf("%v", err)
	}
	s.leo("agent", "spawn", r.fresh())
	s.waitRunning(r.fresh(), 3*time.Minute)
	s.exchange(r.fresh(), "In a new workspace.")
}

// A workspace reached through a symlink: leo must trust and look for
// sessions by the real path, as the CLI does; two messages land, and the
// conversation id is found.
func (r *run) symlinked(s *step) {
	real := r.workspace(r.h + "-realdir")
	if err := os.MkdirAll(real, 0o700); err != nil {
		s.Fatalf("%v", err)
	}
	if err := os.Symlink(real, r.workspace(r.link())); err != nil && !os.IsExist(err) {
		s.Fatalf("%v", err)
	}
	s.leo("agent", "spawn", r.link())
	s.waitRunning(r.link(), 3*time.Minute)
	s.exchange(r.link(), "Through a symlink.")
	s.exchange(r.link(), "A second one.")
	s.poll(time.Minute, "conversation id", func() (bool, string) {
		a := s.get(r.link())
		return a.SessionID != "", describe(a)
	})
}

// taskRuns: a one-shot task runs the real CLI headless through the daemon
// (`leo run`): it succeeds with the reply, the session/thread id and the
// usage its stream reported, and the next run continues that conversation.
func (r *run) taskRuns(s *step) {
	runOnce := func() (string, api.TaskRun) {
		m, rec, out := s.runTask(r.job())
		if rec.Outcome != api.OutcomeSucceeded || rec.SessionID == "" || rec.Usage == nil || rec.Usage.OutputTokens == 0 {
			s.Fatalf("run %s: %s", m, out)
		}
		if !strings.Contains(rec.Reply, "ACK "+m) {
			s.Fatalf("run %s replied %q", m, rec.Reply)
		}
		return m, rec
	}
	first, rec1 := runOnce()
	s.turn(first, time.Minute)
	second, rec2 := runOnce()
	if rec2.SessionID != rec1.SessionID {
		s.Fatalf("the second run used conversation %s, the first %s", rec2.SessionID, rec1.SessionID)
	}
	s.inConversation(s.turn(second, time.Minute), first)
}

// runTask writes a prompt with a new marker into task's prompt file, runs
// the task with `leo run --json` and returns the marker and the record.
func (s *step) runTask(task string) (string, api.TaskRun, string) {
	s.Helper()
	return s.runTaskMarked(task, s.r.marker())
}

// runTaskMarked is runTask with the marker m chosen by the caller.
func (s *step) runTaskMarked(task, m string) (string, api.TaskRun, string) {
	s.Helper()
	if err := os.WriteFile(filepath.Join(s.r.workspace(task), "prompt.md"), []byte("Say "+m+" back\n"), 0o600); err != nil {
		s.Fatalf("%v", err)
	}
	// A persistent task's first firing starts its TUI cold (opencode's
	// first start installs its plugin package from npm).
	ctx, cancel := s.wait(7 * time.Minute)
	defer cancel()
	raw, err := s.r.w.Leo(ctx, "run", task, "--json")
	out := string(raw)
	var rec api.TaskRun
	if jerr := json.Unmarshal(raw, &rec); jerr != nil {
		s.Fatalf("leo run %s --json: %v (%v): %s", task, err, jerr, out)
	}
	if rec.ID == "" {
		// A run that did not succeed: run_failed, the record under "run".
		var failed struct {
			Run api.TaskRun `json:"run"`
		}
		if json.Unmarshal(raw, &failed) == nil {
			rec = failed.Run
		}
	}
	return m, rec, out
}

// persistentTask: a persistent task's firing spawns its implicit agent (the
// real TUI in tmux), delivers the prompt into it, and ends succeeded with
// the reply when the TUI's own turn-end signal (claude's Stop hook, codex's
// notify program, opencode's plugin) reports that turn; a second firing
// goes into the same, running agent.
func (r *run) persistentTask(s *step) {
	for i := range 2 {
		m, rec, out := s.runTask(r.persist())
		if rec.Outcome != api.OutcomeSucceeded || rec.Agent != r.persist() || !strings.Contains(rec.Reply, "ACK "+m) {
			s.Fatalf("firing %d: %s", i+1, out)
		}
		s.once(m)
	}
	if a := s.get(r.persist()); a.State != api.StateRunning || a.Restarts != 0 {
		s.Fatalf("the task's agent after two firings: %s", describe(a))
	}
}

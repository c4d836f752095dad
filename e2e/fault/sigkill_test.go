// Package fault SIGKILLs the real leo daemon while it works and checks what
// survives: state files, records, tmux sessions, and the agents' panes.
package fault

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/harness"
	_ "github.com/blackpaw-studio/leo/internal/harness/claude"
	_ "github.com/blackpaw-studio/leo/internal/harness/codex"
	_ "github.com/blackpaw-studio/leo/internal/harness/opencode"
)

// What a spawn interrupted by SIGKILL may leave, and what it may not.
//
// The agent manager saves the record (state "starting") before it asks
// tmux for the session, and the record file is replaced atomically. So a
// spawn the daemon died in leaves exactly one of:
//   - nothing (killed before the record was written);
//   - the record without a session: the next daemon relaunches it;
//   - the record and its session: the next daemon adopts it as is.
//
// Never a tmux session without a record, never a torn or doubled record.
// The client cannot tell which (its request died with the daemon), so such
// a spawn is "uncertain": its agent may or may not exist afterwards, but
// at most once. A spawn the client saw succeed must exist after every
// later kill, and a live pane must be adopted, never relaunched.
//
// A delivery interrupted by SIGKILL is finished or failed by the next
// daemon (the queue is durable; see queue_test.go for its order and
// outcomes): the message reaches the TUI at most once, never twice. The
// test checks that, and that every agent takes a message from the last
// daemon.

const (
	totalOps = 50
	// inFlight is how many operations run at once.
	inFlight = 3
	// readyDeadline bounds each restart until /health says ready.
	readyDeadline = 30 * time.Second
)

type opKind int

const (
	opSpawn opKind = iota
	opSend
)

// op is one planned operation; every random choice is made up front from
// the seed, so a seed replays the same plan (timings still vary).
type op struct {
	i        int
	kind     opKind
	template string
	named    bool    // spawn with an explicit name (else the template's, suffixed)
	pick     float64 // which known agent a send goes to
	kill     bool    // SIGKILL the daemon while this op is in flight
	killFrac float64 // when, as a fraction of the op's expected duration
}

func plan(rng *rand.Rand) []op {
	ops := make([]op, totalOps)
	for i := range ops {
		o := op{i: i, template: leoproc.Harnesses[rng.IntN(3)], named: rng.IntN(2) == 0, pick: rng.Float64()}
		// The first few build a fleet to deliver to.
		if i >= 4 && rng.IntN(5) < 2 {
			o.kind = opSend
		}
		ops[i] = o
	}
	// 6 to 8 kills, one in each equal slice of ops 4..49 so they spread
	// over the whole run.
	kills := 6 + rng.IntN(3)
	span := (totalOps - 4) / kills
	for k := 0; k < kills; k++ {
		i := 4 + k*span + rng.IntN(span)
		ops[i].kill = true
		ops[i].killFrac = rng.Float64() * 1.5
	}
	return ops
}

func seed(t *testing.T) uint64 {
	if s := os.Getenv("LEO_FAULT_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("LEO_FAULT_SEED=%q: %v", s, err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// TestSIGKILLDuringSpawnsAndDeliveries runs 50 spawns (claude, codex and
// opencode interleaved) and sends through the real daemon, three at a time,
// SIGKILLs the daemon 6–8 times while spawns and deliveries are in flight,
// restarts it each time, and checks after every restart that every live
// pane was adopted (same pid) and after the last one that: every state file
// parses; no record is lost or duplicated; no leo-* session lacks a record;
// every record has exactly one live pane; messages arrived at most once;
// every agent takes a message from the last daemon.
func TestSIGKILLDuringSpawnsAndDeliveries(t *testing.T) {
	sd := seed(t)
	t.Logf("seed %d (rerun: LEO_FAULT_SEED=%d go test ./e2e/fault -run TestSIGKILLDuringSpawnsAndDeliveries -v)", sd, sd)
	rng := rand.New(rand.NewPCG(sd, 0x1e0))
	ops := plan(rng)

	w := leoproc.New(t)
	w.WriteConfig(map[string]string{"FAKE_TURN_MS": "30"})
	f := &fleet{t: t, w: w}
	f.d, _ = w.Start(readyDeadline)

	ctx := context.Background()
	start := time.Now()
	sem := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	for _, o := range ops {
		sem <- struct{}{}
		wg.Add(1)
		killed := make(chan struct{})
		go func(o op) {
			defer wg.Done()
			defer func() { <-sem }()
			f.run(ctx, o, killed)
		}(o)
		if o.kill {
			// Later ops wait for this kill and restart, so each kill
			// lands on its own op (and up to two before it still in
			// flight) and the kills spread over the whole run.
			<-killed
		}
	}
	wg.Wait()
	t.Logf("%d ops, %d kills in %v", len(ops), len(f.kills), time.Since(start).Round(time.Millisecond))
	for _, k := range f.kills {
		t.Logf("kill %d: during op %d (%s) after %v; adopted %d live panes, ready in %v", k.n, k.op, k.what, k.after.Round(time.Millisecond), k.adopted, k.ready.Round(time.Millisecond))
	}
	f.reportFailures()
	if len(f.kills) < 6 {
		t.Fatalf("only %d kills happened, want at least 6", len(f.kills))
	}

	// The last daemon runs undisturbed: wait until every agent is up.
	f.settle()
	records := f.checkRecords()
	f.checkSessions(records)
	f.checkMessages(records)
	f.checkState(records)
	t.Logf("%d agents (%d spawns confirmed, %d uncertain), %d messages accepted", len(records), len(f.confirmed), len(f.uncertain), len(f.accepted))
}

// fleet is the run's shared state: the current daemon and what the client
// was told.
type fleet struct {
	t *testing.T
	w *leoproc.World

	// mu is held across a kill and the restart, so no operation starts
	// while no daemon is ready.
	mu    sync.Mutex
	d     *leoproc.Daemon
	epoch int
	kills []kill

	rec       sync.Mutex
	spawnDur  []time.Duration
	confirmed []string         // agents whose spawn the client saw succeed
	uncertain map[string]int   // template → spawns that died with a daemon
	accepted  []message        // sends the daemon accepted
	failures  []string         // adoption violations seen after restarts
	named     map[string]bool  // every explicit name asked for
	errs      map[string][]int // unexpected errors, by text
}

type kill struct {
	n, op   int
	what    string
	after   time.Duration
	adopted int
	ready   time.Duration
}

type message struct {
	id, agent, text string
	epoch           int
}

// current waits for a ready daemon (none is ready during a restart).
func (f *fleet) current() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.epoch
}

// run performs o; killed is closed once o's kill (if any) and the restart
// are done.
func (f *fleet) run(ctx context.Context, o op, killed chan<- struct{}) {
	epoch := f.current()
	var kills sync.WaitGroup
	defer func() {
		kills.Wait()
		close(killed)
	}()
	switch o.kind {
	case opSpawn:
		f.spawn(ctx, o, epoch, &kills)
	case opSend:
		f.send(ctx, o, epoch, &kills)
	}
}

// expectedSpawn is the median spawn time so far (a kill is aimed at a
// fraction of it, so it lands before, inside or just after the spawn).
func (f *fleet) expectedSpawn() time.Duration {
	f.rec.Lock()
	defer f.rec.Unlock()
	if len(f.spawnDur) == 0 {
		return 50 * time.Millisecond
	}
	d := append([]time.Duration(nil), f.spawnDur...)
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}

func (f *fleet) spawn(ctx context.Context, o op, epoch int, kills *sync.WaitGroup) {
	req := api.SpawnRequest{Template: o.template}
	if o.named {
		req.Name = fmt.Sprintf("a%02d-%s", o.i, o.template)
		f.rec.Lock()
		if f.named == nil {
			f.named = map[string]bool{}
		}
		f.named[req.Name] = true
		f.rec.Unlock()
	}
	if o.kill {
		delay := time.Duration(o.killFrac * float64(f.expectedSpawn()))
		kills.Add(1)
		go func() {
			defer kills.Done()
			f.killAfter(o, delay, epoch, fmt.Sprintf("spawn %s %q", o.template, req.Name))
		}()
	}
	t0 := time.Now()
	a, err := f.w.Client.Spawn(ctx, req)
	took := time.Since(t0)
	f.rec.Lock()
	defer f.rec.Unlock()
	switch {
	case err == nil:
		f.confirmed = append(f.confirmed, a.Name)
		if !o.kill {
			f.spawnDur = append(f.spawnDur, took)
		}
	case client.IsDaemonDown(err) || client.IsNotReady(err):
		if f.uncertain == nil {
			f.uncertain = map[string]int{}
		}
		f.uncertain[o.template]++
	default:
		f.unexpected(o, err)
	}
}

// send delivers to a known agent. A kill is aimed after the daemon
// accepted the message, into the delivery (probe, paste, Enter).
func (f *fleet) send(ctx context.Context, o op, epoch int, kills *sync.WaitGroup) {
	f.rec.Lock()
	if len(f.confirmed) == 0 {
		f.rec.Unlock()
		if o.kill {
			kills.Add(1)
			go func() {
				defer kills.Done()
				f.killAfter(o, 0, epoch, "no agent to deliver to yet")
			}()
		}
		return
	}
	name := f.confirmed[int(o.pick*float64(len(f.confirmed)))]
	f.rec.Unlock()
	text := fmt.Sprintf("message %02d to %s", o.i, name)
	res, err := f.w.Client.Send(ctx, name, text)
	if o.kill {
		kills.Add(1)
		go func() {
			defer kills.Done()
			f.killAfter(o, time.Duration(o.killFrac*float64(300*time.Millisecond)), epoch, "delivery to "+name)
		}()
	}
	f.rec.Lock()
	defer f.rec.Unlock()
	switch {
	case err == nil:
		f.accepted = append(f.accepted, message{id: res.ID, agent: name, text: text, epoch: epoch})
	case client.IsDaemonDown(err) || client.IsNotReady(err):
	default:
		f.unexpected(o, err)
	}
}

func (f *fleet) unexpected(o op, err error) {
	if f.errs == nil {
		f.errs = map[string][]int{}
	}
	f.errs[err.Error()] = append(f.errs[err.Error()], o.i)
}

// killAfter SIGKILLs the daemon of epoch after delay, unless another kill
// already replaced it, then starts a new one and checks it adopted every
// pane that was alive at the kill.
func (f *fleet) killAfter(o op, delay time.Duration, epoch int, what string) {
	time.Sleep(delay) // fault injection: the delay is the point
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.epoch != epoch {
		// An earlier kill already interrupted this op; this one lands
		// wherever the run is now.
		what += " (already interrupted; killed the next daemon)"
	}
	before, err := f.w.AgentPanes()
	if err != nil {
		f.fail("kill %d: listing panes: %v", len(f.kills)+1, err)
	}
	f.d.Kill(syscall.SIGKILL)
	// The client may hold a kept-alive connection to the dead daemon.
	f.w.Client.Close()

	t0 := time.Now()
	d := f.w.StartProcess()
	if err := f.w.WaitReady(d, readyDeadline); err != nil {
		f.fail("restart after kill %d: %v", len(f.kills)+1, err)
		return
	}
	ready := time.Since(t0)
	f.d = d
	f.epoch++
	k := kill{n: len(f.kills) + 1, op: o.i, what: what, after: delay, ready: ready}
	k.adopted = f.checkAdopted(k.n, before)
	f.kills = append(f.kills, k)
}

// checkAdopted: every agent pane alive at the kill is still there with the
// same process, and the new daemon's record names that pane and pid.
func (f *fleet) checkAdopted(n int, before map[string][]leoproc.Pane) int {
	after, err := f.w.AgentPanes()
	if err != nil {
		f.fail("kill %d: listing panes after restart: %v", n, err)
		return 0
	}
	recs, err := f.w.ReadAgentsFile()
	if err != nil {
		f.fail("kill %d: %v", n, err)
		return 0
	}
	byName := map[string]leoproc.StateRecord{}
	for _, r := range recs {
		byName[r.Name] = r
	}
	adopted := 0
	for session, ps := range before {
		p := ps[0]
		if p.Dead {
			continue
		}
		name := strings.TrimPrefix(session, "leo-")
		now, ok := after[session]
		switch {
		case !ok:
			f.fail("kill %d: session %s (pid %d) lived at the kill but is gone after the restart", n, session, p.PID)
			continue
		case now[0].PID != p.PID || now[0].PaneID != p.PaneID:
			f.fail("kill %d: %s was relaunched, not adopted: pane %s pid %d before, %s pid %d after", n, session, p.PaneID, p.PID, now[0].PaneID, now[0].PID)
			continue
		}
		r, ok := byName[name]
		switch {
		case !ok:
			f.fail("kill %d: live session %s has no record after the restart", n, session)
		case r.PaneID != p.PaneID || r.PanePID != p.PID:
			f.fail("kill %d: record %s says pane %s pid %d, tmux says %s pid %d", n, name, r.PaneID, r.PanePID, p.PaneID, p.PID)
		default:
			adopted++
		}
	}
	return adopted
}

func (f *fleet) fail(format string, a ...any) {
	f.rec.Lock()
	defer f.rec.Unlock()
	f.failures = append(f.failures, fmt.Sprintf(format, a...))
}

// reportFailures fails the test with what went wrong during the run.
func (f *fleet) reportFailures() {
	t := f.t
	f.rec.Lock()
	failures, errs := f.failures, f.errs
	f.rec.Unlock()
	for _, msg := range failures {
		t.Error(msg)
	}
	for msg, ops := range errs {
		t.Errorf("ops %v failed unexpectedly: %s", ops, msg)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// settle waits, on the last daemon, for every agent to be running, in the
// daemon's answer and in state/agents.json (the probe that marks an agent
// running saves in the background).
func (f *fleet) settle() {
	f.w.WaitAll(60*time.Second, "every agent running on the last daemon, and so recorded", func(as []api.Agent) bool {
		for _, a := range as {
			if a.State != api.StateRunning {
				return false
			}
		}
		recs, err := f.w.ReadAgentsFile()
		if err != nil || len(recs) != len(as) {
			return false
		}
		for _, r := range recs {
			if r.State != api.StateRunning {
				return false
			}
		}
		return true
	})
}

// checkState stops the last daemon the way a service manager does
// (SIGTERM), then checks state/: every file is one the daemon owns,
// agents.json is one valid document naming the agents it listed, and no
// write was torn (a corrupt file is moved aside as agents.json.corrupt-*)
// or left its temp file (.agents.json<digits>: each boot after a kill
// clears those, and a clean stop leaves none). Checked after the stop, as
// a running daemon may be mid-write.
func (f *fleet) checkState(recs []leoproc.StateRecord) {
	t := f.t
	f.mu.Lock()
	d := f.d
	f.mu.Unlock()
	d.Kill(syscall.SIGTERM)
	if !d.Cmd.ProcessState.Success() {
		t.Errorf("the last daemon did not stop cleanly on SIGTERM: %v", d.Cmd.ProcessState)
	}
	entries, err := os.ReadDir(f.w.Home.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == "agents.json", name == "daemon.lock":
		case e.IsDir() && (name == "task-history" || name == "hooks" || name == "logs"):
			// The task service's history and run logs, and the turn-end
			// plugin of opencode agents: directories of the daemon's own.
		case e.IsDir() && name == "sent":
			// The sent log (docs/agents.md, "Conversations"): one line
			// per delivered message, each a JSON object — a kill may cut
			// only the last line, which its reader skips.
			logs, _ := filepath.Glob(filepath.Join(f.w.Home.StateDir(), "sent", "*.jsonl"))
			for _, l := range logs {
				data, err := os.ReadFile(l)
				if err != nil {
					t.Fatal(err)
				}
				lines := strings.Split(string(data), "\n")
				for i, line := range lines[:len(lines)-1] { // the text after the last newline may be torn
					if !json.Valid([]byte(line)) {
						t.Errorf("%s line %d does not parse: %q", l, i+1, line)
					}
				}
			}
		case strings.HasSuffix(name, ".json"):
			data, err := os.ReadFile(filepath.Join(f.w.Home.StateDir(), name))
			if err != nil || !json.Valid(data) {
				t.Errorf("state/%s does not parse as JSON (%v)", name, err)
			}
		default:
			t.Errorf("unexpected file state/%s left after the kills and a clean stop", name)
		}
	}
	after, err := f.w.ReadAgentsFile()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(recs) {
		t.Errorf("state/agents.json holds %d records after the stop, %d before", len(after), len(recs))
	}
	if left, _ := filepath.Glob(filepath.Join(f.w.TmpDir(), ".agents.json*")); len(left) > 0 {
		t.Errorf("temp files of state writes in TMPDIR: %v", left)
	}
}

// checkRecords: names unique; every confirmed spawn present; any other
// record is an uncertain spawn of its template (at most one each).
func (f *fleet) checkRecords() []leoproc.StateRecord {
	t := f.t
	recs, err := f.w.ReadAgentsFile()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	listed, err := f.w.Client.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(recs) {
		t.Errorf("daemon lists %d agents, state/agents.json holds %d", len(listed), len(recs))
	}
	seen := map[string]bool{}
	templateOf := map[string]string{}
	for _, a := range listed {
		if seen[a.Name] {
			t.Errorf("agent %s listed twice", a.Name)
		}
		seen[a.Name] = true
		templateOf[a.Name] = a.Template
	}
	fileNames := map[string]bool{}
	for _, r := range recs {
		if fileNames[r.Name] {
			t.Errorf("agent %s recorded twice in state/agents.json", r.Name)
		}
		fileNames[r.Name] = true
		if !seen[r.Name] {
			t.Errorf("record %s is in state/agents.json but not listed by the daemon", r.Name)
		}
	}
	confirmed := map[string]bool{}
	for _, n := range f.confirmed {
		if confirmed[n] {
			t.Errorf("two confirmed spawns returned the same name %s", n)
		}
		confirmed[n] = true
		if !seen[n] {
			t.Errorf("agent %s was spawned (the client saw success) but its record is lost", n)
		}
	}
	extra := map[string]int{}
	for _, a := range listed {
		if !confirmed[a.Name] {
			extra[a.Template]++
		}
	}
	for tmpl, n := range extra {
		if n > f.uncertain[tmpl] {
			t.Errorf("%d unconfirmed %s agents exist, but only %d %s spawns were interrupted", n, tmpl, f.uncertain[tmpl], tmpl)
		}
	}
	return recs
}

// checkSessions: the agent sessions on the home's tmux server are exactly
// the records' — one per record, one live pane each, the pane on record.
func (f *fleet) checkSessions(recs []leoproc.StateRecord) {
	t := f.t
	panes, err := f.w.AgentPanes()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]leoproc.StateRecord{}
	for _, r := range recs {
		byName[r.Name] = r
	}
	for session, ps := range panes {
		if _, ok := byName[strings.TrimPrefix(session, "leo-")]; !ok {
			t.Errorf("orphan tmux session %s (pane %s pid %d): no record claims it", session, ps[0].PaneID, ps[0].PID)
		}
	}
	for _, r := range recs {
		ps, ok := panes["leo-"+r.Name]
		switch {
		case !ok:
			t.Errorf("agent %s is %s but has no tmux session", r.Name, r.State)
		case len(ps) != 1:
			t.Errorf("agent %s has %d panes, want 1", r.Name, len(ps))
		case ps[0].Dead:
			t.Errorf("agent %s is %s but its pane %s is dead", r.Name, r.State, ps[0].PaneID)
		case r.PaneID != ps[0].PaneID || r.PanePID != ps[0].PID:
			t.Errorf("agent %s records pane %s pid %d, tmux has %s pid %d", r.Name, r.PaneID, r.PanePID, ps[0].PaneID, ps[0].PID)
		}
		if r.State != api.StateRunning {
			t.Errorf("agent %s is %s after the settle", r.Name, r.State)
		}
	}
}

// checkMessages: each accepted message reached a TUI at most once, and the
// last daemon drives every adopted or relaunched pane: each agent's input
// line ends idle and empty — a message an earlier daemon pasted and was
// killed before submitting is finished by the next one, never left there
// (TestSIGKILLBetweenPasteAndEnter pins that case down) — and takes one
// more message, exactly once.
func (f *fleet) checkMessages(recs []leoproc.StateRecord) {
	t := f.t
	ctx := context.Background()
	var last []message
	for _, r := range recs {
		a, err := f.w.Client.Get(ctx, r.Name)
		if err != nil {
			t.Fatal(err)
		}
		h, ok := harness.Lookup(a.Harness)
		if !ok {
			t.Fatalf("agent %s: harness %q not registered", a.Name, a.Harness)
		}
		var s harness.Screen
		// The last daemon may still be delivering its own messages, or
		// finishing one a killed daemon had pasted.
		deadline := time.Now().Add(30 * time.Second)
		for {
			screen, err := f.w.Tmux("capture-pane", "-p", "-J", "-t", r.PaneID)
			if err != nil {
				t.Fatal(err)
			}
			s = h.Screen().Classify(screen)
			if s.State == harness.ScreenReady && s.Input == "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("agent %s not idle with an empty input line after 30 s (screen %s, input %q)", r.Name, s.State, s.Input)
			}
			time.Sleep(20 * time.Millisecond)
		}
		text := "final word to " + r.Name
		res, err := f.w.Client.Send(ctx, r.Name, text)
		if err != nil {
			t.Fatalf("final send to %s: %v", r.Name, err)
		}
		last = append(last, message{id: res.ID, agent: r.Name, text: text, epoch: f.epoch})
	}
	if len(last) == 0 {
		t.Errorf("no agent was idle to take a message from the last daemon")
	}
	outcome := map[string]api.Delivery{}
	f.w.WaitAll(60*time.Second, "the last daemon's deliveries", func(as []api.Agent) bool {
		for _, a := range as {
			for _, d := range a.Deliveries {
				outcome[d.ID] = d
			}
		}
		for _, m := range last {
			if _, ok := outcome[m.id]; !ok {
				return false
			}
		}
		return true
	})
	for _, m := range last {
		if d := outcome[m.id]; d.Status != "delivered" {
			t.Errorf("message %q to %s: %s %s", m.text, m.agent, d.Status, d.Error)
		}
	}
	counts := f.w.SubmittedCounts()
	for _, m := range f.accepted {
		if n := counts[m.text]; n > 1 {
			t.Errorf("message %q reached %s %d times", m.text, m.agent, n)
		}
	}
	for _, m := range last {
		if n := counts[m.text]; n != 1 {
			t.Errorf("message %q reached %s %d times, want once", m.text, m.agent, n)
		}
	}
}

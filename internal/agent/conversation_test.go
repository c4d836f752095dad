package agent

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// spawnIdle spawns the template of harness h and waits until it is idle.
func spawnIdle(t *testing.T, e *testEnv, m *Manager, h string) {
	t.Helper()
	if _, err := m.Spawn(context.Background(), api.SpawnRequest{Template: h}); err != nil {
		t.Fatal(err)
	}
	e.waitState(m, h, api.StateRunning)
	waitAttention(t, m, h, api.AttentionIdle)
}

func waitCtx(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// A send that waits for the reply answers with the reply of the turn its
// message started, read from the harness's record — never the turn
// before it, even when that one is still running as the send is made —
// and the conversation lists both turns in order, with their senders.
func TestSendReplyIsThatTurnsReply(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withEnv(map[string]string{"FAKE_TURN_MS": "1500"}))
			m := e.manager()
			spawnIdle(t, e, m, h)
			first, err := m.SendMessage(context.Background(), h, api.SendRequest{Message: "first question alpha", Sender: api.SenderCLI})
			if err != nil {
				t.Fatal(err)
			}
			out, err := m.SendAndWait(waitCtx(t, 60*time.Second), h, api.SendRequest{Message: "second question beta\non two lines", Sender: api.SenderAPI, Wait: api.WaitReply, Timeout: "60s"})
			if err != nil {
				t.Fatal(err)
			}
			if out.Status != api.MessageDelivered || out.Reply == nil || out.Outcome != api.OutcomeTurnOK {
				t.Fatalf("outcome %+v", out)
			}
			if !strings.Contains(out.Reply.Text, "beta") || strings.Contains(out.Reply.Text, "alpha") {
				t.Fatalf("reply %q, want the second message's (beta), not the first's", out.Reply.Text)
			}
			if out.Usage == nil || out.Usage.OutputTokens == 0 {
				t.Errorf("usage %+v, want the tokens the fake's record reports", out.Usage)
			}
			conv, err := m.Conversation(context.Background(), h, api.ConversationQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if len(conv.Turns) != 2 || conv.ConversationID == "" {
				t.Fatalf("conversation %+v, want two turns", conv)
			}
			a, b := conv.Turns[0], conv.Turns[1]
			if !strings.Contains(a.User.Text, "alpha") || a.User.Sender != api.SenderCLI || a.User.MessageID != first.ID {
				t.Errorf("first turn %+v, want alpha from the CLI as message %s", a, first.ID)
			}
			if !strings.Contains(b.User.Text, "beta") || b.User.Sender != api.SenderAPI || b.User.MessageID != out.ID || b.Reply.Text != out.Reply.Text {
				t.Errorf("second turn %+v, want beta from the API with the reply the send answered", b)
			}
			if last, _ := m.Conversation(context.Background(), h, api.ConversationQuery{Last: 1}); len(last.Turns) != 1 || last.Turns[0].ID != b.ID {
				t.Errorf("--last 1: %+v", last.Turns)
			}
			// Today's usage: both turns', read in the background (a
			// listing never waits for it).
			var want api.Usage
			for _, x := range conv.Turns {
				if x.Usage != nil {
					want.InputTokens += x.Usage.InputTokens
					want.OutputTokens += x.Usage.OutputTokens
				}
			}
			waitFor(t, "today's usage of both turns", 30*time.Second, func() bool {
				u := mustGet(t, m, h).UsageToday
				return u != nil && u.OutputTokens == want.OutputTokens && u.InputTokens == want.InputTokens
			})
		})
	}
}

// A wait that runs out is wait_timeout and leaves the message alone: it
// is delivered and answered as if nobody had waited.
func TestWaitTimeoutDoesNotCancelTheMessage(t *testing.T) {
	e := newEnv(t, withEnv(map[string]string{"FAKE_TURN_MS": "2500"}))
	m := e.manager()
	h := harnesses[0]
	spawnIdle(t, e, m, h)
	out, err := m.SendAndWait(context.Background(), h, api.SendRequest{Message: "take your time", Wait: api.WaitReply, Timeout: "1s"})
	if !api.HasCode(err, api.CodeWaitTimeout) {
		t.Fatalf("a 1s wait on a 2.5s turn: %+v, %v; want wait_timeout", out, err)
	}
	if !strings.Contains(err.Error(), "the message goes on") || out.ID == "" {
		t.Fatalf("timeout %v (outcome %+v): the message's id and that it goes on", err, out)
	}
	got, err := m.Message(waitCtx(t, 30*time.Second), h, out.ID, api.WaitReply)
	if err != nil || got.Reply == nil || !strings.Contains(got.Reply.Text, "take your time") {
		t.Fatalf("after the timeout: %+v, %v; want the reply", got, err)
	}
}

// A message that fails answers a waited send with its reason; one that is
// still queued says what it waits for.
func TestWaitedSendOfAMessageThatFails(t *testing.T) {
	e := newEnv(t, withEnv(map[string]string{"FAKE_TURN_MS": "3000"}))
	m := e.manager()
	h := harnesses[0]
	spawnIdle(t, e, m, h)
	first, err := m.Send(context.Background(), h, "a long turn")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, h, first.ID)
	type result struct {
		out api.MessageOutcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := m.SendAndWait(context.Background(), h, api.SendRequest{Message: "never lands", Wait: api.WaitDelivered, Timeout: "60s"})
		done <- result{out, err}
	}()
	var queued api.MessageOutcome
	waitFor(t, "the second message queued", 10*time.Second, func() bool {
		a, _ := m.lookup(h)
		a.mu.Lock()
		defer a.mu.Unlock()
		for id, it := range a.items {
			if it.Message == "never lands" {
				queued.ID = id
				return true
			}
		}
		return false
	})
	now, err := m.Message(context.Background(), h, queued.ID, "")
	if err != nil || now.Status != api.MessageQueued {
		t.Fatalf("while the turn runs: %+v, %v; want queued", now, err)
	}
	if _, err := m.Stop(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil || r.out.Status != api.MessageFailed || !strings.Contains(r.out.Reason, "cancelled") {
			t.Fatalf("waited send of a message cancelled by a stop: %+v, %v", r.out, r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waited send did not answer after its message failed")
	}
}

// A reply asked for a message that waits behind a prompt a person must
// answer waits for them (saying so) and answers once they did.
func TestReplyWaitsBehindAPersonsAnswer(t *testing.T) {
	e := newEnv(t, withEnv(map[string]string{"FAKE_TURN_MS": "2000"}))
	m := e.manager()
	h := harnesses[0]
	spawnIdle(t, e, m, h)
	first, err := m.Send(context.Background(), h, "run the migration")
	if err != nil {
		t.Fatal(err)
	}
	waitDelivered(t, m, h, first.ID)
	m.Signal(context.Background(), h, harness.Signal{Kind: harness.SignalNeedsInput,
		Prompt: &harness.Prompt{Kind: api.PromptPermission, Text: "Bash command\n  touch x\nDo you want to proceed?", Choices: []string{"Yes", "No"}}})
	waitAttention(t, m, h, api.AttentionNeedsInput)
	second, err := m.Send(context.Background(), h, "then report gamma")
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Message(context.Background(), h, second.ID, "")
	if err != nil || got.Status != api.MessageQueued || !strings.Contains(got.Waiting, "waits for a person: Bash command") {
		t.Fatalf("behind the prompt: %+v, %v; want queued, waiting for a person", got, err)
	}
	// The person answers; the turn goes on and ends.
	m.Signal(context.Background(), h, harness.Signal{Kind: harness.SignalWorking})
	out, err := m.Message(waitCtx(t, 60*time.Second), h, second.ID, api.WaitReply)
	if err != nil || out.Reply == nil || !strings.Contains(out.Reply.Text, "gamma") {
		t.Fatalf("after the answer: %+v, %v; want gamma's reply", out, err)
	}
}

// A reset starts a new conversation; the old one is still read by its
// id, and is listed as earlier.
func TestConversationsAcrossAReset(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			m := e.manager()
			spawnIdle(t, e, m, h)
			ask := func(text string) {
				t.Helper()
				if out, err := m.SendAndWait(waitCtx(t, 60*time.Second), h, api.SendRequest{Message: text, Wait: api.WaitReply}); err != nil || out.Reply == nil {
					t.Fatalf("%s: %+v, %v", text, out, err)
				}
			}
			ask("before the reset")
			old, err := m.Conversation(context.Background(), h, api.ConversationQuery{})
			if err != nil || len(old.Turns) != 1 {
				t.Fatalf("before the reset: %+v, %v", old, err)
			}
			if _, err := m.Reset(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			waitAttention(t, m, h, api.AttentionIdle)
			ask("after the reset")
			now, err := m.Conversation(context.Background(), h, api.ConversationQuery{})
			if err != nil || now.ConversationID == old.ConversationID || len(now.Turns) != 1 || !strings.Contains(now.Turns[0].User.Text, "after") {
				t.Fatalf("after the reset: %+v, %v; want a new conversation of one turn", now, err)
			}
			if len(now.Earlier) != 1 || now.Earlier[0] != old.ConversationID {
				t.Fatalf("earlier %v, want [%s]", now.Earlier, old.ConversationID)
			}
			back, err := m.Conversation(context.Background(), h, api.ConversationQuery{ID: old.ConversationID})
			if err != nil || len(back.Turns) != 1 || !strings.Contains(back.Turns[0].User.Text, "before") {
				t.Fatalf("the earlier conversation: %+v, %v", back, err)
			}
			if _, err := m.Conversation(context.Background(), h, api.ConversationQuery{ID: "not-one-of-its"}); !api.HasCode(err, api.CodeNotFound) {
				t.Fatalf("another id: %v, want not_found", err)
			}
			// A stopped agent's conversation is read the same.
			if _, err := m.Stop(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			stopped, err := m.Conversation(context.Background(), h, api.ConversationQuery{})
			if err != nil || stopped.ConversationID != now.ConversationID || len(stopped.Turns) != 1 {
				t.Fatalf("stopped: %+v, %v", stopped, err)
			}
		})
	}
}

// A turn a person typed in the TUI is in the conversation with no sender;
// a message an agent signed names that agent.
func TestTurnSenders(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	h := harnesses[0]
	spawnIdle(t, e, m, h)
	if out, err := m.SendAndWait(waitCtx(t, 60*time.Second), h, api.SendRequest{Message: "[message from scout] the build is red", Sender: api.SenderAPI, Wait: api.WaitReply}); err != nil || out.Reply == nil {
		t.Fatalf("signed: %+v, %v", out, err)
	}
	raw := testutil.NewRawTmux(e.tmux)
	raw.Run(t, "send-keys", "-t", e.paneID(h), "-l", "typed by a person")
	waitFor(t, "the typed text in the input line", 10*time.Second, func() bool { return e.screenOf(h, h).Input == "typed by a person" })
	raw.Run(t, "send-keys", "-t", e.paneID(h), "Enter")
	var conv api.Conversation
	waitFor(t, "the typed turn in the record", 30*time.Second, func() bool {
		var err error
		conv, err = m.Conversation(context.Background(), h, api.ConversationQuery{})
		return err == nil && len(conv.Turns) == 2 && conv.Turns[1].Outcome != api.OutcomeTurnRunning
	})
	if s := conv.Turns[0].User.Sender; s != "agent scout" {
		t.Errorf("signed message's sender %q, want agent scout", s)
	}
	if s := conv.Turns[1].User; s.Sender != "" || s.MessageID != "" || s.Text != "typed by a person" {
		t.Errorf("typed turn %+v, want no sender", s)
	}
}

// matchSent gives each sent message one turn: the latest not yet served
// with its words (white space aside) that started before the message was
// recorded delivered, in its conversation; a turn nobody sent through leo
// has none, and the same words sent twice go to two turns in order.
func TestMatchSent(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	turn := func(text string, at time.Duration) harness.Turn {
		return harness.Turn{User: text, StartedAt: t0.Add(at)}
	}
	sent := func(id, text string, at time.Duration, conv string) sentRecord {
		return sentRecord{ID: id, Digest: textKey(text), At: t0.Add(at), Conversation: conv}
	}
	for _, c := range []struct {
		name  string
		turns []harness.Turn
		log   []sentRecord
		conv  string
		want  []int
	}{
		{"in order, a typed turn between", []harness.Turn{
			turn("status?", 0), turn("typed by hand", time.Minute), turn("status?", 2*time.Minute), turn("two\nlines", 3*time.Minute), turn("status?", 3*time.Hour),
		}, []sentRecord{
			sent("a", "status?", 2*time.Second, "c"), sent("b", "status?", 2*time.Minute+time.Second, "c"), sent("c", "two lines", 3*time.Minute+time.Second, "c"),
		}, "c", []int{0, -1, 1, 2, -1}},
		{"a person typed the same words first", []harness.Turn{turn("yes", 0), turn("yes", 30*time.Second)},
			[]sentRecord{sent("m", "yes", 31*time.Second, "c")}, "c", []int{-1, 0}},
		{"the same words again after a reset", []harness.Turn{turn("run the report", 40*time.Second)},
			[]sentRecord{sent("msg1", "run the report", time.Second, "old"), sent("msg2", "run the report", 41*time.Second, "new")}, "new", []int{1}},
		{"a record of an unknown conversation", []harness.Turn{turn("hi", 0)},
			[]sentRecord{sent("m", "hi", time.Second, "")}, "c", []int{0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := matchSent(c.turns, c.log, c.conv)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("matchSent = %v, want %v", got, c.want)
			}
		})
	}
}

// An id a sender reuses once leo forgot it (a daily job's fixed --id)
// names the new message: its waited send answers the new turn's reply.
func TestReusedIDGetsItsOwnReply(t *testing.T) {
	e := newEnv(t)
	m := e.manager()
	h := harnesses[0]
	spawnIdle(t, e, m, h)
	if out, err := m.SendAndWait(waitCtx(t, 60*time.Second), h, api.SendRequest{ID: "daily", Message: "report one", Wait: api.WaitReply}); err != nil || out.Reply == nil {
		t.Fatalf("day 1: %+v %v", out, err)
	}
	a, _ := m.lookup(h)
	a.mu.Lock()
	a.rec.Named = nil // 24 h later: the id is forgotten
	a.mu.Unlock()
	out, err := m.SendAndWait(waitCtx(t, 60*time.Second), h, api.SendRequest{ID: "daily", Message: "report two", Wait: api.WaitReply})
	if err != nil || out.Reply == nil || !strings.Contains(out.Reply.Text, "two") {
		t.Fatalf("day 2: %+v, %v; want the reply to report two", out.Reply, err)
	}
}

// A TUI restarted while the message's turn ran never records the turn's
// end: the reply wait answers it interrupted instead of waiting out its
// timeout; and a wait whose deadline came during a read is wait_timeout.
func TestReplyOfATurnCutByARestart(t *testing.T) {
	for _, h := range harnesses {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, withEnv(map[string]string{"FAKE_TURN_MS": "4000"}))
			m := e.manager()
			spawnIdle(t, e, m, h)
			out, err := m.SendAndWait(waitCtx(t, 30*time.Second), h, api.SendRequest{Message: "killed mid-turn", Wait: api.WaitDelivered})
			if err != nil || out.Status != api.MessageDelivered {
				t.Fatalf("%+v %v", out, err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if _, err := m.Message(ctx, h, out.ID, api.WaitReply); !api.HasCode(err, api.CodeWaitTimeout) {
				t.Fatalf("a wait whose deadline passed: %v, want wait_timeout", err)
			}
			if _, err := m.Restart(context.Background(), h); err != nil {
				t.Fatal(err)
			}
			waitAttention(t, m, h, api.AttentionIdle)
			got, err := m.Message(waitCtx(t, 15*time.Second), h, out.ID, api.WaitReply)
			if err != nil || got.Reply == nil || got.Outcome != api.OutcomeTurnInterrupted {
				t.Fatalf("reply after a restart mid-turn: %+v, %v; want the turn interrupted", got, err)
			}
		})
	}
}

func TestSenderOf(t *testing.T) {
	for _, c := range []struct{ route, message, want string }{
		{api.SenderCLI, "hello", "cli"},
		{api.SenderAPI, "[message from scout] hello", "agent scout"},
		{api.SenderAPI, "[message from task nightly] report", "task nightly"},
		{"", "do the thing\n\n[leo task nightly run 20261202T100000.000Z]", "task nightly"},
		{"", "plain", ""},
	} {
		if got := senderOf(c.route, c.message); got != c.want {
			t.Errorf("senderOf(%q, %q) = %q, want %q", c.route, c.message, got, c.want)
		}
	}
}

// The sent log survives a torn line: the lines after it still read, and
// the torn one is skipped.
func TestSentLogSkipsATornLine(t *testing.T) {
	m := &Manager{opts: Options{Home: home.Home{Root: t.TempDir()}}}
	path := m.sentPath("a")
	if err := appendSent(path, []byte(`{"id":"m1","digest":"d1"}`+"\n")); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"id":"m2","dig`) // a write cut short
	f.Close()
	if err := appendSent(path, []byte(`{"id":"m3","digest":"d3"}`+"\n")); err != nil {
		t.Fatal(err)
	}
	got, err := m.readSent("a")
	if err != nil || len(got) != 2 || got[0].ID != "m1" || got[1].ID != "m3" {
		t.Fatalf("read %+v, %v; want m1 and m3", got, err)
	}
}

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// send --reply prints the reply of that message's turn and nothing else
// on stdout; --json prints the outcome; a failed delivery and a failed
// turn exit non-zero with their reasons.
func TestAgentSendReply(t *testing.T) {
	e, h := daemonEnv(t)
	fake := startFakeDaemon(t, e, h)
	fake.Put(api.Agent{Name: "bob", State: api.StateRunning})
	var mode atomic.Value
	mode.Store("ok")
	fake.Outcome = func(_ context.Context, name, id, wait string) (api.MessageOutcome, error) {
		out := api.MessageOutcome{ID: id, Agent: name, Status: api.MessageDelivered}
		switch mode.Load() {
		case "failed":
			out.Status, out.Reason = api.MessageFailed, "paste did not land"
		case "turn error":
			out.Reply, out.Outcome, out.Reason = &api.TurnReply{}, api.OutcomeTurnError, "API Error: 500 overloaded\x1b]0;owned\x07"
		default:
			if wait == api.WaitReply {
				out.Reply, out.Outcome = &api.TurnReply{Text: "The build is green.\nAll 41 tests pass.\x1b[8m\n"}, api.OutcomeTurnOK
				out.Usage = &api.Usage{InputTokens: 1200, OutputTokens: 34}
			}
		}
		return out, nil
	}

	r := e.run("agent", "send", "bob", "is", "it", "green?", "--reply")
	if r.code != ExitOK || r.stdout != "The build is green.\nAll 41 tests pass. [8m\n" {
		t.Fatalf("--reply: %+v", r)
	}
	if msgs := fake.Messages(); len(msgs) != 1 || msgs[0].Message != "is it green?" {
		t.Fatalf("daemon got %+v", msgs)
	}
	r = e.run("agent", "send", "bob", "hi", "--wait")
	if r.code != ExitOK || !strings.HasPrefix(r.stdout, "delivered to bob (message ") {
		t.Fatalf("--wait: %+v", r)
	}
	r = e.run("agent", "send", "bob", "hi", "--reply", "--json")
	var out api.MessageOutcome
	if r.code != ExitOK || json.Unmarshal([]byte(r.stdout), &out) != nil || out.Reply == nil || out.Usage.OutputTokens != 34 || out.Status != api.MessageDelivered {
		t.Fatalf("--reply --json: %+v", r)
	}

	mode.Store("failed")
	r = e.run("agent", "send", "bob", "hi", "--wait", "--json")
	obj := assertJSONFailure(t, r, string(api.CodeDeliveryFailed), ExitError)
	if obj["status"] != api.MessageFailed || obj["reason"] != "paste did not land" || obj["id"] == "" {
		t.Fatalf("failed delivery under --json: %v", obj)
	}
	mode.Store("turn error")
	r = e.run("agent", "send", "bob", "hi", "--reply")
	if r.code != ExitError || !strings.Contains(r.stderr, "ended error: API Error: 500 overloaded") || strings.ContainsAny(r.stderr, "\x1b\x07") {
		t.Fatalf("a failed turn: %+v (the harness's words, escapes blanked)", r)
	}

	for _, bad := range [][]string{
		{"agent", "send", "bob", "hi", "--timeout", "5s"},
		{"agent", "send", "bob", "hi", "--reply", "--timeout", "25h"},
		{"agent", "send", "bob", "hi", "--reply", "--timeout", "10ms"},
	} {
		if r := e.run(bad...); r.code != ExitUsage {
			t.Errorf("%v: %+v, want a usage error", bad, r)
		}
	}
	if n := len(fake.Messages()); n != 5 {
		t.Errorf("%d messages sent, want 5 (refused flags send nothing)", n)
	}
}

// A wait that runs out exits 6 (wait_timeout) naming the message, which
// goes on; a long wait says on stderr what the message waits for.
func TestAgentSendReplyTimesOutAndSaysWhy(t *testing.T) {
	e, h := daemonEnv(t)
	fake := startFakeDaemon(t, e, h)
	fake.Put(api.Agent{Name: "bob", State: api.StateRunning})
	fake.Outcome = func(ctx context.Context, name, id, wait string) (api.MessageOutcome, error) {
		out := api.MessageOutcome{ID: id, Agent: name, Status: api.MessageQueued, Waiting: "the agent waits for a person: Bash command touch x"}
		if wait != "" {
			<-ctx.Done()
			return out, api.Errorf(api.CodeWaitTimeout, "agent %s: message %s is queued", name, id)
		}
		return out, nil
	}
	start := time.Now()
	r := e.run("agent", "send", "bob", "hi", "--reply", "--timeout", "7s")
	if r.code != ExitWaitTimeout || !strings.Contains(r.stderr, "the wait ended, the message goes on") || !strings.Contains(r.stderr, "leo agent message bob cli-") {
		t.Fatalf("timeout: %+v", r)
	}
	if !strings.Contains(r.stderr, "waiting: message queued (the agent waits for a person: Bash command touch x)") {
		t.Fatalf("a wait past 5s says why: %q", r.stderr)
	}
	if took := time.Since(start); took < 7*time.Second {
		t.Fatalf("the wait ended after %s, before its 7s", took)
	}
	r = e.run("agent", "message", "bob", "m-9")
	if r.code != ExitOK || !strings.Contains(r.stdout, "message m-9 to bob: queued (the agent waits for a person") {
		t.Fatalf("agent message: %+v", r)
	}
}

func TestAgentConversation(t *testing.T) {
	e, h := daemonEnv(t)
	fake := startFakeDaemon(t, e, h)
	fake.Put(api.Agent{Name: "bob", State: api.StateRunning})
	at := time.Date(2026, 12, 2, 9, 30, 0, 0, time.UTC)
	fake.Conversations = map[string]api.Conversation{"bob": {Agent: "bob", ConversationID: "c1", Turns: []api.Turn{
		{ID: "t1", StartedAt: at, User: api.TurnUser{Text: "fix the build", Sender: "cli"}, Tools: []api.ToolCall{{Name: "Bash", Input: `{"command":"make test"}`}},
			Reply: api.TurnReply{Text: "Fixed."}, Outcome: api.OutcomeTurnOK, Usage: &api.Usage{InputTokens: 15300, OutputTokens: 420}},
		{ID: "t2", StartedAt: at.Add(time.Minute), User: api.TurnUser{Text: "and now?\x1b[2J\x1b]0;owned\x07"}, Outcome: api.OutcomeTurnError, Error: "API Error: 500"},
	}}}
	r := e.run("agent", "conversation", "bob")
	mustContain(t, "conversation", r.stdout, "conversation c1 of bob (2 turns)", "· cli · ok · 15k in, 420 out", "> fix the build",
		`  [Bash] {"command":"make test"}`, "  Fixed.", "· typed in the TUI · error", "  error: API Error: 500")
	if strings.ContainsAny(r.stdout, "\x1b\x07") {
		t.Fatalf("an escape sequence of a turn reached the terminal: %q", r.stdout)
	}
	r = e.run("agent", "conversation", "bob", "--last", "1", "--json")
	var conv api.Conversation
	if r.code != ExitOK || json.Unmarshal([]byte(r.stdout), &conv) != nil || len(conv.Turns) != 1 || conv.Turns[0].ID != "t2" || conv.Turns[0].User.Text != "and now?\x1b[2J\x1b]0;owned\x07" {
		t.Fatalf("--last 1 --json: %+v", r)
	}
}

// conversation --follow prints the turns there are, then each turn once
// as it ends, read again on the agent's turn.ended events; a running turn
// is not printed until it ended.
func TestAgentConversationFollow(t *testing.T) {
	for _, c := range []struct {
		last int
		want string
	}{{0, "t1,t2"}, {1, "t2"}} {
		t.Run(fmt.Sprintf("last=%d", c.last), func(t *testing.T) { followCase(t, c.last, c.want) })
	}
}

// followCase: --follow --last last over a conversation of t1 (ended) and
// t2 (running) that, on the first turn.ended, has t2 ended and t3 running.
func followCase(t *testing.T, last int, want string) {
	h := home.Home{Root: testutil.ShortTempDir(t, "leo-cv")}
	if err := os.MkdirAll(h.StateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", h.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	turn := func(id, text string, outcome string) api.Turn {
		return api.Turn{ID: id, User: api.TurnUser{Text: text}, Reply: api.TurnReply{Text: "re: " + text}, Outcome: outcome}
	}
	var mu sync.Mutex
	turns := []api.Turn{turn("t1", "first", api.OutcomeTurnOK), turn("t2", "second", api.OutcomeTurnRunning)}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/agents/bob/conversation" {
			mu.Lock()
			defer mu.Unlock()
			ts := turns
			if n, _ := strconv.Atoi(r.URL.Query().Get("last")); n > 0 && n < len(ts) {
				ts = ts[len(ts)-n:]
			}
			_ = json.NewEncoder(w).Encode(api.Conversation{Agent: "bob", ConversationID: "c1", Turns: ts})
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "id: 1\n\n")
		w.(http.Flusher).Flush()
		mu.Lock()
		turns = []api.Turn{turn("t1", "first", api.OutcomeTurnOK), turn("t2", "second", api.OutcomeTurnOK), turn("t3", "third", api.OutcomeTurnRunning)}
		mu.Unlock()
		data, _ := json.Marshal(api.Event{Seq: 2, Type: api.EventTurnEnded, Agent: "bob"})
		fmt.Fprintf(w, "id: 2\nevent: turn.ended\ndata: %s\n\n", data)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	out := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- runAgentConversation(ctx, &AgentConversationOptions{IO: &IOStreams{Out: out, ErrOut: io.Discard}, Client: client.New(h), Name: "bob", Follow: true, JSON: true, Last: last})
	}()
	testutil.WaitFor(t, 10*time.Second, func() bool { return strings.Contains(out.String(), `"id":"t2"`) }, "t2 printed once it ended")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("conversation --follow: %v", err)
	}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var tt api.Turn
		if err := json.Unmarshal([]byte(l), &tt); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		ids = append(ids, tt.ID)
	}
	if strings.Join(ids, ",") != want {
		t.Fatalf("printed turns %v, want %s (t3 still runs; with --last 1, t1 is older than the newest turn)", ids, want)
	}
}

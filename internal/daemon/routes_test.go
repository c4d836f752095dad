package daemon_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/home"
)

// raw sends one request over the socket without the typed client, so the
// status codes and bodies on the wire are what is checked.
func raw(t *testing.T, h home.Home, method, path, body string) (int, string) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", h.SocketPath())
		},
	}}
	defer hc.CloseIdleConnections()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "http://leo"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return resp.StatusCode, string(data)
}

func decodeErr(t *testing.T, body string) api.Error {
	t.Helper()
	var e api.Error
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Code == "" {
		t.Fatalf("not an API error body: %q (%v)", body, err)
	}
	return e
}

func TestSpawnMapsClaudeNotFoundTo424WithTheContractMessage(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	r.agents.SpawnErr = func(req api.SpawnRequest) error {
		return &api.Error{Code: api.CodeClaudeNotFound, Message: claude.NotFoundMessage}
	}
	status, body := raw(t, h, "POST", "/agents/spawn", `{"template":"assistant"}`)
	if status != http.StatusFailedDependency {
		t.Fatalf("status %d, want 424; body %s", status, body)
	}
	e := decodeErr(t, body)
	if e.Code != "claude_not_found" || e.Message != "claude CLI not found; install it from https://claude.com/claude-code" {
		t.Fatalf("body %s", body)
	}
	_, err := r.Client.Spawn(context.Background(), api.SpawnRequest{Template: "assistant"})
	if !client.IsClaudeNotFound(err) || err.Error() != claude.NotFoundMessage {
		t.Fatalf("client: %v", err)
	}
}

func TestAgentRoutesRoundTrip(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	ctx := context.Background()
	c := r.Client

	list, err := c.List(ctx)
	if err != nil || list == nil || len(list) != 0 {
		t.Fatalf("empty list = %#v, %v", list, err)
	}
	if status, body := raw(t, h, "GET", "/agents", ""); status != 200 || strings.TrimSpace(body) != "[]" {
		t.Fatalf("empty list on the wire: %d %q, want []", status, body)
	}

	a, err := c.Spawn(ctx, api.SpawnRequest{Template: "assistant", Name: "bob"})
	if err != nil || a.Name != "bob" || a.State != api.StateRunning {
		t.Fatalf("spawn = %+v, %v", a, err)
	}
	if got, err := c.Get(ctx, "bob"); err != nil || got.TmuxSession != "leo-bob" {
		t.Fatalf("get = %+v, %v", got, err)
	}
	if _, err := c.Get(ctx, "nobody"); !client.IsNotFound(err) {
		t.Fatalf("get missing: %v", err)
	}

	status, body := raw(t, h, "DELETE", "/agents/bob", "")
	if status != http.StatusConflict || decodeErr(t, body).Code != api.CodeAgentRunning {
		t.Fatalf("delete running: %d %s", status, body)
	}
	if err := c.Delete(ctx, "bob"); !client.IsAgentRunning(err) {
		t.Fatalf("client delete running: %v", err)
	}

	res, err := c.Send(ctx, "bob", "hello there")
	if err != nil || res.Delivery != "queued" {
		t.Fatalf("send = %+v, %v", res, err)
	}
	if msgs := r.agents.Messages(); len(msgs) != 1 || msgs[0].Message != "hello there" {
		t.Fatalf("manager got %+v", msgs)
	}
	logs, err := c.Logs(ctx, "bob", 7)
	if err != nil || !strings.Contains(logs.Text, "7 lines") {
		t.Fatalf("logs = %+v, %v", logs, err)
	}
	logs, err = c.Logs(ctx, "bob", 0)
	if err != nil || !strings.Contains(logs.Text, "100 lines") {
		t.Fatalf("logs with the default count = %+v, %v", logs, err)
	}

	if a, err := c.Restart(ctx, "bob"); err != nil || a.Restarts != 1 {
		t.Fatalf("restart = %+v, %v", a, err)
	}
	if _, err := c.Reset(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if a, err := c.Stop(ctx, "bob"); err != nil || a.State != api.StateStopped {
		t.Fatalf("stop = %+v, %v", a, err)
	}
	if a, err := c.Start(ctx, "bob"); err != nil || a.State != api.StateRunning {
		t.Fatalf("start = %+v, %v", a, err)
	}
	c.Stop(ctx, "bob")
	if status, body := raw(t, h, "DELETE", "/agents/bob", ""); status != 200 || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("delete stopped: %d %s", status, body)
	}
	if _, err := c.Get(ctx, "bob"); !client.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}
}

func TestRequestsAreDecodedStrictly(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	if _, err := r.Client.Spawn(context.Background(), api.SpawnRequest{Template: "assistant", Name: "x"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               api.Code
		mentions           string
	}{
		{"POST", "/agents/spawn", `{"template":"assistant","nmae":"typo"}`, 400, api.CodeInvalidArgs, `unknown field "nmae"`},
		{"POST", "/agents/spawn", `{"template":"assistant"} {"template":"again"}`, 400, api.CodeInvalidArgs, "after the JSON object"},
		{"POST", "/agents/spawn", ``, 400, api.CodeInvalidArgs, "empty"},
		{"POST", "/agents/spawn", `{}`, 400, api.CodeInvalidArgs, "template is required"},
		{"POST", "/agents/spawn", `[1]`, 400, api.CodeInvalidArgs, "request body"},
		{"POST", "/agents/x/send", `{"message":""}`, 400, api.CodeInvalidArgs, "message is empty"},
		{"POST", "/agents/x/send", `{"message":"hi","urgent":true}`, 400, api.CodeInvalidArgs, `unknown field "urgent"`},
		// Bytes the decoder would silently turn into U+FFFD (issue 15).
		{"POST", "/agents/x/send", "{\"message\":\"a\xffb\"}", 400, api.CodeInvalidArgs, "invalid UTF-8 byte 0xff"},
		{"POST", "/agents/x/send", `{"message":"a\udcffb"}`, 400, api.CodeInvalidArgs, "surrogate"},
		{"POST", "/agents/x/send", `{"message":"hi","id":"two words"}`, 400, api.CodeInvalidArgs, "message id"},
		{"POST", "/agents/x/stop", `{"force":true}`, 400, api.CodeInvalidArgs, `unknown field "force"`},
		{"GET", "/agents/x/logs?lines=abc", ``, 400, api.CodeInvalidArgs, "lines must be a number"},
		{"GET", "/agents/x/logs?lines=0", ``, 400, api.CodeInvalidArgs, "lines must be a number"},
		{"POST", "/config/reload", `{"path":"/etc/passwd"}`, 400, api.CodeInvalidArgs, `unknown field "path"`},
		{"GET", "/nope", ``, 404, api.CodeNotFound, "no route GET /nope"},
		{"POST", "/health", ``, 405, api.CodeInvalidArgs, "allowed: GET"},
		{"PUT", "/agents/x", ``, 405, api.CodeInvalidArgs, "allowed: GET, DELETE"},
	} {
		status, body := raw(t, h, tc.method, tc.path, tc.body)
		e := decodeErr(t, body)
		if status != tc.status || e.Code != tc.code || !strings.Contains(e.Message, tc.mentions) {
			t.Errorf("%s %s %s: %d %s; want %d %s mentioning %q", tc.method, tc.path, tc.body, status, body, tc.status, tc.code, tc.mentions)
		}
	}
	if n := len(r.agents.Messages()); n != 0 {
		t.Fatalf("a rejected request reached the manager: %d messages", n)
	}
	// Stop with no body and with {} are both fine.
	if status, body := raw(t, h, "POST", "/agents/x/stop", `{}`); status != 200 {
		t.Fatalf("stop with {}: %d %s", status, body)
	}
	if status, body := raw(t, h, "POST", "/agents/x/start", ``); status != 200 {
		t.Fatalf("start with no body: %d %s", status, body)
	}
}

func TestSendFailureIsReportedNotSent(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	r.Client.Spawn(context.Background(), api.SpawnRequest{Template: "assistant", Name: "a"})
	r.agents.SendResult = func(name, message string) (api.SendResult, error) {
		return api.SendResult{}, api.Errorf(api.CodeDeliveryFailed, "agent %q: the input line never became idle", name)
	}
	status, body := raw(t, h, "POST", "/agents/a/send", `{"message":"hi"}`)
	if status != http.StatusBadGateway || decodeErr(t, body).Code != api.CodeDeliveryFailed {
		t.Fatalf("failed delivery: %d %s", status, body)
	}
}

// A waited send answers with the message's outcome; the messages route
// waits (or not) and times out with wait_timeout; the conversation route
// reads turns; the socket's sends are the CLI's unless the web server
// named the surface.
func TestWaitedSendMessageAndConversationRoutes(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	ctx := context.Background()
	c := r.Client
	r.agents.Outcome = func(ctx context.Context, name, id, wait string) (api.MessageOutcome, error) {
		if id == "slow" && wait != "" {
			<-ctx.Done() // the route's timeout
			return api.MessageOutcome{}, api.Errorf(api.CodeWaitTimeout, "agent %s: message %s is delivered; the wait ended", name, id)
		}
		out := api.MessageOutcome{ID: id, Agent: name, Status: api.MessageDelivered}
		if wait == api.WaitReply {
			out.Reply, out.Outcome = &api.TurnReply{Text: "the answer"}, api.OutcomeTurnOK
		}
		return out, nil
	}
	r.agents.Conversations = map[string]api.Conversation{"bob": {Agent: "bob", ConversationID: "c1", Turns: []api.Turn{
		{ID: "t1", User: api.TurnUser{Text: "one"}, Outcome: api.OutcomeTurnOK},
		{ID: "t2", User: api.TurnUser{Text: "two", Sender: api.SenderCLI}, Reply: api.TurnReply{Text: "2"}, Outcome: api.OutcomeTurnOK},
	}}}
	if _, err := c.Spawn(ctx, api.SpawnRequest{Template: "assistant", Name: "bob"}); err != nil {
		t.Fatal(err)
	}

	out, err := c.SendAndWait(ctx, "bob", api.SendRequest{Message: "question", Wait: api.WaitReply, Timeout: "30s"})
	if err != nil || out.Reply == nil || out.Reply.Text != "the answer" {
		t.Fatalf("send and wait: %+v, %v", out, err)
	}
	if msgs := r.agents.Messages(); len(msgs) != 1 || msgs[0].Sender != api.SenderCLI {
		t.Fatalf("the socket's send: %+v, want sender cli", msgs)
	}
	status, body := raw(t, h, "POST", "/agents/bob/send", `{"message":"x","wait":"soon"}`)
	if status != http.StatusBadRequest || decodeErr(t, body).Code != api.CodeInvalidArgs {
		t.Fatalf("a wait that is no wait: %d %s", status, body)
	}
	status, body = raw(t, h, "POST", "/agents/bob/send", `{"message":"x","wait":"reply","timeout":"25h"}`)
	if status != http.StatusBadRequest || !strings.Contains(body, "timeout") {
		t.Fatalf("a timeout past the bound: %d %s", status, body)
	}

	if msgs := r.agents.Messages(); len(msgs) != 1 {
		t.Fatalf("a refused wait queued its message: %+v", msgs)
	}
	if got, err := c.Message(ctx, "bob", "m7", "", 0); err != nil || got.Status != api.MessageDelivered || got.Reply != nil {
		t.Fatalf("message now: %+v, %v", got, err)
	}
	status, body = raw(t, h, "GET", "/agents/bob/messages/slow?wait=reply&timeout=1s", "")
	if status != http.StatusRequestTimeout || decodeErr(t, body).Code != api.CodeWaitTimeout {
		t.Fatalf("a wait that runs out: %d %s, want 408 wait_timeout", status, body)
	}
	status, body = raw(t, h, "GET", "/agents/bob/messages/m7?timeout=1s", "")
	if status != http.StatusBadRequest {
		t.Fatalf("a timeout without a wait: %d %s", status, body)
	}

	conv, err := c.Conversation(ctx, "bob", api.ConversationQuery{Last: 1})
	if err != nil || conv.ConversationID != "c1" || len(conv.Turns) != 1 || conv.Turns[0].ID != "t2" {
		t.Fatalf("conversation --last 1: %+v, %v", conv, err)
	}
	status, body = raw(t, h, "GET", "/agents/bob/conversation?last=0", "")
	if status != http.StatusBadRequest {
		t.Fatalf("last=0: %d %s", status, body)
	}
	if _, err := c.Conversation(ctx, "nobody", api.ConversationQuery{}); !client.IsNotFound(err) {
		t.Fatalf("conversation of nobody: %v", err)
	}
}

// A wait in flight does not hold the daemon's stop: it ends at once with
// not_ready saying the daemon is shutting down (the message is kept).
func TestAWaitDoesNotHoldTheShutdown(t *testing.T) {
	h := newHome(t)
	r := startReady(t, h)
	waiting := make(chan struct{}, 1)
	r.agents.Outcome = func(ctx context.Context, name, id, wait string) (api.MessageOutcome, error) {
		waiting <- struct{}{}
		<-ctx.Done() // a turn that has not ended
		return api.MessageOutcome{}, api.Errorf(api.CodeWaitTimeout, "agent %s: message %s: the wait ended", name, id)
	}
	if _, err := r.Client.Spawn(context.Background(), api.SpawnRequest{Template: "assistant", Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, err := r.Client.Message(context.Background(), "bob", "m1", api.WaitReply, time.Hour)
		errc <- err
	}()
	<-waiting
	start := time.Now()
	_ = r.Stop(t)
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("the stop took %s with a wait in flight (ShutdownTimeout 5s)", took)
	}
	if err := <-errc; !api.HasCode(err, api.CodeNotReady) || !strings.Contains(err.Error(), "shutting down") {
		t.Fatalf("the waiter got %v, want not_ready: shutting down", err)
	}
}

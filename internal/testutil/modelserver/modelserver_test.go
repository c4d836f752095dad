package modelserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// post sends body to path and returns the status and the response body.
func post(t *testing.T, s *Server, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return resp.StatusCode, string(b)
}

// sseData returns the data payloads of an event stream, with their event
// names ("" for data-only events).
func sseData(t *testing.T, stream string) (names []string, datas []string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(stream))
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			names = append(names, name)
			datas = append(datas, strings.TrimPrefix(line, "data: "))
			name = ""
		}
	}
	return names, datas
}

const tool = `[{"name":"Bash","description":"run","input_schema":{"type":"object"}}]`

func TestAnthropicStreamingEchoesMarker(t *testing.T) {
	s := Start(t)
	body := `{"model":"m","stream":true,"system":[{"type":"text","text":"be brief"}],"tools":` + tool + `,
	  "messages":[{"role":"user","content":"old LEO-old"},{"role":"assistant","content":"ACK LEO-old"},
	  {"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"hi LEO-a1 and LEO-b2"}]}]}`
	status, out := post(t, s, "/v1/messages", body)
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	names, datas := sseData(t, out)
	want := []string{"message_start", "content_block_start", "ping"}
	for i, w := range want {
		if names[i] != w {
			t.Fatalf("event %d = %q, want %q (all: %v)", i, names[i], w, names)
		}
	}
	if names[len(names)-1] != "message_stop" || names[len(names)-2] != "message_delta" {
		t.Fatalf("stream does not end with message_delta, message_stop: %v", names)
	}
	var text strings.Builder
	for i, d := range datas {
		if names[i] != "content_block_delta" {
			continue
		}
		var ev struct {
			Delta struct{ Type, Text string }
		}
		if err := json.Unmarshal([]byte(d), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Delta.Type != "text_delta" {
			t.Fatalf("delta type %q", ev.Delta.Type)
		}
		text.WriteString(ev.Delta.Text)
	}
	if got := text.String(); got != "ACK LEO-a1 LEO-b2" {
		t.Fatalf("streamed text %q", got)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	r := reqs[0]
	if r.API != Anthropic || !r.Stream || r.Side || r.Tools != 1 || r.System != "be brief" || r.Model != "m" ||
		!strings.HasSuffix(r.UserText, "hi LEO-a1 and LEO-b2") || strings.Join(r.Markers, ",") != "LEO-a1,LEO-b2" ||
		r.Reply != "ACK LEO-a1 LEO-b2" || r.Seq != 1 || r.Status != 200 {
		t.Fatalf("recorded %+v", r)
	}
}

func TestAnthropicNonStreaming(t *testing.T) {
	s := Start(t)
	status, out := post(t, s, "/v1/messages", `{"model":"m","tools":`+tool+`,"messages":[{"role":"user","content":"LEO-n1"}]}`)
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	var msg struct {
		Type       string
		Role       string
		StopReason string `json:"stop_reason"`
		Content    []struct{ Type, Text string }
	}
	if err := json.Unmarshal([]byte(out), &msg); err != nil {
		t.Fatal(err)
	}
	if msg.Type != "message" || msg.Role != "assistant" || msg.StopReason != "end_turn" ||
		len(msg.Content) != 1 || msg.Content[0].Text != "ACK LEO-n1" {
		t.Fatalf("message %+v", msg)
	}
}

func TestResponsesStreaming(t *testing.T) {
	s := Start(t)
	body := `{"model":"gpt","stream":true,"instructions":"sys","tools":[{"type":"function","name":"shell"}],
	  "input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context/>"}]},
	  {"type":"message","role":"user","content":[{"type":"input_text","text":"do LEO-r1"}]},
	  {"type":"function_call","name":"shell","arguments":"{}"}]}`
	status, out := post(t, s, "/v1/responses", body)
	if status != 200 {
		t.Fatalf("status %d: %s", status, out)
	}
	names, datas := sseData(t, out)
	if names[0] != "response.created" || names[len(names)-1] != "response.completed" {
		t.Fatalf("events %v", names)
	}
	var text strings.Builder
	var done struct {
		Response struct {
			Status string
			Output []struct {
				Type    string
				Content []struct{ Type, Text string }
			}
			Usage struct {
				InputTokens int `json:"input_tokens"`
			}
		}
	}
	for i, d := range datas {
		var ev struct {
			Type  string
			Delta string
			Seq   *int `json:"sequence_number"`
		}
		if err := json.Unmarshal([]byte(d), &ev); err != nil {
			t.Fatal(err)
		}
		if ev.Type != names[i] || ev.Seq == nil || *ev.Seq != i {
			t.Fatalf("event %d: type %q name %q seq %v", i, ev.Type, names[i], ev.Seq)
		}
		if ev.Type == "response.output_text.delta" {
			text.WriteString(ev.Delta)
		}
		if ev.Type == "response.completed" {
			if err := json.Unmarshal([]byte(d), &done); err != nil {
				t.Fatal(err)
			}
		}
	}
	if text.String() != "ACK LEO-r1" {
		t.Fatalf("streamed %q", text.String())
	}
	if done.Response.Status != "completed" || len(done.Response.Output) != 1 ||
		done.Response.Output[0].Content[0].Text != "ACK LEO-r1" || done.Response.Usage.InputTokens == 0 {
		t.Fatalf("completed %+v", done)
	}
	r := s.Requests()[0]
	if r.API != Responses || r.UserText != "do LEO-r1" || r.System != "sys" || r.Side {
		t.Fatalf("recorded %+v", r)
	}
}

func TestResponsesStringInput(t *testing.T) {
	s := Start(t)
	status, out := post(t, s, "/v1/responses", `{"model":"gpt","input":"just LEO-s1","tools":[{"type":"function"}]}`)
	if status != 200 || !strings.Contains(out, `"ACK LEO-s1"`) {
		t.Fatalf("status %d: %s", status, out)
	}
}

func TestChatStreaming(t *testing.T) {
	for _, usage := range []bool{false, true} {
		s := Start(t)
		opts := ""
		if usage {
			opts = `"stream_options":{"include_usage":true},`
		}
		body := `{"model":"m","stream":true,` + opts + `"tools":[{"type":"function"}],
		  "messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"q LEO-k1"}]}]}`
		status, out := post(t, s, "/v1/chat/completions", body)
		if status != 200 {
			t.Fatalf("status %d: %s", status, out)
		}
		_, datas := sseData(t, out)
		if datas[len(datas)-1] != "[DONE]" {
			t.Fatalf("stream does not end with [DONE]: %q", datas[len(datas)-1])
		}
		var text strings.Builder
		finish, sawUsage := "", false
		for _, d := range datas[:len(datas)-1] {
			var ch struct {
				Object  string
				Choices []struct {
					Delta        struct{ Content string }
					FinishReason *string `json:"finish_reason"`
				}
				Usage *struct {
					TotalTokens int `json:"total_tokens"`
				}
			}
			if err := json.Unmarshal([]byte(d), &ch); err != nil {
				t.Fatal(err)
			}
			if ch.Object != "chat.completion.chunk" {
				t.Fatalf("object %q", ch.Object)
			}
			for _, c := range ch.Choices {
				text.WriteString(c.Delta.Content)
				if c.FinishReason != nil {
					finish = *c.FinishReason
				}
			}
			if ch.Usage != nil && ch.Usage.TotalTokens > 0 {
				sawUsage = true
			}
		}
		if text.String() != "ACK LEO-k1" || finish != "stop" || !sawUsage {
			t.Fatalf("include_usage=%v: text %q finish %q usage %v", usage, text.String(), finish, sawUsage)
		}
		if r := s.Requests()[0]; r.API != Chat || r.System != "sys" || r.UserText != "q LEO-k1" {
			t.Fatalf("recorded %+v", r)
		}
	}
}

func TestChatNonStreaming(t *testing.T) {
	s := Start(t)
	status, out := post(t, s, "/v1/chat/completions", `{"model":"m","tools":[{}],"messages":[{"role":"user","content":"LEO-q"}]}`)
	var c struct {
		Choices []struct{ Message struct{ Content string } }
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil || status != 200 || c.Choices[0].Message.Content != "ACK LEO-q" {
		t.Fatalf("status %d err %v: %s", status, err, out)
	}
}

// Side requests (title generation: no tools) get a reply that cannot be
// mistaken for a turn's, and are not turns.
func TestSideRequestsAreMarkedAndNeutral(t *testing.T) {
	s := Start(t)
	_, out := post(t, s, "/v1/chat/completions", `{"model":"m","messages":[{"role":"system","content":"You are a title generator"},{"role":"user","content":"title for: LEO-t1"}]}`)
	if strings.Contains(out, "ACK") || strings.Contains(out, "LEO-") {
		t.Fatalf("side reply %s", out)
	}
	post(t, s, "/v1/chat/completions", `{"model":"m","tools":[{}],"messages":[{"role":"user","content":"LEO-t1"}]}`)
	reqs := s.Requests()
	if !reqs[0].Side || reqs[0].SideWhy == "" || reqs[1].Side {
		t.Fatalf("side flags: %+v / %+v", reqs[0], reqs[1])
	}
	if turns := WithMarker(reqs, "LEO-t1"); len(turns) != 1 || turns[0].Seq != 2 {
		t.Fatalf("turns with marker: %s", Summary(turns))
	}
}

func TestOtherPathsAndBadBodiesAreRecorded(t *testing.T) {
	s := Start(t)
	resp, err := http.Head(s.URL + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HEAD /: %v %v", resp, err)
	}
	resp.Body.Close()
	if status, _ := post(t, s, "/v1/nope", `{}`); status != 404 {
		t.Fatalf("unknown path: %d", status)
	}
	if status, out := post(t, s, "/v1/messages", `{not json`); status != 400 || !strings.Contains(out, "anthropic-messages request body") {
		t.Fatalf("bad body: %d %s", status, out)
	}
	if status, _ := post(t, s, "/v1/messages", `{"model":"m","messages":[]}`); status != 400 {
		t.Fatalf("no messages: %d", status)
	}
	reqs := s.Requests()
	if len(reqs) != 4 || reqs[0].API != Other || reqs[1].Status != 404 || reqs[2].Status != 400 {
		t.Fatalf("recorded: %s", Summary(reqs))
	}
	if len(s.Turns()) != 2 { // the two bad /v1/messages are still attempts at a turn
		t.Fatalf("turns: %s", Summary(s.Turns()))
	}
}

func TestResponderScriptsErrorsAndDelays(t *testing.T) {
	s := Start(t)
	release := make(chan struct{})
	s.SetResponder(func(r Request) Reply {
		if strings.Contains(r.UserText, "fail") {
			return Reply{Status: 529}
		}
		return Reply{Text: "slow", Delay: time.Hour}
	})
	if status, _ := post(t, s, "/v1/messages", `{"model":"m","tools":[{}],"messages":[{"role":"user","content":"fail"}]}`); status != 529 {
		t.Fatalf("scripted status: %d", status)
	}
	// ErrorBody answers a vendor's own error shape, as written.
	const limit = `{"error":{"type":"usage_limit_reached","resets_at":1796041369}}`
	s.SetResponder(func(Request) Reply { return Reply{Status: 429, ErrorBody: limit} })
	if status, body := post(t, s, "/v1/responses", `{"model":"m","tools":[{}],"input":"LEO-lim"}`); status != 429 || body != limit {
		t.Fatalf("scripted body: %d %q", status, body)
	}
	if q := s.Requests(); q[len(q)-1].Status != 429 {
		t.Fatalf("recorded %+v", q[len(q)-1])
	}
	s.SetResponder(func(r Request) Reply { return Reply{Text: "slow", Delay: time.Hour} })
	// A delayed reply is recorded as soon as it is asked for, so a test can
	// see a turn in progress; the stream has started but not finished.
	go func() {
		defer close(release)
		resp, err := http.Post(s.URL+"/v1/messages", "application/json",
			strings.NewReader(`{"model":"m","stream":true,"tools":[{}],"messages":[{"role":"user","content":"LEO-slow"}]}`))
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := s.WaitTurn(ctx, "LEO-slow")
	if err != nil || r.Reply != "slow" {
		t.Fatalf("WaitTurn: %+v %v", r, err)
	}
	select {
	case <-release:
		t.Fatal("delayed reply finished early")
	default:
	}
	s.Close() // cuts the held stream
	<-release
}

func TestWaitEndsWithContext(t *testing.T) {
	s := Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.WaitTurn(ctx, "LEO-never")
	if err == nil || !strings.Contains(err.Error(), "LEO-never") || !strings.Contains(err.Error(), "turns seen: none") {
		t.Fatalf("err %v", err)
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "10.1.2.3:0", ":0", "example.com:80"} {
		if s, err := Listen(addr); err == nil {
			s.Close()
			t.Errorf("Listen(%q) accepted", addr)
		}
	}
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close() // twice is fine
}

func TestMarkers(t *testing.T) {
	got := markers("a LEO-1 b LEO-x-y- LEO-1 c")
	if strings.Join(got, ",") != "LEO-1,LEO-x-y" {
		t.Fatalf("markers %v", got)
	}
}

func TestCutDropsTheStreamBeforeAnyText(t *testing.T) {
	s := Start(t)
	s.SetResponder(func(r Request) Reply { return Reply{Text: "never sent LEO-cut", Cut: true} })
	bodies := map[string]string{
		"/v1/messages":         `{"model":"m","stream":true,"tools":[{}],"messages":[{"role":"user","content":"LEO-cut"}]}`,
		"/v1/responses":        `{"model":"m","stream":true,"tools":[{}],"input":"LEO-cut"}`,
		"/v1/chat/completions": `{"model":"m","stream":true,"tools":[{}],"messages":[{"role":"user","content":"LEO-cut"}]}`,
	}
	for path, body := range bodies {
		resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		// The chunked body ends without its terminating chunk: the client
		// sees an unexpected EOF, and no text was streamed.
		if err == nil {
			t.Errorf("%s: read the whole body with no error; want a broken stream:\n%s", path, b)
		}
		if strings.Contains(string(b), "never sent") {
			t.Errorf("%s: the text was streamed before the cut:\n%s", path, b)
		}
		if !strings.Contains(string(b), "data: ") {
			t.Errorf("%s: no event before the cut:\n%s", path, b)
		}
		// Not streamed: no response at all.
		resp, err = http.Post(s.URL+path, "application/json", strings.NewReader(strings.Replace(body, `"stream":true`, `"stream":false`, 1)))
		if err == nil {
			resp.Body.Close()
			t.Errorf("%s not streamed: got a response (%s); want the connection dropped", path, resp.Status)
		}
	}
}

// StreamFor spreads a reply's deltas over its duration, on every wire
// protocol: the first comes at once, the last at the end.
func TestStreamForPacesTheDeltas(t *testing.T) {
	s := Start(t)
	const text = "one two three four five six seven eight nine"
	s.SetResponder(func(Request) Reply { return Reply{Text: text, StreamFor: 600 * time.Millisecond} })
	for path, body := range map[string]string{
		"/v1/messages":         `{"model":"m","stream":true,"tools":[{}],"messages":[{"role":"user","content":"hi"}]}`,
		"/v1/responses":        `{"model":"m","stream":true,"tools":[{}],"input":[{"role":"user","content":"hi"}]}`,
		"/v1/chat/completions": `{"model":"m","stream":true,"tools":[{}],"messages":[{"role":"user","content":"hi"}]}`,
	} {
		resp, err := http.Post(s.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var first, last time.Time
		deltas := 0
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			l := sc.Text()
			if !strings.HasPrefix(l, "data:") {
				continue
			}
			if strings.Contains(l, "text_delta") || strings.Contains(l, "output_text.delta") || strings.Contains(l, `"content":"`) && !strings.Contains(l, `"content":""`) {
				if deltas == 0 {
					first = time.Now()
				}
				last = time.Now()
				deltas++
			}
		}
		resp.Body.Close()
		if deltas != 3 || last.Sub(first) < 550*time.Millisecond {
			t.Errorf("%s: %d deltas over %s, want 3 over 600ms", path, deltas, last.Sub(first))
		}
	}
}

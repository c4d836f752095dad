package pi

import (
	"bufio"
	"os"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func streamFile(t *testing.T, path string) harness.RunResult {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := Pi{}.NewEventStream()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		s.Line(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return s.Result()
}

// The captures are pi 0.73.1's `--mode json` against the model server
// (go run ./e2e/realcli/cmd/capturestreams -harness pi; docs/harness-
// behaviour/pi.md, "Headless runs"). pi exits 0 in every one of them.
func TestStreamCaptures(t *testing.T) {
	first := streamFile(t, "testdata/streams/first_v0.73.1.jsonl")
	if !first.Succeeded || first.Error != "" || first.Reply != "ACK LEO-first-pi" || first.SessionID == "" {
		t.Errorf("first: %+v", first)
	}
	if first.Usage == nil || first.Usage.InputTokens == 0 || first.Usage.OutputTokens == 0 {
		t.Errorf("first usage: %+v", first.Usage)
	}
	res := streamFile(t, "testdata/streams/resume_v0.73.1.jsonl")
	if !res.Succeeded || res.SessionID != first.SessionID || res.Reply != "ACK LEO-resume-pi" {
		t.Errorf("resume continues the session %s: %+v", first.SessionID, res)
	}
	// Retried and given up: failed, each retry a warning.
	for _, name := range []string{"http500", "429-retried"} {
		r := streamFile(t, "testdata/streams/"+name+"_v0.73.1.jsonl")
		if r.Succeeded || r.Error == "" || len(r.Warnings) == 0 {
			t.Errorf("%s: %+v", name, r)
		}
	}
	// A 429 on every try (the Chat API's rate_limit_exceeded with a
	// retry-after): pi retries three times, gives up, exits 0 — limited,
	// with no reset (pi's stream names none). Once: retried, a success.
	if r := streamFile(t, "testdata/streams/limited_v0.73.1.jsonl"); r.Succeeded || !r.Limited || !r.ResetsAt.IsZero() || !strings.Contains(r.Error, "429") || len(r.Warnings) != 3 {
		t.Errorf("limited: %+v", r)
	}
	if r := streamFile(t, "testdata/streams/limitonce_v0.73.1.jsonl"); !r.Succeeded || r.Limited {
		t.Errorf("limitonce: %+v", r)
	}
	for _, name := range []string{"http500", "http401"} {
		if r := streamFile(t, "testdata/streams/"+name+"_v0.73.1.jsonl"); r.Limited {
			t.Errorf("%s taken for a limit: %+v", name, r)
		}
	}
	// Not retried (401): failed at once, no warning.
	if r := streamFile(t, "testdata/streams/http401_v0.73.1.jsonl"); r.Succeeded || !strings.Contains(r.Error, "401") || len(r.Warnings) != 0 {
		t.Errorf("http401: %+v", r)
	}
	// Two 500s then an answer: the provider's client retried them within
	// one call, and pi's stream says nothing of them — a plain success.
	if r := streamFile(t, "testdata/streams/transient_v0.73.1.jsonl"); !r.Succeeded || len(r.Warnings) != 0 || r.Reply != "ACK LEO-transient-pi" {
		t.Errorf("transient: %+v", r)
	}
}

func TestStreamRetryThatSucceedsIsAWarning(t *testing.T) {
	s := Pi{}.NewEventStream()
	for _, l := range []string{
		`{"type":"session","version":3,"id":"01a23a69-3545-75b0-bfd9-ae4a03d3aa79","cwd":"/w"}`,
		`{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"429 slow down"}}`,
		`{"type":"agent_end","messages":[]}`,
		`{"type":"auto_retry_start","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"429 slow down"}`,
		`{"type":"agent_start"}`,
		`{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"done"}],"stopReason":"stop","usage":{"input":5,"output":1,"cost":{"total":0.25}}}}`,
		`{"type":"agent_end","messages":[]}`,
		`{"type":"auto_retry_end","success":true,"attempt":1}`,
		`not json`,
	} {
		s.Line([]byte(l))
	}
	r := s.Result()
	if !r.Succeeded || r.Reply != "done" || len(r.Warnings) != 1 || r.CostUSD == nil || *r.CostUSD != 0.25 {
		t.Fatalf("%+v", r)
	}
}

func TestStreamWithoutEnd(t *testing.T) {
	s := Pi{}.NewEventStream()
	s.Line([]byte(`{"type":"session","id":"01a23a69-3545-75b0-bfd9-ae4a03d3aa79"}`))
	if r := s.Result(); r.Succeeded || r.Error != "" {
		t.Fatalf("%+v", r)
	}
	s = Pi{}.NewEventStream()
	s.Line([]byte(`{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"aborted"}}`))
	s.Line([]byte(`{"type":"agent_end"}`))
	if r := s.Result(); r.Succeeded || r.Error == "" {
		t.Fatalf("aborted: %+v", r)
	}
}

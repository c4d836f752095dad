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
// (docs/harness-behaviour/pi.md, "Headless runs").
func TestStreamCaptures(t *testing.T) {
	ok := streamFile(t, "testdata/streams/ok_v0.73.1.jsonl")
	if !ok.Succeeded || ok.Error != "" || ok.Reply != "ACK LEO-h1" || ok.SessionID != "01a23a69-209b-70d0-81c7-66357a1c7279" {
		t.Errorf("ok: %+v", ok)
	}
	if ok.Usage == nil || ok.Usage.InputTokens != 10 || ok.Usage.OutputTokens != 3 {
		t.Errorf("ok usage: %+v", ok.Usage)
	}
	res := streamFile(t, "testdata/streams/resume_v0.73.1.jsonl")
	if !res.Succeeded || res.SessionID != ok.SessionID || res.Reply != "ACK LEO-h2" {
		t.Errorf("resume continues the session: %+v", res)
	}
	// pi exits 0 after giving up: the stream says it failed, and each
	// retry before that is a warning.
	failed := streamFile(t, "testdata/streams/429-retried_v0.73.1.jsonl")
	if failed.Succeeded || !strings.Contains(failed.Error, "429") || len(failed.Warnings) == 0 {
		t.Errorf("429 given up: %+v", failed)
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

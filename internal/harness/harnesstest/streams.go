package harnesstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Helpers for the adapters' event stream tests (harness.EventStreamer):
// the real captures under testdata/streams, what every result must hold,
// hostile input, the fuzz target and the benchmark.

// StreamCapture is one real headless run recorded by
// e2e/realcli/cmd/capturestreams: testdata/streams/<scenario>_v<version>.jsonl
// and its .meta.json.
type StreamCapture struct {
	Scenario string
	Version  string
	Path     string
	Data     []byte
	Meta     CaptureMeta
}

// CaptureMeta is how the captured run ended.
type CaptureMeta struct {
	Exit         int      `json:"exit"`
	TimedOut     bool     `json:"timed_out"`
	Requests     []string `json:"requests"`
	CarriesFirst bool     `json:"carries_first"`
	Env          []string `json:"env"`
}

// StreamCaptures reads every capture in dir (testdata/streams), failing
// the test when there is none or one has no meta.
func StreamCaptures(t testing.TB, dir string) []StreamCapture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no captures in %s (%v): record them with e2e/realcli/cmd/capturestreams", dir, err)
	}
	sort.Strings(paths)
	var out []StreamCapture
	for _, p := range paths {
		base := strings.TrimSuffix(filepath.Base(p), ".jsonl")
		scenario, version, ok := strings.Cut(base, "_v")
		if !ok {
			t.Fatalf("%s: want <scenario>_v<version>.jsonl", p)
		}
		c := StreamCapture{Scenario: scenario, Version: version, Path: p, Data: []byte(ReadFile(t, p))}
		if err := json.Unmarshal([]byte(ReadFile(t, strings.TrimSuffix(p, ".jsonl")+".meta.json")), &c.Meta); err != nil {
			t.Fatalf("%s meta: %v", p, err)
		}
		out = append(out, c)
	}
	return out
}

// Lines splits a stream into lines without their newlines, as the task
// runner hands them to an EventStream.
func Lines(data []byte) [][]byte {
	lines := bytes.Split(data, []byte("\n"))
	if n := len(lines); n > 0 && len(lines[n-1]) == 0 {
		lines = lines[:n-1]
	}
	return lines
}

// FeedStream runs data through a fresh stream of h and returns its result.
func FeedStream(h harness.EventStreamer, data []byte) harness.RunResult {
	es := h.NewEventStream()
	for _, l := range Lines(data) {
		es.Line(l)
	}
	return es.Result()
}

// CheckResult fails the test when r breaks what every result must hold,
// whatever the input: bounded texts, valid UTF-8, no success with an
// error.
func CheckResult(t testing.TB, r harness.RunResult) {
	t.Helper()
	if r.Succeeded && r.Error != "" {
		t.Errorf("Succeeded with Error %q", r.Error)
	}
	if len(r.Reply) > harness.MaxReplyBytes {
		t.Errorf("Reply is %d bytes, over %d", len(r.Reply), harness.MaxReplyBytes)
	}
	if len(r.Error) > harness.MaxErrorBytes {
		t.Errorf("Error is %d bytes, over %d", len(r.Error), harness.MaxErrorBytes)
	}
	if len(r.Warnings) > harness.MaxWarnings {
		t.Errorf("%d warnings, over %d", len(r.Warnings), harness.MaxWarnings)
	}
	texts := append([]string{r.SessionID, r.Reply, r.Error}, r.Warnings...)
	for _, w := range r.Warnings {
		if len(w) > harness.MaxWarningBytes || w == "" {
			t.Errorf("warning of %d bytes", len(w))
		}
	}
	for _, s := range texts {
		if !utf8.ValidString(s) {
			t.Errorf("invalid UTF-8 in the result: %q", s)
		}
	}
	if len(r.SessionID) > 1024 {
		t.Errorf("SessionID is %d bytes", len(r.SessionID))
	}
	if u := r.Usage; u != nil && (u.InputTokens < 0 || u.OutputTokens < 0 || u.CacheReadTokens < 0 || u.CacheWriteTokens < 0) {
		t.Errorf("negative usage %+v", *u)
	}
}

// noise is what must not change a stream's outcome: non-JSON lines,
// control bytes, cut JSON, events of unknown types and unknown fields.
var noise = []string{
	"",
	"   ",
	"Starting up… not json",
	"\x00\x01\x02\x1b[31mred\x1b[0m\r",
	"\xff\xfe invalid utf-8 \xc3",
	"{",
	`{"type":`,
	"[1,2,3]",
	`"a string"`,
	"null",
	`{"type":"leo.unknown.event","payload":{"x":[1,2,{"y":null}]},"note":"é✓"}`,
	`{"type":12345}`,
	`{"unknown_field_only":true}`,
	strings.Repeat("[", 5000) + strings.Repeat("]", 5000),
	`{"type":"leo.deep","v":` + strings.Repeat(`{"a":`, 2000) + "1" + strings.Repeat("}", 2000) + "}",
}

// HugeLine is a line of n bytes: an event of an unknown type carrying
// one string field of that size.
func HugeLine(n int) []byte {
	head, tail := `{"type":"leo.huge","blob":"`, `"}`
	b := make([]byte, 0, n)
	b = append(b, head...)
	for len(b) < n-len(tail) {
		b = append(b, "0123456789abcdef"[len(b)%16])
	}
	return append(b, tail...)
}

// CheckHostile feeds h the stream good with noise between and around its
// lines, and, with huge set, a 6 MiB unknown event and a 3 MiB non-JSON
// line after its first: the result must be the same as for good alone.
func CheckHostile(t *testing.T, h harness.EventStreamer, good []byte, huge bool) {
	t.Helper()
	want := FeedStream(h, good)
	CheckResult(t, want)
	var noisy bytes.Buffer
	for i, l := range Lines(good) {
		fmt.Fprintf(&noisy, "%s\n", noise[i%len(noise)])
		if i == 1 && huge {
			noisy.Write(HugeLine(6 << 20))
			noisy.WriteByte('\n')
			noisy.Write(bytes.Repeat([]byte("not json "), (3<<20)/9))
			noisy.WriteByte('\n')
		}
		noisy.Write(l)
		noisy.WriteByte('\n')
	}
	for _, n := range noise {
		fmt.Fprintf(&noisy, "%s\n", n)
	}
	got := FeedStream(h, noisy.Bytes())
	CheckResult(t, got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("noise changed the result:\n got %+v\nwant %+v", got, want)
	}
	// A stream cut at every byte never panics and keeps the bounds.
	for i := 0; i <= len(good); i += max(1, len(good)/97) {
		CheckResult(t, FeedStream(h, good[:i]))
	}
}

// FuzzStream is the body of an adapter's FuzzEventStream: every capture
// in dir is a seed; any input must give a result that CheckResult accepts.
func FuzzStream(f *testing.F, h harness.EventStreamer, dir string) {
	for _, c := range StreamCaptures(f, dir) {
		f.Add(c.Data)
	}
	for _, n := range noise {
		f.Add([]byte(n))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		CheckResult(t, FeedStream(h, data))
	})
}

// BenchStream measures h's parsing of data (reported as MB/s).
func BenchStream(b *testing.B, h harness.EventStreamer, data []byte) {
	lines := Lines(data)
	b.Run("parse", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for range b.N {
			es := h.NewEventStream()
			for _, l := range lines {
				es.Line(l)
			}
			_ = es.Result()
		}
	})
	// The floor: checking that each line is JSON (encoding/json.Valid, no
	// decoding at all), the least any reader of the stream must do.
	b.Run("floor=json.Valid", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for range b.N {
			for _, l := range lines {
				_ = json.Valid(l)
			}
		}
	})
}

// CheckHugeFields feeds h the stream good with every string value in
// every event made longer than any bound (ids, texts, types alike): the
// result must still keep CheckResult's bounds.
func CheckHugeFields(t *testing.T, h harness.EventStreamer, good []byte) {
	t.Helper()
	big := strings.Repeat("é", harness.MaxReplyBytes/2+100)
	var grow func(v any) any
	grow = func(v any) any {
		switch x := v.(type) {
		case string:
			return x + big
		case map[string]any:
			for k, e := range x {
				x[k] = grow(e)
			}
		case []any:
			for i, e := range x {
				x[i] = grow(e)
			}
		}
		return v
	}
	var out bytes.Buffer
	for _, l := range Lines(good) {
		var v any
		if json.Unmarshal(l, &v) != nil {
			continue
		}
		b, err := json.Marshal(grow(v))
		if err != nil {
			t.Fatal(err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	CheckResult(t, FeedStream(h, out.Bytes()))
	// The ids alone too long: no id, the rest as before.
	want := FeedStream(h, good)
	got := FeedStream(h, hugeIDs.ReplaceAll(good, []byte(`$1"`+strings.Repeat("x", harness.MaxIDBytes+1)+`"`)))
	CheckResult(t, got)
	if want.SessionID != "" && got.SessionID != "" {
		t.Errorf("a %d-byte session id was kept", len(got.SessionID))
	}
}

var hugeIDs = regexp.MustCompile(`("(?:session_id|sessionID|thread_id)":)"[^"]*"`)

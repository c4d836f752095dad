package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// headlessRun is one run of a fake through leo's own argv (the adapter's
// Headless), stdin closed, as the task runner starts it.
type headlessRun struct {
	stdout []byte
	code   int
	result leoharness.RunResult
	// longest is the longest stdout line.
	longest int
}

func runFakeHeadless(t *testing.T, name string, env map[string]string) headlessRun {
	t.Helper()
	h, ok := leoharness.Lookup(name)
	if !ok {
		t.Fatalf("no %s adapter", name)
	}
	streamer, ok := h.(leoharness.EventStreamer)
	if !ok {
		t.Fatalf("%s: no EventStreamer", name)
	}
	ws := t.TempDir()
	spec := leoharness.LaunchSpec{Name: "t", Workspace: ws, Prompt: "do the thing"}
	cmd, err := h.Headless(spec)
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(filepath.Join(testutil.FakeHarnessDir(t), cmd.Argv[0]), cmd.Argv[1:]...)
	c.Dir = cmd.Dir
	c.Env = append(os.Environ(), "FAKE_TURN_MS=1")
	for k, v := range testutil.FakeHome(t) {
		c.Env = append(c.Env, k+"="+v)
	}
	for k, v := range env {
		c.Env = append(c.Env, k+"="+v)
	}
	var out bytes.Buffer
	c.Stdout = &out
	err = c.Run()
	var r headlessRun
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	r.stdout = out.Bytes()
	// Line by line as the runner reads it: bufio.Reader, no line limit.
	es := streamer.NewEventStream()
	br := bufio.NewReader(bytes.NewReader(r.stdout))
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			line = bytes.TrimSuffix(line, []byte("\n"))
			r.longest = max(r.longest, len(line))
			es.Line(line)
		}
		if err != nil {
			break
		}
	}
	r.result = es.Result()
	return r
}

// TestFakeHeadlessScenarios: each scenario of the fakes' headless mode
// reads, through the adapter's own stream parser, as the outcome the task
// runner must record (see the fakeharness package doc for the knobs).
func TestFakeHeadlessScenarios(t *testing.T) {
	type want struct {
		code      int
		succeeded bool
		err       string // a substring of Error; "" for none
		warnings  int
	}
	cases := map[string]map[string]want{
		"claude": {
			"success":            {0, true, "", 0},
			"turn_failed":        {1, false, "turn failed (fake)", 0},
			"error_as_success":   {0, false, "API Error: 500", 2},
			"not_logged_in":      {1, false, "Not logged in", 0},
			"stream_error_exit0": {0, false, "stream error (fake)", 0},
			"reconnecting":       {0, true, "", 2},
			"truncated":          {0, false, "", 0}, // no result: the runner says "the stream ended without a result"
			"huge_line":          {0, true, "", 0},
			"banner_noise":       {0, true, "", 0},
		},
		"codex": {
			"success":            {0, true, "", 0},
			"turn_failed":        {1, false, "stream disconnected before completion (fake)", 1},
			"error_as_success":   {0, true, "", 1},
			"not_logged_in":      {1, false, "401 Unauthorized", 1},
			"stream_error_exit0": {0, false, "stream disconnected (fake)", 1},
			"reconnecting":       {0, true, "", 2},
			"truncated":          {0, false, "the stream ended without turn.completed or turn.failed", 0},
			"huge_line":          {0, true, "", 0},
			"banner_noise":       {0, true, "", 1},
		},
		"opencode": {
			"success":            {0, true, "", 0},
			"turn_failed":        {1, false, "provider returned 500 (fake)", 0},
			"error_as_success":   {0, true, "", 0}, // an error told as text is a reply, not an error event
			"not_logged_in":      {1, false, "No API key found", 0},
			"stream_error_exit0": {0, false, "stream error (fake)", 0},
			"reconnecting":       {0, true, "", 0},
			"truncated":          {0, true, "", 0}, // EOF without step_finish ends the turn
			"huge_line":          {0, true, "", 0},
			"banner_noise":       {0, true, "", 0},
		},
	}
	for _, name := range []string{"claude", "codex", "opencode"} {
		for sc, w := range cases[name] {
			t.Run(name+"/"+sc, func(t *testing.T) {
				t.Parallel()
				env := map[string]string{"FAKE_SCENARIO": sc, "FAKE_HUGE_LINE_BYTES": fmt.Sprint(3 << 20)}
				r := runFakeHeadless(t, name, env)
				res := r.result
				if r.code != w.code || res.Succeeded != w.succeeded || (w.err == "") != (res.Error == "") || !strings.Contains(res.Error, w.err) {
					t.Fatalf("exit %d, result %+v; want exit %d succeeded %v error ~%q\n%s", r.code, res, w.code, w.succeeded, w.err, clip(r.stdout))
				}
				if len(res.Warnings) != w.warnings {
					t.Errorf("warnings %q, want %d", res.Warnings, w.warnings)
				}
				if res.SessionID == "" {
					t.Error("no session id")
				}
				if w.succeeded && sc != "error_as_success" && res.Reply != "echo: do the thing" {
					t.Errorf("Reply = %q", res.Reply)
				}
				if sc == "huge_line" && r.longest < 3<<20 {
					t.Errorf("longest line %d bytes, want one of 3 MiB or more", r.longest)
				}
			})
		}
	}
}

func clip(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// kindOf names an event for the shape comparison: its type, with the
// subtype (claude) or the item type (codex) that changes its fields.
func kindOf(ev map[string]any) string {
	k, _ := ev["type"].(string)
	if s, ok := ev["subtype"].(string); ok {
		k += "/" + s
	}
	if it, ok := ev["item"].(map[string]any); ok {
		k += "/" + fmt.Sprint(it["type"])
	}
	return k
}

// dataKeyed are maps keyed by data (model names, header names, tool
// input), not by field names: their keys are not part of the shape.
var dataKeyed = []string{"modelUsage", "memory_paths", "responseHeaders", "metadata", "input", "rate_limit_info"}

// fieldPaths lists the field paths of v: "a", "a.b", "a[].c".
func fieldPaths(v any, prefix string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			out[prefix+k] = true
			if !slices.Contains(dataKeyed, k) {
				fieldPaths(e, prefix+k+".", out)
			}
		}
	case []any:
		for _, e := range x {
			fieldPaths(e, strings.TrimSuffix(prefix, ".")+"[].", out)
		}
	}
}

// shapes maps each event kind of a stream to the field paths of its first
// event of that kind.
func shapes(t *testing.T, stream []byte) (map[string][]string, []string) {
	t.Helper()
	out := map[string][]string{}
	var kinds []string
	for _, l := range bytes.Split(stream, []byte("\n")) {
		var ev map[string]any
		if json.Unmarshal(l, &ev) != nil {
			continue
		}
		k := kindOf(ev)
		if _, seen := out[k]; seen {
			continue
		}
		paths := map[string]bool{}
		fieldPaths(ev, "", paths)
		var list []string
		for p := range paths {
			list = append(list, p)
		}
		sort.Strings(list)
		out[k] = list
		kinds = append(kinds, k)
	}
	return out, kinds
}

// TestFakeHeadlessStreamsMatchReal: the fakes' headless streams have the
// events, fields and nesting of the real CLIs' (the captures the adapters'
// tests parse, internal/harness/<h>/testdata/streams): every kind of event
// the real run printed, the fake prints too, with the same field paths;
// and the adapter reads both to the same kind of outcome.
func TestFakeHeadlessStreamsMatchReal(t *testing.T) {
	type pair struct {
		harness, fake, real string
		// notInFake are kinds of the real capture that come from the test
		// setup, not from the harness's behaviour.
		notInFake []string
	}
	// codex warns of the model server's unknown model before every turn.
	modelWarning := "item.completed/error"
	pairs := []pair{
		{"claude", "success", "first", nil},
		{"claude", "reconnecting", "transient", nil},
		{"claude", "error_as_success", "http500", nil},
		{"codex", "success", "first", []string{modelWarning}},
		{"codex", "reconnecting", "cutonce", []string{modelWarning}},
		{"codex", "turn_failed", "http500", []string{modelWarning}},
		{"opencode", "success", "first", nil},
		{"opencode", "turn_failed", "http500", nil},
		{"claude", "limited", "limited", nil},
		{"codex", "limited", "limited", []string{modelWarning}},
		{"opencode", "limited", "limited", nil},
		{"pi", "limited", "limited", nil},
	}
	for _, p := range pairs {
		t.Run(p.harness+"/"+p.fake+"~"+p.real, func(t *testing.T) {
			t.Parallel()
			caps, _ := filepath.Glob(filepath.Join("..", "..", "harness", p.harness, "testdata", "streams", p.real+"_v*.jsonl"))
			if len(caps) != 1 {
				t.Fatalf("want one real %s capture of %s, found %q", p.harness, p.real, caps)
			}
			real, err := os.ReadFile(caps[0])
			if err != nil {
				t.Fatal(err)
			}
			fake := runFakeHeadless(t, p.harness, map[string]string{"FAKE_SCENARIO": p.fake})
			realShapes, realKinds := shapes(t, real)
			fakeShapes, fakeKinds := shapes(t, fake.stdout)
			for _, k := range realKinds {
				f, ok := fakeShapes[k]
				if !ok {
					if !slices.Contains(p.notInFake, k) {
						t.Errorf("the real stream has %s events, the fake none (fake kinds %q)", k, fakeKinds)
					}
					continue
				}
				r := realShapes[k]
				if !slices.Equal(f, r) {
					t.Errorf("%s fields differ:\n only real: %q\n only fake: %q", k, minus(r, f), minus(f, r))
				}
			}
			h, _ := leoharness.Lookup(p.harness)
			es := h.(leoharness.EventStreamer).NewEventStream()
			for _, l := range bytes.Split(real, []byte("\n")) {
				es.Line(l)
			}
			rr, fr := es.Result(), fake.result
			if rr.Succeeded != fr.Succeeded || rr.Limited != fr.Limited || (rr.Error == "") != (fr.Error == "") || (rr.Usage == nil) != (fr.Usage == nil) || (rr.CostUSD == nil) != (fr.CostUSD == nil) ||
				(p.notInFake == nil && len(rr.Warnings) > 0 != (len(fr.Warnings) > 0)) {
				t.Errorf("outcomes differ:\nreal %+v\nfake %+v", rr, fr)
			}
		})
	}
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// TestFakeHeadlessLimits: the fakes' limited scenario with a reset reads as
// limited with that reset through each adapter (codex names the minute:
// the adapter takes its end), and FAKE_LIMIT_ONCE limits only the first run.
func TestFakeHeadlessLimits(t *testing.T) {
	for _, h := range []string{"claude", "codex", "opencode"} {
		t.Run(h, func(t *testing.T) {
			t.Parallel()
			before := time.Now()
			r := runFakeHeadless(t, h, map[string]string{"FAKE_SCENARIO": "limited", "FAKE_LIMIT_RESETS_IN": "300"}).result
			after := time.Now()
			lo, hi := before.Add(300*time.Second).Truncate(time.Second), after.Add(300*time.Second).Add(time.Second)
			if h == "codex" {
				lo, hi = before.Add(300*time.Second).Truncate(time.Minute).Add(time.Minute), after.Add(300*time.Second).Truncate(time.Minute).Add(time.Minute)
			}
			if !r.Limited || r.Succeeded || r.ResetsAt.Before(lo) || r.ResetsAt.After(hi) {
				t.Errorf("limited with a reset in 300s: %+v, want ResetsAt in [%v, %v]", r, lo, hi)
			}
			r = runFakeHeadless(t, h, map[string]string{"FAKE_SCENARIO": "limited"}).result
			if !r.Limited || !r.ResetsAt.IsZero() {
				t.Errorf("limited without a reset: %+v", r)
			}
			flag := filepath.Join(t.TempDir(), "limited-once")
			env := map[string]string{"FAKE_SCENARIO": "limited", "FAKE_LIMIT_ONCE": flag}
			if r := runFakeHeadless(t, h, env).result; !r.Limited {
				t.Errorf("first run with FAKE_LIMIT_ONCE not limited: %+v", r)
			}
			if r := runFakeHeadless(t, h, env).result; r.Limited || !r.Succeeded {
				t.Errorf("second run with FAKE_LIMIT_ONCE: %+v, want success", r)
			}
		})
	}
}

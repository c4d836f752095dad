package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	_ "github.com/blackpaw-studio/leo/internal/harness/pi"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// realPiScreens is where the captures of the real pi live.
var realPiScreens = filepath.Join("..", "..", "..", "testdata", "screens", "pi")

// piRules are the rows of a capture that are the editor's rules, and the
// rows after the bottom one (the footer).
func piRules(capture string) (rows []int, width int, footer int) {
	lines := strings.Split(strings.TrimRight(capture, "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		l = strings.TrimRight(l, " ")
		if l != "" && strings.Trim(l, "─") == "" {
			rows, width = append(rows, i), len([]rune(l))
		}
	}
	if len(rows) > 0 {
		footer = len(lines) - 1 - rows[len(rows)-1]
	}
	return rows, width, footer
}

// TestPiFakeMatchesRealScreens walks the fake pi through the states
// captured from the real pi 0.73.1 at 120x40 and holds each fake screen to
// the real capture of the same state: the adapter reads both the same
// (state and input), the editor's rules are full-width and the footer
// under them as tall. The fake cannot drift from the real TUI without this
// failing.
func TestPiFakeMatchesRealScreens(t *testing.T) {
	h0, ok := leoharness.Lookup("pi")
	if !ok {
		t.Fatal("no pi adapter registered")
	}
	reader := h0.Screen()
	for _, size := range []struct {
		w, h  int
		typed string
		full  bool // the captures of pastes and clears were taken at this size
	}{{120, 40, "hello LEO-p1", true}, {80, 24, "hello LEO-w80", false}, {200, 50, "hello LEO-w200", false}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			t.Parallel()
			h := start(t, launch{role: "pi", width: size.w, height: size.h, env: map[string]string{"FAKE_TURN_MS": "2500"}})
			check := func(state string, paste string) {
				t.Helper()
				data, err := os.ReadFile(filepath.Join(realPiScreens, fmt.Sprintf("%s_%dx%d_v0.73.1.txt", state, size.w, size.h)))
				if err != nil {
					t.Fatal(err)
				}
				real := reader.Classify(string(data))
				var fake string
				var got leoharness.Screen
				testutil.WaitFor(t, 10*time.Second, func() bool {
					fake = h.screen()
					got = reader.Classify(fake)
					return got.State == real.State && got.Input == real.Input
				}, state+": the fake read like the real capture "+real.State.String()+" "+strconvQuote(real.Input))
				if paste != "" && (!reader.Landed(got, paste) || !reader.Landed(real, paste)) {
					t.Errorf("%s: the paste is not landed on both", state)
				}
				rr, rw, rf := piRules(string(data))
				fr, fw, ff := piRules(fake)
				if len(fr) != 2 || len(rr) != 2 || fw != rw || ff != rf || fr[1]-fr[0] != rr[1]-rr[0] {
					t.Errorf("%s: editor rules %v (width %d, footer %d), real %v (width %d, footer %d)\n%s", state, fr, fw, ff, rr, rw, rf, fake)
				}
			}
			check("ready-fresh", "")
			h.send(size.typed)
			check("ready-typed", size.typed)
			h.enter()
			check("busy", "")
			h.waitFor(" echo: " + size.typed)
			check("ready-after-turn", "")
			if !size.full {
				return
			}
			h.send("line one LEO-m1\nline two\nline three")
			check("ready-pasted-multiline", "line one LEO-m1\nline two\nline three")
			if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "C-c"); err != nil {
				t.Fatal(err)
			}
			check("ready-after-clear", "")
			big := "long LEO-big1 " + strings.Repeat("x", 3990)
			h.send(big)
			check("ready-pasted-4000", big)
		})
	}
}

// TestPiFakeRecordsAsThePiAdapterReads: the fake's session file, its
// headless stream and the payloads of its stand-in for leo's extension
// read through the pi adapter as the real pi's captures do.
func TestPiFakeRecordsAsThePiAdapterReads(t *testing.T) {
	h0, _ := leoharness.Lookup("pi")
	home := testutil.FakeHome(t)
	dir := t.TempDir()
	payloads := filepath.Join(t.TempDir(), "payloads")
	hook := filepath.Join(t.TempDir(), "hook.sh")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\ncat >>"+payloads+"\necho >>"+payloads+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, _ := json.Marshal([]string{hook})
	h := start(t, launch{role: "pi", home: home, dir: dir, args: []string{"-e", "/leo/pi-turn-end.js"}, env: map[string]string{"LEO_PI_HOOK": string(cmd)}})
	h.waitFor("fake-model") // the footer
	h.submit("hello there\n", "hello there")
	h.waitFor(" echo: hello there")
	id := h.sessionID()
	q := leoharness.SessionQuery{Workspace: dir, Env: home, Since: time.Now().Add(-time.Minute)}
	if got, err := h0.Sessions().Discover(context.Background(), q); got != id || err != nil {
		t.Fatalf("Discover = %q, %v; the fake logged %q", got, err, id)
	}
	turns, err := h0.(leoharness.ConversationReader).Conversation(context.Background(), q, id)
	if err != nil || len(turns) != 1 || turns[0].User != "hello there" || turns[0].Reply != "echo: hello there" || turns[0].Outcome != leoharness.OutcomeOK {
		t.Fatalf("Conversation = %+v, %v", turns, err)
	}
	var ended bool
	testutil.WaitFor(t, 10*time.Second, func() bool {
		data, _ := os.ReadFile(payloads)
		for _, l := range strings.Split(string(data), "\n") {
			if te, err := h0.(leoharness.TurnEndSignaler).ParseTurnEnd([]byte(l)); err == nil && len(te.Inputs) == 1 && te.Inputs[0] == "hello there" && te.SessionID == id {
				ended = te.Reply == "echo: hello there"
			}
		}
		return ended
	}, "the fake's agent_end payload, read by the adapter")

	// Headless: the stream reads as the real one; a resume continues it.
	evs := headlessPi(t, home, dir, "one shot")
	s := h0.(leoharness.EventStreamer).NewEventStream()
	for _, l := range evs {
		s.Line([]byte(l))
	}
	if r := s.Result(); !r.Succeeded || r.Reply != "echo: one shot" || r.SessionID == "" {
		t.Fatalf("headless: %+v", r)
	}
}

func headlessPi(t *testing.T, home map[string]string, dir, msg string) []string {
	t.Helper()
	h := start(t, launch{role: "pi", home: home, dir: dir, args: []string{"--mode", "json", msg}})
	_, out := h.exit()
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "{") {
			lines = append(lines, l)
		}
	}
	return lines
}

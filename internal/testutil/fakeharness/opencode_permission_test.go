package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	leoharness "github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/opencode"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// ocDialogLayout is where a prompt sits: the rows and columns of its
// title's △ and of its choices row's first choice, and the column where
// its key hints end (or the row's end, when the pane cut them).
type ocDialogLayout struct {
	titleRow, titleCol   int
	choiceRow, choiceCol int
	hintsEnd             int
}

func ocDialogLayoutOf(capture string) ocDialogLayout {
	l := ocDialogLayout{titleRow: -1, choiceRow: -1}
	for i, row := range strings.Split(capture, "\n") {
		r := strings.TrimRight(row, " ")
		if c := strings.Index(r, "△ "); c >= 0 {
			l.titleRow, l.titleCol = i, len([]rune(r[:c]))
		}
		for _, first := range []string{"   Allow once", "   Confirm"} {
			if c := strings.Index(r, "┃"+first); c >= 0 {
				l.choiceRow, l.choiceCol, l.hintsEnd = i, len([]rune(r[:c]))+4, len([]rune(r))
			}
		}
	}
	return l
}

// ocAskConfig is the overlay leo gives a launch with permission {bash: ask}.
func ocAskConfig(t *testing.T, extra map[string]any) string {
	m := map[string]any{"permission": map[string]any{"bash": "ask"}}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// settledScreen waits for the fake's screen to read as want (two captures
// in a row the same) and returns it.
func (h *harness) settledScreen(what string, ok func(leoharness.Screen) bool) string {
	h.t.Helper()
	r := opencode.Opencode{}.Screen()
	var scr, prev string
	testutil.WaitFor(h.t, 10*time.Second, func() bool {
		scr = h.screen()
		same := ocWithoutSpinner(scr) == ocWithoutSpinner(prev)
		prev = scr
		return same && ok(r.Classify(scr))
	}, what)
	return scr
}

// TestOpencodeFakePermissionMatchesReal: the fake's permission prompt, and
// its "Always allow" stage, read as the real 1.18.33's and sit where they
// do, at every size they were captured at; answered, the turn goes on.
func TestOpencodeFakePermissionMatchesReal(t *testing.T) {
	r := opencode.Opencode{}.Screen()
	real := func(t *testing.T, name string) string {
		b, err := os.ReadFile(filepath.Join(realOpencodeScreens, name+"_v"+ocVersion+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	dialog := func(s leoharness.Screen) bool { return s.State == leoharness.ScreenDialog }
	compare := func(t *testing.T, name, fake string) {
		t.Helper()
		want := real(t, name)
		if g, w := r.Classify(fake), r.Classify(want); !reflect.DeepEqual(g, w) || w.Prompt == nil {
			t.Errorf("%s: the fake reads %+v %+v, the real %+v %+v\nfake:\n%s", name, g, g.Prompt, w, w.Prompt, fake)
		}
		if g, w := ocDialogLayoutOf(fake), ocDialogLayoutOf(want); g != w {
			t.Errorf("%s: the fake's layout %+v, the real's %+v\nfake:\n%s", name, g, w, fake)
		}
	}
	for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 50}, {100, 120}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			h := start(t, launch{role: "opencode", width: size[0], height: size[1],
				env: map[string]string{"OPENCODE_CONFIG_CONTENT": ocAskConfig(t, nil)}})
			h.waitFor("Ask anything…")
			h.submit("Please create leo-sig-1.txt fake-ask: touch leo-sig-1.txt", "┃  Please create")
			scr := h.settledScreen("the permission prompt", dialog)
			compare(t, fmt.Sprintf("dialog-permission_%dx%d", size[0], size[1]), scr)
			if size[0] == 80 {
				if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "Right", "Enter"); err != nil {
					t.Fatal(err)
				}
				scr = h.settledScreen("the always stage", func(s leoharness.Screen) bool {
					return dialog(s) && s.Prompt != nil && slices.Contains(s.Prompt.Choices, "Confirm")
				})
				compare(t, "dialog-permission-always_80x24", scr)
			}
			if err := h.s.SendKeys(ctx(t), h.pane.PaneID, "Enter"); err != nil {
				t.Fatal(err)
			}
			h.waitFor("echo: Please create leo-sig-1.txt")
			h.settledScreen("the box back, idle", func(s leoharness.Screen) bool { return s.State == leoharness.ScreenReady && s.Input == "" })
		})
	}
}

// ocPayloads reads the payloads the capture command appended to file.
func ocPayloads(t *testing.T, file string) []map[string]any {
	t.Helper()
	return readPayloads(t, file)
}

// ocKind is a payload's type, with its status's.
func ocKind(p map[string]any) string {
	k := fmt.Sprint(p["type"])
	if props, _ := p["properties"].(map[string]any); props != nil {
		if st, _ := props["status"].(map[string]any); st != nil {
			k += " " + fmt.Sprint(st["type"])
		}
	}
	return k
}

func ocShape(p map[string]any) string {
	var keys []string
	for k := range p {
		keys = append(keys, k)
	}
	if props, _ := p["properties"].(map[string]any); props != nil {
		for k, v := range props {
			keys = append(keys, "properties."+k)
			if m, ok := v.(map[string]any); ok && k == "metadata" {
				for mk := range m {
					keys = append(keys, "properties.metadata."+mk)
				}
			}
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, " ")
}

// TestOpencodeFakePluginEventsMatchReal: over turns whose bash call is
// asked about, the fake sends leo's plugin command the events the real
// plugin sent from opencode 1.18.33 (testdata/signals of the adapter), in
// its order, each with the real payload's fields, read by the adapter as
// the same signals: answered Allow once, Reject, Allow always (after which
// the same pattern is not asked again).
func TestOpencodeFakePluginEventsMatchReal(t *testing.T) {
	realDir := filepath.Join("..", "..", "harness", "opencode", "testdata", "signals")
	real := func(turn string) [][]byte {
		files, err := filepath.Glob(filepath.Join(realDir, turn+"-*_v"+ocVersion+".json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no real payloads of %s: %v", turn, err)
		}
		sort.Slice(files, func(i, j int) bool {
			n := func(f string) (k int) { fmt.Sscanf(strings.TrimPrefix(filepath.Base(f), turn+"-"), "%d", &k); return }
			return n(files[i]) < n(files[j])
		})
		var out [][]byte
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
		return out
	}
	file := filepath.Join(t.TempDir(), "signals.jsonl")
	plugin := []any{[]any{"file:///leo/opencode-turn-end.js", map[string]any{"command": []string{"/bin/sh", "-c", `cat >> "$0"; echo >> "$0"`, file}}}}
	h := start(t, launch{role: "opencode", env: map[string]string{"OPENCODE_CONFIG_CONTENT": ocAskConfig(t, map[string]any{"plugin": plugin})}})
	h.waitFor("Ask anything…")
	ad := opencode.Opencode{}
	seen := 0
	turn := func(name, msg string, keys ...string) {
		t.Helper()
		want := real(name)
		h.submit(msg, "fake-ask")
		if len(keys) > 0 {
			h.settledScreen("the permission prompt", func(s leoharness.Screen) bool { return s.State == leoharness.ScreenDialog })
			for _, k := range keys {
				if err := h.s.SendKeys(ctx(t), h.pane.PaneID, k); err != nil {
					t.Fatal(err)
				}
			}
		}
		var got []map[string]any
		testutil.WaitFor(t, 10*time.Second, func() bool {
			got = ocPayloads(t, file)
			return len(got) >= seen+len(want)
		}, name+": the turn's events")
		got = got[seen:]
		seen += len(got)
		if len(got) != len(want) {
			t.Fatalf("%s: the fake sent %d events, the real plugin %d", name, len(got), len(want))
		}
		for i, w := range want {
			var wm map[string]any
			if err := json.Unmarshal(w, &wm); err != nil {
				t.Fatal(err)
			}
			g, _ := json.Marshal(got[i])
			if ocKind(got[i]) != ocKind(wm) || ocShape(got[i]) != ocShape(wm) {
				t.Errorf("%s #%d: the fake sent %s {%s}, the real plugin %s {%s}", name, i+1, ocKind(got[i]), ocShape(got[i]), ocKind(wm), ocShape(wm))
				continue
			}
			gs, err1 := ad.ParseSignal(g)
			ws, err2 := ad.ParseSignal(w)
			if err1 != nil || err2 != nil || gs.Kind != ws.Kind || (gs.Prompt == nil) != (ws.Prompt == nil) {
				t.Errorf("%s #%d: the fake's reads %+v %v, the real's %+v %v", name, i+1, gs, err1, ws, err2)
			}
		}
	}
	turn("once", "Please create leo-sig-1.txt fake-ask: touch leo-sig-1.txt", "Enter")
	// The prompt names the fake's command as the real one named its own.
	if p := ocPayloads(t, file)[1]; fmt.Sprint(p["properties"].(map[string]any)["metadata"]) != "map[command:touch leo-sig-1.txt]" {
		t.Fatalf("permission.asked %v", p)
	}
	turn("reject", "Please create leo-sig-2.txt fake-ask: touch leo-sig-2.txt", "Escape")
	turn("always", "Please create leo-sig-3.txt fake-ask: touch leo-sig-3.txt", "Right", "Enter", "Enter")
	// touch * is allowed now: no prompt, the turn's start and end only.
	h.submit("and again fake-ask: touch leo-sig-4.txt", "fake-ask")
	h.waitFor("echo: and again")
	var got []map[string]any
	testutil.WaitFor(t, 10*time.Second, func() bool {
		got = ocPayloads(t, file)
		return len(got) >= seen+2
	}, "the allowed turn's events")
	if k := []string{ocKind(got[seen]), ocKind(got[seen+1])}; !slices.Equal(k, []string{"session.status busy", "session.idle"}) || len(got) != seen+2 {
		t.Fatalf("after Allow always: %v (%d events)", k, len(got)-seen)
	}
}

package tmux

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		in           string
		major, minor int
		suffix       string
		ok, atLeast  bool
	}{
		{"tmux 3.3a", 3, 3, "a", true, true},
		{"tmux 3.3a\n", 3, 3, "a", true, true},
		{"tmux 3.2", 3, 2, "", true, true},
		{"tmux 3.2-rc", 3, 2, "-rc", true, true},
		{"tmux 3.2-rc3", 3, 2, "-rc3", true, true},
		{"tmux next-3.4", 3, 4, "", true, true},
		{"tmux 3.1c", 3, 1, "c", true, false},
		{"tmux 2.9a", 2, 9, "a", true, false},
		{"tmux 3.6a", 3, 6, "a", true, true},
		{"tmux 10.0", 10, 0, "", true, true},
		{"tmux master", 1 << 30, 0, "", true, true},
		{"tmux openbsd-7.5", 1 << 30, 0, "", true, true},
		{"tmux", 0, 0, "", false, false},
		{"screen 4.09", 0, 0, "", false, false},
		{"tmux 3", 0, 0, "", false, false},
		{"tmux .3", 0, 0, "", false, false},
		{"tmux 3.x", 0, 0, "", false, false},
		{"", 0, 0, "", false, false},
	} {
		v, err := ParseVersion(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParseVersion(%q) err = %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if !tc.ok {
			continue
		}
		if v.Major != tc.major || v.Minor != tc.minor || v.Suffix != tc.suffix {
			t.Errorf("ParseVersion(%q) = %d.%d%q, want %d.%d%q", tc.in, v.Major, v.Minor, v.Suffix, tc.major, tc.minor, tc.suffix)
		}
		if got := v.AtLeast(3, 2); got != tc.atLeast {
			t.Errorf("ParseVersion(%q).AtLeast(3,2) = %v", tc.in, got)
		}
	}
}

func FuzzParseVersion(f *testing.F) {
	for _, s := range []string{"tmux 3.3a", "tmux next-3.4", "tmux 3.2-rc", "tmux master", "tmux 3.", "tmux 99999.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseVersion(s)
		if err != nil {
			if !strings.Contains(err.Error(), "tmux version") {
				t.Fatalf("error does not say what it is: %v", err)
			}
			return
		}
		if v.Major < 0 || v.Minor < 0 {
			t.Fatalf("negative version from %q: %+v", s, v)
		}
		// A version that parses keeps its numbers through a re-render.
		if !v.Dev {
			again, err := ParseVersion(fmt.Sprintf("tmux %d.%d%s", v.Major, v.Minor, v.Suffix))
			if err != nil || again.Major != v.Major || again.Minor != v.Minor {
				t.Fatalf("re-parse of %q: %+v %v", s, again, err)
			}
		}
	})
}

// frame renders lines as tmux would for one reply.
func frame(n int, isErr bool, lines []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%%begin 1700000000 %d 1\n", n)
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	end := "%end"
	if isErr {
		end = "%error"
	}
	fmt.Fprintf(&b, "%s 1700000000 %d 1\n", end, n)
	return b.String()
}

func feedAll(p *frameParser, text string) (blocks []*block, notes []string) {
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		b, n := p.feed(line)
		if b != nil {
			blocks = append(blocks, b)
		}
		if n != "" {
			notes = append(notes, n)
		}
	}
	return
}

func TestFrameParser(t *testing.T) {
	text := "%begin 1 5 0\n%end 1 5 0\n%session-changed $0 _leo\n" +
		frame(6, false, []string{"a", "%end 1700000000 5 1", "%error x", "%begin 1 2 3", ""}) +
		"%sessions-changed\n" +
		frame(7, true, []string{"can't find session: x"}) +
		"%exit\n"
	var p frameParser
	blocks, notes := feedAll(&p, text)
	if len(blocks) != 3 {
		t.Fatalf("got %d blocks, want 3", len(blocks))
	}
	if blocks[0].Ours || !blocks[1].Ours || !blocks[2].Ours {
		t.Fatalf("ownership wrong: %v %v %v", blocks[0].Ours, blocks[1].Ours, blocks[2].Ours)
	}
	if got := strings.Join(blocks[1].Lines, "|"); got != "a|%end 1700000000 5 1|%error x|%begin 1 2 3|" {
		t.Fatalf("block lines = %q: a spoofed %%end cut the reply", got)
	}
	if !blocks[2].Error || blocks[2].Lines[0] != "can't find session: x" {
		t.Fatalf("error block = %+v", blocks[2])
	}
	if strings.Join(notes, ",") != "%session-changed $0 _leo,%sessions-changed,%exit" {
		t.Fatalf("notifications = %q", notes)
	}
}

func FuzzFrameParser(f *testing.F) {
	f.Add("a\nb", "%end 1 2 1\n%error 1700000000 9 1", true)
	f.Add("", "%begin 1 2 1", false)
	f.Add("%exit\n%output %1 x", "\x00\r", false)
	f.Fuzz(func(t *testing.T, a, b string, isErr bool) {
		lines := append(strings.Split(a, "\n"), strings.Split(b, "\n")...)
		var p frameParser
		// Arbitrary garbage before a reply must not break the framing of
		// the reply that follows (garbage never opens a block unless it is
		// a well-formed %begin, which tmux alone writes outside blocks).
		for _, l := range lines {
			if strings.HasPrefix(l, "%begin") {
				continue
			}
			if blk, _ := p.feed(l); blk != nil {
				t.Fatalf("block from non-%%begin garbage %q", l)
			}
		}
		blocks, _ := feedAll(&p, frame(42, isErr, lines))
		if len(blocks) != 1 {
			t.Fatalf("got %d blocks, want 1", len(blocks))
		}
		if blocks[0].Error != isErr || strings.Join(blocks[0].Lines, "\n") != strings.Join(lines, "\n") {
			t.Fatalf("reply changed: %q", blocks[0].Lines)
		}
	})
}

func TestQuoteArg(t *testing.T) {
	for in, want := range map[string]string{
		"plain":      "plain",
		"=leo-ab":    "=leo-ab",
		"%3":         `"%3"`,
		"":           `""`,
		"a b":        `"a b"`,
		`$HOME`:      `"\$HOME"`,
		"~x":         `"\~x"`,
		"a\nb":       `"a\012b"`,
		`q"\`:        `"q\"\\"`,
		"#{pane_id}": `"#{pane_id}"`,
		"é":          `"é"`,
		"\xff":       `"\377"`,
		";":          `";"`,
	} {
		if got := quoteArg(in); got != want {
			t.Errorf("quoteArg(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestParsePaneLine(t *testing.T) {
	line := "leo-a\t$1\t%3\t42\t1\t7\t\t0\t1\t0\t1\t5\t9\t120\t40\t1700000000\t1700000001\t1700000002\t99\tclaude\tx"
	p, err := parsePaneLine(line)
	if err != nil {
		t.Fatal(err)
	}
	want := PaneInfo{SessionName: "leo-a", SessionID: "$1", PaneID: "%3", PID: 42, Dead: true, DeadStatus: 7, HasStatus: true,
		InMode: true, AltScreen: true, CursorX: 5, CursorY: 9, Width: 120, Height: 40, ServerPID: 99, CurrentCommand: "claude\tx"}
	p.Activity, p.SessionActivity, p.DeadTime = time.Time{}, time.Time{}, time.Time{}
	if p != want {
		t.Fatalf("got %+v\nwant %+v", p, want)
	}
	if !p.ExitKnown() {
		t.Fatal("exit 7 not known")
	}
	for _, bad := range []string{"", "a\tb", strings.Replace(line, "\t42\t", "\tx\t", 1), strings.Replace(line, "%3", "3", 1)} {
		if _, err := parsePaneLine(bad); err == nil {
			t.Errorf("parsePaneLine(%q) accepted", bad)
		}
	}
	if _, err := parsePaneList("leo-a\t$1\t%3\t42\t1\t7\t\t0\t1\t0\t1\t5\t9\t120\t40\t1\t1\t1\t99\n\n"); err != nil {
		t.Fatalf("list line without current command: %v", err)
	}
}

func FuzzParsePaneLine(f *testing.F) {
	f.Add("leo-a\t$1\t%3\t42\t0\t\t\t0\t0\t0\t1\t5\t9\t120\t40\t1700000000\t1700000001\t\t99\tclaude")
	f.Add("\t\t%0\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t")
	f.Fuzz(func(t *testing.T, line string) {
		p, err := parsePaneLine(line)
		if err != nil {
			return
		}
		if !strings.HasPrefix(p.PaneID, "%") {
			t.Fatalf("accepted pane id %q", p.PaneID)
		}
		if p.ExitKnown() && !p.Dead {
			t.Fatal("exit known for a live pane")
		}
	})
}

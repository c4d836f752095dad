package real

import (
	"fmt"
	"strings"
	"testing"
)

func TestTablePrintsEveryStepAndFailsOnGaps(t *testing.T) {
	tb := newTable()
	for _, s := range Steps {
		tb.set("claude", s.Name, "PASS", "")
	}
	var b strings.Builder
	if tb.print(&b) {
		t.Fatalf("all PASS reported as failed:\n%s", b.String())
	}
	tb.set("codex", Steps[0].Name, "PASS", "")
	tb.set("codex", Steps[1].Name, "FAIL", "not ready\nafter 1m")
	b.Reset()
	if !tb.print(&b) {
		t.Fatal("a FAIL was not reported")
	}
	out := b.String()
	for _, want := range []string{
		"codex / " + Steps[1].Name + ": FAIL: not ready after 1m",
		"codex / " + Steps[2].Name + " … " + Steps[len(Steps)-1].Name + fmt.Sprintf(" (%d steps): UNREACHED: the harness test ended before this step", len(Steps)-2),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !newTable().print(&b) {
		t.Error("an empty table (no harness ran) must count as a failure")
	}
}

func TestHasMarkerMatchesWholeMarkers(t *testing.T) {
	body := []byte(`{"text":"hi LEO-codex-0012 and LEO-codex-003"}`)
	for m, want := range map[string]bool{"LEO-codex-001": false, "LEO-codex-0012": true, "LEO-codex-003": true, "LEO-codex-00": false} {
		if got := hasMarker(body, m); got != want {
			t.Errorf("hasMarker(%s) = %v, want %v", m, got, want)
		}
	}
}

package real

import (
	"strings"
	"testing"
)

func TestTablePrintsEveryStepAndFailsOnGaps(t *testing.T) {
	tb := &table{cells: map[string]map[string]outcome{}}
	for _, s := range Steps {
		tb.set("claude", s, "PASS", "")
	}
	var b strings.Builder
	if tb.print(&b) {
		t.Fatalf("all PASS reported as failed:\n%s", b.String())
	}
	tb.set("codex", Steps[0], "PASS", "")
	tb.set("codex", Steps[1], "FAIL", "not ready\nafter 1m")
	b.Reset()
	if !tb.print(&b) {
		t.Fatal("a FAIL was not reported")
	}
	out := b.String()
	for _, want := range []string{
		"codex / " + Steps[1] + ": FAIL not ready after 1m",
		"codex / " + Steps[2] + ": FAIL not run (the harness test ended before this step)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if (&table{cells: map[string]map[string]outcome{}}).print(&b) == false {
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

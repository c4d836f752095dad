// Package real is the real-CLI contract suite (`make test-real`): the real
// claude, codex and opencode from npm (versions in e2e/realcli/versions.env),
// driven through the real leo binary and daemon (e2e/leoproc) against the
// test model server (internal/testutil/modelserver), each harness in its own
// isolated home. It runs only when LEO_REALCLI_BIN names the CLIs'
// directory, so a plain `make test` passes it by; `make test-real` sets that
// and LEO_REALCLI_REQUIRED=1, under which missing CLIs are a failure.
//
// Every step is a subtest; the suite prints a table harness × step at the
// end, and fails if any step failed or could not run.
package real

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/e2e/realcli"
)

// ranContract is set when TestRealCLI starts.
var ranContract atomic.Bool

// RequiredEnv makes missing CLIs a failure instead of a skip.
const RequiredEnv = "LEO_REALCLI_REQUIRED"

func TestMain(m *testing.M) {
	code := m.Run()
	leoproc.Cleanup()
	// The table is TestRealCLI's: not printed (nor failed) when a -run
	// filter left it out.
	if wanted() && ranContract.Load() && results.print(os.Stdout) && code == 0 {
		code = 1
	}
	os.Exit(code)
}

// wanted reports whether the suite is asked for: the CLIs' directory is
// given, or they are required.
func wanted() bool {
	return os.Getenv(realcli.BinDirEnv) != "" || os.Getenv(RequiredEnv) != ""
}

// Steps are the contract, in the order they run for each harness.
var Steps = []string{
	"versions",
	"spawn, ready",
	"deliver, reply",
	"3 back to back",
	"streamed reply, 2 at once",
	"3-line message",
	"4000-char message",
	"conversation id",
	"kill TUI, resume",
	"restart keeps",
	"daemon SIGKILL, adopt",
	"idle suspend, wake",
	"reset drops",
	"never-trusted ws",
	"symlinked ws",
	"task run, resume",
	"persistent task",
	"compact",
	"interrupt",
	"MCP tool call",
	"MCP in a task run",
}

// outcome is one cell of the table.
type outcome struct {
	status string // PASS, FAIL, SKIP
	text   string // why (FAIL, SKIP)
}

type table struct {
	mu    sync.Mutex
	cells map[string]map[string]outcome // harness → step → outcome
}

var results = &table{cells: map[string]map[string]outcome{}}

func (t *table) set(h, step, status, text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cells[h] == nil {
		t.cells[h] = map[string]outcome{}
	}
	t.cells[h][step] = outcome{status, text}
}

// print writes the table and the failure texts; it reports whether any
// step failed or did not run (a step never reached is a failure: nothing is
// skipped silently).
func (t *table) print(w io.Writer) (failed bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := make([]string, 0, len(t.cells))
	for h := range t.cells {
		hs = append(hs, h)
	}
	sort.Strings(hs)
	if len(hs) == 0 {
		fmt.Fprintln(w, "\nreal-CLI contract suite: no harness ran")
		return true
	}
	width := 0
	for _, s := range Steps {
		width = max(width, len(s))
	}
	fmt.Fprintf(w, "\nreal-CLI contract suite\n%-*s", width+2, "step")
	for _, h := range hs {
		fmt.Fprintf(w, " %-9s", h)
	}
	fmt.Fprintln(w)
	var notes []string
	for _, s := range Steps {
		fmt.Fprintf(w, "%-*s", width+2, s)
		for _, h := range hs {
			o, ok := t.cells[h][s]
			if !ok {
				o = outcome{"FAIL", "not run (the harness test ended before this step)"}
			}
			fmt.Fprintf(w, " %-9s", o.status)
			if o.status != "PASS" {
				notes = append(notes, fmt.Sprintf("%s / %s: %s %s", h, s, o.status, o.text))
			}
			if o.status == "FAIL" {
				failed = true
			}
		}
		fmt.Fprintln(w)
	}
	for _, n := range notes {
		fmt.Fprintln(w, "  "+oneLine(n, 400))
	}
	return failed
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}

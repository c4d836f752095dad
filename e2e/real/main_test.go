// Package real is the real-CLI contract suite (`make test-real`): the real
// claude, codex and opencode from npm (versions in e2e/realcli/versions.env),
// driven through the real leo binary and daemon (e2e/leoproc) against the
// test model server (internal/testutil/modelserver), each harness in its own
// isolated home. It runs only when LEO_REALCLI_BIN names the CLIs'
// directory, so a plain `make test` passes it by; `make test-real` sets that
// and LEO_REALCLI_REQUIRED=1, under which missing CLIs are a failure.
//
// Every step is a subtest; the suite prints a table harness × step at the
// end (with the version of each CLI that ran), and fails if any step failed
// or was not reached. With LEO_REALCLI_LATEST=1 (make test-real-latest) the
// CLIs are the newest from npm, not the pins.
package real

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/e2e/realcli"
)

// ranContract is set when TestRealCLI runs the contract.
var ranContract atomic.Bool

// RequiredEnv makes missing CLIs a failure instead of a skip.
const RequiredEnv = "LEO_REALCLI_REQUIRED"

func TestMain(m *testing.M) {
	code := m.Run()
	leoproc.Cleanup()
	// The table is TestRealCLI's (or the framework's self-test's): not
	// printed (nor failed) when a -run filter left it out.
	if ranContract.Load() && results.print(os.Stdout) && code == 0 {
		code = 1
	}
	os.Exit(code)
}

// wanted reports whether the suite is asked for: the CLIs' directory is
// given, or they are required.
func wanted() bool {
	return os.Getenv(realcli.BinDirEnv) != "" || os.Getenv(RequiredEnv) != ""
}

// Step is one row of the contract: its name in the table, and what it does
// on the harness's run. Each step is a subtest (see runSteps for what a
// failure does to the steps after it).
type Step struct {
	Name string
	Run  func(*run, *step)
}

// Steps are the contract, in the order they run for each harness. A new
// step is one line here (its method in a file of its own); later steps see
// what earlier ones left (the conversation, the agents).
var Steps = []Step{
	{"versions", (*run).versions},
	{"spawn, ready", (*run).spawnReady},
	{"deliver, reply", (*run).deliverReply},
	{"3 back to back", (*run).backToBack},
	{"streamed reply, 2 at once", (*run).streamedTwoAtOnce},
	{"3-line message", (*run).threeLines},
	{"4000-char message", (*run).longMessage},
	{"conversation id", (*run).conversationID},
	{"kill TUI, resume", (*run).killResume},
	{"restart keeps", (*run).restartKeeps},
	{"daemon SIGKILL, adopt", (*run).daemonKill},
	{"idle suspend, wake", (*run).idleWake},
	{"reset drops", (*run).resetDrops},
	{"never-trusted ws", (*run).neverTrusted},
	{"symlinked ws", (*run).symlinked},
	{"task run, resume", (*run).taskRuns},
	{"task run, limited", (*run).taskRunLimited},
	{"persistent task", (*run).persistentTask},
	{"compact", (*run).compact},
	{"interrupt", (*run).interrupt},
	{"permission prompt", (*run).permissionPrompt},
	{"answer prompts", (*run).answerPrompts},
	{"answer a question", (*run).answerQuestion},
	{"answer always", (*run).answerAlways},
	{"MCP tool call", (*run).mcpListAgents},
	{"MCP in a task run", (*run).mcpTaskRun},
	{"message an agent", (*run).messageAgent},
	{"Unicode redrawn", (*run).unicodeRedrawn},
	{"rate-limited turn", (*run).rateLimited},
	{"usage limit, held", (*run).usageLimitHeld},
	{"slow turn", (*run).slowTurn},
	{"model error", (*run).modelError},
	{"send --reply", (*run).sendReply},
	{"the reply of that turn", (*run).replyOfThatTurn},
	{"typed turn, no sender", (*run).typedTurn},
	{"conversation, resumed", (*run).conversationResumed},
	{"worktree agent", (*run).worktreeAgent},
}

// stepNames are the names of steps, in order.
func stepNames(steps []Step) []string {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.Name
	}
	return names
}

// Cell statuses. UNREACHED is a step the harness's run never got to (an
// earlier step stopped it, its setup failed, its budget was spent): it
// fails the suite like FAIL, since nothing is skipped silently.
const (
	statusPass      = "PASS"
	statusFail      = "FAIL"
	statusSkip      = "SKIP"
	statusUnreached = "UNREACHED"
)

// outcome is one cell of the table.
type outcome struct {
	status string // statusPass, …
	text   string // why (all but PASS)
}

type table struct {
	mu       sync.Mutex
	rows     []string                      // step names, in order (Steps' unless a run said otherwise)
	cells    map[string]map[string]outcome // harness → step → outcome
	versions map[string]string             // harness → what its --version said
	source   string                        // where the CLIs came from: the header's words
}

var results = newTable()

func newTable() *table {
	return &table{cells: map[string]map[string]outcome{}, versions: map[string]string{}}
}

func (t *table) set(h, step, status, text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cells[h] == nil {
		t.cells[h] = map[string]outcome{}
	}
	t.cells[h][step] = outcome{status, text}
}

// plan names the rows (the steps a run will try), in order.
func (t *table) plan(names []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows = names
}

// ran records the version harness h reported (`<cli> --version`).
func (t *table) ran(h, version string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.versions[h] = version
}

// setSource sets the header's words on where the CLIs came from.
func (t *table) setSource(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.source = s
}

// cell is the outcome of step for harness h; a step with none was never
// reached (the harness's test ended early).
func (t *table) cell(h, step string) outcome {
	if o, ok := t.cells[h][step]; ok {
		return o
	}
	return outcome{statusUnreached, "the harness test ended before this step"}
}

// versionRe picks the version number out of a --version line
// ("2.1.332 (Claude Code)", "codex-cli 0.171.0").
var versionRe = regexp.MustCompile(`\d+\.\d+\.\d+[0-9A-Za-z.+-]*`)

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
	rows := t.rows
	if rows == nil {
		rows = stepNames(Steps)
	}
	width := len("version")
	for _, s := range rows {
		width = max(width, len(s))
	}
	col := len(statusUnreached)
	vers := map[string]string{}
	for _, h := range hs {
		v := "?"
		if line, ok := t.versions[h]; ok {
			if v = versionRe.FindString(line); v == "" {
				v = line
			}
		}
		vers[h] = v
		col = max(col, len(h), len(v))
	}
	head := "real-CLI contract suite"
	if t.source != "" {
		head += ": " + t.source
	}
	fmt.Fprintln(w, "\n"+head)
	row := func(first string, cell func(h string) string) {
		line := fmt.Sprintf("%-*s", width+2, first)
		for _, h := range hs {
			line += fmt.Sprintf(" %-*s", col, cell(h))
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	row("step", func(h string) string { return h })
	row("version", func(h string) string { return vers[h] })
	for _, s := range rows {
		row(s, func(h string) string {
			o := t.cell(h, s)
			if o.status == statusFail || o.status == statusUnreached {
				failed = true
			}
			return o.status
		})
	}
	// The notes, by harness; a run of steps with one outcome (not reached
	// for one reason) is one line.
	for _, h := range hs {
		for i := 0; i < len(rows); i++ {
			o := t.cell(h, rows[i])
			if o.status == statusPass {
				continue
			}
			j := i
			for j+1 < len(rows) && t.cell(h, rows[j+1]) == o {
				j++
			}
			what := rows[i]
			if j > i {
				what = fmt.Sprintf("%s … %s (%d steps)", rows[i], rows[j], j-i+1)
			}
			fmt.Fprintln(w, "  "+oneLine(fmt.Sprintf("%s / %s: %s: %s", h, what, o.status, o.text), 400))
			i = j
		}
	}
	return failed
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		// Cut at a character's start, never inside one.
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}

package real

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// selfTestEnv makes TestSuiteSelfTest run: the step runner on fake
// harnesses whose steps fail in each way a real one can, with no CLI and
// no leo. TestStepRunnerReportsEveryStep runs it in a child process (its
// failures are the point) and reads the table the child prints.
const selfTestEnv = "LEO_REALSUITE_SELFTEST"

func TestSuiteSelfTest(t *testing.T) {
	if os.Getenv(selfTestEnv) != "1" {
		t.Skipf("%s is not set: TestStepRunnerReportsEveryStep runs this in a child process", selfTestEnv)
	}
	ranContract.Store(true)
	results.setSource("the runner's self-test")
	pass := func(*run, *step) {}
	steps := func(first func(*run, *step)) []Step {
		return []Step{
			{"first", first},
			{"second", func(*run, *step) {
				panic("a bug in a step")
			}},
			{"third", pass},
		}
	}
	results.plan(stepNames(steps(pass)))
	deadline := time.Now().Add(time.Minute)
	cases := []struct {
		h     string
		setup func(r *run) error
		first func(*run, *step)
	}{
		// The case: the first step fails before any world exists.
		{"mismatch", nil, func(r *run, s *step) { s.Fatalf("claude --version says 9.9.9, the pin is 2.1.197") }},
		{"stopper", nil, func(r *run, s *step) { s.Stopf("claude --version: exit status 127") }},
		{"nosetup", func(*run) error { return errors.New("leo service: not ready within 1m") }, pass},
		{"fatalsetup", func(r *run) error { r.t.Fatal("modelserver: listen: address in use"); return nil }, pass},
	}
	for _, c := range cases {
		t.Run(c.h, func(t *testing.T) {
			r := &run{t: t, h: c.h, deadline: deadline}
			var setup func() error
			if c.setup != nil {
				setup = func() error { return c.setup(r) }
			}
			r.runSteps(setup, steps(c.first))
		})
	}
}

// TestStepRunnerReportsEveryStep: whatever a step does — fail with a text,
// stop the run, panic, or fail before setup made a world — the suite ends
// with its table, every step of every harness in it, and no crash.
func TestStepRunnerReportsEveryStep(t *testing.T) {
	if os.Getenv(selfTestEnv) != "" {
		t.Skip("in the child")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSuiteSelfTest$", "-test.count", "1")
	cmd.Env = append(os.Environ(), selfTestEnv+"=1")
	out, err := cmd.CombinedOutput()
	text := string(out)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("child: %v (want exit status 1: its steps fail):\n%s", err, text)
	}
	if strings.Contains(text, "\ngoroutine ") || strings.Contains(text, "[recovered, repanicked]") {
		t.Fatalf("the child crashed:\n%s", text)
	}
	rows := map[string]string{
		"step":    `step\s+fatalsetup\s+mismatch\s+nosetup\s+stopper$`,
		"version": `version\s+\?\s+\?\s+\?\s+\?`,
		"first":   `first\s+UNREACHED\s+FAIL\s+UNREACHED\s+FAIL\b`,
		"second":  `second\s+UNREACHED\s+FAIL\s+UNREACHED\s+UNREACHED\b`,
		"third":   `third\s+UNREACHED\s+PASS\s+UNREACHED\s+UNREACHED\b`,
	}
	for name, re := range rows {
		if !regexp.MustCompile(`(?m)^` + re).MatchString(text) {
			t.Errorf("row %s: want /%s/ in:\n%s", name, re, text)
		}
	}
	for _, want := range []string{
		"real-CLI contract suite: the runner's self-test",
		"mismatch / first: FAIL: claude --version says 9.9.9, the pin is 2.1.197",
		"mismatch / second: FAIL: panic: a bug in a step",
		`stopper / second … third (2 steps): UNREACHED: "first" stopped the run: claude --version: exit status 127`,
		"nosetup / first … third (3 steps): UNREACHED: setup: leo service: not ready within 1m",
		"fatalsetup / first … third (3 steps): UNREACHED: the harness's setup failed (see the test log)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the table lacks %q:\n%s", want, text)
		}
	}
}

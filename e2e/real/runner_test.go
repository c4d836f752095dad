package real

import (
	"context"
	"fmt"
	"runtime/debug"
	"testing"
	"time"
)

// step is a subtest whose failure text also goes into the table.
type step struct {
	*testing.T
	r    *run
	ctx  context.Context
	msg  string // why it failed (Fatalf, Stopf)
	stop bool   // Stopf: the later steps cannot run
}

func (s *step) Fatalf(format string, args ...any) {
	s.Helper()
	s.msg = fmt.Sprintf(format, args...)
	s.T.Fatal(s.msg)
}

// Stopf fails the step, and the harness's later steps are not reached: for
// a step without which none of them can run (a CLI that does not start).
func (s *step) Stopf(format string, args ...any) {
	s.Helper()
	s.stop = true
	s.Fatalf(format, args...)
}

// wait is a step's deadline for one wait: at most d, never past the
// harness's budget.
func (s *step) wait(d time.Duration) (context.Context, context.CancelFunc) {
	dl := time.Now().Add(d)
	if dl.After(s.r.deadline) {
		dl = s.r.deadline
	}
	return context.WithDeadline(s.ctx, dl)
}

// runSteps runs setup on the harness's own test (so what it starts lives
// through every step), then each step in order as a subtest, and records
// every step's outcome in the table, whatever happens:
//
//   - a step that fails (Fatalf, a failed check, a panic) is FAIL with its
//     text, and the next step runs: most failures leave the harness usable,
//     and the later steps say what else holds;
//   - a step that stops the run (Stopf), a setup that fails, the spent
//     budget, or a failure of the suite itself between steps leave every
//     later step UNREACHED, with the reason.
//
// It never assumes setup made a world: a step can fail before there is one.
func (r *run) runSteps(setup func() error, steps []Step) {
	next := 0 // steps[next:] have no outcome yet
	// What the steps not reached are told if this returns early. The
	// harness's test can also end inside setup (a t.Fatal of a helper):
	// the deferred call below still runs then.
	reason := "the harness's setup failed (see the test log)"
	defer func() {
		if p := recover(); p != nil {
			reason = fmt.Sprintf("the suite panicked: %v", p)
			r.t.Errorf("%s\n%s", reason, debug.Stack())
		}
		for _, s := range steps[next:] {
			results.set(r.h, s.Name, statusUnreached, reason)
		}
	}()
	if setup != nil {
		if err := setup(); err != nil {
			reason = "setup: " + err.Error()
			r.t.Error(reason)
			return
		}
	}
	reason = "the harness's test ended before it (see the test log)"
	for next < len(steps) {
		if time.Now().After(r.deadline) {
			reason = "the harness's time budget (" + budget.String() + ") was spent"
			r.t.Errorf("%s: %d steps not run, from %q", reason, len(steps)-next, steps[next].Name)
			return
		}
		sd := steps[next]
		st := r.runStep(sd)
		next++
		if st.stop {
			reason = fmt.Sprintf("%q stopped the run: %s", sd.Name, st.msg)
			return
		}
	}
}

// runStep runs one step as a subtest and records its outcome. A panic in
// the step fails that step (with the panic in its text), not the suite.
func (r *run) runStep(sd Step) *step {
	st := &step{r: r, ctx: context.Background()}
	ok := r.t.Run(sd.Name, func(t *testing.T) {
		st.T = t
		defer func() {
			if p := recover(); p != nil {
				t.Log(string(debug.Stack()))
				st.Fatalf("panic: %v (stack above)", p)
			}
		}()
		sd.Run(r, st)
	})
	switch {
	case st.T == nil: // a -run filter left it out: Run did not call it
		results.set(r.h, sd.Name, statusSkip, "left out by -run")
	case ok && st.Skipped():
		results.set(r.h, sd.Name, statusSkip, "skipped (see the test log)")
	case ok:
		results.set(r.h, sd.Name, statusPass, "")
	case st.msg != "":
		results.set(r.h, sd.Name, statusFail, st.msg)
	default:
		results.set(r.h, sd.Name, statusFail, "failed (see the test log)")
	}
	if !ok && st.T != nil {
		r.logPanes(sd.Name)
	}
	return st
}

// logPanes logs what every agent pane of the world shows, after a failed
// step; nothing when there is no world yet.
func (r *run) logPanes(stepName string) {
	if r.w == nil {
		return
	}
	panes, err := r.w.AgentPanes()
	if err != nil {
		r.t.Logf("after %q: list panes: %v", stepName, err)
		return
	}
	for sess, ps := range panes {
		out, err := r.w.Tmux("capture-pane", "-p", "-J", "-t", ps[0].PaneID)
		if err != nil {
			out = err.Error()
		}
		r.t.Logf("after %q: pane of %s (pid %d):\n%s", stepName, sess, ps[0].PID, lastLines(out, 30))
	}
}

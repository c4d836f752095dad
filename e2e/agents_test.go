package e2e

import (
	"context"
	"maps"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// firstSession spawns h and returns its conversation id: pinned at spawn
// for claude, discovered after the first delivered turn for the others.
func (w world) firstSession(h string) string {
	w.TB.Helper()
	ctx := context.Background()
	if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
		w.TB.Fatalf("spawn %s: %v", h, err)
	}
	id := w.send(h, "hello "+h+"\nsecond line")
	w.waitDelivered(h, id)
	if got := w.Submitted(); !slices.Contains(got, "hello "+h+"\nsecond line") {
		w.TB.Fatalf("harness received %q", got)
	}
	testutil.WaitFor(w.TB, 20*time.Second, func() bool {
		l, err := w.Client.Logs(ctx, h, 50)
		return err == nil && strings.Contains(l.Text, "echo: hello "+h)
	}, "echo in the pane")
	var sid string
	testutil.WaitFor(w.TB, 30*time.Second, func() bool {
		sid = w.get(h).SessionID
		return sid != ""
	}, h+" conversation id")
	if testutil.PinsID(h) && !testutil.HasSeq(w.Launches(h)[0], testutil.PinArgs(h, sid)) {
		w.TB.Fatalf("%s first launch %q does not pin %s", h, w.Launches(h)[0], sid)
	}
	return sid
}

// killTUIs SIGKILLs the TUI of each harness's agent (named after it).
func (w world) killTUIs() {
	w.TB.Helper()
	sessions := w.sessions()
	for _, h := range leoproc.Harnesses {
		pid := sessions["leo-"+h]
		if pid <= 0 {
			// kill(0) would signal this test's own process group.
			w.TB.Fatalf("no pane pid for leo-%s in %v", h, sessions)
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			w.TB.Fatal(err)
		}
	}
}

// For each harness (one daemon, one agent of each, all at once): deliver;
// a killed TUI is restarted and resumes the same conversation; a daemon
// killed with SIGKILL is replaced by one that adopts every live agent
// without a relaunch; idle suspend parks them and a message wakes each
// with resume.
func TestAgentLifecycleThroughDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfig(nil)
	d1 := w.startDaemon()
	ctx := context.Background()
	sid := map[string]string{}
	for _, h := range leoproc.Harnesses {
		sid[h] = w.firstSession(h)
	}

	// Kill every TUI: each is restarted with backoff and resumed.
	w.killTUIs()
	for _, h := range leoproc.Harnesses {
		testutil.WaitFor(t, 30*time.Second, func() bool {
			a := w.get(h)
			return a.Restarts == 1 && a.State == api.StateRunning
		}, h+" restart after the kill")
		a := w.get(h)
		if a.LastExit == nil || a.LastExit.Signal != "SIGKILL" || a.SessionID != sid[h] {
			t.Fatalf("%s after restart: %+v (last exit %+v)", h, a, a.LastExit)
		}
		l := w.Launches(h)
		if len(l) != 2 || !testutil.HasSeq(l[1], resumeArgs(h, sid[h])) {
			t.Fatalf("%s launches %q: the restart must resume %s", h, l, sid[h])
		}
	}

	// SIGKILL the daemon; the next one adopts all without relaunching.
	before := w.sessions()
	d1.Kill(syscall.SIGKILL)
	w.startDaemon()
	if after := w.sessions(); !maps.Equal(before, after) || len(after) != len(leoproc.Harnesses) {
		t.Fatalf("sessions %v after the new daemon, want %v (no relaunch)", after, before)
	}
	for _, h := range leoproc.Harnesses {
		if n := len(w.Launches(h)); n != 2 {
			t.Fatalf("%s: %d launches after adoption, want 2", h, n)
		}
		if a := w.get(h); a.State != api.StateRunning || a.SessionID != sid[h] {
			t.Fatalf("adopted agent %+v", a)
		}
		w.waitDelivered(h, w.send(h, "to the adopted agent"))
	}

	// Idle suspend (enabled by a config reload), then wake on message.
	w.WriteConfigExtra("    idle_suspend_after: 2s\n", nil)
	if _, err := w.Client.ReloadConfig(ctx); err != nil {
		t.Fatal(err)
	}
	for _, h := range leoproc.Harnesses {
		testutil.WaitFor(t, 30*time.Second, func() bool {
			a := w.get(h)
			return a.State == api.StateStopped && a.WakeOnMessage
		}, h+" idle suspend")
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(w.sessions()) == 0 }, "suspended sessions gone")
	ids := map[string]string{}
	for _, h := range leoproc.Harnesses {
		res, err := w.Client.Send(ctx, h, "wake up")
		if err != nil || !res.Woke {
			t.Fatalf("send to parked %s: %+v %v", h, res, err)
		}
		ids[h] = res.ID
	}
	for _, h := range leoproc.Harnesses {
		w.waitDelivered(h, ids[h])
		l := w.Launches(h)
		if len(l) != 3 || !testutil.HasSeq(l[2], resumeArgs(h, sid[h])) {
			t.Fatalf("%s launches %q: the wake must resume %s", h, l, sid[h])
		}
	}
}

// An exit right after a resume launch drops the stored id: the next launch
// is fresh (claude: a new pinned id), and there is no crash loop.
func TestQuickExitOnResumeThroughDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.WriteConfig(map[string]string{"FAKE_EXIT_ON_RESUME": "7"})
	w.startDaemon()
	sid := map[string]string{}
	for _, h := range leoproc.Harnesses {
		sid[h] = w.firstSession(h)
	}
	w.killTUIs()
	for _, h := range leoproc.Harnesses {
		// kill → (5 s) resume exits 7 → (10 s) fresh.
		testutil.WaitFor(t, 60*time.Second, func() bool {
			return len(w.Launches(h)) >= 3 && w.get(h).State == api.StateRunning
		}, h+" fresh launch")
		l := w.Launches(h)
		if !testutil.HasSeq(l[1], resumeArgs(h, sid[h])) || testutil.HasSeq(l[2], resumeArgs(h, sid[h])) {
			t.Fatalf("%s launches %q: want a resume of %s then a fresh launch", h, l, sid[h])
		}
		a := w.get(h)
		if a.LastExit == nil || a.LastExit.Status != 7 {
			t.Fatalf("%s last exit %+v, want 7", h, a.LastExit)
		}
		switch {
		case testutil.PinsID(h) && (a.SessionID == "" || a.SessionID == sid[h] || !testutil.HasSeq(l[2], testutil.PinArgs(h, a.SessionID))):
			t.Fatalf("%s after the poisoned resume: id %q, launch %q", h, a.SessionID, l[2])
		case !testutil.PinsID(h) && a.SessionID != "":
			t.Fatalf("%s kept id %q after the poisoned resume", h, a.SessionID)
		}
		if n := len(w.Launches(h)); n != 3 {
			t.Fatalf("%s: %d launches, want 3 (no crash loop)", h, n)
		}
	}
}

package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

var harnesses = []string{"claude", "codex", "opencode"}

// firstSession spawns h and returns its conversation id: pinned at spawn
// for claude, discovered after the first delivered turn for the others.
func (w *world) firstSession(h string) string {
	w.t.Helper()
	ctx := context.Background()
	if _, err := w.client.Spawn(ctx, api.SpawnRequest{Template: h}); err != nil {
		w.t.Fatalf("spawn %s: %v", h, err)
	}
	id := w.send(h, "hello "+h+"\nsecond line")
	w.waitDelivered(h, id)
	if got := w.submitted(); !contains(got, "hello "+h+"\nsecond line") {
		w.t.Fatalf("harness received %q", got)
	}
	waitFor(w.t, "echo in the pane", 20*time.Second, func() bool {
		l, err := w.client.Logs(ctx, h, 50)
		return err == nil && strings.Contains(l.Text, "echo: hello "+h)
	})
	var sid string
	waitFor(w.t, h+" conversation id", 30*time.Second, func() bool {
		sid = w.get(h).SessionID
		return sid != ""
	})
	if h == "claude" && !hasSeq(w.launches(h)[0], []string{"--session-id", sid}) {
		w.t.Fatalf("claude first launch %q lacks --session-id %s", w.launches(h)[0], sid)
	}
	return sid
}

// For each harness (one daemon, one agent of each, all at once): deliver;
// a killed TUI is restarted and resumes the same conversation; a daemon
// killed with SIGKILL is replaced by one that adopts every live agent
// without a relaunch; idle suspend parks them and a message wakes each
// with resume.
func TestAgentLifecycleThroughDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.writeConfig("", nil)
	d1 := w.startDaemon()
	ctx := context.Background()
	sid := map[string]string{}
	for _, h := range harnesses {
		sid[h] = w.firstSession(h)
	}

	// Kill every TUI: each is restarted with backoff and resumed.
	for _, h := range harnesses {
		if err := syscall.Kill(w.sessions()["leo-"+h], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range harnesses {
		waitFor(t, h+" restart after the kill", 30*time.Second, func() bool {
			a := w.get(h)
			return a.Restarts == 1 && a.State == api.StateRunning
		})
		a := w.get(h)
		if a.LastExit == nil || a.LastExit.Signal != "SIGKILL" || a.SessionID != sid[h] {
			t.Fatalf("%s after restart: %+v (last exit %+v)", h, a, a.LastExit)
		}
		l := w.launches(h)
		if len(l) != 2 || !hasSeq(l[1], resumeArgs(h, sid[h])) {
			t.Fatalf("%s launches %q: the restart must resume %s", h, l, sid[h])
		}
	}

	// SIGKILL the daemon; the next one adopts all without relaunching.
	before := w.sessions()
	d1.kill(syscall.SIGKILL)
	w.startDaemon()
	if after := w.sessions(); !sameSessions(before, after) || len(after) != 3 {
		t.Fatalf("sessions %v after the new daemon, want %v (no relaunch)", after, before)
	}
	for _, h := range harnesses {
		if n := len(w.launches(h)); n != 2 {
			t.Fatalf("%s: %d launches after adoption, want 2", h, n)
		}
		if a := w.get(h); a.State != api.StateRunning || a.SessionID != sid[h] {
			t.Fatalf("adopted agent %+v", a)
		}
		w.waitDelivered(h, w.send(h, "to the adopted agent"))
	}

	// Idle suspend (enabled by a config reload), then wake on message.
	w.writeConfig("    idle_suspend_after: 2s\n", nil)
	if _, err := w.client.ReloadConfig(ctx); err != nil {
		t.Fatal(err)
	}
	for _, h := range harnesses {
		waitFor(t, h+" idle suspend", 30*time.Second, func() bool {
			a := w.get(h)
			return a.State == api.StateStopped && a.WakeOnMessage
		})
	}
	waitFor(t, "suspended sessions gone", 10*time.Second, func() bool { return len(w.sessions()) == 0 })
	ids := map[string]string{}
	for _, h := range harnesses {
		res, err := w.client.Send(ctx, h, "wake up")
		if err != nil || !res.Woke {
			t.Fatalf("send to parked %s: %+v %v", h, res, err)
		}
		ids[h] = res.ID
	}
	for _, h := range harnesses {
		w.waitDelivered(h, ids[h])
		l := w.launches(h)
		if len(l) != 3 || !hasSeq(l[2], resumeArgs(h, sid[h])) {
			t.Fatalf("%s launches %q: the wake must resume %s", h, l, sid[h])
		}
	}
}

func sameSessions(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// An exit right after a resume launch drops the stored id: the next launch
// is fresh (claude: a new pinned id), and there is no crash loop.
func TestQuickExitOnResumeThroughDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.writeConfig("", map[string]string{"FAKE_EXIT_ON_RESUME": "7"})
	w.startDaemon()
	sid := map[string]string{}
	for _, h := range harnesses {
		sid[h] = w.firstSession(h)
	}
	for _, h := range harnesses {
		if err := syscall.Kill(w.sessions()["leo-"+h], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range harnesses {
		// kill → (5 s) resume exits 7 → (10 s) fresh.
		waitFor(t, h+" fresh launch", 60*time.Second, func() bool {
			return len(w.launches(h)) >= 3 && w.get(h).State == api.StateRunning
		})
		l := w.launches(h)
		if !hasSeq(l[1], resumeArgs(h, sid[h])) || hasSeq(l[2], resumeArgs(h, sid[h])) {
			t.Fatalf("%s launches %q: want a resume of %s then a fresh launch", h, l, sid[h])
		}
		a := w.get(h)
		if a.LastExit == nil || a.LastExit.Status != 7 {
			t.Fatalf("%s last exit %+v, want 7", h, a.LastExit)
		}
		switch {
		case h == "claude" && (a.SessionID == "" || a.SessionID == sid[h] || !hasSeq(l[2], []string{"--session-id", a.SessionID})):
			t.Fatalf("claude after the poisoned resume: id %q, launch %q", a.SessionID, l[2])
		case h != "claude" && a.SessionID != "":
			t.Fatalf("%s kept id %q after the poisoned resume", h, a.SessionID)
		}
		if n := len(w.launches(h)); n != 3 {
			t.Fatalf("%s: %d launches, want 3 (no crash loop)", h, n)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

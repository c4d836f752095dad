package doctor

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// fixLines runs doctor --fix and returns its repairs; every repair must
// be one line.
func fixLines(t *testing.T, w *world) ([]Repair, Result) {
	t.Helper()
	res := Run(context.Background(), w.env, true)
	for _, r := range res.Fixed {
		if strings.ContainsAny(r.Message, "\n\r") || r.Message == "" {
			t.Errorf("repair %q is not one line: %q", r.Name, r.Message)
		}
	}
	return res.Fixed, res
}

func onlyRepair(t *testing.T, reps []Repair, name string) []Repair {
	t.Helper()
	var out []Repair
	for _, r := range reps {
		if r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

func wantRepairs(t *testing.T, got []Repair, want ...string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("repairs %+v, want %d: %q", got, len(want), want)
	}
	for i, w := range want {
		ok := !strings.HasPrefix(w, "!")
		w = strings.TrimPrefix(w, "!")
		if got[i].OK != ok || !strings.Contains(got[i].Message, w) {
			t.Errorf("repair %d = %+v, want ok=%v containing %q", i, got[i], ok, w)
		}
	}
}

func exists2(t *testing.T, p string) bool {
	t.Helper()
	_, err := os.Lstat(p)
	return err == nil
}

func TestFixStaleSocket(t *testing.T) {
	w := newWorld(t, "linux")
	w.staleSocket()
	reps, res := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameSocket), "removed the stale socket "+w.h.SocketPath())
	if exists2(t, w.h.SocketPath()) {
		t.Fatal("the stale socket is still there")
	}
	// Repaired, and still no daemon: that is the check's failure now.
	if c := mustCheck(t, res.Checks, NameSocket); c.Status != Fail || c.Message != "daemon not running (no socket, no lock holder)" {
		t.Errorf("after the repair: %+v", c)
	}
}

func TestFixKeepsALiveDaemonsSocket(t *testing.T) {
	w := newWorld(t, "linux")
	w.staleSocket()
	w.holdLock()
	reps, _ := fixLines(t, w)
	if r := onlyRepair(t, reps, NameSocket); len(r) != 0 {
		t.Fatalf("repaired a live daemon's socket: %+v", r)
	}
	if !exists2(t, w.h.SocketPath()) {
		t.Fatal("removed a live daemon's socket")
	}
}

func TestFixLeavesANonSocketAlone(t *testing.T) {
	w := newWorld(t, "linux")
	w.write(w.h.SocketPath(), "data", 0o600)
	reps, _ := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameSocket), "!it is not a socket")
	if !exists2(t, w.h.SocketPath()) {
		t.Fatal("removed a regular file")
	}
}

// TestFixNeverDeletesAnInvalidMarker: reported, one line, left as is.
func TestFixNeverDeletesAnInvalidMarker(t *testing.T) {
	for _, goos := range []string{"darwin", "linux"} {
		t.Run(goos, func(t *testing.T) {
			w := newWorld(t, goos)
			w.write(w.h.MarkerPath(), `{"version":2}`, 0o600)
			w.reread()
			reps, res := fixLines(t, w)
			wantRepairs(t, onlyRepair(t, reps, NameMarker), "left the invalid marker "+w.h.MarkerPath()+" in place (leo never deletes it)")
			if data, err := os.ReadFile(w.h.MarkerPath()); err != nil || string(data) != `{"version":2}` {
				t.Fatalf("marker after --fix: %q, %v", data, err)
			}
			if c := mustCheck(t, res.Checks, NameMarker); c.Status != Warn {
				t.Errorf("after --fix: %+v", c)
			}
		})
	}
}

func TestFixTwoJobsBootsOutTheCLIJob(t *testing.T) {
	w := newWorld(t, "darwin")
	w.writeMarker(appLabel)
	w.register(CLILabel)
	w.register(appLabel)
	w.writePlist(w.env.cliPlist(), w.cliBinary())
	reps, res := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameJobs),
		"booted out the CLI job com.blackpaw.leo, which ran beside the marker's studio.blackpaw.leo.daemon (launchctl bootout gui/501/com.blackpaw.leo)",
		"moved "+w.env.cliPlist()+" to "+w.env.backupPath())
	if w.registered(CLILabel) || !w.registered(appLabel) {
		t.Fatalf("registered after: cli %v, app %v", w.registered(CLILabel), w.registered(appLabel))
	}
	if slices.Contains(w.calls(), "bootout gui/501/"+appLabel) {
		t.Fatalf("booted out the marker's job: %q", w.calls())
	}
	if exists2(t, w.env.cliPlist()) || !exists2(t, w.env.backupPath()) {
		t.Fatal("the CLI plist was not moved aside")
	}
	if c := mustCheck(t, res.Checks, NameJobs); c.Status != OK {
		t.Errorf("after: %+v", c)
	}
	if c := mustCheck(t, res.Checks, NameBackup); c.Status != OK {
		t.Errorf("after: %+v", c)
	}
}

func TestFixTwoJobsBootoutFails(t *testing.T) {
	w := newWorld(t, "darwin")
	w.writeMarker(appLabel)
	w.register(CLILabel)
	w.register(appLabel)
	w.writePlist(w.env.cliPlist(), w.cliBinary())
	w.failVerb("bootout")
	reps, res := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameJobs), "!could not boot out the CLI job com.blackpaw.leo: ")
	if !exists2(t, w.env.cliPlist()) {
		t.Fatal("moved the plist of a job still registered")
	}
	if c := mustCheck(t, res.Checks, NameJobs); c.Status != Fail {
		t.Errorf("after: %+v", c)
	}
}

// releasing sets up an interrupted --to-cli: the marker moved aside, the
// marker's job booted out.
func releasing(t *testing.T) *world {
	w := newWorld(t, "darwin")
	w.writeMarker(appLabel)
	if err := os.Rename(w.h.MarkerPath(), w.env.releasingPath()); err != nil {
		t.Fatal(err)
	}
	w.reread()
	return w
}

func TestFixReleasingFinishes(t *testing.T) {
	w := releasing(t)
	w.writePlist(w.env.backupPath(), w.cliBinary())
	reps, res := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameReleasing),
		"restored "+w.env.cliPlist()+" from "+w.env.backupPath(),
		"bootstrapped com.blackpaw.leo (launchctl bootstrap gui/501 "+w.env.cliPlist()+")",
		"finished the interrupted `leo service handover --to-cli`: the CLI job's daemon is ready; removed "+w.env.releasingPath())
	if exists2(t, w.env.releasingPath()) || exists2(t, w.h.MarkerPath()) || !w.registered(CLILabel) {
		t.Fatal("the release is not finished")
	}
	if _, ok := findCheck(t, res.Checks, NameReleasing); ok {
		t.Error("the release check still reports")
	}
}

func TestFixReleasingAfterTheBootstrap(t *testing.T) {
	w := releasing(t)
	w.writePlist(w.env.cliPlist(), w.cliBinary())
	w.register(CLILabel)
	reps, _ := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameReleasing), "finished the interrupted")
	for _, c := range w.calls() {
		if strings.HasPrefix(c, "bootstrap") {
			t.Fatalf("bootstrapped a loaded job: %q", w.calls())
		}
	}
}

// TestFixReleasingWaitsUntilReady: a daemon that does not get ready keeps
// the .releasing file; the next --fix, with the CLI job's daemon holding
// the lock, waits again and finishes.
func TestFixReleasingWaitsUntilReady(t *testing.T) {
	w := releasing(t)
	w.writePlist(w.env.backupPath(), w.cliBinary())
	w.env.WaitReady = func(context.Context) error { return errors.New("not ready within 30s: daemon_down") }
	reps, _ := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameReleasing),
		"restored ", "bootstrapped ",
		"!the CLI job com.blackpaw.leo is registered, but its daemon is not ready (not ready within 30s: daemon_down); left "+w.env.releasingPath())
	if !exists2(t, w.env.releasingPath()) || !w.registered(CLILabel) {
		t.Fatal("gave up the release")
	}
	w.holdLock() // the CLI job's daemon, started late
	ready := 0
	w.env.WaitReady = func(context.Context) error { ready++; return nil }
	reps, _ = fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameReleasing), "finished the interrupted")
	if ready != 1 || exists2(t, w.env.releasingPath()) {
		t.Fatalf("ready waits %d, releasing left %v", ready, exists2(t, w.env.releasingPath()))
	}
}

func TestFixReleasingRollsBackWithoutAUsableCLIJob(t *testing.T) {
	w := releasing(t)
	w.writePlist(w.env.backupPath(), "/nonexistent/leo")
	reps, _ := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameReleasing),
		"rolled back the interrupted release (the CLI job cannot be restored: "+w.env.backupPath()+" runs /nonexistent/leo, which is not an executable file): moved "+w.env.releasingPath()+" back to "+w.h.MarkerPath())
	if !exists2(t, w.h.MarkerPath()) || exists2(t, w.env.releasingPath()) {
		t.Fatal("the marker is not back")
	}
	if !exists2(t, w.env.backupPath()) {
		t.Fatal("the backup moved")
	}
}

func TestFixReleasingRollsBackWhenBootstrapFails(t *testing.T) {
	w := releasing(t)
	w.writePlist(w.env.backupPath(), w.cliBinary())
	w.failVerb("bootstrap")
	reps, _ := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameReleasing),
		"restored "+w.env.cliPlist(),
		"rolled back the interrupted release (launchd did not take the CLI job: ")
	if !exists2(t, w.h.MarkerPath()) || exists2(t, w.env.releasingPath()) || !exists2(t, w.env.backupPath()) || exists2(t, w.env.cliPlist()) {
		t.Fatal("not rolled back to marker + backup")
	}
	if !slices.Contains(w.calls(), "bootout gui/501/"+CLILabel) {
		t.Errorf("no best-effort bootout after the failed bootstrap: %q", w.calls())
	}
}

func TestFixReleasingLeavesItWithAMarker(t *testing.T) {
	w := releasing(t)
	w.writeMarker(appLabel)
	reps, _ := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameReleasing), "!left "+w.env.releasingPath()+" alone: a marker exists again (valid)")
	if !exists2(t, w.env.releasingPath()) {
		t.Fatal("removed")
	}
}

func TestFixReleasingWaitsForTheDaemon(t *testing.T) {
	w := releasing(t)
	w.writePlist(w.env.backupPath(), w.cliBinary())
	w.holdLock()
	reps, _ := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameReleasing), "!a daemon (pid ")
	contains(t, "repair", reps[0].Message, "and the CLI job does not run it")
	if !exists2(t, w.env.releasingPath()) || !exists2(t, w.env.backupPath()) || len(w.calls()) > 2 {
		t.Fatalf("acted beside a running daemon: %q", w.calls())
	}
}

// recovery: --to-app succeeded, the app never wrote its marker.
func recovery(t *testing.T) *world {
	w := newWorld(t, "darwin")
	w.writePlist(w.env.backupPath(), w.cliBinary())
	return w
}

func TestFixBackupRestoresTheCLIJob(t *testing.T) {
	w := recovery(t)
	w.env.Label = appLabel
	reps, res := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameBackup),
		"restored the CLI job com.blackpaw.leo from "+w.env.backupPath()+" (launchctl bootstrap gui/501 "+w.env.cliPlist()+")")
	if !w.registered(CLILabel) || exists2(t, w.env.backupPath()) || !exists2(t, w.env.cliPlist()) {
		t.Fatal("not restored")
	}
	if !slices.Contains(w.calls(), "print gui/501/"+appLabel) {
		t.Errorf("did not look for the app's job: %q", w.calls())
	}
	if _, ok := findCheck(t, res.Checks, NameBackup); ok {
		t.Error("the backup check still reports")
	}
}

func TestFixBackupRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		setup func(w *world)
		line  string
	}{
		"no label":         {func(w *world) {}, "leo doctor --fix --label <the app's launchd label>"},
		"bad label":        {func(w *world) { w.env.Label = "com.blackpaw.leo" }, "--label: "},
		"app job loaded":   {func(w *world) { w.register(appLabel) }, "the app's job studio.blackpaw.leo.daemon is still registered; the app must unregister it first (launchctl bootout gui/501/studio.blackpaw.leo.daemon)"},
		"daemon running":   {func(w *world) { w.holdLock() }, "a daemon (pid "},
		"launchctl fails":  {func(w *world) { w.failVerb("print") }, "launchctl print gui/501/studio.blackpaw.leo.daemon"},
		"backup unusable":  {func(w *world) { w.writePlist(w.env.backupPath(), "/nonexistent/leo") }, "which is not an executable file"},
		"backup not plist": {func(w *world) { w.write(w.env.backupPath(), "not a plist", 0o644) }, "is not a plist"},
	} {
		t.Run(name, func(t *testing.T) {
			w := recovery(t)
			if name != "no label" {
				w.env.Label = appLabel
			}
			tc.setup(w)
			before, _ := os.ReadFile(w.env.backupPath())
			reps, _ := fixLines(t, w)
			wantRepairs(t, onlyRepair(t, reps, NameBackup), "!"+tc.line)
			after, _ := os.ReadFile(w.env.backupPath())
			if string(before) != string(after) || exists2(t, w.env.cliPlist()) || w.registered(CLILabel) {
				t.Fatal("acted although it refused")
			}
		})
	}
}

func TestFixBackupRollsBackWhenBootstrapFails(t *testing.T) {
	w := recovery(t)
	w.env.Label = appLabel
	w.failVerb("bootstrap")
	reps, _ := fixLines(t, w)
	wantRepairs(t, onlyRepair(t, reps, NameBackup), "!launchctl bootstrap failed (")
	contains(t, "repair", reps[len(reps)-1].Message, "rolled back: "+w.env.cliPlist()+" is at "+w.env.backupPath()+" again")
	if !exists2(t, w.env.backupPath()) || exists2(t, w.env.cliPlist()) {
		t.Fatal("not rolled back")
	}
	if !slices.Contains(w.calls(), "bootout gui/501/"+CLILabel) {
		t.Errorf("no best-effort bootout: %q", w.calls())
	}
}

// TestFixBackupNeverWithAnInvalidMarker: an invalid marker is never taken
// for an absent one.
func TestFixBackupNeverWithAnInvalidMarker(t *testing.T) {
	w := recovery(t)
	w.env.Label = appLabel
	w.write(w.h.MarkerPath(), "{", 0o600)
	w.reread()
	reps, _ := fixLines(t, w)
	if r := onlyRepair(t, reps, NameBackup); len(r) != 0 {
		t.Fatalf("recovery with an invalid marker: %+v", r)
	}
	if !exists2(t, w.env.backupPath()) || len(w.calls()) > 1 {
		t.Fatalf("acted: %q", w.calls())
	}
}

// TestFixOnLinuxRunsNoLaunchctl: the launchd repairs are macOS's.
func TestFixOnLinuxRunsNoLaunchctl(t *testing.T) {
	w := newWorld(t, "linux")
	w.writePlist(w.env.backupPath(), w.cliBinary())
	w.write(w.env.releasingPath(), "{}", 0o600)
	w.env.Label = appLabel
	reps, res := fixLines(t, w)
	if len(reps) != 0 || len(w.calls()) != 0 {
		t.Fatalf("repairs %+v, calls %q", reps, w.calls())
	}
	c := mustCheck(t, res.Checks, NameReleasing)
	contains(t, "fix", c.Fix, "handover is macOS-only")
}

// TestFixBackupThroughTheHandoverSeam: with RestoreCLIJob set (the
// handover package's recovery path), doctor calls it with the label and
// reports its line; a failure is a "not fixed" line.
func TestFixBackupThroughTheHandoverSeam(t *testing.T) {
	for _, fail := range []bool{false, true} {
		w := recovery(t)
		w.env.Label = appLabel
		var got []string
		w.env.RestoreCLIJob = func(_ context.Context, label string) (string, error) {
			got = append(got, label)
			if fail {
				return "", errors.New("bootstrap_failed: launchctl bootstrap: rolled back")
			}
			return "restored the CLI job (handover)", nil
		}
		reps, _ := fixLines(t, w)
		if len(got) != 1 || got[0] != appLabel {
			t.Fatalf("RestoreCLIJob calls %q", got)
		}
		if fail {
			wantRepairs(t, onlyRepair(t, reps, NameBackup), "!did not restore the CLI job: bootstrap_failed")
		} else {
			wantRepairs(t, onlyRepair(t, reps, NameBackup), "restored the CLI job (handover)")
		}
		for _, c := range w.calls() {
			if !strings.HasPrefix(c, "print ") {
				t.Errorf("doctor changed launchd itself: %q", w.calls())
			}
		}
	}
}

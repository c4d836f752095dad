package handover

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
)

// The CLI job runs a daemon: env recorded, drained, booted out, plist
// moved, lock free; the result is the spec's object, field for field.
func TestToAppHandsOverARunningCLIDaemon(t *testing.T) {
	w := newWorld(t)
	w.writePlist(w.plist(), map[string]string{"PATH": "/opt/homebrew/bin:/usr/bin:/bin", "LEO_HOME": "/x"})
	w.runningDaemon("com.blackpaw.leo")
	res, err := Run(t.Context(), w.opts(), toApp)
	if err != nil {
		t.Fatal(err)
	}
	obj := resultJSON(t, res)
	if got := keys(obj); !slices.Equal(got, []string{"env", "ok", "plist_backup", "previous_label"}) {
		t.Fatalf("result keys %v: %v", got, obj)
	}
	if obj["ok"] != true || obj["previous_label"] != "com.blackpaw.leo" || obj["plist_backup"] != w.backup() {
		t.Fatalf("result %v", obj)
	}
	env := obj["env"].(map[string]any)
	if len(env) != 2 || env["PATH"] != "/opt/homebrew/bin:/usr/bin:/bin" || env["LEO_HOME"] != "/x" {
		t.Fatalf("env %v", env)
	}
	wantCalls(t, w, "print gui/501/com.blackpaw.leo", "bootout gui/501/com.blackpaw.leo")
	if got := w.daemon.Calls(); !slices.Contains(got, "drain") || slices.Contains(got, "resume") {
		t.Fatalf("daemon calls %v: want a drain and no resume", got)
	}
	if exists(w.plist()) || !exists(w.backup()) || w.lockHeld() {
		t.Fatalf("plist %v backup %v lock held %v", exists(w.plist()), exists(w.backup()), w.lockHeld())
	}
}

// A plist with no EnvironmentVariables still gives "env": {}.
func TestToAppEnvIsAnObjectWhenThePlistHasNone(t *testing.T) {
	w := newWorld(t)
	w.writePlist(w.plist(), nil)
	res, err := Run(t.Context(), w.opts(), toApp)
	if err != nil {
		t.Fatal(err)
	}
	if env, ok := resultJSON(t, res)["env"].(map[string]any); !ok || len(env) != 0 {
		t.Fatalf("env = %#v", resultJSON(t, res)["env"])
	}
}

// Plist present, job not loaded, no daemon: no drain, no bootout; only the
// plist moves.
func TestToAppJobNotLoadedOnlyMovesThePlist(t *testing.T) {
	w := newWorld(t)
	w.writePlist(w.plist(), nil)
	if _, err := Run(t.Context(), w.opts(), toApp); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, w, "print gui/501/com.blackpaw.leo")
	if slices.Contains(w.daemon.Calls(), "drain") {
		t.Fatalf("drained a daemon that is not there: %v", w.daemon.Calls())
	}
	if exists(w.plist()) || !exists(w.backup()) {
		t.Fatal("the plist did not move")
	}
}

// A daemon holding the lock with no launchd job fails no_launchd_job —
// even when its socket does not answer (running means the lock).
func TestToAppDaemonWithoutLaunchdJob(t *testing.T) {
	for _, answers := range []bool{true, false} {
		w := newWorld(t)
		w.writePlist(w.plist(), nil)
		w.takeLock()
		w.daemon.set(answers, answers, 77)
		_, err := Run(t.Context(), w.opts(), toApp)
		f := failure(t, err, StepPreflight, api.CodeNoLaunchdJob)
		if f.PID == 0 {
			t.Errorf("no pid in %+v", f)
		}
		if !exists(w.plist()) || exists(w.backup()) || slices.Contains(w.daemon.Calls(), "drain") {
			t.Fatal("no_launchd_job changed something")
		}
	}
}

func TestToAppPreflightFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		setup func(w *world)
		req   Request
		code  string
	}{
		"valid marker":             {func(w *world) { w.writeMarker() }, toApp, "already_managed"},
		"invalid marker":           {func(w *world) { writeFile(t, w.h.MarkerPath(), "{", 0o600) }, toApp, "already_managed"},
		"label not reverse-DNS":    {nil, Request{ToApp: true, Label: "leo"}, "invalid_label"},
		"label with a slash":       {nil, Request{ToApp: true, Label: "a.b/c"}, "invalid_label"},
		"label with control bytes": {nil, Request{ToApp: true, Label: "studio.blackpaw\n.leo\x1b[2J"}, "invalid_label"},
		"huge label":               {nil, Request{ToApp: true, Label: strings.Repeat("a.", 1<<16) + "b"}, "invalid_label"},
		"CLI label in capitals":    {nil, Request{ToApp: true, Label: "COM.blackpaw.LEO"}, "label_conflict"},
		"label is the CLI's":       {nil, Request{ToApp: true, Label: "com.blackpaw.leo"}, "label_conflict"},
		"no label":                 {nil, Request{ToApp: true}, "invalid_args"},
		"both directions":          {nil, Request{ToApp: true, ToCLI: true, Label: appLabel}, "invalid_args"},
		"no direction":             {nil, Request{Label: appLabel}, "invalid_args"},
		"plist missing":            {func(w *world) { os.Remove(w.plist()) }, toApp, "plist_missing"},
		"launchctl print broken":   {func(w *world) { w.failVerb("print", 1) }, toApp, "bootout_failed"},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.writePlist(w.plist(), nil)
			if tc.setup != nil {
				tc.setup(w)
			}
			_, err := Run(t.Context(), w.opts(), tc.req)
			failure(t, err, StepPreflight, api.Code(tc.code))
			if slices.ContainsFunc(w.calls(), func(c string) bool { return !strings.HasPrefix(c, "print ") }) {
				t.Fatalf("a preflight failure ran %v", w.calls())
			}
		})
	}
}

func TestToAppUnreadablePlistIsEnvUnreadable(t *testing.T) {
	w := newWorld(t)
	writeFile(t, w.plist(), "not a plist \x00\x01", 0o644)
	w.runningDaemon("com.blackpaw.leo")
	_, err := Run(t.Context(), w.opts(), toApp)
	failure(t, err, StepEnv, api.CodeEnvUnreadable)
	if slices.Contains(w.daemon.Calls(), "drain") || len(w.calls()) != 1 {
		t.Fatalf("env_unreadable went on: %v %v", w.daemon.Calls(), w.calls())
	}
}

// Busy agents past the timeout: drain_timeout, the job stays, the plist
// stays.
func TestToAppDrainTimeout(t *testing.T) {
	w := newWorld(t)
	w.writePlist(w.plist(), nil)
	w.runningDaemon("com.blackpaw.leo")
	w.daemon.drainErr = api.Errorf(api.CodeDrainTimeout, "busy agents did not finish their turn within 1s: alice")
	_, err := Run(t.Context(), w.opts(), toApp)
	f := failure(t, err, StepDrain, api.CodeDrainTimeout)
	if !strings.Contains(f.Message, "alice") {
		t.Errorf("message %q does not name the busy agent", f.Message)
	}
	wantCalls(t, w, "print gui/501/com.blackpaw.leo")
	if !exists(w.plist()) || !w.isLoaded("com.blackpaw.leo") {
		t.Fatal("drain_timeout changed the registration")
	}
}

func TestToAppDrainFailed(t *testing.T) {
	t.Run("the drain errs", func(t *testing.T) {
		w := newWorld(t)
		w.writePlist(w.plist(), nil)
		w.runningDaemon("com.blackpaw.leo")
		w.daemon.drainErr = api.Errorf(api.CodeInternal, "boom")
		_, err := Run(t.Context(), w.opts(), toApp)
		failure(t, err, StepDrain, api.CodeDrainFailed)
		wantCalls(t, w, "print gui/501/com.blackpaw.leo")
	})
	// The daemon holds the lock but its socket does not answer: never
	// taken for a stopped daemon.
	t.Run("broken IPC", func(t *testing.T) {
		w := newWorld(t)
		w.writePlist(w.plist(), nil)
		w.runningDaemon("com.blackpaw.leo")
		w.daemon.set(false, false, 0)
		_, err := Run(t.Context(), w.opts(), toApp)
		f := failure(t, err, StepDrain, api.CodeDrainFailed)
		if f.PID == 0 {
			t.Errorf("no pid: %+v", f)
		}
		wantCalls(t, w, "print gui/501/com.blackpaw.leo")
	})
}

// The job is loaded but its daemon is down (crash loop): nothing to drain,
// the bootout still runs.
func TestToAppLoadedJobWithDaemonDown(t *testing.T) {
	w := newWorld(t)
	w.writePlist(w.plist(), nil)
	w.loaded("com.blackpaw.leo")
	if _, err := Run(t.Context(), w.opts(), toApp); err != nil {
		t.Fatal(err)
	}
	wantCalls(t, w, "print gui/501/com.blackpaw.leo", "bootout gui/501/com.blackpaw.leo")
	if slices.Contains(w.daemon.Calls(), "drain") {
		t.Fatal("drained a daemon that is down")
	}
}

// bootout fails: bootout_failed, deliveries resume, the plist stays.
func TestToAppBootoutFailed(t *testing.T) {
	w := newWorld(t)
	w.writePlist(w.plist(), nil)
	w.runningDaemon("com.blackpaw.leo")
	w.failVerb("bootout", 5)
	_, err := Run(t.Context(), w.opts(), toApp)
	f := failure(t, err, StepBootout, api.CodeBootoutFailed)
	if !strings.Contains(f.Message, "injected failure") {
		t.Errorf("message %q lacks launchctl's words", f.Message)
	}
	if got := w.daemon.Calls(); !slices.Contains(got, "resume") {
		t.Fatalf("deliveries not resumed: %v", got)
	}
	if !exists(w.plist()) || exists(w.backup()) {
		t.Fatal("the plist moved after a failed bootout")
	}
}

func TestToAppPlistMoveFailed(t *testing.T) {
	w := newWorld(t)
	w.writePlist(w.plist(), nil)
	w.runningDaemon("com.blackpaw.leo")
	blockPath(t, w.backup())
	_, err := Run(t.Context(), w.opts(), toApp)
	failure(t, err, StepPlist, api.CodePlistMoveFailed)
	if !exists(w.plist()) {
		t.Fatal("the plist is gone")
	}
}

// The daemon does not let go of daemon.lock after the bootout.
func TestToAppLockTimeout(t *testing.T) {
	w := newWorld(t)
	w.writePlist(w.plist(), nil)
	w.runningDaemon("com.blackpaw.leo")
	w.stickyLock = true
	_, err := Run(t.Context(), w.opts(), toApp)
	f := failure(t, err, StepLock, api.CodeLockTimeout)
	if f.PID == 0 {
		t.Errorf("no pid: %+v", f)
	}
	if !exists(w.backup()) {
		t.Fatal("the plist should have moved before the lock wait")
	}
}

// --dry-run checks everything, prints the plan and changes nothing.
func TestToAppDryRun(t *testing.T) {
	w := newWorld(t)
	w.writePlist(w.plist(), map[string]string{"PATH": "/bin"})
	w.runningDaemon("com.blackpaw.leo")
	req := toApp
	req.DryRun = true
	res, err := Run(t.Context(), w.opts(), req)
	if err != nil {
		t.Fatal(err)
	}
	obj := resultJSON(t, res)
	if obj["dry_run"] != true || obj["previous_label"] != "com.blackpaw.leo" || obj["plist_backup"] != w.backup() {
		t.Fatalf("dry run %v", obj)
	}
	var steps []string
	for _, s := range res.Plan {
		steps = append(steps, s.Step)
	}
	if !slices.Equal(steps, []string{"env", "drain", "bootout", "plist", "lock"}) {
		t.Fatalf("plan %v", res.Plan)
	}
	wantCalls(t, w, "print gui/501/com.blackpaw.leo")
	if slices.Contains(w.daemon.Calls(), "drain") || !exists(w.plist()) || exists(w.backup()) || !w.lockHeld() {
		t.Fatal("--dry-run changed something")
	}

	// A dry run still fails its checks.
	w2 := newWorld(t)
	req.Label = "com.blackpaw.leo"
	w2.writePlist(w2.plist(), nil)
	_, err = Run(t.Context(), w2.opts(), req)
	failure(t, err, StepPreflight, api.CodeLabelConflict)
}

func TestHandoverIsUnsupportedOffMacOS(t *testing.T) {
	for _, req := range []Request{toApp, toCLI, {ToCLI: true, Label: appLabel, DryRun: true}} {
		w := newWorld(t)
		w.writePlist(w.plist(), nil)
		o := w.opts()
		o.GOOS = "linux"
		_, err := Run(t.Context(), o, req)
		failure(t, err, StepPreflight, api.CodeUnsupported)
		if w.calls() != nil || !exists(w.plist()) {
			t.Fatal("unsupported did something")
		}
	}
}

// A bad request is invalid_args on every platform, before the platform
// check: off macOS too, and never unsupported.
func TestHandoverBadRequestIsInvalidArgsOnEveryPlatform(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "freebsd"} {
		for _, req := range []Request{{ToApp: true, ToCLI: true, Label: appLabel}, {}, {ToApp: true}} {
			w := newWorld(t)
			w.writePlist(w.plist(), nil)
			o := w.opts()
			o.GOOS = goos
			_, err := Run(t.Context(), o, req)
			failure(t, err, StepPreflight, api.CodeInvalidArgs)
			if w.calls() != nil || !exists(w.plist()) {
				t.Fatalf("%s %+v: a refused request did something", goos, req)
			}
		}
	}
}

// An agent leo launched (LEO_AGENT in its environment), or a headless
// task run (LEO_TASK), may not hand over.
func TestHandoverFromAnAgentIsNotPermitted(t *testing.T) {
	for _, v := range []string{"LEO_AGENT", "LEO_TASK"} {
		for _, req := range []Request{toApp, toCLI} {
			w := newWorld(t)
			w.writePlist(w.plist(), nil)
			w.env[v] = "assistant"
			_, err := Run(t.Context(), w.opts(), req)
			failure(t, err, StepPreflight, api.CodeNotPermitted)
			if w.calls() != nil || !exists(w.plist()) {
				t.Fatal("not_permitted did something")
			}
		}
	}
}

// A stale .handed-over from an earlier handover gives way to the plist
// that exists now (the CLI's current job).
func TestToAppReplacesAStaleBackup(t *testing.T) {
	w := newWorld(t)
	w.writePlist(w.plist(), map[string]string{"PATH": "/now"})
	writeFile(t, w.backup(), "stale", 0o644)
	res, err := Run(t.Context(), w.opts(), toApp)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(w.backup())
	if err != nil || !strings.Contains(string(data), "/now") || res.Env.(map[string]string)["PATH"] != "/now" {
		t.Fatalf("backup %q %v, env %v", data, err, res.Env)
	}
}

// The job is loaded but the lock holder is not its process (a daemon
// started by hand while the job respawns or runs another pid): the bootout
// would leave that daemon holding the home, so no_launchd_job.
func TestToAppLockHolderIsNotTheJobsProcess(t *testing.T) {
	for name, jobPID := range map[string]int{"job runs no process": 0, "job runs another pid": os.Getpid() + 100000} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			w.writePlist(w.plist(), nil)
			if jobPID == 0 {
				w.loaded("com.blackpaw.leo")
			} else {
				w.fake.SetRunning("com.blackpaw.leo", jobPID)
			}
			w.takeLock()
			w.daemon.set(true, true, os.Getpid())
			_, err := Run(t.Context(), w.opts(), toApp)
			f := failure(t, err, StepPreflight, api.CodeNoLaunchdJob)
			if f.PID != os.Getpid() {
				t.Errorf("pid %d, want the lock holder %d", f.PID, os.Getpid())
			}
			wantCalls(t, w, "print gui/501/com.blackpaw.leo")
			if slices.Contains(w.daemon.Calls(), "drain") || !exists(w.plist()) {
				t.Fatal("no_launchd_job changed something")
			}
		})
	}
}

package handover

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
)

// managedWorld: a valid marker, the CLI plist handed over, the app's job
// loaded and its daemon running.
func managedWorld(t *testing.T) *world {
	w := newWorld(t)
	w.writeMarker()
	w.writePlist(w.backup(), map[string]string{"PATH": "/bin"})
	w.runningDaemon(appLabel)
	return w
}

// The release: drain through the managed daemon, bootout of the marker's
// job, lock free, marker aside before the CLI daemon starts, plist
// restored, bootstrapped, the CLI daemon ready, marker.releasing deleted.
func TestToCLIReleasesTheManagedDaemon(t *testing.T) {
	w := managedWorld(t)
	releasing := w.h.MarkerPath() + ".releasing"
	var atBootstrap struct{ marker, releasing, plist, lockHeld bool }
	w.onBootstrap = func() {
		atBootstrap.marker, atBootstrap.releasing = exists(w.h.MarkerPath()), exists(releasing)
		atBootstrap.plist, atBootstrap.lockHeld = exists(w.plist()), w.lockHeld()
	}
	res, err := Run(t.Context(), w.opts(), toCLI)
	if err != nil {
		t.Fatal(err)
	}
	obj := resultJSON(t, res)
	if got := keys(obj); !slices.Equal(got, []string{"managed_stopped", "ok", "plist_backup", "previous_label"}) {
		t.Fatalf("result keys %v: %v", got, obj)
	}
	if obj["previous_label"] != appLabel || obj["managed_stopped"] != true || obj["plist_backup"] != w.backup() {
		t.Fatalf("result %v", obj)
	}
	wantCalls(t, w, "print gui/501/"+appLabel, "bootout gui/501/"+appLabel, "bootstrap gui/501 "+w.plist())
	if atBootstrap.marker || !atBootstrap.releasing || !atBootstrap.plist || atBootstrap.lockHeld {
		t.Fatalf("at bootstrap: %+v (want the marker aside, the plist back, the lock free)", atBootstrap)
	}
	if exists(w.h.MarkerPath()) || exists(releasing) || !exists(w.plist()) || exists(w.backup()) {
		t.Fatal("after the release the marker (and .releasing) must be gone and the plist restored")
	}
	if !slices.Contains(w.daemon.Calls(), "drain") {
		t.Fatal("no drain through the managed daemon")
	}
}

// The managed job is not loaded: no drain, no bootout, managed_stopped
// false.
func TestToCLIManagedJobNotLoaded(t *testing.T) {
	w := newWorld(t)
	w.writeMarker()
	w.writePlist(w.backup(), nil)
	res, err := Run(t.Context(), w.opts(), toCLI)
	if err != nil {
		t.Fatal(err)
	}
	if resultJSON(t, res)["managed_stopped"] != false {
		t.Fatalf("result %+v", res)
	}
	wantCalls(t, w, "print gui/501/"+appLabel, "bootstrap gui/501 "+w.plist())
}

// An older restored binary: a warning in the result, the release goes on.
func TestToCLIOlderBinaryWarns(t *testing.T) {
	w := managedWorld(t)
	o := w.opts()
	o.Version = "1.5.0"
	var asked string
	o.BinaryVersion = func(_ context.Context, p string) (string, error) { asked = p; return "v1.4.2", nil }
	res, err := Run(t.Context(), o, toCLI)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Warning, "1.4.2") || !strings.Contains(res.Warning, "older") || asked != w.cliBinary() {
		t.Fatalf("warning %q (asked %q)", res.Warning, asked)
	}
	if !exists(w.plist()) {
		t.Fatal("the release stopped")
	}
	// Same or newer: no warning.
	w2 := managedWorld(t)
	o2 := w2.opts()
	o2.BinaryVersion = func(context.Context, string) (string, error) { return "1.5.0", nil }
	if res, err := Run(t.Context(), o2, toCLI); err != nil || res.Warning != "" {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestOlder(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"1.4.0", "1.5.0", true}, {"v1.5.0", "1.5.0", false}, {"1.10.0", "1.9.9", false},
		{"1.5.0-rc1", "1.5.0", true}, {"1.5.0", "1.5.0-rc1", false}, {"dev", "1.0.0", false},
		{"1.0.0", "dev", false}, {"2.0.0+abc", "10.0.0", true},
	} {
		if got := older(tc.a, tc.b); got != tc.want {
			t.Errorf("older(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
}

func TestToCLIPreflightFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		setup func(w *world)
		req   Request
		code  string
	}{
		"no marker, no backup": {func(w *world) {
			os.Remove(w.h.MarkerPath())
			os.Remove(w.backup())
		}, toCLI, "not_managed"},
		// An invalid marker is never taken for absent, backup or not.
		"invalid marker": {func(w *world) { os.Chmod(w.h.MarkerPath(), 0o666) }, Request{ToCLI: true, Label: appLabel}, "not_managed"},
		"no backup":      {func(w *world) { os.Remove(w.backup()) }, toCLI, "backup_missing"},
		"backup not a plist": {func(w *world) {
			writeFile(t, w.backup(), "garbage", 0o644)
		}, toCLI, "backup_unusable"},
		"binary missing":                  {func(w *world) { os.Remove(w.cliBinary()) }, toCLI, "backup_unusable"},
		"binary not executable":           {func(w *world) { os.Chmod(w.cliBinary(), 0o644) }, toCLI, "backup_unusable"},
		"label differs from the marker's": {nil, Request{ToCLI: true, Label: "org.example.other"}, "invalid_args"},
	} {
		t.Run(name, func(t *testing.T) {
			w := managedWorld(t)
			if tc.setup != nil {
				tc.setup(w)
			}
			_, err := Run(t.Context(), w.opts(), tc.req)
			failure(t, err, StepPreflight, api.Code(tc.code))
			if slices.ContainsFunc(w.calls(), func(c string) bool { return !strings.HasPrefix(c, "print ") }) {
				t.Fatalf("a preflight failure ran %v", w.calls())
			}
			if slices.Contains(w.daemon.Calls(), "drain") {
				t.Fatal("a preflight failure drained")
			}
		})
	}
}

func TestToCLIStepFailures(t *testing.T) {
	for name, tc := range map[string]struct {
		setup      func(w *world)
		step, code string
		// after checks where things were left.
		after func(t *testing.T, w *world)
	}{
		"drain timeout": {func(w *world) {
			w.daemon.drainErr = api.Errorf(api.CodeDrainTimeout, "busy agents did not finish: bob")
		}, StepDrain, "drain_timeout", func(t *testing.T, w *world) {
			if !w.isLoaded(appLabel) || !exists(w.h.MarkerPath()) {
				t.Fatal("drain_timeout changed something")
			}
		}},
		"drain failed": {func(w *world) { w.daemon.drainErr = errors.New("socket closed") }, StepDrain, "drain_failed", nil},
		"bootout failed": {func(w *world) { w.failVerb("bootout", 5) }, StepBootout, "bootout_failed", func(t *testing.T, w *world) {
			if !slices.Contains(w.daemon.Calls(), "resume") {
				t.Fatal("deliveries not resumed after a failed bootout")
			}
		}},
		"lock timeout": {func(w *world) { w.stickyLock = true }, StepLock, "lock_timeout", func(t *testing.T, w *world) {
			if !exists(w.h.MarkerPath()) {
				t.Fatal("the marker moved while the lock was held")
			}
		}},
		"marker move failed": {func(w *world) { blockPath(t, w.h.MarkerPath()+".releasing") }, StepMarker, "marker_move_failed", func(t *testing.T, w *world) {
			if !exists(w.backup()) {
				t.Fatal("the plist was restored with the marker live")
			}
		}},
		"plist restore failed": {func(w *world) { blockPath(t, w.plist()) }, StepPlist, "plist_restore_failed", nil},
		"bootstrap failed":     {func(w *world) { w.failVerb("bootstrap", 5) }, StepBootstrap, "bootstrap_failed", nil},
		"not ready": {func(w *world) { w.deadStart = true }, StepReady, "not_ready", func(t *testing.T, w *world) {
			if !exists(w.h.MarkerPath() + ".releasing") {
				t.Fatal("managed.json.releasing deleted though the CLI daemon never got ready")
			}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			w := managedWorld(t)
			tc.setup(w)
			_, err := Run(t.Context(), w.opts(), toCLI)
			f := failure(t, err, tc.step, api.Code(tc.code))
			if f.RolledBack != nil {
				t.Errorf("rolled_back outside the recovery path: %+v", f)
			}
			if tc.after != nil {
				tc.after(t, w)
			}
		})
	}
}

func TestToCLIDryRun(t *testing.T) {
	w := managedWorld(t)
	res, err := Run(t.Context(), w.opts(), Request{ToCLI: true, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range res.Plan {
		steps = append(steps, s.Step)
	}
	if !res.DryRun || !slices.Equal(steps, []string{"drain", "bootout", "lock", "marker", "plist", "bootstrap", "ready", "marker"}) {
		t.Fatalf("plan %+v", res)
	}
	wantCalls(t, w, "print gui/501/"+appLabel)
	if !exists(w.h.MarkerPath()) || exists(w.plist()) || !w.lockHeld() || slices.Contains(w.daemon.Calls(), "drain") {
		t.Fatal("--dry-run changed something")
	}
}

// ---- the recovery path: no marker, the backup present ----

func recoveryWorld(t *testing.T) *world {
	w := newWorld(t)
	w.writePlist(w.backup(), map[string]string{"PATH": "/bin"})
	return w
}

var recoverReq = Request{ToCLI: true, Label: appLabel}

func TestToCLIRecovery(t *testing.T) {
	w := recoveryWorld(t)
	res, err := Run(t.Context(), w.opts(), recoverReq)
	if err != nil {
		t.Fatal(err)
	}
	obj := resultJSON(t, res)
	if obj["ok"] != true || obj["managed_stopped"] != false || obj["restored_without_marker"] != true || obj["plist_backup"] != w.backup() {
		t.Fatalf("result %v", obj)
	}
	if _, ok := obj["env"]; ok {
		t.Fatal("env is --to-app's only")
	}
	// No drain, no bootout: the app's job is checked, the CLI's bootstrapped.
	wantCalls(t, w, "print gui/501/"+appLabel, "bootstrap gui/501 "+w.plist())
	if slices.Contains(w.daemon.Calls(), "drain") || !exists(w.plist()) || exists(w.backup()) {
		t.Fatal("recovery did not restore the plist as it should")
	}
}

func TestToCLIRecoveryPreflight(t *testing.T) {
	for name, tc := range map[string]struct {
		setup func(w *world)
		req   Request
		code  string
	}{
		"no label":           {nil, toCLI, "invalid_args"},
		"invalid label":      {nil, Request{ToCLI: true, Label: "nodots"}, "invalid_label"},
		"the CLI's label":    {nil, Request{ToCLI: true, Label: "com.blackpaw.leo"}, "label_conflict"},
		"app job registered": {func(w *world) { w.loaded(appLabel) }, recoverReq, "managed_job_loaded"},
		"daemon holds lock":  {func(w *world) { w.takeLock() }, recoverReq, "daemon_running"},
		"backup unusable": {func(w *world) {
			os.Chmod(w.cliBinary(), 0o600)
		}, recoverReq, "backup_unusable"},
	} {
		t.Run(name, func(t *testing.T) {
			w := recoveryWorld(t)
			if tc.setup != nil {
				tc.setup(w)
			}
			_, err := Run(t.Context(), w.opts(), tc.req)
			f := failure(t, err, StepPreflight, api.Code(tc.code))
			if f.RolledBack != nil {
				t.Errorf("rolled_back on a preflight failure: %+v", f)
			}
			if !exists(w.backup()) || exists(w.plist()) {
				t.Fatal("a preflight failure moved the backup")
			}
		})
	}
}

// A failure after the plist moved: best-effort bootout of the CLI job,
// the plist back to .handed-over, rolled_back.
func TestToCLIRecoveryRollsBack(t *testing.T) {
	for name, tc := range map[string]struct {
		setup      func(w *world)
		step, code string
	}{
		"bootstrap failed": {func(w *world) { w.failVerb("bootstrap", 5) }, StepBootstrap, "bootstrap_failed"},
		"not ready":        {func(w *world) { w.deadStart = true }, StepReady, "not_ready"},
	} {
		t.Run(name, func(t *testing.T) {
			w := recoveryWorld(t)
			tc.setup(w)
			_, err := Run(t.Context(), w.opts(), recoverReq)
			f := failure(t, err, tc.step, api.Code(tc.code))
			if f.RolledBack == nil || !*f.RolledBack {
				t.Fatalf("rolled_back = %v", f.RolledBack)
			}
			body := resultJSONAny(t, f.JSONBody())
			if body["rolled_back"] != true {
				t.Fatalf("failure object %v", body)
			}
			calls := w.calls()
			if len(calls) != 3 || calls[2] != "bootout gui/501/com.blackpaw.leo" {
				t.Fatalf("calls %v: want the best-effort bootout last", calls)
			}
			if !exists(w.backup()) || exists(w.plist()) || w.isLoaded("com.blackpaw.leo") {
				t.Fatal("not rolled back")
			}
		})
	}
	// The move back fails too: rolled_back false, the message says where
	// the plist is.
	t.Run("rollback fails", func(t *testing.T) {
		w := recoveryWorld(t)
		w.failVerb("bootstrap", 5)
		w.onBootstrap = func() { blockPath(t, w.backup()) }
		_, err := Run(t.Context(), w.opts(), recoverReq)
		f := failure(t, err, StepBootstrap, api.CodeBootstrapFailed)
		if f.RolledBack == nil || *f.RolledBack || !strings.Contains(f.Message, "rollback failed") {
			t.Fatalf("%+v", f)
		}
	})
	t.Run("plist restore failed", func(t *testing.T) {
		w := recoveryWorld(t)
		blockPath(t, w.plist())
		_, err := Run(t.Context(), w.opts(), recoverReq)
		f := failure(t, err, StepPlist, api.CodePlistRestoreFailed)
		if f.RolledBack == nil || !*f.RolledBack || !exists(w.backup()) {
			t.Fatalf("%+v", f)
		}
	})
}

func TestToCLIRecoveryDryRun(t *testing.T) {
	w := recoveryWorld(t)
	req := recoverReq
	req.DryRun = true
	res, err := Run(t.Context(), w.opts(), req)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, s := range res.Plan {
		steps = append(steps, s.Step)
	}
	if !res.DryRun || !res.RestoredWithoutMarker || !slices.Equal(steps, []string{"plist", "bootstrap", "ready"}) {
		t.Fatalf("%+v", res)
	}
	wantCalls(t, w, "print gui/501/"+appLabel)
	if !exists(w.backup()) || exists(w.plist()) {
		t.Fatal("--dry-run moved the backup")
	}
	// And it still checks: no label.
	req.Label = ""
	_, err = Run(t.Context(), w.opts(), req)
	failure(t, err, StepPreflight, api.CodeInvalidArgs)
}

func resultJSONAny(t *testing.T, v any) map[string]any {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// A config the restored CLI daemon would refuse stops --to-cli before
// anything changes; --to-app checks an existing config only (a missing one
// is the managed first start's to write).
func TestHandoverChecksTheConfig(t *testing.T) {
	refuse := func() error { return api.Errorf(api.CodeConfigError, "leo.yaml: templates.x.harness: unknown") }
	for name, w := range map[string]*world{"release": managedWorld(t), "recovery": recoveryWorld(t)} {
		o := w.opts()
		o.LoadConfig = refuse
		req := toCLI
		if name == "recovery" {
			req = recoverReq
		}
		_, err := Run(t.Context(), o, req)
		f := failure(t, err, StepPreflight, api.CodeConfigError)
		if !strings.Contains(f.Message, "templates.x.harness") || !exists(w.backup()) || exists(w.plist()) {
			t.Fatalf("%s: %+v", name, f)
		}
	}

	w := newWorld(t)
	w.writePlist(w.plist(), nil)
	o := w.opts()
	called := false
	o.LoadConfig = func() error { called = true; return refuse() }
	if _, err := Run(t.Context(), o, toApp); err != nil || called {
		t.Fatalf("--to-app with no leo.yaml: %v (config loaded: %v)", err, called)
	}
	w = newWorld(t)
	w.writePlist(w.plist(), nil)
	writeFile(t, w.h.ConfigPath, "defaults: [", 0o600)
	o = w.opts()
	o.LoadConfig = refuse
	_, err := Run(t.Context(), o, toApp)
	failure(t, err, StepPreflight, api.CodeConfigError)
	if !exists(w.plist()) {
		t.Fatal("config_error moved the plist")
	}
}

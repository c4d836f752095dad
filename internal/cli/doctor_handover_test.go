package cli

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/handover"
)

// readyDaemon answers /health ready, as the restored CLI daemon would.
type readyDaemon struct{ ready bool }

func (d readyDaemon) Health(context.Context) (api.Health, error) {
	if !d.ready {
		return api.Health{}, api.Errorf(api.CodeDaemonDown, "leo daemon is not running")
	}
	return api.Health{PID: 4242, Ready: true}, nil
}
func (readyDaemon) Drain(context.Context, api.DrainRequest) (api.DrainResult, error) {
	return api.DrainResult{}, nil
}
func (readyDaemon) ResumeDeliveries(context.Context) error { return nil }

// TestDoctorFixRestoresThroughHandover: with no marker and a handed-over
// CLI plist, doctor --fix --label runs handover's --to-cli recovery path:
// the plist restored and bootstrapped, the daemon awaited; when it never
// gets ready, handover's rollback and code end up in the "not fixed" line.
func TestDoctorFixRestoresThroughHandover(t *testing.T) {
	for _, ready := range []bool{true, false} {
		e, _, lc, set := doctorTestEnv(t)
		agents := filepath.Join(e.vars["HOME"], "Library", "LaunchAgents")
		prog := filepath.Join(e.dir, "bin", "claude") // any executable
		os.MkdirAll(agents, 0o700)
		plist := `<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict><key>Label</key><string>com.blackpaw.leo</string>
<key>ProgramArguments</key><array><string>` + prog + `</string><string>service</string><string>--supervised</string></array>
</dict></plist>`
		backup := filepath.Join(agents, "com.blackpaw.leo.plist.handed-over")
		if err := os.WriteFile(backup, []byte(plist), 0o644); err != nil {
			t.Fatal(err)
		}
		darwin := func(f *Factory) {
			set(f)
			f.GOOS = "darwin"
			f.HandoverOptions = func(o *handover.Options) {
				o.Daemon = readyDaemon{ready: ready}
				o.ReadyTimeout, o.Poll = 300*time.Millisecond, 20*time.Millisecond
				o.BinaryVersion = func(context.Context, string) (string, error) { return "1.2.3-test", nil }
			}
		}
		r := e.runWith(darwin, "doctor", "--fix", "--label", "studio.blackpaw.leo.daemon", "--json")
		obj := decodeOne(t, r.stdout)
		fixed, _ := obj["fixed"].([]any)
		if len(fixed) != 1 {
			t.Fatalf("ready=%v: fixed %v (%s)", ready, fixed, r.stderr)
		}
		rep := fixed[0].(map[string]any)
		if !slices.Contains(lc.Calls(), "print gui/"+itoa(os.Getuid())+"/studio.blackpaw.leo.daemon") {
			t.Errorf("handover did not look for the app's job: %q", lc.Calls())
		}
		if ready {
			// The restored daemon is a stand-in that serves no socket: the
			// socket check is the one failure.
			if rep["ok"] != true || r.code != ExitError || obj["message"] != "1 check(s) failed: socket" {
				t.Fatalf("%v, exit %d, %v", rep, r.code, obj["message"])
			}
			mustContain(t, "repair", rep["message"].(string), "restored the CLI job com.blackpaw.leo from "+backup+" (leo service handover --to-cli --label studio.blackpaw.leo.daemon); its daemon is ready")
			if !lc.Registered("com.blackpaw.leo") {
				t.Error("not bootstrapped")
			}
			continue
		}
		if rep["ok"] != false {
			t.Fatalf("%v", rep)
		}
		mustContain(t, "repair", rep["message"].(string), "did not restore the CLI job: ", "rolled back", "(not_ready at ready)")
		if _, err := os.Stat(backup); err != nil {
			t.Errorf("the backup is not back: %v", err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

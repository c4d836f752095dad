package cli

import (
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/client"
)

// Issue 17.8: every command that needs the daemon says how to start it
// when none runs, in text on stderr and in the JSON failure's message, with
// exit 4 (daemon_down). The words come from one place (client.StartHint).
func TestEveryDaemonCommandSaysHowToStartIt(t *testing.T) {
	e, h := daemonEnv(t)
	for _, argv := range [][]string{
		{"agent", "spawn", "assistant"},
		{"agent", "status", "bob"},
		{"agent", "send", "bob", "hello"},
		{"agent", "logs", "bob"},
		{"agent", "compact", "bob"},
		{"agent", "start", "bob"},
		{"agent", "stop", "bob"},
		{"agent", "restart", "bob"},
		{"agent", "reset", "bob"},
		{"agent", "delete", "bob", "--yes"},
		{"service", "status"},
		{"service", "reload"},
	} {
		want := "leo daemon is not running (no socket at " + h.SocketPath() + "); " + client.StartHint
		r := e.run(argv...)
		if r.code != ExitDaemonDown || r.stdout != "" || !strings.Contains(r.stderr, want) {
			t.Errorf("leo %s: exit %d, stdout %q, stderr %q; want exit 4 and %q", strings.Join(argv, " "), r.code, r.stdout, r.stderr, want)
		}
		r = e.run(append(argv, "--json")...)
		obj := assertJSONFailure(t, r, "daemon_down", ExitDaemonDown)
		mustContain(t, "leo "+strings.Join(argv, " ")+" --json", obj["message"].(string), want)
	}
}

package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/opencode"
)

// opencode's managed AGENTS.md block says only what is true: it points at
// leo_skill while launches get leo's MCP server, and is removed (the
// user's own text kept) once they do not.
func TestOpencodeBlockFollowsTheBridge(t *testing.T) {
	xdg := t.TempDir()
	getenv := func(k string) string { return map[string]string{"HOME": t.TempDir(), "XDG_CONFIG_HOME": xdg}[k] }
	cfg, err := config.Parse([]byte("templates:\n  oc:\n    harness: opencode\n    workspace: /tmp/oc\n"), filepath.Join(t.TempDir(), "leo.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(xdg, "opencode", "AGENTS.md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	mine := "# my rules\nbe kind\n"
	if err := os.WriteFile(path, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	read := func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	log := slog.New(slog.DiscardHandler)

	prepareHarnesses(context.Background(), cfg, true, getenv, log)
	got := read()
	if !strings.HasPrefix(got, mine) || !strings.Contains(got, opencode.BlockBegin+"\n"+harness.BridgeNudge) {
		t.Fatalf("bridged: AGENTS.md\n%s\nwants the user's text then the nudge block", got)
	}

	prepareHarnesses(context.Background(), cfg, false, getenv, log)
	if got := read(); got != mine+"\n" && got != mine {
		t.Fatalf("not bridged: AGENTS.md\n%q\nstill has more than the user's text (a block pointing at tools that are not there?)", got)
	}
	if strings.Contains(read(), "leo_skill") {
		t.Fatal("a nudge toward leo_skill is left with no bridge")
	}
}

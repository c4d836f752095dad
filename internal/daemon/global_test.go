package daemon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/harness/opencode"
)

// The opencode managed block is written only once opencode is configured,
// and only between its markers: the user's own AGENTS.md text stays.
func TestOpencodeManagedBlockFollowsTheConfig(t *testing.T) {
	h := newHome(t)
	xdg := t.TempDir()
	agentsMD := filepath.Join(xdg, "opencode", "AGENTS.md")
	if err := os.MkdirAll(filepath.Dir(agentsMD), 0o755); err != nil {
		t.Fatal(err)
	}
	mine := "# my own rules\nalways write tests\n"
	writeFile(t, agentsMD, mine)

	fake := daemontest.New()
	opts := options(t, h, fake, nil)
	opts.Getenv = func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return xdg
		}
		return os.Getenv(k)
	}
	r := start(t, opts, fake)
	r.WaitReady(t, 10*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, _ := os.ReadFile(agentsMD); string(got) != mine {
		t.Fatalf("AGENTS.md changed while opencode is not configured:\n%s", got)
	}

	writeFile(t, h.ConfigPath, validConfig+"  oc:\n    harness: opencode\n")
	if _, err := r.Client.ReloadConfig(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(agentsMD)
	text := string(got)
	if !strings.HasPrefix(text, mine) {
		t.Errorf("the user's text was not kept:\n%s", text)
	}
	begin, end := strings.Index(text, opencode.BlockBegin), strings.Index(text, opencode.BlockEnd)
	if begin < 0 || end < begin || !strings.Contains(text[begin:end], "leo_skill") {
		t.Errorf("no managed block with the leo nudge:\n%s", text)
	}
}

package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// rateLimitSessionID is the claude conversation of the rate-limit capture.
const rateLimitSessionID = "44444444-2222-4333-8444-00000000000a"

// runClaudeRateLimit (-scenario ratelimit, claude) records claude's
// transcript of one turn answered HTTP 429, with CLAUDE_CODE_MAX_RETRIES=0
// so that it fails at once instead of retrying for minutes, to
// internal/harness/claude/testdata/ratelimit_v<version>.jsonl.
func runClaudeRateLimit(bin string) error {
	v, err := realcli.InstalledVersion(filepath.Join(bin, "claude"))
	if err != nil {
		return err
	}
	version := regexp.MustCompile(`\d+\.\d+\.\d+`).FindString(v)
	ms, err := modelserver.New()
	if err != nil {
		return err
	}
	defer ms.Close()
	const marker = "LEO-lim-001"
	ms.SetResponder(func(q modelserver.Request) modelserver.Reply {
		if !q.Side && len(q.Markers) > 0 && q.Markers[len(q.Markers)-1] == marker {
			return modelserver.Reply{Status: http.StatusTooManyRequests}
		}
		return modelserver.DefaultResponder(q)
	})
	c, err := realcli.NewCapture("claude", bin, ms.URL, "caplim")
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Start("120", "40", "env", "CLAUDE_CODE_MAX_RETRIES=0", filepath.Join(bin, "claude"), "--session-id", rateLimitSessionID); err != nil {
		return err
	}
	r := claude.Claude{}.Screen()
	wait := func(what string, cond func(string) bool) error {
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			if cond(c.Screen()) {
				return nil
			}
			time.Sleep(100 * time.Millisecond)
		}
		return fmt.Errorf("%s: not seen:\n%s", what, c.Screen())
	}
	if err := wait("ready", func(s string) bool { return r.Classify(s).State == harness.ScreenReady }); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // let a first start finish drawing
	text := "rate limit this " + marker
	if o, err := c.Tmux(text, "load-buffer", "-b", "m", "-"); err != nil {
		return fmt.Errorf("load-buffer: %v %s", err, o)
	}
	if o, err := c.Tmux("", "paste-buffer", "-p", "-d", "-b", "m", "-t", "a"); err != nil {
		return fmt.Errorf("paste-buffer: %v %s", err, o)
	}
	if err := wait("pasted", func(s string) bool { return strings.Contains(s, text) }); err != nil {
		return err
	}
	if o, err := c.Tmux("", "send-keys", "-t", "a", "Enter"); err != nil {
		return fmt.Errorf("send-keys: %v %s", err, o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := ms.WaitTurn(ctx, marker); err != nil {
		return err
	}
	if err := wait("429 shown", func(s string) bool { return strings.Contains(strings.ReplaceAll(s, marker, ""), "429") }); err != nil {
		return err
	}
	time.Sleep(3 * time.Second) // the turn's end records
	b, err := os.ReadFile(claude.TranscriptPath(c.Env, c.Workspace, rateLimitSessionID))
	if err != nil {
		return err
	}
	var keep []string
	for _, line := range strings.SplitAfter(string(b), "\n") {
		if !strings.Contains(line, `"type":"api-request-blob"`) && !strings.Contains(line, `"type":"api-request-shape"`) {
			keep = append(keep, line)
		}
	}
	out := filepath.Join("internal", "harness", "claude", "testdata", "ratelimit_v"+version+".jsonl")
	return os.WriteFile(out, []byte(strings.Join(keep, "")), 0o644)
}

package cli

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/daemon/daemontest"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

func TestAddedLines(t *testing.T) {
	for name, tc := range map[string]struct{ prev, cur, want string }{
		"nothing new":           {"a b c", "a b c", ""},
		"appended":              {"a b", "a b c d", "c d"},
		"scrolled":              {"a b c", "b c d", "d"},
		"above a fixed footer":  {"h1 h2 box status", "h1 h2 h3 box status", "h3"},
		"scrolled above footer": {"h1 h2 box", "h2 h3 h4 box", "h3 h4"},
		"redrawn in place":      {"h1 spin1 box", "h1 spin2 box", "spin2"},
		"all new":               {"a b", "x y", "x y"},
		"first look":            {"", "a b", "a b"},
	} {
		t.Run(name, func(t *testing.T) {
			got := strings.Join(addedLines(strings.Fields(tc.prev), strings.Fields(tc.cur)), " ")
			if got != tc.want {
				t.Errorf("addedLines(%q, %q) = %q, want %q", tc.prev, tc.cur, got, tc.want)
			}
		})
	}
}

// syncBuffer is an Out the test reads while the command writes.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// `leo agent logs -f` prints the pane, then only what the pane adds as it
// grows (a TUI's fixed footer is not printed again), until interrupted.
func TestAgentLogsFollow(t *testing.T) {
	e, h := daemonEnv(t)
	screens := []string{
		"one\ntwo\n> input\n",
		"one\ntwo\nthree\n> input\n",
		"two\nthree\nfour\nfive\n> input\n", // scrolled: "one" left the window
	}
	var mu sync.Mutex
	looks := 0
	fake := daemontest.New()
	fake.LogsText = func(string, int) string {
		mu.Lock()
		defer mu.Unlock()
		s := screens[min(looks, len(screens)-1)]
		looks++
		return s
	}
	fake.Put(api.Agent{Name: "bob", Template: "assistant", Harness: "claude", State: api.StateRunning})
	startFakeDaemonWith(t, e, h, fake)

	out := &syncBuffer{}
	io, _, _, _ := TestStreams()
	io.Out = out
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runAgentLogs(ctx, &AgentLogsOptions{IO: io, Client: client.New(h), Name: "bob", Lines: 100, Follow: true, Every: 5 * time.Millisecond})
	}()
	testutil.WaitFor(t, 10*time.Second, func() bool { return strings.Contains(out.String(), "five") }, "the pane's growth printed")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("follow ended with %v, want nil on interrupt", err)
	}
	if got, want := out.String(), "one\ntwo\n> input\nthree\nfour\nfive\n"; got != want {
		t.Fatalf("follow printed\n%s\nwant\n%s", got, want)
	}
}

// --follow and --json do not go together; the refusal is the JSON rule's.
func TestAgentLogsFollowRefusesJSON(t *testing.T) {
	e := newTestEnv(t)
	r := e.run("agent", "logs", "bob", "-f", "--json")
	assertJSONFailure(t, r, "invalid_args", ExitUsage)
}

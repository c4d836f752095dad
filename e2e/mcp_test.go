package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/apitoken"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// The real `leo mcp-server`, as a harness starts it through the bridge
// (LEO_AGENT set, LEO_URL the daemon's web API), driven by the MCP SDK's
// client against a daemon with web enabled and fake agents: it lists its
// tools, carries a message from one agent into another's pane signed by
// the sender, spawns an agent and runs a task.
func TestMCPServerAgainstARunningDaemon(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "claude")
	w.WriteConfig(nil)
	ws := filepath.Join(w.Workspaces, "task-hello")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "prompt.md"), []byte("say hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.AppendConfig(fmt.Sprintf("tasks:\n  hello:\n    harness: claude\n    workspace: %s\n    prompt_file: prompt.md\n    env:\n      FAKE_HARNESS_LOG: %q\n", ws, w.HarnessLog))
	url := w.EnableWeb()
	w.startDaemon()
	ctx := context.Background()

	// The daemon mints the token and serves the API once web is up.
	var token string
	testutil.WaitFor(t, 30*time.Second, func() bool {
		tok, err := apitoken.Read(w.Home.TokenPath())
		if err != nil {
			return false
		}
		token = tok
		_, err = client.NewHTTP(url, tok).Health(ctx)
		return err == nil
	}, "the web API to answer with the minted token")

	for _, name := range []string{"alice", "bob"} {
		if _, err := w.Client.Spawn(ctx, api.SpawnRequest{Template: "claude", Name: name}); err != nil {
			t.Fatalf("spawn %s: %v", name, err)
		}
	}

	cmd := exec.Command(leoproc.Binary(t), "mcp-server")
	cmd.Env = append(w.Env(), "LEO_AGENT=alice", "LEO_URL="+url)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "e2e"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to leo mcp-server: %v", err)
	}
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"leo_skill", "leo_send_message", "leo_list_agents", "leo_spawn_agent", "leo_run_task"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}

	call := func(name string, args map[string]any) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		if res.IsError {
			t.Fatalf("%s %v: tool error %s", name, args, b.String())
		}
		if strings.Contains(b.String(), token) {
			t.Fatalf("%s answered the API token", name)
		}
		return b.String()
	}

	// A message from alice lands in bob's pane, signed by alice.
	call("leo_send_message", map[string]any{"to": "bob", "message": "hello bob, from the MCP tool"})
	testutil.WaitFor(t, 60*time.Second, func() bool {
		l, err := w.Client.Logs(ctx, "bob", 80)
		return err == nil && strings.Contains(l.Text, "echo: [message from alice] hello bob, from the MCP tool")
	}, "alice's message in bob's pane")

	// Sending to oneself is refused by the server, before the daemon.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "leo_send_message", Arguments: map[string]any{"to": "alice", "message": "me"}})
	if err != nil || !res.IsError {
		t.Fatalf("send to self: %+v %v", res, err)
	}

	call("leo_spawn_agent", map[string]any{"template": "claude", "name": "carol"})
	if a := w.get("carol"); a.Template != "claude" {
		t.Fatalf("spawned %+v", a)
	}
	if out := call("leo_list_agents", nil); !strings.Contains(out, `"name":"carol"`) || !strings.Contains(out, `"name":"bob"`) {
		t.Fatalf("leo_list_agents: %s", out)
	}
	if out := call("leo_list_templates", nil); !strings.Contains(out, `"name":"claude"`) {
		t.Fatalf("leo_list_templates: %s", out)
	}

	// The harness's interrupt key reaches bob's pane through the daemon.
	if out := call("leo_interrupt", map[string]any{"name": "bob"}); !strings.Contains(out, `"name":"bob"`) {
		t.Fatalf("leo_interrupt: %s", out)
	}

	call("leo_run_task", map[string]any{"name": "hello"})
	testutil.WaitFor(t, 60*time.Second, func() bool {
		h, err := w.Client.TaskHistory(ctx, "hello", 5)
		return err == nil && len(h.Runs) == 1 && h.Runs[0].Outcome == "succeeded"
	}, "the task run the tool started to succeed")
}

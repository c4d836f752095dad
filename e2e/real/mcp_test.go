package real

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/apitoken"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// The MCP steps: the suite's daemon has its web API on (a free loopback
// port, the token it mints), so every launch carries leo's MCP bridge and
// nudge. An agent of the real CLI (mcpListAgents), then a headless task
// run (mcpTaskRun), is sent a message; the model server answers that turn
// with a call of leo's leo_list_agents tool and the follow-up (which
// carries the tool's result) with the agent names it found there; the
// names must be the daemon's, on the agent's pane or in the run's reply.
// The turn must also have carried leo's nudge toward leo_skill in the
// system prompt (claude --append-system-prompt, codex
// developer_instructions, opencode the managed AGENTS.md block), and no
// request may carry the API token.

// leoCall is how the agent under test reaches leo in these steps: a call
// of leo's MCP tool (realcli.CLI.LeoTool, the name each CLI gives
// leo_list_agents, docs/harness-behaviour/<harness>.md), or, for a CLI
// with no MCP (pi), of its shell tool running the leo CLI — what leo's
// note tells such a harness to do.
type leoCall struct {
	tool  string
	input string // the call's arguments, "" for none
}

func (r *run) cli() realcli.CLI {
	c, err := realcli.Lookup(r.h)
	if err != nil {
		r.t.Fatal(err)
	}
	return c
}

// listCall lists leo's agents: leo_list_agents, or `leo agent list --json`.
func (r *run) listCall() leoCall {
	c := r.cli()
	if c.LeoTool != "" {
		return leoCall{tool: c.LeoTool}
	}
	return leoCall{tool: c.ShellTool, input: shellInput(leoproc.Binary(r.t), "agent", "list", "--json")}
}

// shellInput is a shell tool's arguments running argv.
func shellInput(argv ...string) string {
	data, _ := json.Marshal(map[string]string{"command": harness.ShellJoin(argv)})
	return string(data)
}

// nudge is the note of leo a bridged launch of the harness carries.
func (r *run) nudge() string {
	h, ok := harness.Lookup(r.h)
	if !ok {
		r.t.Fatalf("%s is not registered", r.h)
	}
	return harness.NudgeOf(h, &harness.MCPBridge{Command: leoproc.Binary(r.t)})
}

// mcpAgent names the template (and agent) of the MCP step.
func (r *run) mcpAgent() string { return r.h + "-mcp" }

// webPort picks the web API's port once per run: every daemon of the run
// (the step that SIGKILLs one starts another) serves on it.
func (r *run) webPort() int {
	if r.port == 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			r.t.Fatal(err)
		}
		r.port = ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
	}
	return r.port
}

// webConfig is leo.yaml's web section: the API on loopback only.
func (r *run) webConfig() string {
	return fmt.Sprintf("web:\n  enabled: true\n  bind: 127.0.0.1\n  port: %d\n", r.webPort())
}

// waitWeb waits for the daemon's web API to answer with the token it
// minted: from then on every launch is bridged.
func (r *run) waitWeb(d time.Duration) error {
	url := fmt.Sprintf("http://127.0.0.1:%d", r.webPort())
	var last error
	if testutil.Poll(d, 100*time.Millisecond, func() bool {
		tok, err := apitoken.Read(r.w.Home.TokenPath())
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err = client.NewHTTP(url, tok).Health(ctx)
			cancel()
		}
		last = err
		return err == nil
	}) {
		return nil
	}
	return fmt.Errorf("the web API on %s did not answer with the minted token within %v: %v", url, d, last)
}

func (r *run) mcpListAgents(s *step) {
	name := r.mcpAgent()
	s.leo("agent", "spawn", name)
	s.waitRunning(name, 3*time.Minute)
	s.pane(name, realcli.ReadyText[r.h], 2*time.Minute)
	call := r.listCall()
	tool := call.tool
	// claude connects MCP servers in the background: a turn sent right
	// after the launch may go out before leo's tools are there (it then
	// offers WaitForMcpServers instead). Plain exchanges until a turn
	// offers the tool.
	ready := time.Now().Add(time.Minute)
	for {
		_, req := s.exchange(name, "Are leo's tools there yet?")
		if slices.Contains(req.ToolNames, tool) {
			break
		}
		if time.Now().After(ready) {
			s.Fatalf("no turn within a minute of the launch offered %s; leo's tools offered: %v; all: %v", tool, leoTools(req.ToolNames), req.ToolNames)
		}
	}

	m := r.marker()
	r.listOnMarker(m, call)
	defer r.ms.SetResponder(nil)
	res := s.send(name, "Which leo agents are there? "+m+" please")
	s.delivered(name, res.ID, m, 3*time.Minute)
	s.listed(m, tool)
	s.pane(name, "LISTED "+m+": "+strings.Join(s.daemonAgents(name), " "), time.Minute)
}

// mcpTaskRun: a one-shot task run (the CLI headless, through the daemon)
// gets the bridge too: its one turn, with no time to wait for servers,
// offers leo's tool, calls it, and the run's reply is the daemon's list.
func (r *run) mcpTaskRun(s *step) {
	call := r.listCall()
	m := r.peekMarker()
	r.listOnMarker(m, call)
	defer r.ms.SetResponder(nil)
	got, rec, out := s.runTask(r.job())
	if got != m {
		s.Fatalf("test bug: the run's marker is %s, the responder's %s", got, m)
	}
	s.listed(m, call.tool)
	if want := "LISTED " + m + ": " + strings.Join(s.daemonAgents(""), " "); rec.Outcome != api.OutcomeSucceeded || !strings.Contains(rec.Reply, want) {
		s.Fatalf("run %s: want outcome succeeded and %q in the reply: %s", m, want, out)
	}
}

// listOnMarker scripts the model server for turns whose message holds m:
// the first is answered with call (leo_list_agents, or the leo CLI), the
// follow-up that carries its result with "LISTED <m>: <names>", the agent
// names read from the result. Other requests get the default replies.
// LEO_REALCLI_DUMP=<dir> keeps every request body there at the end of the
// test (<harness>-<seq>.json), to see what a CLI sent.
func (r *run) listOnMarker(m string, call leoCall) {
	tool := call.tool
	r.ms.SetResponder(func(req modelserver.Request) modelserver.Reply {
		if req.Side || !slices.Contains(req.Markers, m) {
			return modelserver.DefaultResponder(req)
		}
		if len(req.ToolResults) == 0 {
			if !slices.Contains(req.ToolNames, tool) {
				return modelserver.Reply{Text: "NO TOOL " + tool + " in " + strings.Join(leoTools(req.ToolNames), " ")}
			}
			return modelserver.Reply{ToolCall: &modelserver.ToolCall{Name: tool, Input: call.input}}
		}
		names, err := agentNames(req.ToolResults[len(req.ToolResults)-1].Text)
		if err != nil {
			return modelserver.Reply{Text: "UNREADABLE " + m + ": " + err.Error()}
		}
		return modelserver.Reply{Text: "LISTED " + m + ": " + strings.Join(names, " ")}
	})
	if dir := os.Getenv("LEO_REALCLI_DUMP"); dir != "" && !r.dumping {
		r.dumping = true
		r.t.Cleanup(func() {
			for _, req := range r.ms.Requests() {
				_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%02d.json", r.h, req.Seq)), req.Body, 0o600)
			}
		})
	}
}

// listed checks the model server's side of a listOnMarker exchange: the
// turn with m offered tool and carried leo's nudge, and a follow-up
// carried the result of that very call, answered with the agent list.
func (s *step) listed(m, tool string) {
	s.Helper()
	first := s.turn(m, 2*time.Minute)
	if !slices.Contains(first.ToolNames, tool) {
		s.Fatalf("turn #%d did not offer %s; leo's tools offered: %v", first.Seq, tool, leoTools(first.ToolNames))
	}
	if !strings.Contains(oneLine(first.System, 1<<20), oneLine(s.r.nudge(), 1<<20)) {
		s.Fatalf("turn #%d's system prompt lacks leo's nudge (system prompt ends %q)", first.Seq, tail(first.System, 300))
	}
	ctx, cancel := s.wait(2 * time.Minute)
	defer cancel()
	reqs, err := s.r.ms.Wait(ctx, func(reqs []modelserver.Request) bool { return followUp(reqs, m, first.Seq) != nil })
	if err != nil {
		s.Fatalf("no request after turn #%d carried the result of its %s call: %v (requests: %s)", first.Seq, tool, err, modelserver.Summary(reqs))
	}
	fu := followUp(reqs, m, first.Seq)
	res := fu.ToolResults[len(fu.ToolResults)-1]
	if want := modelserver.ToolCallID(first.Seq); res.ID != want {
		s.Fatalf("turn #%d carried the result of call %q, want %q", fu.Seq, res.ID, want)
	}
	if !strings.HasPrefix(fu.Reply, "LISTED ") {
		s.Fatalf("the result of %s in turn #%d is not the daemon's agent list: %q (reply %q)", tool, fu.Seq, tail(res.Text, 400), fu.Reply)
	}
	tok, err := apitoken.Read(s.r.w.Home.TokenPath())
	if err != nil {
		s.Fatalf("read the API token: %v", err)
	}
	for _, req := range reqs {
		if strings.Contains(string(req.Body), tok) {
			s.Fatalf("request #%d to the model server carries the API token", req.Seq)
		}
	}
}

// daemonAgents are the names of the daemon's agents, sorted; must (when
// not "") must be among them.
func (s *step) daemonAgents(must string) []string {
	s.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	as, err := s.r.w.Client.List(ctx)
	if err != nil {
		s.Fatalf("list agents: %v", err)
	}
	var names []string
	for _, a := range as {
		names = append(names, a.Name)
	}
	slices.Sort(names)
	if must != "" && !slices.Contains(names, must) {
		s.Fatalf("the daemon's agents %v lack %s", names, must)
	}
	return names
}

// followUp is the first turn after seq whose message holds marker m and
// which carries tool results.
func followUp(reqs []modelserver.Request, m string, seq int) *modelserver.Request {
	for _, req := range modelserver.WithMarker(reqs, m) {
		if req.Seq > seq && len(req.ToolResults) > 0 {
			return &req
		}
	}
	return nil
}

// leoTools are the offered tool names that mention leo.
func leoTools(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.Contains(n, "leo") {
			out = append(out, n)
		}
	}
	return out
}

// agentNames reads leo_list_agents' answer (the daemon's JSON list of
// agents) out of a tool result and returns the names, sorted. The CLI may
// put text around it (codex: "Wall time: … Output:" before it).
func agentNames(text string) ([]string, error) {
	var as []api.Agent
	found := false
	for i := strings.IndexByte(text, '['); i >= 0 && !found; {
		found = json.NewDecoder(strings.NewReader(text[i:])).Decode(&as) == nil
		next := strings.IndexByte(text[i+1:], '[')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	if !found {
		return nil, fmt.Errorf("no JSON list of agents in %q", tail(text, 200))
	}
	names := make([]string, 0, len(as))
	for _, a := range as {
		names = append(names, a.Name)
	}
	slices.Sort(names)
	return names, nil
}

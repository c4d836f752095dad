package real

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// messageAgent: the MCP step's agent sends the agent under test a message
// the way its harness reaches leo — leo's leo_send_message tool, or (a CLI
// without MCP: pi) `leo agent send` run by its shell tool — and the
// message arrives as a turn of the other agent with the sender's line,
// "[message from <sender>] …": the launch, never the model, names the
// sender.
func (r *run) messageAgent(s *step) {
	from, to := r.mcpAgent(), r.h
	s.waitRunning(from, 3*time.Minute)
	trigger, m := r.marker(), r.marker()
	text := "hello from the other agent " + m
	call := r.sendCall(to, text)
	r.ms.SetResponder(func(req modelserver.Request) modelserver.Reply {
		if req.Side || !slices.Contains(req.Markers, trigger) {
			return modelserver.DefaultResponder(req)
		}
		if len(req.ToolResults) == 0 {
			return modelserver.Reply{ToolCall: &modelserver.ToolCall{Name: call.tool, Input: call.input}}
		}
		return modelserver.Reply{Text: "SENT " + trigger}
	})
	defer r.ms.SetResponder(nil)
	res := s.send(from, "Tell "+to+" hello. "+trigger)
	s.delivered(from, res.ID, trigger, 3*time.Minute)
	got := s.turn(m, 3*time.Minute)
	if want := api.MessagePrefix + from + "] " + text; !strings.Contains(got.UserText, want) {
		s.Fatalf("%s's turn #%d got %q, want %q", to, got.Seq, got.UserText, want)
	}
	s.pane(to, "ACK "+m, time.Minute)
	s.pane(from, "SENT "+trigger, time.Minute)
}

// sendCall sends text to agent to: leo_send_message (named like the
// CLI's leo_list_agents), or `leo agent send` through the shell tool.
func (r *run) sendCall(to, text string) leoCall {
	c := r.cli()
	if c.LeoTool != "" {
		args, _ := json.Marshal(map[string]string{"to": to, "message": text})
		return leoCall{tool: strings.Replace(c.LeoTool, "leo_list_agents", "leo_send_message", 1), input: string(args)}
	}
	return leoCall{tool: c.ShellTool, input: shellInput(leoproc.Binary(r.t), "agent", "send", to, text)}
}

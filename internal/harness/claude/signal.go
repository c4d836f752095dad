package claude

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// ParseSignal reads what one payload of leo's hook says, from the payload
// alone (never the transcript: it answers at once; ParseTurnEnd is the
// slow path persistent firings take). The payloads are those captured in
// testdata/hooks/ (docs/harness-behaviour/claude.md, "Hooks leo
// registers").
var _ harness.SignalReader = Claude{}

// hookPayload is the part of any of claude's hook payloads ParseSignal
// reads.
type hookPayload struct {
	SessionID string `json:"session_id"`
	Event     string `json:"hook_event_name"`
	// UserPromptSubmit.
	Prompt *string `json:"prompt"`
	// PermissionRequest, PostToolUse, PostToolUseFailure.
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	// Notification.
	Message          string `json:"message"`
	NotificationType string `json:"notification_type"`
	// Stop, StopFailure.
	LastAssistant *string         `json:"last_assistant_message"`
	Error         json.RawMessage `json:"error"`
	ErrorDetails  json.RawMessage `json:"error_details"`
}

// otherEvents are claude's hook events leo does not register (a settings
// file of the user's may still send them): known, and SignalNone.
var otherEvents = []string{
	"PreToolUse", "PostToolBatch", "UserPromptExpansion", "SessionStart", "SessionEnd",
	"SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "PermissionDenied", "Setup",
	"TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation", "ElicitationResult",
	"ConfigChange", "WorktreeCreate", "WorktreeRemove", "InstructionsLoaded", "CwdChanged",
	"FileChanged", "MessageDisplay",
}

// ParseSignal reads one payload of leo's hook.
func (Claude) ParseSignal(payload []byte) (harness.Signal, error) {
	var p hookPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return harness.Signal{}, fmt.Errorf("claude: hook payload: %w", err)
	}
	s := harness.Signal{SessionID: p.SessionID}
	switch p.Event {
	case "UserPromptSubmit":
		s.Kind = harness.SignalTurnStarted
		if p.Prompt != nil {
			s.Text = *p.Prompt
		}
	case "PermissionRequest":
		// Shown at once with the dialog; the payload names the tool and
		// its input, not the question's words nor the choices (the
		// screen has those: Screen.Prompt).
		s.Kind = harness.SignalNeedsInput
		s.Text = toolAsk(p.ToolName, p.ToolInput)
		s.Prompt = &harness.Prompt{Kind: api.PromptPermission, Text: s.Text}
		// The question tool asks its way through the same request: a
		// question, not a permission. Its choices, as for a permission,
		// are the screen's to give (with the own-answer row).
		if text, ok := askedQuestions(p.ToolInput); ok && p.ToolName == questionTool {
			s.Text = text
			s.Prompt = &harness.Prompt{Kind: api.PromptQuestion, Text: text}
		}
	case "Notification":
		kind, sk := notificationKind(p.NotificationType, p.Message)
		s.Kind = sk
		if sk == harness.SignalNeedsInput {
			s.Text = p.Message
			s.Prompt = &harness.Prompt{Kind: kind, Text: p.Message}
		}
	case "PostToolUse", "PostToolUseFailure":
		// A tool ran (or failed) after its permission prompt was
		// answered, or without one: the turn goes on.
		s.Kind = harness.SignalWorking
	case "Stop":
		s.Kind = harness.SignalTurnEnded
		if p.LastAssistant != nil {
			s.Text = *p.LastAssistant
		}
	case "StopFailure":
		s.Kind, s.Text = harness.SignalTurnFailed, failureText(p.Error, p.ErrorDetails, p.LastAssistant)
		if rawText(p.Error) == errRateLimit {
			s.Kind = harness.SignalLimited
			if p.LastAssistant != nil {
				s.Text = *p.LastAssistant
			}
			s.ResetsAt = resetsAt(s.Text, now())
		}
	default:
		for _, e := range otherEvents {
			if p.Event == e {
				return s, nil
			}
		}
		return harness.Signal{}, fmt.Errorf("claude: hook payload: hook_event_name %q is not one of claude's", p.Event)
	}
	return s, nil
}

// errRateLimit is the error kind of StopFailure for HTTP 429 and claude's
// usage limits (captured: testdata/hooks/rate-limited_*); others seen are
// "unknown" (an HTTP 400), and claude's code names authentication_failed,
// billing_error, invalid_request, server_error, max_output_tokens.
const errRateLimit = "rate_limit"

// now is the clock resetsAt resolves "3pm" against (tests set it).
var now = time.Now

// failureText is a failed turn's words: the error kind and details, or the
// reply claude made up for it when the kind says nothing ("unknown" for
// an API error it cannot name).
func failureText(kind, details json.RawMessage, reply *string) string {
	text := rawText(kind)
	if d := rawText(details); d != "" {
		text = strings.TrimSpace(text + ": " + d)
	}
	if (text == "" || text == "unknown") && reply != nil && *reply != "" {
		text = *reply
	}
	return text
}

// notificationKind maps a Notification to attention. claude 2.1.197 and
// 2.1.332 send (notification_type: message):
//
//   - permission_prompt: "Claude needs your permission" — 6 s after a
//     permission prompt showed, if nobody answered it meanwhile;
//   - worker_permission_prompt: a teammate's tool asks the same;
//   - elicitation_dialog: "Claude Code needs your input" (an MCP server's
//     question);
//   - elicitation_complete, elicitation_response: that question answered;
//   - idle_prompt: "Claude is waiting for your input" — a minute after a
//     turn ended. That is an idle agent, not one that needs a person: the
//     turn's Stop said idle already, and taking it for needs_input would
//     hold every message to an agent nobody typed to for a minute.
//
// Without a type (older payloads) the message decides.
func notificationKind(typ, message string) (string, harness.SignalKind) {
	switch typ {
	case "permission_prompt", "worker_permission_prompt":
		return api.PromptPermission, harness.SignalNeedsInput
	case "elicitation_dialog":
		return api.PromptQuestion, harness.SignalNeedsInput
	case "elicitation_complete", "elicitation_response":
		return "", harness.SignalWorking
	case "":
		if strings.Contains(strings.ToLower(message), "permission") {
			return api.PromptPermission, harness.SignalNeedsInput
		}
	}
	return "", harness.SignalNone
}

// maxAsk bounds the tool input a permission signal quotes (a heredoc
// command can be megabytes).
const maxAsk = 2000

// toolAsk is what a permission request asks about: the tool and the
// argument a person judges it by ("Bash: touch x"), else the tool and its
// input as JSON.
func toolAsk(tool string, raw json.RawMessage) string {
	var input map[string]json.RawMessage
	if json.Unmarshal(raw, &input) != nil {
		if t := rawText(raw); t != "" {
			return cut(tool+": "+t, maxAsk)
		}
		return tool
	}
	for _, key := range []string{"command", "file_path", "notebook_path", "url", "path", "pattern", "query"} {
		var v string
		if json.Unmarshal(input[key], &v) == nil && v != "" {
			return cut(tool+": "+v, maxAsk)
		}
	}
	if len(input) == 0 {
		return tool
	}
	b, _ := json.Marshal(input)
	return cut(tool+": "+string(b), maxAsk)
}

// cut shortens s to at most n bytes on a rune boundary, marked with "…".
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

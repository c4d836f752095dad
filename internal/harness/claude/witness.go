package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// claude writes a "user" entry to the conversation's transcript
// (<config dir>/projects/<encoded real workspace>/<id>.jsonl) as soon as it
// takes a message as a turn, within a fraction of a second of Enter, while
// its screen may still show the text in the box for seconds. That entry is
// the proof delivery looks for.
var _ harness.TurnWitness = Claude{}

// transcriptTail bounds how much of a transcript's end is read per poll. A
// message being confirmed was just sent, so it is near the end; a long
// conversation's transcript can be many megabytes.
const transcriptTail = 4 << 20

// UserTurns returns the user messages claude recorded at or after q.Since,
// oldest first: in conversation id, or (id "") in every conversation of
// q.Workspace not in q.Exclude. Tool results, meta entries (slash command
// output), sub-agent (sidechain) turns and compaction summaries are not
// user messages and are left out.
func (Claude) UserTurns(ctx context.Context, q harness.SessionQuery, id string) ([]harness.UserTurn, error) {
	paths, err := transcriptPaths(q, id)
	if err != nil {
		return nil, err
	}
	var out []harness.UserTurn
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		turns, err := transcriptUserTurns(p, q.Since)
		if err != nil {
			return nil, err
		}
		out = append(out, turns...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

var _ harness.TurnRecorder = Claude{}

// TurnActivity reads the turn starts and ends claude recorded at or after
// q.Since, in the transcripts UserTurns reads. claude (2.1.197 and
// 2.1.332, testdata/records_v*.jsonl) writes a turn's start as the user
// entry of the message and its end as:
//
//   - a system entry of subtype turn_duration, once the turn is over;
//   - an assistant entry with isApiErrorMessage, when the model's API
//     failed (2.1.332 writes no turn_duration then; 2.1.197 writes both,
//     one end). Its text is the failure in claude's words ("API Error:
//     400 …": Failed), and its error field claude's name for it
//     ("rate_limit" for an HTTP 429, as its StopFailure hook says:
//     Limited);
//   - a user entry "[Request interrupted by user]", when the turn was
//     interrupted after the model began to answer.
//
// A turn interrupted before the model answered gets no end at all: claude
// takes the message back into its input line and writes nothing. So the
// record says that turn runs until the next one starts, and EndsUnrecorded
// is set: claude draws every running turn as busy, and delivery takes an
// idle screen over the record's word there. Slash commands (/compact) and
// their output, tool results, meta, sub-agent (sidechain) entries and
// compaction summaries are neither starts nor ends.
func (Claude) TurnActivity(ctx context.Context, q harness.SessionQuery, id string) (harness.TurnActivity, error) {
	paths, err := transcriptPaths(q, id)
	if err != nil {
		return harness.TurnActivity{}, err
	}
	out := harness.TurnActivity{EndsUnrecorded: true}
	var lastEnd time.Time
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return harness.TurnActivity{}, err
		}
		a, end, err := transcriptActivityAt(p, q.Since)
		if err != nil {
			return harness.TurnActivity{}, err
		}
		out.Found = out.Found || a.Found
		out.Running = out.Running || a.Running
		out.Ended += a.Ended
		if !end.IsZero() && !end.Before(lastEnd) {
			lastEnd = end
			out.Failed, out.Limited = a.Failed, a.Limited
		}
	}
	return out, nil
}

// notTurns start the text of user entries that are claude's own: a slash
// command, its output, a "!" shell command and its output.
var notTurns = []string{
	"<command-name>", "<command-message>", "<local-command-", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
}

// interruptedPrefix starts the user entry claude writes when a turn is
// interrupted after the model began to answer.
const interruptedPrefix = "[Request interrupted by user"

// markOf is the turn start or end an entry is (see TurnActivity).
func markOf(e transcriptEntry) (turnMark, bool) {
	if e.IsSidechain || e.Timestamp.IsZero() {
		return turnMark{}, false
	}
	switch e.Type {
	case "system":
		return turnMark{at: e.Timestamp, end: true}, e.Subtype == "turn_duration"
	case "assistant":
		if !e.IsAPIErrorMessage {
			return turnMark{}, false
		}
		return turnMark{at: e.Timestamp, end: true, failed: apiErrorText(e), limited: apiErrorName(e) == "rate_limit"}, true
	case "user":
		if e.IsMeta || e.IsCompactSummary {
			return turnMark{}, false
		}
		text, ok := userText(e.Message.Content)
		if !ok {
			return turnMark{}, false
		}
		text = strings.TrimSpace(text)
		if strings.HasPrefix(text, interruptedPrefix) {
			return turnMark{at: e.Timestamp, end: true, interrupted: true}, true
		}
		for _, p := range notTurns {
			if strings.HasPrefix(text, p) {
				return turnMark{}, false
			}
		}
		return turnMark{at: e.Timestamp}, true
	}
	return turnMark{}, false
}

// transcriptPaths are the transcripts a lookup reads: conversation id's,
// or (id "") every conversation of q.Workspace not in q.Exclude that was
// written to since q.Since.
func transcriptPaths(q harness.SessionQuery, id string) ([]string, error) {
	if id != "" {
		if uuid.Validate(id) != nil {
			return nil, nil
		}
		return []string{TranscriptPath(q.Env, q.Workspace, id)}, nil
	}
	dir := ProjectDir(q.Env, q.Workspace)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, e := range entries {
		sid, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || e.IsDir() || uuid.Validate(sid) != nil || slices.Contains(q.Exclude, sid) {
			continue
		}
		if info, err := e.Info(); err != nil || info.ModTime().Before(q.Since) {
			continue // not written to since: holds no newer turn
		}
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	return paths, nil
}

// transcriptEntry is the part of a transcript line UserTurns,
// TurnActivity and Conversation read.
type transcriptEntry struct {
	Type              string    `json:"type"`
	UUID              string    `json:"uuid"`
	Subtype           string    `json:"subtype"`
	SessionID         string    `json:"sessionId"`
	Timestamp         time.Time `json:"timestamp"`
	IsMeta            bool      `json:"isMeta"`
	IsSidechain       bool      `json:"isSidechain"`
	IsCompactSummary  bool      `json:"isCompactSummary"`
	IsAPIErrorMessage bool      `json:"isApiErrorMessage"`
	// Error is claude's name for an API error ("unknown", "rate_limit"):
	// raw, so that an entry whose error is something else still decodes.
	Error   json.RawMessage `json:"error"`
	Message struct {
		Role string `json:"role"`
		// ID is the model's message id: claude writes a message as one
		// line per content block, each with the id and the usage.
		ID      string          `json:"id"`
		Content json.RawMessage `json:"content"`
		Usage   *messageUsage   `json:"usage"`
	} `json:"message"`
}

// messageUsage is the model's token counts of an assistant message, as
// claude copies them from the Messages API.
type messageUsage struct {
	InputTokens      int64 `json:"input_tokens"`
	OutputTokens     int64 `json:"output_tokens"`
	CacheReadTokens  int64 `json:"cache_read_input_tokens"`
	CacheWriteTokens int64 `json:"cache_creation_input_tokens"`
}

// userText is the text of a user message: a plain string, or the text
// parts of a content array. An array without text (tool results) is not a
// message the user sent.
func userText(raw json.RawMessage) (string, bool) {
	if raw = bytes.TrimSpace(raw); len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, true
		}
		return "", false
	}
	// A text part holds the bytes "text" (or a \u escape of them):
	// without them, as in most tool results, there is nothing to decode.
	// Inside a JSON string a quote is escaped, so tool output cannot hold
	// those bytes.
	if !bytes.Contains(raw, []byte(`"text"`)) && !bytes.Contains(raw, []byte(`\u`)) {
		return "", false
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	if len(texts) == 0 {
		return "", false
	}
	return strings.Join(texts, "\n"), true
}

// maxFailedRunes bounds the words kept of a failure (the cache keeps one
// per failed turn).
const maxFailedRunes = 1000

// apiErrorText is an API error entry's text ("API Error: 400 …"), cut at
// maxFailedRunes.
func apiErrorText(e transcriptEntry) string {
	text, _ := userText(e.Message.Content)
	text = strings.TrimSpace(text)
	if text == "" {
		if text = apiErrorName(e); text == "" {
			text = "API error"
		}
	}
	if r := []rune(text); len(r) > maxFailedRunes {
		text = string(r[:maxFailedRunes-1]) + "…"
	}
	return text
}

// apiErrorName is an API error entry's error field, when it is a name.
func apiErrorName(e transcriptEntry) string {
	var name string
	if json.Unmarshal(e.Error, &name) != nil {
		return ""
	}
	return name
}

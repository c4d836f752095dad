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

// transcriptEntry is the part of a transcript line UserTurns reads.
type transcriptEntry struct {
	Type             string    `json:"type"`
	SessionID        string    `json:"sessionId"`
	Timestamp        time.Time `json:"timestamp"`
	IsMeta           bool      `json:"isMeta"`
	IsSidechain      bool      `json:"isSidechain"`
	IsCompactSummary bool      `json:"isCompactSummary"`
	Message          struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
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

package codex

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.TurnWitness = Codex{}

// UserTurns reads the user messages codex recorded in its rollouts
// ($CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<thread id>.jsonl) at or after
// q.Since: in the rollout of thread id, or, with id "", in every rollout of
// q.Workspace modified since then whose thread is not in q.Exclude.
//
// codex 0.171.0 records one user turn three ways; the first kind a rollout
// holds is the one read, so a turn is never counted twice:
//
//  1. event_msg item_completed whose item is a UserMessage (0.171.0);
//  2. event_msg user_message (earlier versions);
//  3. response_item message with role "user" — which codex also uses for
//     the context it injects itself (environment_context, AGENTS.md
//     instructions…): those are left out.
func (Codex) UserTurns(ctx context.Context, q harness.SessionQuery, id string) ([]harness.UserTurn, error) {
	since := q.Since.Truncate(time.Millisecond) // rollouts stamp milliseconds
	paths, err := rolloutsFor(ctx, q, id, since)
	if err != nil {
		return nil, err
	}
	var out []harness.UserTurn
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		turns, err := rolloutUserTurns(p, since)
		if err != nil {
			return nil, err
		}
		out = append(out, turns...)
	}
	slices.SortStableFunc(out, func(a, b harness.UserTurn) int { return a.At.Compare(b.At) })
	return out, nil
}

var _ harness.TurnRecorder = Codex{}

// TurnActivity reads the turn records of the rollouts UserTurns reads:
// codex 0.171.0 writes event_msg task_started when a turn starts (before
// the user message), and task_complete when it ends — also when the model
// answered an error, with that error (Failed; a usage limit is Limited,
// see turnError) — or turn_aborted when it was interrupted. A message
// submitted while a turn runs is folded into that turn, and while codex
// streams the reply its screen looks idle: the rollout is the witness.
//
// With id "" only threads begun at or after q.Since are read: a TUI
// launched then starts a new thread with its first message, and an older
// thread of the workspace (the one a reset left, one a person runs) is
// none of its turns.
func (Codex) TurnActivity(ctx context.Context, q harness.SessionQuery, id string) (harness.TurnActivity, error) {
	since := q.Since.Truncate(time.Millisecond)
	paths, err := rolloutsFor(ctx, q, id, since)
	if err != nil {
		return harness.TurnActivity{}, err
	}
	var out harness.TurnActivity
	var lastEnd time.Time
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return harness.TurnActivity{}, err
		}
		if id == "" && !since.IsZero() {
			info, err := os.Stat(p)
			if err != nil {
				continue
			}
			if meta, ok := cachedMeta(p, info); !ok || meta.when.Before(since) {
				continue
			}
		}
		a, end, err := rolloutActivityAt(p, since)
		if err != nil {
			return harness.TurnActivity{}, err
		}
		out.Found = out.Found || a.Found
		out.Running = out.Running || a.Running
		out.Ended += a.Ended
		if !end.IsZero() && !end.Before(lastEnd) {
			lastEnd = end
			out.Failed, out.Limited, out.ResetsAt, out.Reply = a.Failed, a.Limited, a.ResetsAt, a.Reply
		}
	}
	return out, nil
}

// rolloutsFor are the rollouts a lookup reads: thread id's, or (id "")
// every rollout of q.Workspace modified since then whose thread is not in
// q.Exclude.
func rolloutsFor(ctx context.Context, q harness.SessionQuery, id string, since time.Time) ([]string, error) {
	if id != "" {
		if strings.ContainsAny(id, `/\`) {
			return nil, nil
		}
		// A resumed thread keeps appending to the rollout it started in,
		// which may be older than Since: it is found by its id (and
		// remembered), not by date.
		p, err := findRollout(ctx, SessionsDir(q.Env), id)
		if err != nil || p == "" {
			return nil, err
		}
		return []string{p}, nil
	}
	var from time.Time
	if !since.IsZero() {
		from = since.AddDate(0, 0, -1)
	}
	mine := inWorkspace(q.Workspace)
	var paths []string
	err := walkRollouts(ctx, SessionsDir(q.Env), from, func(path string, info fs.FileInfo) error {
		if info.ModTime().Before(since) {
			return nil
		}
		meta, ok := cachedMeta(path, info)
		if !ok || !mine(meta.cwd) || slices.Contains(q.Exclude, meta.id) {
			return nil
		}
		paths = append(paths, path)
		return nil
	})
	return paths, err
}

// inWorkspace returns a test of a rollout's cwd against workspace: codex
// records the directory it runs in as the kernel reports it, so a
// workspace reached through a symlink shows there by its real path. Both
// spellings match.
func inWorkspace(workspace string) func(cwd string) bool {
	if workspace == "" {
		return func(string) bool { return false }
	}
	written := filepath.Clean(workspace)
	real, err := filepath.EvalSymlinks(written)
	if err != nil {
		real = written
	}
	return func(cwd string) bool {
		if cwd == "" {
			return false
		}
		c := filepath.Clean(cwd)
		return c == written || c == real
	}
}

// maxRolloutLine bounds one rollout line; longer ones (huge tool outputs)
// are skipped, not read into memory.
const maxRolloutLine = 16 << 20

// injectedPrefixes start the user-role items codex writes itself.
var injectedPrefixes = []string{
	"<environment_context>",
	"<user_instructions>",
	"# AGENTS.md instructions",
	"<INSTRUCTIONS>",
	"<skills_instructions>",
	"<permissions instructions>",
	"<turn_aborted>",
	"<user_shell_command>",
	"<subagent_notification>",
}

// rolloutLine is the part of a rollout line UserTurns and Conversation
// read.
type rolloutLine struct {
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Payload   struct {
		Type             string          `json:"type"`
		Role             string          `json:"role"`
		Message          string          `json:"message"`
		TurnID           string          `json:"turn_id"`
		LastAgentMessage *string         `json:"last_agent_message"`
		Error            json.RawMessage `json:"error"`
		Name             string          `json:"name"`
		Arguments        json.RawMessage `json:"arguments"`
		Input            json.RawMessage `json:"input"`
		Action           json.RawMessage `json:"action"`
		Item             struct {
			Type    string `json:"type"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"item"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Meta struct {
			Items []struct {
				Provenance struct {
					Type string `json:"type"`
				} `json:"provenance"`
			} `json:"content_item_metadata"`
		} `json:"internal_chat_message_metadata_passthrough"`
		Info *struct {
			Total *tokenUsage `json:"total_token_usage"`
			Last  *tokenUsage `json:"last_token_usage"`
		} `json:"info"`
	} `json:"payload"`
	Metadata struct {
		CompactionOutput bool `json:"compaction_output"`
	} `json:"metadata"`
}

// lineReader reads a rollout line by line, reusing one buffer for the
// lines longer than its read buffer.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next whole line (without its newline) and the bytes it
// took; the line is valid until the next call. A line longer than
// maxRolloutLine is drained and reported as tooLong; a last line without a
// newline is still being written and reads as io.EOF.
func (lr *lineReader) next() (line []byte, n int, tooLong bool, err error) {
	chunk, err := lr.r.ReadSlice('\n')
	if err == nil {
		return chunk[:len(chunk)-1], len(chunk), false, nil // the usual case: no copy
	}
	lr.buf = lr.buf[:0]
	for {
		n += len(chunk)
		if len(lr.buf)+len(chunk) > maxRolloutLine {
			tooLong = true
			lr.buf = lr.buf[:0]
		} else if !tooLong {
			lr.buf = append(lr.buf, chunk...)
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(lr.buf, []byte("\n")), n, tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			chunk, err = lr.r.ReadSlice('\n')
		default:
			return nil, 0, false, err
		}
	}
}

// headTypes are a line's payload type and, for an item_completed, its
// item's type (for a message, its role), read where codex writes them,
// near the line's start ({"timestamp":…,"type":…,"payload":{"type":"…",
// …,"item":{"type":"…"), without parsing the line; "" where the head does
// not say. A tool's output, megabytes, is passed over by its head instead
// of being searched.
func headTypes(line []byte) (payload, sub string) {
	head := line[:min(len(line), 512)]
	payload = quotedAfter(head, `"payload":{"type":"`)
	switch payload {
	case "item_completed":
		sub = quotedAfter(head, `"item":{"type":"`)
	case "message":
		sub = quotedAfter(head, `"role":"`)
	}
	return payload, sub
}

func quotedAfter(b []byte, key string) string {
	_, rest, ok := bytes.Cut(b, []byte(key))
	if !ok {
		return ""
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return ""
	}
	return string(rest[:end])
}

func mayHoldUserTurn(line []byte) bool {
	switch payload, sub := headTypes(line); {
	case payload == "item_completed" && sub != "":
		return sub == "UserMessage"
	case payload == "message" && sub != "":
		return sub == "user"
	case payload != "":
		return payload == "item_completed" || payload == "user_message" || payload == "message"
	}
	return bytes.Contains(line, []byte(`"UserMessage"`)) ||
		bytes.Contains(line, []byte(`"user_message"`)) ||
		bytes.Contains(line, []byte(`"role":"user"`)) ||
		bytes.Contains(line, []byte(`"role": "user"`))
}

// userTurnOf classifies one parsed line: kind 0, 1 or 2 as in UserTurns.
func userTurnOf(l rolloutLine) (kind int, text string, ok bool) {
	p := l.Payload
	switch {
	case l.Type == "event_msg" && p.Type == "item_completed" && p.Item.Type == "UserMessage":
		var parts []string
		for _, c := range p.Item.Content {
			if c.Type == "text" {
				parts = append(parts, c.Text)
			}
		}
		return 0, strings.Join(parts, ""), len(parts) > 0
	case l.Type == "event_msg" && p.Type == "user_message":
		return 1, p.Message, true
	case l.Type == "response_item" && p.Type == "message" && p.Role == "user":
		for _, m := range p.Meta.Items {
			if t := m.Provenance.Type; t != "" && t != "user" {
				return 0, "", false
			}
		}
		var parts []string
		for _, c := range p.Content {
			if c.Type == "input_text" || c.Type == "text" {
				parts = append(parts, c.Text)
			}
		}
		text = strings.Join(parts, "")
		trimmed := strings.TrimSpace(text)
		for _, pre := range injectedPrefixes {
			if strings.HasPrefix(trimmed, pre) {
				return 0, "", false
			}
		}
		return 2, text, len(parts) > 0
	}
	return 0, "", false
}

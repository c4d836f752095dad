package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.Compacter = Codex{}

// CompactCommand is codex's slash command that summarises the thread (it
// runs when typed or pasted, then Enter).
func (Codex) CompactCommand() string { return "/compact" }

// Compactions reads what codex 0.171.0 records of /compact in the rollouts
// UserTurns reads: a top-level line of type "compacted" (its payload the
// summary), written once the summary is in. codex records no refusal.
// Rollouts are scanned whole (a compaction is waited for seconds, not
// polled for every message), skipping lines by their leading timestamp
// and by a byte search before any JSON is parsed.
func (Codex) Compactions(ctx context.Context, q harness.SessionQuery, id string) ([]harness.Compaction, error) {
	since := q.Since.Truncate(time.Millisecond)
	paths, err := rolloutsFor(ctx, q, id, since)
	if err != nil {
		return nil, err
	}
	var out []harness.Compaction
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cs, err := rolloutCompactions(p, since)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		out = append(out, cs...)
	}
	slices.SortStableFunc(out, func(a, b harness.Compaction) int { return a.At.Compare(b.At) })
	return out, nil
}

func rolloutCompactions(path string, since time.Time) ([]harness.Compaction, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	id := rolloutID(path)
	r := newLineReader(f)
	var out []harness.Compaction
	for {
		line, _, tooLong, err := r.next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if tooLong {
			continue
		}
		if id == "" && bytes.Contains(line, []byte(`"session_meta"`)) {
			var m struct {
				Payload struct{ ID string } `json:"payload"`
			}
			if json.Unmarshal(line, &m) == nil {
				id = m.Payload.ID
			}
		}
		if !bytes.Contains(line, []byte(`"compacted"`)) {
			continue
		}
		if at, ok := leadingTimestamp(line); ok && !since.IsZero() && at.Before(since) {
			continue
		}
		var l struct {
			Timestamp string `json:"timestamp"`
			Type      string `json:"type"`
		}
		if json.Unmarshal(line, &l) != nil || l.Type != "compacted" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, l.Timestamp)
		if err != nil || (!since.IsZero() && at.Before(since)) {
			continue
		}
		out = append(out, harness.Compaction{SessionID: id, At: at})
	}
}

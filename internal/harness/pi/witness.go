package pi

import (
	"context"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var (
	_ harness.TurnWitness        = Pi{}
	_ harness.TurnRecorder       = Pi{}
	_ harness.Compacter          = Pi{}
	_ harness.ConversationReader = Pi{}
)

// forEachFile runs f over the entries of every session file the lookup
// reads (recordFiles), with the file's conversation id.
func forEachFile(ctx context.Context, q harness.SessionQuery, id string, f func(id string, es []entry)) error {
	paths, err := recordFiles(ctx, q, id)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		es, err := readEntries(p)
		if err != nil {
			return err
		}
		f(fileID(p), es)
	}
	return nil
}

// UserTurns reads the user messages pi recorded at or after q.Since: the
// text as pi stored it (a long paste in full, not its [paste #1 …]
// marker). A session's first message is recorded with the first model
// answer (pi writes the file then): before that the screen is the witness.
func (Pi) UserTurns(ctx context.Context, q harness.SessionQuery, id string) ([]harness.UserTurn, error) {
	since := q.Since.Truncate(time.Millisecond) // pi stamps milliseconds
	var out []harness.UserTurn
	err := forEachFile(ctx, q, id, func(sid string, es []entry) {
		for _, e := range es {
			if e.kind == "user" && !e.at.Before(since) {
				out = append(out, harness.UserTurn{SessionID: sid, Text: e.text, At: e.at})
			}
		}
	})
	slices.SortStableFunc(out, func(a, b harness.UserTurn) int { return a.At.Compare(b.At) })
	return out, err
}

// limitPattern matches the words of a usage or rate limit in pi's error
// messages ("429 …", "rate limit", "quota").
var limitPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b429\b|rate.?limit|too many requests|quota|usage limit`)
})

// TurnActivity reads the turns since q.Since: a user message starts one,
// an assistant message that is no tool call ends it (turn records above).
// Each attempt of an error pi retries is recorded as an ending (failed)
// assistant message, so such a turn shows ended and failed until the
// retry's answer is recorded; the screen shows pi retrying (busy).
func (Pi) TurnActivity(ctx context.Context, q harness.SessionQuery, id string) (harness.TurnActivity, error) {
	since := q.Since.Truncate(time.Millisecond)
	var out harness.TurnActivity
	var lastAt time.Time
	err := forEachFile(ctx, q, id, func(_ string, es []entry) {
		running := false
		var last *entry
		for i := range es {
			e := &es[i]
			if e.at.Before(since) {
				continue
			}
			switch {
			case e.kind == "user":
				running = true
			case e.ends():
				out.Ended++
				running = false
				last = e
			default:
				continue
			}
			out.Found = true
		}
		if len(es) > 0 && !es[len(es)-1].at.Before(lastAt) {
			lastAt = es[len(es)-1].at
			out.Running = running
			out.Failed, out.Limited, out.Reply = "", false, ""
			if last != nil {
				switch last.stop {
				case "error":
					out.Failed = last.err
					if out.Failed == "" {
						out.Failed = "the model call failed"
					}
					out.Limited = limitPattern().MatchString(last.err)
				case "aborted":
				default:
					out.Reply = last.text
				}
			}
		}
	})
	return out, err
}

// CompactCommand is pi's slash command that summarises the session.
func (Pi) CompactCommand() string { return "/compact" }

// Compactions reads pi's "compaction" entries (written once the summary is
// in). pi records no refusal: a session with nothing to compact leaves no
// entry, and the command's wait ends without proof.
func (Pi) Compactions(ctx context.Context, q harness.SessionQuery, id string) ([]harness.Compaction, error) {
	since := q.Since.Truncate(time.Millisecond)
	var out []harness.Compaction
	err := forEachFile(ctx, q, id, func(sid string, es []entry) {
		for _, e := range es {
			if e.kind == "compaction" && !e.at.Before(since) {
				out = append(out, harness.Compaction{SessionID: sid, At: e.at})
			}
		}
	})
	slices.SortStableFunc(out, func(a, b harness.Compaction) int { return a.At.Compare(b.At) })
	return out, err
}

// Conversation reads session id's turns: each user message and what pi
// recorded after it up to the next one. The reply is the last text after
// the last tool call; usage and cost are summed over the turn's
// assistant messages; a turn whose last assistant message is "error" is
// failed, "aborted" interrupted, and one with no ending message yet runs.
func (Pi) Conversation(ctx context.Context, q harness.SessionQuery, id string) ([]harness.Turn, error) {
	if id == "" {
		return nil, nil
	}
	var turns []harness.Turn
	err := forEachFile(ctx, q, id, func(_ string, es []entry) {
		var t *harness.Turn
		for _, e := range es {
			switch {
			case e.kind == "user":
				if t != nil && t.Outcome == harness.OutcomeRunning && len(t.Tools) == 0 && t.Reply == "" && t.Usage == nil {
					// Typed while nothing answered yet: one turn's inputs.
					t.User += "\n\n" + e.text
					continue
				}
				turns = append(turns, harness.Turn{ID: e.id, StartedAt: e.at, User: e.text, Outcome: harness.OutcomeRunning})
				t = &turns[len(turns)-1]
			case e.kind == "assistant" && t != nil:
				t.Tools = append(t.Tools, e.tools...)
				if len(e.tools) > 0 || e.text != "" {
					t.Reply = e.text
				}
				t.Usage = t.Usage.Add(e.usage)
				if e.cost != nil {
					c := *e.cost
					if t.CostUSD != nil {
						c += *t.CostUSD
					}
					t.CostUSD = &c
				}
				if !e.ends() {
					continue
				}
				t.EndedAt = e.at
				t.Error = ""
				switch e.stop {
				case "error":
					t.Outcome, t.Error = harness.OutcomeError, e.err
				case "aborted":
					t.Outcome = harness.OutcomeInterrupted
				default:
					t.Outcome = harness.OutcomeOK
				}
			}
		}
	})
	return turns, err
}

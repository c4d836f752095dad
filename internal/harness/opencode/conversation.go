package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.ConversationReader = Opencode{}

// Conversation reads session id's turns from opencode's store, the rows
// UserTurns and TurnActivity read (see activity.go for how opencode
// 1.18.33 stores a turn). A turn is a user message and the assistant
// messages that answer it (their parentID), one per step: User is the
// user message's text parts; Tools its tool parts (name, state.input);
// Reply the last text part after the last tool part; Usage and CostUSD
// the sum of the assistant messages' tokens and cost (each the sum of its
// steps' step-finish parts). The turn's outcome is its last assistant
// message's: completed with a finish that ends the turn (ok), an error
// (MessageAbortedError: interrupted; any other: error, in opencode's
// words), or not yet (running) — unless a later turn was answered, when
// opencode gave this one up without a word (killed mid-turn): interrupted.
//
// Of the messages read whole once, those that no longer change (an
// assistant message completed, a user message another followed) are kept,
// so the next read after opencode committed more decodes only the message
// rows and the parts of the messages that are new or still being written.
func (Opencode) Conversation(ctx context.Context, q harness.SessionQuery, id string) ([]harness.Turn, error) {
	if id == "" {
		return nil, errors.New("opencode: conversation: no session id")
	}
	path, err := dbPath(q.Env)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return fromStore(path, func(p string) ([]harness.Turn, error) { return readConversation(p, id) })
}

// convCache is what Conversation keeps of one session between calls.
type convCache struct {
	version string // the store's state turns are for
	turns   []harness.Turn
	// done are the messages read whole that will not change, by id.
	done map[string]*msgSummary
}

// msgSummary is what a conversation keeps of one message's parts.
type msgSummary struct {
	user  string // a user message's text parts, joined by newlines (clipped)
	tools []harness.ToolCall
	// tail is an assistant message's last text after its last tool (its
	// last text when it ran none); hasTail whether it has one.
	tail    string
	hasTail bool
}

func readConversation(path, id string) ([]harness.Turn, error) {
	st := storeOf(path)
	st.mu.Lock()
	defer st.mu.Unlock()
	wal := st.wal
	f, err := openSQLiteCached(path, &wal)
	if err != nil {
		st.wal = walCache{}
		return nil, err
	}
	defer f.Close()
	st.wal = wal
	version := ""
	if f.walHdr != nil {
		version = storeVersion(f)
	}
	cc := st.conv[id]
	switch {
	case cc == nil || version == "": // no WAL: the store may be rewritten whole, keep nothing
		cc = &convCache{}
	case cc.version == version:
		return cloneTurns(cc.turns), nil
	}
	turns, err := readConversationFrom(f, id, cc)
	if err != nil {
		return nil, err
	}
	if version != "" {
		cc.version, cc.turns = version, turns
		if st.conv == nil {
			st.conv = map[string]*convCache{}
		}
		if _, ok := st.conv[id]; !ok && len(st.conv) >= maxCachedAnswers {
			clear(st.conv)
		}
		st.conv[id] = cc
	}
	return cloneTurns(turns), nil
}

func readConversationFrom(f *sqliteFile, id string, cc *convCache) ([]harness.Turn, error) {
	tables, err := storeTables(f)
	if err != nil {
		return nil, err
	}
	indexes, err := f.indexes()
	if err != nil {
		return nil, err
	}
	all, err := sessionMessages(f, tables, map[string]bool{id: true}, 0)
	if err != nil {
		return nil, err
	}
	msgs := all[id]
	read := map[string]*msgSummary{}
	var mids []string
	for _, m := range msgs {
		if s := cc.done[m.id]; s != nil {
			read[m.id] = s
			continue
		}
		read[m.id] = &msgSummary{}
		mids = append(mids, m.id)
	}
	err = eachPart(f, tables, indexes, mids, func(mid string, p *partData) {
		read[mid].add(p)
	})
	if err != nil {
		return nil, err
	}
	done := make(map[string]*msgSummary, len(msgs))
	for i, m := range msgs {
		if (m.Role == "assistant" && m.Time.Completed > 0) || (m.Role == "user" && i < len(msgs)-1) {
			done[m.id] = read[m.id]
		}
	}
	cc.done = done // what the store no longer holds (a reverted turn) goes
	return buildTurns(msgs, read), nil
}

// add takes one part of the message in.
func (s *msgSummary) add(p *partData) {
	switch p.Type {
	case "text":
		if p.Synthetic {
			return
		}
		if s.user != "" {
			s.user += "\n"
		}
		s.user = harness.ClipText(s.user+p.Text, harness.TurnTextMax)
		s.tail, s.hasTail = harness.ClipText(p.Text, harness.TurnTextMax), true
	case "tool":
		s.tools = append(s.tools, harness.ToolCall{Name: p.Tool, Input: compactInput(p.State.Input)})
		s.tail, s.hasTail = "", false
	}
}

// compactInput is a tool's input as compact JSON, cut at ToolInputMax.
func compactInput(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return harness.ClipText(string(raw), harness.ToolInputMax)
	}
	return harness.ClipText(b.String(), harness.ToolInputMax)
}

// buildTurns makes the turns of a session's messages (in order) and what
// their parts hold.
func buildTurns(msgs []storedMessage, parts map[string]*msgSummary) []harness.Turn {
	var turns []harness.Turn
	byID := map[string]int{}
	answered := map[int]bool{} // turns an assistant message answers
	for _, m := range msgs {
		s := parts[m.id]
		switch m.Role {
		case "user":
			byID[m.id] = len(turns)
			turns = append(turns, harness.Turn{ID: m.id, StartedAt: time.UnixMilli(m.at), User: s.user, Outcome: harness.OutcomeRunning})
		case "assistant":
			i, ok := byID[m.ParentID]
			if !ok { // no parent named: the turn it follows
				if i = len(turns) - 1; i < 0 {
					continue
				}
			}
			answered[i] = true
			t := &turns[i]
			t.Tools = append(t.Tools, s.tools...)
			if len(s.tools) > 0 || s.hasTail {
				t.Reply = s.tail
			}
			if tk := m.Tokens; tk != nil && (tk.Input|tk.Output|tk.Cache.Read|tk.Cache.Write) != 0 {
				t.Usage = t.Usage.Add(&harness.Usage{InputTokens: tk.Input, OutputTokens: tk.Output, CacheReadTokens: tk.Cache.Read, CacheWriteTokens: tk.Cache.Write})
			}
			if m.Cost > 0 {
				c := m.Cost
				if t.CostUSD != nil {
					c += *t.CostUSD
				}
				t.CostUSD = &c
			}
			t.Outcome, t.Error, t.EndedAt = harness.OutcomeRunning, "", time.Time{}
			if m.ends() {
				t.EndedAt = time.UnixMilli(max(m.Time.Completed, m.at))
				t.Outcome = harness.OutcomeOK
				if m.failed() {
					t.Outcome = harness.OutcomeInterrupted
					if words, _ := m.failure(); words != "" {
						t.Outcome, t.Error = harness.OutcomeError, words
					}
				}
			}
		}
	}
	// A turn still running when a later one was answered was given up.
	last := -1
	for i := range turns {
		if answered[i] {
			last = i
		}
	}
	for i := 0; i < last; i++ {
		if turns[i].Outcome == harness.OutcomeRunning {
			turns[i].Outcome = harness.OutcomeInterrupted
		}
	}
	return turns
}

// failed reports whether the message carries an error.
func (m messageData) failed() bool { return len(m.Error) > 0 && string(m.Error) != "null" }

// cloneTurns copies turns so the kept answer never leaves the cache.
func cloneTurns(turns []harness.Turn) []harness.Turn {
	out := slices.Clone(turns)
	for i := range out {
		out[i].Tools = slices.Clone(out[i].Tools)
		if u := out[i].Usage; u != nil {
			c := *u
			out[i].Usage = &c
		}
		if c := out[i].CostUSD; c != nil {
			v := *c
			out[i].CostUSD = &v
		}
	}
	return out
}

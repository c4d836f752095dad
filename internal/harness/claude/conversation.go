package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The conversation is read from the same transcript as the witness
// (transcriptPaths), with the same turn starts and ends (markOf), but whole
// and from its first byte: the witness keeps only its last transcriptTail
// bytes. Each file's turns are kept in conversations, so a second call
// reads only what was appended (lineCursor, as the witness's cache).
var _ harness.ConversationReader = Claude{}

// Conversation returns the turns of conversation id, oldest first, as
// claude's transcript has them (captured on 2.1.197 and 2.1.332,
// testdata/records_v*.jsonl):
//
//   - a turn starts with a user entry TurnActivity takes as a start: a
//     message the user sent, not a tool result, meta entry, sub-agent
//     (sidechain) entry, compaction summary, slash command or its output.
//     Its uuid is the turn's ID, its text (as stored: a paste keeps its
//     newlines) User. A message queued behind a running turn gets its
//     entry only when its own turn starts, so it is a turn of its own;
//   - the turn's assistant entries give its tool calls (tool_use blocks),
//     its Reply (the text of its last message after its last tool call)
//     and its Usage (claude writes a message as one line per content
//     block, each repeating the message's id and usage: a message counts
//     once; the API error entries claude makes up are no model's);
//   - it ends as TurnActivity says a turn ends, by the entries' time:
//     turn_duration (ok), an API error entry (error, in claude's words;
//     2.1.197 writes a turn_duration after it too), "[Request interrupted
//     by user" (interrupted). A turn with no end followed by another
//     message was interrupted before the model answered (claude writes no
//     end then): it ended when the next began. The last turn with no end
//     is running.
//
// An entry longer than transcriptTail (4 MiB) is skipped; claude cuts
// the tool outputs it records well below that.
func (Claude) Conversation(ctx context.Context, q harness.SessionQuery, id string) ([]harness.Turn, error) {
	if id == "" {
		return nil, errors.New("claude: conversation: no id")
	}
	paths, err := transcriptPaths(q, id)
	if err != nil || len(paths) == 0 {
		return nil, err // not a claude id: no record
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return transcriptConversation(paths[0])
}

// maxCachedConversations bounds the transcripts whose turns are kept.
const maxCachedConversations = 32

var conversations = &harness.FileCache[conversationState]{Max: maxCachedConversations}

type conversationState struct {
	mu sync.Mutex // held while the file is read
	lineCursor
	turns []convTurn
	// early gathers what comes before the first turn's user entry: claude
	// 2.1.197 can write a new session's first turn late, its end before
	// its start (TestTurnActivityEndWrittenBeforeItsStart).
	early convTurn
	// msgs are the usages counted of the last turn's messages, by id.
	msgs map[string]messageUsage
}

// convTurn is a turn as read so far.
type convTurn struct {
	id    string
	start time.Time
	user  string
	reply string
	// replyMsg is the message id the reply's text came from: a message's
	// text blocks are joined.
	replyMsg string
	tools    []harness.ToolCall
	// ends are the turn's ends in time order (a turn can have two:
	// 2.1.197's API error, then turn_duration).
	ends  []turnMark
	usage messageUsage
}

// transcriptConversation brings path's cached conversation up to date and
// returns its turns. A missing file has none.
func transcriptConversation(path string) ([]harness.Turn, error) {
	f, size, dev, ino, ok, err := openTranscript(path)
	if !ok {
		return nil, err
	}
	defer f.Close()
	s := conversations.State(path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.still(f, size, dev, ino) {
		s.restart(dev, ino, 0)
		s.turns, s.early, s.msgs = nil, convTurn{}, nil
	}
	if err := s.readLines(f, transcriptTail, s.addLine, nil); err != nil {
		return nil, err
	}
	return s.result(), nil
}

// addLine reads one transcript line into the turns.
func (s *conversationState) addLine(start int64, line []byte) {
	if toolResultOnly(line) {
		return
	}
	var e transcriptEntry
	if json.Unmarshal(line, &e) != nil || e.IsSidechain {
		return
	}
	if m, ok := markOf(e); ok {
		if m.end {
			s.addEnd(m)
			return
		}
		text, _ := userText(e.Message.Content)
		id := e.UUID
		if id == "" {
			id = "offset-" + strconv.FormatInt(start, 10) // stable while the file is
		}
		s.begin(convTurn{id: id, start: m.at, user: harness.ClipText(text, harness.TurnTextMax)})
		return
	}
	if e.Type == "assistant" && !e.IsAPIErrorMessage {
		s.addAssistant(e)
	}
}

// begin starts turn t. An end stamped after its start belongs to it,
// though read before it (a late user entry); one of the same time read
// before it is the previous turn's (file order, as addMark keeps it).
func (s *conversationState) begin(t convTurn) {
	from := &s.early
	if n := len(s.turns); n > 0 {
		from = &s.turns[n-1]
		s.msgs = nil
	} else {
		t.reply, t.replyMsg, t.tools, t.usage = s.early.reply, s.early.replyMsg, s.early.tools, s.early.usage
	}
	keep := from.ends[:0]
	for _, m := range from.ends {
		if !m.at.After(t.start) {
			keep = append(keep, m)
		} else {
			t.ends = append(t.ends, m)
		}
	}
	from.ends = keep
	s.early = convTurn{}
	s.turns = append(s.turns, t)
}

// addEnd gives end m to the turn running at its time, as TurnActivity
// orders starts and ends by their time.
func (s *conversationState) addEnd(m turnMark) {
	t := &s.early
	for i := len(s.turns) - 1; i >= 0; i-- {
		if !m.at.Before(s.turns[i].start) {
			t = &s.turns[i]
			break
		}
	}
	i := len(t.ends)
	for i > 0 && t.ends[i-1].at.After(m.at) {
		i--
	}
	t.ends = slices.Insert(t.ends, i, m)
}

// contentBlock is the part of an assistant message's content block read.
type contentBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// addAssistant reads an assistant entry into the last turn (the early one
// before any).
func (s *conversationState) addAssistant(e transcriptEntry) {
	t := &s.early
	if n := len(s.turns); n > 0 {
		t = &s.turns[n-1]
	}
	if u := e.Message.Usage; u != nil {
		if e.Message.ID == "" {
			t.usage = t.usage.plus(*u)
		} else {
			if s.msgs == nil {
				s.msgs = map[string]messageUsage{}
			}
			// A repeat of a message counts only where it says more.
			prev := s.msgs[e.Message.ID]
			most := prev.max(*u)
			t.usage = t.usage.plus(most.minus(prev))
			s.msgs[e.Message.ID] = most
		}
	}
	var blocks []contentBlock
	if raw := bytes.TrimSpace(e.Message.Content); len(raw) > 0 && raw[0] == '"' {
		var text string
		if json.Unmarshal(raw, &text) != nil {
			return
		}
		blocks = []contentBlock{{Type: "text", Text: text}}
	} else if json.Unmarshal(raw, &blocks) != nil {
		return
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) == "" {
				continue // 2.1.197 writes an empty text block before a tool call
			}
			if t.reply != "" && e.Message.ID != "" && t.replyMsg == e.Message.ID {
				t.reply = harness.AppendClipped(t.reply, "\n\n"+b.Text, harness.TurnTextMax)
			} else {
				t.reply, t.replyMsg = harness.ClipText(b.Text, harness.TurnTextMax), e.Message.ID
			}
		case "tool_use":
			t.tools = append(t.tools, harness.ToolCall{Name: b.Name, Input: compactInput(b.Input)})
			t.reply, t.replyMsg = "", ""
		}
	}
}

// compactInput is a tool's input as compact JSON, cut at ToolInputMax.
func compactInput(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(bytes.TrimSpace(raw)) == 0 || json.Compact(&b, raw) != nil {
		return ""
	}
	return harness.ClipText(b.String(), harness.ToolInputMax)
}

// result is the turns as harness.Turns, each outcome by its ends (or the
// next turn's start).
func (s *conversationState) result() []harness.Turn {
	out := make([]harness.Turn, len(s.turns))
	for i, t := range s.turns {
		o := harness.Turn{ID: t.id, StartedAt: t.start, User: t.user, Reply: t.reply, Tools: slices.Clone(t.tools), Usage: t.usage.harness()}
		switch {
		case len(t.ends) > 0:
			o.EndedAt, o.Outcome = t.ends[0].at, harness.OutcomeOK
			if t.ends[0].interrupted {
				o.Outcome = harness.OutcomeInterrupted
			}
			for _, m := range t.ends {
				if m.failed != "" { // an API error after the first end still says the turn failed
					o.Outcome, o.Error = harness.OutcomeError, m.failed
					break
				}
			}
		case i < len(s.turns)-1:
			o.EndedAt, o.Outcome = s.turns[i+1].start, harness.OutcomeInterrupted
		default:
			o.Outcome = harness.OutcomeRunning
		}
		out[i] = o
	}
	return out
}

func (u messageUsage) plus(v messageUsage) messageUsage {
	return messageUsage{u.InputTokens + v.InputTokens, u.OutputTokens + v.OutputTokens, u.CacheReadTokens + v.CacheReadTokens, u.CacheWriteTokens + v.CacheWriteTokens}
}

func (u messageUsage) minus(v messageUsage) messageUsage {
	return messageUsage{u.InputTokens - v.InputTokens, u.OutputTokens - v.OutputTokens, u.CacheReadTokens - v.CacheReadTokens, u.CacheWriteTokens - v.CacheWriteTokens}
}

func (u messageUsage) max(v messageUsage) messageUsage {
	return messageUsage{max(u.InputTokens, v.InputTokens), max(u.OutputTokens, v.OutputTokens), max(u.CacheReadTokens, v.CacheReadTokens), max(u.CacheWriteTokens, v.CacheWriteTokens)}
}

// harness is u as a turn's Usage: nil when the record reports no tokens.
func (u messageUsage) harness() *harness.Usage {
	if u == (messageUsage{}) {
		return nil
	}
	return &harness.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens}
}

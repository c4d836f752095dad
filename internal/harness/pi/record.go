package pi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// A pi session file (pi 0.73.1, docs/session-format.md; testdata/sessions)
// is JSONL: a "session" header, then entries — "message" (a user,
// assistant or toolResult message), "compaction", "model_change",
// "thinking_level_change", "custom"… — each with an id and a timestamp.
// pi appends to it as the conversation goes, but writes nothing until the
// session's first assistant message: then the header and every entry so
// far at once. An assistant message ends a turn unless its stopReason is
// "toolUse" (the model called a tool and goes on): "stop", "length",
// "error" (with errorMessage; pi may retry, appending another assistant
// message) or "aborted" (Escape).
//
// Files are read once and then only where they grew (FileCache): what is
// kept of an entry is bounded (texts cut at TurnTextMax, tool inputs at
// ToolInputMax), never the file's size, which tool outputs inflate.

type entry struct {
	kind  string // "user", "assistant", "compaction"
	id    string
	at    time.Time
	text  string // the user's text; the assistant's text parts, joined
	tools []harness.ToolCall
	stop  string
	err   string
	usage *harness.Usage
	cost  *float64
}

type fileState struct {
	mu       sync.Mutex
	dev, ino uint64
	off      int64
	tail     []byte // an unfinished last line
	entries  []entry
}

var files = harness.FileCache[fileState]{Max: 64}

// readEntries returns the entries of the session file at path (nil, nil
// when it does not exist).
func readEntries(path string) ([]entry, error) {
	st := files.State(path)
	st.mu.Lock()
	defer st.mu.Unlock()
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		*st = fileState{}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	dev, ino := harness.FileKey(info)
	if dev != st.dev || ino != st.ino || info.Size() < st.off {
		st.dev, st.ino, st.off, st.tail, st.entries = dev, ino, 0, nil, nil
	}
	if info.Size() > st.off {
		if _, err := f.Seek(st.off, io.SeekStart); err != nil {
			return nil, err
		}
		data, err := io.ReadAll(io.LimitReader(f, info.Size()-st.off))
		if err != nil {
			return nil, err
		}
		st.off += int64(len(data))
		data = append(st.tail, data...)
		st.tail = nil
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				st.tail = append([]byte(nil), data...)
				break
			}
			if e, ok := parseEntry(data[:i]); ok {
				st.entries = append(st.entries, e)
			}
			data = data[i+1:]
		}
	}
	return st.entries, nil
}

type rawEntry struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Timestamp time.Time       `json:"timestamp"`
	Message   *rawMessage     `json:"message"`
	Summary   json.RawMessage `json:"summary"`
}

type rawMessage struct {
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content"`
	StopReason   string          `json:"stopReason"`
	ErrorMessage string          `json:"errorMessage"`
	Usage        *rawUsage       `json:"usage"`
}

type rawUsage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Cost       *struct {
		Total *float64 `json:"total"`
	} `json:"cost"`
}

type rawPart struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func parseEntry(line []byte) (entry, bool) {
	var r rawEntry
	if json.Unmarshal(line, &r) != nil {
		return entry{}, false
	}
	switch {
	case r.Type == "compaction":
		return entry{kind: "compaction", id: r.ID, at: r.Timestamp}, true
	case r.Type != "message" || r.Message == nil:
		return entry{}, false
	}
	m := r.Message
	e := entry{kind: m.Role, id: r.ID, at: r.Timestamp}
	switch m.Role {
	case "user":
		e.text = harness.ClipText(contentText(m.Content, &e), harness.TurnTextMax)
		e.tools = nil
	case "assistant":
		e.text = harness.ClipText(contentText(m.Content, &e), harness.TurnTextMax)
		e.stop, e.err = m.StopReason, m.ErrorMessage
		if u := m.Usage; u != nil {
			e.usage = &harness.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite}
			if u.Cost != nil && u.Cost.Total != nil {
				c := *u.Cost.Total
				e.cost = &c
			}
		}
	default:
		return entry{}, false
	}
	return e, true
}

// contentText is a message's text: a plain string, or its text parts
// joined with newlines; tool calls among the parts go to e.tools, and the
// text is what follows the last of them (the reply after the tools).
func contentText(raw json.RawMessage, e *entry) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []rawPart
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		switch p.Type {
		case "text":
			texts = append(texts, p.Text)
		case "toolCall":
			in := string(p.Arguments)
			var buf bytes.Buffer
			if json.Compact(&buf, p.Arguments) == nil {
				in = buf.String()
			}
			e.tools = append(e.tools, harness.ToolCall{Name: p.Name, Input: harness.ClipText(in, harness.ToolInputMax)})
			texts = nil
		}
	}
	return strings.Join(texts, "\n")
}

// ends reports whether an assistant entry ends its turn.
func (e entry) ends() bool { return e.kind == "assistant" && e.stop != "toolUse" }

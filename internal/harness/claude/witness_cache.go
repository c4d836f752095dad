package claude

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Delivery asks UserTurns after every look at the screen (every ~10 ms for
// seconds), so a transcript is read once: each file's state — how far it
// was read, the user turns found in its last transcriptTail bytes — is kept
// here, and the next call reads only what was appended. A file that
// shrank, was replaced (another inode) or whose bytes before the read
// offset changed is read again. The cache is bounded; an evicted file is
// read again (its tail) on the next call.

const (
	maxCachedTranscripts = 64
	markLen              = 64
)

type cachedTurn struct {
	start int64 // offset of the line's first byte
	turn  harness.UserTurn
}

type transcriptState struct {
	mu sync.Mutex // held while the file is read
	lineCursor
	turns []cachedTurn
	// marks are the turn starts and ends read since the (re)start at the
	// tail, in time order (addMark): kept whole (a few bytes each), so
	// that the count of ends only grows while the file is read on.
	marks []turnMark
}

// addMark puts m among the marks by its time, after those of the same
// time (file order otherwise). claude 2.1.197 can write a new session's
// first turn late, its end before its user entry (seen in the real suite
// with leo's UserPromptSubmit hook: stop_hook_summary and turn_duration,
// then the user entry stamped earlier): in file order that end would
// count for nothing and the turn would seem to run until the next one.
func (s *transcriptState) addMark(m turnMark) {
	i := len(s.marks)
	for i > 0 && s.marks[i-1].at.After(m.at) {
		i--
	}
	s.marks = slices.Insert(s.marks, i, m)
}

// turnMark is a turn's start or end in a transcript. An end that is an
// API error carries claude's words for it, and whether claude called it a
// rate limit.
type turnMark struct {
	at      time.Time
	end     bool
	failed  string
	limited bool
	// interrupted: the end is claude's "[Request interrupted by user]".
	interrupted bool
}

var cache = &harness.FileCache[transcriptState]{Max: maxCachedTranscripts}

// bytesRead counts the transcript bytes read (tests check that a second
// call reads only what was appended).
var bytesRead atomic.Int64

// transcriptUserTurns returns the user messages at or after since among
// the lines of one transcript that lie wholly in its last transcriptTail
// bytes (a line starting exactly where the tail starts counts as cut). A
// missing file has none.
func transcriptUserTurns(path string, since time.Time) ([]harness.UserTurn, error) {
	var out []harness.UserTurn
	err := withTranscriptState(path, func(s *transcriptState, partial *harness.UserTurn) {
		for _, c := range s.turns {
			if !c.turn.At.Before(since) {
				out = append(out, c.turn)
			}
		}
		if partial != nil && !partial.At.Before(since) {
			out = append(out, *partial)
		}
	})
	return out, err
}

// transcriptActivityAt reads the turn starts and ends of one transcript at
// or after since (see Claude.TurnActivity), through the same cache as
// transcriptUserTurns (Found is false when the file does not exist), and
// when its last turn ended (zero: none did): of several transcripts, the
// one that ended last says whether the last turn failed.
func transcriptActivityAt(path string, since time.Time) (a harness.TurnActivity, lastEnd time.Time, err error) {
	err = withTranscriptState(path, func(s *transcriptState, _ *harness.UserTurn) {
		a.Found = true
		open := false
		for _, m := range s.marks {
			if m.at.IsZero() || m.at.Before(since) {
				continue
			}
			switch {
			case !m.end:
				open = true
			case open:
				open = false
				a.Ended++
				a.Failed, a.Limited, lastEnd = m.failed, m.limited, m.at
			case m.failed != "":
				// A second end of the same turn (2.1.197: the API error,
				// then its turn_duration) is not another; an API error
				// after the first still says the turn failed.
				a.Failed, a.Limited = m.failed, m.limited
			}
		}
		a.Running = open
	})
	return a, lastEnd, err
}

// withTranscriptState brings path's cached state up to date and calls use with
// it, locked, and the user turn of a last line not yet whole. A missing
// file is no error, and use is not called.
func withTranscriptState(path string, use func(s *transcriptState, partial *harness.UserTurn)) error {
	f, size, dev, ino, ok, err := openTranscript(path)
	if !ok {
		return err
	}
	defer f.Close()
	tailStart := max(0, size-transcriptTail)
	fallbackID := strings.TrimSuffix(filepath.Base(path), ".jsonl")

	s := cache.State(path)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.still(f, size, dev, ino) || s.offset < tailStart {
		// Start (again) at the tail: whatever was cached is before it.
		s.restart(dev, ino, tailStart)
		s.turns, s.marks = nil, nil
	}
	partial, err := s.readFrom(f, fallbackID)
	if err != nil {
		return err
	}
	// Drop the turns the tail has moved past.
	keep := 0
	for keep < len(s.turns) && !(tailStart == 0 || s.turns[keep].start > tailStart) {
		keep++
	}
	s.turns = s.turns[keep:]
	use(s, partial)
	return nil
}

// readFrom reads the whole lines after s.offset, caching their user turns
// and turn marks. After a (re)start at the tail, the line the tail cuts is
// skipped, and a line longer than the tail is never wholly in it. A last
// line without its newline yet is decoded but neither cached nor
// consumed: it is returned as partial.
func (s *transcriptState) readFrom(f *os.File, fallbackID string) (partial *harness.UserTurn, err error) {
	err = s.readLines(f, transcriptTail, func(start int64, line []byte) {
		u, isTurn, m, isMark := recordsOfLine(line, fallbackID)
		if isTurn {
			s.turns = append(s.turns, cachedTurn{start: start, turn: u})
		}
		if isMark {
			s.addMark(m)
		}
	}, func(line []byte) {
		if u, ok := userTurnOfLine(line, fallbackID); ok {
			partial = &u
		}
	})
	return partial, err
}

// mayBeUser reports whether line can decode to an entry of type "user".
// JSON writes that string as "user" or with escapes (\u0075ser); spacing
// and key order do not matter here.
func mayBeUser(line []byte) bool {
	return bytes.Contains(line, []byte(`"user"`)) || bytes.Contains(line, []byte(`\u`))
}

// mayBeMark reports whether line can decode to a turn's end that is not a
// user entry: a system entry whose subtype is "turn_duration", or an entry
// with isApiErrorMessage (a key JSON decoding matches in any case).
func mayBeMark(line []byte) bool {
	return bytes.Contains(line, []byte("turn_duration")) || bytes.Contains(line, []byte(`\u`)) || containsFold(line, "apierrormessage")
}

// containsFold reports whether line holds lower (ASCII, lower case) in any
// case.
func containsFold(line []byte, lower string) bool {
	for i := 0; i+len(lower) <= len(line); i++ {
		j := 0
		for j < len(lower) && line[i+j]|0x20 == lower[j] {
			j++
		}
		if j == len(lower) {
			return true
		}
	}
	return false
}

// userTurnOfLine decodes one transcript line, ok when it is a user message.
func userTurnOfLine(line []byte, fallbackID string) (harness.UserTurn, bool) {
	u, ok, _, _ := recordsOfLine(line, fallbackID)
	return u, ok
}

// recordsOfLine decodes one transcript line into the user message and the
// turn start or end it is (either, both or none).
func recordsOfLine(line []byte, fallbackID string) (u harness.UserTurn, isTurn bool, m turnMark, isMark bool) {
	// The one filter before decoding, for lines that are neither (assistant
	// replies, snapshots): the type's value "user" must be in the line as
	// those six bytes, or spelt with a \u escape, or the line may be an end
	// (mayBeMark). It must never reject a line the decoder takes
	// (TestPrefilterNeverRejectsADecodedLine, TestMarkPrefilterNeverRejectsADecodedLine).
	if (!mayBeUser(line) && !mayBeMark(line)) || toolResultOnly(line) {
		return u, false, m, false
	}
	var e transcriptEntry
	if json.Unmarshal(line, &e) != nil {
		return u, false, m, false
	}
	u, isTurn = userTurnOf(e, fallbackID)
	m, isMark = markOf(e)
	return u, isTurn, m, isMark
}

// decodeUserTurn is userTurnOfLine without the filter.
func decodeUserTurn(line []byte, fallbackID string) (harness.UserTurn, bool) {
	var e transcriptEntry
	if json.Unmarshal(line, &e) != nil {
		return harness.UserTurn{}, false
	}
	return userTurnOf(e, fallbackID)
}

// decodeMark is markOf of a line, without the filter.
func decodeMark(line []byte) (turnMark, bool) {
	var e transcriptEntry
	if json.Unmarshal(line, &e) != nil {
		return turnMark{}, false
	}
	return markOf(e)
}

// userTurnOf is the user message an entry holds.
func userTurnOf(e transcriptEntry, fallbackID string) (harness.UserTurn, bool) {
	if e.Type != "user" || e.IsMeta || e.IsSidechain || e.IsCompactSummary {
		return harness.UserTurn{}, false
	}
	text, ok := userText(e.Message.Content)
	if !ok {
		return harness.UserTurn{}, false
	}
	sid := e.SessionID
	if sid == "" {
		sid = fallbackID
	}
	return harness.UserTurn{SessionID: sid, Text: text, At: e.Timestamp}, true
}

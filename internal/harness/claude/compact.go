package claude

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.Compacter = Claude{}

// CompactCommand is claude's slash command that summarises the
// conversation (it runs when typed or pasted, then Enter).
func (Claude) CompactCommand() string { return "/compact" }

// Compactions reads, from the last transcriptTail bytes of each transcript
// (the paths UserTurns reads), what claude 2.1.197 records of /compact:
//
//   - a compaction: a "system" entry of subtype "compact_boundary"
//     (compactMetadata.trigger "manual", or "auto" when claude compacted on
//     its own), written once the summary is in;
//   - a refusal: the "/compact" command entry (a user entry whose content is
//     <command-name>/compact</command-name>) followed by a "system" entry of
//     subtype "local_command" whose parent it is, holding claude's words in
//     <local-command-stdout> ("Not enough messages to compact."). A
//     compaction's own output is a user entry instead, never this.
func (Claude) Compactions(ctx context.Context, q harness.SessionQuery, id string) ([]harness.Compaction, error) {
	paths, err := transcriptPaths(q, id)
	if err != nil {
		return nil, err
	}
	var out []harness.Compaction
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cs, err := transcriptCompactions(p, q.Since)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		out = append(out, cs...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// compactEntry is the part of a transcript line Compactions reads.
type compactEntry struct {
	Type       string    `json:"type"`
	Subtype    string    `json:"subtype"`
	UUID       string    `json:"uuid"`
	ParentUUID string    `json:"parentUuid"`
	SessionID  string    `json:"sessionId"`
	Timestamp  time.Time `json:"timestamp"`
	Content    string    `json:"content"`
	Message    struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

const compactCommandName = "<command-name>/compact</command-name>"

func transcriptCompactions(path string, since time.Time) ([]harness.Compaction, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("claude: transcript %s is not a regular file", path)
	}
	start := max(0, info.Size()-transcriptTail)
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return nil, err
	}
	r := bufio.NewReader(io.LimitReader(f, transcriptTail))
	first := start > 0            // a line cut by the tail is skipped
	commands := map[string]bool{} // uuids of /compact command entries
	var out []harness.Compaction
	for {
		line, err := r.ReadBytes('\n')
		// A last line without its newline is still being written.
		whole := err == nil
		if whole && !first && (bytes.Contains(line, []byte("compact")) || bytes.Contains(line, []byte("local_command"))) {
			var e compactEntry
			if json.Unmarshal(line, &e) == nil {
				switch {
				case e.Type == "user":
					if text, ok := userText(e.Message.Content); ok && strings.HasPrefix(strings.TrimSpace(text), compactCommandName) {
						commands[e.UUID] = true
					}
				case e.Type != "system" || (!since.IsZero() && e.Timestamp.Before(since)):
				case e.Subtype == "compact_boundary":
					out = append(out, harness.Compaction{SessionID: e.SessionID, At: e.Timestamp})
				case e.Subtype == "local_command" && commands[e.ParentUUID]:
					out = append(out, harness.Compaction{SessionID: e.SessionID, At: e.Timestamp, Refused: commandStdout(e.Content)})
				}
			}
		}
		first = false
		if err != nil {
			break
		}
	}
	return out, nil
}

// commandStdout is the text of a local command's output entry, its
// <local-command-stdout> wrapper and any SGR codes removed.
func commandStdout(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "<local-command-stdout>")
	s = strings.TrimSuffix(s, "</local-command-stdout>")
	s = plain(s)
	if s = strings.TrimSpace(s); s == "" {
		return "claude ran /compact but did not compact"
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// plain drops terminal escape sequences (CSI "ESC [ … final") and other
// control characters: the text ends up in API answers and logs.
func plain(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == 0x1b && i+1 < len(s) && s[i+1] == '[':
			i += 2
			for i < len(s) && (s[i] < 0x40 || s[i] > 0x7e) {
				i++
			}
		case c == '\n' || c == '\t':
			b.WriteByte(' ')
		case c < 0x20 || c == 0x7f:
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

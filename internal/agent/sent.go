package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/delivery"
	"github.com/blackpaw-studio/leo/internal/statefile"
	"github.com/blackpaw-studio/leo/internal/turnend"
)

// The sent log is leo's record of the messages it delivered to an agent
// and who sent them: state/sent/<agent>.jsonl, one line per delivered
// message, appended once the harness's record proved the delivery. The
// harness's own record says what the turns were; this says which of them
// leo typed, for whom. A turn typed in the TUI by a person has no line
// here, so its sender is empty.
//
// It is informational: a line that cannot be written is logged and the
// message stays delivered (its turn then shows no sender). It is bounded:
// past sentLogMax bytes the newest sentLogKeep lines are kept.
const (
	sentLogMax  = 512 << 10
	sentLogKeep = 2000
)

// sentRecord is one line of the sent log.
type sentRecord struct {
	ID     string    `json:"id"`
	At     time.Time `json:"at"`
	Sender string    `json:"sender,omitempty"`
	// Digest identifies the text, white space aside, as the harness's
	// record will hold it (turnIs).
	Digest string `json:"digest"`
	// Conversation is the one the harness recorded the turn in ("" when
	// it was not known yet): a record never serves another conversation's
	// turn (a reset, then the same words again).
	Conversation string `json:"conversation,omitempty"`
}

// senderOf is who sent message: the sender the route named, else the
// signature of an agent's or task's message (leo_send_message), else the
// marker of a persistent task's firing.
func senderOf(route, message string) string {
	if from, _ := api.DescribeMessage(message); from != "" {
		// The signature of leo_send_message: "task y", or an agent's name.
		// It says more than the route ("api") does.
		if strings.HasPrefix(from, "task ") {
			return from
		}
		return api.SenderAgent(from)
	}
	if route != "" {
		return route
	}
	if task, _, ok := turnend.FindMarker(message); ok {
		return api.SenderTask(task)
	}
	return ""
}

// textKey is the digest a sent message and a recorded turn share when
// they are the same words (turnIs).
func textKey(text string) string {
	return textDigest(strings.Join(strings.Fields(text), " "))
}

func (m *Manager) sentPath(name string) string {
	return filepath.Join(m.opts.Home.SentDir(), name+".jsonl")
}

// noteSent appends delivered message it to a's sent log.
func (a *agent) noteSent(it *delivery.Item, at time.Time) {
	a.mu.Lock()
	conv := a.rec.SessionID // the delivery adopted the conversation it found the turn in
	a.mu.Unlock()
	line, err := json.Marshal(sentRecord{ID: it.ID, At: at.UTC(), Sender: it.Sender, Digest: textKey(it.Message), Conversation: conv})
	if err != nil {
		return
	}
	name := a.name()
	path := a.m.sentPath(name)
	a.sentMu.Lock()
	defer a.sentMu.Unlock()
	if err := appendSent(path, append(line, '\n')); err != nil {
		a.m.log.Warn("sent log not written: the turn will show no sender", "agent", name, "id", it.ID, "err", err)
	}
}

func appendSent(path string, line []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	// A line cut short (a full disk) stays a line of its own, which the
	// reader skips, instead of spoiling the next one.
	if info, err := f.Stat(); err == nil && info.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, info.Size()-1); err == nil && last[0] != '\n' {
			line = append([]byte{'\n'}, line...)
		}
	}
	_, werr := f.Write(line)
	info, serr := f.Stat()
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil || serr != nil || info.Size() <= sentLogMax {
		return werr
	}
	// Trim: keep the newest lines, written atomically.
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	if len(lines) > sentLogKeep {
		lines = lines[len(lines)-sentLogKeep:]
	}
	return statefile.Write(path, bytes.Join(lines, nil), 0o600)
}

// readSent is agent name's sent log, oldest first; lines it does not
// understand are skipped (a hand edit, a torn last line).
func (m *Manager) readSent(name string) ([]sentRecord, error) {
	f, err := os.Open(m.sentPath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []sentRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		var r sentRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.ID != "" && r.Digest != "" {
			out = append(out, r)
		}
	}
	return out, sc.Err()
}

// removeSent deletes a deleted agent's sent log.
func (m *Manager) removeSent(name string) {
	if err := os.Remove(m.sentPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		m.log.Warn("sent log not removed", "agent", name, "err", err)
	}
}

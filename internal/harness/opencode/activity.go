package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.TurnRecorder = Opencode{}

// TurnActivity reads the turns opencode stored at or after q.Since, from
// the message rows UserTurns reads (in session id, or with id "" in every
// top-level session of q.Workspace not in q.Exclude begun at or after
// q.Since: a launch's new session, never an older one a person runs).
// opencode 1.18.33 (testdata/store/records_v1.18.33.tgz) stores a turn as
// its user message, then one assistant message per step, each created as
// the step starts and given time.completed when it ends: finish
// "tool-calls" when another step follows, "stop" when the turn is over,
// an error (MessageAbortedError for an interrupt, APIError for a refused
// request: Failed, its message; Limited for an HTTP 429) when it failed. A turn runs from its user message until an
// assistant message after it ends that way — as opencode's own prompt loop
// decides. A message sent while a turn runs is stored at once and
// answered after it: still a turn running. /compact is a turn (a user
// message with a compaction part, answered by a summary).
func (Opencode) TurnActivity(ctx context.Context, q harness.SessionQuery, id string) (harness.TurnActivity, error) {
	path, err := dbPath(q.Env)
	if err != nil {
		return harness.TurnActivity{}, err
	}
	if err := ctx.Err(); err != nil {
		return harness.TurnActivity{}, err
	}
	a, err := readActivity(path, q, id)
	if errors.Is(err, os.ErrNotExist) {
		return harness.TurnActivity{}, nil
	}
	if err != nil {
		return harness.TurnActivity{}, fmt.Errorf("opencode: session store %s: %w", path, err)
	}
	return a, nil
}

// stepFinishes are the finish reasons after which opencode's prompt loop
// runs another step of the same turn.
var stepFinishes = []string{"tool-calls", "unknown"}

// messageData is the part of a message row's data TurnActivity and
// Conversation read.
type messageData struct {
	Role string `json:"role"`
	// ParentID is, on an assistant message, the user message it answers.
	ParentID string `json:"parentID"`
	Time     struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed"`
	} `json:"time"`
	Finish string          `json:"finish"`
	Error  json.RawMessage `json:"error"`
	// Tokens and Cost are an assistant message's, the sum of its steps'.
	Tokens *storedTokens `json:"tokens"`
	Cost   float64       `json:"cost"`
}

// storedTokens is opencode's token count of a step or an assistant message.
type storedTokens struct {
	Input  int64 `json:"input"`
	Output int64 `json:"output"`
	Cache  struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}

// ends reports whether an assistant message ends its turn.
func (m messageData) ends() bool {
	return m.failed() || (m.Time.Completed > 0 && !slices.Contains(stepFinishes, m.Finish))
}

func readActivity(path string, q harness.SessionQuery, id string) (harness.TurnActivity, error) {
	return readCached(path, q, id, func(st *storeState) *map[string]harness.TurnActivity { return &st.activity }, readActivityFrom)
}

func readActivityFrom(f *sqliteFile, q harness.SessionQuery, id string) (harness.TurnActivity, error) {
	tables, err := storeTables(f)
	if err != nil {
		return harness.TurnActivity{}, err
	}
	sessions, err := sessionsOf(f, tables, q, id)
	if err != nil {
		return harness.TurnActivity{}, err
	}
	since := q.Since.UnixMilli()
	if q.Since.IsZero() {
		since = 0
	}
	if id == "" && since != 0 {
		// Only sessions begun since: another one of the workspace (the one
		// a reset left, one a person runs) holds none of this launch's
		// turns.
		st := tables["session"]
		cID, cCreated := st.col("id"), st.col("time_created")
		err := f.scanTable(st.root, func(row []any) bool {
			sid, _ := field(row, cID).(string)
			if at, ok := field(row, cCreated).(int64); sessions[sid] && (!ok || at < since) {
				delete(sessions, sid)
			}
			return true
		})
		if err != nil {
			return harness.TurnActivity{}, err
		}
	}
	if len(sessions) == 0 {
		return harness.TurnActivity{}, nil
	}
	msgs, err := sessionMessages(f, tables, sessions, since)
	if err != nil {
		return harness.TurnActivity{}, err
	}
	out := harness.TurnActivity{Found: true}
	lastEnd, lastID := int64(-1), ""
	for _, ms := range msgs {
		t := turnsOf(ms)
		if n := len(ms); t.running && n > 0 {
			// A step that will be followed, by its finish, but whose tool
			// call a person refused: opencode stopped the turn there.
			if m := ms[n-1]; m.Role == "assistant" && m.Time.Completed > 0 && slices.Contains(stepFinishes, m.Finish) {
				stopped, err := stoppedByRejection(f, tables, m.id)
				if err != nil {
					return harness.TurnActivity{}, err
				}
				if stopped {
					t.running = false
					t.ended++
					t.lastEnd, t.lastID, t.failed, t.limited = m.at, m.id, "", false
				}
			}
		}
		out.Running = out.Running || t.running
		out.Ended += t.ended
		if t.ended > 0 && t.lastEnd >= lastEnd {
			// Of several sessions, the one that ended last says whether
			// the last turn failed, and what it replied.
			lastEnd, lastID, out.Failed, out.Limited = t.lastEnd, t.lastID, t.failed, t.limited
		}
	}
	if !out.Running && out.Failed == "" && lastID != "" {
		reply, err := messageText(f, tables, lastID)
		if err != nil {
			return harness.TurnActivity{}, err
		}
		out.Reply = reply
	}
	return out, nil
}

// messageText is the text of message mid: its text parts, in the order
// opencode wrote them (through the part table's message_id index when
// the store has it, else by a scan).
func messageText(f *sqliteFile, tables map[string]sqliteTable, mid string) (string, error) {
	pt := tables["part"]
	pMsg, pData := pt.col("message_id"), pt.col("data")
	type part struct {
		rowid int64
		text  string
	}
	var parts []part
	keep := func(rowid int64, row []any) {
		if m, _ := field(row, pMsg).(string); m != mid {
			return
		}
		var data struct {
			Type      string `json:"type"`
			Text      string `json:"text"`
			Synthetic bool   `json:"synthetic"`
		}
		if s, ok := field(row, pData).(string); ok && json.Unmarshal([]byte(s), &data) == nil && data.Type == "text" && !data.Synthetic {
			parts = append(parts, part{rowid: rowid, text: data.Text})
		}
	}
	indexes, err := f.indexes()
	if err != nil {
		return "", err
	}
	if pIdx, ok := indexOn(indexes, "part", "message_id"); ok && !scanOnly {
		err = f.rowsByIndex(pIdx, pt, mid, []any{mid}, func(rowid int64, row []any) bool { keep(rowid, row); return true })
	} else {
		var n int64
		err = f.scanTable(pt.root, func(row []any) bool { n++; keep(n, row); return true })
	}
	if err != nil {
		return "", err
	}
	sort.Slice(parts, func(i, j int) bool { return parts[i].rowid < parts[j].rowid })
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.text
	}
	return strings.TrimSpace(strings.Join(texts, "\n")), nil
}

// rejections are the errors of a tool call a person refused — a
// permission rejected, a question dismissed — after which opencode stops
// the turn (1.18.33: its processor sets blocked on their RejectedErrors)
// though the step's finish says another step follows. Rejected with
// feedback is not one of them: the model gets the feedback and goes on.
var rejections = []string{
	"The user rejected permission to use this specific tool call.",
	"The user dismissed this question",
}

// stoppedByRejection reports whether assistant message mid's step ended
// in a tool call a person refused (rejections).
func stoppedByRejection(f *sqliteFile, tables map[string]sqliteTable, mid string) (bool, error) {
	indexes, err := f.indexes()
	if err != nil {
		return false, err
	}
	stopped := false
	err = eachPart(f, tables, indexes, []string{mid}, func(_ string, p *partData) {
		if p.Type != "tool" || p.State.Status != "error" || strings.Contains(p.State.Error, "feedback") {
			return
		}
		for _, r := range rejections {
			if strings.Contains(p.State.Error, r) {
				stopped = true
			}
		}
	})
	return stopped, err
}

// sessionTurns is what one session's messages say of its turns.
type sessionTurns struct {
	running bool   // a turn runs at the end
	ended   int    // turns that ended
	lastEnd int64  // when the last one ended (its message's creation)
	lastID  string // the message that ended it
	// failed, limited: how the last one ended (failed is opencode's
	// words for its error).
	failed  string
	limited bool
}

// turnsOf reads one session's messages, in order.
func turnsOf(ms []storedMessage) (t sessionTurns) {
	for _, m := range ms {
		switch {
		case m.Role == "user":
			t.running = true
		case m.Role == "assistant" && t.running && m.ends():
			t.running = false
			t.ended++
			t.lastEnd, t.lastID = m.at, m.id
			t.failed, t.limited = m.failure()
		}
	}
	return t
}

// maxFailedRunes bounds the words kept of a failure (a response body can
// be anything the server sent).
const maxFailedRunes = 1000

// failure is an ending message's error in opencode's words (its data's
// message, else its name: "modelserver: scripted error" for an APIError
// of an HTTP 400), and whether it is a rate limit (an APIError of HTTP
// 429). An interrupt (MessageAbortedError) is no failure.
func (m messageData) failure() (failed string, limited bool) {
	if len(m.Error) == 0 || string(m.Error) == "null" {
		return "", false
	}
	var e struct {
		Name string `json:"name"`
		Data struct {
			Message    string `json:"message"`
			StatusCode int    `json:"statusCode"`
		} `json:"data"`
	}
	if json.Unmarshal(m.Error, &e) != nil {
		return "turn failed", false
	}
	if e.Name == "MessageAbortedError" {
		return "", false
	}
	failed = strings.TrimSpace(e.Data.Message)
	if failed == "" {
		failed = e.Name
	}
	if failed == "" {
		failed = "turn failed"
	}
	if r := []rune(failed); len(r) > maxFailedRunes {
		failed = string(r[:maxFailedRunes-1]) + "…"
	}
	return failed, e.Data.StatusCode == 429
}

// storedMessage is one message row: its id, creation time and data.
type storedMessage struct {
	id string
	at int64
	messageData
}

// sessionMessages are the messages of each session created at or after
// since, in the order opencode made them (time, then id): through the
// (session_id, time_created) index when the store has it, else by a scan.
func sessionMessages(f *sqliteFile, tables map[string]sqliteTable, sessions map[string]bool, since int64) (map[string][]storedMessage, error) {
	mt := tables["message"]
	cID, cSess, cTime, cData := mt.col("id"), mt.col("session_id"), mt.col("time_created"), mt.col("data")
	out := map[string][]storedMessage{}
	add := func(row []any, want string) {
		sid, _ := field(row, cSess).(string)
		at, _ := field(row, cTime).(int64)
		if !sessions[sid] || (want != "" && sid != want) || at < since {
			return
		}
		var d messageData
		if s, ok := field(row, cData).(string); !ok || json.Unmarshal([]byte(s), &d) != nil {
			return
		}
		mid, _ := field(row, cID).(string)
		out[sid] = append(out[sid], storedMessage{id: mid, at: at, messageData: d})
	}
	indexes, err := f.indexes()
	if err != nil {
		return nil, err
	}
	if mIdx, ok := indexOn(indexes, "message", "session_id", "time_created"); ok && !scanOnly {
		ids := make([]string, 0, len(sessions))
		for sid := range sessions {
			ids = append(ids, sid)
		}
		sort.Strings(ids)
		for _, want := range ids {
			from := []any{want}
			if since != 0 {
				from = append(from, since)
			}
			err := f.rowsByIndex(mIdx, mt, want, from, func(rowid int64, row []any) bool {
				add(row, want)
				return true
			})
			if err != nil {
				return nil, err
			}
		}
	} else if err := f.scanTable(mt.root, func(row []any) bool { add(row, ""); return true }); err != nil {
		return nil, err
	}
	for _, ms := range out {
		sort.SliceStable(ms, func(i, j int) bool {
			if ms[i].at != ms[j].at {
				return ms[i].at < ms[j].at
			}
			return strings.Compare(ms[i].id, ms[j].id) < 0
		})
	}
	return out, nil
}

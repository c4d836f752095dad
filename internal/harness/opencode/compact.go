package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

var _ harness.Compacter = Opencode{}

// CompactCommand is opencode's slash command that summarises the session
// (it runs when typed or pasted, then Enter).
func (Opencode) CompactCommand() string { return "/compact" }

// Compactions reads what opencode 1.18.33 stores of /compact in its
// session store (the sessions UserTurns reads): a user message with a
// part {"type":"compaction","auto":false}, answered by an assistant
// message {"mode":"compaction","summary":true,…} — the summary. A
// compaction is that summary message once it has finished
// (time.completed), at that time; one that finished with an error is
// refused, with opencode's error.
func (Opencode) Compactions(ctx context.Context, q harness.SessionQuery, id string) ([]harness.Compaction, error) {
	path, err := dbPath(q.Env)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := readCompactions(path, q, id)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opencode: session store %s: %w", path, err)
	}
	return out, nil
}

// summaryData is the part of a message's data Compactions reads.
type summaryData struct {
	Role    string `json:"role"`
	Mode    string `json:"mode"`
	Summary bool   `json:"summary"`
	Time    struct {
		Completed int64 `json:"completed"`
	} `json:"time"`
	Error *struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
	} `json:"error"`
}

func readCompactions(path string, q harness.SessionQuery, id string) ([]harness.Compaction, error) {
	f, err := openSQLiteCached(path, nil)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tables, err := storeTables(f)
	if err != nil {
		return nil, err
	}
	sessions, err := sessionsOf(f, tables, q, id)
	if err != nil || len(sessions) == 0 {
		return nil, err
	}
	since := int64(0)
	if !q.Since.IsZero() {
		since = q.Since.UnixMilli()
	}
	mt := tables["message"]
	cSess, cData := mt.col("session_id"), mt.col("data")
	var out []harness.Compaction
	err = f.scanTable(mt.root, func(row []any) bool {
		sid, _ := field(row, cSess).(string)
		raw, _ := field(row, cData).(string)
		if !sessions[sid] || !strings.Contains(raw, `"summary"`) {
			return true
		}
		var d summaryData
		if json.Unmarshal([]byte(raw), &d) != nil || d.Role != "assistant" || !d.Summary || d.Mode != "compaction" ||
			d.Time.Completed == 0 || d.Time.Completed < since {
			return true
		}
		c := harness.Compaction{SessionID: sid, At: time.UnixMilli(d.Time.Completed)}
		if d.Error != nil {
			c.Refused = clipText("opencode's compaction failed: "+strings.TrimSpace(d.Error.Name+" "+d.Error.Data.Message), 200)
		}
		out = append(out, c)
		return true
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out, nil
}

// clipText keeps the printable runes of s, at most n of them.
func clipText(s string, n int) string {
	var b strings.Builder
	count := 0
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			continue
		}
		if count == n {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
		count++
	}
	return b.String()
}

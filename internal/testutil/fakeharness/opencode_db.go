package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// The real opencode (1.18) keeps its messages in SQLite, opencode.db under
// its data dir, and leo's opencode adapter reads them there (its
// TurnWitness). The fake writes the same tables with the columns the
// adapter reads, as a plain SQLite 3 file: one leaf page of 64 KiB per
// table (the oldest messages are dropped when a page fills), no indexes,
// rewritten whole and renamed into place at each turn, so a reader never
// sees it half written. The rows themselves live in fake-messages.json.

type ocMessage struct {
	ID      string `json:"id"`
	Session string `json:"session"`
	Role    string `json:"role"`
	Text    string `json:"text"`
	At      int64  `json:"at"`
	// Kind is "" for a message, ocCompaction for the user message of a
	// /compact (a compaction part, no text), ocSummary for its answer,
	// ocAborted for the answer of an interrupted turn (no text).
	Kind string `json:"kind,omitempty"`
}

const (
	ocCompaction = "compaction"
	ocSummary    = "summary"
	ocAborted    = "aborted"
)

func opencodeDBPath() string {
	if p := os.Getenv("OPENCODE_DB"); filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(opencodeDataDir(), "opencode.db")
}

// opencodeRecord adds a message (user or assistant) with one text part to
// session id and rewrites opencode.db.
func opencodeRecord(id, role, text string) { opencodeRecordKind(id, role, text, "") }

// opencodeRecordKind is opencodeRecord for a message of a kind (ocMessage.Kind).
func opencodeRecordKind(id, role, text, kind string) {
	dir := opencodeDataDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return
	}
	lf, err := os.OpenFile(filepath.Join(dir, "fake-messages.lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer lf.Close()
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		return
	}
	path := filepath.Join(dir, "fake-messages.json")
	var msgs []ocMessage
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &msgs)
	} else if !errors.Is(err, os.ErrNotExist) {
		return
	}
	now := time.Now().UnixMilli()
	msgs = append(msgs, ocMessage{ID: fmt.Sprintf("msg_%012x%04d", now, len(msgs)), Session: id, Role: role, Text: text, At: now, Kind: kind})
	b, _ := json.Marshal(msgs)
	if writeAtomic(path, b) != nil {
		return
	}
	_ = writeAtomic(opencodeDBPath(), opencodeDB(opencodeList(), msgs))
}

// opencodeDB builds the database file: page 1 the schema, 2 session,
// 3 message, 4 part.
func opencodeDB(sessions []ocSession, msgs []ocMessage) []byte {
	const pageSize = 65536
	schema := []struct{ name, sql string }{
		{"session", "CREATE TABLE `session` (\n\t`id` text NOT NULL,\n\t`project_id` text NOT NULL,\n\t`parent_id` text,\n\t`directory` text NOT NULL,\n\t`title` text NOT NULL,\n\t`time_created` integer NOT NULL,\n\t`time_updated` integer NOT NULL\n)"},
		{"message", "CREATE TABLE `message` (\n\t`id` text NOT NULL,\n\t`session_id` text NOT NULL,\n\t`time_created` integer NOT NULL,\n\t`time_updated` integer NOT NULL,\n\t`data` text NOT NULL\n)"},
		{"part", "CREATE TABLE `part` (\n\t`id` text NOT NULL,\n\t`message_id` text NOT NULL,\n\t`session_id` text NOT NULL,\n\t`time_created` integer NOT NULL,\n\t`time_updated` integer NOT NULL,\n\t`data` text NOT NULL\n)"},
	}
	var master [][]any
	for i, t := range schema {
		master = append(master, []any{"table", t.name, t.name, int64(i + 2), t.sql})
	}
	var sess [][]any
	for _, s := range sessions {
		sess = append(sess, []any{s.ID, s.ProjectID, nil, s.Directory, s.Title, s.Created, s.Updated})
	}
	// The user message each answer answers: the session's last before it.
	parents := make([]string, len(msgs))
	lastUser := map[string]string{}
	for i, m := range msgs {
		if m.Role == "user" {
			lastUser[m.Session] = m.ID
		} else {
			parents[i] = lastUser[m.Session]
		}
	}
	// Newest rows first into the budget, so a full page drops the oldest.
	var msgRows, partRows [][]any
	budget := [2]int{pageSize - 200, pageSize - 200}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		data, parts := opencodeRows(m, parents[i])
		mr := []any{m.ID, m.Session, m.At, m.At, data}
		var prs [][]any
		ps := 0
		for j, part := range parts {
			pr := []any{fmt.Sprintf("prt%s%02d", strings.TrimPrefix(m.ID, "msg"), j), m.ID, m.Session, m.At, m.At, part}
			prs = append(prs, pr)
			ps += len(sqliteRecord(pr)) + 24
		}
		ms := len(sqliteRecord(mr)) + 24
		if ms > budget[0] || ps > budget[1] {
			break
		}
		budget[0] -= ms
		budget[1] -= ps
		msgRows = append([][]any{mr}, msgRows...)
		partRows = append(prs, partRows...)
	}
	out := make([]byte, 0, 4*pageSize)
	for i, rows := range [][][]any{master, sess, msgRows, partRows} {
		out = append(out, sqliteLeaf(rows, pageSize, i == 0)...)
	}
	h := out[:100]
	copy(h, "SQLite format 3\x00")
	binary.BigEndian.PutUint16(h[16:], 1) // 65536
	h[18], h[19], h[20], h[21], h[22], h[23] = 1, 1, 0, 64, 32, 32
	binary.BigEndian.PutUint32(h[24:], 1) // change counter
	binary.BigEndian.PutUint32(h[28:], 4) // pages
	binary.BigEndian.PutUint32(h[40:], 1) // schema cookie
	binary.BigEndian.PutUint32(h[44:], 4) // schema format
	binary.BigEndian.PutUint32(h[56:], 1) // UTF-8
	binary.BigEndian.PutUint32(h[92:], 1) // version-valid-for
	binary.BigEndian.PutUint32(h[96:], 3045000)
	return out
}

// opencodeTokens is what the loopback model server reports for a step
// (testdata/store/records_v1.18.33.tgz of the adapter: 10 in, 3 out).
var opencodeTokens = map[string]any{"total": 13, "input": 10, "output": 3, "reasoning": 0, "cache": map[string]any{"write": 0, "read": 0}}

// opencodeRows is a message's data and its parts' data as opencode 1.18.33
// leaves them (testdata/store/records_v1.18.33.tgz of the adapter): a user
// message's text; an answer, written once it is whole, completed with the
// finish that ends the turn (or the abort's error), naming the message it
// answers (parentID), its tokens and cost, and its parts a step-start, the
// text and the step-finish with the same tokens.
func opencodeRows(m ocMessage, parent string) (string, []string) {
	md := map[string]any{"role": m.Role, "time": map[string]any{"created": m.At}}
	parts := []map[string]any{{"type": "text", "text": m.Text}}
	if m.Role == "assistant" {
		md["time"] = map[string]any{"created": m.At, "completed": m.At}
		md["finish"] = "stop"
		md["cost"], md["tokens"] = 0, opencodeTokens
		if parent != "" {
			md["parentID"] = parent
		}
		parts = []map[string]any{{"type": "step-start"}, parts[0], {"type": "step-finish", "reason": "stop", "tokens": opencodeTokens, "cost": 0}}
	}
	switch m.Kind {
	case ocCompaction:
		parts = []map[string]any{{"type": "compaction", "auto": false}}
	case ocSummary:
		md["mode"], md["agent"], md["summary"] = "compaction", "compaction", true
	case ocAborted:
		delete(md, "finish")
		md["error"] = map[string]any{"name": "MessageAbortedError", "data": map[string]any{"message": "Aborted"}}
		md["tokens"] = map[string]any{"input": 0, "output": 0, "reasoning": 0, "cache": map[string]any{"read": 0, "write": 0}}
		parts = []map[string]any{{"type": "step-start"}}
	}
	data, _ := json.Marshal(md)
	out := make([]string, len(parts))
	for i, p := range parts {
		b, _ := json.Marshal(p)
		out[i] = string(b)
	}
	return string(data), out
}

// sqliteLeaf is one table-leaf page holding rows (rowids 1…n); page 1
// leaves room for the file header.
func sqliteLeaf(rows [][]any, pageSize int, first bool) []byte {
	p := make([]byte, pageSize)
	h := 0
	if first {
		h = 100
	}
	end := pageSize
	for i, r := range rows {
		rec := sqliteRecord(r)
		cell := sqliteVarint(nil, uint64(len(rec)))
		cell = sqliteVarint(cell, uint64(i+1))
		cell = append(cell, rec...)
		end -= len(cell)
		copy(p[end:], cell)
		binary.BigEndian.PutUint16(p[h+8+2*i:], uint16(end))
	}
	p[h] = 0x0d
	binary.BigEndian.PutUint16(p[h+3:], uint16(len(rows)))
	if end < pageSize {
		binary.BigEndian.PutUint16(p[h+5:], uint16(end))
	}
	return p
}

// sqliteRecord encodes values (string, int64, nil) in SQLite's record format.
func sqliteRecord(vals []any) []byte {
	var types, body []byte
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			types = sqliteVarint(types, 0)
		case int64:
			types = sqliteVarint(types, 6)
			body = binary.BigEndian.AppendUint64(body, uint64(x))
		case string:
			types = sqliteVarint(types, uint64(2*len(x)+13))
			body = append(body, x...)
		}
	}
	hlen := len(types) + 1
	if hlen > 127 {
		hlen++
	}
	out := sqliteVarint(nil, uint64(hlen))
	return append(append(out, types...), body...)
}

// sqliteVarint appends v as SQLite's big-endian varint (v < 2^56).
func sqliteVarint(b []byte, v uint64) []byte {
	var tmp [9]byte
	n := 0
	for {
		tmp[n] = byte(v & 0x7f)
		n++
		v >>= 7
		if v == 0 {
			break
		}
	}
	for i := n - 1; i >= 0; i-- {
		c := tmp[i]
		if i > 0 {
			c |= 0x80
		}
		b = append(b, c)
	}
	return b
}

package opencode

import (
	"encoding/json"
	"slices"
	"sync/atomic"
)

// partData is the part of a part row's data leo reads: a text part's text,
// a tool part's name and input. A tool's output, which can be megabytes,
// is skipped by the decoder and never kept.
type partData struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Synthetic bool   `json:"synthetic"`
	Tool      string `json:"tool"`
	State     struct {
		Input json.RawMessage `json:"input"`
		// Status and Error: a tool call's end ("error", and its words).
		Status string `json:"status"`
		Error  string `json:"error"`
	} `json:"state"`
}

// partRows counts the part rows decoded (tests check that a second read
// of a conversation decodes only the parts of messages that changed).
var partRows atomic.Int64

// eachPart calls visit with the parts of each message of mids, message by
// message in mids' order (the scan: in rowid order), each message's parts
// in the order opencode made them (rowid). Through the (message_id, …)
// index a message's rowids are gathered first and its rows fetched one at
// a time, so only one part is decoded at once however large the message.
func eachPart(f *sqliteFile, tables map[string]sqliteTable, indexes map[string]sqliteIndex, mids []string, visit func(mid string, p *partData)) error {
	pt := tables["part"]
	pMsg, pData := pt.col("message_id"), pt.col("data")
	decode := func(row []any, want string) {
		mid, _ := field(row, pMsg).(string)
		if mid != want {
			return
		}
		s, ok := field(row, pData).(string)
		if !ok {
			return
		}
		partRows.Add(1)
		var d partData
		if decodePart(s, &d) == nil {
			visit(mid, &d)
		}
	}
	if pIdx, ok := indexOn(indexes, "part", "message_id"); ok && !scanOnly {
		for _, mid := range mids {
			var rowids []int64
			err := f.scanIndexFrom(pIdx.root, []any{mid}, func(rec []any) bool {
				if len(rec) < 2 || compareValues(rec[0], mid) != 0 {
					return false
				}
				if rowid, ok := rec[len(rec)-1].(int64); ok {
					rowids = append(rowids, rowid)
				}
				return true
			})
			if err != nil {
				return err
			}
			slices.Sort(rowids)
			for _, rowid := range rowids {
				row, err := f.rowByID(pt.root, rowid)
				if err != nil {
					return err
				}
				decode(row, mid)
			}
		}
		return nil
	}
	// No index (an opencode other than 1.18, the fake's store): scan.
	want := make(map[string]bool, len(mids))
	for _, mid := range mids {
		want[mid] = true
	}
	return f.scanTable(pt.root, func(row []any) bool {
		if mid, _ := field(row, pMsg).(string); want[mid] {
			decode(row, mid)
		}
		return true
	})
}

// userText reports whether the part is text the user gave (opencode adds
// synthetic text parts of its own: a file's contents, a reminder).
func (p *partData) userText() bool { return p.Type == "text" && !p.Synthetic }

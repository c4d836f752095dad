package opencode

import (
	"encoding/binary"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

// storeBuilder writes a SQLite 3 database the way opencode 1.18 lays its
// store out (the session, message and part tables and the two indexes the
// reader looks rows up by, the schema as the capture has it), for stores
// too large to commit: b-trees packed bottom up, 4 KiB pages, payloads
// past a page in overflow chains, as sqlite.org/fileformat2.html has them.
// sqlite3's PRAGMA integrity_check passes on what it writes.
type storeBuilder struct {
	pages [][]byte // page n is pages[n-1]
}

const buildPageSize = 4096

type storeRow struct {
	rowid int64
	vals  []any
}

func (b *storeBuilder) alloc() (uint32, []byte) {
	p := make([]byte, buildPageSize)
	b.pages = append(b.pages, p)
	return uint32(len(b.pages)), p
}

// cell lays out payload for a cell whose local part is at most maxLocal:
// the local bytes then, when it overflows, the first overflow page.
func (b *storeBuilder) cell(head, payload []byte, maxLocal int) []byte {
	u := buildPageSize
	out := append([]byte(nil), head...)
	if len(payload) <= maxLocal {
		return append(out, payload...)
	}
	minLocal := (u-12)*32/255 - 23
	local := minLocal + (len(payload)-minLocal)%(u-4)
	if local > maxLocal {
		local = minLocal
	}
	out = append(out, payload[:local]...)
	rest := payload[local:]
	var first uint32
	var prev []byte
	for len(rest) > 0 {
		n, p := b.alloc()
		if prev == nil {
			first = n
		} else {
			binary.BigEndian.PutUint32(prev, n)
		}
		k := copy(p[4:], rest)
		rest = rest[k:]
		prev = p
	}
	return binary.BigEndian.AppendUint32(out, first)
}

func writeCells(p []byte, h int, kind byte, cells [][]byte, right uint32) {
	p[h] = kind
	hdr := 8
	if kind == 0x05 || kind == 0x02 {
		hdr = 12
		binary.BigEndian.PutUint32(p[h+8:], right)
	}
	end := len(p)
	for i, c := range cells {
		end -= len(c)
		copy(p[end:], c)
		binary.BigEndian.PutUint16(p[h+hdr+2*i:], uint16(end))
	}
	binary.BigEndian.PutUint16(p[h+3:], uint16(len(cells)))
	binary.BigEndian.PutUint16(p[h+5:], uint16(end))
}

func fits(h, hdr int, cells [][]byte, next []byte) bool {
	used := h + hdr + 2*(len(cells)+1) + len(next)
	for _, c := range cells {
		used += len(c)
	}
	return used <= buildPageSize
}

// table writes a table b-tree of rows (in rowid order) and returns its root.
func (b *storeBuilder) table(rows []storeRow) uint32 {
	type child struct {
		page   uint32
		maxRow int64
	}
	var level []child
	var cells [][]byte
	var last int64
	flush := func() {
		n, p := b.alloc()
		writeCells(p, 0, 0x0d, cells, 0)
		level = append(level, child{n, last})
		cells = nil
	}
	for _, r := range rows {
		payload := sqliteRecordOf(r.vals)
		head := appendVarint(appendVarint(nil, uint64(len(payload))), uint64(r.rowid))
		c := b.cell(head, payload, buildPageSize-35)
		if !fits(0, 8, cells, c) {
			flush()
		}
		cells = append(cells, c)
		last = r.rowid
	}
	if len(cells) > 0 || len(level) == 0 {
		flush()
	}
	for len(level) > 1 {
		var up []child
		i := 0
		for i < len(level) {
			var cs [][]byte
			j := i
			for ; j < len(level)-1; j++ {
				c := binary.BigEndian.AppendUint32(nil, level[j].page)
				c = appendVarint(c, uint64(level[j].maxRow))
				if !fits(0, 12, cs, c) {
					break
				}
				cs = append(cs, c)
			}
			n, p := b.alloc()
			writeCells(p, 0, 0x05, cs, level[j].page)
			up = append(up, child{n, level[j].maxRow})
			i = j + 1
		}
		level = up
	}
	return level[0].page
}

// index writes an index b-tree of entries (sorted, the rowid last) and
// returns its root.
func (b *storeBuilder) index(entries [][]any) uint32 {
	u := buildPageSize
	maxLocal := (u-12)*64/255 - 23
	items := make([][]byte, len(entries))
	for i, e := range entries {
		items[i] = sqliteRecordOf(e)
	}
	// leaves, with a divider between each two
	var pagesAt []uint32
	var dividers [][]byte
	var cells [][]byte
	for _, it := range items {
		c := b.cell(appendVarint(nil, uint64(len(it))), it, maxLocal)
		if len(cells) > 0 && !fits(0, 8, cells, c) {
			n, p := b.alloc()
			writeCells(p, 0, 0x0a, cells, 0)
			pagesAt = append(pagesAt, n)
			dividers = append(dividers, it)
			cells = nil
			continue
		}
		cells = append(cells, c)
	}
	n, p := b.alloc()
	writeCells(p, 0, 0x0a, cells, 0)
	pagesAt = append(pagesAt, n)
	for len(pagesAt) > 1 {
		var upPages []uint32
		var upDividers [][]byte
		var cs [][]byte
		for i, d := range dividers {
			c := binary.BigEndian.AppendUint32(nil, pagesAt[i])
			c = b.cell(append(c, appendVarint(nil, uint64(len(d)))...), d, maxLocal)
			if len(cs) > 0 && !fits(0, 12, cs, c) {
				n, p := b.alloc()
				writeCells(p, 0, 0x02, cs, pagesAt[i])
				upPages = append(upPages, n)
				upDividers = append(upDividers, d)
				cs = nil
				continue
			}
			cs = append(cs, c)
		}
		n, p := b.alloc()
		writeCells(p, 0, 0x02, cs, pagesAt[len(pagesAt)-1])
		upPages = append(upPages, n)
		pagesAt, dividers = upPages, upDividers
	}
	return pagesAt[0]
}

func appendVarint(b []byte, v uint64) []byte {
	if v > 1<<56-1 {
		panic("varint too large")
	}
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

// sqliteRecordOf encodes values (nil, int64, string) as a record.
func sqliteRecordOf(vals []any) []byte {
	var types, body []byte
	for _, v := range vals {
		switch x := v.(type) {
		case nil:
			types = appendVarint(types, 0)
		case int64:
			types = appendVarint(types, 6)
			body = binary.BigEndian.AppendUint64(body, uint64(x))
		case string:
			types = appendVarint(types, uint64(2*len(x)+13))
			body = append(body, x...)
		default:
			panic(fmt.Sprintf("value %T", v))
		}
	}
	hlen := len(types) + 1
	if hlen > 127 {
		hlen++
	}
	return append(appendVarint(nil, uint64(hlen)), append(types, body...)...)
}

// builtMessage is one message of a built store and its parts' data.
type builtMessage struct {
	id, data string
	at       int64
	parts    []string
}

// buildStore writes a store holding session sid (of dir) with msgs to
// path (no WAL).
func buildStore(t testing.TB, path, sid, dir string, msgs []builtMessage) {
	t.Helper()
	b := &storeBuilder{}
	b.alloc() // page 1: the schema, written last
	sess := []storeRow{{1, []any{sid, "proj", nil, nil, "slug", dir, nil, "title", "1.18.33"}}}
	var mRows, pRows []storeRow
	var mIdx, pIdx [][]any
	for i, m := range msgs {
		rowid := int64(i + 1)
		mRows = append(mRows, storeRow{rowid, []any{m.id, sid, m.at, m.at, m.data}})
		mIdx = append(mIdx, []any{sid, m.at, m.id, rowid})
		for j, d := range m.parts {
			prow := int64(len(pRows) + 1)
			pid := fmt.Sprintf("prt_%s_%04d", strings.TrimPrefix(m.id, "msg_"), j)
			pRows = append(pRows, storeRow{prow, []any{pid, m.id, sid, m.at, m.at, d}})
			pIdx = append(pIdx, []any{m.id, pid, prow})
		}
	}
	cmp := func(a, b []any) int {
		for i := range a {
			if c := compareValues(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	}
	slices.SortFunc(mIdx, cmp)
	slices.SortFunc(pIdx, cmp)
	master := []storeRow{
		{1, []any{"table", "session", "session", int64(b.table(sess)), "CREATE TABLE `session` (\n\t`id` text NOT NULL,\n\t`project_id` text NOT NULL,\n\t`workspace_id` text,\n\t`parent_id` text,\n\t`slug` text NOT NULL,\n\t`directory` text NOT NULL,\n\t`path` text,\n\t`title` text NOT NULL,\n\t`version` text NOT NULL\n)"}},
		{2, []any{"table", "message", "message", int64(b.table(mRows)), "CREATE TABLE `message` (\n\t`id` text NOT NULL,\n\t`session_id` text NOT NULL,\n\t`time_created` integer NOT NULL,\n\t`time_updated` integer NOT NULL,\n\t`data` text NOT NULL\n)"}},
		{3, []any{"table", "part", "part", int64(b.table(pRows)), "CREATE TABLE `part` (\n\t`id` text NOT NULL,\n\t`message_id` text NOT NULL,\n\t`session_id` text NOT NULL,\n\t`time_created` integer NOT NULL,\n\t`time_updated` integer NOT NULL,\n\t`data` text NOT NULL\n)"}},
		{4, []any{"index", "message_session_time_created_id_idx", "message", int64(b.index(mIdx)), "CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`)"}},
		{5, []any{"index", "part_message_id_id_idx", "part", int64(b.index(pIdx)), "CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`)"}},
	}
	var cells [][]byte
	for _, r := range master {
		payload := sqliteRecordOf(r.vals)
		cells = append(cells, append(appendVarint(appendVarint(nil, uint64(len(payload))), uint64(r.rowid)), payload...))
	}
	p1 := b.pages[0]
	writeCells(p1, 100, 0x0d, cells, 0)
	copy(p1, "SQLite format 3\x00")
	binary.BigEndian.PutUint16(p1[16:], buildPageSize)
	p1[18], p1[19], p1[20], p1[21], p1[22], p1[23] = 1, 1, 0, 64, 32, 32
	binary.BigEndian.PutUint32(p1[24:], 1)
	binary.BigEndian.PutUint32(p1[28:], uint32(len(b.pages)))
	binary.BigEndian.PutUint32(p1[40:], 1)
	binary.BigEndian.PutUint32(p1[44:], 4)
	binary.BigEndian.PutUint32(p1[56:], 1)
	binary.BigEndian.PutUint32(p1[92:], 1)
	binary.BigEndian.PutUint32(p1[96:], 3045000)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range b.pages {
		if _, err := f.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// appendWALCommit appends to path's WAL (creating it) one commit of the
// pages given (page number → its 4 KiB content), as SQLite writes one.
func appendWALCommit(t testing.TB, path string, dbPages uint32, pages map[uint32][]byte) {
	t.Helper()
	wal := path + "-wal"
	b, err := os.ReadFile(wal)
	if os.IsNotExist(err) {
		b = make([]byte, 32)
		binary.BigEndian.PutUint32(b[0:], 0x377f0682)
		binary.BigEndian.PutUint32(b[4:], 3007000)
		binary.BigEndian.PutUint32(b[8:], buildPageSize)
		binary.BigEndian.PutUint32(b[16:], 0x1234)
		binary.BigEndian.PutUint32(b[20:], 0x5678)
		s0, s1 := walChecksum(binary.LittleEndian, b[:24], 0, 0)
		binary.BigEndian.PutUint32(b[24:], s0)
		binary.BigEndian.PutUint32(b[28:], s1)
	} else if err != nil {
		t.Fatal(err)
	}
	// the running checksum: the last frame's, else the header's
	s0, s1 := binary.BigEndian.Uint32(b[24:]), binary.BigEndian.Uint32(b[28:])
	if len(b) > 32 {
		last := b[len(b)-buildPageSize-24:]
		s0, s1 = binary.BigEndian.Uint32(last[16:]), binary.BigEndian.Uint32(last[20:])
	}
	nums := make([]uint32, 0, len(pages))
	for n := range pages {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for i, n := range nums {
		fh := make([]byte, 24)
		binary.BigEndian.PutUint32(fh[0:], n)
		if i == len(nums)-1 {
			binary.BigEndian.PutUint32(fh[4:], dbPages)
		}
		copy(fh[8:16], b[16:24])
		s0, s1 = walChecksum(binary.LittleEndian, fh[:8], s0, s1)
		s0, s1 = walChecksum(binary.LittleEndian, pages[n], s0, s1)
		binary.BigEndian.PutUint32(fh[16:], s0)
		binary.BigEndian.PutUint32(fh[20:], s1)
		b = append(append(b, fh...), pages[n]...)
	}
	if err := os.WriteFile(wal, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

package opencode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Index reads: opencode indexes message by (session_id, time_created, id)
// and part by (message_id, id), so the witness looks up a session's recent
// messages and their parts without scanning whole tables, then fetches
// each row by its rowid.

// sqliteIndex is an index's root page, its table and its columns in order.
type sqliteIndex struct {
	root    uint32
	table   string
	columns []string
}

var indexCols = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?is)^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+.*?\bON\s+[` + "`" + `"]?([A-Za-z_][A-Za-z0-9_]*)[` + "`" + `"]?\s*\(([^()]*)\)\s*$`)
})

// indexes reads sqlite_master: every plain index over columns (no
// expressions, no partial index) by name.
func (f *sqliteFile) indexes() (map[string]sqliteIndex, error) {
	out := map[string]sqliteIndex{}
	err := f.scanTable(1, func(row []any) bool {
		if len(row) < 5 || row[0] != "index" {
			return true
		}
		name, _ := row[1].(string)
		root, _ := row[3].(int64)
		sql, _ := row[4].(string)
		m := indexCols().FindStringSubmatch(sql)
		if m == nil || root <= 0 || root > maxDBPages {
			return true
		}
		idx := sqliteIndex{root: uint32(root), table: m[1]}
		for _, c := range strings.Split(m[2], ",") {
			c = strings.Trim(strings.TrimSpace(c), "`\"")
			if c == "" || strings.ContainsAny(c, " \t") { // COLLATE, DESC…: not a plain column
				return true
			}
			idx.columns = append(idx.columns, c)
		}
		out[name] = idx
		return true
	})
	return out, err
}

// indexOn is an index of table whose columns start with cols, if any.
func indexOn(indexes map[string]sqliteIndex, table string, cols ...string) (sqliteIndex, bool) {
	for _, ix := range indexes {
		if ix.table == table && len(ix.columns) >= len(cols) && slicesEqualFold(ix.columns[:len(cols)], cols) {
			return ix, true
		}
	}
	return sqliteIndex{}, false
}

func slicesEqualFold(a, b []string) bool {
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return len(a) == len(b)
}

// compareValues orders two record values as SQLite does with the BINARY
// collation: NULL, then numbers, then text, then blobs.
func compareValues(a, b any) int {
	rank := func(v any) int {
		switch v.(type) {
		case nil:
			return 0
		case int64, float64:
			return 1
		case string:
			return 2
		default:
			return 3
		}
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	switch x := a.(type) {
	case nil:
		return 0
	case string:
		return strings.Compare(x, b.(string))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	}
	fa, fb := toFloat(a), toFloat(b)
	ia, aInt := a.(int64)
	ib, bInt := b.(int64)
	switch {
	case aInt && bInt && ia < ib, !(aInt && bInt) && fa < fb:
		return -1
	case aInt && bInt && ia > ib, !(aInt && bInt) && fa > fb:
		return 1
	}
	return 0
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// compareKey compares a record's leading values with key.
func compareKey(rec []any, key []any) int {
	for i, k := range key {
		if i >= len(rec) {
			return -1
		}
		if c := compareValues(rec[i], k); c != 0 {
			return c
		}
	}
	return 0
}

// scanIndexFrom calls fn, in index order, with every entry (its values,
// the rowid last) of the index b-tree rooted at root whose leading values
// are not below from. fn returning false stops the scan.
func (f *sqliteFile) scanIndexFrom(root uint32, from []any, fn func(rec []any) bool) error {
	visited := 0
	var walk func(n uint32, depth int) (bool, error)
	walk = func(n uint32, depth int) (bool, error) {
		p, h, kind, cells, err := f.btreePage(n, &visited, depth, 12, "index")
		if err != nil {
			return false, err
		}
		var ptrs int
		switch kind {
		case 0x0a:
			ptrs = h + 8
		case 0x02:
			ptrs = h + 12
		default:
			return false, fmt.Errorf("page %d: not an index b-tree page (type %#x)", n, kind)
		}
		cell := func(i int) (child uint32, rec []any, err error) {
			if ptrs+2*i+2 > len(p) {
				return 0, nil, fmt.Errorf("page %d: bad cell pointer", n)
			}
			off := int(binary.BigEndian.Uint16(p[ptrs+2*i:]))
			if kind == 0x02 {
				if off+4 > len(p) {
					return 0, nil, fmt.Errorf("page %d: bad cell", n)
				}
				child = binary.BigEndian.Uint32(p[off:])
				off += 4
			}
			payload, err := f.indexPayload(p, off)
			if err != nil {
				return 0, nil, fmt.Errorf("page %d cell %d: %w", n, i, err)
			}
			rec, err = decodeRecord(payload)
			if err != nil {
				return 0, nil, fmt.Errorf("page %d cell %d: %w", n, i, err)
			}
			return child, rec, nil
		}
		// The first cell not below from: the cells before it, and all
		// left of them, are below from.
		lo, hi := 0, cells
		for lo < hi {
			mid := (lo + hi) / 2
			_, rec, err := cell(mid)
			if err != nil {
				return false, err
			}
			if compareKey(rec, from) < 0 {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		for i := lo; i < cells; i++ {
			child, rec, err := cell(i)
			if err != nil {
				return false, err
			}
			if child != 0 {
				if more, err := walk(child, depth+1); !more || err != nil {
					return more, err
				}
			}
			if !fn(rec) {
				return false, nil
			}
		}
		if kind == 0x02 {
			return walk(binary.BigEndian.Uint32(p[h+8:]), depth+1)
		}
		return true, nil
	}
	_, err := walk(root, 0)
	return err
}

// indexPayload returns the whole payload of the index cell whose payload
// size varint is at off, following overflow pages.
func (f *sqliteFile) indexPayload(p []byte, off int) ([]byte, error) {
	u := f.usable
	return f.payloadAt(p, off, false, (u-12)*64/255-23)
}

// rowByID returns the row of rowid in the table b-tree rooted at root, nil
// when there is none.
func (f *sqliteFile) rowByID(root uint32, rowid int64) ([]any, error) {
	n := root
	for depth := 0; ; depth++ {
		if depth > 64 {
			return nil, errors.New("table b-tree too deep or cyclic")
		}
		p, err := f.page(n)
		if err != nil {
			return nil, err
		}
		h := 0
		if n == 1 {
			h = 100
		}
		if h+12 > len(p) {
			return nil, fmt.Errorf("page %d: short", n)
		}
		kind := p[h]
		cells := int(binary.BigEndian.Uint16(p[h+3:]))
		switch kind {
		case 0x05: // interior: the first cell whose key is ≥ rowid leads to it
			next := binary.BigEndian.Uint32(p[h+8:])
			lo, hi := 0, cells
			for lo < hi {
				mid := (lo + hi) / 2
				off, err := cellOffset(p, h+12, mid)
				if err != nil || off+4 > len(p) {
					return nil, fmt.Errorf("page %d: bad cell", n)
				}
				key, m := uvarintSigned(p[off+4:])
				if m == 0 {
					return nil, fmt.Errorf("page %d: bad key", n)
				}
				if key >= rowid {
					hi = mid
				} else {
					lo = mid + 1
				}
			}
			if lo < cells {
				off, _ := cellOffset(p, h+12, lo)
				next = binary.BigEndian.Uint32(p[off:])
			}
			n = next
		case 0x0d: // leaf
			for i := range cells {
				off, err := cellOffset(p, h+8, i)
				if err != nil {
					return nil, fmt.Errorf("page %d: %w", n, err)
				}
				_, m := uvarint(p[off:])
				if m == 0 {
					return nil, fmt.Errorf("page %d: bad cell", n)
				}
				id, k := uvarintSigned(p[off+m:])
				if k == 0 {
					return nil, fmt.Errorf("page %d: bad rowid", n)
				}
				if id != rowid {
					continue
				}
				payload, err := f.leafPayload(p, off)
				if err != nil {
					return nil, fmt.Errorf("page %d cell %d: %w", n, i, err)
				}
				return decodeRecord(payload)
			}
			return nil, nil
		default:
			return nil, fmt.Errorf("page %d: not a table b-tree page (type %#x)", n, kind)
		}
	}
}

func cellOffset(p []byte, ptrs, i int) (int, error) {
	if ptrs+2*i+2 > len(p) {
		return 0, errors.New("bad cell pointer")
	}
	off := int(binary.BigEndian.Uint16(p[ptrs+2*i:]))
	if off >= len(p) {
		return 0, errors.New("cell offset past the page")
	}
	return off, nil
}

// uvarintSigned is a varint read as SQLite's signed 64-bit integer (rowid).
func uvarintSigned(b []byte) (int64, int) {
	v, n := uvarint(b)
	return int64(v), n
}

// rowsByIndex visits, in the index's order, the rows of table t that index
// idx lists under key, starting at from (key first, then whatever narrows
// it, e.g. a time): each is fetched by its rowid. visit returns false to
// stop; a row that cannot be read stops the scan with its error.
func (f *sqliteFile) rowsByIndex(idx sqliteIndex, t sqliteTable, key any, from []any, visit func(rowid int64, row []any) bool) error {
	var rowErr error
	err := f.scanIndexFrom(idx.root, from, func(rec []any) bool {
		if len(rec) < 2 || compareValues(rec[0], key) != 0 {
			return false
		}
		rowid, ok := rec[len(rec)-1].(int64)
		if !ok {
			return true
		}
		row, err := f.rowByID(t.root, rowid)
		if err != nil {
			rowErr = err
			return false
		}
		return visit(rowid, row)
	})
	if err == nil {
		err = rowErr
	}
	return err
}

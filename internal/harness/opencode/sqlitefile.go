package opencode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

// opencode 1.18 keeps sessions, messages and parts in a SQLite database in
// WAL mode (opencode.db and opencode.db-wal). leo links no cgo and takes no
// SQLite dependency for this one read, and `opencode db`/`export` cost a
// whole opencode start-up (seconds of CPU) per call, so this file reads the
// tables itself: the file format (sqlite.org/fileformat2.html) read only,
// table b-trees scanned in full, pages taken from the last commit in the
// WAL when they are there, else from the database file. It never writes or
// locks anything. A read racing a checkpoint is detected (the WAL header
// changed under it) and retried; what it still cannot read is an error,
// and the caller tries again at its next poll.

// maxDBPages bounds a scan (with a 4 KiB page, 4 GiB): a corrupt or hostile
// file cannot send a scan round in circles for ever.
const maxDBPages = 1 << 20

// sqliteFile is one consistent view of a database and its WAL.
type sqliteFile struct {
	db       *os.File
	maxPages int // pages in the file and the WAL: a scan visits no more
	pageSize int
	usable   int
	wal      map[uint32][]byte // page number → the page as of the last WAL commit
	walHdr   []byte            // the WAL's header, nil without a WAL in use
	walEnd   int64             // offset after the WAL's last commit frame
	dbInfo   os.FileInfo
}

// walCache is what a view read of a WAL, for the next view to read only
// the frames appended since: the WAL's header, the offset after its last
// commit frame, the running checksum there, and the committed pages (never
// changed in place: a later commit copies the map).
type walCache struct {
	hdr       []byte
	end       int64
	s0, s1    uint32
	committed map[uint32][]byte
}

var errNotSQLite = errors.New("not a SQLite 3 database")

// openSQLiteCached reads path's header and its WAL (path+"-wal") and
// returns a view of the database as of the WAL's last commit. With a wc it
// reads only the WAL frames appended since the view wc was taken of (when
// the WAL is still the one it read: same header), and leaves in wc what
// this view read.
func openSQLiteCached(path string, wc *walCache) (*sqliteFile, error) {
	for attempt := 0; ; attempt++ {
		f, retry, err := openSQLiteOnce(path, wc)
		if err == nil || !retry || attempt == 3 {
			return f, err
		}
	}
}

func openSQLiteOnce(path string, wc *walCache) (f *sqliteFile, retry bool, err error) {
	db, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	var hdr [100]byte
	if _, err := io.ReadFull(db, hdr[:]); err != nil {
		return nil, false, fmt.Errorf("%s: %w", path, errNotSQLite)
	}
	if string(hdr[:16]) != "SQLite format 3\x00" {
		return nil, false, fmt.Errorf("%s: %w", path, errNotSQLite)
	}
	pageSize := int(binary.BigEndian.Uint16(hdr[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return nil, false, fmt.Errorf("%s: page size %d: %w", path, pageSize, errNotSQLite)
	}
	f = &sqliteFile{db: db, pageSize: pageSize, usable: pageSize - int(hdr[20])}
	if f.usable < 480 {
		return nil, false, fmt.Errorf("%s: usable page size %d: %w", path, f.usable, errNotSQLite)
	}
	walHdr, next, err := f.readWAL(path+"-wal", wc)
	if err != nil {
		return nil, false, err
	}
	fi, err := db.Stat()
	if err != nil {
		return nil, false, err
	}
	f.dbInfo = fi
	f.maxPages = int(fi.Size()/int64(pageSize)) + len(f.wal) + 1
	// A checkpoint that reset the WAL while it was read shows as a new
	// header: read again.
	if walHdr != nil {
		again := make([]byte, 32)
		w, err := os.Open(path + "-wal")
		if err != nil {
			return nil, true, err
		}
		_, err = io.ReadFull(w, again)
		w.Close()
		if err != nil || !bytes.Equal(again, walHdr) {
			return nil, true, fmt.Errorf("%s-wal changed while read", path)
		}
	}
	if wc != nil {
		*wc = next
	}
	return f, false, nil
}

func (f *sqliteFile) Close() error { return f.db.Close() }

// readWAL loads the frames of the WAL up to its last valid commit; it
// returns the WAL's header (nil when there is no WAL to use) and what was
// read, as a walCache. With a cache of the same WAL (same header), only the
// frames after its last commit are read.
func (f *sqliteFile) readWAL(path string, wc *walCache) ([]byte, walCache, error) {
	w, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, walCache{}, nil
	}
	if err != nil {
		return nil, walCache{}, err
	}
	defer w.Close()
	fi, err := w.Stat()
	if err != nil {
		return nil, walCache{}, err
	}
	if fi.Size() < 32 {
		return nil, walCache{}, nil
	}
	hdr := make([]byte, 32)
	if _, err := io.ReadFull(w, hdr); err != nil {
		return nil, walCache{}, err
	}
	magic := binary.BigEndian.Uint32(hdr[0:4])
	var order binary.ByteOrder
	switch magic {
	case 0x377f0682:
		order = binary.LittleEndian
	case 0x377f0683:
		order = binary.BigEndian
	default:
		return nil, walCache{}, nil // not a WAL: the database file alone is the truth
	}
	if int(binary.BigEndian.Uint32(hdr[8:12])) != f.pageSize {
		return nil, walCache{}, nil
	}
	s0, s1 := walChecksum(order, hdr[:24], 0, 0)
	if s0 != binary.BigEndian.Uint32(hdr[24:28]) || s1 != binary.BigEndian.Uint32(hdr[28:32]) {
		return nil, walCache{}, nil
	}
	c := walCache{hdr: hdr, end: 32, s0: s0, s1: s1, committed: map[uint32][]byte{}}
	if wc != nil && bytes.Equal(wc.hdr, hdr) && wc.end <= fi.Size() {
		c = *wc
	}
	data := make([]byte, fi.Size()-c.end)
	n, err := w.ReadAt(data, c.end)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, walCache{}, err
	}
	data = data[:n]
	walBytes.Add(int64(n))
	base := c.end
	salt := hdr[16:24]
	frames := map[uint32][]byte{}
	shared := true // c.committed is the previous view's: copy before adding
	s0, s1 = c.s0, c.s1
	frameSize := 24 + f.pageSize
	for off := 0; off+frameSize <= len(data); off += frameSize {
		fh := data[off : off+24]
		if !bytes.Equal(fh[8:16], salt) {
			break
		}
		s0, s1 = walChecksum(order, fh[:8], s0, s1)
		page := data[off+24 : off+frameSize]
		s0, s1 = walChecksum(order, page, s0, s1)
		if s0 != binary.BigEndian.Uint32(fh[16:20]) || s1 != binary.BigEndian.Uint32(fh[20:24]) {
			break
		}
		frames[binary.BigEndian.Uint32(fh[0:4])] = page
		if binary.BigEndian.Uint32(fh[4:8]) != 0 { // a commit frame
			if shared {
				c.committed, shared = maps.Clone(c.committed), false
			}
			for k, v := range frames {
				c.committed[k] = v
			}
			clear(frames)
			c.end = base + int64(off+frameSize)
			c.s0, c.s1 = s0, s1
		}
	}
	f.wal = c.committed
	f.walHdr, f.walEnd = bytes.Clone(hdr), c.end
	return bytes.Clone(hdr), c, nil
}

// walBytes counts the WAL bytes read (tests check that a second read of an
// unchanged WAL reads only what was appended).
var walBytes atomic.Int64

// walChecksum is SQLite's WAL checksum over b (a multiple of 8 bytes),
// continuing from s0, s1.
func walChecksum(order binary.ByteOrder, b []byte, s0, s1 uint32) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}

// page returns page n (1-based).
func (f *sqliteFile) page(n uint32) ([]byte, error) {
	if n == 0 || n > maxDBPages {
		return nil, fmt.Errorf("page %d out of range", n)
	}
	if p, ok := f.wal[n]; ok {
		return p, nil
	}
	p := make([]byte, f.pageSize)
	if _, err := f.db.ReadAt(p, int64(n-1)*int64(f.pageSize)); err != nil {
		return nil, fmt.Errorf("page %d: %w", n, err)
	}
	return p, nil
}

// btreePage reads page n of a b-tree walk: its bytes, where its b-tree
// header starts (page 1 holds the file header first), its kind and its cell
// count. visited counts the pages the walk has read, so a damaged or
// cyclic file cannot keep it going; what names the tree in the error.
func (f *sqliteFile) btreePage(n uint32, visited *int, depth, minHeader int, what string) (p []byte, h int, kind byte, cells int, err error) {
	if *visited++; *visited > f.maxPages || depth > 64 {
		return nil, 0, 0, 0, fmt.Errorf("%s b-tree too deep or cyclic", what)
	}
	if p, err = f.page(n); err != nil {
		return nil, 0, 0, 0, err
	}
	if n == 1 {
		h = 100
	}
	if h+minHeader > len(p) {
		return nil, 0, 0, 0, fmt.Errorf("page %d: short", n)
	}
	return p, h, p[h], int(binary.BigEndian.Uint16(p[h+3:])), nil
}

// scanTable calls fn with every row of the table b-tree rooted at root, in
// rowid order. A row is its record's values: nil, int64, float64, string
// or []byte. fn returning false stops the scan.
func (f *sqliteFile) scanTable(root uint32, fn func(row []any) bool) error {
	visited := 0
	var walk func(n uint32, depth int) (bool, error)
	walk = func(n uint32, depth int) (bool, error) {
		p, h, kind, cells, err := f.btreePage(n, &visited, depth, 8, "table")
		if err != nil {
			return false, err
		}
		switch kind {
		case 0x0d: // table leaf
			ptrs := h + 8
			for i := range cells {
				if ptrs+2*i+2 > len(p) {
					return false, fmt.Errorf("page %d: bad cell pointer", n)
				}
				off := int(binary.BigEndian.Uint16(p[ptrs+2*i:]))
				payload, err := f.leafPayload(p, off)
				if err != nil {
					return false, fmt.Errorf("page %d cell %d: %w", n, i, err)
				}
				row, err := decodeRecord(payload)
				if err != nil {
					return false, fmt.Errorf("page %d cell %d: %w", n, i, err)
				}
				if !fn(row) {
					return false, nil
				}
			}
			return true, nil
		case 0x05: // table interior
			ptrs := h + 12
			for i := range cells {
				if ptrs+2*i+2 > len(p) {
					return false, fmt.Errorf("page %d: bad cell pointer", n)
				}
				off := int(binary.BigEndian.Uint16(p[ptrs+2*i:]))
				if off+4 > len(p) {
					return false, fmt.Errorf("page %d: bad cell", n)
				}
				if more, err := walk(binary.BigEndian.Uint32(p[off:]), depth+1); !more || err != nil {
					return more, err
				}
			}
			return walk(binary.BigEndian.Uint32(p[h+8:]), depth+1)
		default:
			return false, fmt.Errorf("page %d: not a table b-tree page (type %#x)", n, kind)
		}
	}
	_, err := walk(root, 0)
	return err
}

// leafPayload returns the whole payload of the table-leaf cell at off,
// following overflow pages.
func (f *sqliteFile) leafPayload(p []byte, off int) ([]byte, error) {
	return f.payloadAt(p, off, true, f.usable-35)
}

// payloadAt returns the whole payload of the cell whose payload size
// varint is at off (then a rowid varint in a table leaf), following
// overflow pages; maxLocal is the most a page holds of it.
func (f *sqliteFile) payloadAt(p []byte, off int, rowid bool, maxLocal int) ([]byte, error) {
	if off >= len(p) {
		return nil, errors.New("cell offset past the page")
	}
	size, n := uvarint(p[off:])
	if n == 0 || size > uint64(f.maxPages)*uint64(f.usable) {
		return nil, errors.New("bad payload size")
	}
	off += n
	if rowid {
		if _, n = uvarint(p[off:]); n == 0 {
			return nil, errors.New("bad rowid")
		}
		off += n
	}
	u := f.usable
	local := int(size)
	if local > maxLocal {
		minLocal := (u-12)*32/255 - 23
		local = minLocal + (int(size)-minLocal)%(u-4)
		if local > maxLocal {
			local = minLocal
		}
	}
	if off+local > len(p) {
		return nil, errors.New("payload past the page")
	}
	out := make([]byte, 0, size)
	out = append(out, p[off:off+local]...)
	if local == int(size) {
		return out, nil
	}
	if off+local+4 > len(p) {
		return nil, errors.New("overflow pointer past the page")
	}
	next := binary.BigEndian.Uint32(p[off+local:])
	// An overflow chain is mostly pages in a row of the file: read the
	// pages it still needs from where it goes in one read, not one each (a
	// tool output of megabytes is hundreds of pages).
	var ahead []byte
	var aheadFrom uint32
	for hops := 0; len(out) < int(size); hops++ {
		if next == 0 || hops > f.maxPages || next > maxDBPages {
			return nil, errors.New("overflow chain ends early")
		}
		var op []byte
		var err error
		if _, inWAL := f.wal[next]; !inWAL && next >= aheadFrom && int(next-aheadFrom) < len(ahead)/f.pageSize {
			i := int(next-aheadFrom) * f.pageSize
			op = ahead[i : i+f.pageSize]
		} else if !inWAL {
			want := min((int(size)-len(out)+u-5)/(u-4), overflowReadAhead)
			if cap(ahead) < want*f.pageSize {
				ahead = make([]byte, want*f.pageSize)
			}
			ahead = ahead[:want*f.pageSize]
			n, err := f.db.ReadAt(ahead, int64(next-1)*int64(f.pageSize))
			if n < f.pageSize {
				return nil, fmt.Errorf("page %d: %w", next, err)
			}
			ahead, aheadFrom = ahead[:n-n%f.pageSize], next
			op = ahead[:f.pageSize]
		} else if op, err = f.page(next); err != nil {
			return nil, err
		}
		take := min(int(size)-len(out), u-4)
		out = append(out, op[4:4+take]...)
		next = binary.BigEndian.Uint32(op[:4])
	}
	return out, nil
}

// overflowReadAhead bounds the pages an overflow chain reads at once.
const overflowReadAhead = 64

// decodeRecord decodes a record's values.
func decodeRecord(b []byte) ([]any, error) {
	hlen, n := uvarint(b)
	if n == 0 || hlen > uint64(len(b)) || hlen < uint64(n) {
		return nil, errors.New("bad record header")
	}
	var types []uint64
	for i := n; i < int(hlen); {
		t, m := uvarint(b[i:hlen])
		if m == 0 {
			return nil, errors.New("bad serial type")
		}
		types = append(types, t)
		i += m
	}
	body := b[hlen:]
	row := make([]any, len(types))
	for i, t := range types {
		size := serialSize(t)
		if size < 0 || size > len(body) {
			return nil, errors.New("record shorter than its header says")
		}
		v := body[:size]
		body = body[size:]
		switch {
		case t == 0:
			row[i] = nil
		case t >= 1 && t <= 6:
			var x int64
			for _, c := range v {
				x = x<<8 | int64(c)
			}
			shift := 64 - 8*uint(size)
			row[i] = x << shift >> shift
		case t == 7:
			row[i] = math.Float64frombits(binary.BigEndian.Uint64(v))
		case t == 8:
			row[i] = int64(0)
		case t == 9:
			row[i] = int64(1)
		case t >= 12 && t%2 == 0:
			row[i] = bytes.Clone(v)
		case t >= 13:
			row[i] = string(v)
		default:
			return nil, fmt.Errorf("reserved serial type %d", t)
		}
	}
	return row, nil
}

func serialSize(t uint64) int {
	switch {
	case t <= 4:
		return int(t)
	case t == 5:
		return 6
	case t == 6 || t == 7:
		return 8
	case t < 12:
		return 0
	case t > 1<<40:
		return -1 // larger than any record
	default:
		return int((t - 12) / 2)
	}
}

// uvarint reads SQLite's big-endian varint; n is 0 when b is too short.
func uvarint(b []byte) (v uint64, n int) {
	for i := 0; i < 9; i++ {
		if i >= len(b) {
			return 0, 0
		}
		if i == 8 {
			return v<<8 | uint64(b[i]), 9
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return v, 9
}

// sqliteTable is a table's root page and its column names in order.
type sqliteTable struct {
	root    uint32
	columns []string
}

func (t sqliteTable) col(name string) int {
	for i, c := range t.columns {
		if c == name {
			return i
		}
	}
	return -1
}

// tables reads sqlite_master: every table's root page and columns.
func (f *sqliteFile) tables() (map[string]sqliteTable, error) {
	out := map[string]sqliteTable{}
	err := f.scanTable(1, func(row []any) bool {
		if len(row) < 5 || row[0] != "table" {
			return true
		}
		name, _ := row[1].(string)
		root, _ := row[3].(int64)
		sql, _ := row[4].(string)
		if root > 0 && root <= maxDBPages {
			out[name] = sqliteTable{root: uint32(root), columns: columnNames(sql)}
		}
		return true
	})
	return out, err
}

// columnDef is a column definition at the start of a CREATE TABLE line:
// `name` (or "name", or name) then a type or constraint word.
var columnDef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("^\\s*[`\"]?([A-Za-z_][A-Za-z0-9_]*)[`\"]?\\s+[A-Za-z]")
})

// columnNames reads the column names of a CREATE TABLE statement, in order;
// table constraints (CONSTRAINT, PRIMARY KEY(…), FOREIGN KEY…) are skipped.
func columnNames(sql string) []string {
	open, close := strings.IndexByte(sql, '('), strings.LastIndexByte(sql, ')')
	if open < 0 || close <= open {
		return nil
	}
	var cols []string
	depth, start := 0, open+1
	body := sql[:close]
	for i := open + 1; i <= len(body); i++ {
		if i < len(body) {
			switch body[i] {
			case '(':
				depth++
				continue
			case ')':
				depth--
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		def := body[start:i]
		start = i + 1
		m := columnDef().FindStringSubmatch(def)
		if m == nil {
			continue
		}
		switch strings.ToUpper(m[1]) {
		case "CONSTRAINT", "PRIMARY", "FOREIGN", "UNIQUE", "CHECK":
			continue
		}
		cols = append(cols, m[1])
	}
	return cols
}

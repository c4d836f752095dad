package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/blackpaw-studio/leo/internal/statefile"
)

// Writing state/agents.json.
//
// agents.json stays one file holding every record, as the offline readers
// (ReadListing, completion, doctor) read it. A change to one agent must not
// cost more with 1,000 agents than with one, so the store keeps each
// record's JSON as the file holds it: a save of one record encodes only
// that record and writes the file from the kept bytes (a copy, then one
// atomic write with its fsync). Saves of different agents that arrive while
// a write is under way are written together by the next writer, one write
// and one fsync for all of them.
//
// Why not a journal beside agents.json: every reader would have to read two
// files and replay one, and a crash between a journal append and its
// compaction would be one more state to recover from. What still grows with
// the fleet is the bytes written (about 0.5 KiB a record): at 1,000 agents
// the ~0.5 MB write with its fsync costs about twice a one-record file's
// (BenchmarkRecordChange prints both), where encoding every record cost
// five times it.
//
// Memory changes only after the disk agrees: each save's done runs once its
// write succeeded, and not at all when it failed. A save that did not land
// forgets the kept bytes (the file may or may not hold it), so the next
// save writes every record again from memory, as every save did before.

// Save writes snapshot (taken by the caller under its own lock) atomically.
// snap is called with the store's save lock held, so snapshots are written
// in the order they were taken.
func (s *Store) Save(snap func() []*Record) error {
	return s.SaveThen(snap, nil)
}

// SaveThen is Save, calling done (when not nil) after the write succeeded
// and before any later snapshot is taken: a change applied to memory in
// done is on disk before any save can see it, and never in memory when the
// write failed. snap is every record; the file is written afresh from it.
func (s *Store) SaveThen(snap func() []*Record, done func()) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.writeAll(snap); err != nil {
		s.forget()
		return err
	}
	if done != nil {
		done()
	}
	return nil
}

func (s *Store) writeAll(snap func() []*Record) error {
	if err := s.checkGuard(); err != nil {
		return err
	}
	kept, err := encodeAll(snap())
	if err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	if err := s.write(kept, nil); err != nil {
		return err
	}
	s.kept, s.known = kept, true
	return nil
}

// forget drops the kept bytes after a save that did not land (refused,
// or failed with the file holding it or not): the next save writes every
// record from memory, so a change made in memory first and not saved
// then is on disk with the next save of any agent.
func (s *Store) forget() { s.kept, s.known = nil, false }

// recordSave is one SaveRecordThen waiting for its write.
type recordSave struct {
	name string
	rec  func() *Record
	done func()
	// written and err are set by the writer that took it (under Store.mu).
	written bool
	err     error
}

// SaveRecordThen saves one agent's record: rec (called with the store's
// save lock held, like SaveThen's snap) is the record now, or nil when it
// is to be removed; every other record is written as the file has it.
// done (when not nil) runs after the write succeeded and before any later
// snapshot of this store is taken, and not at all when it failed. Saves of
// other agents queued meanwhile may share the write; two saves of one
// agent are never in the same write, so each rec sees the done before it.
func (s *Store) SaveRecordThen(name string, rec func() *Record, done func()) error {
	me := &recordSave{name: name, rec: rec, done: done}
	s.qmu.Lock()
	s.queue = append(s.queue, me)
	s.qmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	// The writer before may have taken this save into its write.
	for !me.written {
		s.writeBatch(s.takeBatch())
	}
	return me.err
}

// takeBatch takes the waiting saves from the front of the queue, up to the
// first whose agent is already among them. s.mu must be held.
func (s *Store) takeBatch() []*recordSave {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	seen := make(map[string]bool, len(s.queue))
	n := 0
	for n < len(s.queue) && !seen[s.queue[n].name] {
		seen[s.queue[n].name] = true
		n++
	}
	batch := s.queue[:n:n]
	s.queue = s.queue[n:]
	if len(s.queue) == 0 {
		s.queue = nil
	}
	return batch
}

// writeBatch writes the saves of batch in one write and reports to each.
// s.mu must be held.
func (s *Store) writeBatch(batch []*recordSave) {
	err := s.writeRecords(batch)
	if err != nil {
		s.forget()
	}
	for _, b := range batch {
		b.written, b.err = true, err
		if err == nil && b.done != nil {
			b.done()
		}
	}
}

func (s *Store) writeRecords(batch []*recordSave) error {
	if err := s.checkGuard(); err != nil {
		return err
	}
	// Each record is encoded in the order its save came; names in a batch
	// are distinct.
	changed := make([]keptRecord, 0, len(batch))
	for _, b := range batch {
		c := keptRecord{name: b.name}
		if r := b.rec(); r != nil {
			if r.Name != b.name {
				return fmt.Errorf("write %s: record %q saved as %q", s.path, r.Name, b.name)
			}
			data, err := encodeRecord(r)
			if err != nil {
				return fmt.Errorf("write %s: encode agent %s: %w", s.path, r.Name, err)
			}
			c.data = data
		}
		changed = append(changed, c)
	}
	sort.Slice(changed, func(i, j int) bool { return changed[i].name < changed[j].name })
	kept := s.kept
	if !s.known {
		if s.all == nil {
			return fmt.Errorf("write %s: the other records are not known", s.path)
		}
		var err error
		if kept, err = encodeAll(s.all()); err != nil {
			return fmt.Errorf("write %s: %w", s.path, err)
		}
	}
	if err := s.write(kept, changed); err != nil {
		return err
	}
	s.kept, s.known = apply(kept, changed), true
	return nil
}

func (s *Store) checkGuard() error {
	if s.guard == nil {
		return nil
	}
	if err := s.guard(); err != nil {
		return fmt.Errorf("write %s refused: %w", s.path, err)
	}
	return nil
}

// write puts the records of kept as changed changes them in the file,
// atomically (renameio: temp file, fsync, rename). The file's bytes are
// assembled in a buffer the store keeps for the next write.
func (s *Store) write(kept, changed []keptRecord) error {
	s.buf = assemble(s.buf[:0], kept, changed)
	if err := statefile.Write(s.path, s.buf, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	return nil
}

// The file's text around its records, as json.MarshalIndent(storeFile{…},
// "", "  ") puts it; each record is indented as the agents array's element.
var (
	fileHead     = []byte(fmt.Sprintf("{\n  \"version\": %d,\n  \"agents\": [", storeVersion))
	fileEmpty    = []byte(fmt.Sprintf("{\n  \"version\": %d,\n  \"agents\": []\n}\n", storeVersion))
	recordIndent = "    "
	recordSep    = []byte(",\n" + recordIndent)
	fileTail     = []byte("\n  ]\n}\n")
)

// keptRecord is one record's JSON as the file holds it; data nil, in a
// change, removes the record.
type keptRecord struct {
	name string
	data []byte
}

// encodeRecord is r as the agents array of the file holds it.
func encodeRecord(r *Record) ([]byte, error) {
	return json.MarshalIndent(r, recordIndent, "  ")
}

// encodeAll encodes every record of recs, sorted by name.
func encodeAll(recs []*Record) ([]keptRecord, error) {
	out := make([]keptRecord, 0, len(recs))
	for _, r := range recs {
		data, err := encodeRecord(r)
		if err != nil {
			return nil, fmt.Errorf("encode agent %s: %w", r.Name, err)
		}
		out = append(out, keptRecord{name: r.Name, data: data})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	for i := 1; i < len(out); i++ {
		if out[i].name == out[i-1].name {
			return nil, errors.New("two records named " + out[i].name)
		}
	}
	return out, nil
}

// merged calls each with the records of kept as changed (both sorted by
// name) changes them, in order.
func merged(kept, changed []keptRecord, each func(data []byte)) {
	i, j := 0, 0
	for i < len(kept) || j < len(changed) {
		switch {
		case j == len(changed) || (i < len(kept) && kept[i].name < changed[j].name):
			each(kept[i].data)
			i++
		default:
			if i < len(kept) && kept[i].name == changed[j].name {
				i++
			}
			if changed[j].data != nil {
				each(changed[j].data)
			}
			j++
		}
	}
}

// assemble appends to buf the file holding the records of kept as changed
// changes them: byte for byte what statefile.WriteJSON writes of
// storeFile.
func assemble(buf []byte, kept, changed []keptRecord) []byte {
	size := len(fileHead) + len(fileTail)
	for _, k := range kept {
		size += len(recordSep) + len(k.data)
	}
	for _, c := range changed {
		size += len(recordSep) + len(c.data)
	}
	b := slices.Grow(buf, size)
	b = append(b, fileHead...)
	n := 0
	merged(kept, changed, func(data []byte) {
		if n == 0 {
			b = append(b, '\n')
			b = append(b, recordIndent...)
		} else {
			b = append(b, recordSep...)
		}
		b = append(b, data...)
		n++
	})
	if n == 0 {
		return append(buf, fileEmpty...)
	}
	return append(b, fileTail...)
}

// apply is kept as changed changes it. kept's array is reused: it must be
// the store's own, or fresh.
func apply(kept, changed []keptRecord) []keptRecord {
	for _, c := range changed {
		i, found := sort.Find(len(kept), func(i int) int { return strings.Compare(c.name, kept[i].name) })
		switch {
		case found && c.data != nil:
			kept[i].data = c.data
		case found:
			kept = slices.Delete(kept, i, i+1)
		case c.data != nil:
			kept = slices.Insert(kept, i, c)
		}
	}
	return kept
}

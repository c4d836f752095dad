package agent

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/statefile"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// memory stands in for the manager's records: the store writes the others
// from all() while it does not know the file, and each save's rec reads it.
type memory struct {
	mu   sync.Mutex
	recs map[string]*Record
}

func (m *memory) all() []*Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Record, 0, len(m.recs))
	for _, r := range m.recs {
		out = append(out, r.clone())
	}
	return out
}

func (m *memory) get(name string) *Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.recs[name]; r != nil {
		return r.clone()
	}
	return nil
}

// set changes memory first (as Manager.saveAgent's callers do).
func (m *memory) set(r *Record) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs[r.Name] = r.clone()
}

func newMemoryStore(t *testing.T) (*Store, *memory) {
	t.Helper()
	mem := &memory{recs: map[string]*Record{}}
	s := NewStore(filepath.Join(t.TempDir(), "state", "agents.json"))
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		t.Fatal(err)
	}
	s.all = mem.all
	return s, mem
}

func storeRecord(name string, restarts int) *Record {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	return &Record{Name: name, Template: "codex", Harness: "codex", Workspace: "/w/" + name, State: api.StateRunning,
		CreatedAt: now, StartedAt: &now, Restarts: restarts, EnvKeys: []string{"K"},
		Queue: []Queued{{ID: "q1", Text: "a <b> & \"c\"\n\té ✓", At: now}}}
}

// wantFile is the file statefile.WriteJSON makes of recs: what every save
// wrote before the store kept each record's bytes.
func wantFile(t *testing.T, recs map[string]*Record) []byte {
	t.Helper()
	list := make([]*Record, 0, len(recs))
	for _, r := range recs {
		list = append(list, r)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	p := filepath.Join(t.TempDir(), "want.json")
	if err := statefile.WriteJSON(p, storeFile{Version: storeVersion, Agents: list}, 0o600); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func checkFile(t *testing.T, s *Store, recs map[string]*Record, step string) {
	t.Helper()
	got, err := os.ReadFile(s.path)
	if err != nil {
		t.Fatal(err)
	}
	if want := wantFile(t, recs); !bytes.Equal(got, want) {
		t.Fatalf("%s: the file is\n%s\nwant (as WriteJSON writes every record)\n%s", step, got, want)
	}
}

// A save of one record writes, byte for byte, the file a save of every
// record would: the kept bytes never put a stale record on disk, whatever
// the order of adds, changes and removals.
func TestSavingOneRecordWritesWhatSavingAllWould(t *testing.T) {
	s, mem := newMemoryStore(t)
	if err := s.Save(mem.all); err != nil {
		t.Fatal(err)
	}
	checkFile(t, s, mem.recs, "empty")
	rng := rand.New(rand.NewSource(1))
	for step := 0; step < 300; step++ {
		name := fmt.Sprintf("a%02d", rng.Intn(12))
		if rng.Intn(4) == 0 {
			err := s.SaveRecordThen(name, func() *Record { return nil }, func() {
				mem.mu.Lock()
				delete(mem.recs, name)
				mem.mu.Unlock()
			})
			if err != nil {
				t.Fatal(err)
			}
		} else {
			r := storeRecord(name, step)
			if err := s.SaveRecordThen(name, func() *Record { return r }, func() { mem.set(r) }); err != nil {
				t.Fatal(err)
			}
		}
		checkFile(t, s, mem.recs, fmt.Sprintf("step %d (%s)", step, name))
	}
}

// Change A, change B, the daemon is killed (nothing more runs): a new
// daemon's Load reads both, as they were last saved.
func TestEveryChangeSavedIsReadAfterAKill(t *testing.T) {
	s, mem := newMemoryStore(t)
	for _, n := range []string{"a", "b", "c"} {
		mem.set(storeRecord(n, 0))
	}
	if err := s.Save(mem.all); err != nil {
		t.Fatal(err)
	}
	mem.set(storeRecord("a", 1))
	if err := s.SaveRecordThen("a", func() *Record { return mem.get("a") }, nil); err != nil {
		t.Fatal(err)
	}
	b := storeRecord("b", 2)
	if err := s.SaveRecordThen("b", func() *Record { return b }, func() { mem.set(b) }); err != nil {
		t.Fatal(err)
	}

	recs, skipped, _, err := NewStore(s.path).Load()
	if err != nil || len(skipped) != 0 {
		t.Fatalf("Load: %v %v", err, skipped)
	}
	got := map[string]int{}
	for _, r := range recs {
		got[r.Name] = r.Restarts
	}
	if want := map[string]int{"a": 1, "b": 2, "c": 0}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after the kill Load reads restarts %v, want %v", got, want)
	}
}

// holdWrites makes the store's next write wait inside its guard until
// release is called, once queued saves are waiting behind it.
func holdWrites(t *testing.T, s *Store) (writes func() int, inWrite <-chan struct{}, release func()) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	in, gate := make(chan struct{}), make(chan struct{})
	s.guard = func() error {
		mu.Lock()
		n++
		first := n == 1
		mu.Unlock()
		if first {
			close(in)
			<-gate
		}
		return nil
	}
	var once sync.Once
	return func() int { mu.Lock(); defer mu.Unlock(); return n }, in, func() { once.Do(func() { close(gate) }) }
}

func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, func() bool {
		s.qmu.Lock()
		defer s.qmu.Unlock()
		return len(s.queue) == n
	}, fmt.Sprintf("%d saves queued", n))
}

// Saves of different agents that come while a write is under way all land,
// in one write after it; each one's done runs.
func TestConcurrentSavesShareOneWriteAndAllLand(t *testing.T) {
	s, mem := newMemoryStore(t)
	if err := s.Save(mem.all); err != nil {
		t.Fatal(err)
	}
	writes, inWrite, release := holdWrites(t, s)
	defer release()
	first := storeRecord("first", 0)
	errs := make(chan error, 21)
	go func() {
		errs <- s.SaveRecordThen("first", func() *Record { return first }, func() { mem.set(first) })
	}()
	<-inWrite
	const n = 20
	for i := 0; i < n; i++ {
		r := storeRecord(fmt.Sprintf("a%02d", i), i)
		go func() { errs <- s.SaveRecordThen(r.Name, func() *Record { return r }, func() { mem.set(r) }) }()
	}
	waitQueued(t, s, n)
	release()
	for i := 0; i < n+1; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := writes(); got != 2 {
		t.Fatalf("%d writes for 1 save and %d queued behind it, want 2", got, n)
	}
	if len(mem.recs) != n+1 {
		t.Fatalf("%d records in memory, want %d (a done did not run)", len(mem.recs), n+1)
	}
	checkFile(t, s, mem.recs, "after the shared write")
}

// Two saves of one agent are never in one write: the second's record is
// taken after the first's done, so a change made on disk first then in
// memory (Manager.commit) is never lost to the one queued behind it.
func TestTwoSavesOfOneAgentAreWrittenInTurn(t *testing.T) {
	s, mem := newMemoryStore(t)
	mem.set(storeRecord("a", 0))
	if err := s.Save(mem.all); err != nil {
		t.Fatal(err)
	}
	writes, inWrite, release := holdWrites(t, s)
	defer release()
	bump := func() error {
		var next *Record
		return s.SaveRecordThen("a", func() *Record {
			next = mem.get("a")
			next.Restarts++
			return next
		}, func() { mem.set(next) })
	}
	errs := make(chan error, 3)
	go func() { errs <- bump() }()
	<-inWrite
	go func() { errs <- bump() }()
	go func() { errs <- bump() }()
	waitQueued(t, s, 2)
	release()
	for i := 0; i < 3; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if got := mem.get("a").Restarts; got != 3 {
		t.Fatalf("restarts %d in memory after 3 saves, want 3", got)
	}
	if got := writes(); got != 3 {
		t.Fatalf("%d writes, want 3 (one per save of the agent)", got)
	}
	checkFile(t, s, mem.recs, "after three saves of one agent")
}

// A save whose write fails leaves memory as it was (its done never runs),
// and the next save writes every record from memory again: a change made
// in memory first whose save failed is on disk with it, a change refused
// is not.
func TestFailedWriteLeavesMemoryAndTheNextSaveWritesAll(t *testing.T) {
	s, mem := newMemoryStore(t)
	mem.set(storeRecord("a", 0))
	mem.set(storeRecord("b", 0))
	if err := s.Save(mem.all); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(s.path)
	if err := os.Rename(dir, dir+".saved"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	mem.set(storeRecord("a", 1)) // memory first, then its save fails
	if err := s.SaveRecordThen("a", func() *Record { return mem.get("a") }, nil); err == nil {
		t.Fatal("a save into an unwritable dir succeeded")
	}
	refused := storeRecord("b", 9)
	ran := false
	if err := s.SaveRecordThen("b", func() *Record { return refused }, func() { ran = true; mem.set(refused) }); err == nil {
		t.Fatal("a save into an unwritable dir succeeded")
	}
	if ran || mem.get("b").Restarts != 0 {
		t.Fatal("memory changed although the write failed")
	}

	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+".saved", dir); err != nil {
		t.Fatal(err)
	}
	c := storeRecord("c", 0)
	if err := s.SaveRecordThen("c", func() *Record { return c }, func() { mem.set(c) }); err != nil {
		t.Fatal(err)
	}
	checkFile(t, s, mem.recs, "the save after the failed ones")
}

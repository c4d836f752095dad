package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// Manager.commit and saveAgent racing over a few names — changes on disk
// first (commit's f), changes in memory first then saved, deletes (drop),
// names reused after a delete, writes refused at random — leave, once one
// more save of any agent lands, a file that holds exactly what memory
// holds: no save wrote an older record after a newer one, the kept bytes
// never outlived a failed write, and a refused change never reached
// memory.
func TestCommitsRacingLeaveTheFileAsMemory(t *testing.T) {
	var refuse atomic.Bool
	m, err := New(Options{
		Home:      home.Home{Root: t.TempDir()},
		Tmux:      &tmux.Server{},
		Config:    func() *config.Config { return nil },
		SaveGuard: func() error { return refuseIf(refuse.Load()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	fresh := func(name string) *agent {
		return m.newAgent(&Record{Name: name, Template: "t", Harness: "codex", State: api.StateRunning, CreatedAt: created})
	}
	const names = 6
	name := func(i int) string { return fmt.Sprintf("a%d", i) }
	for i := range names {
		m.agents[name(i)] = fresh(name(i))
	}
	if err := os.MkdirAll(m.opts.Home.StateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := m.save(); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	var seq atomic.Int64
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			for range 150 {
				n := name(rng.Intn(names))
				v := int(seq.Add(1))
				m.mu.Lock()
				a := m.agents[n]
				m.mu.Unlock()
				switch op := rng.Intn(10); {
				case op == 0:
					refuse.Store(rng.Intn(3) == 0)
				case a == nil || op == 1:
					// A name reused after its delete (or a spawn): in the
					// map first, then saved.
					m.mu.Lock()
					if m.agents[n] == nil {
						m.agents[n] = fresh(n)
					}
					x := m.agents[n]
					m.mu.Unlock()
					_ = m.saveAgent(x)
				case op == 2:
					_ = m.commit(a, nil, true) // Delete
				case op < 6:
					// On disk first: memory takes v only once it landed.
					err := a.commit(func(r *Record) { r.Restarts = v })
					a.mu.Lock()
					got := a.rec.Restarts
					a.mu.Unlock()
					if err != nil && got == v {
						t.Errorf("%s: a refused commit's change (restarts %d) is in memory", n, v)
					}
				default:
					// In memory first, then saved (settleInFlight, onExit…).
					a.mu.Lock()
					a.rec.Failures = v
					a.mu.Unlock()
					_ = m.saveAgent(a)
				}
			}
		}()
	}
	wg.Wait()

	refuse.Store(false)
	m.mu.Lock()
	var any *agent
	for _, a := range m.agents {
		any = a
		break
	}
	m.mu.Unlock()
	if any == nil {
		any = fresh(name(0))
		m.mu.Lock()
		m.agents[name(0)] = any
		m.mu.Unlock()
	}
	if err := m.saveAgent(any); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(m.opts.Home.AgentsPath())
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(storeFile{Version: storeVersion, Agents: sortedRecords(m.records())}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want)+"\n" {
		t.Fatalf("after the race the file is\n%s\nwhile memory holds\n%s", got, want)
	}
}

func refuseIf(refuse bool) error {
	if refuse {
		return errors.New("refused (test)")
	}
	return nil
}

func sortedRecords(recs []*Record) []*Record {
	for i := 1; i < len(recs); i++ {
		for j := i; j > 0 && recs[j].Name < recs[j-1].Name; j-- {
			recs[j], recs[j-1] = recs[j-1], recs[j]
		}
	}
	return recs
}

// A reset whose launch fails before anything is saved (here: no config)
// leaves the conversation as it was — in memory and on disk — even when
// another agent's save writes every record while the reset is under way
// (the store does not know the file yet: right after boot, or after a
// failed write). The reset's change must not be in memory before its save.
func TestFailedResetLeavesTheConversationOnDiskWhileOthersSave(t *testing.T) {
	var during atomic.Pointer[func()]
	m, err := New(Options{
		Home: home.Home{Root: t.TempDir()},
		Tmux: &tmux.Server{},
		Config: func() *config.Config {
			if f := during.Swap(nil); f != nil {
				(*f)()
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := os.MkdirAll(m.opts.Home.StateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, n := range []string{"a", "b"} {
		m.agents[n] = m.newAgent(&Record{Name: n, Template: "t", Harness: "claude", State: api.StateRunning,
			SessionID: "s-" + n, SessionUsed: true, Failures: 2, CreatedAt: created})
	}
	saveB := func() {
		if err := m.saveAgent(m.agents["b"]); err != nil {
			t.Error(err)
		}
	}
	during.Store(&saveB) // the launch's plan reads the config: b saves then
	if _, err := m.Reset(context.Background(), "a"); err == nil {
		t.Fatal("a reset without a config succeeded")
	}
	if a := m.agents["a"].view(); a.SessionID != "s-a" {
		t.Fatalf("after the failed reset memory has session %q, want s-a", a.SessionID)
	}
	recs, _, _, err := NewStore(m.opts.Home.AgentsPath()).Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Name == "a" && (r.SessionID != "s-a" || r.Failures != 2) {
			t.Fatalf("after the failed reset the file has a with session %q failures %d, want s-a and 2", r.SessionID, r.Failures)
		}
	}
	if len(recs) != 2 {
		t.Fatalf("%d records on disk, want 2", len(recs))
	}
}

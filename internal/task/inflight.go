package task

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/blackpaw-studio/leo/internal/proc"
	"github.com/blackpaw-studio/leo/internal/statefile"
)

// inflight keeps the headless runs going in a state file, each with its
// harness's process group, so that a daemon killed mid-run (SIGKILL, a
// crash, power loss) is followed by one that records those runs
// (interrupted) instead of losing them, and kills the groups they left:
// a run's group is its own (Setpgid), so it outlives the daemon, and
// nothing would end it or stop the task's next run from overlapping it.
type inflight struct {
	path string // "" keeps nothing

	mu   sync.Mutex
	runs map[string]inflightRun // by run id
}

type inflightRun struct {
	Rec Record `json:"run"`
	// PGID is the process group of the attempt going (0: none yet), and
	// PGIDStart its leader's start time, so a reused pid is never killed.
	PGID      int    `json:"pgid,omitempty"`
	PGIDStart string `json:"pgid_start,omitempty"`
}

type inflightFile struct {
	Version int           `json:"version"`
	Runs    []inflightRun `json:"runs"`
}

// save writes the runs with change applied; memory changes only once the
// file does.
func (f *inflight) save(change func(m map[string]inflightRun)) error {
	if f.path == "" {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	next := maps.Clone(f.runs)
	if next == nil {
		next = map[string]inflightRun{}
	}
	change(next)
	file := inflightFile{Version: 1, Runs: slices.SortedFunc(maps.Values(next), func(a, b inflightRun) int {
		return strings.Compare(a.Rec.ID, b.Rec.ID)
	})}
	if file.Runs == nil {
		file.Runs = []inflightRun{}
	}
	if err := statefile.WriteJSON(f.path, file, 0o600); err != nil {
		return fmt.Errorf("runs in progress (%s): %w", f.path, err)
	}
	f.runs = next
	return nil
}

// leftover reads the runs an earlier daemon left in the file, kills the
// process groups still alive, and returns them (the file is emptied by
// the caller once they are recorded). A file this leo does not understand
// is kept aside, with the error.
func (f *inflight) leftover() ([]inflightRun, error) {
	if f.path == "" {
		return nil, nil
	}
	var file inflightFile
	_, err := statefile.ReadChecked(f.path, &file, func([]byte) error {
		if file.Version != 1 {
			return fmt.Errorf("version %d (this leo knows 1)", file.Version)
		}
		return nil
	})
	var corrupt *statefile.CorruptError
	if err != nil && !errors.As(err, &corrupt) {
		return nil, fmt.Errorf("runs in progress: %w", err)
	}
	for _, r := range file.Runs {
		if r.PGID > 1 && r.PGIDStart != "" && proc.Start(r.PGID) == r.PGIDStart {
			_ = syscall.Kill(-r.PGID, syscall.SIGKILL)
		}
	}
	if corrupt != nil {
		return file.Runs, fmt.Errorf("runs in progress: %w", corrupt)
	}
	return file.Runs, nil
}

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/blackpaw-studio/leo/internal/agent"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/doctor"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/task"
	"github.com/blackpaw-studio/leo/internal/worktree"
)

// doctorWorktrees is what doctor's worktrees check looks at: the roots
// leo makes worktrees under and who claims each (an agent's record, a
// task run going or whose record keeps it). A state file that cannot be
// read claims everything: doctor then lists no orphan and removes none.
func doctorWorktrees(h home.Home, getenv func(string) string) *doctor.Worktrees {
	roots := []string{filepath.Join(h.Root, "worktrees")}
	if cfg, err := config.Load(h.ConfigPath, config.WithGetenv(getenv)); err == nil {
		if r := cfg.WorktreesRoot(h.Root); r != roots[0] {
			roots = append(roots, r)
		}
	}
	agents, _, agentsErr := agent.ReadListing(h.AgentsPath())
	claimedByAgent := map[string]string{}
	for _, a := range agents {
		if a.Worktree != nil {
			claimedByAgent[a.Worktree.Path] = a.Name
		}
	}
	running, runningErr := runsGoing(h.TaskRunningPath())
	hist := task.ReadHistory(h.TaskHistoryDir())
	return &doctor.Worktrees{
		Roots: roots,
		Claimed: func(path string, m worktree.Marker) bool {
			if m.Task == "" {
				return agentsErr != nil || claimedByAgent[path] != ""
			}
			if runningErr != nil || running[m.Run] {
				return true
			}
			recs, _, err := hist.Read(m.Task, 0)
			if err != nil {
				return true
			}
			for _, r := range recs {
				if r.ID == m.Run && r.Worktree != nil && r.Worktree.Path == path && r.Worktree.Kept {
					return true // the run's output, named in its record
				}
			}
			return false
		},
	}
}

// runsGoing are the ids of the headless runs the state file says are
// going (a missing file: none).
func runsGoing(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	var f struct {
		Runs []struct {
			Run struct {
				ID string `json:"id"`
			} `json:"run"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, r := range f.Runs {
		out[r.Run.ID] = true
	}
	return out, nil
}

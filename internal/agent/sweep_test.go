package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

func TestPlanSweep(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := t0.Add(time.Hour)
	listed := now
	launched := t0
	live := func(name, pane string) tmux.PaneInfo {
		return tmux.PaneInfo{SessionName: "leo-" + name, PaneID: pane, Activity: t0}
	}
	cases := []struct {
		name  string
		agent agentView
		pane  *tmux.PaneInfo
		want  []actionKind
	}{
		{"healthy busy agent", agentView{Name: "a", State: api.StateRunning, PaneID: "%1", LastLaunch: launched, LastActivity: now}, ptr(live("a", "%1")), nil},
		{"stopped agent ignored", agentView{Name: "a", State: api.StateStopped}, nil, nil},
		{"dead pane", agentView{Name: "a", State: api.StateRunning, PaneID: "%1", LastLaunch: launched}, ptr(tmux.PaneInfo{SessionName: "leo-a", PaneID: "%1", Dead: true, HasStatus: true, DeadStatus: 3}), []actionKind{actExited}},
		{"session gone", agentView{Name: "a", State: api.StateStarting, PaneID: "%1", LastLaunch: launched}, nil, []actionKind{actVanished}},
		{"launched after the snapshot", agentView{Name: "a", State: api.StateStarting, LastLaunch: listed}, nil, nil},
		{"restart not due", agentView{Name: "a", State: api.StateStarting, ExitHandled: true, NextRestart: now.Add(time.Second)}, nil, nil},
		{"restart due", agentView{Name: "a", State: api.StateStarting, ExitHandled: true, NextRestart: now}, nil, []actionKind{actRestart}},
		{"pane id changed", agentView{Name: "a", State: api.StateRunning, PaneID: "%1", LastLaunch: launched, LastActivity: now}, ptr(live("a", "%7")), []actionKind{actAdopt}},
		{"idle long enough", agentView{Name: "a", State: api.StateRunning, PaneID: "%1", LastLaunch: launched, IdleAfter: 30 * time.Minute, LastActivity: t0}, ptr(live("a", "%1")), []actionKind{actSuspend}},
		{"idle but attached", agentView{Name: "a", State: api.StateRunning, PaneID: "%1", LastLaunch: launched, IdleAfter: 30 * time.Minute}, ptr(tmux.PaneInfo{SessionName: "leo-a", PaneID: "%1", Attached: 1, Activity: t0}), nil},
		{"idle but queued", agentView{Name: "a", State: api.StateRunning, PaneID: "%1", LastLaunch: launched, IdleAfter: 30 * time.Minute, Queued: 1}, ptr(live("a", "%1")), nil},
		{"recent delivery", agentView{Name: "a", State: api.StateRunning, PaneID: "%1", LastLaunch: launched, IdleAfter: 30 * time.Minute, LastActivity: now.Add(-29 * time.Minute)}, ptr(live("a", "%1")), nil},
		{"recent pane output", agentView{Name: "a", State: api.StateRunning, PaneID: "%1", LastLaunch: launched, IdleAfter: 30 * time.Minute}, ptr(tmux.PaneInfo{SessionName: "leo-a", PaneID: "%1", Activity: now.Add(-time.Minute)}), nil},
		{"no idle_suspend_after", agentView{Name: "a", State: api.StateRunning, PaneID: "%1", LastLaunch: launched}, ptr(live("a", "%1")), nil},
		{"still starting is never suspended", agentView{Name: "a", State: api.StateStarting, PaneID: "%1", LastLaunch: launched, IdleAfter: time.Minute}, ptr(live("a", "%1")), nil},
	}
	for _, c := range cases {
		panes := map[string]tmux.PaneInfo{}
		if c.pane != nil {
			panes[c.pane.SessionName] = *c.pane
		}
		got := planSweep(now, listed, []agentView{c.agent}, panes)
		var kinds []actionKind
		for _, a := range got {
			kinds = append(kinds, a.Kind)
		}
		if fmt.Sprint(kinds) != fmt.Sprint(c.want) {
			t.Errorf("%s: plan %v, want %v", c.name, kinds, c.want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestUniqueNamePicksCollisionSuffix(t *testing.T) {
	taken := map[string]bool{"coder": true, "coder-2": true}
	if got := uniqueName("coder", func(n string) bool { return taken[n] }); got != "coder-3" {
		t.Fatalf("got %q, want coder-3", got)
	}
	long := baseName("A_Very.Long Template Name That Goes On And On And On And On For Ever")
	if !config.ValidName(long) {
		t.Fatalf("baseName gave invalid %q", long)
	}
	got := uniqueName(long, func(n string) bool { return n == long })
	if !config.ValidName(got) || got == long {
		t.Fatalf("suffixed long name %q", got)
	}
	if b := baseName("My_Template"); b != "my-template" {
		t.Fatalf("baseName = %q", b)
	}
}

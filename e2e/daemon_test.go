package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/statefile"
)

func TestSecondDaemonRefused(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.writeConfig("", nil)
	d1 := w.startDaemon()
	d2 := w.spawnDaemon()
	select {
	case <-d2.done:
	case <-time.After(30 * time.Second):
		t.Fatal("second daemon still running")
	}
	if d2.cmd.ProcessState.ExitCode() == 0 {
		t.Fatal("second daemon exited 0")
	}
	want := fmt.Sprintf("another leo daemon owns %s (pid %d)", w.home.Root, d1.cmd.Process.Pid)
	if !strings.Contains(d2.stderr.String(), want) {
		t.Fatalf("second daemon said %q, want %q", d2.stderr.String(), want)
	}
	if h, err := w.client.Health(context.Background()); err != nil || h.PID != d1.cmd.Process.Pid {
		t.Fatalf("the first daemon no longer answers: %+v %v", h, err)
	}
}

// claude is looked up every time: missing at start, /health says so and a
// claude spawn fails claude_not_found (424) while codex works; installing
// it needs no daemon restart.
func TestClaudeFoundWithoutRestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "codex", "opencode")
	w.writeConfig("", nil)
	d := w.startDaemon()
	ctx := context.Background()
	h, err := w.client.Health(ctx)
	if err != nil || h.Claude.Found || h.Claude.Path != "" {
		t.Fatalf("health without claude: %+v %v", h, err)
	}
	_, err = w.client.Spawn(ctx, api.SpawnRequest{Template: "claude"})
	if !api.HasCode(err, api.CodeClaudeNotFound) || !strings.Contains(err.Error(), api.ClaudeNotFoundMessage) {
		t.Fatalf("spawn claude without claude: %v", err)
	}
	if _, err := w.client.Spawn(ctx, api.SpawnRequest{Template: "codex"}); err != nil {
		t.Fatalf("codex spawn: %v", err)
	}
	w.install("claude")
	h, err = w.client.Health(ctx)
	if err != nil || !h.Claude.Found || h.Claude.Path != filepath.Join(w.bin, "claude") {
		t.Fatalf("health once claude is installed: %+v %v", h, err)
	}
	if _, err := w.client.Spawn(ctx, api.SpawnRequest{Template: "claude"}); err != nil {
		t.Fatalf("claude spawn once installed: %v", err)
	}
	if h.PID != d.cmd.Process.Pid {
		t.Fatal("the daemon was restarted")
	}
}

// SIGKILL the daemon at random points while 50 spawns and deliveries run.
// After the last restart: no record lost (every acknowledged spawn is
// there) or duplicated, every agent session has a record and every live
// record a session, and every state file parses.
func TestDaemonKilledDuringSpawnsAndDeliveries(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.writeConfig("", map[string]string{"FAKE_TURN_MS": "5"})
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))  // kill points
	pick := rand.New(rand.NewPCG(seed, 2)) // send targets (worker goroutine)
	templates := []string{"codex", "opencode", "claude"}
	const total = 50
	var mu sync.Mutex
	attempted := 0
	acked := map[string]bool{}
	kills := 0
	remaining := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return attempted < total
	}
	for remaining() {
		d := w.startDaemon()
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			ctx := context.Background()
			for {
				select {
				case <-stop:
					return
				default:
				}
				mu.Lock()
				if attempted >= total {
					mu.Unlock()
					return
				}
				tmpl := templates[attempted%len(templates)]
				attempted++
				mu.Unlock()
				a, err := w.client.Spawn(ctx, api.SpawnRequest{Template: tmpl})
				if err != nil {
					return // the daemon died under us
				}
				mu.Lock()
				acked[a.Name] = true
				names := make([]string, 0, len(acked))
				for n := range acked {
					names = append(names, n)
				}
				mu.Unlock()
				if _, err := w.client.Send(ctx, names[pick.IntN(len(names))], "message"); err != nil && !api.HasCode(err, api.CodeDaemonDown) && !api.HasCode(err, api.CodeNotFound) {
					// a send to an agent whose spawn the killed daemon had not
					// finished may be refused; anything else is a bug
					if !api.HasCode(err, api.CodeDeliveryFailed) {
						t.Errorf("send: %v", err)
					}
				}
			}
		}()
		select {
		case <-done:
			d.kill(syscall.SIGTERM)
		case <-time.After(time.Duration(5+rng.IntN(80)) * time.Millisecond):
			d.kill(syscall.SIGKILL)
			kills++
			close(stop)
			<-done
		}
	}
	t.Logf("%d spawns attempted, %d acknowledged, daemon SIGKILLed %d times", attempted, len(acked), kills)

	w.startDaemon()
	ctx := context.Background()
	agents, err := w.client.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]api.Agent{}
	for _, a := range agents {
		if _, dup := byName[a.Name]; dup {
			t.Fatalf("agent %s listed twice", a.Name)
		}
		byName[a.Name] = a
	}
	for n := range acked {
		if _, ok := byName[n]; !ok {
			t.Errorf("acknowledged agent %s lost", n)
		}
	}
	if len(agents) > attempted {
		t.Errorf("%d agents from %d spawns", len(agents), attempted)
	}
	sessions := w.sessions()
	for s := range sessions {
		if _, ok := byName[strings.TrimPrefix(s, "leo-")]; !ok {
			t.Errorf("orphan tmux session %s", s)
		}
	}
	for n, a := range byName {
		if _, ok := sessions["leo-"+n]; a.State != api.StateStopped && !ok {
			t.Errorf("agent %s is %s without a tmux session", n, a.State)
		}
	}
	// Every state file parses; nothing was set aside as corrupt.
	var file struct {
		Agents []map[string]any `json:"agents"`
	}
	if _, err := statefile.ReadJSON(w.home.AgentsPath(), &file); err != nil {
		t.Fatalf("agents.json: %v", err)
	}
	if len(file.Agents) != len(agents) {
		t.Fatalf("agents.json has %d records, the daemon lists %d", len(file.Agents), len(agents))
	}
	entries, _ := os.ReadDir(w.home.StateDir())
	for _, e := range entries {
		if strings.Contains(e.Name(), ".corrupt-") {
			t.Errorf("state file set aside as corrupt: %s", e.Name())
		}
	}
}

package daemon

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/blackpaw-studio/leo/internal/events"

	"github.com/blackpaw-studio/leo/internal/agent"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/task"
	"github.com/blackpaw-studio/leo/internal/turnend"
)

// Tasks is what the socket's task routes call: the task service
// (internal/task.Service) in the daemon, a fake in route tests.
type Tasks interface {
	List() []api.Task
	Get(name string) (api.Task, error)
	TaskHistory(name string, limit int) (api.TaskHistory, error)
	AllHistory(limit int) (api.TaskHistory, error)
	Log(name, runID string) (api.TaskLog, error)
	// Start runs a task by hand; done closes when the run has ended and
	// Result then has its record.
	Start(ctx context.Context, name string) (api.TaskRun, <-chan struct{}, error)
	Result(task, runID string) (api.TaskRun, bool)
}

// maxHistory is the most records one history request may ask for.
const maxHistory = 100000

func historyLimit(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxHistory {
		return 0, api.Errorf(api.CodeInvalidArgs, "history: limit must be a number from 1 to %d, got %q", maxHistory, v)
	}
	return n, nil
}

func (s *server) listTasks(*http.Request) (any, error) { return s.tasks.List(), nil }

func (s *server) getTask(r *http.Request) (any, error) { return s.tasks.Get(r.PathValue("name")) }

func (s *server) taskHistory(r *http.Request) (any, error) {
	limit, err := historyLimit(r)
	if err != nil {
		return nil, err
	}
	return s.tasks.TaskHistory(r.PathValue("name"), limit)
}

func (s *server) allHistory(r *http.Request) (any, error) {
	limit, err := historyLimit(r)
	if err != nil {
		return nil, err
	}
	return s.tasks.AllHistory(limit)
}

func (s *server) taskLog(r *http.Request) (any, error) {
	return s.tasks.Log(r.PathValue("name"), r.URL.Query().Get("run"))
}

// runTask starts a run; with wait it answers when the run has ended. A
// caller that goes away does not stop the run: it is the daemon's now.
func (s *server) runTask(r *http.Request) (any, error) {
	var req api.RunRequest
	if err := decodeBody(r, &req, true); err != nil {
		return nil, err
	}
	name := r.PathValue("name")
	rec, done, err := s.tasks.Start(r.Context(), name)
	if err != nil || !req.Wait {
		return rec, err
	}
	select {
	case <-done:
	case <-r.Context().Done():
		return nil, r.Context().Err()
	case <-s.stopping:
		return nil, api.Errorf(api.CodeNotReady, "leo daemon is shutting down; run %s of task %s was interrupted", rec.ID, name)
	}
	if out, ok := s.tasks.Result(name, rec.ID); ok {
		return out, nil
	}
	return nil, api.Errorf(api.CodeInternal, "run %s of task %s ended but its record cannot be read (see the daemon log)", rec.ID, name)
}

// setTaskEnabled edits tasks.<name>.enabled in leo.yaml (atomic,
// validated, the rest of the file kept as written) and reloads.
func (s *server) setTaskEnabled(enabled bool) endpoint {
	return func(r *http.Request) (any, error) {
		if err := decodeBody(r, &struct{}{}, true); err != nil {
			return nil, err
		}
		name := r.PathValue("name")
		if _, err := s.tasks.Get(name); err != nil {
			return nil, err
		}
		if err := s.setEnabled(name, enabled); err != nil {
			if errors.Is(err, config.ErrUnknownScope) {
				return nil, api.Errorf(api.CodeNotFound, "%w", err)
			}
			return nil, api.Errorf(api.CodeConfigError, "%w", err)
		}
		if _, err := s.reload(r.Context()); err != nil {
			return nil, err
		}
		return s.tasks.Get(name)
	}
}

// newTaskService builds the task service of this home (task.HomeOptions)
// with persistent firings into agents (persistent may be nil).
func (d *run) newTaskService(store *configStore, persistent *task.Persistent, bus *events.Bus) (*task.Service, error) {
	opts, err := task.HomeOptions(d.home, store.Get, d.opts.Resolver, d.opts.LeoBinary, d.log.With("component", "task"))
	if err != nil {
		return nil, err
	}
	opts.Persistent = persistent
	opts.RunningPath = d.home.TaskRunningPath()
	opts.Events = bus
	return task.NewService(opts), nil
}

// hubTurns is the turn-end hub as persistent firings wait on it.
type hubTurns struct{ hub *turnend.Hub }

func (t hubTurns) Await(agent, message string) (<-chan task.TurnEnd, func()) {
	ch := make(chan task.TurnEnd, 1)
	w, err := t.hub.Await(agent, message)
	if err != nil {
		// Not a firing's message: nothing can end it; the firing times out.
		return ch, func() {}
	}
	stop := make(chan struct{})
	go func() {
		select {
		case <-w.Done():
			ch <- w.Result().TurnEnd
		case <-stop:
			w.Cancel()
		}
	}()
	var once sync.Once
	return ch, func() { once.Do(func() { close(stop) }) }
}

// persistentFirings is the persistent side of the task service: firings
// into the agents of the real manager (nil for a test's fake manager).
func (d *run) persistentFirings(agents Agents, hub *turnend.Hub) (*task.Persistent, error) {
	m, ok := agents.(*agent.Manager)
	if !ok {
		return nil, nil
	}
	return task.NewPersistent(task.PersistentOptions{
		Agents:    agent.TaskAgents{M: m},
		TurnEnds:  hubTurns{hub: hub},
		StatePath: d.home.TaskPendingPath(),
		Log:       d.log.With("component", "task"),
	})
}

// persistentAwaiting is what the drain waits for of persistent firings
// (nil without a persistent side).
func persistentAwaiting(p *task.Persistent) func() []string {
	if p == nil {
		return nil
	}
	return p.AwaitingTurnEnd
}

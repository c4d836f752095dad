package daemon

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// The socket API, all in one place. Each handler decodes its request,
// makes one call on the agent manager (or the config store) and returns
// the result; the HTTP API and MCP tools will expose the same operations.
//
//	GET    /health                    api.Health (never waits for restore)
//	POST   /agents/spawn              api.SpawnRequest → api.Agent (with
//	                                  shares_workspace_with)
//	GET    /agents                    []api.Agent
//	GET    /agents/{name}             api.Agent
//	POST   /agents/{name}/start       api.Agent
//	POST   /agents/{name}/stop        api.Agent
//	POST   /agents/{name}/restart     api.Agent
//	POST   /agents/{name}/reset       api.Agent (new conversation)
//	POST   /agents/{name}/send        api.SendRequest → api.SendResult; with
//	                                  wait: api.MessageOutcome once delivered
//	                                  or replied (wait_timeout: it goes on)
//	GET    /agents/{name}/messages/{id}?wait=&timeout= api.MessageOutcome
//	GET    /agents/{name}/conversation?last=N&conversation=ID api.Conversation
//	POST   /agents/{name}/interrupt   api.Agent (the harness's interrupt key)
//	POST   /agents/{name}/answer      api.AnswerRequest → api.AnswerResult: the
//	                                  keys of an answer to the prompt shown
//	                                  (answer.go)
//	POST   /agents/{name}/compact     api.SendResult: the harness's compact
//	                                  command queued; its outcome (kind
//	                                  "compact") shows in the agent's deliveries
//	DELETE /agents/{name}             {"ok":true}; agent_running unless stopped
//	GET    /agents/{name}/logs?lines=N api.Logs (pane capture)
//	POST   /config/reload             api.ReloadResult; config_error keeps the old config
//	GET    /templates                 []api.Template
//	GET    /tasks                     []api.Task
//	GET    /tasks/{name}              api.Task
//	GET    /tasks/{name}/history?limit=N api.TaskHistory
//	GET    /history?limit=N           api.TaskHistory of every task
//	GET    /tasks/{name}/logs?run=ID  api.TaskLog
//	POST   /tasks/{name}/run          api.RunRequest → api.TaskRun (task_running while one runs)
//	POST   /tasks/{name}/enable       api.Task (edits leo.yaml, then reloads)
//	POST   /tasks/{name}/disable      api.Task
//	POST   /drain                     api.DrainRequest → api.DrainResult: pause
//	                                  deliveries, wait until no turn is in flight
//	                                  (drain_timeout, deliveries resumed, if not)
//	POST   /drain/resume              {"ok":true}: deliveries go again
//	GET    /events?since=&agent=&follow= the event stream: Server-Sent Events
//	                                  (docs/api.md); follow=0 is a JSON list
//	POST   /hooks/turn-end            api.TurnEndReport → {"ok":true} (a harness's
//	                                  turn-end hook; never waits for restore)
//	GET    /notify                    api.NotifyStatus: every notifier and what it did
//	POST   /notify/test               api.NotifyTestRequest → api.NotifyTestResult: a
//	                                  sample sent to each notifier of the event
//
// Errors are {"error": code, "message": text} with api.HTTPStatus(code).
// An agent name that breaks the name rule is invalid_args on every route,
// and no request is ever redirected (checkPaths).
func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.handle(false, s.getHealth))

	mux.HandleFunc("POST /agents/spawn", s.handle(true, s.spawnAgent))
	mux.HandleFunc("GET /agents", s.handle(true, s.listAgents))
	mux.HandleFunc("GET /agents/{name}", s.handle(true, s.getAgent))
	mux.HandleFunc("POST /agents/{name}/start", s.handle(true, s.agentAction(Agents.Start)))
	mux.HandleFunc("POST /agents/{name}/stop", s.handle(true, s.agentAction(Agents.Stop)))
	mux.HandleFunc("POST /agents/{name}/restart", s.handle(true, s.agentAction(Agents.Restart)))
	mux.HandleFunc("POST /agents/{name}/reset", s.handle(true, s.agentAction(Agents.Reset)))
	mux.HandleFunc("POST /agents/{name}/send", s.handle(true, s.sendToAgent))
	mux.HandleFunc("POST /agents/{name}/interrupt", s.handle(true, s.agentAction(Agents.Interrupt)))
	mux.HandleFunc("POST /agents/{name}/compact", s.handle(true, s.compactAgent))
	mux.HandleFunc("POST /agents/{name}/answer", s.handle(true, s.answerPrompt))
	mux.HandleFunc("DELETE /agents/{name}", s.handle(true, s.deleteAgent))
	mux.HandleFunc("GET /agents/{name}/logs", s.handle(true, s.agentLogs))
	mux.HandleFunc("GET /agents/{name}/messages/{id}", s.handle(true, s.agentMessage))
	mux.HandleFunc("GET /agents/{name}/conversation", s.handle(true, s.agentConversation))

	mux.HandleFunc("POST /config/reload", s.handle(true, s.reloadConfig))
	mux.HandleFunc("GET /templates", s.handle(false, s.listTemplates))
	mux.HandleFunc("POST /drain", s.handle(true, s.drainRoute))
	mux.HandleFunc("POST /drain/resume", s.handle(true, s.resumeRoute))
	// Not gated: the hub needs no restored agents, and a hook must not
	// wait (it gives up after a few seconds anyway).
	mux.HandleFunc("POST /hooks/turn-end", s.handle(false, s.turnEnd))
	// Not gated either: a reader sees the restore's own events.
	mux.HandleFunc("GET /events", s.streamEvents)
	// Not gated either: notifiers need no restored agents.
	mux.HandleFunc("GET /notify", s.handle(false, s.notifyStatus))
	mux.HandleFunc("POST /notify/test", s.handle(false, s.notifyTest))

	mux.HandleFunc("GET /tasks", s.handle(true, s.listTasks))
	mux.HandleFunc("GET /tasks/{name}", s.handle(true, s.getTask))
	mux.HandleFunc("GET /tasks/{name}/history", s.handle(true, s.taskHistory))
	mux.HandleFunc("GET /history", s.handle(true, s.allHistory))
	mux.HandleFunc("GET /tasks/{name}/logs", s.handle(true, s.taskLog))
	mux.HandleFunc("POST /tasks/{name}/run", s.handle(true, s.runTask))
	mux.HandleFunc("POST /tasks/{name}/enable", s.handle(true, s.setTaskEnabled(true)))
	mux.HandleFunc("POST /tasks/{name}/disable", s.handle(true, s.setTaskEnabled(false)))

	mux.Handle("/", s.noRoute(mux))
	return checkPaths(mux)
}

// checkPaths answers, before the router sees the request, invalid_args for
// an agent name (the segment after /agents/) that breaks the name rule and
// for a path that is not clean. The router would otherwise clean such a
// path and redirect to another route: /agents//logs to /agents/logs (the
// agent named "logs"), /agents/.. to /.
func checkPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, prefix := range []string{"/agents/", "/tasks/"} {
			rest, ok := strings.CutPrefix(r.URL.EscapedPath(), prefix)
			if !ok {
				continue
			}
			seg, _, _ := strings.Cut(rest, "/")
			name, err := url.PathUnescape(seg)
			if err != nil {
				name = seg
			}
			if err := api.CheckName(strings.TrimSuffix(prefix[1:], "s/"), name); err != nil {
				api.WriteJSON(w, http.StatusBadRequest, api.Errorf(api.CodeInvalidArgs, "%s %s: %w", r.Method, r.URL.Path, err))
				return
			}
		}
		if p := r.URL.Path; !api.IsCleanPath(p) {
			api.WriteJSON(w, http.StatusBadRequest, api.Errorf(api.CodeInvalidArgs,
				"%s %q: the path is not clean (empty, . or .. segments); the socket API does not redirect", r.Method, p))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *server) getHealth(*http.Request) (any, error) { return s.health(), nil }

func (s *server) spawnAgent(r *http.Request) (any, error) {
	var req api.SpawnRequest
	if err := decodeBody(r, &req, false); err != nil {
		return nil, err
	}
	if req.Template == "" {
		return nil, api.Errorf(api.CodeInvalidArgs, "spawn: template is required")
	}
	a, err := s.agents.Spawn(r.Context(), req)
	if err != nil {
		return nil, err
	}
	a.SharesWorkspaceWith = sharingWorkspace(a, s.agents.List())
	return a, nil
}

// sharingWorkspace names the agents of list, other than a, that work in
// a's workspace (a template spawned twice: one checkout for both).
func sharingWorkspace(a api.Agent, list []api.Agent) []string {
	if a.Workspace == "" {
		return nil
	}
	var out []string
	for _, o := range list {
		if o.Name != a.Name && o.Workspace != "" && filepath.Clean(o.Workspace) == filepath.Clean(a.Workspace) {
			out = append(out, o.Name)
		}
	}
	return out
}

func (s *server) listAgents(*http.Request) (any, error) {
	list := s.agents.List()
	if list == nil {
		list = []api.Agent{} // [] not null: an empty fleet is still a list
	}
	return list, nil
}

// listTemplates answers the running config's templates, sorted by name.
func (s *server) listTemplates(*http.Request) (any, error) {
	cfg := s.config()
	out := []api.Template{}
	for _, name := range cfg.TemplateNames() {
		t := cfg.Templates[name]
		out = append(out, api.Template{
			Name:             name,
			Harness:          cfg.ScopeHarnessName(t.Harness),
			HarnessInherited: t.Harness == "",
			Model:            cfg.TemplateModel(name),
			Workspace:        t.Workspace,
		})
	}
	return out, nil
}

func (s *server) getAgent(r *http.Request) (any, error) {
	return s.agents.Get(r.PathValue("name"))
}

// agentAction serves the verbs that take only a name and answer the agent.
func (s *server) agentAction(verb func(Agents, context.Context, string) (api.Agent, error)) endpoint {
	return func(r *http.Request) (any, error) {
		if err := decodeBody(r, &struct{}{}, true); err != nil {
			return nil, err
		}
		return verb(s.agents, r.Context(), r.PathValue("name"))
	}
}

func (s *server) sendToAgent(r *http.Request) (any, error) {
	var req api.SendRequest
	if err := decodeBody(r, &req, false); err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Message) == "" {
		return nil, api.Errorf(api.CodeInvalidArgs, "send: message is empty")
	}
	if req.ID != "" {
		if err := api.CheckMessageID(req.ID); err != nil {
			return nil, err
		}
	}
	req.Sender = routeSender(r)
	if req.Wait != "" || req.Timeout != "" {
		// Checked before anything is queued: a bad wait sends nothing.
		if err := checkWait(req.Wait, req.Timeout); err != nil {
			return nil, err
		}
		ctx, cancel := s.untilStopping(r.Context())
		defer cancel()
		out, err := s.agents.SendAndWait(ctx, r.PathValue("name"), req)
		return out, s.stoppedWait(err)
	}
	return s.agents.SendMessage(r.Context(), r.PathValue("name"), req)
}

// routeSender is who sent r: the surface the web server named
// (api.SenderHeader), else the CLI on the socket.
func routeSender(r *http.Request) string {
	switch v := r.Header.Get(api.SenderHeader); v {
	case api.SenderWeb, api.SenderAPI:
		return v
	}
	return api.SenderCLI
}

// agentMessage is a message's outcome; ?wait=delivered|reply&timeout=D
// waits for it (wait_timeout when D passes; the message goes on).
func (s *server) agentMessage(r *http.Request) (any, error) {
	q := r.URL.Query()
	wait := q.Get("wait")
	ctx := r.Context()
	if err := api.CheckMessageID(r.PathValue("id")); err != nil {
		return nil, err
	}
	if wait != "" || q.Get("timeout") != "" {
		if err := checkWait(wait, q.Get("timeout")); err != nil {
			return nil, err
		}
		d, _ := api.ParseWaitTimeout(q.Get("timeout"))
		var cancel, stop context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
		ctx, stop = s.untilStopping(ctx)
		defer stop()
	}
	out, err := s.agents.Message(ctx, r.PathValue("name"), r.PathValue("id"), wait)
	return out, s.stoppedWait(err)
}

// untilStopping is ctx, also ended when the daemon begins to stop: a wait
// must not hold the shutdown for its grace period.
func (s *server) untilStopping(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.stopping:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// stoppedWait is err, or for a wait the daemon's stop ended, not_ready
// saying so: the message is kept, and the next daemon delivers it.
func (s *server) stoppedWait(err error) error {
	select {
	case <-s.stopping:
		if api.HasCode(err, api.CodeWaitTimeout) {
			return api.Errorf(api.CodeNotReady, "%s; leo daemon is shutting down (the message is kept: ask for it again once a daemon runs)", err.Error())
		}
	default:
	}
	return err
}

// checkWait is invalid_args for a wait that is not one, or a timeout
// without a wait or out of bounds.
func checkWait(wait, timeout string) error {
	if wait != api.WaitDelivered && wait != api.WaitReply {
		if wait == "" {
			return api.Errorf(api.CodeInvalidArgs, "timeout: only with wait %q or %q", api.WaitDelivered, api.WaitReply)
		}
		return api.Errorf(api.CodeInvalidArgs, "wait: %q is not one of %q, %q", wait, api.WaitDelivered, api.WaitReply)
	}
	_, err := api.ParseWaitTimeout(timeout)
	return err
}

// maxConversationTurns bounds ?last=.
const maxConversationTurns = 100000

// agentConversation is ?last=N&conversation=ID.
func (s *server) agentConversation(r *http.Request) (any, error) {
	q := r.URL.Query()
	cq := api.ConversationQuery{ID: q.Get("conversation")}
	if v := q.Get("last"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxConversationTurns {
			return nil, api.Errorf(api.CodeInvalidArgs, "conversation: last must be a number from 1 to %d, got %q", maxConversationTurns, v)
		}
		cq.Last = n
	}
	return s.agents.Conversation(r.Context(), r.PathValue("name"), cq)
}

// compactAgent takes no body: the command is the adapter's, never the
// caller's.
func (s *server) compactAgent(r *http.Request) (any, error) {
	return s.agents.Compact(r.Context(), r.PathValue("name"))
}

func (s *server) deleteAgent(r *http.Request) (any, error) {
	var req api.DeleteRequest
	q := r.URL.Query()
	for key, set := range map[string]*bool{"force": &req.Force, "keep_worktree": &req.KeepWorktree} {
		switch v := q.Get(key); v {
		case "", "false", "0":
		case "true", "1":
			*set = true
		default:
			return nil, api.Errorf(api.CodeInvalidArgs, "delete: %s must be true or false, got %q", key, v)
		}
	}
	if req.Force && req.KeepWorktree {
		return nil, api.Errorf(api.CodeInvalidArgs, "delete: force and keep_worktree exclude each other")
	}
	return s.agents.DeleteAgent(r.Context(), r.PathValue("name"), req)
}

// defaultLogLines is what `logs` shows when the caller names no count;
// maxLogLines is the most it may name.
const (
	defaultLogLines = 100
	maxLogLines     = 10000
)

func (s *server) agentLogs(r *http.Request) (any, error) {
	lines := defaultLogLines
	if v := r.URL.Query().Get("lines"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLogLines {
			return nil, api.Errorf(api.CodeInvalidArgs, "logs: lines must be a number from 1 to %d, got %q", maxLogLines, v)
		}
		lines = n
	}
	return s.agents.Logs(r.Context(), r.PathValue("name"), lines)
}

func (s *server) reloadConfig(r *http.Request) (any, error) {
	if err := decodeBody(r, &struct{}{}, true); err != nil {
		return nil, err
	}
	return s.reload(r.Context())
}

// turnEnd takes a harness hook's report (the hook must not wait: it is
// read in the background). Its adapter reads what it says, which changes
// the agent's attention; a turn's end also goes to the turn-end hub, which
// completes the persistent firing waiting for it. A harness without a
// turn-end signal is invalid_args; a report that matches no firing is fine.
func (s *server) turnEnd(r *http.Request) (any, error) {
	var rep api.TurnEndReport
	if err := decodeBody(r, &rep, false); err != nil {
		return nil, err
	}
	h, ok := harness.Lookup(rep.Harness)
	if _, signals := h.(harness.TurnEndSignaler); !ok || !signals {
		return nil, api.Errorf(api.CodeInvalidArgs, "turn-end report: harness %q has no turn-end signal", rep.Harness)
	}
	go s.takeSignal(h, rep)
	return okResult{OK: true}, nil
}

// signalTimeout bounds what the agent manager may do about one signal (a
// capture of the pane, to read a prompt).
const signalTimeout = 10 * time.Second

func (s *server) takeSignal(h harness.Harness, rep api.TurnEndReport) {
	sig, err := harness.ReadSignal(h, rep.Payload)
	if err != nil {
		s.log.Warn("hook report not read", "agent", rep.Agent, "harness", rep.Harness, "err", err)
	}
	if err == nil && s.agents != nil {
		ctx, cancel := context.WithTimeout(context.Background(), signalTimeout)
		s.agents.Signal(ctx, rep.Agent, sig)
		cancel()
	}
	if s.turnEnds != nil && (err != nil || sig.EndsTurn()) {
		if err := s.turnEnds.Submit(rep); err != nil {
			s.log.Warn("turn-end report not taken", "agent", rep.Agent, "harness", rep.Harness, "err", err)
		}
	}
}

type okResult struct {
	OK bool `json:"ok"`
}

// noRoute answers every request no route takes: 405 when the path exists
// under another method, else 404, both in the API's JSON error shape.
func (s *server) noRoute(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var allowed []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			if m == r.Method {
				continue
			}
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
				allowed = append(allowed, m)
			}
		}
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			api.WriteJSON(w, http.StatusMethodNotAllowed, api.Errorf(api.CodeInvalidArgs,
				"%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, strings.Join(allowed, ", ")))
			return
		}
		api.WriteJSON(w, http.StatusNotFound, api.Errorf(api.CodeNotFound, "no route %s %s", r.Method, r.URL.Path))
	})
}

func (s *server) notifyStatus(*http.Request) (any, error) {
	if s.notifier == nil {
		return api.NotifyStatus{Notifiers: []api.NotifierStatus{}}, nil
	}
	return s.notifier.Status(), nil
}

func (s *server) notifyTest(r *http.Request) (any, error) {
	var req api.NotifyTestRequest
	if err := decodeBody(r, &req, true); err != nil {
		return nil, err
	}
	if s.notifier == nil {
		return nil, api.Errorf(api.CodeUnsupported, "this daemon runs no notifiers")
	}
	return s.notifier.Test(r.Context(), req)
}

package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness/claude"
	"github.com/blackpaw-studio/leo/internal/humantime"
)

// The agents, tasks and service pages. Every read and action goes through
// s.client, the daemon's own socket routes in process.
//
//	GET  /web/events                    the event stream (stream.go)
//	GET  /web/agents                    the agent list, spawn form
//	GET  /web/partials/agents           the list alone (fetched on its events)
//	POST /web/agents/spawn              template, name → 303 + flash
//	GET  /web/agents/{name}             details, send form, the pane's screen
//	GET  /web/agents/{name}/screen      the screen alone (htmx polls it)
//	GET  /web/agents/{name}/panel       the details alone (fetched on its events)
//	GET  /web/agents/{name}/conversation  its turns alone (conversation.go)
//	GET  /web/agents/{name}/confirm/{verb}  reset|delete: what it discards, confirm
//	POST /web/agents/{name}/{verb}      start|stop|restart|reset|delete → 303 + flash
//	POST /web/agents/{name}/send        message → 303 + flash
//	GET  /web/tasks                     the task list
//	GET  /web/partials/tasks            the list alone (fetched on its events)
//	GET  /web/tasks/{name}              details, history
//	GET  /web/tasks/{name}/runs/{run}   one run's log
//	POST /web/tasks/{name}/{verb}       run|enable|disable → 303 + flash
//	GET  /web/service                   health, the daemon log's tail
//	POST /web/service/reload            reload leo.yaml → 303 + flash
//
// A post always answers 303 to a page with a flash, so the pages work
// without JavaScript; htmx follows the redirect and swaps in the part of
// the page it asked for (hx-select), so the enhanced flow runs the same
// code. The lists and the agent's details follow the event stream
// (docs/web.md, "Live pages"): static/leo.js fetches a part again when an
// event about it arrives.

// screenLines is how much of a pane the agent page shows.
const screenLines = 60

// logTailLines and logTailBytes bound the service page's log tail: the
// last lines of at most the last bytes of the file, whatever its size.
const (
	logTailLines = 200
	logTailBytes = 256 << 10
)

// historyLimit is how many runs a task page lists.
const historyLimit = 50

// pageRoutes registers the agents, tasks and service pages.
func (s *Server) pageRoutes(mux *http.ServeMux, auth func(http.HandlerFunc) http.HandlerFunc) {
	mux.HandleFunc("GET /web/events", auth(s.pageEvents))
	mux.HandleFunc("GET /web/agents", auth(s.agentsPage))
	mux.HandleFunc("GET /web/partials/agents", auth(s.agentsPartial))
	mux.HandleFunc("POST /web/agents/spawn", auth(s.spawnAgent))
	mux.HandleFunc("GET /web/agents/{name}", auth(s.agentPage))
	mux.HandleFunc("GET /web/agents/{name}/screen", auth(s.screenPartial))
	mux.HandleFunc("GET /web/agents/{name}/panel", auth(s.panelPartial))
	mux.HandleFunc("GET /web/agents/{name}/conversation", auth(s.conversationPartial))
	mux.HandleFunc("GET /web/agents/{name}/confirm/{verb}", auth(s.confirmPage))
	mux.HandleFunc("POST /web/agents/{name}/send", auth(s.sendToAgent))
	mux.HandleFunc("POST /web/agents/{name}/answer", auth(s.answerPrompt))
	mux.HandleFunc("POST /web/agents/{name}/{verb}", auth(s.agentAction))

	mux.HandleFunc("GET /web/tasks", auth(s.tasksPage))
	mux.HandleFunc("GET /web/partials/tasks", auth(s.tasksPartial))
	mux.HandleFunc("GET /web/tasks/{name}", auth(s.taskPage))
	mux.HandleFunc("GET /web/tasks/{name}/runs/{run}", auth(s.runLogPage))
	mux.HandleFunc("POST /web/tasks/{name}/{verb}", auth(s.taskAction))

	mux.HandleFunc("GET /web/service", auth(s.servicePage))
	mux.HandleFunc("POST /web/service/reload", auth(s.reloadConfig))
}

// done ends a post: the flash for the next page, then 303 to it.
func done(w http.ResponseWriter, r *http.Request, to, kind, text string) {
	setFlash(w, kind, text)
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// failed ends a post that the daemon refused: its message as the flash.
func failed(w http.ResponseWriter, r *http.Request, to string, err error) {
	done(w, r, to, "error", errText(err))
}

// errText is what a page shows of a client error: the daemon's message
// (an *api.Error's text names what failed and why).
func errText(err error) string {
	var e *api.Error
	if errors.As(err, &e) && e.Message == "" {
		return "leo answered " + string(e.Code)
	}
	return err.Error()
}

// renderError renders page with a flash for a failed read; a page whose
// subject is missing answers 404, any other failure still 200 (the page,
// never a bare 500).
func (s *Server) renderError(w http.ResponseWriter, r *http.Request, page string, data any, err error) {
	if api.HasCode(err, api.CodeNotFound) || api.HasCode(err, api.CodeInvalidArgs) {
		w.WriteHeader(http.StatusNotFound)
	}
	s.renderFlash(w, r, page, data, &flash{Kind: "error", Text: errText(err)})
}

// agentURL is an agent's page (names are [a-z0-9-]; escaped anyway).
func agentURL(name string) string { return "/web/agents/" + url.PathEscape(name) }

func taskURL(name string) string { return "/web/tasks/" + url.PathEscape(name) }

// ---- agents

type agentsData struct {
	CSRF      string
	Agents    []api.Agent
	Templates []string
	Err       string // the list could not be read
}

func (s *Server) agentsData(r *http.Request) agentsData {
	d := agentsData{CSRF: s.csrfValue(r), Templates: s.config().TemplateNames()}
	agents, err := s.client.List(r.Context())
	if err != nil {
		d.Err = errText(err)
	}
	sortForAttention(agents)
	d.Agents = agents
	return d
}

// sortForAttention puts the agents that need a person first — waiting for
// an answer, then failed, then limited — each group by name, as the
// daemon lists them.
func sortForAttention(agents []api.Agent) {
	slices.SortFunc(agents, func(a, b api.Agent) int {
		if d := attentionRank(a) - attentionRank(b); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// attentionRank is where an agent sorts: 0 needs input, 1 errored, 2
// limited, 3 anything else.
func attentionRank(a api.Agent) int {
	if a.Attention != nil {
		switch a.Attention.State {
		case api.AttentionNeedsInput:
			return 0
		case api.AttentionErrored:
			return 1
		case api.AttentionLimited:
			return 2
		}
	}
	return 3
}

func (s *Server) agentsPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "agents", s.agentsData(r))
}

func (s *Server) agentsPartial(w http.ResponseWriter, r *http.Request) {
	s.partial(w, "agents-list", s.agentsData(r))
}

func (s *Server) spawnAgent(w http.ResponseWriter, r *http.Request) {
	req := api.SpawnRequest{
		Template: r.PostFormValue("template"), Name: strings.TrimSpace(r.PostFormValue("name")),
		Worktree: r.PostFormValue("worktree") == "yes",
		Branch:   strings.TrimSpace(r.PostFormValue("branch")), Base: strings.TrimSpace(r.PostFormValue("base")),
	}
	if req.Template == "" {
		done(w, r, "/web/agents", "error", "spawn: choose a template")
		return
	}
	a, err := s.client.Spawn(r.Context(), req)
	if err != nil {
		failed(w, r, "/web/agents", err)
		return
	}
	msg := fmt.Sprintf("Spawned %s (%s) from template %s.", a.Name, a.Harness, req.Template)
	if wt := a.Worktree; wt != nil {
		msg += fmt.Sprintf(" It works in its own worktree %s on branch %s", wt.Path, wt.Branch)
		if wt.Base != "" {
			msg += " (from " + wt.Base + ")"
		}
		msg += "."
	}
	if len(a.SharesWorkspaceWith) > 0 {
		msg += fmt.Sprintf(" It shares its workspace with %s: one checkout, so their edits land in the same files.", strings.Join(a.SharesWorkspaceWith, ", "))
	}
	done(w, r, "/web/agents", "ok", msg)
}

type agentData struct {
	CSRF      string
	Agent     api.Agent
	Screen    string
	ScreenErr string
	Err       string // the details could not be read (the panel's poll)
	// Conversation is the agent page's chat (conversation.go).
	Conversation conversationData
}

func (s *Server) agentPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	a, err := s.client.Get(r.Context(), name)
	if err != nil {
		s.renderError(w, r, "agent", agentData{Agent: api.Agent{Name: name}}, err)
		return
	}
	d := agentData{CSRF: s.csrfValue(r), Agent: a}
	d.Screen, d.ScreenErr = s.screen(r.Context(), name)
	id, all := conversationQuery(r)
	d.Conversation = s.conversation(r.Context(), name, id, all)
	s.render(w, r, "agent", d)
}

// panelPartial is the agent's details, deliveries and buttons alone: the
// page polls it, so a state change shows without a reload. An agent that
// is gone answers 286, which tells htmx to stop polling.
func (s *Server) panelPartial(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	a, err := s.client.Get(r.Context(), name)
	d := agentData{CSRF: s.csrfValue(r), Agent: a}
	if err != nil {
		d.Agent, d.Err = api.Agent{Name: name}, errText(err)
		if api.HasCode(err, api.CodeNotFound) {
			w.WriteHeader(286)
		}
	}
	s.partial(w, "agent-panel", d)
}

// confirmVerbs are the actions that discard something: each is offered
// as a link to a page saying what, whose form posts it with confirm=yes.
var confirmVerbs = map[string]string{
	"reset":  "Reset discards the agent's conversation: it starts over with a new one, and what it was told so far is gone from its context.",
	"delete": "Delete removes the stopped agent from leo: its record, its conversation id and its recent deliveries. Its workspace and files stay.",
}

type confirmData struct {
	CSRF  string
	Agent string
	Verb  string
	What  string
	// Worktree is the agent's, on a delete: the page says what it holds
	// and offers to keep it or to discard its changes.
	Worktree *api.Worktree
}

func (s *Server) confirmPage(w http.ResponseWriter, r *http.Request) {
	name, verb := r.PathValue("name"), r.PathValue("verb")
	what, ok := confirmVerbs[verb]
	if !ok {
		http.NotFound(w, r)
		return
	}
	d := confirmData{CSRF: s.csrfValue(r), Agent: name, Verb: verb, What: what}
	if verb == "delete" {
		if a, err := s.client.Get(r.Context(), name); err == nil && a.Worktree != nil {
			d.Worktree = a.Worktree
			d.What = "Delete removes the stopped agent from leo: its record, its conversation id and its recent deliveries. " +
				"Its worktree goes with it only when nothing would be lost; a worktree with uncommitted changes or unmerged commits refuses the delete, and says which."
		}
	}
	s.render(w, r, "confirm", d)
}

// screen is the pane's recent lines, or why they could not be read.
func (s *Server) screen(ctx context.Context, name string) (string, string) {
	l, err := s.client.Logs(ctx, name, screenLines)
	if err != nil {
		return "", errText(err)
	}
	return l.Text, ""
}

func (s *Server) screenPartial(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	d := agentData{Agent: api.Agent{Name: name}}
	d.Screen, d.ScreenErr = s.screen(r.Context(), name)
	s.partial(w, "screen", d)
}

func (s *Server) sendToAgent(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	msg := r.PostFormValue("message")
	if strings.TrimSpace(msg) == "" {
		done(w, r, agentURL(name), "error", "send: the message is empty")
		return
	}
	// The daemon's send is the one edge that makes text safe for a
	// terminal: the text goes there as typed.
	res, err := s.client.Send(r.Context(), name, msg)
	if err != nil {
		failed(w, r, agentURL(name), err)
		return
	}
	// A send answers once the message is queued; its outcome shows in the
	// agent's deliveries on this page.
	text := fmt.Sprintf("Message %s to %s: %s.", res.ID, name, res.Delivery)
	if res.Woke {
		text += " The agent was woken for it."
	}
	done(w, r, agentURL(name), "ok", text)
}

// agentVerbs are the lifecycle actions a page may post.
var agentVerbs = []string{"start", "stop", "restart", "reset", "delete"}

func (s *Server) agentAction(w http.ResponseWriter, r *http.Request) {
	name, verb := r.PathValue("name"), r.PathValue("verb")
	back := backTo(r, agentURL(name))
	if !slices.Contains(agentVerbs, verb) {
		http.NotFound(w, r)
		return
	}
	if _, confirm := confirmVerbs[verb]; confirm && r.PostFormValue("confirm") != "yes" {
		// A post that skipped the confirmation page (a stale form, a
		// script) discards nothing.
		done(w, r, agentURL(name)+"/confirm/"+verb, "error", verb+" "+name+": not confirmed; it discards what this page says")
		return
	}
	var (
		a   api.Agent
		err error
	)
	ctx := r.Context()
	switch verb {
	case "delete":
		// Only a stopped agent: a running one is stopped first, by a
		// person who saw it stop.
		if a, err := s.client.Get(ctx, name); err != nil || a.State != api.StateStopped {
			if err == nil {
				err = fmt.Errorf("delete %s: it is %s; stop it first", name, a.State)
			}
			failed(w, r, agentURL(name), err)
			return
		}
		req := api.DeleteRequest{}
		switch r.PostFormValue("worktree") {
		case "force":
			req.Force = true
		case "keep":
			req.KeepWorktree = true
		}
		res, err := s.client.DeleteAgent(ctx, name, req)
		if err != nil {
			failed(w, r, agentURL(name), err)
			return
		}
		msg := fmt.Sprintf("Deleted %s.", name)
		if lines := res.Worktree.Lines(); len(lines) > 0 {
			msg += " " + strings.ToUpper(lines[0][:1]) + strings.Join(lines, "; ")[1:] + "."
		}
		done(w, r, "/web/agents", "ok", msg)
		return
	case "start":
		a, err = s.client.Start(ctx, name)
	case "stop":
		a, err = s.client.Stop(ctx, name)
	case "restart":
		a, err = s.client.Restart(ctx, name)
	case "reset":
		a, err = s.client.Reset(ctx, name)
	}
	if err != nil {
		failed(w, r, back, err)
		return
	}
	done(w, r, back, "ok", fmt.Sprintf("%s %s: now %s.", strings.ToUpper(verb[:1])+verb[1:], a.Name, a.State))
}

// backTo is where a post returns: its form's "back" field when that is a
// page of this UI, else def.
func backTo(r *http.Request, def string) string {
	if b := r.PostFormValue("back"); strings.HasPrefix(b, "/web/") && safeNext(b) == b {
		return b
	}
	return def
}

// ---- tasks

type tasksData struct {
	CSRF  string
	Tasks []api.Task
	Err   string
}

func (s *Server) tasksData(r *http.Request) tasksData {
	tasks, err := s.client.ListTasks(r.Context())
	d := tasksData{CSRF: s.csrfValue(r), Tasks: tasks}
	if err != nil {
		d.Err = errText(err)
	}
	return d
}

func (s *Server) tasksPage(w http.ResponseWriter, r *http.Request) {
	s.render(w, r, "tasks", s.tasksData(r))
}

func (s *Server) tasksPartial(w http.ResponseWriter, r *http.Request) {
	s.partial(w, "tasks-list", s.tasksData(r))
}

type taskData struct {
	Task    api.Task
	Runs    []api.TaskRun // oldest first, as leo task history lists them
	Dropped []string
	HistErr string
}

func (s *Server) taskPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	t, err := s.client.GetTask(r.Context(), name)
	if err != nil {
		s.renderError(w, r, "task", taskData{Task: api.Task{Name: name}}, err)
		return
	}
	d := taskData{Task: t}
	h, err := s.client.TaskHistory(r.Context(), name, historyLimit)
	if err != nil {
		d.HistErr = errText(err)
	}
	d.Runs = h.Runs
	d.Dropped = h.Dropped
	s.render(w, r, "task", d)
}

type runLogData struct {
	Task      string
	Log       api.TaskLog
	Run       *api.TaskRun // the run's history record, when found
	Prompt    string       // the task's prompt file as it reads now
	PromptErr string
}

// promptBytes bounds the prompt a run log page shows.
const promptBytes = 64 << 10

// runLogPage shows a run as a person reads it first: the prompt, the
// reply and the outcome; the raw stream the harness wrote is folded below.
func (s *Server) runLogPage(w http.ResponseWriter, r *http.Request) {
	name, run := r.PathValue("name"), r.PathValue("run")
	l, err := s.client.TaskLog(r.Context(), name, run)
	d := runLogData{Task: name, Log: l}
	if err != nil {
		d.Log.Run = run
		s.renderError(w, r, "runlog", d, err)
		return
	}
	if h, err := s.client.TaskHistory(r.Context(), name, historyLimit); err == nil {
		for i := range h.Runs {
			if h.Runs[i].ID == run {
				d.Run = &h.Runs[i]
			}
		}
	}
	d.Prompt, d.PromptErr = s.taskPrompt(name)
	s.render(w, r, "runlog", d)
}

// taskPrompt is the task's prompt file, bounded, or why it cannot be shown.
func (s *Server) taskPrompt(name string) (string, string) {
	res, err := s.config().ResolveTask(name)
	if err != nil {
		return "", err.Error()
	}
	if res.PromptFile == "" {
		return "", "the task names no prompt_file"
	}
	f, err := os.Open(res.PromptFile)
	if err != nil {
		return "", err.Error()
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, promptBytes+1))
	if err != nil {
		return "", err.Error()
	}
	cut := len(data) > promptBytes
	text := strings.ToValidUTF8(string(data[:min(len(data), promptBytes)]), "\uFFFD")
	if cut {
		text += "\n… (cut at 64 KiB)"
	}
	return text, ""
}

func (s *Server) taskAction(w http.ResponseWriter, r *http.Request) {
	name, verb := r.PathValue("name"), r.PathValue("verb")
	back := backTo(r, taskURL(name))
	ctx := r.Context()
	switch verb {
	case "run":
		run, err := s.client.RunTask(ctx, name, false)
		if err != nil {
			failed(w, r, back, err)
			return
		}
		done(w, r, back, "ok", fmt.Sprintf("Started a run of %s (%s).", name, run.ID))
	case "enable", "disable":
		var err error
		if verb == "enable" {
			_, err = s.client.EnableTask(ctx, name)
		} else {
			_, err = s.client.DisableTask(ctx, name)
		}
		if err != nil {
			failed(w, r, back, err)
			return
		}
		done(w, r, back, "ok", fmt.Sprintf("Task %s %sd.", name, verb))
	default:
		http.NotFound(w, r)
	}
}

// ---- service

type serviceData struct {
	Health    api.Health
	Err       string
	ClaudeMsg string
	LogPath   string
	LogTail   string
	LogErr    string
}

func (s *Server) servicePage(w http.ResponseWriter, r *http.Request) {
	d := serviceData{ClaudeMsg: claude.NotFoundMessage, LogPath: s.opts.LogPath}
	h, err := s.client.Health(r.Context())
	if err != nil {
		d.Err = errText(err)
	}
	d.Health = h
	tail, err := tailFile(s.opts.LogPath, logTailLines, logTailBytes)
	switch {
	case errors.Is(err, os.ErrNotExist):
		d.LogErr = "No log file: the daemon writes " + s.opts.LogPath + " when it runs as a service (leo service --supervised); otherwise it logs to its stderr."
	case err != nil:
		d.LogErr = err.Error()
	}
	d.LogTail = tail
	s.render(w, r, "service", d)
}

func (s *Server) reloadConfig(w http.ResponseWriter, r *http.Request) {
	res, err := s.client.ReloadConfig(r.Context())
	if err != nil {
		failed(w, r, "/web/service", err)
		return
	}
	text := "Reloaded leo.yaml."
	if len(res.Warnings) > 0 {
		text += " Warnings:\n" + strings.Join(res.Warnings, "\n")
	}
	done(w, r, "/web/service", "ok", text)
}

// tailFile is the last lines of path, reading at most maxBytes from its
// end: a huge log costs no more than a small one. A first line cut by the
// byte bound is dropped.
func tailFile(path string, lines int, maxBytes int64) (string, error) {
	if path == "" {
		return "", os.ErrNotExist
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	off := max(fi.Size()-maxBytes, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, off, maxBytes))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	text := string(data)
	if off > 0 {
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			text = text[i+1:]
		}
	}
	text = strings.TrimRight(text, "\n")
	all := strings.Split(text, "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n"), nil
}

// ---- template helpers

// The pages' helpers join the shared funcs here, before any template is
// parsed (New), so this file's templates need no edit of render.go.
func init() {
	funcs["agentURL"] = agentURL
	funcs["taskURL"] = taskURL
	funcs["uptime"] = uptime
	funcs["duration"] = func(r api.TaskRun) string { return humantime.Took(r.Start, r.End) }
	funcs["exitText"] = exitText
	funcs["usageText"] = usageText
	funcs["at"] = func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return humantime.Stamp(t)
	}
	funcs["age"] = func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return humantime.Ago(time.Since(t))
	}
	funcs["ago"] = func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return humantime.Rel(t, time.Now())
	}
	funcs["actions"] = func(csrf string, a api.Agent, back, target string) agentActions {
		return agentActions{CSRF: csrf, Agent: a, Back: back, Target: target}
	}
	funcs["actionsReset"] = func(csrf string, a api.Agent, back, target string) agentActions {
		return agentActions{CSRF: csrf, Agent: a, Back: back, Target: target, Reset: true}
	}
	funcs["verb"] = func(a agentActions, verb, label, class string) agentButton {
		return agentButton{agentActions: a, Verb: verb, Label: label, Class: class}
	}
	funcs["attnWords"] = attentionWords
	funcs["needsPerson"] = func(a api.Agent) bool { return attentionRank(a) < 3 }
	funcs["printable"] = printable
	funcs["taskActions"] = func(csrf string, t api.Task, back, target string) taskActions {
		return taskActions{CSRF: csrf, Task: t, Back: back, Target: target}
	}
}

// agentActions is what an agent's buttons need: the CSRF value (the
// forms work without htmx), where to return, and which element of that
// page htmx swaps.
type agentActions struct {
	CSRF   string
	Agent  api.Agent
	Back   string
	Target string
	Reset  bool // offer reset (the agent's own page)
}

type agentButton struct {
	agentActions
	Verb, Label, Class string
}

type taskActions struct {
	CSRF   string
	Task   api.Task
	Back   string
	Target string
}

// attentionWords is an attention state as a person reads it, as `leo agent
// list` words it.
func attentionWords(s api.AttentionState) string {
	if s == api.AttentionNeedsInput {
		return "needs input"
	}
	return string(s)
}

// printable is text a harness wrote (a prompt read from its screen) with
// control characters other than newline and tab blanked: html/template
// escapes it as HTML, and this keeps a stray escape sequence from showing
// as noise.
func printable(text string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' {
			return r
		}
		if r < ' ' || (r >= 0x7f && r < 0xa0) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(text, "\uFFFD"))
}

// uptime is how long a running agent has run ("" when it is not running).
func uptime(a api.Agent) string {
	if a.State != api.StateRunning || a.StartedAt == nil || a.StartedAt.IsZero() {
		return ""
	}
	return humantime.Ago(time.Since(*a.StartedAt))
}

// exitText is how a TUI last ended: "signal SIGKILL" or "status 2", with
// when.
func exitText(e *api.Exit) string {
	if e == nil {
		return ""
	}
	how := "status " + strconv.Itoa(e.Status)
	if e.Signal != "" {
		how = "signal " + e.Signal
	}
	return how + ", " + humantime.Rel(e.At, time.Now())
}

func usageText(u *api.Usage, cost *float64) string {
	var parts []string
	if u != nil {
		parts = append(parts, fmt.Sprintf("%d in / %d out", u.InputTokens, u.OutputTokens))
		if u.CacheReadTokens > 0 || u.CacheWriteTokens > 0 {
			parts = append(parts, fmt.Sprintf("cache %d read / %d written", u.CacheReadTokens, u.CacheWriteTokens))
		}
	}
	if cost != nil {
		parts = append(parts, fmt.Sprintf("$%.4f", *cost))
	}
	return strings.Join(parts, ", ")
}

// Package client is the typed Go client of the daemon's socket API
// (HTTP over state/leo.sock), and of the same routes over the daemon's HTTP
// API (NewHTTP: TCP, /api paths, a bearer token). Every failure is an *api.Error with a stable
// code; when no daemon answers, the code is daemon_down and the message
// says why (not running, stale socket, holding the lock but silent).
//
// Every call is bounded (ReadTimeout, ChangeTimeout, LaunchTimeout, or the
// caller's earlier deadline), so a daemon that is stopped or stuck costs a
// caller seconds, not minutes. Agent names are checked before any request
// is built, and redirects are never followed: a request reaches the route
// it names or fails.
package client

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
)

// Client talks to one home's daemon. It is safe for concurrent use.
type Client struct {
	socket string
	lock   string
	http   *http.Client
	// base is what a route's path is appended to.
	base string
	// web is set for a client of the HTTP API (NewHTTP): its routes are
	// mapped onto /api paths and carry the token.
	web *webAPI
}

// webAPI is what a client of the HTTP API adds to the socket client's path.
type webAPI struct {
	// url is the base URL as given, for messages (it never holds the token).
	url string
	// auth is the Authorization header value; never printed.
	auth string
	// bad, when set, fails every call: the URL or the token cannot be used.
	bad *api.Error
}

// socketBase is a placeholder host: the socket transport always dials the
// socket.
const socketBase = "http://leo"

// dialTimeout bounds connecting to the socket; a live daemon accepts at once.
const dialTimeout = 2 * time.Second

// How long one call waits for the daemon's answer (unless the caller's
// context ends sooner). A live daemon answers a read from memory in well
// under a millisecond; a change may wait behind another change of the same
// agent; a launch starts a TUI in tmux (a send may wake a parked agent).
const (
	// ReadTimeout bounds /health, the agent list, one agent and its logs.
	ReadTimeout = 5 * time.Second
	// ChangeTimeout bounds stop, delete and config reload.
	ChangeTimeout = 30 * time.Second
	// LaunchTimeout bounds spawn, start, restart, reset and send, and
	// starting a task's run without waiting for it.
	LaunchTimeout = 60 * time.Second
	// RunWaitTimeout bounds waiting for a task's run when the caller's
	// context has no deadline: the default task timeout (30m) and a margin.
	// A caller that knows the task's timeout and retries sets its own.
	RunWaitTimeout = 35 * time.Minute
	// NotifyTestTimeout bounds `leo notify test`: the longest a notifier's
	// try may last (its timeout: is at most 5m) and a margin.
	NotifyTestTimeout = 6 * time.Minute
)

// New returns a client for the daemon of h. It dials h's socket; h's lock
// file explains a daemon that does not answer.
func New(h home.Home) *Client {
	socket, lock := h.SocketPath(), h.LockPath()
	d := net.Dialer{Timeout: dialTimeout}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConns:    4,
		IdleConnTimeout: 30 * time.Second,
	}
	hc := &http.Client{
		Transport: tr,
		// The daemon never redirects; following one (a path the server
		// cleaned) would run another route than the one asked for.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Client{socket: socket, lock: lock, http: hc, base: socketBase}
}

// NewHTTP returns a client of the daemon's HTTP API at baseURL (e.g.
// http://127.0.0.1:8370): the same typed calls as New, each socket route
// asked for at its /api path (api.HTTPPath) with "Authorization: Bearer
// token". Redirects are never followed. A URL or token that cannot be used
// fails every call with invalid_args; the token is never part of a message.
func NewHTTP(baseURL, token string) *Client {
	w := &webAPI{url: baseURL}
	base := strings.TrimRight(baseURL, "/")
	u, err := url.Parse(base)
	switch {
	case err != nil:
		w.bad = api.Errorf(api.CodeInvalidArgs, "leo web API URL is not a URL: %w", unwrapURL(err))
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		w.url = u.Redacted() // a password in it stays out of every message
		w.bad = api.Errorf(api.CodeInvalidArgs, "leo web API URL %q: want http://host:port (no user, query or fragment)", w.url)
	}
	baseURL = w.url
	token = strings.TrimSpace(token)
	switch {
	case token == "":
		w.bad = cmp.Or(w.bad, api.Errorf(api.CodeInvalidArgs, "no API token for the leo web API at %s", baseURL))
	case !validToken(token):
		w.bad = cmp.Or(w.bad, api.Errorf(api.CodeInvalidArgs, "the API token for the leo web API at %s holds characters a header cannot carry (control characters or spaces)", baseURL))
	}
	w.auth = "Bearer " + token
	d := net.Dialer{Timeout: dialTimeout}
	tr := &http.Transport{
		DialContext:     d.DialContext,
		Proxy:           nil, // the API is on this machine; a proxy would see the token
		MaxIdleConns:    4,
		IdleConnTimeout: 30 * time.Second,
	}
	hc := &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Client{http: hc, base: base, web: w}
}

// validToken reports whether token can ride in a header as it is: visible
// ASCII only.
func validToken(token string) bool {
	for i := 0; i < len(token); i++ {
		if token[i] <= ' ' || token[i] >= 0x7f {
			return false
		}
	}
	return true
}

// target is the URL a route's path (query included) is asked for at: the
// socket path itself, or its /api path over the HTTP API.
func (c *Client) target(path string) (string, error) {
	if c.web == nil {
		return c.base + path, nil
	}
	if c.web.bad != nil {
		return "", c.web.bad
	}
	p, query, hasQuery := strings.Cut(path, "?")
	mapped, ok := api.HTTPPath(p)
	if !ok {
		return "", api.Errorf(api.CodeInvalidArgs, "the leo web API does not serve %s (a socket-only route)", p)
	}
	if hasQuery {
		mapped += "?" + query
	}
	return c.base + mapped, nil
}

// Close drops idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Health is GET /health.
func (c *Client) Health(ctx context.Context) (api.Health, error) {
	var h api.Health
	err := c.do(ctx, ReadTimeout, http.MethodGet, "/health", nil, &h)
	return h, err
}

// WaitReady polls /health until the daemon reports ready or ctx is done.
// A daemon that is down is waited for too (it may be starting), so ctx's
// deadline is the only bound; the last error is returned on timeout.
func (c *Client) WaitReady(ctx context.Context, every time.Duration) (api.Health, error) {
	if every <= 0 {
		every = 50 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		h, err := c.Health(ctx)
		if err == nil && h.Ready {
			return h, nil
		}
		if err == nil {
			err = api.Errorf(api.CodeNotReady, "leo daemon (pid %d) is still restoring agents", h.PID)
		}
		select {
		case <-ctx.Done():
			return h, err
		case <-t.C:
		}
	}
}

// Spawn is POST /agents/spawn.
func (c *Client) Spawn(ctx context.Context, req api.SpawnRequest) (api.Agent, error) {
	if req.Name != "" {
		if err := api.CheckAgentName(req.Name); err != nil {
			return api.Agent{}, err
		}
	}
	var a api.Agent
	err := c.do(ctx, LaunchTimeout, http.MethodPost, "/agents/spawn", req, &a)
	return a, err
}

// List is GET /agents.
func (c *Client) List(ctx context.Context) ([]api.Agent, error) {
	var as []api.Agent
	err := c.do(ctx, ReadTimeout, http.MethodGet, "/agents", nil, &as)
	return as, err
}

// ListJSON is GET /agents as the daemon sent it, a JSON array of api.Agent
// (not validated here), for `leo agent list --json` to print without
// decoding and re-encoding every record: at 200 agents that was about a
// quarter of the command's time.
func (c *Client) ListJSON(ctx context.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.do(ctx, ReadTimeout, http.MethodGet, "/agents", nil, &raw); err != nil {
		return nil, err
	}
	if len(raw) == 0 || raw[0] != '[' {
		return nil, api.Errorf(api.CodeInternal, "leo daemon sent an unreadable answer to GET /agents: not a list")
	}
	return raw, nil
}

// Get is GET /agents/{name}.
func (c *Client) Get(ctx context.Context, name string) (api.Agent, error) {
	p, err := agentPath(name, "")
	if err != nil {
		return api.Agent{}, err
	}
	var a api.Agent
	err = c.do(ctx, ReadTimeout, http.MethodGet, p, nil, &a)
	return a, err
}

// Start is POST /agents/{name}/start.
func (c *Client) Start(ctx context.Context, name string) (api.Agent, error) {
	return c.action(ctx, LaunchTimeout, name, "start")
}

// Stop is POST /agents/{name}/stop.
func (c *Client) Stop(ctx context.Context, name string) (api.Agent, error) {
	return c.action(ctx, ChangeTimeout, name, "stop")
}

// Restart is POST /agents/{name}/restart.
func (c *Client) Restart(ctx context.Context, name string) (api.Agent, error) {
	return c.action(ctx, LaunchTimeout, name, "restart")
}

// Reset is POST /agents/{name}/reset: a new conversation.
func (c *Client) Reset(ctx context.Context, name string) (api.Agent, error) {
	return c.action(ctx, LaunchTimeout, name, "reset")
}

// Interrupt is POST /agents/{name}/interrupt: the harness's interrupt key
// ends the turn in flight.
func (c *Client) Interrupt(ctx context.Context, name string) (api.Agent, error) {
	return c.action(ctx, ChangeTimeout, name, "interrupt")
}

// Compact is POST /agents/{name}/compact: the harness's compact command
// is queued; the outcome shows in the agent's Deliveries under the id.
func (c *Client) Compact(ctx context.Context, name string) (api.SendResult, error) {
	p, err := agentPath(name, "compact")
	if err != nil {
		return api.SendResult{}, err
	}
	var r api.SendResult
	err = c.change(ctx, LaunchTimeout, http.MethodPost, p, nil, &r, "")
	return r, err
}

func (c *Client) action(ctx context.Context, bound time.Duration, name, verb string) (api.Agent, error) {
	p, err := agentPath(name, verb)
	if err != nil {
		return api.Agent{}, err
	}
	var a api.Agent
	err = c.do(ctx, bound, http.MethodPost, p, nil, &a)
	return a, err
}

// Delete is DELETE /agents/{name}; agent_running unless it is stopped.
func (c *Client) Delete(ctx context.Context, name string) error {
	p, err := agentPath(name, "")
	if err != nil {
		return err
	}
	return c.do(ctx, ChangeTimeout, http.MethodDelete, p, nil, nil)
}

// DeleteAgent is DELETE /agents/{name} with the worktree options: what
// became of the agent's worktree is in the answer; worktree_dirty and
// worktree_unmerged refuse a delete that would lose work.
func (c *Client) DeleteAgent(ctx context.Context, name string, req api.DeleteRequest) (api.DeleteResult, error) {
	p, err := agentPath(name, "")
	if err != nil {
		return api.DeleteResult{}, err
	}
	var q []string
	if req.Force {
		q = append(q, "force=true")
	}
	if req.KeepWorktree {
		q = append(q, "keep_worktree=true")
	}
	if len(q) > 0 {
		p += "?" + strings.Join(q, "&")
	}
	var res api.DeleteResult
	err = c.do(ctx, ChangeTimeout, http.MethodDelete, p, nil, &res)
	return res, err
}

// Logs is GET /agents/{name}/logs?lines=N; lines <= 0 asks for the default.
func (c *Client) Logs(ctx context.Context, name string, lines int) (api.Logs, error) {
	p, err := agentPath(name, "logs")
	if err != nil {
		return api.Logs{}, err
	}
	if lines > 0 {
		p += "?lines=" + strconv.Itoa(lines)
	}
	var l api.Logs
	err = c.do(ctx, ReadTimeout, http.MethodGet, p, nil, &l)
	return l, err
}

// Send is POST /agents/{name}/send of a message the daemon names.
func (c *Client) Send(ctx context.Context, name, message string) (api.SendResult, error) {
	return c.SendMessage(ctx, name, api.SendRequest{Message: message})
}

// SendMessage is POST /agents/{name}/send. Text that is not UTF-8 is
// invalid_args here, before JSON encoding would replace its bytes. A
// daemon that got the request and did not answer is outcome_unknown: the
// message may be queued; sending the same req.ID again is safe (the
// daemon answers a known id with its first answer).
func (c *Client) SendMessage(ctx context.Context, name string, req api.SendRequest) (api.SendResult, error) {
	p, err := agentPath(name, "send")
	if err != nil {
		return api.SendResult{}, err
	}
	if err := api.CheckText("send to "+name+": message", req.Message); err != nil {
		return api.SendResult{}, err
	}
	if req.ID != "" {
		if err := api.CheckMessageID(req.ID); err != nil {
			return api.SendResult{}, err
		}
	}
	var r api.SendResult
	err = c.change(ctx, LaunchTimeout, http.MethodPost, p, req, &r, req.ID)
	return r, err
}

// SendAndWait is POST /agents/{name}/send with req.Wait: the answer is the
// message's outcome once it was delivered (or replied to), bounded by
// req.Timeout. Running out is wait_timeout and never cancels the message.
func (c *Client) SendAndWait(ctx context.Context, name string, req api.SendRequest) (api.MessageOutcome, error) {
	p, err := agentPath(name, "send")
	if err != nil {
		return api.MessageOutcome{}, err
	}
	if err := api.CheckText("send to "+name+": message", req.Message); err != nil {
		return api.MessageOutcome{}, err
	}
	if req.ID != "" {
		if err := api.CheckMessageID(req.ID); err != nil {
			return api.MessageOutcome{}, err
		}
	}
	d, err := api.ParseWaitTimeout(req.Timeout)
	if err != nil {
		return api.MessageOutcome{}, err
	}
	var r api.MessageOutcome
	err = c.change(ctx, d+LaunchTimeout, http.MethodPost, p, req, &r, req.ID)
	return r, err
}

// Message is GET /agents/{name}/messages/{id}: the message's outcome now,
// or with wait (api.WaitDelivered, api.WaitReply) once it got that far,
// bounded by timeout (wait_timeout; the message goes on).
func (c *Client) Message(ctx context.Context, name, id, wait string, timeout time.Duration) (api.MessageOutcome, error) {
	if err := api.CheckMessageID(id); err != nil {
		return api.MessageOutcome{}, err
	}
	p, err := agentPath(name, "messages/"+id)
	if err != nil {
		return api.MessageOutcome{}, err
	}
	bound := ReadTimeout
	if wait != "" {
		q := url.Values{"wait": {wait}, "timeout": {timeout.String()}}
		p += "?" + q.Encode()
		bound += timeout
	}
	var r api.MessageOutcome
	err = c.do(ctx, bound, http.MethodGet, p, nil, &r)
	return r, err
}

// Conversation is GET /agents/{name}/conversation.
func (c *Client) Conversation(ctx context.Context, name string, q api.ConversationQuery) (api.Conversation, error) {
	p, err := agentPath(name, "conversation")
	if err != nil {
		return api.Conversation{}, err
	}
	v := url.Values{}
	if q.Last > 0 {
		v.Set("last", strconv.Itoa(q.Last))
	}
	if q.ID != "" {
		v.Set("conversation", q.ID)
	}
	if len(v) > 0 {
		p += "?" + v.Encode()
	}
	var r api.Conversation
	err = c.do(ctx, ReadTimeout, http.MethodGet, p, nil, &r)
	return r, err
}

// ReloadConfig is POST /config/reload: config_error (with the findings)
// when the new file is invalid, in which case the daemon keeps the old one.
func (c *Client) ReloadConfig(ctx context.Context) (api.ReloadResult, error) {
	var r api.ReloadResult
	err := c.do(ctx, ChangeTimeout, http.MethodPost, "/config/reload", nil, &r)
	return r, err
}

// ListTasks is GET /tasks.
func (c *Client) ListTasks(ctx context.Context) ([]api.Task, error) {
	var ts []api.Task
	err := c.do(ctx, ReadTimeout, http.MethodGet, "/tasks", nil, &ts)
	return ts, err
}

// GetTask is GET /tasks/{name}.
func (c *Client) GetTask(ctx context.Context, name string) (api.Task, error) {
	p, err := taskPath(name, "")
	if err != nil {
		return api.Task{}, err
	}
	var t api.Task
	err = c.do(ctx, ReadTimeout, http.MethodGet, p, nil, &t)
	return t, err
}

// TaskHistory is GET /tasks/{name}/history?limit=N (newest last); limit
// <= 0 asks for the daemon's default.
func (c *Client) TaskHistory(ctx context.Context, name string, limit int) (api.TaskHistory, error) {
	p, err := taskPath(name, "history")
	if err != nil {
		return api.TaskHistory{}, err
	}
	var h api.TaskHistory
	err = c.do(ctx, ReadTimeout, http.MethodGet, p+limitQuery(limit), nil, &h)
	return h, err
}

// AllHistory is GET /history?limit=N: every task's runs by start.
func (c *Client) AllHistory(ctx context.Context, limit int) (api.TaskHistory, error) {
	var h api.TaskHistory
	err := c.do(ctx, ReadTimeout, http.MethodGet, "/history"+limitQuery(limit), nil, &h)
	return h, err
}

func limitQuery(limit int) string {
	if limit <= 0 {
		return ""
	}
	return "?limit=" + strconv.Itoa(limit)
}

// TaskLog is GET /tasks/{name}/logs?run=ID; run "" is the newest run.
func (c *Client) TaskLog(ctx context.Context, name, run string) (api.TaskLog, error) {
	p, err := taskPath(name, "logs")
	if err != nil {
		return api.TaskLog{}, err
	}
	if run != "" {
		p += "?run=" + url.QueryEscape(run)
	}
	var l api.TaskLog
	err = c.do(ctx, ReadTimeout, http.MethodGet, p, nil, &l)
	return l, err
}

// RunTask is POST /tasks/{name}/run. Without wait it answers the run as
// started. With wait it answers the finished run, which may take the
// task's timeout (times its attempts): the call is then bounded by ctx's
// deadline, or RunWaitTimeout when ctx has none.
func (c *Client) RunTask(ctx context.Context, name string, wait bool) (api.TaskRun, error) {
	p, err := taskPath(name, "run")
	if err != nil {
		return api.TaskRun{}, err
	}
	var r api.TaskRun
	err = c.do(ctx, runBound(ctx, wait), http.MethodPost, p, api.RunRequest{Wait: wait}, &r)
	return r, err
}

// runBound is how long RunTask waits for the daemon's answer: starting a
// run is a launch; a waited run lasts as long as the caller allows (its
// deadline may be hours away, past every fixed bound), RunWaitTimeout when
// it sets none.
func runBound(ctx context.Context, wait bool) time.Duration {
	if !wait {
		return LaunchTimeout
	}
	if d, ok := ctx.Deadline(); ok {
		return max(time.Until(d), 0)
	}
	return RunWaitTimeout
}

// EnableTask is POST /tasks/{name}/enable: the daemon edits leo.yaml and
// reloads.
func (c *Client) EnableTask(ctx context.Context, name string) (api.Task, error) {
	return c.taskAction(ctx, name, "enable")
}

// DisableTask is POST /tasks/{name}/disable.
func (c *Client) DisableTask(ctx context.Context, name string) (api.Task, error) {
	return c.taskAction(ctx, name, "disable")
}

func (c *Client) taskAction(ctx context.Context, name, verb string) (api.Task, error) {
	p, err := taskPath(name, verb)
	if err != nil {
		return api.Task{}, err
	}
	var t api.Task
	err = c.do(ctx, ChangeTimeout, http.MethodPost, p, nil, &t)
	return t, err
}

// taskPath is the path of a task's route; a name that breaks the name
// rule is invalid_args before any request is built.
func taskPath(name, verb string) (string, error) {
	if err := api.CheckName("task", name); err != nil {
		return "", err
	}
	p := "/tasks/" + name
	if verb != "" {
		p += "/" + verb
	}
	return p, nil
}

// ListTemplates is GET /templates: the config's templates, by name.
func (c *Client) ListTemplates(ctx context.Context) ([]api.Template, error) {
	var ts []api.Template
	err := c.do(ctx, ReadTimeout, http.MethodGet, "/templates", nil, &ts)
	return ts, err
}

// NotifyStatus is GET /notify: every notifier of the running config and
// what it did since the daemon started.
func (c *Client) NotifyStatus(ctx context.Context) (api.NotifyStatus, error) {
	var s api.NotifyStatus
	err := c.do(ctx, ReadTimeout, http.MethodGet, "/notify", nil, &s)
	return s, err
}

// NotifyTest is POST /notify/test: a sample of req.Event sent to each
// notifier listening for it, and how each one took it.
func (c *Client) NotifyTest(ctx context.Context, req api.NotifyTestRequest) (api.NotifyTestResult, error) {
	var r api.NotifyTestResult
	err := c.do(ctx, NotifyTestTimeout, http.MethodPost, "/notify/test", req, &r)
	return r, err
}

// TurnEnd is POST /hooks/turn-end: a harness hook's report of a turn's
// end. Bounded by ctx (a hook gives up quickly rather than hold up the
// harness) and ReadTimeout.
func (c *Client) TurnEnd(ctx context.Context, r api.TurnEndReport) error {
	return c.do(ctx, ReadTimeout, http.MethodPost, "/hooks/turn-end", r, nil)
}

// agentPath is the path of an agent's route; a name that breaks the name
// rule is invalid_args here, before it can become a path such as /agents//logs.
func agentPath(name, verb string) (string, error) {
	if err := api.CheckAgentName(name); err != nil {
		return "", err
	}
	p := "/agents/" + name
	if verb != "" {
		p += "/" + verb
	}
	return p, nil
}

// do sends one request and decodes the answer into out (nil: discard). The
// call, answer included, is bounded by bound or ctx's deadline if sooner.
func (c *Client) do(ctx context.Context, bound time.Duration, method, path string, in, out any) error {
	return c.roundTrip(ctx, bound, method, path, in, out, false, "")
}

// change is do for a request that queues work (a message, a compaction):
// once the request reached the daemon, a missing answer is
// outcome_unknown, never daemon_down — the work may be done, so a caller
// that took the failure at its word and retried would do it twice.
// key, the message's id when it has one, rides as Idempotency-Key: Go's
// transport then resends the request by itself when a kept-alive
// connection turns out closed before anything was read (the daemon
// ignores the header; the id in the body is what it answers by).
func (c *Client) change(ctx context.Context, bound time.Duration, method, path string, in, out any, key string) error {
	return c.roundTrip(ctx, bound, method, path, in, out, true, key)
}

func (c *Client) roundTrip(ctx context.Context, bound time.Duration, method, path string, in, out any, changes bool, key string) error {
	wait := bound
	if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
		wait = max(time.Until(d), 0)
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	call := method + " " + path
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return api.Errorf(api.CodeInternal, "encode request: %w", err)
		}
		body = bytes.NewReader(data)
	}
	target, err := c.target(path)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return api.Errorf(api.CodeInternal, "build request %s: %w", call, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.web != nil {
		req.Header.Set("Authorization", c.web.auth)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	var reached atomic.Bool
	if changes {
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(httptrace.GotConnInfo) { reached.Store(true) },
		}))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if reached.Load() {
			return c.unknownOutcome(ctx, call, wait, err)
		}
		return c.transportError(ctx, call, wait, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		if changes {
			return c.unknownOutcome(ctx, call, wait, err)
		}
		return c.transportError(ctx, call, wait, err)
	}
	if resp.StatusCode >= 300 {
		return decodeError(resp.StatusCode, data)
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*json.RawMessage); ok {
		// Passed on as is; whoever prints it validates it (json.Indent).
		*raw = bytes.TrimSpace(data)
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return api.Errorf(api.CodeInternal, "leo daemon sent an unreadable answer to %s: %w", call, err)
	}
	return nil
}

// decodeError turns an error answer into its *api.Error; an answer that is
// not one (a proxy, a daemon of another version) keeps its status visible.
func decodeError(status int, data []byte) error {
	var e api.Error
	if err := json.Unmarshal(data, &e); err == nil && e.Code != "" {
		return &e
	}
	text := string(bytes.TrimSpace(data))
	if len(text) > 200 {
		text = text[:200] + "…"
	}
	return api.Errorf(api.CodeInternal, "leo daemon answered %d %s: %s", status, http.StatusText(status), text)
}

// transportError explains a request that never got an answer. A dial that
// failed means no daemon serves the socket; the lock tells whether one is
// still alive. call ("GET /agents") and wait (how long it could take) name
// the request in the message.
func (c *Client) transportError(ctx context.Context, call string, wait time.Duration, err error) error {
	if c.web != nil {
		return c.webTransportError(ctx, call, wait, err)
	}
	switch {
	case timedOut(ctx, err):
		held, pid, _ := lockfile.Probe(c.lock)
		who := "leo daemon"
		if pid > 0 {
			who = fmt.Sprintf("leo daemon (pid %d)", pid)
		}
		if !held {
			return api.Errorf(api.CodeDaemonDown,
				"something holds the socket %s but does not answer: no reply to %s within %s, and no leo daemon holds the lock; %s",
				c.socket, call, roundWait(wait), StartHint)
		}
		return api.Errorf(api.CodeDaemonDown,
			"%s holds the socket but does not answer: no reply to %s within %s (is the process stopped or stuck?)",
			who, call, roundWait(wait))
	case errors.Is(err, context.Canceled):
		return api.Errorf(api.CodeInternal, "cancelled while waiting for the leo daemon to answer %s", call)
	case errors.Is(err, syscall.ENOENT):
		if held, pid, _ := lockfile.Probe(c.lock); held {
			return withCause(api.Errorf(api.CodeDaemonDown,
				"leo daemon holds the lock but does not answer (pid %d, no socket at %s)", pid, c.socket), err)
		}
		return withCause(api.Errorf(api.CodeDaemonDown, "leo daemon is not running (no socket at %s); %s", c.socket, StartHint), err)
	case errors.Is(err, syscall.ECONNREFUSED):
		if held, pid, _ := lockfile.Probe(c.lock); held {
			return withCause(api.Errorf(api.CodeDaemonDown,
				"leo daemon holds the lock but does not answer (pid %d, socket %s refuses connections)", pid, c.socket), err)
		}
		return withCause(api.Errorf(api.CodeDaemonDown,
			"leo daemon is not running (stale socket at %s: the last daemon did not shut down cleanly); %s", c.socket, StartHint), err)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return withCause(api.Errorf(api.CodeDaemonDown, "cannot reach leo daemon: permission denied on %s", c.socket), err)
	case isDialError(err):
		return api.Errorf(api.CodeDaemonDown, "cannot reach leo daemon on %s: %w", c.socket, err)
	default:
		if held, pid, _ := lockfile.Probe(c.lock); held {
			return api.Errorf(api.CodeDaemonDown, "leo daemon (pid %d) dropped the request: %w", pid, unwrapURL(err))
		}
		return api.Errorf(api.CodeDaemonDown, "leo daemon stopped while answering: %w; %s", unwrapURL(err), StartHint)
	}
}

// withCause keeps the dial's error behind a message that says it in
// leo's words (errors.Is(err, syscall.ECONNREFUSED) still holds).
func withCause(e *api.Error, cause error) *api.Error {
	e.Cause = cause
	return e
}

// unknownOutcome explains a change that reached the daemon (a connection
// was made and the request written to it) but got no answer: a stopped
// daemon's kernel still accepts the connection, and the daemon carries the
// request out once it runs again.
func (c *Client) unknownOutcome(ctx context.Context, call string, wait time.Duration, err error) error {
	who := "the leo daemon"
	if c.web != nil {
		who = "the leo web API at " + c.web.url
	} else if _, pid, _ := lockfile.Probe(c.lock); pid > 0 {
		who = fmt.Sprintf("the leo daemon (pid %d)", pid)
	}
	why := fmt.Sprintf("no answer within %s (is the process stopped or stuck?)", roundWait(wait))
	switch {
	case errors.Is(err, context.Canceled) && !timedOut(ctx, err):
		why = "the call was cancelled before the answer came"
	case !timedOut(ctx, err):
		why = fmt.Sprintf("the connection broke before the answer came (%v)", unwrapURL(err))
	}
	return api.Errorf(api.CodeOutcomeUnknown,
		"%s: %s got the request but %s; it may have been carried out, or may be once the daemon runs again. Do not take it as failed: a send retried with the same id is never queued twice",
		call, who, why)
}

// webTransportError is transportError over the HTTP API: no lock to ask,
// so the message names the URL and what the transport said.
func (c *Client) webTransportError(ctx context.Context, call string, wait time.Duration, err error) error {
	switch {
	case timedOut(ctx, err):
		return api.Errorf(api.CodeDaemonDown, "leo web API at %s not reachable: no reply to %s within %s", c.web.url, call, roundWait(wait))
	case errors.Is(err, context.Canceled):
		return api.Errorf(api.CodeInternal, "cancelled while waiting for the leo web API at %s to answer %s", c.web.url, call)
	case errors.Is(err, syscall.ECONNREFUSED):
		return api.Errorf(api.CodeDaemonDown, "leo web API at %s not reachable: connection refused (is the leo daemon running with web.enabled?)", c.web.url)
	default:
		return api.Errorf(api.CodeDaemonDown, "leo web API at %s not reachable: %w", c.web.url, unwrapURL(err))
	}
}

// StartHint ends every daemon_down that means no daemon runs: how to
// start one. (A daemon that holds the lock but does not answer runs; its
// message says that instead.)
const StartHint = "start it with 'leo service' (in the foreground) or 'leo service start' (the installed service)"

// timedOut reports whether the call ran out of time: its deadline passed,
// or connecting to the socket timed out (a stopped daemon whose listen
// queue is full).
func timedOut(ctx context.Context, err error) bool {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// roundWait prints a wait the way a person reads it: 5s, 1.5s, 200ms.
func roundWait(d time.Duration) string {
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(100 * time.Millisecond).String()
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// IsDaemonDown reports whether no daemon answered.
func IsDaemonDown(err error) bool { return api.HasCode(err, api.CodeDaemonDown) }

// IsNotFound reports whether the agent (or route) does not exist.
func IsNotFound(err error) bool { return api.HasCode(err, api.CodeNotFound) }

// IsNotReady reports whether the daemon is still restoring agents.
func IsNotReady(err error) bool { return api.HasCode(err, api.CodeNotReady) }

// IsAgentRunning reports a delete refused because the agent is not stopped.
func IsAgentRunning(err error) bool { return api.HasCode(err, api.CodeAgentRunning) }

// IsClaudeNotFound reports a claude agent that cannot start: no claude CLI.
func IsClaudeNotFound(err error) bool { return api.HasCode(err, api.CodeClaudeNotFound) }

// IsConfigError reports an invalid config (e.g. a refused reload).
func IsConfigError(err error) bool { return api.HasCode(err, api.CodeConfigError) }

// IsInvalidArgs reports a request the daemon rejected as malformed.
func IsInvalidArgs(err error) bool { return api.HasCode(err, api.CodeInvalidArgs) }

// IsTaskRunning reports a run refused because one of the task is going.
func IsTaskRunning(err error) bool { return api.HasCode(err, api.CodeTaskRunning) }

// IsDeliveryFailed reports a message that could not land.
func IsDeliveryFailed(err error) bool { return api.HasCode(err, api.CodeDeliveryFailed) }

// Drain is POST /drain: deliveries pause, and unless req.Force the answer
// comes once no agent has a turn in flight, or drain_timeout names who is
// still working (deliveries then resume). The call is bounded by the
// drain's own timeout plus ChangeTimeout.
func (c *Client) Drain(ctx context.Context, req api.DrainRequest) (api.DrainResult, error) {
	var r api.DrainResult
	wait := time.Duration(req.TimeoutSeconds*float64(time.Second)) + ChangeTimeout
	if req.TimeoutSeconds == 0 {
		wait = 60*time.Second + ChangeTimeout
	}
	err := c.do(ctx, wait, http.MethodPost, "/drain", req, &r)
	return r, err
}

// ResumeDeliveries is POST /drain/resume: held messages go again.
func (c *Client) ResumeDeliveries(ctx context.Context) error {
	return c.do(ctx, ChangeTimeout, http.MethodPost, "/drain/resume", nil, nil)
}

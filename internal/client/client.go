// Package client is the typed Go client of the daemon's socket API
// (HTTP over state/leo.sock). Every failure is an *api.Error with a stable
// code; when no daemon answers, the code is daemon_down and the message
// says why (not running, stale socket, holding the lock but silent).
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/daemon/lockfile"
	"github.com/blackpaw-studio/leo/internal/home"
)

// Client talks to one home's daemon. It is safe for concurrent use.
type Client struct {
	socket string
	lock   string
	http   *http.Client
}

// baseURL is a placeholder host: the transport always dials the socket.
const baseURL = "http://leo"

// dialTimeout bounds connecting to the socket; a live daemon accepts at once.
const dialTimeout = 2 * time.Second

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
	return &Client{socket: socket, lock: lock, http: &http.Client{Transport: tr}}
}

// Close drops idle connections.
func (c *Client) Close() { c.http.CloseIdleConnections() }

// Health is GET /health.
func (c *Client) Health(ctx context.Context) (api.Health, error) {
	var h api.Health
	err := c.do(ctx, http.MethodGet, "/health", nil, &h)
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
	var a api.Agent
	err := c.do(ctx, http.MethodPost, "/agents/spawn", req, &a)
	return a, err
}

// List is GET /agents.
func (c *Client) List(ctx context.Context) ([]api.Agent, error) {
	var as []api.Agent
	err := c.do(ctx, http.MethodGet, "/agents", nil, &as)
	return as, err
}

// ListJSON is GET /agents as the daemon sent it, a JSON array of api.Agent
// (not validated here), for `leo agent list --json` to print without
// decoding and re-encoding every record: at 200 agents that was about a
// quarter of the command's time.
func (c *Client) ListJSON(ctx context.Context) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodGet, "/agents", nil, &raw); err != nil {
		return nil, err
	}
	if len(raw) == 0 || raw[0] != '[' {
		return nil, api.Errorf(api.CodeInternal, "leo daemon sent an unreadable answer to GET /agents: not a list")
	}
	return raw, nil
}

// Get is GET /agents/{name}.
func (c *Client) Get(ctx context.Context, name string) (api.Agent, error) {
	var a api.Agent
	err := c.do(ctx, http.MethodGet, agentPath(name, ""), nil, &a)
	return a, err
}

// Start is POST /agents/{name}/start.
func (c *Client) Start(ctx context.Context, name string) (api.Agent, error) {
	return c.action(ctx, name, "start")
}

// Stop is POST /agents/{name}/stop.
func (c *Client) Stop(ctx context.Context, name string) (api.Agent, error) {
	return c.action(ctx, name, "stop")
}

// Restart is POST /agents/{name}/restart.
func (c *Client) Restart(ctx context.Context, name string) (api.Agent, error) {
	return c.action(ctx, name, "restart")
}

// Reset is POST /agents/{name}/reset: a new conversation.
func (c *Client) Reset(ctx context.Context, name string) (api.Agent, error) {
	return c.action(ctx, name, "reset")
}

func (c *Client) action(ctx context.Context, name, verb string) (api.Agent, error) {
	var a api.Agent
	err := c.do(ctx, http.MethodPost, agentPath(name, verb), nil, &a)
	return a, err
}

// Delete is DELETE /agents/{name}; agent_running unless it is stopped.
func (c *Client) Delete(ctx context.Context, name string) error {
	return c.do(ctx, http.MethodDelete, agentPath(name, ""), nil, nil)
}

// Logs is GET /agents/{name}/logs?lines=N; lines <= 0 asks for the default.
func (c *Client) Logs(ctx context.Context, name string, lines int) (api.Logs, error) {
	p := agentPath(name, "logs")
	if lines > 0 {
		p += "?lines=" + strconv.Itoa(lines)
	}
	var l api.Logs
	err := c.do(ctx, http.MethodGet, p, nil, &l)
	return l, err
}

// Send is POST /agents/{name}/send.
func (c *Client) Send(ctx context.Context, name, message string) (api.SendResult, error) {
	var r api.SendResult
	err := c.do(ctx, http.MethodPost, agentPath(name, "send"), api.SendRequest{Message: message}, &r)
	return r, err
}

// ReloadConfig is POST /config/reload: config_error (with the findings)
// when the new file is invalid, in which case the daemon keeps the old one.
func (c *Client) ReloadConfig(ctx context.Context) (api.ReloadResult, error) {
	var r api.ReloadResult
	err := c.do(ctx, http.MethodPost, "/config/reload", nil, &r)
	return r, err
}

func agentPath(name, verb string) string {
	p := "/agents/" + url.PathEscape(name)
	if verb != "" {
		p += "/" + verb
	}
	return p
}

// do sends one request and decodes the answer into out (nil: discard).
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return api.Errorf(api.CodeInternal, "encode request: %v", err)
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, baseURL+path, body)
	if err != nil {
		return api.Errorf(api.CodeInternal, "build request: %v", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return c.transportError(ctx, err)
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
		return api.Errorf(api.CodeInternal, "leo daemon sent an unreadable answer to %s %s: %v", method, path, err)
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
// still alive.
func (c *Client) transportError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !isDialError(err) {
		return api.Errorf(api.CodeDaemonDown, "leo daemon did not answer in time (%v)", ctxErr)
	}
	switch {
	case errors.Is(err, syscall.ENOENT):
		if held, pid, _ := lockfile.Probe(c.lock); held {
			return api.Errorf(api.CodeDaemonDown,
				"leo daemon holds the lock but does not answer (pid %d, no socket at %s)", pid, c.socket)
		}
		return api.Errorf(api.CodeDaemonDown, "leo daemon is not running (no socket at %s)", c.socket)
	case errors.Is(err, syscall.ECONNREFUSED):
		if held, pid, _ := lockfile.Probe(c.lock); held {
			return api.Errorf(api.CodeDaemonDown,
				"leo daemon holds the lock but does not answer (pid %d, socket %s refuses connections)", pid, c.socket)
		}
		return api.Errorf(api.CodeDaemonDown,
			"leo daemon is not running (stale socket at %s: the last daemon did not shut down cleanly)", c.socket)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return api.Errorf(api.CodeDaemonDown, "cannot reach leo daemon: permission denied on %s", c.socket)
	case isDialError(err):
		return api.Errorf(api.CodeDaemonDown, "cannot reach leo daemon on %s: %v", c.socket, err)
	default:
		if held, pid, _ := lockfile.Probe(c.lock); held {
			return api.Errorf(api.CodeDaemonDown, "leo daemon (pid %d) dropped the request: %v", pid, unwrapURL(err))
		}
		return api.Errorf(api.CodeDaemonDown, "leo daemon stopped while answering: %v", unwrapURL(err))
	}
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

// IsDeliveryFailed reports a message that could not land.
func IsDeliveryFailed(err error) bool { return api.HasCode(err, api.CodeDeliveryFailed) }

// Package modelserver is a model API server for tests: it listens on
// 127.0.0.1 only and speaks enough of three wire protocols for the real
// harness CLIs to complete turns against it —
//
//   - the Anthropic Messages API (POST /v1/messages, streaming SSE and not),
//     which claude uses;
//   - the OpenAI Responses API (POST /v1/responses, streaming), which codex
//     uses;
//   - OpenAI Chat Completions (POST /v1/chat/completions, streaming and not),
//     which opencode uses through @ai-sdk/openai-compatible.
//
// Every turn is answered with a scripted reply. By default the reply is
// "ACK <marker>" for every marker (LEO-…) found in the last user message, so
// a test sends "… LEO-x1 …" and waits for "ACK LEO-x1" on the pane. Every
// request is recorded (path, protocol, the last user message's text, time);
// tests read the record and wait on it.
//
// A CLI sends more than its turns: claude makes a side request per turn,
// codex and opencode generate titles. A request offering the model no tools
// is such a side request: it is recorded with Side set and answered with a
// neutral text that never contains a marker or "ACK", so it cannot be taken
// for a turn's reply on screen or in the record.
package modelserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// API names the wire protocol of a request.
type API string

const (
	Anthropic API = "anthropic-messages"
	Responses API = "openai-responses"
	Chat      API = "openai-chat"
	Other     API = "other" // any other path: recorded, answered 404
)

// MarkerPattern is what the default reply echoes: LEO- then letters, digits
// and dashes.
var MarkerPattern = regexp.MustCompile(`LEO-[A-Za-z0-9-]+`)

// SideReply is the text every side request gets.
const SideReply = "Side reply"

// maxBody bounds a request body; the CLIs send their whole system prompt and
// tool list each turn (claude: a few hundred KB at most).
const maxBody = 16 << 20

// Request is one request the server saw.
type Request struct {
	Seq    int // 1, 2, … in arrival order
	Time   time.Time
	Method string
	Path   string
	API    API
	Stream bool
	Model  string
	// UserText is the text of the last user message, its text parts joined
	// by "\n".
	UserText string
	// System is the system prompt's text (instructions for Responses).
	System string
	Tools  int // number of tools offered
	// ToolNames are the names of the tools offered, in the request's order;
	// a tool in a Responses namespace is "<namespace>/<tool>".
	ToolNames []string
	// ToolResults are the tool results after the last user message: the
	// answers to the tool calls of the reply before.
	ToolResults []ToolResult
	// Side marks a request that is not a turn (no tools offered); SideWhy
	// says why it was classed so.
	Side    bool
	SideWhy string
	// Markers are the markers found in UserText, in order, without repeats.
	Markers []string
	// Reply is the text the server answered with ("" for errors).
	Reply     string
	Status    int // HTTP status answered
	UserAgent string
	Body      []byte // the raw body
}

// ToolResult is a tool's result as the CLI sent it back.
type ToolResult struct {
	ID   string // the call's id (tool_use_id, call_id, tool_call_id)
	Text string // the result's text (its text parts joined by "\n")
}

// ToolCall is a call of a tool the CLI offered, as the model's answer.
type ToolCall struct {
	// Name is the tool's name as in Request.ToolNames ("<namespace>/<tool>"
	// answers a Responses function_call with that namespace).
	Name  string
	Input string // the arguments, a JSON object; "" means {}
}

// Reply is what a Responder returns for a request.
type Reply struct {
	Text string
	// ToolCall, when set, makes the reply a call of that tool (after
	// Text, when Text is not ""): the turn goes on with the CLI's next
	// request, which carries the tool's result. Its id is ToolCallID of
	// the request's Seq.
	ToolCall *ToolCall
	// Delay holds the reply back (after the first streamed event, so the
	// CLI shows a working turn) — for tests that need a turn in progress.
	Delay time.Duration
	// StreamFor spreads a streamed reply's text deltas evenly over this
	// long (after Delay), as a real model streams a long answer: the CLI
	// draws the text as it comes. Zero sends them at once.
	StreamFor time.Duration
	// Status, when not 0 or 200, answers with that HTTP status and an
	// error body instead.
	Status int
	// ErrorBody, with Status, is the JSON body answered instead of the
	// server's own error (a vendor's shape the CLI reads, such as codex's
	// usage_limit_reached with its resets_at).
	ErrorBody string
	// Header, with Status, adds these response headers (retry-after, a
	// vendor's rate-limit headers).
	Header map[string]string
	// Cut drops the connection after the stream's first events (after
	// Delay), before any text: a stream that breaks mid-response, as a
	// flaky network or a crashed upstream does. A request that is not
	// streamed gets no response at all.
	Cut bool
}

// Responder picks the reply to a request. It must not block beyond the
// request's context.
type Responder func(Request) Reply

// DefaultResponder answers a turn with "ACK" and its markers ("ACK" and the
// first 40 characters of the text when there is no marker) and a side
// request with SideReply.
func DefaultResponder(r Request) Reply {
	if r.Side {
		return Reply{Text: SideReply}
	}
	if len(r.Markers) == 0 {
		t := strings.Join(strings.Fields(r.UserText), " ")
		if len(t) > 40 {
			t = t[:40]
		}
		return Reply{Text: "ACK (no marker) " + t}
	}
	return Reply{Text: "ACK " + strings.Join(r.Markers, " ")}
}

// Server is a running model server. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL, http://127.0.0.1:PORT, without a trailing slash
	// and without /v1.
	URL string

	srv *http.Server
	ln  net.Listener

	mu        sync.Mutex
	reqs      []Request
	changed   chan struct{} // closed and replaced on every new request
	responder Responder
	closed    bool
	wg        sync.WaitGroup
}

// New starts a server on a free loopback port. Close stops it.
func New() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("modelserver: listen on 127.0.0.1: %w", err)
	}
	return Serve(ln), nil
}

// Listen starts a server on addr, which must be a loopback address
// (127.0.0.1:PORT, [::1]:PORT or localhost:PORT).
func Listen(addr string) (*Server, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("modelserver: address %q: %w", addr, err)
	}
	if host != "localhost" {
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return nil, fmt.Errorf("modelserver: address %q: not a loopback address", addr)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("modelserver: listen on %s: %w", addr, err)
	}
	return Serve(ln), nil
}

// Serve serves on ln, which the caller made on a loopback address.
func Serve(ln net.Listener) *Server {
	s := &Server{
		URL:       "http://" + ln.Addr().String(),
		ln:        ln,
		changed:   make(chan struct{}),
		responder: DefaultResponder,
	}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = s.srv.Serve(ln)
	}()
	return s
}

// Start starts a server that is closed when the test ends.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := New()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server, cutting open streams.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	s.wg.Wait()
}

// SetResponder replaces the responder (nil restores DefaultResponder).
func (s *Server) SetResponder(r Responder) {
	if r == nil {
		r = DefaultResponder
	}
	s.mu.Lock()
	s.responder = r
	s.mu.Unlock()
}

// Requests returns a copy of every request so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Turns returns the requests that are turns (not side requests, not other
// paths), in arrival order.
func (s *Server) Turns() []Request { return Turns(s.Requests()) }

// Turns filters reqs down to the turns.
func Turns(reqs []Request) []Request {
	var out []Request
	for _, r := range reqs {
		if !r.Side && r.API != Other {
			out = append(out, r)
		}
	}
	return out
}

// WithMarker returns the turns whose last user message holds marker.
func WithMarker(reqs []Request, marker string) []Request {
	var out []Request
	for _, r := range Turns(reqs) {
		for _, m := range r.Markers {
			if m == marker {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// Wait blocks until cond holds for the requests so far (checked now and
// after every new request) or ctx ends; it returns the requests it last
// checked and ctx's error if it ended first.
func (s *Server) Wait(ctx context.Context, cond func([]Request) bool) ([]Request, error) {
	for {
		s.mu.Lock()
		reqs := append([]Request(nil), s.reqs...)
		ch := s.changed
		s.mu.Unlock()
		if cond(reqs) {
			return reqs, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return reqs, fmt.Errorf("modelserver: %d request(s) seen, condition not met: %w", len(reqs), ctx.Err())
		}
	}
}

// WaitTurn waits for a turn carrying marker and returns the first one.
func (s *Server) WaitTurn(ctx context.Context, marker string) (Request, error) {
	reqs, err := s.Wait(ctx, func(r []Request) bool { return len(WithMarker(r, marker)) > 0 })
	if err != nil {
		return Request{}, fmt.Errorf("no turn with %s: %w (turns seen: %s)", marker, err, Summary(Turns(reqs)))
	}
	return WithMarker(reqs, marker)[0], nil
}

// Summary is a one-line account of reqs for failure messages: each
// request's number, API, side mark and markers.
func Summary(reqs []Request) string {
	if len(reqs) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(reqs))
	for _, r := range reqs {
		p := fmt.Sprintf("#%d %s %s", r.Seq, r.API, r.Path)
		if r.Side {
			p += " side(" + r.SideWhy + ")"
		}
		if len(r.Markers) > 0 {
			p += " [" + strings.Join(r.Markers, " ") + "]"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}

func (s *Server) record(r Request) Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.reqs) + 1
	s.reqs = append(s.reqs, r)
	close(s.changed)
	s.changed = make(chan struct{})
	return r
}

// ServeHTTP routes a request by path.
func (s *Server) ServeHTTP(w http.ResponseWriter, hr *http.Request) {
	path := hr.URL.Path
	api := Other
	if hr.Method == http.MethodPost {
		switch {
		case strings.HasSuffix(path, "/messages") && !strings.HasSuffix(path, "/count_tokens"):
			api = Anthropic
		case strings.HasSuffix(path, "/responses"):
			api = Responses
		case strings.HasSuffix(path, "/chat/completions"):
			api = Chat
		}
	}
	req := Request{
		Time:      time.Now(),
		Method:    hr.Method,
		Path:      path,
		API:       api,
		UserAgent: hr.UserAgent(),
	}
	body, err := io.ReadAll(io.LimitReader(hr.Body, maxBody+1))
	if err == nil && len(body) > maxBody {
		err = errors.New("body over 16 MiB")
	}
	req.Body = body
	if api == Other && path == "/" && (hr.Method == http.MethodGet || hr.Method == http.MethodHead) {
		// claude probes the base URL before its first turn.
		req.Status = http.StatusOK
		s.record(req)
		w.WriteHeader(http.StatusOK)
		return
	}
	if api == Other {
		req.Status = http.StatusNotFound
		s.record(req)
		writeJSONError(w, api, http.StatusNotFound, "modelserver: no such endpoint: "+hr.Method+" "+path)
		return
	}
	if err == nil {
		err = parse(&req, body)
	}
	if err != nil {
		req.Status = http.StatusBadRequest
		s.record(req)
		writeJSONError(w, api, http.StatusBadRequest, "modelserver: "+err.Error())
		return
	}
	s.mu.Lock()
	responder := s.responder
	s.mu.Unlock()
	rep := responder(req)
	if rep.Status != 0 && rep.Status != http.StatusOK {
		req.Status = rep.Status
		s.record(req)
		for k, v := range rep.Header {
			w.Header().Set(k, v)
		}
		if rep.ErrorBody != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rep.Status)
			_, _ = io.WriteString(w, rep.ErrorBody)
			return
		}
		writeJSONError(w, api, rep.Status, "modelserver: scripted error")
		return
	}
	req.Reply = rep.Text
	if rep.ToolCall != nil {
		req.Reply += "[tool call " + rep.ToolCall.Name + "]"
	}
	req.Status = http.StatusOK
	req = s.record(req)
	id := fmt.Sprintf("%d", req.Seq)
	ctx := hr.Context()
	switch {
	case api == Anthropic && req.Stream:
		streamAnthropic(ctx, w, id, req.Model, rep)
	case api == Anthropic:
		wait(ctx, rep.Delay)
		cut(rep)
		writeJSON(w, anthropicMessage(id, req.Model, rep))
	case api == Responses && req.Stream:
		streamResponses(ctx, w, id, req.Model, rep)
	case api == Responses:
		wait(ctx, rep.Delay)
		cut(rep)
		writeJSON(w, responsesObject(id, req.Model, "completed", rep))
	case api == Chat && req.Stream:
		streamChat(ctx, w, id, req.Model, rep, req.Body)
	default:
		wait(ctx, rep.Delay)
		cut(rep)
		writeJSON(w, chatCompletion(id, req.Model, rep))
	}
}

// ToolCallID is the id the server gives the tool call of its answer to
// request seq.
func ToolCallID(seq int) string { return callID(fmt.Sprint(seq)) }

func wait(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func writeJSONError(w http.ResponseWriter, api API, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	var v any
	if api == Anthropic {
		v = map[string]any{"type": "error", "error": map[string]any{"type": "api_error", "message": msg}}
	} else {
		v = map[string]any{"error": map[string]any{"type": "server_error", "message": msg, "code": nil}}
	}
	_ = json.NewEncoder(w).Encode(v)
}

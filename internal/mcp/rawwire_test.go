package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/blackpaw-studio/leo/internal/mcp"
)

// rawSession runs a server on pipes and speaks JSON-RPC to it byte for
// byte, as a client on stdio does: an SDK client would encode (and so
// repair) the arguments before they leave.
type rawSession struct {
	t   *testing.T
	in  *io.PipeWriter
	out *bufio.Reader
}

func rawConnect(t *testing.T, opts mcp.Options) *rawSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sr, cw := io.Pipe()
	cr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- mcp.NewServer(opts).Run(ctx, &sdk.IOTransport{Reader: sr, Writer: sw})
	}()
	s := &rawSession{t: t, in: cw, out: bufio.NewReader(cr)}
	t.Cleanup(func() {
		cw.Close()
		cancel()
		cr.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the MCP server did not stop")
		}
	})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	s.read()
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

func (s *rawSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
}

// read returns the next answer (bounded: a pipe read with no answer would
// hang the test).
func (s *rawSession) read() map[string]any {
	s.t.Helper()
	type answer struct {
		line string
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		l, err := s.out.ReadString('\n')
		ch <- answer{l, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			s.t.Fatal(a.err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(a.line), &v); err != nil {
			s.t.Fatalf("%q: %v", a.line, err)
		}
		return v
	case <-time.After(10 * time.Second):
		s.t.Fatal("no answer from the MCP server within 10s")
		return nil
	}
}

// Invalid UTF-8 in a tool's arguments is refused with invalid_args, never
// passed on as U+FFFD (issue 15): the SDK's decoding would have changed
// it before the daemon's text rule saw it.
func TestSendRefusesInvalidUTF8OnTheWire(t *testing.T) {
	d := &fakeDaemon{}
	s := rawConnect(t, mcp.Options{Daemon: d, Sender: mcp.Sender{Agent: "alice"}})
	for i, args := range []string{
		"{\"to\":\"bob\",\"message\":\"a\xffb\"}",
		`{"to":"bob","message":"a\udcffb"}`,
	} {
		s.send(`{"jsonrpc":"2.0","id":` + string(rune('2'+i)) + `,"method":"tools/call","params":{"name":"leo_send_message","arguments":` + args + `}}`)
		ans := s.read()
		res, _ := ans["result"].(map[string]any)
		text, _ := json.Marshal(res["content"])
		if res["isError"] != true || !strings.Contains(string(text), "invalid_args") {
			t.Errorf("%q: %v, want a tool error invalid_args", args, ans)
		}
	}
	s.send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"leo_send_message","arguments":{"to":"bob","message":"caf\u00e9 👍🏽","id":"k1"}}}`)
	if ans := s.read(); ans["result"].(map[string]any)["isError"] == true {
		t.Fatalf("a good message: %v", ans)
	}
	if calls := d.Calls(); len(calls) != 1 || calls[0] != "Send bob [message from alice] café 👍🏽 id=k1" {
		t.Fatalf("daemon calls %q, want only the good message, with its id", calls)
	}
}

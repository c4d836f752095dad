package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/testutil/imports"
)

func newHome(t *testing.T) home.Home {
	t.Helper()
	root := testutil.ShortTempDir(t, "leo-c")
	h := home.Home{Root: root, ConfigPath: filepath.Join(root, "leo.yaml")}
	if err := h.EnsureState(); err != nil {
		t.Fatal(err)
	}
	return h
}

// deadSocket leaves a socket file that nothing listens on, as a daemon
// killed with SIGKILL does.
func deadSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
}

func TestDaemonDownSaysWhy(t *testing.T) {
	ctx := context.Background()

	t.Run("no socket", func(t *testing.T) {
		h := newHome(t)
		_, err := client.New(h).Health(ctx)
		want := "leo daemon is not running (no socket at " + h.SocketPath() + "); start it with 'leo service' (in the foreground) or 'leo service start' (the installed service)"
		if !client.IsDaemonDown(err) || err.Error() != want {
			t.Fatalf("got %v, want daemon_down %q", err, want)
		}
		if !errors.Is(err, syscall.ENOENT) {
			t.Errorf("errors.Is(%v, ENOENT) = false: the dial's error is not kept", err)
		}
	})

	t.Run("stale socket", func(t *testing.T) {
		h := newHome(t)
		deadSocket(t, h.SocketPath())
		_, err := client.New(h).List(ctx)
		if !client.IsDaemonDown(err) || !strings.Contains(err.Error(), "leo daemon is not running (stale socket at "+h.SocketPath()) || !strings.HasSuffix(err.Error(), "; "+client.StartHint) {
			t.Fatalf("got %v", err)
		}
		var op *net.OpError
		if !errors.Is(err, syscall.ECONNREFUSED) || !errors.As(err, &op) || op.Op != "dial" {
			t.Errorf("the dial's error is not kept behind %v", err)
		}
	})

	t.Run("lock held, socket refuses", func(t *testing.T) {
		h := newHome(t)
		deadSocket(t, h.SocketPath())
		l, err := lockfile.Acquire(h.LockPath(), h.Root)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		_, err = client.New(h).Health(ctx)
		want := fmt.Sprintf("leo daemon holds the lock but does not answer (pid %d, socket %s refuses connections)", os.Getpid(), h.SocketPath())
		if !client.IsDaemonDown(err) || err.Error() != want {
			t.Fatalf("got %v\nwant %q", err, want)
		}
	})

	t.Run("lock held, no socket", func(t *testing.T) {
		h := newHome(t)
		l, err := lockfile.Acquire(h.LockPath(), h.Root)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		_, err = client.New(h).Health(ctx)
		if !client.IsDaemonDown(err) || !strings.Contains(err.Error(), "holds the lock but does not answer") {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("listening but silent", func(t *testing.T) {
		h := newHome(t)
		silentSocket(t, h.SocketPath())
		tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err := client.New(h).Health(tctx)
		// The wait named is what was left of the caller's 100 ms when the
		// call began: 100ms, or a little less on a busy machine.
		want := regexp.MustCompile(`^something holds the socket ` + regexp.QuoteMeta(h.SocketPath()) + ` but does not answer: no reply to GET /health within [0-9]+ms, and no leo daemon holds the lock; ` + regexp.QuoteMeta(client.StartHint) + `$`)
		if !client.IsDaemonDown(err) || !want.MatchString(err.Error()) {
			t.Fatalf("got %v\nwant %s", err, want)
		}
	})

	t.Run("lock held, listening but silent", func(t *testing.T) {
		h := newHome(t)
		silentSocket(t, h.SocketPath())
		l, err := lockfile.Acquire(h.LockPath(), h.Root)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err = client.New(h).List(tctx)
		want := regexp.MustCompile(fmt.Sprintf(`^leo daemon \(pid %d\) holds the socket but does not answer: no reply to GET /agents within [0-9]+ms \(is the process stopped or stuck\?\)$`, os.Getpid()))
		if !client.IsDaemonDown(err) || !want.MatchString(err.Error()) {
			t.Fatalf("got %v\nwant %s", err, want)
		}
	})
}

// silentSocket listens on path and accepts every connection without ever
// answering, as a daemon stopped with SIGSTOP (or stuck) appears.
func silentSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
}

// A call whose caller sets no deadline is still bounded: a read gives up
// after client.ReadTimeout, saying who holds the socket.
func TestReadsAreBoundedWithoutACallerDeadline(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	silentSocket(t, h.SocketPath())
	l, err := lockfile.Acquire(h.LockPath(), h.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	done := make(chan error, 1)
	t0 := time.Now()
	go func() {
		_, err := client.New(h).Get(context.Background(), "bob")
		done <- err
	}()
	select {
	case err := <-done:
		took := time.Since(t0)
		if took < client.ReadTimeout {
			t.Fatalf("gave up after %v, before ReadTimeout %v: %v", took, client.ReadTimeout, err)
		}
		want := fmt.Sprintf("leo daemon (pid %d) holds the socket but does not answer: no reply to GET /agents/bob within 5s", os.Getpid())
		if !client.IsDaemonDown(err) || !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("got %v\nwant prefix %q", err, want)
		}
	case <-time.After(client.ReadTimeout + 20*time.Second):
		t.Fatalf("GET /agents/bob to a silent daemon still waiting after %v", time.Since(t0))
	}
}

// serve runs handler on h's socket for the test.
func serve(t *testing.T, h home.Home, handler http.Handler) {
	t.Helper()
	ln, err := net.Listen("unix", h.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

func TestErrorsAreTypedByCode(t *testing.T) {
	h := newHome(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /agents/{name}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		json.NewEncoder(w).Encode(api.Errorf(api.CodeNotFound, "agent %q not found", r.PathValue("name")))
	})
	mux.HandleFunc("GET /agents/{name}/logs", func(w http.ResponseWriter, r *http.Request) {
		if got := r.URL.Query().Get("lines"); got != "25" {
			http.Error(w, "lines="+got, http.StatusTeapot)
			return
		}
		json.NewEncoder(w).Encode(api.Logs{Agent: r.PathValue("name"), Text: "screen"})
	})
	mux.HandleFunc("POST /agents/{name}/send", func(w http.ResponseWriter, r *http.Request) {
		var req api.SendRequest
		json.NewDecoder(r.Body).Decode(&req)
		json.NewEncoder(w).Encode(api.SendResult{ID: "1", Agent: r.PathValue("name"), Delivery: "queued", Queued: len(req.Message)})
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "<html>proxy error</html>", http.StatusBadGateway)
	})
	serve(t, h, mux)
	c := client.New(h)
	ctx := context.Background()

	_, err := c.Get(ctx, "ghost")
	if !client.IsNotFound(err) || err.Error() != `agent "ghost" not found` {
		t.Fatalf("get: %v", err)
	}
	var e *api.Error
	if !asAPI(err, &e) || e.Code != api.CodeNotFound {
		t.Fatalf("not an *api.Error: %#v", err)
	}
	if l, err := c.Logs(ctx, "a", 25); err != nil || l.Text != "screen" {
		t.Fatalf("logs: %+v %v", l, err)
	}
	if res, err := c.Send(ctx, "a", "four"); err != nil || res.Queued != 4 {
		t.Fatalf("send: %+v %v", res, err)
	}
	_, err = c.Health(ctx)
	if api.CodeOf(err) != api.CodeInternal || !strings.Contains(err.Error(), "502") {
		t.Fatalf("non-API error answer: %v", err)
	}
}

func asAPI(err error, target **api.Error) bool {
	e, ok := err.(*api.Error)
	*target = e
	return ok
}

func TestWaitReadyWaitsForADaemonThatIsStillRestoring(t *testing.T) {
	h := newHome(t)
	calls := 0
	serve(t, h, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		json.NewEncoder(w).Encode(api.Health{PID: 42, Ready: calls >= 3})
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hl, err := client.New(h).WaitReady(ctx, time.Millisecond)
	if err != nil || !hl.Ready || calls != 3 {
		t.Fatalf("WaitReady = %+v, %v after %d calls", hl, err, calls)
	}

	h2 := newHome(t)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel2()
	_, err = client.New(h2).WaitReady(ctx2, 5*time.Millisecond)
	if !client.IsDaemonDown(err) {
		t.Fatalf("WaitReady with no daemon: %v", err)
	}
}

// A name that breaks the name rule never becomes a request: "" would make
// /agents//logs, which a server may clean (and redirect) to the agent named
// "logs"; ".." would climb out of /agents/.
func TestBadAgentNamesNeverReachTheSocket(t *testing.T) {
	h := newHome(t)
	var mu sync.Mutex
	var got []string
	serve(t, h, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.EscapedPath())
		mu.Unlock()
		json.NewEncoder(w).Encode(api.Agent{Name: "logs"})
	}))
	c := client.New(h)
	ctx := context.Background()
	calls := map[string]func(name string) error{
		"get":     func(n string) error { _, err := c.Get(ctx, n); return err },
		"start":   func(n string) error { _, err := c.Start(ctx, n); return err },
		"stop":    func(n string) error { _, err := c.Stop(ctx, n); return err },
		"restart": func(n string) error { _, err := c.Restart(ctx, n); return err },
		"reset":   func(n string) error { _, err := c.Reset(ctx, n); return err },
		"delete":  func(n string) error { return c.Delete(ctx, n) },
		"logs":    func(n string) error { _, err := c.Logs(ctx, n, 5); return err },
		"send":    func(n string) error { _, err := c.Send(ctx, n, "hi"); return err },
		"spawn":   func(n string) error { _, err := c.Spawn(ctx, api.SpawnRequest{Template: "t", Name: n}); return err },
	}
	for _, name := range []string{"", ".", "..", "../health", "a/b", "a%2Fb", "Bob", "-a", "a b", "a?x=1", strings.Repeat("a", 64)} {
		for call, fn := range calls {
			if call == "spawn" && name == "" {
				continue // no name: the daemon picks one
			}
			err := fn(name)
			want := fmt.Sprintf("invalid agent name %q: use 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit", name)
			if !client.IsInvalidArgs(err) || err.Error() != want {
				t.Errorf("%s %q: %v, want invalid_args %q", call, name, err, want)
			}
		}
	}
	if len(got) != 0 {
		t.Fatalf("requests reached the socket: %q", got)
	}
	if _, err := c.Get(ctx, "ok-1"); err != nil {
		t.Fatalf("a valid name: %v", err)
	}
}

// The client never follows a redirect: the answer to the route it asked
// for is the answer, and a redirect is an error that names it.
func TestRedirectsAreNeverFollowed(t *testing.T) {
	h := newHome(t)
	var mu sync.Mutex
	var got []string
	serve(t, h, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/agents/bob/logs" {
			http.Redirect(w, r, "/agents/logs", http.StatusMovedPermanently)
			return
		}
		json.NewEncoder(w).Encode(api.Logs{Agent: "logs", Text: "the wrong agent"})
	}))
	l, err := client.New(h).Logs(context.Background(), "bob", 0)
	if err == nil || !strings.Contains(err.Error(), "301") {
		t.Fatalf("logs through a redirect = %+v, %v; want an error naming the 301", l, err)
	}
	if len(got) != 1 {
		t.Fatalf("requests: %q, want only /agents/bob/logs", got)
	}
}

// A send that reached a silent daemon (SIGSTOPped: its kernel accepts the
// connection) is outcome_unknown, never daemon_down: the daemon may carry
// it out once it runs, and a caller that took daemon_down at its word
// and retried would send it twice (issue 15 item 14). A send that never
// reached one is daemon_down still.
func TestSendWithoutAnAnswerIsOutcomeUnknown(t *testing.T) {
	ctx := context.Background()
	h := newHome(t)
	_, err := client.New(h).SendMessage(ctx, "bob", api.SendRequest{Message: "hi", ID: "k1"})
	if !client.IsDaemonDown(err) {
		t.Fatalf("send with no daemon: %v, want daemon_down", err)
	}
	silentSocket(t, h.SocketPath())
	l, err := lockfile.Acquire(h.LockPath(), h.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	for _, send := range []func(context.Context, *client.Client) error{
		func(ctx context.Context, c *client.Client) error {
			_, err := c.SendMessage(ctx, "bob", api.SendRequest{Message: "hi", ID: "k1"})
			return err
		},
		func(ctx context.Context, c *client.Client) error { _, err := c.Compact(ctx, "bob"); return err },
	} {
		tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := send(tctx, client.New(h))
		cancel()
		want := regexp.MustCompile(fmt.Sprintf(`^POST /agents/bob/(send|compact): the leo daemon \(pid %d\) got the request but no answer within [0-9]+ms .*it may have been carried out`, os.Getpid()))
		if !api.HasCode(err, api.CodeOutcomeUnknown) || !want.MatchString(err.Error()) {
			t.Fatalf("got %v\nwant outcome_unknown matching %s", err, want)
		}
	}
	// Invalid UTF-8 never leaves the client: JSON would have changed it.
	_, err = client.New(h).SendMessage(ctx, "bob", api.SendRequest{Message: "a\xffb"})
	if !client.IsInvalidArgs(err) {
		t.Fatalf("invalid UTF-8: %v, want invalid_args", err)
	}
}

// The client sits below the daemon: it probes the daemon's lock through
// internal/lockfile, and nothing it imports, directly or not, is the
// daemon's package or one under it.
func TestClientImportsNothingOfTheDaemon(t *testing.T) {
	daemon := imports.Module + "/internal/daemon"
	for _, p := range imports.Deps(t, imports.Module+"/internal/client") {
		if imports.Under(p, daemon) {
			t.Errorf("internal/client imports %s", p)
		}
	}
}

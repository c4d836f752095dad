package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/daemon/lockfile"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
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
		want := "leo daemon is not running (no socket at " + h.SocketPath() + ")"
		if !client.IsDaemonDown(err) || err.Error() != want {
			t.Fatalf("got %v, want daemon_down %q", err, want)
		}
	})

	t.Run("stale socket", func(t *testing.T) {
		h := newHome(t)
		deadSocket(t, h.SocketPath())
		_, err := client.New(h).List(ctx)
		if !client.IsDaemonDown(err) || !strings.Contains(err.Error(), "leo daemon is not running (stale socket at "+h.SocketPath()) {
			t.Fatalf("got %v", err)
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
		ln, err := net.Listen("unix", h.SocketPath())
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close() // hold the connection open, never answer
			}
		}()
		tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, err = client.New(h).Health(tctx)
		if !client.IsDaemonDown(err) || !strings.Contains(err.Error(), "did not answer in time") {
			t.Fatalf("got %v", err)
		}
	})
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

func TestAgentNamesArePathEscaped(t *testing.T) {
	h := newHome(t)
	var got string
	serve(t, h, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.URL.EscapedPath()
		json.NewEncoder(w).Encode(api.Agent{})
	}))
	client.New(h).Get(context.Background(), "../health")
	if got != "/agents/..%2Fhealth" {
		t.Fatalf("path on the wire %q", got)
	}
}

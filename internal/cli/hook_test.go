package cli

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// hookSocket serves POST /hooks/turn-end on the socket of a leo home and
// records what it got.
type hookSocket struct {
	mu   sync.Mutex
	got  []api.TurnEndReport
	root string
}

func startHookSocket(t *testing.T, status int) *hookSocket {
	t.Helper()
	root := testutil.ShortTempDir(t, "hk-")
	h := home.Home{Root: root}
	if err := os.MkdirAll(h.StateDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", h.SocketPath())
	if err != nil {
		t.Fatal(err)
	}
	d := &hookSocket{root: root}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/hooks/turn-end" {
			http.NotFound(w, r)
			return
		}
		var rep api.TurnEndReport
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &rep); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		d.mu.Lock()
		d.got = append(d.got, rep)
		d.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":"invalid_args","message":"x"}`))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return d
}

func (d *hookSocket) reports() []api.TurnEndReport {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]api.TurnEndReport(nil), d.got...)
}

// runHook runs `leo hook …` through Run, as a harness would, with stdin.
func runHook(t *testing.T, vars map[string]string, stdin string, args ...string) result {
	t.Helper()
	streams, in, out, errOut := TestStreams()
	in.WriteString(stdin)
	f := NewFactory(streams, func(k string) string { return vars[k] }, "test")
	err := Run(context.Background(), append([]string{"hook", "turn-end"}, args...), f)
	return result{stdout: out.String(), stderr: errOut.String(), code: ExitCodeOf(err), err: err}
}

func TestHookTurnEndPostsThePayload(t *testing.T) {
	d := startHookSocket(t, http.StatusOK)
	vars := map[string]string{"LEO_AGENT": "worker", "LEO_HOME": d.root}
	notify := `{"type":"agent-turn-complete","thread-id":"x","input-messages":["hi"]}`
	stop := `{"hook_event_name":"Stop","session_id":"s"}`
	// codex: the payload is the last argument; claude: stdin.
	for _, r := range []result{
		runHook(t, vars, "", "--harness", "codex", notify),
		runHook(t, vars, stop, "--harness", "claude"),
	} {
		if r.err != nil || r.stdout != "" || r.stderr != "" {
			t.Fatalf("hook: err=%v stdout=%q stderr=%q", r.err, r.stdout, r.stderr)
		}
	}
	got := d.reports()
	if len(got) != 2 ||
		got[0].Agent != "worker" || got[0].Harness != "codex" || string(got[0].Payload) != notify ||
		got[1].Agent != "worker" || got[1].Harness != "claude" || string(got[1].Payload) != stop {
		t.Fatalf("reports %+v", got)
	}
}

// Whatever goes wrong, the hook is quiet and exits 0: the harness must
// never see leo's trouble.
func TestHookTurnEndAlwaysQuiet(t *testing.T) {
	refusing := startHookSocket(t, http.StatusBadRequest)
	for name, c := range map[string]struct {
		vars  map[string]string
		stdin string
		args  []string
	}{
		"daemon refuses":    {map[string]string{"LEO_AGENT": "a", "LEO_HOME": refusing.root}, "{}", []string{"--harness", "claude"}},
		"daemon down":       {map[string]string{"LEO_AGENT": "a", "LEO_HOME": testutil.ShortTempDir(t, "hk-")}, "{}", []string{"--harness", "claude"}},
		"no LEO_AGENT":      {map[string]string{"LEO_HOME": refusing.root}, "{}", []string{"--harness", "claude"}},
		"no harness":        {map[string]string{"LEO_AGENT": "a", "LEO_HOME": refusing.root}, "{}", nil},
		"no home at all":    {map[string]string{"LEO_AGENT": "a"}, "{}", []string{"--harness", "claude"}},
		"unknown flags":     {map[string]string{"LEO_AGENT": "a", "LEO_HOME": refusing.root}, "", []string{"--harness", "codex", "--future-flag", "{}"}},
		"empty payload":     {map[string]string{"LEO_AGENT": "a", "LEO_HOME": refusing.root}, "", []string{"--harness", "claude"}},
		"control bytes arg": {map[string]string{"LEO_AGENT": "a", "LEO_HOME": refusing.root}, "", []string{"--harness", "codex", "\x1b[2J\x00"}},
	} {
		r := runHook(t, c.vars, c.stdin, c.args...)
		if r.err != nil || r.code != 0 || r.stdout != "" || r.stderr != "" {
			t.Errorf("%s: err=%v code=%d stdout=%q stderr=%q", name, r.err, r.code, r.stdout, r.stderr)
		}
	}
	// What reached the refusing daemon: only the runs that had an agent,
	// a harness and a payload.
	if n := len(refusing.reports()); n != 2 {
		t.Fatalf("the refusing daemon got %d reports, want 2 (daemon refuses, control bytes)", n)
	}
}

// A stdin nobody closes, or one larger than the bound, is given up on.
func TestHookTurnEndBoundedStdin(t *testing.T) {
	var posted []api.TurnEndReport
	post := func(_ context.Context, _ home.Home, r api.TurnEndReport) error {
		posted = append(posted, r)
		return nil
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	opts := &hookTurnEndOptions{
		IO: &IOStreams{In: pr}, Getenv: func(k string) string { return map[string]string{"LEO_AGENT": "a", "LEO_HOME": "/x"}[k] },
		Harness: "claude", Post: post, ReadTimeout: 50 * time.Millisecond,
	}
	start := time.Now()
	runHookTurnEnd(context.Background(), opts)
	if time.Since(start) > 5*time.Second || len(posted) != 0 {
		t.Fatalf("an open stdin: took %v, posted %d", time.Since(start), len(posted))
	}
	opts.IO.In = strings.NewReader(strings.Repeat("x", hookMaxPayload+1))
	runHookTurnEnd(context.Background(), opts)
	if len(posted) != 0 {
		t.Fatal("an oversized payload was posted")
	}
	opts.IO.In = strings.NewReader(`{"ok":1}`)
	runHookTurnEnd(context.Background(), opts)
	if len(posted) != 1 || string(posted[0].Payload) != `{"ok":1}` {
		t.Fatalf("posted %+v", posted)
	}
}

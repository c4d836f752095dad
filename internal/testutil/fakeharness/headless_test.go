package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/testutil"
)

// runHeadless runs a fake with stdin closed, as leo's task runner does.
func runHeadless(t *testing.T, home map[string]string, dir string, env map[string]string, role string, args ...string) (events []map[string]any, stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(filepath.Join(testutil.FakeHarnessDir(t), role), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FAKE_TURN_MS=5")
	for k, v := range home {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(out.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			events = append(events, m)
		}
	}
	return events, out.String(), errb.String(), code
}

func types(evs []map[string]any) string {
	var ts []string
	for _, e := range evs {
		ts = append(ts, e["type"].(string))
	}
	return strings.Join(ts, ",")
}

func TestHeadlessClaude(t *testing.T) {
	home, dir := testutil.FakeHome(t), t.TempDir()
	evs, _, _, code := runHeadless(t, home, dir, nil, "claude", "-p", "do it", "--output-format", "stream-json", "--verbose", "--max-turns", "3")
	if code != 0 || types(evs) != "system,assistant,result" {
		t.Fatalf("exit %d, events %s", code, types(evs))
	}
	res := evs[2]
	if res["subtype"] != "success" || res["is_error"] != false || res["result"] != "echo: do it" || res["session_id"] != evs[0]["session_id"] {
		t.Fatalf("result %v", res)
	}
	// The run left a transcript that --resume accepts.
	id := res["session_id"].(string)
	evs, _, _, code = runHeadless(t, home, dir, nil, "claude", "-p", "again", "--output-format", "stream-json", "--verbose", "--resume", id)
	if code != 0 || evs[len(evs)-1]["session_id"] != id {
		t.Fatalf("resume: exit %d %v", code, evs)
	}

	_, _, stderr, code := runHeadless(t, home, dir, nil, "claude", "-p", "x", "--output-format", "stream-json")
	if code != 1 || !strings.Contains(stderr, "When using --print, --output-format=stream-json requires --verbose") {
		t.Fatalf("without --verbose: %d %q", code, stderr)
	}
	for sc, want := range map[string]struct {
		code  int
		isErr bool
		sub   string
	}{
		"error_as_success":   {0, true, "success"},
		"not_logged_in":      {1, true, "success"},
		"turn_failed":        {1, true, "error_during_execution"},
		"stream_error_exit0": {0, true, "error_during_execution"},
		"banner_noise":       {0, false, "success"},
	} {
		evs, stdout, _, code := runHeadless(t, home, dir, map[string]string{"FAKE_SCENARIO": sc}, "claude", "-p", "x", "--output-format", "stream-json", "--verbose")
		last := evs[len(evs)-1]
		if code != want.code || last["type"] != "result" || last["is_error"] != want.isErr || last["subtype"] != want.sub {
			t.Errorf("%s: exit %d, last %v", sc, code, last)
		}
		if sc == "not_logged_in" && last["result"] != "Not logged in · Please run /login" {
			t.Errorf("not_logged_in result %v", last["result"])
		}
		if sc == "banner_noise" && !strings.HasPrefix(stdout, "Claude Code (fake)") {
			t.Errorf("banner_noise: no leading non-JSON line: %q", stdout)
		}
	}
}

func TestHeadlessCodex(t *testing.T) {
	home, dir := testutil.FakeHome(t), t.TempDir()
	evs, _, _, code := runHeadless(t, home, dir, nil, "codex", "exec", "--json", "--skip-git-repo-check", "--model", "m", "-c", "x=1", "hello")
	if code != 0 || types(evs) != "thread.started,turn.started,item.started,item.completed,item.completed,turn.completed" {
		t.Fatalf("exit %d events %s", code, types(evs))
	}
	id := evs[0]["thread_id"].(string)
	if item := evs[4]["item"].(map[string]any); item["text"] != "echo: hello" {
		t.Fatalf("agent message %v", item)
	}
	matches, _ := filepath.Glob(filepath.Join(home["CODEX_HOME"], "sessions", "*", "*", "*", "rollout-*-"+id+".jsonl"))
	if len(matches) != 1 {
		t.Fatalf("rollout of %s: %v", id, matches)
	}
	evs, _, _, code = runHeadless(t, home, dir, nil, "codex", "exec", "--json", "--skip-git-repo-check", "resume", id, "more")
	if code != 0 || evs[0]["thread_id"] != id {
		t.Fatalf("resume: %d %v", code, evs)
	}
	evs, _, _, code = runHeadless(t, home, dir, map[string]string{"FAKE_SCENARIO": "turn_failed"}, "codex", "exec", "--json", "x")
	if code != 1 || types(evs) != "thread.started,turn.started,error,turn.failed" {
		t.Fatalf("turn_failed: %d %s", code, types(evs))
	}
	evs, _, _, code = runHeadless(t, home, dir, map[string]string{"FAKE_SCENARIO": "stream_error_exit0"}, "codex", "exec", "--json", "x")
	if code != 0 || !strings.HasSuffix(types(evs), "error,turn.failed") {
		t.Fatalf("stream_error_exit0: %d %s", code, types(evs))
	}
}

func TestHeadlessOpencode(t *testing.T) {
	home, dir := testutil.FakeHome(t), t.TempDir()
	evs, _, _, code := runHeadless(t, home, t.TempDir(), nil, "opencode", "run", "--format", "json", "--dir", dir, "--model", "p/m", "hello")
	if code != 0 || types(evs) != "step_start,text,step_finish" {
		t.Fatalf("exit %d events %s", code, types(evs))
	}
	id := evs[0]["sessionID"].(string)
	for _, e := range evs {
		if e["sessionID"] != id {
			t.Fatalf("event without the session id: %v", e)
		}
	}
	if evs[1]["part"].(map[string]any)["text"] != "echo: hello" || evs[2]["part"].(map[string]any)["reason"] != "stop" {
		t.Fatalf("events %v", evs)
	}
	_, out, _, code := runHeadless(t, home, dir, nil, "opencode", "session", "list", "--format", "json")
	var list []ocSession
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].ID != id || list[0].Directory != dir {
		t.Fatalf("session list: %d %q", code, out)
	}
	evs, _, _, code = runHeadless(t, home, dir, nil, "opencode", "run", "--format", "json", "-s", id, "again")
	if code != 0 || evs[0]["sessionID"] != id {
		t.Fatalf("continue session: %d %v", code, evs)
	}
	evs, _, _, code = runHeadless(t, home, dir, map[string]string{"FAKE_SCENARIO": "turn_failed"}, "opencode", "run", "--format", "json", "x")
	if code != 1 || types(evs) != "step_start,error" {
		t.Fatalf("turn_failed: %d %s", code, types(evs))
	}
}

func TestHeadlessHangScenario(t *testing.T) {
	for _, tc := range []struct {
		role  string
		args  []string
		first string
	}{
		{"claude", []string{"-p", "x", "--output-format", "stream-json", "--verbose"}, "system"},
		{"codex", []string{"exec", "--json", "x"}, "thread.started"},
		{"opencode", []string{"run", "--format", "json", "x"}, "step_start"},
	} {
		t.Run(tc.role, func(t *testing.T) {
			t.Parallel()
			home := testutil.FakeHome(t)
			cmd := exec.Command(filepath.Join(testutil.FakeHarnessDir(t), tc.role), tc.args...)
			cmd.Dir = t.TempDir()
			cmd.Env = append(os.Environ(), "FAKE_SCENARIO=hang")
			for k, v := range home {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var out lockedBuffer
			cmd.Stdout = &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			testutil.WaitFor(t, 5*time.Second, func() bool { return strings.Contains(out.String(), `"type":"`+tc.first+`"`) }, "the first event")
			select {
			case err := <-done:
				t.Fatalf("hang scenario exited: %v", err)
			case <-time.After(300 * time.Millisecond):
			}
			_ = cmd.Process.Kill()
			<-done
		})
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

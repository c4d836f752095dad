package opencode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// fakeBin links the test binary as opencode into a fresh dir. A -race test
// binary sleeps 1 s at exit by default; the stand-in should not.
func fakeBin(t *testing.T) string {
	t.Helper()
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(dir, "opencode")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func TestDiscoverAndExistsThroughTheExecSeam(t *testing.T) {
	ws := t.TempDir()
	now := time.Now()
	since := now.Add(-time.Minute)
	list := fmt.Sprintf(`[
 {"id":"ses_newest_other_dir","title":"x","updated":%d,"created":%d,"projectId":"p","directory":"/elsewhere"},
 {"id":"ses_mine_new","title":"t","updated":%d,"created":%d,"projectId":"p","directory":%q},
 {"id":"ses_mine_older","title":"t","updated":%d,"created":%d,"projectId":"p","directory":%q},
 {"id":"ses_mine_before_since","title":"t","updated":%d,"created":%d,"projectId":"p","directory":%q}
]`,
		ms(now), ms(now),
		ms(now.Add(-10*time.Second)), ms(now.Add(-20*time.Second)), ws,
		ms(now.Add(-15*time.Second)), ms(now.Add(-15*time.Second)), ws,
		ms(now.Add(-time.Hour)), ms(now.Add(-time.Hour)), ws)
	env := map[string]string{
		"PATH":          fakeBin(t),
		"FAKE_SESSIONS": "banner noise\n" + list,
		"FAKE_WANT_CWD": ws,
	}
	s := Opencode{}.Sessions()
	ctx := context.Background()
	got, err := s.Discover(ctx, harness.SessionQuery{Workspace: ws, Env: env, Since: since})
	if err != nil || got != "ses_mine_new" {
		t.Fatalf("Discover = %q, %v; want ses_mine_new", got, err)
	}
	got, err = s.Discover(ctx, harness.SessionQuery{Workspace: ws, Env: env, Since: now.Add(time.Minute)})
	if err != nil || got != "" {
		t.Fatalf("Discover after every session = %q, %v", got, err)
	}
	// Another agent of the workspace owns the newest: the next one is found.
	got, err = s.Discover(ctx, harness.SessionQuery{Workspace: ws, Env: env, Since: since, Exclude: []string{"ses_mine_new"}})
	if err != nil || got != "ses_mine_older" {
		t.Fatalf("Discover excluding ses_mine_new = %q, %v; want ses_mine_older", got, err)
	}
	for id, want := range map[string]bool{"ses_mine_older": true, "ses_mine_before_since": true, "ses_gone": false, "": false} {
		ok, err := s.Exists(ctx, harness.SessionQuery{Workspace: ws, Env: env}, id)
		if err != nil || ok != want {
			t.Errorf("Exists(%q) = %v, %v; want %v", id, ok, err, want)
		}
	}
	if s.PinsID() || s.NewID() != "" {
		t.Fatal("opencode must not pin ids")
	}
}

func TestDiscoverEmptyAndRFC3339(t *testing.T) {
	ws := t.TempDir()
	s := Opencode{}.Sessions()
	env := map[string]string{"PATH": fakeBin(t), "FAKE_SESSIONS": "[]"}
	if got, err := s.Discover(context.Background(), harness.SessionQuery{Workspace: ws, Env: env}); got != "" || err != nil {
		t.Fatalf("Discover over [] = %q, %v", got, err)
	}
	env["FAKE_SESSIONS"] = ""
	if got, err := s.Discover(context.Background(), harness.SessionQuery{Workspace: ws, Env: env}); got != "" || err != nil {
		t.Fatalf("Discover over no output = %q, %v", got, err)
	}
	now := time.Now().UTC()
	env["FAKE_SESSIONS"] = fmt.Sprintf(`[{"id":"ses_a","updated":%q,"created":"%d","directory":%q}]`, now.Format(time.RFC3339Nano), ms(now), ws)
	if got, err := s.Discover(context.Background(), harness.SessionQuery{Workspace: ws, Env: env, Since: now.Add(-time.Second)}); got != "ses_a" || err != nil {
		t.Fatalf("Discover with RFC 3339 / string times = %q, %v", got, err)
	}
}

func TestSessionListFailuresAreErrors(t *testing.T) {
	ws := t.TempDir()
	s := Opencode{}.Sessions()
	cases := map[string]struct {
		env  map[string]string
		want string
	}{
		"missing binary": {map[string]string{"PATH": t.TempDir()}, "opencode: executable not found"},
		"exit status":    {map[string]string{"PATH": fakeBin(t), "FAKE_FAIL": "database locked"}, "database locked"},
		"bad output":     {map[string]string{"PATH": fakeBin(t), "FAKE_SESSIONS": "[{"}, "unexpected output"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := s.Discover(context.Background(), harness.SessionQuery{Workspace: ws, Env: c.env})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Discover = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestSessionListIsBoundedByTheContext(t *testing.T) {
	ws := t.TempDir()
	env := map[string]string{"PATH": fakeBin(t), "FAKE_HANG": "1"}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Opencode{}.Sessions().Discover(ctx, harness.SessionQuery{Workspace: ws, Env: env})
	if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Fatalf("Discover on a hung opencode = %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Discover returned after %v; the deadline did not stop the process", d)
	}
}

// opencode lists a session under the directory the OS reports, symlinks
// resolved; an agent whose workspace is a link to it still finds it.
func TestDiscoverThroughASymlinkedWorkspace(t *testing.T) {
	real, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	out := fmt.Sprintf(`[{"id":"ses_real","updated":%d,"created":%d,"directory":%q}]`, ms(now), ms(now), real)
	s := sessions{run: func(context.Context, map[string]string, string, ...string) ([]byte, error) { return []byte(out), nil }}
	got, err := s.Discover(context.Background(), harness.SessionQuery{Workspace: link, Since: now.Add(-time.Minute)})
	if err != nil || got != "ses_real" {
		t.Fatalf("Discover via %s = %q, %v; want ses_real", link, got, err)
	}
}

package real

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/realcli"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/harness/codex"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

// TestRealCodexWritableRoots (issue 15 item 9): the real codex, launched
// headless with leo's argv and sandbox workspace-write, in a workspace
// without .agents. The model runs three shell commands in one turn:
//
//  1. write a file outside the workspace and make .agents/skills: both
//     refused — the sandbox is in effect here, and codex cannot make a
//     missing .agents itself (it mounts an empty read-only dir there);
//  2. (the test makes .agents on the host, as a user would) the skill
//     again: written, in the same run — leo listed .agents although it
//     did not exist at launch, and codex checks the roots per command.
//
// Without the listing step 2 is refused too. When codex's sandbox does
// not confine commands on the machine (step 1's outside write lands), the
// test skips: there is nothing to grant.
func TestRealCodexWritableRoots(t *testing.T) {
	if !wanted() {
		t.Skipf("%s is not set: make test-real installs the real CLIs and runs this suite", realcli.BinDirEnv)
	}
	if v := os.Getenv("LEO_REALCLI_HARNESSES"); v != "" && !slices.Contains(strings.Split(v, ","), "codex") {
		t.Skip("codex is not in LEO_REALCLI_HARNESSES")
	}
	bin, err := realcli.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	ms := modelserver.Start(t)
	home := testutil.ShortTempDir(t, "rcw-")
	if err := realcli.Setup("codex", home, ms.URL); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(home, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { realcli.KillUnder(home) })
	env := []string{"PATH=" + testutil.ToolPATH(t, bin), "LANG=C.UTF-8"}
	for k, v := range realcli.Dirs(home) {
		env = append(env, k+"="+v)
	}
	hv, _ := realcli.Env("codex", ms.URL)
	for k, v := range hv {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)

	const marker = "LEO-codex-roots"
	cmd, err := codex.Codex{}.Headless(harness.LaunchSpec{
		Workspace: ws, Prompt: "Write a project skill " + marker + " please",
		Options: harness.Options{"sandbox": "workspace-write"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The test's home and workspace are under /tmp, which workspace-write
	// grants by default: taken out, so "outside the workspace" is.
	argv := slices.Insert(slices.Clone(cmd.Argv), len(cmd.Argv)-1,
		"-c", "sandbox_workspace_write.exclude_slash_tmp=true",
		"-c", "sandbox_workspace_write.exclude_tmpdir_env_var=true")

	outside := filepath.Join(home, "outside-the-workspace")
	skill := ".agents/skills/leo-probe/SKILL.md"
	mkSkill := "mkdir -p " + filepath.Dir(skill) + " && echo probe > " + skill + " && echo SKILL-WRITTEN"
	shell := func(script string) *modelserver.ToolCall {
		in, _ := json.Marshal(map[string]string{"cmd": script})
		return &modelserver.ToolCall{Name: "exec_command", Input: string(in)}
	}
	var mu sync.Mutex
	var results []string
	ms.SetResponder(func(r modelserver.Request) modelserver.Reply {
		if r.Side || len(r.Markers) == 0 {
			return modelserver.DefaultResponder(r)
		}
		mu.Lock()
		defer mu.Unlock()
		results = results[:0]
		for _, res := range r.ToolResults {
			results = append(results, res.Text)
		}
		switch len(r.ToolResults) {
		case 0:
			return modelserver.Reply{ToolCall: shell("touch " + outside + " && echo OUTSIDE-WRITTEN; " + mkSkill)}
		case 1:
			// What a user (or leo's own code, outside the sandbox) would do.
			if err := os.Mkdir(filepath.Join(ws, ".agents"), 0o755); err != nil {
				t.Errorf("mkdir .agents: %v", err)
			}
			return modelserver.Reply{ToolCall: shell(mkSkill)}
		}
		return modelserver.DefaultResponder(r)
	})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, filepath.Join(bin, argv[0]), argv[1:]...)
	c.Dir, c.Env = ws, env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("%q: %v\n%s", argv, err, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 {
		t.Fatalf("want two command results, got %d: %q\n%s", len(results), results, out)
	}
	if _, err := os.Stat(outside); err == nil || strings.Contains(results[0], "OUTSIDE-WRITTEN") {
		t.Skipf("codex's sandbox does not confine commands on this machine (a write outside the workspace landed): %q", results[0])
	}
	if strings.Contains(results[0], "SKILL-WRITTEN") || !strings.Contains(results[0], "Read-only file system") {
		t.Fatalf("before .agents existed: want the skill refused (read-only), got %q", results[0])
	}
	if !strings.Contains(results[1], "SKILL-WRITTEN") {
		t.Fatalf("after .agents was made: the skill was not written (argv %q): %q", argv, results[1])
	}
	if data, err := os.ReadFile(filepath.Join(ws, skill)); err != nil || strings.TrimSpace(string(data)) != "probe" {
		t.Fatalf("%s on the host: %q, %v", skill, data, err)
	}
}

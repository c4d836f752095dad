package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var fullTasks = []string{"daily-briefing", "codex-refactor", "opencode-triage", "inbox"}

// TestRunDryRun pins what leo would launch for each harness, headless and
// (persistent task) interactive, with the MCP bridge wired in.
func TestRunDryRun(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()
	for _, task := range fullTasks {
		t.Run(task, func(t *testing.T) {
			r := e.run("run", task, "--dry-run", "-c", cfg)
			if r.code != ExitOK || r.stderr != "" {
				t.Fatalf("exit %d stderr %q", r.code, r.stderr)
			}
			golden(t, "run_dry_run_"+task, e.normalize(r.stdout))

			r = e.run("run", task, "--dry-run", "-c", cfg, "--json")
			if r.code != ExitOK {
				t.Fatalf("exit %d: %s", r.code, r.stdout)
			}
			golden(t, "run_dry_run_"+task+"_json", e.normalize(r.stdout))
			obj := decodeOne(t, r.stdout)
			want := []string{"task", "scope", "runtime", "launch", "harness", "harness_inherited", "model",
				"model_inherited", "workspace", "dir", "prompt_file", "timeout", "retries", "argv", "env"}
			if task == "inbox" {
				want = append(want, "agent")
			}
			assertKeys(t, "run --dry-run", obj, want...)
			for _, v := range obj["env"].([]any) {
				assertKeys(t, "env entry", v.(map[string]any), "name", "value", "source", "masked")
			}
		})
	}
}

// TestRunDryRunArgvPerHarness checks the parts of each argv that say which
// launch form was built, independent of golden files.
func TestRunDryRunArgvPerHarness(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()
	argvOf := func(task string) (dryRunJSON, string) {
		r := e.run("run", task, "--dry-run", "-c", cfg, "--json")
		var d dryRunJSON
		if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
			t.Fatalf("%s: %v\n%s", task, err, r.stdout)
		}
		return d, strings.Join(d.Argv, " ")
	}
	d, argv := argvOf("daily-briefing")
	mustContain(t, "claude argv", argv, "claude -p Summarise", "--output-format stream-json", "--permission-mode bypassPermissions", "--mcp-config")
	if d.Harness != "claude" || !d.HarnessInherited || d.Model != "sonnet" || !d.ModelInherited {
		t.Errorf("claude task resolved as %+v", d)
	}
	_, argv = argvOf("codex-refactor")
	mustContain(t, "codex argv", argv, "codex exec --json --skip-git-repo-check --model gpt-5.3-codex --sandbox read-only",
		`mcp_servers.leo.default_tools_approval_mode="approve"`)
	d, argv = argvOf("opencode-triage")
	mustContain(t, "opencode argv", argv, "opencode run --format json --dir "+filepath.Join(filepath.Dir(cfg), "workspace"))
	var overlay string
	for _, v := range d.Env {
		if v.Name == "OPENCODE_CONFIG_CONTENT" {
			overlay = v.Value
		}
	}
	mustContain(t, "OPENCODE_CONFIG_CONTENT", overlay, `"permission":{"bash":"ask","edit":"allow"}`, `"mcp":{"leo"`)
	d, argv = argvOf("inbox")
	if d.Launch != "interactive" || d.Agent != "assistant" {
		t.Errorf("persistent task: launch %q agent %q", d.Launch, d.Agent)
	}
	mustContain(t, "interactive argv", argv, "--remote-control", "assistant", "--channels plugin:telegram@claude-plugins-official")
}

// leakyYAML puts its task's own env values where a careless dry run would
// print them: in the environment, in argv (via the prompt and an option) and
// under harmless-looking names.
const leakyYAML = `defaults:
  env:
    SHARED_PASSWORD: ${DEFAULT_SECRET}
tasks:
  claude-task:
    schedule: "0 7 * * *"
    prompt_file: prompts/p.md
    harness_options:
      append_system_prompt: "the key is sk-codex-Secret-43"
    env:
      CODEX_API_KEY: ${CODEX_API_KEY}
      ANTHROPIC_AUTH_TOKEN: ${GLM_API_KEY}
      HARMLESS: plain-Value-44
  codex-task:
    schedule: "0 7 * * *"
    prompt_file: prompts/p.md
    harness: codex
    env:
      CODEX_API_KEY: ${CODEX_API_KEY}
      HARMLESS: plain-Value-44
  opencode-task:
    schedule: "0 7 * * *"
    prompt_file: prompts/p.md
    harness: opencode
    harness_options:
      permission:
        bash:
          "curl -H glm-Secret-Value-42 *": allow
    env:
      ANTHROPIC_AUTH_TOKEN: ${GLM_API_KEY}
      HARMLESS: plain-Value-44
web:
  enabled: true
`

// TestRunDryRunNeverLeaksSecrets fails if any env: value, or the API token,
// reaches the output of a dry run, in either format.
func TestRunDryRunNeverLeaksSecrets(t *testing.T) {
	e := newTestEnv(t)
	for k, v := range fullSecrets {
		e.vars[k] = v
	}
	cfg := e.writeConfig("leaky", leakyYAML, map[string]string{
		"workspace/prompts/p.md": "Use glm-Secret-Value-42 and dflt-Secret-Value-41 and plain-Value-44.\n",
		"state/api.token":        apiToken + "\n",
	})
	for _, task := range []string{"claude-task", "codex-task", "opencode-task"} {
		for _, format := range [][]string{nil, {"--json"}} {
			r := e.run(append([]string{"run", task, "--dry-run", "-c", cfg}, format...)...)
			if r.code != ExitOK {
				t.Fatalf("%s: exit %d: %s %s", task, r.code, r.stdout, r.stderr)
			}
			for _, secret := range allSecrets() {
				if strings.Contains(r.stdout+r.stderr, secret) {
					t.Errorf("%s %v leaked %q:\n%s", task, format, secret, r.stdout)
				}
			}
			mustContain(t, task, r.stdout, "***", "HARMLESS")
		}
	}
	// The masked names are still listed, each flagged as masked.
	r := e.run("run", "claude-task", "--dry-run", "-c", cfg, "--json")
	var d dryRunJSON
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatal(err)
	}
	names := map[string]envVarJSON{}
	for _, v := range d.Env {
		names[v.Name] = v
	}
	for _, n := range []string{"CODEX_API_KEY", "ANTHROPIC_AUTH_TOKEN", "HARMLESS", "SHARED_PASSWORD"} {
		if v, ok := names[n]; !ok || !v.Masked || v.Value != masked || v.Source != "env" {
			t.Errorf("%s = %+v, want masked env entry", n, v)
		}
	}
}

// TestRunDryRunBridgeNeedsToken: web enabled but no readable, non-empty
// token means no MCP bridge (and no error).
func TestRunDryRunBridgeNeedsToken(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()
	token := filepath.Join(filepath.Dir(cfg), "state", "api.token")
	for _, setup := range []func(){
		func() { os.WriteFile(token, []byte("  \n"), 0o600) },
		func() { os.Remove(token) },
	} {
		setup()
		r := e.run("run", "daily-briefing", "--dry-run", "-c", cfg, "--json")
		if r.code != ExitOK {
			t.Fatalf("exit %d: %s", r.code, r.stdout)
		}
		if strings.Contains(r.stdout, "--mcp-config") {
			t.Errorf("bridge wired without a token:\n%s", r.stdout)
		}
	}
}

func TestRunUnknownTask(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()
	r := e.run("run", "nope", "--dry-run", "-c", cfg, "--json")
	obj := assertJSONFailure(t, r, "not_found", ExitError)
	mustContain(t, "message", obj["message"].(string), `task "nope" not found`, "daily-briefing")
}

func TestRunRunDirect(t *testing.T) {
	e := newTestEnv(t)
	cfgPath := e.withFullConfig()
	f := NewFactory(nil, e.getenv, "")
	f.ConfigFlag = cfgPath
	cfg, h, err := f.LoadConfig()
	if err != nil {
		t.Fatal(err)
	}
	io, _, out, _ := TestStreams()
	err = runRun(&RunOptions{IO: io, Config: cfg, Home: h, Executable: "/opt/leo/bin/leo", Task: "codex-refactor", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "stdout", out.String(), `mcp_servers.leo.command="/opt/leo/bin/leo"`, "CODEX_API_KEY=***  (env:)")
}

package cli

// fullYAML holds the examples of docs/configuration/harnesses.md plus one scope of each
// kind the CLI shows: inherited and own harnesses, env secrets at defaults,
// template and task level, a persistent task, and the web UI (so runs get the
// MCP bridge). Relative paths resolve against the config's directory.
const fullYAML = `defaults:
  harness: claude
  model: sonnet
  max_turns: 40
  harness_options:
    permission_mode: default
    allowed_tools: [Read, Grep]
  env:
    LEO_DEFAULT_SECRET: ${DEFAULT_SECRET}

templates:
  assistant:
    workspace: agents
    channels: [plugin:telegram@claude-plugins-official]
    harness_options:
      permission_mode: acceptEdits
      remote_control: true
      agent: leo
      allowed_tools: [Read, Edit, Bash]
      disallowed_tools: [WebFetch]
    idle_suspend_after: 90m
  scout:
    workspace: agents
    env:
      ANTHROPIC_BASE_URL: https://api.z.ai/api/coding/paas/v4
      ANTHROPIC_AUTH_TOKEN: ${GLM_API_KEY}
    notify:
      - webhook: ${NOTIFY_HOOK}
        events: [needs_input, idle]
  codex-coder:
    workspace: agents
    harness: codex
    model: gpt-5.3-codex
    harness_options:
      sandbox: read-only
  opencode-coder:
    workspace: agents
    harness: opencode
    model: anthropic/claude-sonnet-4-5
    queue_max: 3
    harness_options:
      permission:
        bash: ask
        edit: allow

tasks:
  daily-briefing:
    schedule: "0 7 * * *"
    prompt_file: prompts/daily-briefing.md
    harness_options:
      permission_mode: bypassPermissions
    enabled: true
  codex-refactor:
    schedule: "0 3 * * *"
    prompt_file: prompts/codex-refactor.md
    harness: codex
    model: gpt-5.3-codex
    harness_options:
      sandbox: read-only
    env:
      CODEX_API_KEY: ${CODEX_API_KEY}
    enabled: true
  opencode-triage:
    schedule: "0 9 * * *"
    prompt_file: prompts/opencode-triage.md
    harness: opencode
    model: anthropic/claude-sonnet-4-5
    harness_options:
      permission:
        bash: ask
        edit: allow
    env:
      OPENCODE_PLAIN: plain-Value-44
    enabled: true
  inbox:
    runtime: persistent
    template: assistant
    schedule: "*/30 8-18 * * 1-5"
    prompt_file: prompts/inbox.md

web:
  enabled: true

notify:
  - command: [notify-send, --app-name, leo]
    env:
      NTFY_TOKEN: ${NOTIFY_TOKEN}
    events: [needs_input, crash_loop, task_failed]
    timeout: 20s
`

// The secrets of fullYAML, as leo's environment provides them, and the API
// token of its home. None may ever be printed.
var fullSecrets = map[string]string{
	"DEFAULT_SECRET": "dflt-Secret-Value-41",
	"GLM_API_KEY":    "glm-Secret-Value-42",
	"CODEX_API_KEY":  "sk-codex-Secret-43",
	"NOTIFY_HOOK":    "https://hooks.example.com/services/T0/B0/notify-Secret-46",
	"NOTIFY_TOKEN":   "ntfy-Secret-Value-47",
}

const (
	plainEnvValue = "plain-Value-44" // a scope env value with a harmless name: still hidden
	apiToken      = "tok-Secret-Value-45"
)

var fullFiles = map[string]string{
	"workspace/prompts/daily-briefing.md":  "Summarise yesterday's commits in five bullet points.\n",
	"workspace/prompts/codex-refactor.md":  "Split one long function into smaller ones.\n",
	"workspace/prompts/opencode-triage.md": "Triage the newest open issues.\n",
	"workspace/prompts/inbox.md":           "Check the inbox.\n",
	"agents/.keep":                         "",
	"state/api.token":                      apiToken + "\n",
}

// withFullConfig writes fullYAML into the sandbox, puts its secrets in the
// environment and returns the config path.
func (e *testEnv) withFullConfig() string {
	e.t.Helper()
	for k, v := range fullSecrets {
		e.vars[k] = v
	}
	return e.writeConfig("full", fullYAML, fullFiles)
}

// allSecrets are every value that must never appear in output.
func allSecrets() []string {
	out := []string{plainEnvValue, apiToken}
	for _, v := range fullSecrets {
		out = append(out, v)
	}
	return out
}

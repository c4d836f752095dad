// Package bench holds whole-process benchmarks of the leo binary and the
// generator of the large configs they run on.
package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// harnessMix is what each generated scope runs on, round-robin: every
// harness gets a quarter of the scopes, with a model and options valid for it.
var harnessMix = []struct {
	name    string
	model   string
	options string // harness_options block, indented for a scope
}{
	{"claude", "sonnet", "      permission_mode: acceptEdits\n      allowed_tools: [Read, Edit, Bash]\n      disallowed_tools: [WebFetch]\n"},
	{"codex", "gpt-5.3-codex", "      sandbox: workspace-write\n"},
	{"opencode", "anthropic/claude-sonnet-4-5", "      permission:\n        bash: ask\n        edit: allow\n"},
	{"pi", "anthropic/claude-sonnet-4-5", "      thinking: low\n      tools: [read, bash, edit]\n"},
}

// GenerateConfig writes <dir>/leo.yaml with the given number of templates
// and tasks spread across the harnesses, plus every task's prompt file
// under <dir>/workspace/prompts, and returns the config's path.
func GenerateConfig(dir string, templates, tasks int) (string, error) {
	prompts := filepath.Join(dir, "workspace", "prompts")
	if err := os.MkdirAll(prompts, 0o755); err != nil {
		return "", err
	}
	agents := filepath.Join(dir, "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		return "", err
	}

	var b strings.Builder
	b.WriteString("defaults:\n  harness: claude\n  model: sonnet\n  max_turns: 50\n  harness_options:\n    permission_mode: default\n    allowed_tools: [Read, Grep]\n\n")

	b.WriteString("templates:\n")
	for i := range templates {
		h := harnessMix[i%len(harnessMix)]
		fmt.Fprintf(&b, "  tpl-%04d:\n", i)
		fmt.Fprintf(&b, "    workspace: %s\n", agents)
		fmt.Fprintf(&b, "    harness: %s\n", h.name)
		fmt.Fprintf(&b, "    model: %s\n", h.model)
		fmt.Fprintf(&b, "    idle_suspend_after: 30m\n")
		fmt.Fprintf(&b, "    harness_options:\n%s", h.options)
		if h.name == "claude" {
			b.WriteString("    channels: [plugin:telegram@claude-plugins-official]\n")
		}
		fmt.Fprintf(&b, "    env:\n      BENCH_INDEX: \"%d\"\n      API_TOKEN: ${BENCH_TOKEN}\n", i)
	}

	b.WriteString("\ntasks:\n")
	for i := range tasks {
		h := harnessMix[i%len(harnessMix)]
		name := fmt.Sprintf("task-%04d", i)
		prompt := filepath.Join(prompts, name+".md")
		if err := os.WriteFile(prompt, []byte("Summarise what changed since yesterday.\n"), 0o644); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "  %s:\n", name)
		fmt.Fprintf(&b, "    schedule: \"%d %d * * 1-5\"\n", i%60, i%24)
		fmt.Fprintf(&b, "    timezone: Europe/Berlin\n")
		fmt.Fprintf(&b, "    prompt_file: prompts/%s.md\n", name)
		fmt.Fprintf(&b, "    harness: %s\n", h.name)
		fmt.Fprintf(&b, "    model: %s\n", h.model)
		fmt.Fprintf(&b, "    timeout: 20m\n    retries: 1\n    enabled: true\n")
		fmt.Fprintf(&b, "    harness_options:\n%s", h.options)
		fmt.Fprintf(&b, "    env:\n      BENCH_INDEX: \"%d\"\n", i)
	}

	path := filepath.Join(dir, "leo.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

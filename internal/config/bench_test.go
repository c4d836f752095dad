package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// largeConfig is 1,000 templates and 1,000 tasks spread over the three
// harnesses, each task with its own prompt file.
func largeConfig(b *testing.B) (string, func(string) string) {
	b.Helper()
	user := b.TempDir()
	leo := filepath.Join(user, ".leo")
	ws := filepath.Join(leo, "workspace", "prompts")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		b.Fatal(err)
	}
	var y strings.Builder
	y.WriteString("defaults:\n  model: sonnet\n  max_turns: 100\n  harness_options:\n    permission_mode: acceptEdits\n    allowed_tools: [Read, Grep]\ntemplates:\n")
	harnesses := []string{"claude", "codex", "opencode"}
	for i := 0; i < 1000; i++ {
		switch harnesses[i%3] {
		case "claude":
			fmt.Fprintf(&y, "  t%d:\n    workspace: ~/agents/t%d\n    channels: [plugin:telegram@claude-plugins-official]\n    harness_options: {remote_control: true, agent: leo}\n    env: {TOKEN: \"${TOKEN}\"}\n", i, i)
		case "codex":
			fmt.Fprintf(&y, "  t%d:\n    harness: codex\n    model: gpt-5.3-codex\n    harness_options: {sandbox: workspace-write}\n", i)
		default:
			fmt.Fprintf(&y, "  t%d:\n    harness: opencode\n    model: anthropic/claude-sonnet-4-5\n    harness_options: {permission: {bash: ask}}\n    idle_suspend_after: 30m\n", i)
		}
	}
	y.WriteString("tasks:\n")
	for i := 0; i < 1000; i++ {
		if err := os.WriteFile(filepath.Join(ws, fmt.Sprintf("k%d.md", i)), []byte("go\n"), 0o600); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&y, "  k%d:\n    schedule: \"%d %d * * *\"\n    timezone: Europe/Berlin\n    prompt_file: prompts/k%d.md\n    timeout: 10m\n", i, i%60, i%24, i)
		if i%10 == 0 {
			fmt.Fprintf(&y, "    runtime: persistent\n    template: t%d\n", i-i%3)
		} else {
			fmt.Fprintf(&y, "    harness: %s\n", harnesses[i%3])
		}
	}
	path := filepath.Join(leo, "leo.yaml")
	if err := os.WriteFile(path, []byte(y.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	env := map[string]string{"HOME": user, "TOKEN": "x"}
	return path, func(k string) string { return env[k] }
}

// BenchmarkLoadValidateLarge is the config half of `leo validate` on the
// issue's 1,000 + 1,000 config (the whole-process figure is in bench/).
func BenchmarkLoadValidateLarge(b *testing.B) {
	path, getenv := largeConfig(b)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		c, err := Load(path, WithGetenv(getenv))
		if err != nil {
			b.Fatal(err)
		}
		if fs := c.Findings(); len(fs) != 0 {
			b.Fatalf("findings: %v", messages(fs)[:1])
		}
	}
	// CPU time (user+sys, all threads, GC included) is steadier than wall
	// time on a shared machine.
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/validate")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/validate")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

package claude

import (
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The agents source lists the user's and the project's sub-agents by the
// name claude knows them by.
func TestOptionSourceAgents(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, ".claude/agents/reviewer.md"), "---\nname: code-reviewer\ndescription: reviews\n---\nbody\n")
	writeFile(t, filepath.Join(home, ".claude/agents/plain.md"), "no front matter\n")
	writeFile(t, filepath.Join(home, ".claude/agents/quoted.md"), "---\ndescription: x\nname: \"quoted-one\" # c\n---\n")
	writeFile(t, filepath.Join(home, ".claude/agents/notes.txt"), "---\nname: not-an-agent\n---\n")
	writeFile(t, filepath.Join(home, ".claude/agents/bad.md"), "---\nname: \"two words\x1b[31m\"\n---\n")
	writeFile(t, filepath.Join(ws, ".claude/agents/leo.md"), "---\nname: leo\n---\n")
	writeFile(t, filepath.Join(ws, ".claude/agents/dup.md"), "---\nname: code-reviewer\n---\n")
	if err := syscall.Mkfifo(filepath.Join(ws, ".claude/agents/fifo.md"), 0o600); err != nil {
		t.Fatal(err)
	}

	got, ok := Claude{}.OptionSource("agents", harness.SourceQuery{Workspace: ws, Env: map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": ""}})
	if want := []string{"code-reviewer", "leo", "plain", "quoted-one"}; !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("agents = %q, %v; want %q", got, ok, want)
	}

	// CLAUDE_CONFIG_DIR moves the user's agents.
	cfg := t.TempDir()
	writeFile(t, filepath.Join(cfg, "agents/other.md"), "---\nname: other\n---\n")
	got, _ = Claude{}.OptionSource("agents", harness.SourceQuery{Env: map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": cfg}})
	if !reflect.DeepEqual(got, []string{"other"}) {
		t.Fatalf("with CLAUDE_CONFIG_DIR: %q", got)
	}
	if _, ok := (Claude{}).OptionSource("models", harness.SourceQuery{}); ok {
		t.Fatal("an unknown source resolved")
	}
	if hs := harness.ModelSuggestions(Claude{}); !reflect.DeepEqual(hs, ValidModels()) {
		t.Fatalf("model suggestions %q", hs)
	}
}

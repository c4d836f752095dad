package claude

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// sourceAgents is the option source of the agent option: the sub-agents
// claude would find for a scope. claude keeps them as Markdown files with
// YAML front matter in <config dir>/agents/ (the user's, ~/.claude/agents)
// and <workspace>/.claude/agents/ (the project's); --agent takes the
// front matter's name:, and a file without one is known by its file name
// without .md. Plugin and built-in agents are not listed: the input stays
// free text for them.
const sourceAgents = "agents"

// Bounds on what listing agents reads: a directory of thousands of files
// or a huge file must not stall a form.
const (
	maxAgentFiles      = 500
	maxFrontMatterRead = 8 << 10
	maxAgentName       = 100
)

// OptionSource implements harness.OptionSourcer for "agents".
func (Claude) OptionSource(source string, q harness.SourceQuery) ([]string, bool) {
	if source != sourceAgents {
		return nil, false
	}
	var dirs []string
	if harness.Getenv(q.Env, "CLAUDE_CONFIG_DIR") != "" || harness.Getenv(q.Env, "HOME") != "" {
		dirs = append(dirs, filepath.Join(ConfigDir(q.Env), "agents"))
	}
	if q.Workspace != "" {
		dirs = append(dirs, filepath.Join(q.Workspace, ".claude", "agents"))
	}
	var names []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue // no such directory: no agents there
		}
		for i, e := range entries {
			if i >= maxAgentFiles {
				break
			}
			if !strings.HasSuffix(e.Name(), ".md") {
				continue
			}
			if name := agentName(filepath.Join(dir, e.Name())); name != "" {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names), true
}

// agentName is the name of the sub-agent defined in file: its front
// matter's name:, else the file name. A file that is not a regular file
// (a FIFO would block the read) or a name claude could not have is "".
func agentName(file string) string {
	if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	name := strings.TrimSuffix(filepath.Base(file), ".md")
	if f, err := os.Open(file); err == nil {
		if n := frontMatterName(io.LimitReader(f, maxFrontMatterRead)); n != "" {
			name = n
		}
		_ = f.Close()
	}
	if name == "" || len(name) > maxAgentName || strings.IndexFunc(name, func(r rune) bool {
		return unicode.IsControl(r) || unicode.IsSpace(r)
	}) >= 0 {
		return ""
	}
	return name
}

// frontMatterName reads `name:` from a leading --- … --- block.
func frontMatterName(r io.Reader) string {
	sc := bufio.NewScanner(r)
	if !sc.Scan() || strings.TrimSpace(sc.Text()) != "---" {
		return ""
	}
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "---" {
			return ""
		}
		key, value, ok := strings.Cut(line, ":")
		if !ok || key != "name" {
			continue
		}
		value = strings.TrimSpace(value)
		if i := strings.Index(value, " #"); i >= 0 {
			value = strings.TrimSpace(value[:i])
		}
		if len(value) >= 2 && value[0] == '"' {
			if u, err := strconv.Unquote(value); err == nil {
				return u
			}
		}
		if len(value) >= 2 && value[0] == '\'' && value[len(value)-1] == '\'' {
			return strings.ReplaceAll(value[1:len(value)-1], "''", "'")
		}
		return value
	}
	return ""
}

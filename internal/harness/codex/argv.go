package codex

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Interactive builds the resident TUI launch. Fresh:
//
//	codex -a never [--model M] [--sandbox S] [-c override]...
//
// and, continuing a stored thread (flags before the subcommand, which codex
// merges into resume's own):
//
//	codex -a never [--model M] [--sandbox S] [-c override]... resume ID
//
// The approval policy is always "never": nobody is there to approve.
func (Codex) Interactive(spec harness.LaunchSpec) (harness.Command, error) {
	if err := checkSpec(spec); err != nil {
		return harness.Command{}, err
	}
	argv := []string{"codex", "-a", "never"}
	argv = append(argv, commonArgs(spec)...)
	if spec.SessionID != "" {
		argv = append(argv, "resume", spec.SessionID)
	}
	return harness.Command{Argv: argv, Dir: spec.Workspace}, nil
}

// Headless builds a one-shot run:
//
//	codex exec --json --skip-git-repo-check [--model M] [--sandbox S] [-c …] MESSAGE
//	codex exec --json --skip-git-repo-check [--model M] [--sandbox S] [-c …] resume THREAD MESSAGE
//
// max_turns is ignored (codex has no per-turn cap). A message starting with
// "-" is preceded by "--" so it is never parsed as a flag.
func (Codex) Headless(spec harness.LaunchSpec) (harness.Command, error) {
	if err := checkSpec(spec); err != nil {
		return harness.Command{}, err
	}
	if spec.Prompt == "" {
		return harness.Command{}, errors.New("codex: a headless run needs a prompt")
	}
	argv := []string{"codex", "exec", "--json", "--skip-git-repo-check"}
	argv = append(argv, commonArgs(spec)...)
	if spec.SessionID != "" {
		argv = append(argv, "resume", spec.SessionID)
	}
	if strings.HasPrefix(spec.Prompt, "-") {
		argv = append(argv, "--")
	}
	argv = append(argv, spec.Prompt)
	return harness.Command{Argv: argv, Dir: spec.Workspace}, nil
}

// checkSpec rejects what codex cannot do: it has no flag to choose a thread
// id, so a session id only ever means "resume".
func checkSpec(spec harness.LaunchSpec) error {
	if spec.Workspace == "" {
		return errors.New("codex: launch spec has no workspace")
	}
	if spec.SessionID != "" && !spec.Resume {
		return fmt.Errorf("codex: cannot start a new thread with a chosen id (%s); codex ids are discovered after the first turn", spec.SessionID)
	}
	return nil
}

func commonArgs(spec harness.LaunchSpec) []string {
	var argv []string
	if spec.Model != "" {
		argv = append(argv, "--model", spec.Model)
	}
	sandbox := spec.Options.String(optSandbox)
	if sandbox != "" {
		argv = append(argv, "--sandbox", sandbox)
	}
	// On every launch, whatever leo's own sandbox option says: with it unset
	// codex takes the mode from its own config (a trusted project may run
	// workspace-write), and .git must stay writable then too. codex ignores
	// it in the other modes. It replaces any writable_roots of
	// ~/.codex/config.toml (docs/configuration/harnesses.md).
	argv = append(argv, "-c", "sandbox_workspace_write.writable_roots="+tomlArray(writableRoots(spec)))
	if b := spec.Bridge; b != nil {
		argv = append(argv,
			"-c", "mcp_servers.leo.command="+tomlString(b.Command),
			"-c", "mcp_servers.leo.args="+tomlArray(b.Args),
		)
		if env := b.ServerEnv(); len(env) > 0 {
			argv = append(argv, "-c", "mcp_servers.leo.env="+tomlInlineTable(env))
		}
		// Without this, codex cancels every call to leo's tools unattended.
		argv = append(argv, "-c", `mcp_servers.leo.default_tools_approval_mode="approve"`)
		// leo's nudge toward leo_skill, as developer instructions (codex
		// 0.171's config key; it adds to codex's own system prompt, and
		// replaces a developer_instructions of ~/.codex/config.toml).
		argv = append(argv, "-c", "developer_instructions="+tomlString(harness.BridgeNudge))
	}
	return argv
}

// WritableRoots are the paths codex's workspace-write sandbox keeps
// read-only but leo's unattended agents must write: the workspace's .agents
// (project skills), its git dir (index.lock for commits) and git common dir
// (objects and refs; outside the workspace for a linked worktree);
// duplicates collapse.
//
// .agents is listed even when it does not exist yet: codex 0.171 accepts
// such a root, and checks the roots again for every command it runs, so
// the moment .agents exists it is writable, with no relaunch. It cannot
// make .agents itself (its sandbox covers a missing one with an empty
// read-only mount), and leo does not create it in the user's workspace
// (docs/harness-behaviour/codex.md). Git dirs are found on disk, so a
// missing one is left out.
func WritableRoots(workspace string) []string {
	var roots []string
	add := func(p string, mustExist bool) {
		p = filepath.Clean(p)
		if slices.Contains(roots, p) {
			return
		}
		if _, err := os.Stat(p); err == nil || !mustExist {
			roots = append(roots, p)
		}
	}
	add(filepath.Join(workspace, ".agents"), false)
	if gitDir, commonDir, ok := FindGitDirs(workspace); ok {
		add(gitDir, true)
		add(commonDir, true)
	}
	return roots
}

// writableRoots are WritableRoots of the workspace and the directories
// the launch names besides (a worktree's git dirs), once each.
func writableRoots(spec harness.LaunchSpec) []string {
	roots := WritableRoots(spec.Workspace)
	for _, d := range spec.WritableDirs {
		if d = filepath.Clean(d); d != "." && !slices.Contains(roots, d) {
			roots = append(roots, d)
		}
	}
	return roots
}

// FindGitDirs walks up from dir to the first .git and resolves it the way
// git does, without running git: a directory is the git dir; a file
// "gitdir: <path>" (a linked worktree or submodule) points at it. The
// common dir is named by <gitdir>/commondir, else it is the git dir itself.
func FindGitDirs(dir string) (gitDir, commonDir string, ok bool) {
	dir = filepath.Clean(dir)
	for {
		dotGit := filepath.Join(dir, ".git")
		if fi, err := os.Stat(dotGit); err == nil {
			if fi.IsDir() {
				gitDir = dotGit
			} else if gitDir, ok = readGitFile(dotGit); !ok {
				return "", "", false
			}
			commonDir = gitDir
			if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
				if c := strings.TrimSpace(string(data)); c != "" {
					if !filepath.IsAbs(c) {
						c = filepath.Join(gitDir, c)
					}
					commonDir = filepath.Clean(c)
				}
			}
			return filepath.Clean(gitDir), commonDir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "", false
		}
		dir = parent
	}
}

// readGitFile parses a ".git" file ("gitdir: <path>", relative to its dir).
func readGitFile(path string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	target, found := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	target = strings.TrimSpace(target)
	if !found || target == "" {
		return "", false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(path), target)
	}
	return filepath.Clean(target), true
}

// tomlString quotes s as a TOML basic string; -c values are parsed as TOML.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 || r == 0x7f {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func tomlArray(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = tomlString(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// tomlInlineTable renders {KEY = "value", …} with keys sorted.
func tomlInlineTable(m map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, tomlKey(k)+" = "+tomlString(m[k]))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// tomlKey leaves bare keys bare and quotes anything else.
func tomlKey(k string) string {
	if k == "" {
		return `""`
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return tomlString(k)
		}
	}
	return k
}

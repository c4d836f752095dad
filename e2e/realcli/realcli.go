// Package realcli holds what it takes to run the real harness CLIs (claude,
// codex, opencode, pi from npm) against the test model server
// (internal/testutil/modelserver) in an isolated home, with no internet:
// the files each needs in a fresh HOME and the environment it runs with.
// These are test-support facts, observed on the versions in versions.env;
// the adapters in internal/harness know none of them (leo never points a
// user's CLI at another model server).
//
// Per harness (see docs/testing.md for how they were found):
//
//   - claude: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY; ~/.claude.json with
//     hasCompletedOnboarding, a theme and the key's last 20 characters in
//     customApiKeyResponses.approved, else the TUI runs its onboarding, which
//     needs the vendor's servers. CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
//     and DISABLE_AUTOUPDATER keep it off the network otherwise.
//   - codex: a model provider in $CODEX_HOME/config.toml (base_url
//     <server>/v1, wire_api "responses", env_key naming the variable with
//     the key) chosen by model_provider, and a model.
//   - opencode: a provider in $XDG_CONFIG_HOME/opencode/opencode.json (npm
//     @ai-sdk/openai-compatible, baseURL <server>/v1) and "model". Not in
//     OPENCODE_CONFIG_CONTENT: leo sets that variable for its own overlay,
//     which would replace ours. OPENCODE_DISABLE_MODELS_FETCH skips the
//     models.dev fetch (a 25 s timeout offline). On first start in a home
//     it npm-installs @opencode-ai/plugin into its config dir: the npm
//     registry must be reachable.
//   - pi: a provider in ~/.pi/agent/models.json (api "openai-completions",
//     baseUrl <server>/v1, the model; compat without the developer role and
//     reasoning_effort, which the server does not know) and it as the
//     default in settings.json. PI_OFFLINE skips the update check and the
//     fd/ripgrep downloads; PI_TELEMETRY=0 the install ping. No dialog.
//
// Workspace trust is left to leo (the suite checks that leo handles it);
// Trust is for manual runs.
package realcli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// CLI is one real harness CLI: what it takes to install it and to run it
// against the model server in an isolated home. Adding a harness to the
// kit is one entry in CLIs (and its pin in versions.env).
type CLI struct {
	// Name is leo's harness name, also its command.
	Name string
	// Package is its npm package; VersionKey the versions.env key of its
	// pin. install.sh reads the same pairs (its clis table).
	Package, VersionKey string
	// ReadyText is a text the TUI shows once its input box is up, on a
	// fresh session (observed on the pinned version).
	ReadyText string
	// Env is the environment it needs, beyond Dirs, to use the model
	// server at modelURL (http://127.0.0.1:PORT, no /v1).
	Env func(modelURL string) map[string]string
	// Setup writes its files in the isolated home (laid out as d says).
	Setup func(home string, d map[string]string, modelURL string) error
	// Trust marks workspace trusted in home, as leo does before a
	// launch; nil when the CLI asks no trust question.
	Trust func(home, workspace string) error
	// LeoTool is the name the CLI gives leo's MCP tool leo_list_agents in
	// the tool list it sends the model ("" for a CLI without MCP, whose
	// agents run the leo CLI with ShellTool instead).
	LeoTool string
	// ShellTool is the name of its tool that runs a shell command.
	ShellTool string
	// Headless is the argv of a one-shot run of msg printing JSON events.
	Headless func(msg string) []string
	// Records are the files of the CLI's own store that may hold
	// conversation id, under the isolated home's directories d.
	Records func(d map[string]string, id string) []string
}

func glob(parts ...string) []string {
	files, _ := filepath.Glob(filepath.Join(parts...))
	return files
}

// CLIs are the real harness CLIs of the kit, in the order of install.sh's
// folder name.
var CLIs = []CLI{
	{
		Name: "claude", Package: "@anthropic-ai/claude-code", VersionKey: "CLAUDE_CODE_VERSION", ReadyText: "❯",
		LeoTool: "mcp__leo__leo_list_agents", ShellTool: "Bash",
		Env: func(modelURL string) map[string]string {
			return map[string]string{
				"ANTHROPIC_BASE_URL":                       modelURL,
				"ANTHROPIC_API_KEY":                        APIKey,
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
				"DISABLE_AUTOUPDATER":                      "1",
			}
		},
		Setup: func(home string, _ map[string]string, _ string) error {
			return editJSON(filepath.Join(home, ".claude.json"), func(m map[string]any) {
				m["hasCompletedOnboarding"] = true
				m["theme"] = "dark"
				m["customApiKeyResponses"] = map[string]any{"approved": []string{last20(APIKey)}, "rejected": []string{}}
				// Quiet the tips and release notes that would draw over a
				// fresh session.
				m["hasSeenTasksHint"] = true
				m["lastReleaseNotesSeen"] = "99.0.0"
			})
		},
		Trust: func(home, workspace string) error {
			return editJSON(filepath.Join(home, ".claude.json"), func(m map[string]any) {
				projects, _ := m["projects"].(map[string]any)
				if projects == nil {
					projects = map[string]any{}
				}
				p, _ := projects[workspace].(map[string]any)
				if p == nil {
					p = map[string]any{}
				}
				p["hasTrustDialogAccepted"] = true
				projects[workspace] = p
				m["projects"] = projects
			})
		},
		Headless: func(msg string) []string {
			return []string{"claude", "-p", msg, "--output-format", "stream-json", "--verbose"}
		},
		Records: func(d map[string]string, id string) []string {
			return glob(d["HOME"], ".claude", "projects", "*", id+".jsonl")
		},
	},
	{
		Name: "codex", Package: "@openai/codex", VersionKey: "CODEX_VERSION", ReadyText: "Ask Codex to do anything",
		LeoTool: "mcp__leo/leo_list_agents",
		Env:     func(string) map[string]string { return map[string]string{KeyEnv: APIKey} },
		Setup: func(_ string, d map[string]string, modelURL string) error {
			cfg := fmt.Sprintf(`model = %q
model_provider = %q

[model_providers.%s]
name = %q
base_url = %q
wire_api = "responses"
env_key = %q
`, Model, Provider, Provider, Provider, modelURL+"/v1", KeyEnv)
			return appendFile(filepath.Join(d["CODEX_HOME"], "config.toml"), cfg)
		},
		Trust: func(home, workspace string) error {
			return appendFile(filepath.Join(Dirs(home)["CODEX_HOME"], "config.toml"),
				fmt.Sprintf("\n[projects.%q]\ntrust_level = \"trusted\"\n", workspace))
		},
		Headless: func(msg string) []string {
			return []string{"codex", "exec", "--json", "--skip-git-repo-check", msg}
		},
		Records: func(d map[string]string, id string) []string {
			return glob(d["CODEX_HOME"], "sessions", "*", "*", "*", "rollout-*"+id+"*.jsonl")
		},
	},
	{
		Name: "opencode", Package: "opencode-ai", VersionKey: "OPENCODE_VERSION", ReadyText: "Ask anything",
		LeoTool: "leo_leo_list_agents", ShellTool: "bash",
		Env: func(string) map[string]string {
			return map[string]string{
				"OPENCODE_DISABLE_MODELS_FETCH": "1",
				"OPENCODE_DISABLE_AUTOUPDATE":   "1",
			}
		},
		Setup: func(_ string, d map[string]string, modelURL string) error {
			return editJSON(filepath.Join(d["XDG_CONFIG_HOME"], "opencode", "opencode.json"), func(m map[string]any) {
				m["$schema"] = "https://opencode.ai/config.json"
				m["model"] = Provider + "/" + Model
				m["small_model"] = Provider + "/" + Model
				m["autoupdate"] = false
				m["share"] = "disabled"
				m["provider"] = map[string]any{Provider: map[string]any{
					"npm":     "@ai-sdk/openai-compatible",
					"name":    Provider,
					"options": map[string]any{"baseURL": modelURL + "/v1", "apiKey": APIKey},
					"models":  map[string]any{Model: map[string]any{"name": Model}},
				}}
			})
		},
		Headless: func(msg string) []string {
			return []string{"opencode", "run", "--format", "json", msg}
		},
		Records: func(d map[string]string, _ string) []string {
			return glob(d["XDG_DATA_HOME"], "opencode", "opencode.db*")
		},
	},
	{
		// The footer line under pi's editor shows the model's id.
		Name: "pi", Package: "@mariozechner/pi-coding-agent", VersionKey: "PI_VERSION", ReadyText: Model,
		ShellTool: "bash",
		Env: func(string) map[string]string {
			return map[string]string{"PI_OFFLINE": "1", "PI_TELEMETRY": "0"}
		},
		Setup: func(home string, _ map[string]string, modelURL string) error {
			agent := filepath.Join(home, ".pi", "agent")
			if err := editJSON(filepath.Join(agent, "models.json"), func(m map[string]any) {
				providers, _ := m["providers"].(map[string]any)
				if providers == nil {
					providers = map[string]any{}
				}
				providers[Provider] = map[string]any{
					"baseUrl": modelURL + "/v1",
					"api":     "openai-completions",
					"apiKey":  APIKey,
					"compat":  map[string]any{"supportsDeveloperRole": false, "supportsReasoningEffort": false},
					"models":  []any{map[string]any{"id": Model}},
				}
				m["providers"] = providers
			}); err != nil {
				return err
			}
			return editJSON(filepath.Join(agent, "settings.json"), func(m map[string]any) {
				m["defaultProvider"] = Provider
				m["defaultModel"] = Model
				m["enableInstallTelemetry"] = false
			})
		},
		Headless: func(msg string) []string { return []string{"pi", "--mode", "json", msg} },
		Records: func(d map[string]string, id string) []string {
			return glob(d["HOME"], ".pi", "agent", "sessions", "*", "*_"+id+".jsonl")
		},
	},
}

// Harnesses are the real CLIs, by leo's harness names (also their commands).
var Harnesses = func() []string {
	out := make([]string, len(CLIs))
	for i, c := range CLIs {
		out[i] = c.Name
	}
	return out
}()

// ReadyText is each CLI's ReadyText, by name.
var ReadyText = func() map[string]string {
	out := map[string]string{}
	for _, c := range CLIs {
		out[c.Name] = c.ReadyText
	}
	return out
}()

// Lookup is the CLI named h.
func Lookup(h string) (CLI, error) {
	for _, c := range CLIs {
		if c.Name == h {
			return c, nil
		}
	}
	return CLI{}, fmt.Errorf("realcli: unknown harness %q (want one of %s)", h, strings.Join(Harnesses, ", "))
}

const (
	// APIKey is the key every CLI sends the model server. Not a secret: the
	// server accepts anything.
	APIKey = "sk-leo-realcli-test-0123456789abcdef"
	// Provider is the provider name given to codex, opencode and pi.
	Provider = "leotest"
	// Model is the model name the CLIs ask for (the server answers any).
	Model = "leo-test-model"
	// KeyEnv is the variable codex reads the key from (its env_key).
	KeyEnv = "LEOTEST_API_KEY"
)

// Dirs are the per-user directories of an isolated home, as environment
// variables: HOME, CODEX_HOME and the XDG base dirs, all under home.
func Dirs(home string) map[string]string {
	return map[string]string{
		"HOME":            home,
		"CODEX_HOME":      filepath.Join(home, ".codex"),
		"XDG_CONFIG_HOME": filepath.Join(home, ".config"),
		"XDG_DATA_HOME":   filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME":  filepath.Join(home, ".local", "state"),
		"XDG_CACHE_HOME":  filepath.Join(home, ".cache"),
	}
}

// Env is the environment harness h needs, beyond Dirs, to use the model
// server at modelURL (http://127.0.0.1:PORT, no /v1).
func Env(h, modelURL string) (map[string]string, error) {
	c, err := Lookup(h)
	if err != nil {
		return nil, err
	}
	return c.Env(modelURL), nil
}

// AllEnv is Env of every harness merged (the keys do not collide): one
// environment that serves every CLI.
func AllEnv(modelURL string) map[string]string {
	out := map[string]string{}
	for _, c := range CLIs {
		for k, v := range c.Env(modelURL) {
			out[k] = v
		}
	}
	return out
}

// Setup writes the files harness h needs in the isolated home (laid out as
// Dirs says) to use the model server at modelURL without a first-run dialog.
// The home may already hold other harnesses' files; each writes its own.
func Setup(h, home, modelURL string) error {
	c, err := Lookup(h)
	if err != nil {
		return err
	}
	d := Dirs(home)
	for _, dir := range d {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	return c.Setup(home, d, modelURL)
}

// Trust marks workspace as trusted for harness h in home, as leo does
// before a launch — for manual runs outside leo.
func Trust(h, home, workspace string) error {
	c, err := Lookup(h)
	if err != nil || c.Trust == nil {
		return err
	}
	return c.Trust(home, workspace)
}

func last20(s string) string {
	if len(s) <= 20 {
		return s
	}
	return s[len(s)-20:]
}

func editJSON(path string, edit func(map[string]any)) error {
	m := map[string]any{}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("realcli: %s: %w", path, err)
		}
	}
	edit(m)
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o600)
}

func appendFile(path, text string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// BinDirEnv names the variable that points the suite at the installed CLIs:
// a directory holding every CLI of CLIs (npm's node_modules/.bin).
const BinDirEnv = "LEO_REALCLI_BIN"

// BinDir returns the directory of the real CLIs from LEO_REALCLI_BIN, or an
// error saying what is missing: the variable, or a CLI in it.
func BinDir() (string, error) {
	dir := os.Getenv(BinDirEnv)
	if dir == "" {
		return "", fmt.Errorf("%s is not set: run e2e/realcli/install.sh and set it to the directory it prints (make test-real does both)", BinDirEnv)
	}
	var missing []string
	for _, h := range Harnesses {
		if fi, err := os.Stat(filepath.Join(dir, h)); err != nil || fi.IsDir() {
			missing = append(missing, h)
		}
	}
	if len(missing) > 0 {
		return dir, fmt.Errorf("%s=%s: no %s there", BinDirEnv, dir, strings.Join(missing, ", "))
	}
	return dir, nil
}

// Versions reads the pinned versions (KEY=VALUE lines; # comments) from
// the versions.env at path.
func Versions(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("%s:%d: want KEY=VALUE, got %q", path, n, line)
		}
		out[k] = v
	}
	return out, sc.Err()
}

// InstalledVersion asks the CLI at bin for its version (`<cli> --version`)
// and returns its first line: of stdout, or of stderr when stdout is empty
// (pi 0.73.1 prints it there).
func InstalledVersion(bin string) (string, error) {
	cmd := exec.Command(bin, "--version")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bin, err)
	}
	if strings.TrimSpace(string(out)) == "" {
		out = []byte(stderr.String())
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return line, nil
}

// KillUnder SIGKILLs every process whose executable lives under dir or
// whose working directory is in it, and returns their PIDs. codex installs
// its app-server under $CODEX_HOME/packages and starts it as a daemon that
// outlives the TUI (and the tmux server); a CLI whose pane was killed can
// leave its native child behind, still in its workspace. A test's home is
// its own, so what runs from there is the test's and nobody else's. Linux
// only (/proc); elsewhere it does nothing.
func KillUnder(dir string) []int {
	dir = filepath.Clean(dir) + string(filepath.Separator)
	var killed []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		argv0 := ""
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil {
			argv0, _, _ = strings.Cut(string(b), "\x00")
		}
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if strings.HasPrefix(exe, dir) || strings.HasPrefix(argv0, dir) || strings.HasPrefix(cwd+"/", dir) {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed = append(killed, pid)
			}
		}
	}
	return killed
}

// KillTree SIGKILLs pid and every descendant of it (found through /proc's
// parent links), children first seen first. The real TUIs do not all exit on
// the hangup tmux sends (opencode ignores it), and some leave helpers.
func KillTree(pid int) {
	if pid <= 1 {
		return
	}
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// stat: pid (comm) state ppid …; comm may hold spaces and parens.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(f[1]); err == nil {
			children[pp] = append(children[pp], p)
		}
	}
	var walk func(int)
	walk = func(p int) {
		_ = syscall.Kill(p, syscall.SIGSTOP) // no new children while we look
		for _, c := range children[p] {
			walk(c)
		}
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	walk(pid)
}

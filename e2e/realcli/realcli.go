// Package realcli holds what it takes to run the real harness CLIs (claude,
// codex, opencode from npm) against the test model server
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

// Harnesses are the real CLIs, by leo's harness names (also their commands).
var Harnesses = []string{"claude", "codex", "opencode"}

const (
	// APIKey is the key every CLI sends the model server. Not a secret: the
	// server accepts anything.
	APIKey = "sk-leo-realcli-test-0123456789abcdef"
	// Provider is the provider name given to codex and opencode.
	Provider = "leotest"
	// Model is the model name the CLIs ask for (the server answers any).
	Model = "leo-test-model"
	// KeyEnv is the variable codex reads the key from (its env_key).
	KeyEnv = "LEOTEST_API_KEY"
)

// ReadyText is a text each TUI shows once its input box is up, on a fresh
// session (observed on the versions in versions.env).
var ReadyText = map[string]string{
	"claude":   "❯",
	"codex":    "Ask Codex to do anything",
	"opencode": "Ask anything",
}

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
	switch h {
	case "claude":
		return map[string]string{
			"ANTHROPIC_BASE_URL":                       modelURL,
			"ANTHROPIC_API_KEY":                        APIKey,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
			"DISABLE_AUTOUPDATER":                      "1",
		}, nil
	case "codex":
		return map[string]string{KeyEnv: APIKey}, nil
	case "opencode":
		return map[string]string{
			"OPENCODE_DISABLE_MODELS_FETCH": "1",
			"OPENCODE_DISABLE_AUTOUPDATE":   "1",
		}, nil
	}
	return nil, fmt.Errorf("realcli: unknown harness %q (want one of %s)", h, strings.Join(Harnesses, ", "))
}

// AllEnv is Env of every harness merged (the keys do not collide): one
// environment that serves all three CLIs.
func AllEnv(modelURL string) map[string]string {
	out := map[string]string{}
	for _, h := range Harnesses {
		env, _ := Env(h, modelURL)
		for k, v := range env {
			out[k] = v
		}
	}
	return out
}

// Setup writes the files harness h needs in the isolated home (laid out as
// Dirs says) to use the model server at modelURL without a first-run dialog.
// The home may already hold other harnesses' files; each writes its own.
func Setup(h, home, modelURL string) error {
	d := Dirs(home)
	for _, dir := range d {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	switch h {
	case "claude":
		return editJSON(filepath.Join(home, ".claude.json"), func(m map[string]any) {
			m["hasCompletedOnboarding"] = true
			m["theme"] = "dark"
			m["customApiKeyResponses"] = map[string]any{"approved": []string{last20(APIKey)}, "rejected": []string{}}
			// Quiet the tips and release notes that would draw over a
			// fresh session.
			m["hasSeenTasksHint"] = true
			m["lastReleaseNotesSeen"] = "99.0.0"
		})
	case "codex":
		cfg := fmt.Sprintf(`model = %q
model_provider = %q

[model_providers.%s]
name = %q
base_url = %q
wire_api = "responses"
env_key = %q
`, Model, Provider, Provider, Provider, modelURL+"/v1", KeyEnv)
		return appendFile(filepath.Join(d["CODEX_HOME"], "config.toml"), cfg)
	case "opencode":
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
	}
	_, err := Env(h, modelURL)
	return err
}

// Trust marks workspace as trusted for harness h in home, as leo does
// before a launch — for manual runs outside leo.
func Trust(h, home, workspace string) error {
	switch h {
	case "claude":
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
	case "codex":
		return appendFile(filepath.Join(Dirs(home)["CODEX_HOME"], "config.toml"),
			fmt.Sprintf("\n[projects.%q]\ntrust_level = \"trusted\"\n", workspace))
	case "opencode":
		return nil // opencode asks no trust question
	}
	return fmt.Errorf("realcli: unknown harness %q", h)
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
// a directory holding claude, codex and opencode (npm's node_modules/.bin).
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
// and returns its first line.
func InstalledVersion(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", bin, err)
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

package realcli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNPM is an npm on PATH for install.sh: `npm view <pkg>@latest
// version` answers from $FAKE_NPM_LATEST_<n> (n: 1 claude, 2 codex, 3
// opencode, 4 pi), and `npm install` makes each CLI a script that prints the
// version it was installed at, and counts installs in $FAKE_NPM_LOG.
const fakeNPM = `#!/bin/sh
set -e
case "$1" in
view)
	case "$2" in
	@anthropic-ai/claude-code@latest) echo "$FAKE_NPM_LATEST_1" ;;
	@openai/codex@latest) echo "$FAKE_NPM_LATEST_2" ;;
	opencode-ai@latest) echo "$FAKE_NPM_LATEST_3" ;;
	@mariozechner/pi-coding-agent@latest) echo "$FAKE_NPM_LATEST_4" ;;
	*) exit 1 ;;
	esac ;;
install)
	echo install >>"$FAKE_NPM_LOG"
	mkdir -p node_modules/.bin
	for spec in "$@"; do
		case "$spec" in
		@anthropic-ai/claude-code@*) c=claude ;;
		@openai/codex@*) c=codex ;;
		opencode-ai@*) c=opencode ;;
		@mariozechner/pi-coding-agent@*) c=pi ;;
		*) continue ;;
		esac
		printf '#!/bin/sh\necho "%s"\n' "${spec##*@}" >node_modules/.bin/$c
		chmod +x node_modules/.bin/$c
	done ;;
*) exit 1 ;;
esac
`

// TestInstallLatestUsesItsOwnFolder: install.sh --latest installs npm's
// newest into <cache>/latest, never into a pinned folder; a second run
// with nothing newer installs nothing; a newer release reinstalls it; and
// a pinned folder made by the older install.sh (an empty stamp) is still
// taken as installed.
func TestInstallLatestUsesItsOwnFolder(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	tmp := t.TempDir()
	npmDir := filepath.Join(tmp, "npm")
	if err := os.MkdirAll(npmDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(npmDir, "npm"), []byte(fakeNPM), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(tmp, "cache")
	log := filepath.Join(tmp, "npm.log")
	pins, err := Versions("versions.env")
	if err != nil {
		t.Fatal(err)
	}
	var name []string
	for _, c := range CLIs {
		name = append(name, c.Name+"-"+pins[c.VersionKey])
	}
	pinned := filepath.Join(cache, strings.Join(name, "-"))
	install := func(latest []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("bash", append([]string{"install.sh"}, args...)...)
		cmd.Env = append(os.Environ(), "PATH="+npmDir+":"+os.Getenv("PATH"), "LEO_REALCLI_CACHE="+cache, "FAKE_NPM_LOG="+log)
		for i, v := range latest {
			cmd.Env = append(cmd.Env, "FAKE_NPM_LATEST_"+string(rune('1'+i))+"="+v)
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("install.sh %v: %v\n%s", args, err, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}
	installs := func() int {
		data, _ := os.ReadFile(log)
		return strings.Count(string(data), "install")
	}
	version := func(bin, c string) string {
		out, err := exec.Command(filepath.Join(bin, c)).Output()
		if err != nil {
			t.Fatalf("%s/%s: %v", bin, c, err)
		}
		return strings.TrimSpace(string(out))
	}

	v1 := []string{"9.0.0", "9.1.0", "9.2.0", "9.3.0"}
	bin := install(v1, "--latest")
	if want := filepath.Join(cache, "latest", "node_modules", ".bin"); bin != want {
		t.Fatalf("--latest installed into %s, want %s", bin, want)
	}
	if got := version(bin, "claude") + " " + version(bin, "codex") + " " + version(bin, "opencode") + " " + version(bin, "pi"); got != "9.0.0 9.1.0 9.2.0 9.3.0" {
		t.Fatalf("--latest installed %s, want npm's newest", got)
	}
	if _, err := os.Stat(pinned); !os.IsNotExist(err) {
		t.Fatalf("--latest touched the pinned folder %s: %v", pinned, err)
	}
	if install(v1, "--latest"); installs() != 1 {
		t.Fatalf("nothing newer on npm, yet %d installs", installs())
	}
	v2 := []string{"9.0.1", "9.1.0", "9.2.0", "9.3.0"}
	if install(v2, "--latest"); installs() != 2 || version(bin, "claude") != "9.0.1" {
		t.Fatalf("a newer claude on npm: %d installs, claude %s", installs(), version(bin, "claude"))
	}

	// A pinned folder as the older install.sh left it: an empty stamp.
	pbin := filepath.Join(pinned, "node_modules", ".bin")
	if err := os.MkdirAll(pbin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range Harnesses {
		if err := os.WriteFile(filepath.Join(pbin, c), []byte("#!/bin/sh\necho pinned\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(pinned, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := install(nil); got != pbin || installs() != 2 || version(pbin, "claude") != "pinned" {
		t.Fatalf("pinned run: bin %s, %d installs, claude %s: want the existing folder, untouched", got, installs(), version(pbin, "claude"))
	}
}

// TestInstallTableIsCLIs: install.sh installs exactly the CLIs of CLIs,
// with the same packages and versions.env keys, in the same order, and
// versions.env pins each.
func TestInstallTableIsCLIs(t *testing.T) {
	data, err := os.ReadFile("install.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "\nclis=\"")
	table, _, ok2 := strings.Cut(rest, "\"")
	if !ok || !ok2 {
		t.Fatal("install.sh has no clis=\"…\" table")
	}
	var want []string
	pins, err := Versions("versions.env")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range CLIs {
		want = append(want, c.Name+":"+c.Package+":"+c.VersionKey)
		if pins[c.VersionKey] == "" {
			t.Errorf("versions.env pins no %s", c.VersionKey)
		}
	}
	if got := strings.Split(strings.TrimSpace(table), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("install.sh clis:\n%s\nrealcli.CLIs:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
)

// jsonCommands are every command with --json, as argv prefixes that are
// valid apart from what a case adds. A new --json command belongs here.
func jsonCommands(cfg string) map[string][]string {
	return map[string][]string{
		"version":       {"version"},
		"validate":      {"validate", "-c", cfg},
		"template list": {"template", "list", "-c", cfg},
		"template show": {"template", "show", "assistant", "-c", cfg},
		"run --dry-run": {"run", "daily-briefing", "--dry-run", "-c", cfg},
	}
}

// TestJSONRuleBadFlagIsInvalidArgs: a bad flag on any --json command
// answers invalid_args as the only thing on stdout, wherever --json sits
// relative to the bad flag (cobra stops parsing at the bad one).
func TestJSONRuleBadFlagIsInvalidArgs(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()
	for name, argv := range jsonCommands(cfg) {
		for _, tail := range [][]string{{"--json", "--bogus"}, {"--bogus", "--json"}, {"--json=true", "--bogus=3"}} {
			t.Run(name+" "+strings.Join(tail, " "), func(t *testing.T) {
				r := e.run(append(append([]string{}, argv...), tail...)...)
				obj := assertJSONFailure(t, r, "invalid_args", ExitUsage)
				assertKeys(t, "invalid_args failure", obj, "error", "message")
				mustContain(t, "message", obj["message"].(string), "unknown flag: --bogus")
				if r.stderr != "" {
					t.Errorf("stderr should stay empty, got %q", r.stderr)
				}
			})
		}
	}
}

// TestValidateJSONBogusFlag is the literal case.
func TestValidateJSONBogusFlag(t *testing.T) {
	e := newTestEnv(t)
	r := e.run("validate", "--json", "--bogus")
	assertJSONFailure(t, r, "invalid_args", ExitUsage)
	if got := strings.TrimSpace(r.stdout); got != `{"error":"invalid_args","message":"unknown flag: --bogus"}` {
		t.Errorf("stdout = %s", got)
	}
}

// TestJSONRuleBadArgumentsAreInvalidArgs: wrong argument counts are
// invalid_args in JSON too.
func TestJSONRuleBadArgumentsAreInvalidArgs(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()
	cases := [][]string{
		{"template", "show", "--json", "-c", cfg},
		{"template", "show", "a", "b", "--json", "-c", cfg},
		{"template", "list", "extra", "--json", "-c", cfg},
		{"run", "--dry-run", "--json", "-c", cfg},
		{"validate", "extra", "--json", "-c", cfg},
		{"version", "extra", "--json"},
		{"validate", "--json", "-c"}, // flag needs an argument
	}
	for _, argv := range cases {
		t.Run(strings.Join(argv, " "), func(t *testing.T) {
			assertJSONFailure(t, e.run(argv...), "invalid_args", ExitUsage)
		})
	}
}

// TestJSONAfterDoubleDashIsNotAFlag: "--json" after "--" is an argument, so
// the failure is reported as text.
func TestJSONAfterDoubleDashIsNotAFlag(t *testing.T) {
	e := newTestEnv(t)
	r := e.run("validate", "--bogus", "--", "--json")
	if r.code != ExitUsage || r.stdout != "" {
		t.Fatalf("exit %d stdout %q", r.code, r.stdout)
	}
	mustContain(t, "stderr", r.stderr, "leo: unknown flag: --bogus", "Run 'leo validate --help' for usage.")
}

// TestUsageErrorsWithoutJSONGoToStderr: without --json, bad usage is a line
// on stderr, nothing on stdout, exit 2.
func TestUsageErrorsWithoutJSONGoToStderr(t *testing.T) {
	e := newTestEnv(t)
	cases := map[string][]string{
		"unknown command":    {"bogus"},
		"unknown subcommand": {"template", "bogus"},
		"unknown flag":       {"validate", "--bogus"},
		"missing argument":   {"template", "show"},
	}
	for name, argv := range cases {
		t.Run(name, func(t *testing.T) {
			r := e.run(argv...)
			if r.code != ExitUsage {
				t.Errorf("exit %d, want %d", r.code, ExitUsage)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want empty", r.stdout)
			}
			mustContain(t, "stderr", r.stderr, "leo: ", "--help' for usage.")
		})
	}
}

// TestJSONSuccessIsOnlyJSON: every --json command on a good config prints
// one JSON object on stdout and nothing on stderr.
func TestJSONSuccessIsOnlyJSON(t *testing.T) {
	e := newTestEnv(t)
	cfg := e.withFullConfig()
	for name, argv := range jsonCommands(cfg) {
		t.Run(name, func(t *testing.T) {
			r := e.run(append(append([]string{}, argv...), "--json")...)
			if r.code != ExitOK {
				t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
			}
			obj := decodeOne(t, r.stdout)
			if _, failed := obj["error"]; failed {
				t.Errorf("success carries an error field: %s", r.stdout)
			}
			if r.stderr != "" {
				t.Errorf("stderr = %q, want empty", r.stderr)
			}
		})
	}
}

// TestJSONFailureOfEveryCommandOnMissingConfig: a command that needs
// leo.yaml answers config_error in JSON, exit 3, when there is none.
func TestJSONFailureOfEveryCommandOnMissingConfig(t *testing.T) {
	e := newTestEnv(t)
	missing := filepath.Join(e.dir, "nowhere", "leo.yaml")
	for name, argv := range jsonCommands(missing) {
		if name == "version" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			r := e.run(append(append([]string{}, argv...), "--json")...)
			obj := assertJSONFailure(t, r, "config_error", ExitConfig)
			mustContain(t, "message", obj["message"].(string), missing, "does not exist")
		})
	}
}

// TestConfigFlagBeatsLEOHOME: --config/-c names the file; LEO_HOME picks
// the home otherwise; ~/.leo is the default.
func TestConfigFlagBeatsLEOHOME(t *testing.T) {
	e := newTestEnv(t)
	one := e.writeConfig("one", "templates:\n  only-in-one: {workspace: .}\n", nil)
	two := e.writeConfig("two", "templates:\n  only-in-two: {workspace: .}\n", nil)
	def := e.writeConfig("home/.leo", "templates:\n  only-in-default: {workspace: .}\n", nil)
	_ = def

	list := func(args ...string) string {
		t.Helper()
		r := e.run(append([]string{"template", "list", "--json"}, args...)...)
		if r.code != ExitOK {
			t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
		}
		return r.stdout
	}
	mustContain(t, "default home", list(), "only-in-default")
	e.vars["LEO_HOME"] = filepath.Dir(two)
	mustContain(t, "LEO_HOME", list(), "only-in-two")
	mustContain(t, "--config over LEO_HOME", list("--config", one), "only-in-one")
	mustContain(t, "-c over LEO_HOME", list("-c", one), "only-in-one")
}

// TestExitCodeOf pins the one mapping from error codes to exit statuses.
func TestExitCodeOf(t *testing.T) {
	cases := []struct {
		err  error
		want ExitCode
	}{
		{nil, ExitOK},
		{errors.New("boom"), ExitError},
		{api.Errorf(api.CodeInvalidArgs, "x"), ExitUsage},
		{fmt.Errorf("wrapped: %w", api.Errorf(api.CodeInvalidArgs, "x")), ExitUsage},
		{api.Errorf(api.CodeConfigError, "x"), ExitConfig},
		{&validateFailure{}, ExitConfig},
		{api.Errorf(api.CodeDaemonDown, "x"), ExitDaemonDown},
		{api.Errorf(api.CodeNotFound, "x"), ExitError},
		{api.Errorf(api.CodeUnsupported, "x"), ExitError},
		{&config.ValidationError{}, ExitError}, // commands wrap it as config_error
	}
	for _, c := range cases {
		if got := ExitCodeOf(c.err); got != c.want {
			t.Errorf("ExitCodeOf(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	// The documented values themselves are an API.
	if ExitOK != 0 || ExitError != 1 || ExitUsage != 2 || ExitConfig != 3 || ExitDaemonDown != 4 {
		t.Error("documented exit codes changed")
	}
}

// TestUncodedErrorIsInternal: an error without a code is reported as
// internal, in JSON too.
func TestUncodedErrorIsInternal(t *testing.T) {
	io, _, out, _ := TestStreams()
	f := NewFactory(io, func(string) string { return "" }, "")
	root := NewRoot(f)
	cmd, _, err := root.Find([]string{"version"})
	if err != nil {
		t.Fatal(err)
	}
	reportError(io, cmd, true, false, errors.New("disk on fire"))
	obj := decodeOne(t, out.String())
	if obj["error"] != "internal" || obj["message"] != "disk on fire" {
		t.Errorf("got %s", out.String())
	}
}

// TestRegisteredCommandsAreTheCLITree: the commands of overview.md §4 that
// exist so far are all registered once.
func TestRegisteredCommandsAreTheCLITree(t *testing.T) {
	io, _, _, _ := TestStreams()
	root := NewRoot(NewFactory(io, nil, ""))
	seen := map[string]int{}
	for _, c := range root.Commands() {
		seen[c.Name()]++
	}
	for _, name := range []string{"version", "validate", "template", "run", "task"} {
		if seen[name] != 1 {
			t.Errorf("command %q registered %d times", name, seen[name])
		}
	}
}

// TestVersion prints the build's version, as text and as JSON.
func TestVersion(t *testing.T) {
	e := newTestEnv(t)
	r := e.run("version")
	if r.code != ExitOK || !strings.HasPrefix(r.stdout, "leo 1.2.3-test (") {
		t.Errorf("leo version: exit %d, %q", r.code, r.stdout)
	}
	r = e.run("version", "--json")
	obj := decodeOne(t, r.stdout)
	assertKeys(t, "version --json", obj, "version", "go", "os", "arch")
	if obj["version"] != "1.2.3-test" {
		t.Errorf("version = %v", obj["version"])
	}
}

// TestRunVersionDirect drives the run function with fake streams, the way
// every command's tests can.
func TestRunVersionDirect(t *testing.T) {
	io, _, out, _ := TestStreams()
	if err := runVersion(&VersionOptions{IO: io, Version: "v9", JSON: true}); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "stdout", out.String(), `"version":"v9"`)
}

// TestEveryJSONCommandAnswersInvalidArgs walks the whole tree (helper
// files' commands included): every command with --json answers a bad flag
// with the invalid_args object on stdout and exit 2.
func TestEveryJSONCommandAnswersInvalidArgs(t *testing.T) {
	io, _, _, _ := TestStreams()
	root := NewRoot(NewFactory(io, nil, ""))
	var paths [][]string
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		if c.Flags().Lookup("json") != nil {
			paths = append(paths, path)
		}
		for _, sub := range c.Commands() {
			walk(sub, append(append([]string{}, path...), sub.Name()))
		}
	}
	walk(root, nil)
	if len(paths) < 5 {
		t.Fatalf("found only %d --json commands: %v", len(paths), paths)
	}
	e := newTestEnv(t)
	for _, p := range paths {
		t.Run(strings.Join(p, " "), func(t *testing.T) {
			r := e.run(append(append([]string{}, p...), "--json", "--no-such-flag")...)
			obj := assertJSONFailure(t, r, "invalid_args", ExitUsage)
			if strings.Join(p, " ") == "service handover" {
				// The handover's own failure shape (TestServiceHandoverBadCommandLine).
				assertKeys(t, "failure", obj, "ok", "step", "error", "message")
			} else {
				assertKeys(t, "failure", obj, "error", "message")
			}
		})
	}
}

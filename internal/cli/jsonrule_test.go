package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// jsonRuleConfig is the home of the whole-tree test: a template for agents
// and a task that never fires during a test (disabled, and once a year).
const jsonRuleConfig = `defaults:
  harness: claude
templates:
  assistant:
    workspace: ./agents/assistant
tasks:
  nightly:
    schedule: "0 3 1 1 *"
    prompt_file: p.md
    enabled: false
notify:
  - {command: ["true"], events: [needs_input]}
`

// jsonRuleCase is a command line (after the command's path) that succeeds
// in the whole-tree test's home with a daemon running, run in this order.
// mayFail marks a line that cannot succeed there (it is still held to one
// object on stdout, carrying "error" exactly when the exit is non-zero).
type jsonRuleCase struct {
	path    string
	args    []string
	mayFail string
	// lines: a stream, one JSON object per line (leo events); a failure is
	// still one error object.
	lines bool
}

// jsonRuleCases covers every command with --json; TestJSONRuleCoversTheTree
// fails until a new one is added here.
var jsonRuleCases = []jsonRuleCase{
	{path: "version"},
	{path: "validate"},
	{path: "template list"},
	{path: "template ls"},
	{path: "template show", args: []string{"assistant"}},
	{path: "run", args: []string{"nightly", "--dry-run"}},
	{path: "service status"},
	{path: "service reload"},
	{path: "service restart", mayFail: "no service manager has the job here (TestServiceRestartWaitsForTheBusyAgent and the e2e TestServiceRestartThroughSystemctl cover the success)"},
	{path: "service handover", mayFail: "unsupported off macOS, invalid_args without a direction (TestServiceHandoverRoundTrip covers the success)"},
	{path: "status"},
	{path: "pair"},
	{path: "doctor", mayFail: "claude and tmux depend on this machine (TestDoctorJSON covers the success)"},
	{path: "agent spawn", args: []string{"assistant", "--name", "bob"}},
	{path: "agent list"},
	{path: "agent ls"},
	{path: "agent status", args: []string{"bob"}},
	{path: "agent logs", args: []string{"bob"}},
	{path: "agent send", args: []string{"bob", "hello"}},
	{path: "agent message", args: []string{"bob", "no-such-message"}, mayFail: "no message has that id"},
	{path: "agent conversation", args: []string{"bob"}},
	{path: "agent compact", args: []string{"bob"}},
	{path: "agent approve", args: []string{"bob"}, mayFail: "no prompt shows (TestAnswer* in internal/agent cover the success)"},
	{path: "agent deny", args: []string{"bob"}, mayFail: "no prompt shows"},
	{path: "agent answer", args: []string{"bob", "yes"}, mayFail: "no prompt shows"},
	{path: "agent restart", args: []string{"bob"}},
	{path: "agent reset", args: []string{"bob"}},
	{path: "agent stop", args: []string{"bob"}},
	{path: "agent start", args: []string{"bob"}},
	{path: "agent stop", args: []string{"bob"}},
	{path: "agent delete", args: []string{"bob", "--yes"}},
	{path: "agent spawn", args: []string{"assistant", "--name", "bob"}},
	{path: "agent stop", args: []string{"bob"}},
	{path: "agent rm", args: []string{"bob", "--yes"}},
	{path: "task list"},
	{path: "task ls"},
	{path: "task run", args: []string{"nightly", "--dry-run"}},
	{path: "task enable", args: []string{"nightly"}},
	{path: "task disable", args: []string{"nightly"}},
	{path: "task history", args: []string{"nightly"}},
	{path: "task logs", args: []string{"nightly"}, mayFail: "no run has happened (TestTaskLogs covers the success)"},
	{path: "events", lines: true},
	{path: "notify test"},
	{path: "notify list"},
	{path: "notify ls"},
	{path: "web enable"},
	{path: "setup", args: []string{"--defaults"}, mayFail: "a config exists already (TestSetupDefaultsWritesAValidConfigOnce covers the success)"},
}

// cannotFail are --json commands with no failure but a bad command line.
var cannotFail = map[string]bool{"version": true}

// jsonCommandTree walks the whole command tree: every command with a --json
// flag by path (and by the path of each alias), and every command that has
// subcommands.
func jsonCommandTree(t *testing.T) (withJSON map[string]*cobra.Command, groups []*cobra.Command) {
	t.Helper()
	io, _, _, _ := TestStreams()
	root := NewRoot(NewFactory(io, nil, ""))
	withJSON = map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("json") != nil {
			path := strings.TrimPrefix(c.CommandPath(), "leo ")
			withJSON[path] = c
			// An alias is a command line of its own: it follows the rule too.
			for _, alias := range c.Aliases {
				withJSON[strings.TrimSpace(strings.TrimSuffix(path, c.Name())+alias)] = c
			}
		}
		if c.HasSubCommands() {
			groups = append(groups, c)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return withJSON, groups
}

// TestJSONRuleCoversTheTree: every command with --json has a case, and
// every case names such a command.
func TestJSONRuleCoversTheTree(t *testing.T) {
	withJSON, _ := jsonCommandTree(t)
	covered := map[string]bool{}
	for _, c := range jsonRuleCases {
		if withJSON[c.path] == nil {
			t.Errorf("case %q: no command with --json has that path", c.path)
		}
		covered[c.path] = true
	}
	for path := range withJSON {
		if !covered[path] {
			t.Errorf("leo %s has --json but no case in jsonRuleCases", path)
		}
	}
	for _, want := range []string{"status", "pair", "service status", "agent list", "task list", "validate"} {
		if withJSON[want] == nil {
			t.Errorf("leo %s lost its --json flag", want)
		}
	}
}

// TestGroupsTakeNoArguments: a command with subcommands takes no
// arguments of its own, so any word where a subcommand belongs that names
// none is an unknown subcommand (checkSubcommand relies on it).
func TestGroupsTakeNoArguments(t *testing.T) {
	_, groups := jsonCommandTree(t)
	for _, g := range groups {
		if g.Args == nil {
			if g.HasParent() {
				t.Errorf("%s: no Args validator (cobra would accept any word)", g.CommandPath())
			}
			continue
		}
		if err := g.Args(g, []string{"word"}); err == nil {
			t.Errorf("%s accepts an argument of its own", g.CommandPath())
		}
	}
}

// jsonRuleHome is a short LEO_HOME holding jsonRuleConfig and its prompt.
func jsonRuleHome(t *testing.T) (*testEnv, home.Home) {
	t.Helper()
	e := newTestEnv(t)
	root := testutil.ShortTempDir(t, "leo-jr")
	// web enable makes the daemon listen: on a port of the test's own, not
	// the default 8370 (the user's own leo may hold it).
	yaml := jsonRuleConfig + fmt.Sprintf("web:\n  port: %d\n", testutil.FreePort(t))
	for rel, content := range map[string]string{"leo.yaml": yaml, "workspace/p.md": "Do the thing.\n"} {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.vars["LEO_HOME"] = root
	e.vars["PATH"] = os.Getenv("PATH")
	h, err := home.Resolve("", e.getenv)
	if err != nil {
		t.Fatal(err)
	}
	return e, h
}

// TestJSONRuleSuccessOfEveryCommand: with a daemon running, each command
// with --json prints exactly one JSON object on stdout and no "error".
func TestJSONRuleSuccessOfEveryCommand(t *testing.T) {
	e, h := jsonRuleHome(t)
	startFakeDaemon(t, e, h)
	for _, c := range jsonRuleCases {
		argv := append(append(strings.Fields(c.path), c.args...), "--json")
		r := e.run(argv...)
		if c.lines {
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			for _, l := range lines {
				if obj := decodeOne(t, l); obj["error"] != nil || r.code != ExitOK {
					t.Errorf("leo %s: exit %d, line %s", strings.Join(argv, " "), r.code, l)
				}
			}
			continue
		}
		obj := decodeOne(t, r.stdout)
		_, failed := obj["error"]
		if c.mayFail != "" {
			if failed != (r.code != ExitOK) {
				t.Errorf("leo %s: exit %d but error field present=%v: %s", strings.Join(argv, " "), r.code, failed, r.stdout)
			}
			continue
		}
		if r.code != ExitOK || failed {
			t.Errorf("leo %s: exit %d, stdout %s, stderr %q", strings.Join(argv, " "), r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stderr, "{") {
			t.Errorf("leo %s: JSON on stderr: %q", strings.Join(argv, " "), r.stderr)
		}
	}
}

// TestJSONRuleFailureOfEveryCommand: in a home that cannot exist (its
// directory is a file), every command with --json fails with one JSON
// object {"error", "message", …} on stdout and a non-zero exit.
func TestJSONRuleFailureOfEveryCommand(t *testing.T) {
	e := newTestEnv(t)
	file := filepath.Join(testutil.ShortTempDir(t, "leo-jf"), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e.vars["LEO_HOME"] = file
	seen := map[string]bool{}
	for _, c := range jsonRuleCases {
		if cannotFail[c.path] || seen[c.path] {
			continue
		}
		seen[c.path] = true
		t.Run(c.path, func(t *testing.T) {
			argv := append(append(strings.Fields(c.path), c.args...), "--json")
			r := e.run(argv...)
			if r.code == ExitOK {
				t.Fatalf("leo %s succeeded in a home that is a file: %s", strings.Join(argv, " "), r.stdout)
			}
			obj := assertJSONFailure(t, r, string(codeOf(r.err)), r.code)
			if _, ok := obj["message"].(string); !ok {
				t.Errorf("no message: %s", r.stdout)
			}
		})
	}
}

// TestJSONRuleCommandLineMistakesOfEveryCommand: on every command with
// --json, a bad flag, a --json value that is no boolean, a wrong number of
// arguments and an unknown sibling subcommand answer invalid_args as the one object on stdout, exit 2,
// before anything runs (the home here does not even exist).
func TestJSONRuleCommandLineMistakesOfEveryCommand(t *testing.T) {
	withJSON, _ := jsonCommandTree(t)
	e := newTestEnv(t)
	e.vars["LEO_HOME"] = filepath.Join(e.dir, "absent")
	for path, cmd := range withJSON {
		words := strings.Fields(path)
		lines := map[string][]string{
			"bad flag":          append(slices.Clone(words), "--json", "--no-such-flag"),
			"bad flag first":    append(slices.Clone(words), "--no-such-flag", "--json"),
			"flag needs value":  append(slices.Clone(words), "--json", "--config"),
			"json not a bool":   append(slices.Clone(words), "--json", "--json=maybe"),
			"only json=maybe":   append(slices.Clone(words), "--json=maybe"),
			"unknown sibling":   append(slices.Clone(words[:len(words)-1]), "no-such-command", "--json"),
			"bad argument list": append(append(slices.Clone(words), badArgs(t, cmd)...), "--json"),
		}
		for name, argv := range lines {
			t.Run(path+"/"+name, func(t *testing.T) {
				r := e.run(argv...)
				obj := assertJSONFailure(t, r, "invalid_args", ExitUsage)
				if path == "service handover" && name != "unknown sibling" {
					// The handover's own failure shape (TestServiceHandoverBadCommandLine).
					assertKeys(t, "invalid_args", obj, "ok", "step", "error", "message")
				} else {
					assertKeys(t, "invalid_args", obj, "error", "message")
				}
				if r.stderr != "" {
					t.Errorf("stderr = %q, want empty", r.stderr)
				}
			})
		}
	}
	if _, err := os.Stat(filepath.Join(e.dir, "absent")); !os.IsNotExist(err) {
		t.Errorf("a refused command line created the home: %v", err)
	}
}

// badArgs is an argument list cmd's validator refuses.
func badArgs(t *testing.T, cmd *cobra.Command) []string {
	t.Helper()
	for _, cand := range [][]string{{}, strings.Fields("a b c d e f g h i j k l")} {
		if cmd.Args != nil && cmd.Args(cmd, cand) != nil {
			return cand
		}
	}
	t.Fatalf("%s accepts any argument list", cmd.CommandPath())
	return nil
}

// TestUnknownSubcommandWithJSON is the case: a subcommand this leo
// lacks, asked for with --json, is invalid_args in JSON — an app calling a
// newer command on an older leo reads a code, not text — while the same
// line without --json and a bad flag on a command without --json stay text.
func TestUnknownSubcommandWithJSON(t *testing.T) {
	e := newTestEnv(t)
	r := e.run("service", "no-such-verb", "--json")
	obj := assertJSONFailure(t, r, "invalid_args", ExitUsage)
	if obj["message"] != `unknown command "no-such-verb" for "leo service"` {
		t.Errorf("message = %q", obj["message"])
	}
	r = e.run("no-such-command", "--json", "--force")
	obj = assertJSONFailure(t, r, "invalid_args", ExitUsage)
	mustContain(t, "message", obj["message"].(string), `unknown command "no-such-command" for "leo"`)

	r = e.run("service", "no-such-verb")
	if r.code != ExitUsage || r.stdout != "" {
		t.Fatalf("text mode: %+v", r)
	}
	mustContain(t, "stderr", r.stderr, `leo: unknown command "no-such-verb" for "leo service"`, "Run 'leo service --help' for usage.")

	r = e.run("service", "--json")
	if r.code != ExitUsage || r.stdout != "" || !strings.Contains(r.stderr, "leo: unknown flag: --json") {
		t.Fatalf("a command without --json answers in text: %+v", r)
	}
}

// TestUnknownSubcommandSuggests: a near miss names the command meant.
func TestUnknownSubcommandSuggests(t *testing.T) {
	e := newTestEnv(t)
	r := e.run("task", "lsit", "--json")
	obj := assertJSONFailure(t, r, "invalid_args", ExitUsage)
	if obj["message"] != `unknown command "lsit" for "leo task" (did you mean "list"?)` {
		t.Errorf("message = %q", obj["message"])
	}
}

// TestGroupWithUnknownWordIsNotHelp: `leo hook bogus` used to print help
// and exit 0.
func TestGroupWithUnknownWordIsNotHelp(t *testing.T) {
	e := newTestEnv(t)
	r := e.run("hook", "bogus")
	if r.code != ExitUsage || r.stdout != "" {
		t.Fatalf("%+v", r)
	}
	mustContain(t, "stderr", r.stderr, `unknown command "bogus" for "leo hook"`)
}

// TestHelpAndCompletionStillWork: the up-front check knows cobra's own
// commands.
func TestHelpAndCompletionStillWork(t *testing.T) {
	e := newTestEnv(t)
	for _, argv := range [][]string{{"help", "task"}, {"completion", "bash"}, {"task", "list", "--json", "--help"}, {"__complete", "ta"}} {
		r := e.run(argv...)
		if r.code != ExitOK || r.stdout == "" {
			t.Errorf("leo %s: exit %d, stdout %q, stderr %q", strings.Join(argv, " "), r.code, r.stdout, r.stderr)
		}
	}
}

// TestDaemonInvalidArgsHasNoUsageHint: an invalid_args the command met
// while running (the daemon refusing a value) is not a command-line
// mistake, so text mode prints no "Run 'leo … --help'" after it; a real
// command-line mistake still gets it.
func TestDaemonInvalidArgsHasNoUsageHint(t *testing.T) {
	e, h := jsonRuleHome(t)
	fake := startFakeDaemon(t, e, h)
	fake.SpawnErr = func(api.SpawnRequest) error {
		return api.Errorf(api.CodeInvalidArgs, "templates.assistant: refused by the daemon")
	}
	r := e.run("agent", "spawn", "assistant")
	if r.code != ExitUsage {
		t.Fatalf("spawn refused with invalid_args: %+v", r)
	}
	mustContain(t, "stderr", r.stderr, "leo: templates.assistant: refused by the daemon")
	if strings.Contains(r.stderr, "--help' for usage") {
		t.Errorf("usage hint after a daemon's refusal: %q", r.stderr)
	}
	io, _, _, errOut := TestStreams()
	root := NewRoot(NewFactory(io, nil, ""))
	cmd, _, _ := root.Find([]string{"agent", "spawn"})
	err, usage := classify(&runFailure{err: usageErrorf("from the daemon")})
	reportError(io, cmd, false, usage, err)
	if strings.Contains(errOut.String(), "for usage") || !strings.Contains(errOut.String(), "leo: from the daemon") {
		t.Errorf("run-time invalid_args: %q", errOut.String())
	}
	r = e.run("agent", "spawn")
	mustContain(t, "stderr", r.stderr, "Run 'leo agent spawn --help' for usage.")
}

// TestJSONRunHoldsStdoutToOneObject: whatever a command printed before it
// failed is dropped for the failure object; a success that is not one
// object is reported as a bug instead of being passed on.
func TestJSONRunHoldsStdoutToOneObject(t *testing.T) {
	for name, tc := range map[string]struct {
		run      func(cmd *cobra.Command, io *IOStreams) error
		wantCode string
	}{
		"prints then fails": {func(_ *cobra.Command, io *IOStreams) error {
			writeJSON(io.Out, map[string]any{"ok": true})
			return usageErrorf("late failure")
		}, "invalid_args"},
		"two objects": {func(_ *cobra.Command, io *IOStreams) error {
			writeJSON(io.Out, map[string]any{"a": 1})
			return writeJSON(io.Out, map[string]any{"b": 2})
		}, "internal"},
		"nothing": {func(*cobra.Command, *IOStreams) error { return nil }, "internal"},
		"text": {func(_ *cobra.Command, io *IOStreams) error {
			_, err := io.Out.Write([]byte("hello\n"))
			return err
		}, "internal"},
	} {
		t.Run(name, func(t *testing.T) {
			io, _, out, errOut := TestStreams()
			f := NewFactory(io, func(string) string { return "" }, "")
			var asJSON bool
			build := func(f *Factory) *cobra.Command {
				c := &cobra.Command{Use: "probe", Args: cobra.NoArgs, RunE: func(cmd *cobra.Command, _ []string) error {
					return tc.run(cmd, f.IO)
				}}
				addJSONFlag(c, &asJSON)
				return c
			}
			commandBuilders = append(commandBuilders, build)
			defer func() { commandBuilders = commandBuilders[:len(commandBuilders)-1] }()
			err := Run(t.Context(), []string{"probe", "--json"}, f)
			r := result{stdout: out.String(), stderr: errOut.String(), code: ExitCodeOf(err), err: err}
			assertJSONFailure(t, r, tc.wantCode, ExitCodeOf(err))
		})
	}
}

// Package harnesstest is the contract every harness adapter must meet, as
// one suite: Run(t, h). all_test.go runs it over every registered adapter,
// so a new harness is held to it the moment it is registered.
package harnesstest

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// Values that must never leave the scope env for argv.
const (
	secretKey   = "LEO_CONTRACT_SECRET_TOKEN"
	secretValue = "sk-contract-7f3a9c1e-do-not-leak"
	secretKey2  = "ANTHROPIC_AUTH_TOKEN"
	secretVal2  = "tok-contract-2b8d-do-not-leak"
	// bridgeMarker is the leo binary path of the test MCP bridge; its
	// presence in argv or env shows the bridge was wired.
	bridgeMarker = "/opt/leo-contract-bridge/bin/leo"
)

var optionKey = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// Run checks h against the harness contract. Subtests are named after what
// they check. Run sets HOME and the XDG/harness state variables to temporary
// directories, so it must not run in parallel with other tests.
func Run(t *testing.T, h harness.Harness) {
	t.Helper()
	isolate(t)

	t.Run("Registered", func(t *testing.T) { testRegistered(t, h) })
	t.Run("Binary", func(t *testing.T) {
		if b := h.Binary(); b == "" || strings.ContainsAny(b, `/\ `) {
			t.Fatalf("Binary() = %q: want a bare program name looked up on PATH", b)
		}
	})
	t.Run("SupportsSomeKind", func(t *testing.T) {
		kinds := []harness.Kind{harness.KindTask, harness.KindAgent, harness.KindPersistent}
		if !slices.ContainsFunc(kinds, h.SupportsKind) {
			t.Fatal("SupportsKind is false for every kind")
		}
		if h.SupportsKind("no-such-kind") {
			t.Fatal(`SupportsKind("no-such-kind") = true`)
		}
	})
	t.Run("SchemaKeys", func(t *testing.T) { testSchemaKeys(t, h) })
	t.Run("DecodeAcceptsEverySchemaKey", func(t *testing.T) { testDecodeAccepts(t, h) })
	t.Run("DecodeRejectsUnknownKey", func(t *testing.T) { testDecodeUnknown(t, h) })
	t.Run("DecodeRejectsWrongTypes", func(t *testing.T) { testDecodeWrongType(t, h) })
	t.Run("DecodeEmpty", func(t *testing.T) {
		for _, raw := range []map[string]any{nil, {}} {
			if _, err := h.DecodeOptions(raw); err != nil {
				t.Fatalf("DecodeOptions(%v) = %v", raw, err)
			}
		}
	})
	t.Run("EmptyModelValid", func(t *testing.T) {
		if err := h.ValidateModel(""); err != nil {
			t.Fatalf(`ValidateModel("") = %v`, err)
		}
	})
	t.Run("Launch", func(t *testing.T) { testLaunch(t, h) })
	t.Run("EnvNeverInArgv", func(t *testing.T) { testEnvNotInArgv(t, h) })
	t.Run("Bridge", func(t *testing.T) { testBridge(t, h) })
	t.Run("ModelHonored", func(t *testing.T) { testModel(t, h) })
	t.Run("OptionsNotMutated", func(t *testing.T) { testOptionsNotMutated(t, h) })
	t.Run("SessionPolicy", func(t *testing.T) { testSessionPolicy(t, h) })
	t.Run("Screen", func(t *testing.T) { testScreen(t, h) })
	t.Run("Preparer", func(t *testing.T) { testPreparer(t, h) })
	t.Run("PasteTiming", func(t *testing.T) {
		pt, ok := h.(harness.PasteTiming)
		if !ok {
			return
		}
		if d := pt.EnterDelay(); d < 0 || d > time.Second {
			t.Fatalf("EnterDelay() = %v: want between 0 and 1s", d)
		}
	})
	t.Run("TurnLimit", func(t *testing.T) { testTurnLimit(t, h) })
	t.Run("ConcurrentUse", func(t *testing.T) { testConcurrent(t, h) })
}

// isolate points every home-like variable at a temp dir, so nothing an
// adapter reads or writes reaches the real user's files.
func isolate(t *testing.T) {
	root := t.TempDir()
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"} {
		dir := filepath.Join(root, strings.ToLower(k))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Setenv(k, dir)
	}
}

func testRegistered(t *testing.T, h harness.Harness) {
	name := h.Name()
	if name == "" {
		t.Fatal("Name() is empty")
	}
	got, ok := harness.Lookup(name)
	if !ok {
		t.Fatalf("%q is not registered", name)
	}
	if got.Name() != name || reflect.TypeOf(got) != reflect.TypeOf(h) {
		t.Fatalf("Lookup(%q) returned %T named %q", name, got, got.Name())
	}
	names := harness.Names()
	if !sort.StringsAreSorted(names) || !slices.Contains(names, name) {
		t.Fatalf("Names() = %v: want sorted and containing %q", names, name)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("registering a second adapter with the same name did not panic")
		}
	}()
	harness.Register(h)
}

func testSchemaKeys(t *testing.T, h harness.Harness) {
	seen := map[string]bool{}
	for _, f := range h.OptionsSchema() {
		if !optionKey.MatchString(f.Key) {
			t.Errorf("option key %q is not snake_case", f.Key)
		}
		if seen[f.Key] {
			t.Errorf("option key %q listed twice", f.Key)
		}
		seen[f.Key] = true
		if f.Type == harness.OptionEnum && len(f.EnumValues) == 0 {
			t.Errorf("enum option %q has no values", f.Key)
		}
		if f.Type != harness.OptionEnum && len(f.EnumValues) > 0 {
			t.Errorf("non-enum option %q has enum values", f.Key)
		}
		if f.Type.String() == "unknown" {
			t.Errorf("option %q has an unknown type %d", f.Key, f.Type)
		}
		if f.TemplateDefault != nil {
			if !f.TemplateOwn {
				t.Errorf("option %q has a template default but is not template-own", f.Key)
			}
			opts, err := h.DecodeOptions(map[string]any{f.Key: f.TemplateDefault})
			if err != nil || !reflect.DeepEqual(opts[f.Key], f.TemplateDefault) {
				t.Errorf("option %q: template default %#v is not a canonical value the adapter accepts (%v)", f.Key, f.TemplateDefault, err)
			}
		}
	}
	if m := harness.DefaultModel(h); m != "" {
		if err := h.ValidateModel(m); err != nil {
			t.Errorf("the built-in default model %q is refused by ValidateModel: %v", m, err)
		}
	}
	// The schema is the adapter's: a caller editing the slice it got must
	// not change what the next caller sees.
	s := h.OptionsSchema()
	if len(s) > 0 {
		s[0].Key = "mutated"
		if h.OptionsSchema()[0].Key == "mutated" {
			t.Error("OptionsSchema exposes its backing array")
		}
	}
}

// validValue is a value of the YAML shape each option type takes, as
// goccy/go-yaml decodes it, with the canonical decoded value.
func validValue(f harness.OptionField) (raw, canonical any) {
	switch f.Type {
	case harness.OptionBool:
		return false, false
	case harness.OptionEnum:
		v := f.EnumValues[len(f.EnumValues)-1]
		return v, v
	case harness.OptionString, harness.OptionText:
		return "contract value", "contract value"
	case harness.OptionStringList:
		return []any{"A", "B"}, []string{"A", "B"}
	case harness.OptionYAMLMap:
		return map[string]any{"k": map[string]any{"p": "v"}, "n": uint64(2)},
			map[string]any{"k": map[string]any{"p": "v"}, "n": uint64(2)}
	}
	return nil, nil
}

// wrongValue is a value no option of that type accepts.
func wrongValue(f harness.OptionField) any {
	switch f.Type {
	case harness.OptionBool:
		return "true"
	case harness.OptionYAMLMap:
		return []any{"a"}
	case harness.OptionStringList:
		return "A,B"
	}
	return map[string]any{"not": "a string"}
}

func testDecodeAccepts(t *testing.T, h harness.Harness) {
	raw := map[string]any{}
	want := harness.Options{}
	for _, f := range h.OptionsSchema() {
		r, c := validValue(f)
		raw[f.Key], want[f.Key] = r, c
		one, err := h.DecodeOptions(map[string]any{f.Key: r})
		if err != nil {
			t.Errorf("DecodeOptions({%s: %v}) = %v", f.Key, r, err)
			continue
		}
		if !reflect.DeepEqual(one[f.Key], c) {
			t.Errorf("%s decoded as %#v, want %#v", f.Key, one[f.Key], c)
		}
		if f.Type == harness.OptionEnum {
			for _, v := range f.EnumValues {
				if _, err := h.DecodeOptions(map[string]any{f.Key: v}); err != nil {
					t.Errorf("enum %s rejects its own value %q: %v", f.Key, v, err)
				}
			}
		}
	}
	got, err := h.DecodeOptions(raw)
	if err != nil {
		t.Fatalf("DecodeOptions(every key) = %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeOptions(every key)\n got %#v\nwant %#v", got, want)
	}
}

func testDecodeUnknown(t *testing.T, h harness.Harness) {
	var keys []string
	for _, f := range h.OptionsSchema() {
		keys = append(keys, f.Key)
	}
	sort.Strings(keys)
	_, err := h.DecodeOptions(map[string]any{"no_such_option": true})
	want := `unknown option "no_such_option" (valid: ` + strings.Join(keys, ", ") + `)`
	if err == nil || err.Error() != want {
		t.Fatalf("DecodeOptions(unknown key) = %v\nwant %s", err, want)
	}
	var oe harness.OptionErrors
	if !errors.As(err, &oe) || len(oe) != 1 || oe[0].Key != "no_such_option" {
		t.Fatalf("error is not one OptionError for the key: %#v", err)
	}
}

func testDecodeWrongType(t *testing.T, h harness.Harness) {
	for _, f := range h.OptionsSchema() {
		v := wrongValue(f)
		_, err := h.DecodeOptions(map[string]any{f.Key: v})
		if err == nil {
			t.Errorf("DecodeOptions({%s: %#v}) accepted a %s option", f.Key, v, f.Type)
			continue
		}
		if prefix := `option "` + f.Key + `": expected `; !strings.HasPrefix(err.Error(), prefix) {
			t.Errorf("wrong-type error %q does not start with %q", err, prefix)
		}
	}
	for _, f := range h.OptionsSchema() {
		if f.Type != harness.OptionEnum {
			continue
		}
		_, err := h.DecodeOptions(map[string]any{f.Key: "not-a-valid-value"})
		want := `option "` + f.Key + `": invalid value "not-a-valid-value" (valid: ` + strings.Join(f.EnumValues, ", ") + `)`
		if err == nil || err.Error() != want {
			t.Errorf("invalid enum: got %v\nwant %s", err, want)
		}
	}
}

// baseSpec is a launch of a fully optioned scope in a fresh workspace.
func baseSpec(t *testing.T, h harness.Harness) harness.LaunchSpec {
	raw := map[string]any{}
	for _, f := range h.OptionsSchema() {
		raw[f.Key], _ = validValue(f)
	}
	opts, err := h.DecodeOptions(raw)
	if err != nil {
		t.Fatalf("DecodeOptions: %v", err)
	}
	spec := harness.LaunchSpec{
		Name:      "contract",
		Workspace: filepath.Join(t.TempDir(), "workspace"),
		MaxTurns:  7,
		Options:   opts,
		Env:       map[string]string{secretKey: secretValue, secretKey2: secretVal2},
		Prompt:    "contract prompt: say hello",
	}
	if err := os.MkdirAll(spec.Workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	if h.SupportsChannels() {
		spec.Channels = []string{"plugin:contract@example"}
		spec.DevChannels = []string{"server:contract-dev"}
	}
	return spec
}

type launchFunc struct {
	name string
	f    func(harness.LaunchSpec) (harness.Command, error)
}

func launches(h harness.Harness) []launchFunc {
	return []launchFunc{{"Interactive", h.Interactive}, {"Headless", h.Headless}}
}

func build(t *testing.T, l launchFunc, spec harness.LaunchSpec) harness.Command {
	t.Helper()
	cmd, err := l.f(spec)
	if err != nil {
		t.Fatalf("%s: %v", l.name, err)
	}
	return cmd
}

func testLaunch(t *testing.T, h harness.Harness) {
	spec := baseSpec(t, h)
	for _, l := range launches(h) {
		cmd := build(t, l, spec)
		if len(cmd.Argv) == 0 || cmd.Argv[0] != h.Binary() {
			t.Errorf("%s argv[0] = %q, want %q", l.name, first(cmd.Argv), h.Binary())
		}
		if cmd.Dir != spec.Workspace {
			t.Errorf("%s Dir = %q, want the workspace %q", l.name, cmd.Dir, spec.Workspace)
		}
		for k := range cmd.Env {
			if k == "" || strings.ContainsAny(k, "= ") {
				t.Errorf("%s env key %q is not a variable name", l.name, k)
			}
		}
	}
	if cmd := build(t, launchFunc{"Headless", h.Headless}, spec); !slices.Contains(cmd.Argv, spec.Prompt) {
		t.Errorf("Headless argv %q does not carry the prompt as one argument", cmd.Argv)
	}
	if cmd := build(t, launchFunc{"Interactive", h.Interactive}, spec); slices.Contains(cmd.Argv, spec.Prompt) {
		t.Errorf("Interactive argv %q carries the prompt; messages are pasted, not passed", cmd.Argv)
	}
	dash := spec
	dash.Prompt = "--version is what I want to know"
	cmd := build(t, launchFunc{"Headless", h.Headless}, dash)
	i := slices.Index(cmd.Argv, dash.Prompt)
	if i < 1 || cmd.Argv[i-1] != "--" {
		t.Errorf("Headless argv %q: a prompt starting with '-' must follow \"--\"", cmd.Argv)
	}
	noWS := spec
	noWS.Workspace = ""
	for _, l := range launches(h) {
		if _, err := l.f(noWS); err == nil {
			t.Errorf("%s accepted a spec without a workspace", l.name)
		}
	}
}

func testEnvNotInArgv(t *testing.T, h harness.Harness) {
	spec := baseSpec(t, h)
	spec.Bridge = &harness.MCPBridge{Command: bridgeMarker, Args: []string{"mcp-server"}, Env: map[string]string{"LEO_HOME": "/leo-home"}, URL: "http://127.0.0.1:8370"}
	for _, l := range launches(h) {
		cmd := build(t, l, spec)
		for _, a := range cmd.Argv {
			for _, secret := range []string{secretValue, secretVal2} {
				if strings.Contains(a, secret) {
					t.Errorf("%s argv leaks a scope env value: %q", l.name, a)
				}
			}
		}
		for k, v := range cmd.Env {
			for _, secret := range []string{secretValue, secretVal2} {
				if strings.Contains(v, secret) {
					t.Errorf("%s Command.Env[%s] repeats a scope env value", l.name, k)
				}
			}
		}
	}
}

func wired(cmd harness.Command) bool {
	for _, a := range cmd.Argv {
		if strings.Contains(a, bridgeMarker) {
			return true
		}
	}
	for _, v := range cmd.Env {
		if strings.Contains(v, bridgeMarker) {
			return true
		}
	}
	return false
}

func testBridge(t *testing.T, h harness.Harness) {
	spec := baseSpec(t, h)
	for _, l := range launches(h) {
		if cmd := build(t, l, spec); wired(cmd) {
			t.Errorf("%s wires the leo MCP server with Bridge == nil: %q", l.name, cmd.Argv)
		}
		for _, a := range build(t, l, spec).Argv {
			if strings.Contains(a, "mcp_servers.leo") || strings.Contains(a, `"leo"`) {
				t.Errorf("%s mentions a leo MCP server with Bridge == nil: %q", l.name, a)
			}
		}
	}
	spec.Bridge = &harness.MCPBridge{Command: bridgeMarker, Args: []string{"mcp-server"}, Env: map[string]string{"LEO_HOME": "/leo-home"}, URL: "http://127.0.0.1:8370"}
	for _, l := range launches(h) {
		if cmd := build(t, l, spec); !wired(cmd) {
			t.Errorf("%s does not wire the leo MCP server with a Bridge: argv %q env keys %v", l.name, cmd.Argv, slices.Sorted(maps.Keys(cmd.Env)))
		}
	}
}

// modelCandidates are model names of the known harness families; the first
// one an adapter accepts must reach its argv.
var modelCandidates = []string{"sonnet", "gpt-5.3-codex", "anthropic/claude-sonnet-4-5"}

func testModel(t *testing.T, h harness.Harness) {
	spec := baseSpec(t, h)
	for _, m := range modelCandidates {
		if h.ValidateModel(m) != nil {
			continue
		}
		spec.Model = m
		for _, l := range launches(h) {
			if cmd := build(t, l, spec); !slices.Contains(cmd.Argv, m) {
				t.Errorf("%s argv %q does not carry model %q", l.name, cmd.Argv, m)
			}
		}
		spec.Model = ""
		for _, l := range launches(h) {
			if cmd := build(t, l, spec); slices.Contains(cmd.Argv, m) {
				t.Errorf("%s argv %q carries model %q when none is set", l.name, cmd.Argv, m)
			}
		}
		return
	}
}

func testOptionsNotMutated(t *testing.T, h harness.Harness) {
	spec := baseSpec(t, h)
	spec.Bridge = &harness.MCPBridge{Command: bridgeMarker, Args: []string{"mcp-server"}, Env: map[string]string{"LEO_HOME": "/leo-home"}}
	before := deepCopy(spec.Options)
	envBefore := maps.Clone(spec.Env)
	bridgeEnvBefore := maps.Clone(spec.Bridge.Env)
	for _, l := range launches(h) {
		build(t, l, spec)
	}
	if !reflect.DeepEqual(spec.Options, before) {
		t.Errorf("launch builders changed the options: %#v, was %#v", spec.Options, before)
	}
	if !reflect.DeepEqual(spec.Env, envBefore) || !reflect.DeepEqual(spec.Bridge.Env, bridgeEnvBefore) {
		t.Error("launch builders changed the scope or bridge env")
	}
}

func testSessionPolicy(t *testing.T, h harness.Harness) {
	p := h.Sessions()
	if p == nil {
		t.Fatal("Sessions() is nil")
	}
	spec := baseSpec(t, h)
	if p.PinsID() {
		a, b := p.NewID(), p.NewID()
		if a == "" || a == b {
			t.Fatalf("a pinning harness must hand out fresh ids: %q, %q", a, b)
		}
		spec.SessionID = a
		for _, l := range launches(h) {
			if cmd := build(t, l, spec); !slices.Contains(cmd.Argv, a) {
				t.Errorf("%s argv %q does not pin session %q", l.name, cmd.Argv, a)
			}
		}
	} else if id := p.NewID(); id != "" {
		t.Fatalf("a discovering harness returned NewID() = %q", id)
	}

	resume := spec
	resume.SessionID = "contract-session-0001"
	if p.PinsID() {
		resume.SessionID = p.NewID()
	}
	resume.Resume = true
	for _, l := range launches(h) {
		if cmd := build(t, l, resume); !slices.Contains(cmd.Argv, resume.SessionID) {
			t.Errorf("%s argv %q does not resume session %q", l.name, cmd.Argv, resume.SessionID)
		}
	}
	fresh := spec
	fresh.SessionID = ""
	for _, l := range launches(h) {
		cmd := build(t, l, fresh)
		if slices.Contains(cmd.Argv, resume.SessionID) {
			t.Errorf("%s fresh launch mentions a session id: %q", l.name, cmd.Argv)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q := harness.SessionQuery{Workspace: spec.Workspace, Env: map[string]string{"PATH": t.TempDir()}, Since: time.Now()}
	if ok, _ := p.Exists(ctx, q, ""); ok {
		t.Error(`Exists("") = true`)
	}
}

func testScreen(t *testing.T, h harness.Harness) {
	r := h.Screen()
	if r == nil {
		t.Fatal("Screen() is nil")
	}
	for _, capture := range []string{"", "\n\n\n", "   \n  \n"} {
		if s := r.Classify(capture); s.State != harness.ScreenStarting {
			t.Errorf("Classify(%q) = %v, want starting", capture, s.State)
		}
	}
	if r.Landed(harness.Screen{State: harness.ScreenReady}, "hello there") {
		t.Error("Landed reports text in an empty input")
	}
	if !r.Landed(harness.Screen{State: harness.ScreenReady, Input: "hello there"}, "hello there") {
		t.Error("Landed misses the exact text in the input")
	}
	if r.Landed(harness.Screen{State: harness.ScreenReady, Input: "something else"}, "hello there") {
		t.Error("Landed reports other text as landed")
	}
	for _, junk := range []string{"\x1b[31mred\x1b[0m", strings.Repeat("─", 500), "❯\n›\n┃", "\xff\xfe\x00"} {
		_ = r.Classify(junk) // must not panic
	}
}

func testPreparer(t *testing.T, h harness.Harness) {
	p, ok := h.(harness.Preparer)
	if !ok {
		return
	}
	spec := baseSpec(t, h)
	home := os.Getenv("HOME")
	root := filepath.Dir(home)
	spec.Env = map[string]string{}
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR"} {
		spec.Env[k] = os.Getenv(k)
	}
	ctx := context.Background()
	if err := p.Prepare(ctx, spec); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	after1 := snapshot(t, root)
	if err := p.Prepare(ctx, spec); err != nil {
		t.Fatalf("Prepare again: %v", err)
	}
	if after2 := snapshot(t, root); !reflect.DeepEqual(after1, after2) {
		t.Fatalf("Prepare is not idempotent:\nfirst  %v\nsecond %v", after1, after2)
	}
	if ws := snapshot(t, spec.Workspace); len(ws) != 0 {
		t.Errorf("Prepare wrote into the workspace: %v", slices.Sorted(maps.Keys(ws)))
	}
}

// testTurnLimit holds a TurnLimiter to what it says: a headless run with a
// turn limit differs from one without exactly when max_turns is honoured.
func testTurnLimit(t *testing.T, h harness.Harness) {
	tl, ok := h.(harness.TurnLimiter)
	if !ok {
		return
	}
	spec := baseSpec(t, h)
	limited := build(t, launchFunc{"Headless", h.Headless}, spec)
	n := spec.MaxTurns
	spec.MaxTurns = 0
	unlimited := build(t, launchFunc{"Headless", h.Headless}, spec)
	if differs := !reflect.DeepEqual(limited, unlimited); differs != tl.HonorsMaxTurns() {
		t.Fatalf("HonorsMaxTurns() = %v, but the headless run with max_turns %d is %q and without it %q",
			tl.HonorsMaxTurns(), n, limited.Argv, unlimited.Argv)
	}
}

func testConcurrent(t *testing.T, h harness.Harness) {
	spec := baseSpec(t, h)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = h.Interactive(spec)
			_, _ = h.Headless(spec)
			_, _ = h.DecodeOptions(map[string]any{"x": 1})
			_ = h.Screen().Classify("")
		}()
	}
	wg.Wait()
}

// snapshot maps every file under root to its content and mode.
func snapshot(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = info.Mode().String() + " " + string(data)
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

func deepCopy(o harness.Options) harness.Options {
	out := harness.Options{}
	for k, v := range o {
		out[k] = copyValue(v)
	}
	return out
}

func copyValue(v any) any {
	switch x := v.(type) {
	case []string:
		return slices.Clone(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = copyValue(e)
		}
		return out
	}
	return v
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

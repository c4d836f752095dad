package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

const scopeYAML = `# my leo config — keep this comment
defaults:
  harness: claude   # the usual one
  model: sonnet
  harness_options:
    permission_mode: default # be careful
    allowed_tools: [Read, Grep]
  env:
    API_KEY: s3cr3t-value   # a secret
    ZIP: 01234

templates:
  # the assistant
  assistant:
    workspace: ~/.leo/workspace
    harness_options:
      permission_mode: acceptEdits   # edits ok
      remote_control: true    # template-own
      agent: leo
    env:
      TOKEN: abc

  coding:
    model: opus
    workspace: ~/agents   # where code lives

tasks:
  morning:
    schedule: "0 7 * * 1-5"   # weekdays
    prompt_file: p.md
web:
  enabled: true
`

func tryEdit(t *testing.T, h *testHome, scope ScopePath, changes ...FieldChange) error {
	t.Helper()
	return EditScope(h.Path, scope, changes, WithGetenv(h.getenv))
}

func mustEdit(t *testing.T, h *testHome, scope ScopePath, changes ...FieldChange) {
	t.Helper()
	if err := tryEdit(t, h, scope, changes...); err != nil {
		t.Fatalf("EditScope(%s): %v", scope, err)
	}
}

func wantFile(t *testing.T, h *testHome, want string) {
	t.Helper()
	if got := h.read(t); got != want {
		t.Fatalf("leo.yaml:\n%s\nwant:\n%s", got, want)
	}
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("bad case: %q not in the text", old)
	}
	return strings.Replace(s, old, new, 1)
}

// Changing a template's options edits them key by key: the comments of
// unchanged options, every other scope and the env values stay as written.
func TestEditScopeKeepsCommentsOrderAndOtherScopes(t *testing.T) {
	h := editHome(t, scopeYAML)
	mustEdit(t, h, TemplateScope("assistant"),
		SetField("workspace", "~/.leo/workspace"), // unchanged: not rewritten
		SetField("model", "haiku"),                // new key: above the first
		SetField("harness_options", map[string]any{
			"permission_mode": "plan",                   // changed in place, comment kept
			"remote_control":  true,                     // unchanged, comment kept
			"allowed_tools":   []string{"Read", "Edit"}, // new key in the block
			// agent dropped: removed
		}),
	)
	want := replaceOnce(t, scopeYAML, "  assistant:\n    workspace:", "  assistant:\n    model: haiku\n    workspace:")
	want = replaceOnce(t, want, "      permission_mode: acceptEdits   # edits ok\n      remote_control: true    # template-own\n      agent: leo\n",
		"      allowed_tools: [Read, Edit]\n      permission_mode: plan   # edits ok\n      remote_control: true    # template-own\n")
	wantFile(t, h, want)

	c, err := LoadValid(h.Path, WithGetenv(h.getenv))
	if err != nil {
		t.Fatal(err)
	}
	if env := c.Templates["assistant"].Env; env["TOKEN"] != "abc" || c.Defaults.Env["ZIP"] != "01234" {
		t.Errorf("env changed: %v %v", env, c.Defaults.Env)
	}
}

func TestEditScopeDefaultsAndTasks(t *testing.T) {
	h := editHome(t, scopeYAML)
	mustEdit(t, h, DefaultsScope(), SetField("model", "opus"), SetField("max_turns", 50), RemoveField("harness_options"))
	want := replaceOnce(t, scopeYAML, "  model: sonnet\n  harness_options:\n    permission_mode: default # be careful\n    allowed_tools: [Read, Grep]\n",
		"  model: opus\n")
	want = replaceOnce(t, want, "defaults:\n  harness: claude", "defaults:\n  max_turns: 50\n  harness: claude")
	wantFile(t, h, want)

	mustEdit(t, h, TaskScope("morning"), SetField("schedule", "30 6 * * *"), SetField("timezone", "Europe/Berlin"),
		SetField("catch_up", false), SetField("timeout", "1h"))
	want = replaceOnce(t, want, "  morning:\n    schedule: \"0 7 * * 1-5\"   # weekdays\n",
		"  morning:\n    timezone: Europe/Berlin\n    catch_up: false\n    timeout: \"1h\"\n    schedule: \"30 6 * * *\"   # weekdays\n")
	wantFile(t, h, want)
	c, err := LoadValid(h.Path, WithGetenv(h.getenv))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := c.ResolveTask("morning")
	if r.Schedule != "30 6 * * *" || r.Timezone != "Europe/Berlin" || r.CatchUp || r.Timeout.String() != "1h0m0s" {
		t.Errorf("resolved: %+v", r)
	}
}

// An invalid result is refused with the adapter's field-named error, and
// the file stays byte for byte.
func TestEditScopeRefusesAnInvalidResult(t *testing.T) {
	cases := map[string]struct {
		scope   ScopePath
		changes []FieldChange
		want    string
	}{
		"unknown option": {TemplateScope("coding"), []FieldChange{SetField("harness_options", map[string]any{"foo": "x"})},
			`templates.coding.harness_options: unknown option "foo" (valid: agent, allowed_tools, append_system_prompt, bypass_permissions, disallowed_tools, permission_mode, remote_control)`},
		"bad enum": {DefaultsScope(), []FieldChange{SetField("harness_options", map[string]any{"permission_mode": "yolo"})},
			`defaults.harness_options: option "permission_mode": invalid value "yolo"`},
		"claude model": {TemplateScope("coding"), []FieldChange{SetField("model", "gpt-5")},
			`templates.coding.model: invalid model "gpt-5"`},
		"codex option on claude": {TemplateScope("coding"), []FieldChange{SetField("harness", "codex"), SetField("harness_options", map[string]any{"permission_mode": "plan"})},
			`templates.coding.harness_options: unknown option "permission_mode"`},
		"harness": {TaskScope("morning"), []FieldChange{SetField("harness", "nope")},
			`tasks.morning.harness "nope" is not a registered harness (available: ` + availableHarnesses + `)`},
		"cron":                {TaskScope("morning"), []FieldChange{SetField("schedule", "every day")}, `tasks.morning.schedule`},
		"new template's name": {TemplateScope("bad name"), []FieldChange{SetField("model", "opus")}, `invalid template name "bad name"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := editHome(t, scopeYAML)
			before, _ := os.Stat(h.Path)
			err := EditScope(h.Path, tc.scope, tc.changes, WithGetenv(h.getenv), CreateScope())
			var ve *ValidationError
			if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant a *ValidationError with %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Error("the error carries an env value")
			}
			after, _ := os.Stat(h.Path)
			wantFile(t, h, scopeYAML)
			if !after.ModTime().Equal(before.ModTime()) {
				t.Error("the file was rewritten")
			}
		})
	}
}

func TestEditScopeCreatesAScope(t *testing.T) {
	cases := map[string]struct{ yaml, want string }{
		"after the last template": {scopeYAML, replaceOnce(t, scopeYAML, "    workspace: ~/agents   # where code lives\n",
			"    workspace: ~/agents   # where code lives\n  review:\n    harness: codex\n    harness_options:\n      sandbox: read-only\n")},
		"into templates: {}": {"templates: {} # none yet\nweb:\n  enabled: false\n",
			"templates:\n  review:\n    harness: codex\n    harness_options:\n      sandbox: read-only\nweb:\n  enabled: false\n"},
		"under templates: alone": {"templates: # none yet\nweb:\n  enabled: false\n",
			"templates: # none yet\n  review:\n    harness: codex\n    harness_options:\n      sandbox: read-only\nweb:\n  enabled: false\n"},
		"no templates section": {"# only web\nweb:\n    enabled: false",
			"# only web\nweb:\n    enabled: false\ntemplates:\n    review:\n        harness: codex\n        harness_options:\n            sandbox: read-only\n"},
		"empty file": {"", "templates:\n  review:\n    harness: codex\n    harness_options:\n      sandbox: read-only\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := editHome(t, tc.yaml)
			changes := []FieldChange{SetField("harness", "codex"), SetField("model", ""), RemoveField("workspace"),
				SetField("harness_options", map[string]any{"sandbox": "read-only"})}
			if err := EditScope(h.Path, TemplateScope("review"), changes, WithGetenv(h.getenv)); !errors.Is(err, ErrUnknownScope) {
				t.Fatalf("without CreateScope: %v, want ErrUnknownScope", err)
			}
			if err := EditScope(h.Path, TemplateScope("review"), changes, WithGetenv(h.getenv), CreateScope()); err != nil {
				t.Fatal(err)
			}
			wantFile(t, h, tc.want)
			c, err := LoadValid(h.Path, WithGetenv(h.getenv))
			if err != nil {
				t.Fatal(err)
			}
			if r, err := c.ResolveTemplate("review"); err != nil || r.HarnessName != "codex" || r.Options.String("sandbox") != "read-only" {
				t.Fatalf("resolved %+v, %v", r, err)
			}
		})
	}
}

func TestEditScopeCreatesAnEmptyScopeAndATask(t *testing.T) {
	h := editHome(t, "tasks: {}\n")
	mustEditCreate := func(scope ScopePath, changes ...FieldChange) {
		t.Helper()
		if err := EditScope(h.Path, scope, changes, WithGetenv(h.getenv), CreateScope()); err != nil {
			t.Fatal(err)
		}
	}
	mustEditCreate(TemplateScope("blank"))
	mustEditCreate(TaskScope("nightly"), SetField("schedule", "0 3 * * *"), SetField("prompt_file", "p.md"), SetField("enabled", false))
	wantFile(t, h, "tasks:\n  nightly:\n    schedule: \"0 3 * * *\"\n    prompt_file: p.md\n    enabled: false\ntemplates:\n  blank: {}\n")
}

func TestEditScopeRemovesKeys(t *testing.T) {
	h := editHome(t, scopeYAML)
	mustEdit(t, h, TemplateScope("assistant"), RemoveField("harness_options"), RemoveField("model"), RemoveField("workspace"))
	want := replaceOnce(t, scopeYAML, "    workspace: ~/.leo/workspace\n    harness_options:\n      permission_mode: acceptEdits   # edits ok\n      remote_control: true    # template-own\n      agent: leo\n", "")
	wantFile(t, h, want)
	// An empty options map is no key at all.
	mustEdit(t, h, DefaultsScope(), SetField("harness_options", map[string]any{}))
	want = replaceOnce(t, want, "  harness_options:\n    permission_mode: default # be careful\n    allowed_tools: [Read, Grep]\n", "")
	wantFile(t, h, want)
}

// Nothing to change: the file is not rewritten.
func TestEditScopeNoChangeLeavesTheFile(t *testing.T) {
	h := editHome(t, scopeYAML)
	before, _ := os.Stat(h.Path)
	mustEdit(t, h, TemplateScope("assistant"), SetField("workspace", "~/.leo/workspace"), RemoveField("model"),
		SetField("harness_options", map[string]any{"permission_mode": "acceptEdits", "remote_control": true, "agent": "leo"}))
	after, _ := os.Stat(h.Path)
	wantFile(t, h, scopeYAML)
	if !after.ModTime().Equal(before.ModTime()) {
		t.Error("a no-op edit rewrote the file")
	}
}

// Text values round-trip exactly, whatever they hold: the editor quotes
// what YAML would read otherwise.
func TestEditScopeHostileValuesRoundTrip(t *testing.T) {
	values := []string{
		"line one\nline two\n", "key: value # not a comment", "- item", "{a: b}", "[x]", "'single' \"double\"",
		"yes", "no", "~", "null", "0x1F", "1e3", ".inf", "0o17", "2001-12-14", "  leading and trailing  ",
		"tab\there", "back\\slash", "ünïcödé ✓ 😀", "\u2028\u2029\ufeff\u0085", "\x00nul\x07bell\x1b[31mred",
		"#hash", "&anchor", "*alias", "!tag", "%directive", "@at", "`tick", "|", ">", "?", ":", "-", "...", "---",
		strings.Repeat("big ", 50000),
	}
	h := editHome(t, scopeYAML)
	for _, v := range values {
		mustEdit(t, h, TemplateScope("coding"), SetField("harness_options", map[string]any{"append_system_prompt": v, "allowed_tools": []string{v, "Read"}}))
		c, err := LoadValid(h.Path, WithGetenv(h.getenv))
		if err != nil {
			t.Fatalf("%.40q: %v", v, err)
		}
		r, _ := c.ResolveTemplate("coding")
		if got := r.Options.String("append_system_prompt"); got != v {
			t.Fatalf("append_system_prompt = %.60q, want %.60q", got, v)
		}
		if got := r.Options.Strings("allowed_tools"); !reflect.DeepEqual(got, []string{v, "Read"}) {
			t.Fatalf("allowed_tools = %.60q", got)
		}
		if !strings.HasPrefix(h.read(t), "# my leo config — keep this comment\ndefaults:\n  harness: claude   # the usual one\n") ||
			!strings.Contains(h.read(t), "    workspace: ~/agents   # where code lives\n") {
			t.Fatalf("comments lost after %.40q", v)
		}
	}
	// A string that is not UTF-8 cannot be written to YAML: refused before
	// anything is read.
	err := tryEdit(t, h, TemplateScope("coding"), SetField("model", "a\xffb"))
	if err == nil || err.Error() != "templates.coding.model: the value is not valid UTF-8" {
		t.Fatalf("err = %v", err)
	}
}

// Opencode's permission map is a nested map of any shape the user types.
func TestEditScopeNestedOptionMap(t *testing.T) {
	h := editHome(t, scopeYAML)
	perm := map[string]any{"edit": "ask", "bash": map[string]any{"*": "ask", "git status": "allow", "rm -rf *": "deny"}}
	mustEdit(t, h, TemplateScope("coding"), SetField("harness", "opencode"), SetField("model", "anthropic/claude-sonnet-4-5"),
		SetField("harness_options", map[string]any{"permission": perm}))
	want := replaceOnce(t, scopeYAML, "  coding:\n    model: opus\n",
		"  coding:\n    harness: opencode\n    harness_options:\n      permission:\n        bash:\n          \"*\": ask\n"+
			"          \"git status\": allow\n          \"rm -rf *\": deny\n        edit: ask\n    model: anthropic/claude-sonnet-4-5\n")
	wantFile(t, h, want)
	c, err := LoadValid(h.Path, WithGetenv(h.getenv))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := c.ResolveTemplate("coding")
	if !reflect.DeepEqual(r.Options.Map("permission"), perm) || r.Model != "anthropic/claude-sonnet-4-5" {
		t.Fatalf("permission = %#v, model %q", r.Options.Map("permission"), r.Model)
	}
	if !strings.Contains(h.read(t), "    workspace: ~/agents   # where code lives\n") {
		t.Fatal("comment lost")
	}
}

// Shapes leo does not rewrite are refused, naming the scope and field, and
// the file stays as it was.
func TestEditScopeRefusesSharedOrOddShapes(t *testing.T) {
	cases := map[string]struct {
		yaml    string
		scope   ScopePath
		changes []FieldChange
		want    string
	}{
		"alias": {"templates:\n  a: &base\n    model: opus\n  b: *base\n", TemplateScope("b"), []FieldChange{SetField("model", "haiku")},
			"templates.b.model: leo cannot edit this part of the file; change it by hand (templates.b is not a mapping written in place (an alias or a tag))"},
		"anchor merged elsewhere": {"templates:\n  a: &base\n    model: opus\n  b:\n    <<: *base\n", TemplateScope("a"), []FieldChange{SetField("model", "haiku")},
			"templates.a.model: leo cannot edit this part of the file; change it by hand (the template's mapping is shared with templates.b)"},
		"shared options": {"defaults:\n  harness_options: &o\n    agent: x\ntemplates:\n  b:\n    harness_options: *o\n", DefaultsScope(),
			[]FieldChange{SetField("harness_options", map[string]any{"agent": "y"})},
			"defaults.harness_options: leo cannot edit this part of the file; change it by hand (the defaults mapping is shared with templates.b)"},
		"merged value": {"x: &c\n  model: opus\ntemplates:\n  a:\n    <<: *c\n", TemplateScope("a"), []FieldChange{RemoveField("model")},
			"templates.a.model: leo cannot edit this part of the file; change it by hand (templates.a.model comes from a mapping merged in with <<; change it there)"},
		"flow list of maps": {"templates:\n  a: {model: opus, channels: [x]}\n", TemplateScope("a"), []FieldChange{RemoveField("model")},
			"templates.a.model: leo cannot edit this part of the file; change it by hand (templates.a.model is inside a flow mapping {…}; write it as a block or edit it by hand)"},
		"flow non-scalar": {"templates:\n  a: {harness_options: {agent: x}}\n", TemplateScope("a"), []FieldChange{SetField("harness_options", map[string]any{"agent": "y"})},
			"templates.a.harness_options: leo cannot edit this part of the file; change it by hand (templates.a.harness_options is inside a flow mapping {…}; write it as a block or edit it by hand)"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := editHome(t, tc.yaml)
			err := tryEdit(t, h, tc.scope, tc.changes...)
			if !errors.Is(err, ErrCannotEdit) || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant    %s", err, tc.want)
			}
			wantFile(t, h, tc.yaml)
		})
	}
}

func TestEditScopeRefusesKeysItDoesNotEdit(t *testing.T) {
	h := editHome(t, scopeYAML)
	for _, tc := range []struct {
		scope  ScopePath
		change FieldChange
		want   string
	}{
		{TemplateScope("assistant"), SetField("env", map[string]any{"A": "b"}), "templates.assistant.env: leo does not edit env (its values may be secrets; edit leo.yaml by hand)"},
		{DefaultsScope(), SetField("schedule", "x"), "defaults.schedule: not a key leo edits here (editable: harness, model, max_turns, harness_options, workspace)"},
		{TemplateScope("assistant"), SetField("model", 1.5), "templates.assistant.model: expected"},
		{TemplateScope("assistant"), SetField("workspace", struct{}{}), "templates.assistant.workspace: cannot write a value of type struct {}"},
		{ScopePath{Section: "scheduler"}, SetField("logs_keep", 3), `"scheduler" is not a section leo edits`},
	} {
		err := tryEdit(t, h, tc.scope, tc.change)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s %s: err = %v, want %q", tc.scope, tc.change.Key, err, tc.want)
		}
	}
	wantFile(t, h, scopeYAML)
}

func TestEditScopeKeepsCRLF(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	h := editHome(t, crlf(scopeYAML))
	mustEdit(t, h, TemplateScope("coding"), SetField("model", "haiku"), SetField("harness_options", map[string]any{"agent": "rev"}))
	want := replaceOnce(t, scopeYAML, "  coding:\n    model: opus\n", "  coding:\n    harness_options:\n      agent: rev\n    model: haiku\n")
	wantFile(t, h, crlf(want))
}

// Saves from many goroutines to different scopes all land.
func TestEditScopeConcurrentEditsAllLand(t *testing.T) {
	h := editHome(t, scopeYAML)
	const n = 10
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- EditScope(h.Path, TemplateScope(fmt.Sprintf("t%d", i)), []FieldChange{SetField("model", "haiku")},
				WithGetenv(h.getenv), CreateScope())
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadValid(h.Path, WithGetenv(h.getenv))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Templates) != n+2 {
		t.Fatalf("templates: %v", c.TemplateNames())
	}
}

// Property: an edit of one scope never changes another one's text. The
// file is built from scope blocks with comments; after any accepted edit
// of one block, every other block is still there byte for byte, and the
// edited scope reads back as asked.
func TestEditScopeNeverTouchesOtherScopesProperty(t *testing.T) {
	text := rapid.OneOf(
		rapid.StringMatching(`[a-z]{1,8}`),
		rapid.String(),
		rapid.SampledFrom([]string{"yes", "~", "a: b # c", "\n", "- x", "'", "\"", "{", "0x10", "😀", "\x00"}),
	)
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 4).Draw(rt, "templates")
		var blocks []string
		for i := range n {
			var b strings.Builder
			fmt.Fprintf(&b, "  # template %d\n  t%d:\n", i, i)
			if rapid.Bool().Draw(rt, "model?") {
				b.WriteString("    model: opus   # a comment\n")
			}
			if rapid.Bool().Draw(rt, "options?") {
				b.WriteString("    harness_options:\n      agent: x  # agent\n      # note\n      allowed_tools:\n      - Read\n")
			}
			b.WriteString("    workspace: ws\n")
			if rapid.Bool().Draw(rt, "blank?") {
				b.WriteString("\n")
			}
			blocks = append(blocks, b.String())
		}
		head := "defaults:\n  harness: claude\ntemplates:\n"
		tail := "tasks:\n  x:\n    prompt_file: p.md\n"
		home := newTestHomeRapid(rt)
		data := head + strings.Join(blocks, "") + tail
		if err := os.WriteFile(home.Path, []byte(data), 0o600); err != nil {
			rt.Fatal(err)
		}
		target := rapid.IntRange(0, n-1).Draw(rt, "target")
		var changes []FieldChange
		opts := map[string]any{}
		if rapid.Bool().Draw(rt, "agent?") {
			opts["agent"] = text.Draw(rt, "agent")
		}
		if rapid.Bool().Draw(rt, "prompt?") {
			opts["append_system_prompt"] = text.Draw(rt, "prompt")
		}
		changes = append(changes, SetField("harness_options", opts))
		switch rapid.IntRange(0, 2).Draw(rt, "model") {
		case 0:
			changes = append(changes, RemoveField("model"))
		case 1:
			changes = append(changes, SetField("model", rapid.SampledFrom([]string{"haiku", "opus", "sonnet[1m]"}).Draw(rt, "m")))
		}
		if rapid.Bool().Draw(rt, "ws?") {
			changes = append(changes, SetField("workspace", text.Draw(rt, "ws")))
		}
		err := EditScope(home.Path, TemplateScope(fmt.Sprintf("t%d", target)), changes, WithGetenv(home.getenv))
		got, _ := os.ReadFile(home.Path)
		if err != nil {
			if string(got) != data {
				rt.Fatalf("refused (%v) but the file changed", err)
			}
			return // e.g. a workspace that is not a valid path
		}
		before := head + strings.Join(blocks[:target], "")
		after := strings.Join(blocks[target+1:], "") + tail
		if !strings.HasPrefix(string(got), before) || !strings.HasSuffix(string(got), after) {
			rt.Fatalf("another scope changed:\n%s", got)
		}
		c, err := LoadValid(home.Path, WithGetenv(home.getenv))
		if err != nil {
			rt.Fatal(err)
		}
		tpl := c.Templates[fmt.Sprintf("t%d", target)]
		wantOpts := map[string]any(nil)
		if len(opts) > 0 {
			wantOpts = opts
		}
		if !reflect.DeepEqual(tpl.HarnessOptions, wantOpts) {
			rt.Fatalf("options %#v, want %#v", tpl.HarnessOptions, wantOpts)
		}
		for _, ch := range changes {
			if ch.Key == "workspace" && tpl.Workspace != ch.Value {
				rt.Fatalf("workspace %q, want %q", tpl.Workspace, ch.Value)
			}
		}
	})
}

// newTestHomeRapid is newTestHome for a rapid check (one temp dir per draw).
func newTestHomeRapid(rt *rapid.T) *testHome {
	user, err := os.MkdirTemp("", "leo-edit-prop-")
	if err != nil {
		rt.Fatal(err)
	}
	rt.Cleanup(func() { _ = os.RemoveAll(user) })
	h := &testHome{User: user, Leo: user + "/.leo", env: map[string]string{"HOME": user}}
	h.Path = h.Leo + "/leo.yaml"
	h.getenv = func(k string) string { return h.env[k] }
	if err := os.MkdirAll(h.Leo+"/workspace", 0o700); err != nil {
		rt.Fatal(err)
	}
	if err := os.WriteFile(h.Leo+"/workspace/p.md", []byte("hi\n"), 0o600); err != nil {
		rt.Fatal(err)
	}
	return h
}

package browser_test

// The config forms (docs/configuration/harnesses.md "Web UI") in real Chromium: the
// harness dropdown swaps the options sub-form, the model hint and the
// inherited placeholders without a reload; a rejected save shows the
// adapter's field-named error and leaves leo.yaml byte for byte; a good
// save keeps leo.yaml's comments and the daemon reloads it. Element ids
// are the stable hooks listed atop templates/partials/config_forms.html.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// The defaults' harness_options: every claude scope inherits them. The
// system prompt is markup, to prove it is shown as text.
const (
	inheritedPrompt = `<b>short</b> & "plain"`
	headComment     = "# leo.yaml of the config-forms browser test: these comments must survive a save"
	scopeComment    = "  # the template the browser edits"
	lineComment     = "# set by the browser"
)

// commentedConfig gives startSite's leo.yaml comments, a defaults.model
// and defaults harness_options, so a claude scope has inherited
// placeholders (and a codex one must not show defaults.model).
func commentedConfig(t *testing.T) func(string) string {
	return func(yaml string) string {
		t.Helper()
		replace := func(s, old, new string) string {
			if !strings.Contains(s, old) {
				t.Fatalf("leo.yaml has no %q to edit:\n%s", old, s)
			}
			return strings.Replace(s, old, new, 1)
		}
		yaml = replace(yaml, "defaults:\n  harness: claude\n",
			"defaults:\n  harness: claude\n  model: opus\n  harness_options:\n    permission_mode: plan\n    allowed_tools: [Read, Grep]\n"+
				"    append_system_prompt: '"+inheritedPrompt+"'\n")
		yaml = replace(yaml, "templates:\n  claude:\n    harness: claude\n",
			"templates:\n"+scopeComment+"\n  claude:\n    harness: claude "+lineComment+"\n")
		return headComment + "\n" + yaml
	}
}

// configSite is a site with the commented leo.yaml and a browser logged
// in on the claude template's form.
func configSite(t *testing.T) (*site, *browser) {
	t.Helper()
	s := startSite(t, commentedConfig(t))
	b := newBrowser(t)
	b.do("open the claude template's form", chromedp.Navigate(s.base+"/web/config/templates/claude"))
	b.login(s, "/web/config/templates/claude")
	b.waitJS("the claude template's form", `!!document.querySelector("#config-form") && document.querySelector("#scope").value === "templates.claude"`, 10*time.Second)
	return s, b
}

// js evaluates an expression for its value.
func js[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// chooseHarness picks name in the Harness dropdown as a person does: the
// value changes and the select fires "change" (what htmx listens to).
func (b *browser) chooseHarness(name string) {
	b.t.Helper()
	b.do("choose harness "+name, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(
		`(() => { const s = document.querySelector("#harness"); s.value = %q; s.dispatchEvent(new Event("change", {bubbles: true})) })()`, name)))
}

// optionsFor waits for the options sub-form of harness name.
func (b *browser) optionsFor(name string) {
	b.t.Helper()
	b.waitJS("the "+name+" options sub-form", fmt.Sprintf(
		`document.querySelector("#harness-options-for").innerText === "Options of the %s harness."`, name), 15*time.Second)
}

// formState is what the harness-dependent parts of the form show.
type formState struct {
	Options      []string // the option controls' ids
	ModelHint    string   // #model's placeholder
	ModelList    []string // #model-options
	InheritTexts []string // every "inherit (…)" label and "inherit: …" placeholder
}

func (b *browser) formState() formState {
	b.t.Helper()
	return js[formState](b, `(() => {
		const f = document.querySelector("#config-form");
		const inherit = [];
		f.querySelectorAll("option").forEach(o => { if (o.textContent.startsWith("inherit (")) inherit.push(o.parentElement.id + "=" + o.textContent) });
		f.querySelectorAll("[placeholder]").forEach(e => { if (e.placeholder.startsWith("inherit: ")) inherit.push(e.id + "=" + e.placeholder) });
		return {
			Options: [...document.querySelectorAll("#harness-options [name^='opt.']")].map(e => e.id),
			ModelHint: document.querySelector("#model").placeholder,
			ModelList: [...document.querySelectorAll("#model-options option")].map(o => o.value),
			InheritTexts: inherit,
		};
	})()`)
}

func has(list []string, s string) bool { return slices.Contains(list, s) }

// claudeInherits asserts the claude sub-form with the defaults'
// harness_options as inherited placeholders.
func claudeInherits(t *testing.T, when string, st formState) {
	t.Helper()
	for _, id := range []string{"opt-permission_mode", "opt-bypass_permissions", "opt-agent", "opt-allowed_tools", "opt-append_system_prompt"} {
		if !has(st.Options, id) {
			t.Fatalf("%s: no %s in the claude sub-form: %v", when, id, st.Options)
		}
	}
	if has(st.Options, "opt-sandbox") {
		t.Fatalf("%s: codex's sandbox in the claude sub-form: %v", when, st.Options)
	}
	for _, want := range []string{"opt-permission_mode=inherit (plan)", "opt-allowed_tools=inherit: Read, Grep",
		"opt-append_system_prompt=inherit: " + inheritedPrompt, "model=inherit: opus"} {
		if !has(st.InheritTexts, want) {
			t.Fatalf("%s: no inherited %q; the form shows %q", when, want, st.InheritTexts)
		}
	}
	for _, m := range []string{"sonnet", "opus", "haiku"} {
		if !has(st.ModelList, m) {
			t.Fatalf("%s: claude model %q not suggested: %v", when, m, st.ModelList)
		}
	}
}

// The Harness dropdown swaps the options sub-form, the model hint and the
// inherited placeholders in place (htmx), and back.
func TestBrowserConfigHarnessSwitch(t *testing.T) {
	s, b := configSite(t)
	b.do("mark the page", chromedp.Evaluate[chromedp.Void]("window.leoNoReload = true; undefined"))
	if v := js[string](b, `document.querySelector("#harness").value`); v != "claude" {
		t.Fatalf("the claude template's Harness: %q", v)
	}
	b.optionsFor("claude")
	claudeInherits(t, "the claude template", b.formState())
	// Markup in an inherited value is text, not elements.
	if n := js[int](b, `document.querySelectorAll("#config-form b").length`); n != 0 {
		t.Fatalf("the inherited system prompt became %d <b> elements", n)
	}

	b.chooseHarness("codex")
	b.optionsFor("codex")
	st := b.formState()
	if !has(st.Options, "opt-sandbox") || len(st.Options) != 1 {
		t.Fatalf("codex sub-form: want just opt-sandbox, got %v", st.Options)
	}
	sandbox := js[[]string](b, `[...document.querySelectorAll("#opt-sandbox option")].map(o => o.value)`)
	if strings.Join(sandbox, ",") != ",read-only,workspace-write,danger-full-access" {
		t.Fatalf("codex sandbox choices: %q", sandbox)
	}
	if st.ModelHint != "e.g. gpt-5.3-codex" {
		t.Fatalf("codex model hint: %q", st.ModelHint)
	}
	if len(st.ModelList) != 0 {
		t.Fatalf("claude's models still suggested for codex: %v", st.ModelList)
	}
	if len(st.InheritTexts) != 0 {
		t.Fatalf("codex is not the defaults' harness, yet the form shows inherited values: %q", st.InheritTexts)
	}

	// "inherit" resolves to the defaults' harness, claude: the inherited
	// values light up again.
	b.chooseHarness("")
	b.optionsFor("claude")
	claudeInherits(t, "harness inherit", b.formState())

	// opencode: its YAML permission textarea, its model hint, no inherited values.
	b.chooseHarness("opencode")
	b.optionsFor("opencode")
	st = b.formState()
	if strings.Join(st.Options, ",") != "opt-permission" || len(st.ModelList) != 0 || len(st.InheritTexts) != 0 ||
		!strings.HasPrefix(st.ModelHint, "provider/model") {
		t.Fatalf("opencode parts: %+v", st)
	}
	if k := js[string](b, `document.querySelector("#opt-permission").tagName + "/" + document.querySelector("#opt-permission").dataset.kind`); k != "TEXTAREA/yaml" {
		t.Fatalf("opencode permission control: %s", k)
	}

	b.chooseHarness("claude")
	b.optionsFor("claude")
	claudeInherits(t, "back to claude", b.formState())

	// A typed model survives the swap of the model input.
	b.do("type a model", chromedp.SendKeys(chromedp.CSS("#model"), "haiku"))
	b.chooseHarness("codex")
	b.optionsFor("codex")
	if v := js[string](b, `document.querySelector("#model").value + "|" + document.querySelector("#model").placeholder`); v != "haiku|e.g. gpt-5.3-codex" {
		t.Fatalf("the model input after the swap: value|placeholder = %q", v)
	}
	if !js[bool](b, `window.leoNoReload === true && location.pathname === "/web/config/templates/claude"`) {
		t.Fatal("the page reloaded: the dropdown must swap the sub-form in place")
	}
	s.clean(t, "the template form", b.html())
	b.noErrors()
}

// readConfig is leo.yaml's bytes.
func readConfig(t *testing.T, s *site) []byte {
	t.Helper()
	data, err := os.ReadFile(s.w.Home.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A save the adapter rejects shows its field-named error and leaves
// leo.yaml exactly as it was.
func TestBrowserConfigInvalidSave(t *testing.T) {
	s, b := configSite(t)
	before := readConfig(t, s)

	// A model claude does not have, long enough that its error must wrap
	// on a phone.
	bad := "gpt-5.3-codex-" + strings.Repeat("x", 120)
	b.do("type a codex model for claude", chromedp.SendKeys(chromedp.CSS("#model"), bad))
	b.do("save", chromedp.Click(chromedp.CSS("#save")))
	b.waitJS("the error flash", `!!document.querySelector("#flash .flash-error")`, 15*time.Second)
	msg := b.text("#flash")
	for _, want := range []string{"templates.claude.model: ", `invalid model "` + bad + `"`, "sonnet"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("the error flash %q does not say %q", msg, want)
		}
	}
	if got := readConfig(t, s); string(got) != string(before) {
		t.Fatalf("a rejected save changed leo.yaml:\nbefore:\n%s\nafter:\n%s", before, got)
	}
	b.shoot(artifacts(t), "config-template-error")
	// The form is shown again as posted, to be corrected.
	if v := js[string](b, `document.querySelector("#model").value + "|" + document.querySelector("#harness").value`); v != bad+"|claude" {
		t.Fatalf("the form after the error: model|harness = %q", v)
	}

	// An option value the codex adapter refuses (a sandbox the select does
	// not offer, as a hand-made post would send).
	b.do("open the form afresh", chromedp.Navigate(s.base+"/web/config/templates/claude"))
	b.waitJS("the form", `!!document.querySelector("#config-form") && !document.querySelector("#flash .flash")`, 10*time.Second)
	b.chooseHarness("codex")
	b.optionsFor("codex")
	b.do("pick a sandbox codex does not have", chromedp.Evaluate[chromedp.Void](
		`(() => { const s = document.querySelector("#opt-sandbox"); s.add(new Option("everything", "everything")); s.value = "everything" })()`))
	b.do("save", chromedp.Click(chromedp.CSS("#save")))
	b.waitJS("the error flash", `!!document.querySelector("#flash .flash-error")`, 15*time.Second)
	msg = b.text("#flash")
	for _, want := range []string{"templates.claude", "sandbox", "everything"} {
		if !strings.Contains(msg, want) {
			t.Fatalf("the error flash %q does not say %q", msg, want)
		}
	}
	if got := readConfig(t, s); string(got) != string(before) {
		t.Fatalf("a rejected save changed leo.yaml:\nbefore:\n%s\nafter:\n%s", before, got)
	}
	// The form again shows the harness that was posted.
	b.optionsFor("codex")
	if v := js[string](b, `document.querySelector("#harness").value`); v != "codex" {
		t.Fatalf("the form after the error shows harness %q", v)
	}
	s.clean(t, "the form with an error", b.html())
	// The two refused posts' answers, and nothing else.
	b.noErrors("status of 422 (Unprocessable Entity) " + s.base + "/web/config/templates/claude")
}

// A good save lands in leo.yaml with its comments kept, and the daemon
// runs it.
func TestBrowserConfigValidSave(t *testing.T) {
	s, b := configSite(t)
	b.chooseHarness("codex")
	b.optionsFor("codex")
	b.do("fill in the codex form",
		chromedp.SetValue(chromedp.CSS("#opt-sandbox"), "workspace-write"),
		chromedp.SendKeys(chromedp.CSS("#model"), "gpt-5.3-codex"),
		chromedp.Click(chromedp.CSS("#save")),
	)
	b.waitJS("the saved flash", `!!document.querySelector("#flash .flash-ok")`, 30*time.Second)
	if msg := b.text("#flash"); msg != "Saved templates.claude to leo.yaml." {
		t.Fatalf("the flash after a save: %q (a note means the daemon did not reload)", msg)
	}

	text := string(readConfig(t, s))
	for _, line := range []string{headComment, scopeComment, lineComment} {
		if !strings.Contains(text, line) {
			t.Fatalf("the save dropped the comment %q:\n%s", line, text)
		}
	}
	c, err := config.Load(s.w.Home.ConfigPath)
	if err != nil {
		t.Fatalf("leo.yaml after the save: %v", err)
	}
	tpl := c.Templates["claude"]
	if tpl.Harness != "codex" || tpl.Model != "gpt-5.3-codex" || fmt.Sprint(tpl.HarnessOptions) != "map[sandbox:workspace-write]" {
		t.Fatalf("templates.claude after the save: harness %q model %q options %v\n%s", tpl.Harness, tpl.Model, tpl.HarnessOptions, text)
	}
	if fmt.Sprint(c.Defaults.HarnessOptions["permission_mode"]) != "plan" || c.Tasks["report"].Harness != "claude" {
		t.Fatalf("the save touched other scopes:\n%s", text)
	}

	// The daemon reloaded: its template list says codex.
	var got api.Template
	testutil.WaitFor(t, 10*time.Second, func() bool {
		ts, err := s.w.Client.ListTemplates(context.Background())
		if err != nil {
			return false
		}
		for _, tm := range ts {
			if tm.Name == "claude" {
				got = tm
			}
		}
		return got.Harness == "codex"
	}, "the daemon's templates.claude on codex")
	if got.HarnessInherited || got.Model != "gpt-5.3-codex" {
		t.Fatalf("the daemon's templates.claude: %+v", got)
	}

	// The form shows what was saved, and the Templates list the badge.
	b.optionsFor("codex")
	if v := js[string](b, `document.querySelector("#harness").value + "|" + document.querySelector("#opt-sandbox").value + "|" + document.querySelector("#model").value`); v != "codex|workspace-write|gpt-5.3-codex" {
		t.Fatalf("the form after the save: %q", v)
	}
	b.do("open the config page", chromedp.Click(chromedp.CSS(`header nav a[href="/web/config"]`)))
	b.waitJS("the templates list", `!!document.querySelector("#templates")`, 10*time.Second)
	badge := js[string](b, `(() => { const a = document.querySelector('#templates a[href="/web/config/templates/claude"]'); const b = a && a.closest("tr").querySelector(".badge"); return b ? b.className + "|" + b.innerText : "" })()`)
	if badge != "badge|codex" {
		t.Fatalf("the claude template's badge in the list: %q", badge)
	}

	// A new template on opencode, its permission map typed as YAML.
	b.do("open a new template's form", chromedp.Click(chromedp.CSS("#new-template")))
	b.waitJS("the new template form", `!!document.querySelector("#config-form #name") && document.querySelector("#scope").value === "templates"`, 10*time.Second)
	b.chooseHarness("opencode")
	b.optionsFor("opencode")
	b.do("fill in the new template",
		chromedp.SendKeys(chromedp.CSS("#name"), "from-web"),
		chromedp.SendKeys(chromedp.CSS("#field-workspace"), s.w.Workspaces+"/from-web"),
		chromedp.SendKeys(chromedp.CSS("#opt-permission"), "edit: deny\nbash:\n  'git *': allow\n"),
		chromedp.Click(chromedp.CSS("#save")),
	)
	b.waitJS("the new template saved", `location.pathname === "/web/config/templates/from-web" && !!document.querySelector("#flash .flash-ok")`, 30*time.Second)
	if msg := b.text("#flash"); msg != "Saved templates.from-web to leo.yaml." {
		t.Fatalf("the flash after creating a template: %q", msg)
	}
	c, err = config.Load(s.w.Home.ConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	nt, ok := c.Templates["from-web"]
	if !ok || nt.Harness != "opencode" || fmt.Sprint(nt.HarnessOptions) != "map[permission:map[bash:map[git *:allow] edit:deny]]" {
		t.Fatalf("templates.from-web in leo.yaml: %+v", nt)
	}
	if text := string(readConfig(t, s)); !strings.Contains(text, headComment) || !strings.Contains(text, lineComment) {
		t.Fatalf("creating a template dropped comments:\n%s", text)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool {
		ts, err := s.w.Client.ListTemplates(context.Background())
		return err == nil && slices.ContainsFunc(ts, func(tm api.Template) bool { return tm.Name == "from-web" && tm.Harness == "opencode" })
	}, "the daemon's templates.from-web")
	b.noErrors()
}

// The config page and a template form at desktop and phone width.
func TestBrowserConfigScreens(t *testing.T) {
	s, b := configSite(t)
	shots := artifacts(t)
	b.optionsFor("claude")
	b.shoot(shots, "config-template")
	b.do("open the config page", chromedp.Navigate(s.base+"/web/config"))
	b.waitJS("the config page", `!!document.querySelector("#defaults #config-form") && !!document.querySelector("#templates") && !!document.querySelector("#tasks")`, 10*time.Second)
	// The defaults form never shows inherited values: nothing above it.
	if n := js[int](b, `document.querySelectorAll('#config-form [placeholder^="inherit:"]').length + [...document.querySelectorAll("#config-form option")].filter(o => o.textContent.startsWith("inherit (")).length`); n != 0 {
		t.Fatalf("the defaults form shows %d inherited values", n)
	}
	s.clean(t, "the config page", b.html())
	b.shoot(shots, "config")
	b.do("open a new template's form", chromedp.Click(chromedp.CSS("#new-template")))
	b.waitJS("the new template form", `!!document.querySelector("#config-form #name")`, 10*time.Second)
	b.shoot(shots, "config-new-template")
	b.noErrors()
}

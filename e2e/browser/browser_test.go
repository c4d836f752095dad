// Package browser_test drives leo's web UI in real headless Chromium
// (Debian's chromium) through chromedp, against a real `leo service` with
// the fake harnesses on PATH: log in with the token, spawn an agent from
// the Agents page, send it a message and see the reply on its screen, run
// a task and see it in history. Screenshots of every page at desktop and
// phone width are written to $LEO_TEST_ARTIFACTS (default: a temp dir,
// printed).
//
// Chromium missing is a failure, never a skip.
package browser_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/testutil"
	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

func TestMain(m *testing.M) {
	code := hermetic.Main(m)
	leoproc.Cleanup()
	os.Exit(code)
}

// secretMarker is an env value in every template and task of the config:
// no page may ever show it.
const secretMarker = "leo-browser-s3cr3t-ENV-4c1d"

// chromium is the browser binary: $LEO_CHROMIUM, else Debian's chromium
// on PATH. Missing, the browser tests skip (one line on stderr says what
// is missing), unless $LEO_REQUIRE_CHROMIUM is set, as .ci/run sets it:
// then they fail.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("LEO_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	required, msg := noChromium(os.Getenv)
	if required {
		t.Fatal(msg)
	}
	skipOnce.Do(func() { fmt.Fprintln(os.Stderr, "SKIP "+msg) })
	t.Skip(msg)
	return ""
}

var skipOnce sync.Once

// noChromium says whether a missing chromium fails the browser tests, and
// the line that says so.
func noChromium(getenv func(string) string) (required bool, msg string) {
	msg = "browser tests: no chromium on PATH (install Debian's chromium: apt-get install chromium, or set LEO_CHROMIUM)"
	if getenv("LEO_REQUIRE_CHROMIUM") != "" {
		return true, msg + "; LEO_REQUIRE_CHROMIUM is set, so that is a failure"
	}
	return false, msg + "; skipped (LEO_REQUIRE_CHROMIUM=1 makes it a failure)"
}

// artifacts is where screenshots go: $LEO_TEST_ARTIFACTS or a temp dir.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LEO_TEST_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// site is a running leo with its web UI on a free loopback port.
type site struct {
	w     *leoproc.World
	base  string
	token string
}

// startSite writes leo.yaml (a template per fake harness, a oneshot task
// "report" on claude, web on a free port, the secret in every env), passes
// its text through edits (a test's own comments or defaults), runs
// `leo service` and waits for the web server to serve.
func startSite(t *testing.T, edits ...func(yaml string) string) *site {
	t.Helper()
	w := leoproc.New(t)
	w.WriteConfig(map[string]string{"LEO_TEST_SECRET": secretMarker})
	ws := filepath.Join(w.Workspaces, "task-report")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "prompt.md"), []byte("report on the garden\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w.AppendConfig(fmt.Sprintf("tasks:\n  report:\n    harness: claude\n    workspace: %s\n    prompt_file: prompt.md\n    env:\n      FAKE_HARNESS_LOG: %q\n      TASK_SECRET: %s\n",
		ws, w.HarnessLog, secretMarker))
	base := w.EnableWeb()
	if len(edits) > 0 {
		text, err := os.ReadFile(w.Home.ConfigPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, edit := range edits {
			text = []byte(edit(string(text)))
		}
		if err := os.WriteFile(w.Home.ConfigPath, text, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w.Start(60 * time.Second)
	s := &site{w: w, base: base}
	testutil.WaitFor(t, 30*time.Second, func() bool {
		h, err := w.Client.Health(context.Background())
		return err == nil && h.Web != nil && h.Web.Serving
	}, "the web server serving")
	s.token = w.Token()
	return s
}

// browser is one headless Chromium tab whose console errors (a CSP
// violation, a script error) are collected.
type browser struct {
	t    *testing.T
	ctx  context.Context
	mu   sync.Mutex
	errs []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
		chromedp.Flag("disable-gpu", true),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses root with a sandbox
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:], opts...)...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	b := &browser{t: t, ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *cdplog.EventEntryAdded:
			// The browser's own favicon fetch is no page's error.
			if e.Entry.Level == cdplog.EntryLevelError && !strings.HasSuffix(e.Entry.URL, "/favicon.ico") {
				b.addErr(string(e.Entry.Source) + ": " + e.Entry.Text + " " + e.Entry.URL)
			}
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			b.addErr(fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber, msg))
		}
	}); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

func (b *browser) addErr(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errs = append(b.errs, s)
}

// noErrors fails on a console error other than the answers the test
// provoked on purpose: an error containing one of provoked (a rejected
// save's 422, say) is expected.
func (b *browser) noErrors(provoked ...string) {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var bad []string
	for _, e := range b.errs {
		if !slices.ContainsFunc(provoked, func(p string) bool { return strings.Contains(e, p) }) {
			bad = append(bad, e)
		}
	}
	if len(bad) > 0 {
		b.t.Fatalf("the browser reported errors:\n%s", strings.Join(bad, "\n"))
	}
}

// do runs steps, bounded; a failure names the step.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// clickLive clicks the element sel names inside a live part, once it is
// there: found and clicked in one script, since the part may be swapped
// for a new copy (an event arrived) between a query and a click of
// chromedp's, which then acts on a node that is gone.
func (b *browser) clickLive(what, sel string) {
	b.t.Helper()
	b.waitJS(what, "(() => { const e = document.querySelector("+strconv.Quote(sel)+"); if (!e) return false; e.click(); return true })()", 30*time.Second)
}

// waitJS waits (up to within) for a JavaScript expression to be true. It
// evaluates it afresh every 100ms: a navigation in between (a form post)
// only costs a round.
func (b *browser) waitJS(what, expr string, within time.Duration) {
	b.t.Helper()
	var last error
	ok := testutil.Poll(within, 100*time.Millisecond, func() bool {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		last = err
		return err == nil && ok
	})
	if !ok {
		b.t.Fatalf("%s: not so after %v (last error: %v)\npage text:\n%s", what, within, last, b.text("body"))
	}
}

func (b *browser) text(sel string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](fmt.Sprintf("(document.querySelector(%q) || {innerText: ''}).innerText", sel)))
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

func (b *browser) html() string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string]("document.documentElement.outerHTML"))
	if err != nil {
		b.t.Fatal(err)
	}
	return s
}

// shoot writes the page at desktop (1280x800) and phone (390x844) width
// as <name>-desktop.png and <name>-phone.png, and checks that at phone
// width nothing but a table's own scroller is wider than the screen.
func (b *browser) shoot(dir, name string) {
	b.t.Helper()
	for _, v := range []struct {
		label string
		w, h  int64
		opts  []chromedp.EmulateViewportOption
	}{
		{"desktop", 1280, 800, nil},
		{"phone", 390, 844, []chromedp.EmulateViewportOption{chromedp.EmulateScale(2), chromedp.EmulateMobile}},
	} {
		b.do("viewport "+v.label, chromedp.EmulateViewport(v.w, v.h, v.opts...))
		if v.label == "phone" {
			b.fitsWidth(name)
		}
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		if err != nil {
			b.t.Fatalf("screenshot %s %s: %v", name, v.label, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+v.label+".png"), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	b.do("viewport back", chromedp.EmulateViewport(1280, 800))
}

// fitsWidth waits for the page to be no wider than its viewport, else
// fails naming the elements that stick out. It compares with clientWidth,
// not innerWidth: a mobile viewport zooms out to show wider content, and
// innerWidth grows with it.
func (b *browser) fitsWidth(name string) {
	b.t.Helper()
	const wider = `(() => {
		const vw = document.documentElement.clientWidth;
		if (document.documentElement.scrollWidth <= vw) return "";
		const out = [];
		for (const e of document.body.querySelectorAll("*")) {
			const r = e.getBoundingClientRect();
			const spills = e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).overflowX === "visible";
			if ((r.right > vw + 1 || spills) && !e.closest(".table-wrap, pre")) out.push(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + (e.className ? "." + String(e.className).replace(/ /g, ".") : "") + " right=" + Math.round(r.right));
		}
		return "page " + document.documentElement.scrollWidth + "px wide in " + vw + "px: " + out.slice(0, 8).join(", ");
	})()`
	var why string
	var err error
	if !testutil.Poll(5*time.Second, 100*time.Millisecond, func() bool {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		defer cancel()
		why, err = chromedp.Run(ctx, chromedp.Evaluate[string](wider))
		return err == nil && why == ""
	}) {
		b.t.Fatalf("%s does not fit a phone's width: %s (error: %v)", name, why, err)
	}
}

// clean checks the page shows neither the token nor an env value.
func (s *site) clean(t *testing.T, what, html string) {
	t.Helper()
	if strings.Contains(html, secretMarker) {
		t.Fatalf("%s shows an env value", what)
	}
	if strings.Contains(html, s.token) {
		t.Fatalf("%s shows the API token", what)
	}
}

// login fills in the login form the browser is on (a page opened logged
// out sends it there) and waits to be back on path.
func (b *browser) login(s *site, path string) {
	b.t.Helper()
	b.do("log in",
		chromedp.WaitVisible(chromedp.CSS("#login-form #token")),
		chromedp.SendKeys(chromedp.CSS("#token"), s.token),
		chromedp.Click(chromedp.CSS("#login")),
	)
	b.waitJS("back on "+path+" after login", fmt.Sprintf("location.pathname === %q", path), 10*time.Second)
}

// The whole flow in one browser, as a person would use it.
func TestBrowserAgentsTasksService(t *testing.T) {
	s := startSite(t)
	shots := artifacts(t)
	b := newBrowser(t)

	// Logged out, a page sends the browser to the login form.
	b.do("open the agents page", chromedp.Navigate(s.base+"/web/agents"))
	b.waitJS("the login form", `location.pathname === "/login" && !!document.querySelector("#login-form")`, 10*time.Second)
	b.shoot(shots, "login")
	b.login(s, "/web/agents")
	b.waitJS("the agents page after login", `!!document.querySelector("#spawn-form")`, 10*time.Second)

	// Spawn from the Agents page (htmx swaps the list and the flash in).
	b.do("spawn web1 from the claude template",
		chromedp.SetValue(chromedp.CSS("#spawn-template"), "claude"),
		chromedp.SendKeys(chromedp.CSS("#spawn-name"), "web1"),
		chromedp.Click(chromedp.CSS("#spawn")),
	)
	b.waitJS("the spawned agent in the list", `!!document.querySelector('#agents-list tr[data-agent="web1"]') && document.querySelector("#flash").innerText.includes("Spawned web1")`, 60*time.Second)
	if p := b.text("body"); !strings.Contains(p, "claude") {
		t.Fatalf("the list does not show the harness:\n%s", p)
	}
	b.waitJS("web1 running", `(document.querySelector('#agents-list tr[data-agent="web1"] .state') || {}).innerText === "running"`, 30*time.Second)
	s.clean(t, "agents page", b.html())
	b.shoot(shots, "agents")

	// Its page: send a message, see the fake's echo on the screen, which
	// htmx refreshes without a reload.
	b.do("open web1", chromedp.Click(chromedp.CSS(`#agents-list a[href="/web/agents/web1"]`)))
	b.waitJS("the agent page", `location.pathname === "/web/agents/web1" && !!document.querySelector("#send-form")`, 10*time.Second)
	b.do("mark the page", chromedp.Evaluate[chromedp.Void]("window.leoNoReload = true; undefined"))
	b.do("send a message",
		chromedp.SendKeys(chromedp.CSS("#message"), "hello from the browser"),
		chromedp.Click(chromedp.CSS("#send")),
	)
	b.waitJS("the send flash", `document.querySelector("#flash").innerText.includes("to web1")`, 60*time.Second)
	b.waitJS("the reply on the screen", `document.querySelector("#screen").innerText.includes("echo: hello from the browser")`, 60*time.Second)
	b.waitJS("no reload (htmx did it)", `window.leoNoReload === true && document.querySelector("#message").value === ""`, 5*time.Second)
	s.clean(t, "agent page", b.html())
	b.shoot(shots, "agent")

	// Tasks: run now, then the run is in the task's history, with its log.
	b.do("open tasks", chromedp.Click(chromedp.CSS(`header nav a[href="/web/tasks"]`)))
	b.waitJS("the tasks page", `!!document.querySelector('#tasks-list tr[data-task="report"]')`, 10*time.Second)
	if row := b.text(`#tasks-list tr[data-task="report"]`); !strings.Contains(row, "manual only") || !strings.Contains(row, "claude") {
		t.Fatalf("task row: %q", row)
	}
	b.shoot(shots, "tasks")
	b.do("run report now", chromedp.Click(chromedp.CSS(`#tasks-list tr[data-task="report"] button[data-action="run"]`)))
	b.waitJS("the run flash", `document.querySelector("#flash").innerText.includes("Started a run of report")`, 30*time.Second)
	b.do("open report", chromedp.Navigate(s.base+"/web/tasks/report"))
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(b.text("#task-main"), "succeeded") {
		if time.Now().After(deadline) {
			t.Fatalf("the run never showed as succeeded:\n%s", b.text("main"))
		}
		b.do("reload report", chromedp.Sleep(300*time.Millisecond), chromedp.Reload())
	}
	s.clean(t, "task page", b.html())
	b.shoot(shots, "task")
	b.do("open the run's log", chromedp.Click(chromedp.CSS("#task-main a.run-log")))
	// 14: the prompt and the outcome first, the raw stream folded below.
	b.waitJS("the run log", `!!document.querySelector("#run-prompt") && document.querySelector("#run-prompt").innerText.includes("report on the garden") && document.querySelector("#run-outcome").innerText.includes("succeeded") && !document.querySelector("#run-raw").open`, 10*time.Second)
	b.do("unfold the raw stream", chromedp.Click(chromedp.CSS("#run-raw summary")))
	b.waitJS("the raw stream", `document.querySelector("#run-raw").open && document.querySelector("#run-log").innerText.includes("report on the garden")`, 10*time.Second)
	s.clean(t, "run log", b.html())
	b.shoot(shots, "runlog")

	// Service: health, tmux, claude; reload answers with a flash.
	b.do("open service", chromedp.Click(chromedp.CSS(`header nav a[href="/web/service"]`)))
	b.waitJS("the service page", `!!document.querySelector("#service-facts")`, 10*time.Second)
	if tm := b.text("#tmux"); !strings.HasPrefix(tm, "tmux ") {
		t.Fatalf("tmux version on the service page: %q", tm)
	}
	if cl := b.text("#claude"); !strings.Contains(cl, "found at") {
		t.Fatalf("claude on the service page: %q", cl)
	}
	b.do("reload the config", chromedp.Click(chromedp.CSS("#reload")))
	b.waitJS("the reload flash", `document.querySelector("#flash").innerText.includes("Reloaded leo.yaml.")`, 30*time.Second)
	s.clean(t, "service page", b.html())
	b.shoot(shots, "service")
	b.noErrors()

	// The same pages without a browser, every fragment too: no token, no
	// env value.
	s.scan(t)
}

// scan logs in with a plain HTTP client and fetches every page and
// fragment, checking none carries the token or an env value.
func (s *site) scan(t *testing.T) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := c.PostForm(s.base+"/login", url.Values{"token": {s.token}, "next": {"/web/agents"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, p := range []string{"/web/agents", "/web/partials/agents", "/web/agents/web1", "/web/agents/web1/screen", "/web/agents/web1/conversation",
		"/web/agents/claude", "/web/tasks", "/web/tasks/report", "/web/service", "/login"} {
		resp, err := c.Get(s.base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("GET %s = %d", p, resp.StatusCode)
		}
		s.clean(t, "GET "+p, string(body))
	}
}

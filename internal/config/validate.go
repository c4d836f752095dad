package config

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/blackpaw-studio/leo/internal/names"
)

// Severities of a Finding.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
)

// Finding is one problem in a config. Message is the whole text, starting
// with Path (e.g. `templates.foo.harness_options: unknown option "x" (…)`).
// Line and Column point into the file when the path could be located.
type Finding struct {
	Severity string `json:"severity"`
	Path     string `json:"path"`
	Message  string `json:"message"`
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`

	posPath string // a more precise path to locate (e.g. the option key)
}

// IsError reports whether the finding fails validation.
func (f Finding) IsError() bool { return f.Severity == SeverityError }

// ValidationError is a config with at least one error-severity finding.
// Findings holds every finding (errors and warnings), sorted by path.
type ValidationError struct {
	Findings []Finding
}

// Error lists the errors, one per line; warnings are only in Findings.
func (e *ValidationError) Error() string {
	var b strings.Builder
	for _, f := range e.Findings {
		if !f.IsError() {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(f.Message)
	}
	return b.String()
}

// Errors returns only the error-severity findings.
func (e *ValidationError) Errors() []Finding {
	var out []Finding
	for _, f := range e.Findings {
		if f.IsError() {
			out = append(out, f)
		}
	}
	return out
}

// asError wraps findings into a *ValidationError when any is an error.
func asError(fs []Finding) error {
	for _, f := range fs {
		if f.IsError() {
			return &ValidationError{Findings: fs}
		}
	}
	return nil
}

// Validate checks the whole config and reports every problem at once. It is
// the one check used by `leo validate`, CLI start-up, daemon boot and reload,
// and every web save. It returns a *ValidationError when there is at least
// one error; warnings alone return nil (see Findings).
func (c *Config) Validate() error {
	return asError(c.Findings())
}

// Findings returns every error and warning, sorted by path.
func (c *Config) Findings() []Finding {
	all := append([]Finding(nil), c.findings...)
	all = append(all, c.validateDefaults()...)
	all = append(all, c.validateWeb()...)
	all = append(all, c.validateScheduler()...)
	all = append(all, c.validateNotify()...)
	all = append(all, c.validateWorktrees()...)

	// Scopes are checked independently; a large config spreads them over
	// the cores (the result is sorted, so the order of work is irrelevant).
	templates, tasks := c.TemplateNames(), c.TaskNames()
	n := len(templates) + len(tasks)
	workers := min(runtime.GOMAXPROCS(0), 4)
	if n < 64 {
		workers = 1
	}
	pc := &promptChecker{}
	parts := make([][]Finding, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if i < len(templates) {
					parts[w] = append(parts[w], c.validateTemplate(templates[i])...)
				} else {
					parts[w] = append(parts[w], c.validateTask(tasks[i-len(templates)], pc)...)
				}
			}
		}()
	}
	wg.Wait()
	for _, p := range parts {
		all = append(all, p...)
	}
	return c.finish(all)
}

// finish removes repeats (an inherited bad harness is reported by every
// scope that inherits it), sorts by path and locates each finding in the file.
func (c *Config) finish(all []Finding) []Finding {
	seen := make(map[string]bool, len(all))
	out := all[:0]
	for _, f := range all {
		key := f.Severity + "\x00" + f.Message
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Message < out[j].Message
	})
	for i := range out {
		p := out[i].posPath
		if p == "" {
			p = out[i].Path
		}
		out[i].Line, out[i].Column = c.pos.lookup(p)
	}
	return out
}

func (c *Config) validateDefaults() []Finding {
	rv := &resolver{c: c}
	d := c.Defaults
	h, _ := rv.lookupHarness("defaults", "")
	if h != nil {
		rv.decodeOptions("defaults", h, d.HarnessOptions)
		if d.Model != "" {
			if err := h.ValidateModel(d.Model); err != nil {
				rv.errorf("defaults.model", "%v", err)
			}
		}
	}
	rv.checkMaxTurns("defaults.max_turns", d.MaxTurns, h)
	if d.Workspace != "" {
		if _, err := c.absPath(d.Workspace); err != nil {
			rv.errorf("defaults.workspace", "%v", err)
		}
	}
	return rv.findings
}

// ValidName is the rule for template, task and agent names (names.Valid).
func ValidName(name string) bool { return names.Valid(name) }

const nameRule = names.Rule

func (c *Config) validateTemplate(name string) []Finding {
	t := c.Templates[name]
	_, fs := c.resolveTemplate(name, t)
	rv := &resolver{c: c, findings: fs}
	rv.notifiers("templates."+name, t.Notify, templateEvents)
	fs = rv.findings
	if !ValidName(name) {
		scope := "templates." + name
		fs = append(fs, Finding{Severity: SeverityError, Path: scope, posPath: scope,
			Message: fmt.Sprintf("%s: invalid template name %q (%s)", scope, name, nameRule)})
	}
	return fs
}

func (c *Config) validateTask(name string, pc *promptChecker) []Finding {
	t := c.Tasks[name]
	r, fs := c.resolveTask(name, t)
	rv := &resolver{c: c, findings: fs}
	scope := r.Scope
	rv.notifiers(scope, t.Notify, taskEvents(t))
	if !ValidName(name) {
		rv.add(SeverityError, scope, scope, fmt.Sprintf("%s: invalid task name %q (%s)", scope, name, nameRule))
	}

	if t.Schedule != "" {
		if err := checkSchedule(t.Schedule, t.Timezone); err != nil {
			rv.errorf(scope+".schedule", "%v", err)
		}
	}
	if t.Timezone != "" {
		if _, err := loadLocation(t.Timezone); err != nil {
			rv.errorf(scope+".timezone", "%v", err)
		}
	}

	if t.PromptFile == "" {
		rv.errorf(scope+".prompt_file", "required: the file holding the task's prompt, relative to the task workspace (%s)", r.Workspace)
	} else if msg := pc.check(t.PromptFile, r.PromptFile, r.Workspace); msg != "" {
		rv.errorf(scope+".prompt_file", "%s", msg)
	}

	if t.Template != "" {
		target, ok := c.Templates[t.Template]
		switch {
		case r.Runtime != RuntimePersistent:
			rv.errorf(scope+".template", "only used with runtime: %s (the task delivers into that template's agent)", RuntimePersistent)
		case !ok:
			rv.errorf(scope+".template", "no template named %q", t.Template)
		default:
			rv.subset(scope+".channels", t.Channels, target.Channels, "templates."+t.Template+".channels")
			rv.subset(scope+".dev_channels", t.DevChannels, target.DevChannels, "templates."+t.Template+".dev_channels")
			rv.unusedWithTemplate(scope, t)
		}
	}
	return rv.findings
}

// unusedWithTemplate warns about fields of a persistent task that has a
// target template: the prompt goes into that template's agent, which runs
// with the template's settings, so the task's own launch settings are unused.
func (rv *resolver) unusedWithTemplate(scope string, t *Task) {
	set := map[string]bool{
		"harness":            t.Harness != "",
		"model":              t.Model != "",
		"max_turns":          t.MaxTurns != nil,
		"harness_options":    len(t.HarnessOptions) > 0,
		"env":                len(t.Env) > 0,
		"idle_suspend_after": t.IdleSuspendAfter != "",
		"queue_max":          t.QueueMax != nil,
		"on_limit":           t.OnLimit != "",
		"worktree":           t.Worktree != nil,
	}
	for _, field := range slices.Sorted(maps.Keys(set)) {
		if set[field] {
			rv.warnf(scope+"."+field, "ignored: the task delivers into the agent of templates.%s, which runs with that template's settings", t.Template)
		}
	}
}

// subset requires every item of have to be in of: a persistent task can only
// use channels its target agent was started with.
func (rv *resolver) subset(path string, have, of []string, ofPath string) {
	in := make(map[string]bool, len(of))
	for _, s := range of {
		in[s] = true
	}
	for _, s := range have {
		if !in[s] {
			rv.errorf(path, "%q is not in %s (a persistent task can only use its target agent's channels)", s, ofPath)
		}
	}
}

// promptChecker requires each prompt file to exist inside its task
// workspace, lexically and after following symlinks. Many tasks share a
// workspace and a prompts directory, so it remembers the real path of each
// directory it resolved. Safe for concurrent use.
type promptChecker struct {
	mu   sync.Mutex
	real map[string]string // directory -> real path ("" if it does not resolve)
}

func (pc *promptChecker) realPath(dir string) string {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.real == nil {
		pc.real = map[string]string{}
	}
	if r, ok := pc.real[dir]; ok {
		return r
	}
	r, err := filepath.EvalSymlinks(dir)
	if err != nil {
		r = ""
	}
	pc.real[dir] = r
	return r
}

func (pc *promptChecker) check(written, abs, workspace string) string {
	if !within(workspace, abs) {
		return fmt.Sprintf("%q is outside the task workspace (%s)", written, workspace)
	}
	realWS := pc.realPath(workspace)
	if realWS == "" {
		return fmt.Sprintf("%q not found: the task workspace %s does not exist", written, workspace)
	}
	notFound := fmt.Sprintf("%q not found in the task workspace (%s)", written, workspace)
	realDir := pc.realPath(filepath.Dir(abs))
	if realDir == "" {
		return notFound
	}
	real := filepath.Join(realDir, filepath.Base(abs))
	info, err := os.Lstat(real)
	if err == nil && info.Mode()&os.ModeSymlink != 0 {
		if real, err = filepath.EvalSymlinks(real); err == nil {
			info, err = os.Stat(real)
		}
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return notFound
		}
		return fmt.Sprintf("%q cannot be read: %v", written, err)
	}
	if !within(realWS, real) {
		return fmt.Sprintf("%q resolves outside the task workspace (%s) through a symlink", written, workspace)
	}
	if !info.Mode().IsRegular() {
		return fmt.Sprintf("%q is not a regular file", written)
	}
	return checkPromptText(written, real)
}

// maxPromptCheck bounds how much of a prompt file validation reads.
const maxPromptCheck = 4 << 20

// checkPromptText refuses a prompt file that is not UTF-8: the prompt is
// text a harness is given as it is, and leo never changes a byte of it
// (nor lets JSON do so on the way). The run checks again (the file may
// change after validation).
func checkPromptText(written, path string) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("%q cannot be read: %v", written, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPromptCheck))
	if err != nil {
		return fmt.Sprintf("%q cannot be read: %v", written, err)
	}
	if !utf8.Valid(data) {
		off := 0
		for off < len(data) {
			r, size := utf8.DecodeRune(data[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		// A rune cut by the read's bound is not the file's fault.
		if cut := len(data) == maxPromptCheck && off > len(data)-utf8.UTFMax; !cut {
			return fmt.Sprintf("%q is not valid UTF-8 (byte 0x%02x at byte %d); leo refuses a prompt it would have to change", written, data[off], off)
		}
	}
	return ""
}

// within reports whether p is strictly inside dir (both clean and absolute).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil || rel == "." || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func (c *Config) validateScheduler() []Finding {
	rv := &resolver{c: c}
	s := c.Scheduler
	for _, f := range []struct {
		key string
		n   *int
	}{
		{"max_concurrent_runs", s.MaxConcurrentRuns},
		{"history_keep", s.HistoryKeep},
		{"logs_keep", s.LogsKeep},
	} {
		if f.n != nil && *f.n < 1 {
			rv.errorf("scheduler."+f.key, "must be at least 1, got %d", *f.n)
		}
	}
	return rv.findings
}

func (c *Config) validateWeb() []Finding {
	rv := &resolver{c: c}
	w := c.Web
	if w.Port != nil && (*w.Port < 1 || *w.Port > 65535) {
		rv.errorf("web.port", "must be between 1 and 65535, got %d", *w.Port)
	}
	bind := w.BindAddr()
	loopback := false
	switch {
	case w.Bind != "" && strings.TrimSpace(w.Bind) != w.Bind:
		rv.errorf("web.bind", "%q has surrounding spaces", w.Bind)
	case hasPort(bind):
		rv.errorf("web.bind", "%q includes a port; put the address in web.bind and the port in web.port", bind)
	case !validHost(bind):
		rv.errorf("web.bind", "%q is not an IP address or host name", bind)
	default:
		loopback = isLoopback(bind)
	}
	if !loopback && validHost(bind) && !hasPort(bind) && len(w.AllowedHosts) == 0 {
		rv.errorf("web.allowed_hosts", "required when web.bind (%s) is not a loopback address: list the host names browsers use to reach leo", bind)
	}
	for _, h := range w.AllowedHosts {
		host := h
		if hh, port, ok := splitPort(h); ok {
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				rv.errorf("web.allowed_hosts", "%q has an invalid port", h)
				continue
			}
			host = hh
		}
		if !validHost(host) {
			rv.errorf("web.allowed_hosts", "%q is not a host name (write host or host:port, without a scheme or path)", h)
		}
	}
	return rv.findings
}

// splitPort splits host:port when addr is a valid host followed by a
// numeric port ("http://x" is not: its "port" is "//x").
func splitPort(addr string) (host, port string, ok bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !validHost(host) || port == "" {
		return "", "", false
	}
	for _, r := range port {
		if r < '0' || r > '9' {
			return "", "", false
		}
	}
	return host, port, true
}

func hasPort(addr string) bool {
	_, _, ok := splitPort(addr)
	return ok
}

// validHost accepts an IP literal or a DNS-style host name.
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return false
			}
		}
	}
	return true
}

func isLoopback(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func isWildcard(h string) bool {
	ip := net.ParseIP(h)
	return ip != nil && ip.IsUnspecified()
}

func joinHostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}

var locations sync.Map // zone name -> *time.Location

// loadLocation is time.LoadLocation with a cache: a config with a thousand
// tasks in one zone reads the zone database once.
func loadLocation(tz string) (*time.Location, error) {
	if l, ok := locations.Load(tz); ok {
		return l.(*time.Location), nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q (use an IANA name such as Europe/Berlin or America/New_York)", tz)
	}
	locations.Store(tz, loc)
	return loc, nil
}

package config

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
)

// The notify: section (docs/configuration/reference.md "notify", docs/notifications.md):
// a list of notifiers at the top level, which a template or a task may
// replace with its own list. Each notifier runs a command and/or posts to
// a webhook for the events it lists. Its webhook URL and env values are
// secrets: no error, listing or log repeats them.

// Notifier defaults and bounds.
const (
	DefaultNotifyTimeout = 10 * time.Second
	MaxNotifyTimeout     = 5 * time.Minute
	DefaultNotifyRetries = 3
	MaxNotifyRetries     = 10
)

// Notifier is one entry of a notify: list, as written.
type Notifier struct {
	// Command is the program and its arguments (never run through a shell).
	Command []string
	// Webhook is the URL as written (it may hold ${VAR}): a secret.
	Webhook string
	Events  []string
	// Env is added to the command's environment: values are secrets.
	Env     map[string]string
	Timeout string
	Retries *int
}

// notifierKeys are the keys of a notify: entry; any other is an error.
var notifierKeys = []string{"command", "webhook", "events", "env", "timeout", "retries"}

// ResolvedNotifier is a notify: entry ready to run.
type ResolvedNotifier struct {
	// Name is the entry's field path: "notify[0]", "templates.x.notify[1]".
	// Logs, errors and /health name a notifier by it, never by its URL.
	Name    string
	Command []string
	// Webhook is the URL with ${VAR} expanded: a secret.
	Webhook string
	Events  []string
	// Env holds the expanded values: secrets. Listings show EnvKeys.
	Env     map[string]string
	EnvKeys []string
	Timeout time.Duration
	Retries int
}

// Listens reports whether the notifier sends the notify event.
func (n ResolvedNotifier) Listens(event string) bool { return slices.Contains(n.Events, event) }

// notifyPath is the notify: list's path in a scope ("" is the top level).
func notifyPath(scope string) string {
	if scope == "" {
		return "notify"
	}
	return scope + ".notify"
}

// notifyList decodes a notify: list at path. set reports that the key has
// a list (an empty one turns notifications off for the scope); null, like
// any key with nothing after it, is unset.
func (d *decoder) notifyList(path string, v *node) (list []Notifier, set bool) {
	if isNull(v) {
		return nil, false
	}
	if v.Kind != sequenceNode {
		d.errorf(path, "expected a list of notifiers (each with command: and/or webhook:, and events:), got %s", kindOf(v))
		return nil, false
	}
	list = make([]Notifier, 0, len(v.Content))
	for i, item := range v.Content {
		list = append(list, d.notifier(fmt.Sprintf("%s[%d]", path, i), item))
	}
	return list, true
}

func (d *decoder) notifier(path string, v *node) Notifier {
	var n Notifier
	if isNull(v) || v.Kind != mappingNode {
		d.errorf(path, "expected a mapping (command:, webhook:, events:, env:, timeout:, retries:), got %s", kindOf(v))
		return n
	}
	m := entries(v, 0)
	for _, e := range m {
		if !slices.Contains(notifierKeys, e.key) {
			d.errorf(path, "unknown key %q (valid: %s)", e.key, strings.Join(notifierKeys, ", "))
		}
	}
	if c := m.get("command"); !isNull(c) && c.Kind == scalarNode {
		d.errorf(path+".command", "expected a list of strings (the program, then each argument: leo runs no shell), got %s", kindOf(c))
	} else {
		n.Command = d.strList(path, m, "command")
	}
	n.Webhook = d.str(path, m, "webhook")
	n.Events = d.strList(path, m, "events")
	n.Env = d.env(path, m)
	n.Timeout = d.duration(path, m, "timeout")
	n.Retries = d.intp(path, m, "retries")
	return n
}

// notifiers resolves a scope's notify: list ("" is the top level) and
// reports what is wrong with it. scopeEvents, when not nil, says which
// events can fire for the scope: an entry listing one that cannot is
// worth a warning.
func (rv *resolver) notifiers(scope string, list []Notifier, scopeEvents func(string) (bool, string)) []ResolvedNotifier {
	out := make([]ResolvedNotifier, 0, len(list))
	for i, n := range list {
		name := fmt.Sprintf("%s[%d]", notifyPath(scope), i)
		r := ResolvedNotifier{Name: name, Command: slices.Clone(n.Command), Timeout: DefaultNotifyTimeout, Retries: DefaultNotifyRetries}
		if len(n.Command) == 0 && n.Webhook == "" {
			rv.errorf(name, "needs a command: (a list: the program and its arguments) or a webhook: (an http or https URL), or both")
		}
		if n.Webhook != "" {
			r.Webhook = rv.c.expandEnv(n.Webhook)
			if msg := checkWebhook(r.Webhook); msg != "" {
				if r.Webhook == "" {
					msg = "is empty after expanding ${…} from leo's environment (is the variable set where the daemon runs?)"
				}
				rv.errorf(name+".webhook", "%s", msg)
			}
		}
		seen := map[string]bool{}
		for _, e := range n.Events {
			switch {
			case !api.IsNotifyEvent(e):
				rv.errorf(name+".events", "unknown event %q (valid: %s)", e, strings.Join(api.NotifyEvents, ", "))
			case seen[e]:
			default:
				seen[e] = true
				r.Events = append(r.Events, e)
				if scopeEvents != nil {
					if ok, why := scopeEvents(e); !ok {
						rv.warnf(name+".events", "%s never fires here: %s", e, why)
					}
				}
			}
		}
		if len(n.Events) == 0 {
			rv.errorf(name+".events", "required: the events to send (%s)", strings.Join(api.NotifyEvents, ", "))
		}
		if len(n.Env) > 0 {
			r.Env = make(map[string]string, len(n.Env))
			for k, v := range n.Env {
				r.Env[k] = rv.c.expandEnv(v)
			}
			r.EnvKeys = slices.Sorted(maps.Keys(r.Env))
			if len(n.Command) == 0 {
				rv.warnf(name+".env", "ignored: env: is for the command, and this notifier has none")
			}
		}
		if n.Timeout != "" {
			if d := rv.positiveDuration(name+".timeout", n.Timeout); d > MaxNotifyTimeout {
				rv.errorf(name+".timeout", "must be at most %s, got %q", MaxNotifyTimeout, n.Timeout)
			} else if d > 0 {
				r.Timeout = d
			}
		}
		if n.Retries != nil {
			if *n.Retries < 0 || *n.Retries > MaxNotifyRetries {
				rv.errorf(name+".retries", "must be between 0 and %d, got %d", MaxNotifyRetries, *n.Retries)
			} else {
				r.Retries = *n.Retries
			}
		}
		out = append(out, r)
	}
	return out
}

// checkWebhook says what is wrong with a webhook URL, in words that never
// repeat any part of it (its path, query or user info may be the secret).
func checkWebhook(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "is not a valid URL"
	case u.Scheme != "http" && u.Scheme != "https":
		return "must be an http:// or https:// URL"
	case u.Host == "" || u.Hostname() == "":
		return "has no host"
	case u.Port() != "" && !validPort(u.Port()):
		return "has an invalid port"
	}
	return ""
}

func validPort(p string) bool {
	n := 0
	for _, r := range p {
		if r < '0' || r > '9' {
			return false
		}
		n = n*10 + int(r-'0')
		if n > 65535 {
			return false
		}
	}
	return n >= 1
}

func (c *Config) validateNotify() []Finding {
	rv := &resolver{c: c}
	rv.notifiers("", c.Notify, nil)
	return rv.findings
}

// templateEvents says which notify events can fire for a template's
// agents: every event but a task run's.
func templateEvents(e string) (bool, string) {
	if e == api.NotifyTaskFailed || e == api.NotifyTaskSucceeded {
		return false, "a template's agents run no tasks (a task's runs notify through the task's own notify: or the top level's)"
	}
	return true, ""
}

// taskEvents says which notify events can fire for a task: its runs',
// and its agent's only when it is a persistent task with an agent of its
// own (with template:, the agent's events go to the template's list).
func taskEvents(t *Task) func(string) (bool, string) {
	return func(e string) (bool, string) {
		if e == api.NotifyTaskFailed || e == api.NotifyTaskSucceeded {
			return true, ""
		}
		switch {
		case t.Runtime != RuntimePersistent:
			return false, "a one-shot task runs headless, without an agent"
		case t.Template != "":
			return false, fmt.Sprintf("the task's agent is templates.%s's, whose notify: list (or the top level's) gets its events", t.Template)
		}
		return true, ""
	}
}

// Notifiers are the notify: entries the events of a scope go to: the
// scope's own list when it sets one (an empty list: none), else the top
// level's. section is SectionTemplates or SectionTasks; a scope the
// config does not have (a template removed since its agent was spawned)
// gets the top level's.
func (c *Config) Notifiers(section, name string) []ResolvedNotifier {
	rv := &resolver{c: c}
	switch section {
	case SectionTemplates:
		if t, ok := c.Templates[name]; ok && t.NotifySet {
			return rv.notifiers("templates."+name, t.Notify, nil)
		}
	case SectionTasks:
		if t, ok := c.Tasks[name]; ok && t.NotifySet {
			return rv.notifiers("tasks."+name, t.Notify, nil)
		}
	}
	return rv.notifiers("", c.Notify, nil)
}

// AllNotifiers lists every notify: entry of the config: the top level's,
// then each template's and each task's own, in name order.
func (c *Config) AllNotifiers() []ResolvedNotifier {
	rv := &resolver{c: c}
	out := rv.notifiers("", c.Notify, nil)
	for _, name := range c.TemplateNames() {
		if t := c.Templates[name]; t.NotifySet {
			out = append(out, rv.notifiers("templates."+name, t.Notify, nil)...)
		}
	}
	for _, name := range c.TaskNames() {
		if t := c.Tasks[name]; t.NotifySet {
			out = append(out, rv.notifiers("tasks."+name, t.Notify, nil)...)
		}
	}
	return out
}

// NotifyScope is the scope a notifier's name belongs to: "notify" for the
// top level's, else "templates.x" or "tasks.y".
func NotifyScope(notifierName string) string {
	scope, _, ok := strings.Cut(notifierName, ".notify[")
	if !ok {
		return "notify"
	}
	return scope
}

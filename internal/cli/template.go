package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
)

func init() { register(newTemplateCmd) }

func newTemplateCmd(f *Factory) *cobra.Command {
	cmd := groupCommand("template", "List and inspect agent templates")
	cmd.AddCommand(newTemplateListCmd(f), newTemplateShowCmd(f))
	return cmd
}

// TemplateListOptions are the inputs of `leo template list`.
type TemplateListOptions struct {
	IO     *IOStreams
	Config *config.Config
	JSON   bool
}

func newTemplateListCmd(f *Factory) *cobra.Command {
	opts := &TemplateListOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List templates with their resolved harness, model and workspace",
		Args:    cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			cfg, _, err := f.LoadConfig()
			if err != nil {
				return err
			}
			opts.Config = cfg
			return runTemplateList(opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

// templateRow is one template in `leo template list --json`. Field names are
// an API.
type templateRow struct {
	Name             string `json:"name"`
	Harness          string `json:"harness"`
	HarnessInherited bool   `json:"harness_inherited"`
	Model            string `json:"model"`
	ModelInherited   bool   `json:"model_inherited"`
	Workspace        string `json:"workspace"`
}

type templateListJSON struct {
	Templates []templateRow `json:"templates"`
}

func runTemplateList(opts *TemplateListOptions) error {
	rows := []templateRow{}
	for _, name := range opts.Config.TemplateNames() {
		r, err := opts.Config.ResolveTemplate(name)
		if err != nil {
			return invalidConfigError(opts.Config.Path, err)
		}
		rows = append(rows, templateRow{
			Name: name, Harness: r.HarnessName, HarnessInherited: r.HarnessInherited,
			Model: r.Model, ModelInherited: r.ModelInherited, Workspace: r.Workspace,
		})
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, templateListJSON{Templates: rows})
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintf(opts.IO.Out, "no templates in %s\n", opts.Config.Path)
		return err
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tHARNESS\tMODEL\tWORKSPACE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name,
			markInherited(r.Harness, r.HarnessInherited),
			markInherited(orDash(r.Model), r.ModelInherited), r.Workspace)
	}
	return tw.Flush()
}

// TemplateShowOptions are the inputs of `leo template show`.
type TemplateShowOptions struct {
	IO       *IOStreams
	Config   *config.Config
	Name     string
	Resolved bool
	JSON     bool
}

func newTemplateShowCmd(f *Factory) *cobra.Command {
	opts := &TemplateShowOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "show <name>",
		Short: "Show a template as written, or resolved through the cascade",
		Long: `Show templates.<name> as written in leo.yaml, or with --resolved after the
harness cascade: the harness, model and harness_options it really runs with,
each inherited value marked. env: is shown as key names only, never values.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			cfg, _, err := f.LoadConfig()
			if err != nil {
				return err
			}
			opts.Config, opts.Name = cfg, args[0]
			return runTemplateShow(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Resolved, "resolved", false, "show the template after the cascade, inherited values marked")
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

// templateRawJSON is `leo template show <name> --json`: the scope as
// written (unset fields empty). Field names are an API.
type templateRawJSON struct {
	Scope            string         `json:"scope"`
	Name             string         `json:"name"`
	Resolved         bool           `json:"resolved"`
	Harness          string         `json:"harness"`
	Model            string         `json:"model"`
	MaxTurns         *int           `json:"max_turns"`
	Workspace        string         `json:"workspace"`
	HarnessOptions   map[string]any `json:"harness_options"`
	Channels         []string       `json:"channels"`
	DevChannels      []string       `json:"dev_channels"`
	EnvKeys          []string       `json:"env_keys"`
	IdleSuspendAfter string         `json:"idle_suspend_after"`
	QueueMax         *int           `json:"queue_max"`
	// Worktree is the template's worktree: as written; null when unset.
	Worktree *bool `json:"worktree"`
	// Notify is the template's own notify: list; null when it sets none
	// (the top level's applies).
	Notify []notifierJSON `json:"notify"`
}

// optionJSON is one resolved harness option.
type optionJSON struct {
	Value     any  `json:"value"`
	Inherited bool `json:"inherited"`
}

// templateResolvedJSON is `leo template show <name> --resolved --json`.
// Field names are an API.
type templateResolvedJSON struct {
	Scope            string                `json:"scope"`
	Name             string                `json:"name"`
	Resolved         bool                  `json:"resolved"`
	Harness          string                `json:"harness"`
	HarnessInherited bool                  `json:"harness_inherited"`
	Model            string                `json:"model"`
	ModelInherited   bool                  `json:"model_inherited"`
	MaxTurns         int                   `json:"max_turns"`
	Workspace        string                `json:"workspace"`
	Options          map[string]optionJSON `json:"options"`
	Channels         []string              `json:"channels"`
	DevChannels      []string              `json:"dev_channels"`
	EnvKeys          []string              `json:"env_keys"`
	IdleSuspendAfter string                `json:"idle_suspend_after"`
	QueueMax         int                   `json:"queue_max"`
	// Worktree: each agent of the template gets its own git worktree.
	Worktree bool `json:"worktree"`
	// Notify is the notify: list the template's agents' events go to:
	// its own, else the top level's (names say which).
	Notify []notifierJSON `json:"notify"`
}

func runTemplateShow(opts *TemplateShowOptions) error {
	t, ok := opts.Config.Templates[opts.Name]
	if !ok {
		return unknownScopeError("template", opts.Name, opts.Config.TemplateNames())
	}
	if !opts.Resolved {
		raw := templateRawJSON{
			Scope: "templates." + opts.Name, Name: opts.Name,
			Harness: t.Harness, Model: t.Model, MaxTurns: t.MaxTurns, Workspace: t.Workspace,
			HarnessOptions: maskOptions(t.HarnessOptions), Channels: nonNil(t.Channels),
			DevChannels: nonNil(t.DevChannels), EnvKeys: sortedEnvKeys(t.Env),
			IdleSuspendAfter: t.IdleSuspendAfter, QueueMax: t.QueueMax, Worktree: t.Worktree,
		}
		if t.NotifySet {
			raw.Notify = notifierRows(opts.Config.Notifiers(config.SectionTemplates, opts.Name))
		}
		if opts.JSON {
			return writeJSON(opts.IO.Out, raw)
		}
		return printTemplateRaw(opts.IO.Out, opts.Config, raw)
	}

	r, err := opts.Config.ResolveTemplate(opts.Name)
	if err != nil {
		return invalidConfigError(opts.Config.Path, err)
	}
	res := templateResolvedJSON{
		Scope: r.Scope, Name: r.Name, Resolved: true,
		Harness: r.HarnessName, HarnessInherited: r.HarnessInherited,
		Model: r.Model, ModelInherited: r.ModelInherited, MaxTurns: r.MaxTurns,
		Workspace: r.Workspace, Options: map[string]optionJSON{},
		Channels: nonNil(r.Channels), DevChannels: nonNil(r.DevChannels),
		EnvKeys: nonNil(r.EnvKeys), IdleSuspendAfter: formatDuration(r.IdleSuspendAfter),
		QueueMax: r.QueueMax, Worktree: r.Worktree,
		Notify: notifierRows(opts.Config.Notifiers(config.SectionTemplates, opts.Name)),
	}
	for k, v := range r.Options {
		res.Options[k] = optionJSON{Value: maskOption(k, v), Inherited: r.OptionsInherited[k]}
	}
	if opts.JSON {
		return writeJSON(opts.IO.Out, res)
	}
	return printTemplateResolved(opts.IO.Out, res)
}

func printTemplateRaw(w io.Writer, cfg *config.Config, t templateRawJSON) error {
	p := &fieldPrinter{w: w}
	p.title("%s (as written in %s)", t.Scope, cfg.Path)
	p.field("harness", orUnset(t.Harness, "inherits "+cfg.DefaultsHarnessName()))
	p.field("model", orUnset(t.Model, "cascades"))
	if t.MaxTurns != nil {
		p.field("max_turns", fmt.Sprint(*t.MaxTurns))
	} else {
		p.field("max_turns", "(unset)")
	}
	p.field("workspace", orUnset(t.Workspace, "default"))
	p.options("harness_options", optionLines(t.HarnessOptions, nil))
	p.list("channels", t.Channels)
	p.list("dev_channels", t.DevChannels)
	p.envKeys(t.EnvKeys)
	p.field("idle_suspend_after", orUnset(t.IdleSuspendAfter, "never"))
	if t.QueueMax != nil {
		p.field("queue_max", fmt.Sprint(*t.QueueMax))
	} else {
		p.field("queue_max", "(unset)")
	}
	if t.Worktree != nil {
		p.field("worktree", fmt.Sprint(*t.Worktree))
	} else {
		p.field("worktree", "(unset: false)")
	}
	if t.Notify == nil {
		p.field("notify", "(unset: the top level's notify: list)")
	} else {
		p.notifiers(t.Notify)
	}
	return p.err
}

func printTemplateResolved(w io.Writer, t templateResolvedJSON) error {
	p := &fieldPrinter{w: w}
	p.title("%s (resolved)", t.Scope)
	p.field("harness", markInherited(t.Harness, t.HarnessInherited))
	p.field("model", markInherited(orDefault(t.Model), t.ModelInherited))
	p.field("max_turns", maxTurnsText(t.MaxTurns))
	p.field("workspace", t.Workspace)
	values := make(map[string]any, len(t.Options))
	inherited := make(map[string]bool, len(t.Options))
	for k, o := range t.Options {
		values[k], inherited[k] = o.Value, o.Inherited
	}
	p.options("options", optionLines(values, inherited))
	p.list("channels", t.Channels)
	p.list("dev_channels", t.DevChannels)
	p.envKeys(t.EnvKeys)
	p.field("idle_suspend_after", orUnset(t.IdleSuspendAfter, "never"))
	p.field("queue_max", fmt.Sprint(t.QueueMax))
	p.field("worktree", fmt.Sprint(t.Worktree))
	p.notifiers(t.Notify)
	return p.err
}

// notifierJSON is one notify: entry in a listing: never its arguments,
// its URL or its env values. Field names are an API.
type notifierJSON struct {
	Name string `json:"name"`
	// Program is the command's program (argv[0]); Args counts the rest.
	Program string `json:"program,omitempty"`
	Args    int    `json:"args,omitempty"`
	// Webhook is "***" when the entry has one.
	Webhook string   `json:"webhook,omitempty"`
	Events  []string `json:"events"`
	EnvKeys []string `json:"env_keys"`
	Timeout string   `json:"timeout"`
	Retries int      `json:"retries"`
}

func notifierRows(list []config.ResolvedNotifier) []notifierJSON {
	out := []notifierJSON{}
	for _, n := range list {
		row := notifierJSON{Name: n.Name, Events: nonNil(n.Events), EnvKeys: nonNil(n.EnvKeys),
			Timeout: formatDuration(n.Timeout), Retries: n.Retries}
		if len(n.Command) > 0 {
			row.Program, row.Args = newScrubber(n.Env).scrub(n.Command[0]), len(n.Command)-1
		}
		if n.Webhook != "" {
			row.Webhook = masked
		}
		out = append(out, row)
	}
	return out
}

// fieldPrinter prints "name: value" lines aligned in one column and keeps
// the first write error.
type fieldPrinter struct {
	w   io.Writer
	err error
}

func (p *fieldPrinter) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func (p *fieldPrinter) title(format string, args ...any) { p.printf(format+"\n", args...) }

func (p *fieldPrinter) field(name, value string) {
	p.printf("  %-20s %s\n", name+":", value)
}

func (p *fieldPrinter) list(name string, items []string) {
	if len(items) == 0 {
		p.field(name, "(none)")
		return
	}
	p.field(name, strings.Join(items, ", "))
}

// envKeys prints env: as key names only: values may be secrets.
func (p *fieldPrinter) envKeys(keys []string) {
	if len(keys) == 0 {
		p.field("env", "(none)")
		return
	}
	p.field("env", strings.Join(keys, ", ")+"  (values hidden)")
}

// notifiers prints a notify: list, one line per entry, its secrets hidden.
func (p *fieldPrinter) notifiers(list []notifierJSON) {
	if len(list) == 0 {
		p.field("notify", "(none: notifications off)")
		return
	}
	p.printf("  %s\n", "notify:")
	for _, n := range list {
		var parts []string
		if n.Program != "" {
			parts = append(parts, fmt.Sprintf("command %s (+%d args)", cell(n.Program, 80), n.Args))
		}
		if n.Webhook != "" {
			parts = append(parts, "webhook "+masked)
		}
		line := fmt.Sprintf("%s: %s; events %s", n.Name, strings.Join(parts, ", "), strings.Join(n.Events, ", "))
		if len(n.EnvKeys) > 0 {
			line += "; env " + strings.Join(n.EnvKeys, ", ") + " (values hidden)"
		}
		p.printf("    %s; timeout %s, retries %d\n", line, n.Timeout, n.Retries)
	}
}

func (p *fieldPrinter) options(name string, lines []string) {
	if len(lines) == 0 {
		p.field(name, "(none)")
		return
	}
	p.printf("  %s\n", name+":")
	for _, l := range lines {
		p.printf("    %s\n", l)
	}
}

// optionLines renders options sorted by key, marking inherited ones.
func optionLines(values map[string]any, inherited map[string]bool) []string {
	lines := make([]string, 0, len(values))
	for _, k := range slices.Sorted(maps.Keys(values)) {
		lines = append(lines, fmt.Sprintf("%-20s %s", k+":", markInherited(formatValue(values[k]), inherited[k])))
	}
	return lines
}

// formatValue renders an option value on one line.
func formatValue(v any) string {
	switch x := v.(type) {
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatValue(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + formatValue(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	default:
		return fmt.Sprint(v)
	}
}

func markInherited(value string, inherited bool) string {
	if inherited {
		return value + " (inherited)"
	}
	return value
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orDefault(model string) string {
	if model == "" {
		return "(harness default)"
	}
	return model
}

func orUnset(s, meaning string) string {
	if s == "" {
		return "(unset: " + meaning + ")"
	}
	return s
}

func maxTurnsText(n int) string {
	if n == 0 {
		return "0 (no limit)"
	}
	return fmt.Sprint(n)
}

// formatDuration prints 30m instead of 30m0s; "" for zero.
func formatDuration(d time.Duration) string {
	if d == 0 {
		return ""
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// sortedEnvKeys lists env's keys sorted; [] (never null in JSON) for none.
func sortedEnvKeys(env map[string]string) []string {
	return nonNil(slices.Sorted(maps.Keys(env)))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// maskOptions copies harness_options with the value of any secret-looking
// key (at any depth) replaced by ***. No built-in option holds a secret; a
// future adapter's might.
func maskOptions(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = maskOption(k, v)
	}
	return out
}

func maskOption(key string, v any) any {
	if looksSecret(key) {
		return masked
	}
	return (&scrubber{}).maskValue(v)
}

// maxListedNames caps the names an error message lists.
const maxListedNames = 20

// unknownScopeError is not_found for a template or task name, listing the
// names that exist.
func unknownScopeError(kind, name string, known []string) error {
	list := "none"
	switch {
	case len(known) > maxListedNames:
		list = strings.Join(known[:maxListedNames], ", ") + fmt.Sprintf(", … and %d more", len(known)-maxListedNames)
	case len(known) > 0:
		list = strings.Join(known, ", ")
	}
	return api.Errorf(api.CodeNotFound, "%s %q not found in leo.yaml (%ss: %s)", kind, name, kind, list)
}

package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
)

func init() { register(newValidateCmd) }

// ValidateOptions are the inputs of `leo validate`.
type ValidateOptions struct {
	IO     *IOStreams
	Home   home.Home
	Getenv func(string) string
	JSON   bool
}

func newValidateCmd(f *Factory) *cobra.Command {
	opts := &ValidateOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check leo.yaml the way the daemon and the web UI do",
		Long: `Load leo.yaml and run the same validation the daemon runs at boot and the
web UI runs on every save. Every problem is listed at once with its
severity and the exact scope and field it concerns. Exit status is 0 when
there are no errors (warnings allowed) and 3 (config_error) otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			h, err := f.Home()
			if err != nil {
				return err
			}
			opts.Home, opts.Getenv = h, f.Getenv
			return runValidate(opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

// findingJSON is one finding in `leo validate --json`. Field names are an API.
type findingJSON struct {
	Severity string `json:"severity"` // "error" | "warning"
	Path     string `json:"path"`     // scope and field, e.g. "templates.foo.model"
	Message  string `json:"message"`  // the whole text, starting with the path
	Line     int    `json:"line,omitempty"`
	Column   int    `json:"column,omitempty"`
}

// validateResult is the JSON of `leo validate --json`, success or failure.
// On failure Error and Message are set (the JSON rule) and OK is false.
type validateResult struct {
	OK       bool          `json:"ok"`
	Error    api.Code      `json:"error,omitempty"`
	Message  string        `json:"message,omitempty"`
	Config   string        `json:"config"`
	Findings []findingJSON `json:"findings"`
}

// validateFailure is a config that could not be read or has errors. Its
// JSON failure object keeps the findings next to the error code.
type validateFailure struct {
	result validateResult
}

func (v *validateFailure) Error() string       { return v.result.Message }
func (v *validateFailure) ErrorCode() api.Code { return api.CodeConfigError }
func (v *validateFailure) JSONBody() any       { return v.result }

func runValidate(opts *ValidateOptions) error {
	res := validateResult{Config: opts.Home.ConfigPath, Findings: []findingJSON{}}

	cfg, err := readConfig(opts.Home, opts.Getenv)
	if err != nil {
		res.Error, res.Message = api.CodeConfigError, err.Error()
		return &validateFailure{result: res}
	}

	var errs, warnings int
	for _, f := range cfg.Findings() {
		res.Findings = append(res.Findings, findingJSON{
			Severity: f.Severity, Path: f.Path, Message: f.Message, Line: f.Line, Column: f.Column,
		})
		if f.Severity == config.SeverityError {
			errs++
		} else {
			warnings++
		}
	}
	res.OK = errs == 0

	if !res.OK {
		res.Error = api.CodeConfigError
		res.Message = fmt.Sprintf("%s: %s", res.Config, countSummary(errs, warnings))
	}
	if opts.JSON {
		if res.OK {
			return writeJSON(opts.IO.Out, res)
		}
		return &validateFailure{result: res} // Run prints res as the JSON failure
	}

	printFindings(opts.IO.Out, res.Config, res.Findings)
	if !res.OK {
		return &validateFailure{result: res}
	}
	_, err = fmt.Fprintf(opts.IO.Out, "%s: valid (%s, %s%s)\n", res.Config,
		plural(len(cfg.TemplateNames()), "template"), plural(len(cfg.TaskNames()), "task"),
		warningSuffix(warnings))
	return err
}

// printFindings writes one line per finding, compiler style:
// <file>:<line>:<col>: <severity>: <message>.
func printFindings(w io.Writer, file string, fs []findingJSON) {
	for _, f := range fs {
		if f.Line > 0 {
			fmt.Fprintf(w, "%s:%d:%d: %s: %s\n", file, f.Line, f.Column, f.Severity, f.Message)
		} else {
			fmt.Fprintf(w, "%s: %s: %s\n", file, f.Severity, f.Message)
		}
	}
}

func countSummary(errs, warnings int) string {
	return plural(errs, "error") + warningSuffix(warnings)
}

func warningSuffix(warnings int) string {
	if warnings == 0 {
		return ""
	}
	return ", " + plural(warnings, "warning")
}

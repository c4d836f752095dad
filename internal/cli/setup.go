package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/harness"
	"github.com/blackpaw-studio/leo/internal/home"
)

func init() { register(newSetupCmd) }

// SetupOptions are the inputs of `leo setup`.
type SetupOptions struct {
	IO       *IOStreams
	Home     home.Home
	Defaults bool
	JSON     bool
}

// setupResult is the JSON of `leo setup --json`. Field names are an API.
type setupResult struct {
	OK      bool   `json:"ok"`
	Config  string `json:"config"`
	Created bool   `json:"created"`
}

func newSetupCmd(f *Factory) *cobra.Command {
	opts := &SetupOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Write a first leo.yaml (asks on a terminal; --defaults asks nothing)",
		Long: `Write a first leo.yaml into the leo home and create the home's folders.

An existing leo.yaml is never replaced: setup says so and succeeds, so
"leo setup --defaults && leo service" is safe to run again. On a terminal
setup asks which harness and model the assistant template uses and whether
the daemon serves the web UI, HTTP API and agents' MCP tools (web: in
leo.yaml); --defaults takes the defaults without asking (a claude assistant
template, model sonnet, web UI on 127.0.0.1:8370). The web server answers
only loopback names unless web.allowed_hosts lists others, and asks for the
token in state/api.token ('leo pair' shows it).`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			h, err := f.Home()
			if err != nil {
				return err
			}
			opts.Home = h
			return runSetup(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Defaults, "defaults", false, "take every default without asking")
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

func runSetup(opts *SetupOptions) error {
	path := opts.Home.ConfigPath
	_, err := os.Stat(path)
	switch {
	case err == nil:
		return setupDone(opts, false, fmt.Sprintf("%s already exists; leaving it as it is (edit it, then run 'leo validate')", path))
	case !errors.Is(err, fs.ErrNotExist):
		return api.Errorf(api.CodeConfigError, "cannot read %s: %w", path, err)
	}

	data := config.DefaultConfig()
	if !opts.Defaults {
		if !opts.IO.IsTTY || opts.JSON {
			return api.Errorf(api.CodeInvalidArgs, "setup asks questions on a terminal; use --defaults to take the defaults without asking")
		}
		answers, err := askSetup(opts.IO)
		if err != nil {
			return err
		}
		data = answers.yaml()
	}
	if err := opts.Home.EnsureState(); err != nil {
		return api.Errorf(api.CodeConfigError, "cannot create %s: %w", opts.Home.StateDir(), err)
	}
	for _, dir := range []string{opts.Home.Workspace(), opts.Home.AgentsDir()} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return api.Errorf(api.CodeConfigError, "cannot create %s: %w", dir, err)
		}
	}
	if err := config.Save(path, data); err != nil {
		return api.Errorf(api.CodeConfigError, "the new config does not validate: %w", err)
	}
	return setupDone(opts, true, fmt.Sprintf("wrote %s\nnext: leo service   (runs the daemon in the foreground)", path))
}

func setupDone(opts *SetupOptions, created bool, text string) error {
	if opts.JSON {
		return writeJSON(opts.IO.Out, setupResult{OK: true, Config: opts.Home.ConfigPath, Created: created})
	}
	_, err := fmt.Fprintln(opts.IO.Out, text)
	return err
}

// setupAnswers are the wizard's questions; zero values are the defaults.
type setupAnswers struct {
	Harness string
	Model   string
	Web     bool
}

func askSetup(io *IOStreams) (setupAnswers, error) {
	in := bufio.NewReader(io.In)
	ask := func(question, def string) (string, error) {
		fmt.Fprintf(io.Out, "%s [%s]: ", question, def)
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			return "", api.Errorf(api.CodeInvalidArgs, "setup cancelled: %w", err)
		}
		if line = strings.TrimSpace(line); line != "" {
			return line, nil
		}
		return def, nil
	}
	var a setupAnswers
	for {
		name, err := ask("Harness for the assistant template ("+strings.Join(harness.Names(), ", ")+")", harness.Default)
		if err != nil {
			return a, err
		}
		h, ok := harness.Lookup(name)
		if !ok {
			fmt.Fprintf(io.Out, "  %q is not a registered harness\n", name)
			continue
		}
		a.Harness = h.Name()
		def := harness.DefaultModel(h) // "" when the harness has none
		for {
			model, err := ask("Model (empty lets the harness choose)", def)
			if err != nil {
				return a, err
			}
			if model == "-" {
				model = ""
			}
			if err := h.ValidateModel(model); err != nil {
				fmt.Fprintf(io.Out, "  %v\n", err)
				continue
			}
			a.Model = model
			break
		}
		break
	}
	web, err := ask("Serve the web UI, HTTP API and agents' MCP tools on 127.0.0.1:8370 (y/n)", "y")
	if err != nil {
		return a, err
	}
	a.Web = strings.HasPrefix(strings.ToLower(web), "y")
	return a, nil
}

// yaml renders the answers through the one source of the first leo.yaml.
func (a setupAnswers) yaml() []byte {
	return config.FirstConfig(a.Harness, a.Model, a.Web)
}

package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/apitoken"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/home"
)

func init() { register(newWebCmd) }

func newWebCmd(f *Factory) *cobra.Command {
	cmd := groupCommand("web", "Turn on the web UI and HTTP API, or print its URL")
	cmd.AddCommand(newWebEnableCmd(f), newWebURLCmd(f))
	return cmd
}

// WebOptions are the inputs of `leo web enable` and `leo web url`.
type WebOptions struct {
	IO     *IOStreams
	Home   home.Home
	Getenv func(string) string
	JSON   bool
}

// webEnableJSON is `leo web enable --json`. Field names are an API; the
// token itself is never in it (`leo pair --json` prints it).
type webEnableJSON struct {
	OK bool `json:"ok"`
	webState
	// Changed: leo.yaml was edited (false: web was already enabled).
	Changed bool `json:"changed"`
	// TokenFile holds the bearer token; TokenMinted: it was made just now.
	TokenFile   string `json:"token_file"`
	TokenMinted bool   `json:"token_minted"`
	// Reloaded: a running daemon applied the change.
	Reloaded bool `json:"reloaded"`
}

func newWebEnableCmd(f *Factory) *cobra.Command {
	opts := &WebOptions{IO: f.IO, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "enable",
		Short: "Turn on the web UI, HTTP API and agents' MCP tools",
		Long: `Turn on the web UI, HTTP API and agents' MCP tools.

leo sets web.enabled: true in leo.yaml, changing only that value (comments
and the rest of the file stay as written; a missing web: section is added),
validated and atomic. It mints the bearer token in state/api.token (mode
0600) unless one exists, and tells a running daemon to reload, which then
listens on web.bind:web.port (default 127.0.0.1:8370). Agents launched from
then on get leo's MCP tools. 'leo pair' shows the token.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := f.Home()
			if err != nil {
				return err
			}
			opts.Home = h
			return runWebEnable(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

func runWebEnable(ctx context.Context, opts *WebOptions) error {
	before, err := readConfig(opts.Home, opts.Getenv)
	if err != nil {
		return err
	}
	out := webEnableJSON{OK: true, Changed: !before.WebEnabled(), TokenFile: opts.Home.TokenPath()}
	if out.Changed {
		err := config.EditScope(opts.Home.ConfigPath, config.WebScope(),
			[]config.FieldChange{config.SetField("enabled", true)}, config.WithGetenv(opts.Getenv))
		if err != nil {
			return configEditError(opts.Home, err)
		}
	}
	if err := opts.Home.EnsureState(); err != nil {
		return api.Errorf(api.CodeInternal, "%w", err)
	}
	if _, out.TokenMinted, err = apitoken.Ensure(opts.Home.TokenPath()); err != nil {
		return api.Errorf(api.CodeConfigError, "%w", err)
	}
	cfg, err := readConfig(opts.Home, opts.Getenv)
	if err != nil {
		return err
	}
	c, up, err := reachDaemon(ctx, opts.Home)
	if err != nil {
		return err
	}
	defer c.Close()
	d := daemonState{}
	if up {
		if _, err := c.ReloadConfig(ctx); err != nil {
			return err
		}
		out.Reloaded = true
		if h, err := c.Health(ctx); err == nil {
			d.health = &h
		}
	}
	out.webState = webOf(cfg, d)
	if opts.JSON {
		return writeJSON(opts.IO.Out, out)
	}
	switch {
	case !up:
		fmt.Fprintf(opts.IO.Out, "web: enabled in %s; the daemon serves %s when it starts\n", opts.Home.ConfigPath, out.URL)
	case out.Served:
		fmt.Fprintf(opts.IO.Out, "web: serving %s\n", out.URL)
	default:
		fmt.Fprintf(opts.IO.Out, "web: %s\n", webLine(out.webState, true))
	}
	if out.TokenMinted {
		fmt.Fprintf(opts.IO.Out, "token: minted in %s ('leo pair' shows it)\n", out.TokenFile)
	}
	return nil
}

func newWebURLCmd(f *Factory) *cobra.Command {
	opts := &WebOptions{IO: f.IO, Getenv: f.Getenv}
	cmd := &cobra.Command{
		Use:   "url",
		Short: "Print the web UI's URL",
		Long: `Print the URL of the web UI and HTTP API for a browser on this machine.

It fails when web.enabled is false in leo.yaml ('leo web enable' turns it
on). 'leo status' says whether the daemon is serving it right now.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := f.Home()
			if err != nil {
				return err
			}
			opts.Home = h
			return runWebURL(opts)
		},
	}
	return cmd
}

func runWebURL(opts *WebOptions) error {
	cfg, err := readConfig(opts.Home, opts.Getenv)
	if err != nil {
		return err
	}
	if !cfg.WebEnabled() {
		return api.Errorf(api.CodeConfigError, "the web UI is off (web.enabled is false in %s); 'leo web enable' turns it on", opts.Home.ConfigPath)
	}
	_, err = fmt.Fprintln(opts.IO.Out, cfg.WebLocalURL())
	return err
}

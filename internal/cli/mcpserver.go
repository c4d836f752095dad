package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/apitoken"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/mcp"
)

func init() { register(newMCPServerCmd) }

// newMCPServerCmd is `leo mcp-server`: started by a harness through leo's
// MCP bridge, not by people, so it is hidden from the command list.
func newMCPServerCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:    "mcp-server",
		Short:  "Serve leo's MCP tools on stdio (started by harnesses through leo's bridge)",
		Hidden: true,
		Long: `Serve leo's MCP tools (leo_skill, leo_send_message, leo_list_agents, …) on
stdin/stdout. Harnesses start it through leo's MCP bridge; see docs/mcp.md.

It calls the daemon's HTTP API at LEO_URL (else the config's web URL) with
the token in <home>/state/api.token. Messages are signed with LEO_AGENT (or
"task <LEO_TASK>"). Without a token it still starts, and every tool but
leo_skill answers why.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCPServer(cmd.Context(), f)
		},
	}
}

func runMCPServer(ctx context.Context, f *Factory) error {
	opts := mcp.Options{Sender: mcp.SenderFromEnv(f.Getenv), Version: f.Version}
	d, err := mcpDaemon(f)
	if err != nil {
		// Said once on stderr (a harness's MCP log); the tools say it too.
		fmt.Fprintf(f.IO.ErrOut, "leo mcp-server: %v\n", err)
		opts.Unavailable = err
	} else {
		defer d.Close()
		opts.Daemon = d
	}
	t := &sdk.IOTransport{Reader: io.NopCloser(f.IO.In), Writer: nopWriteCloser{f.IO.Out}}
	err = mcp.NewServer(opts).Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil // the harness closed stdin: its session is over
	}
	return api.Errorf(api.CodeInternal, "leo mcp-server: %w", err)
}

// mcpDaemon is the HTTP API client of the server: LEO_URL (the bridge sets
// it) else the config's web URL, and the home's token. Errors name the
// file or setting, never the token.
func mcpDaemon(f *Factory) (*client.Client, error) {
	h, err := f.Home()
	if err != nil {
		return nil, err
	}
	url := strings.TrimSpace(f.Getenv("LEO_URL"))
	if url == "" {
		cfg, err := readConfig(h, f.Getenv)
		if err != nil {
			return nil, api.Errorf(api.CodeConfigError, "no LEO_URL, and the web URL cannot be read from the config: %w", err)
		}
		if !cfg.WebEnabled() {
			return nil, api.Errorf(api.CodeConfigError, "the leo web API is off (web.enabled is false in %s); leo's MCP tools call it: run 'leo web enable'", cfg.Path)
		}
		url = cfg.WebLocalURL()
	}
	token, err := apitoken.Read(h.TokenPath())
	if errors.Is(err, apitoken.ErrNone) {
		return nil, api.Errorf(api.CodeConfigError, "no API token: %s is missing or empty (the daemon writes it when web.enabled; run 'leo web enable')", h.TokenPath())
	}
	if err != nil {
		return nil, api.Errorf(api.CodeConfigError, "%w", err)
	}
	return client.NewHTTP(url, token), nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

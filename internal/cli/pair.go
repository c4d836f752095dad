package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/blackpaw-studio/leo/internal/apitoken"
	"github.com/blackpaw-studio/leo/internal/client"
	"github.com/blackpaw-studio/leo/internal/home"
)

func init() { register(newPairCmd) }

// PairOptions are the inputs of `leo pair`.
type PairOptions struct {
	IO      *IOStreams
	Home    home.Home
	Getenv  func(string) string
	Version string
	JSON    bool
	Now     func() time.Time
	Managed ManagedInfo
}

// pairJSON is `leo pair --json`: what a client app needs to reach this
// home's daemon. Field names are an API (docs/cli.md).
type pairJSON struct {
	OK bool `json:"ok"`
	// Version is this leo binary's version; Daemon.Version the running
	// daemon's (they differ after an upgrade until a restart).
	Version string `json:"version"`
	Home    string `json:"home"`
	// Socket is the daemon's unix socket (HTTP; no token: its 0600 mode is
	// the boundary).
	Socket string `json:"socket"`
	// Managed is whether an app manages this install; Label its launchd job.
	Managed bool        `json:"managed"`
	Label   string      `json:"launchd_label,omitempty"`
	Daemon  daemonState `json:"daemon"`
	Web     webState    `json:"web"`
	// Token is the bearer token of the HTTP API (/api/*, the web login);
	// null when state/api.token is missing, empty or unusable.
	Token     *string `json:"token"`
	TokenPath string  `json:"token_path"`
}

func newPairCmd(f *Factory) *cobra.Command {
	opts := &PairOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "pair",
		Short: "What a client app needs to connect to this daemon (URL, token, socket)",
		Long: `Print what a client app (such as Leo.app, which bundles leo) needs to talk
to this home's daemon: the web UI and HTTP API URL, the bearer token of the
HTTP API, the daemon's unix socket, leo's version, and whether the install
is managed.

The token is printed only with --json, and only on stdout: it is meant for
the program that ran leo, never for a terminal's scrollback or a log. The
text form says whether a token exists and where.

Works with the daemon down (the URL, token and socket do not change when it
starts). Fails with config_error (exit 3) when leo.yaml is missing or
broken: the URL comes from its web: section.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := f.Home()
			if err != nil {
				return err
			}
			opts.Home, opts.Getenv, opts.Version, opts.Now = h, f.Getenv, f.Version, f.Now
			opts.Managed = f.managedInfo(h)
			return runPair(cmd.Context(), opts)
		},
	}
	addJSONFlag(cmd, &opts.JSON)
	return cmd
}

func runPair(ctx context.Context, opts *PairOptions) error {
	cfg, found, err := statusConfig(opts.Home, opts.Getenv)
	if err != nil {
		return err
	}
	if !found {
		return noConfigError(opts.Home)
	}
	p := pairJSON{
		OK: true, Version: opts.Version, Home: opts.Home.Root, Socket: opts.Home.SocketPath(),
		Managed: opts.Managed.Managed, Label: opts.Managed.Label,
		Daemon:    probeDaemon(ctx, opts.Home, nowOr(opts.Now)),
		TokenPath: opts.Home.TokenPath(),
	}
	p.Web = webOf(cfg, p.Daemon)
	tok, problem := readToken(opts.Home.TokenPath())
	if problem != "" {
		fmt.Fprintf(opts.IO.ErrOut, "leo: pair: %s\n", problem)
	}
	if opts.JSON {
		if tok != "" {
			p.Token = &tok
		}
		return writeJSON(opts.IO.Out, p)
	}
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-8s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	if p.Web.Enabled {
		line("url", "%s", webLine(p.Web, p.Daemon.Answering))
	} else {
		line("url", "none (web.enabled is false in leo.yaml)")
	}
	if tok != "" {
		line("token", "in %s (printed only by 'leo pair --json')", p.TokenPath)
	} else {
		line("token", "none yet (%s)", p.TokenPath)
	}
	line("socket", "%s", p.Socket)
	line("leo", "%s", p.Version)
	if p.Managed {
		line("managed", "yes (launchd job %s)", cell(p.Label, 100))
	} else {
		line("managed", "no")
	}
	if p.Daemon.Answering {
		line("daemon", "running, pid %d, leo %s", p.Daemon.PID, cell(p.Daemon.Version, 40))
	} else {
		line("daemon", "not answering — %s", client.StartHint)
	}
	_, err = io.WriteString(opts.IO.Out, b.String())
	return err
}

// readToken reads the API token (apitoken.Read): a missing or empty file
// is no token and no problem; an unusable one is no token and a problem
// that names the file, never its content.
func readToken(path string) (token, problem string) {
	tok, err := apitoken.Read(path)
	switch {
	case err == nil:
		return tok, ""
	case errors.Is(err, apitoken.ErrNone):
		return "", ""
	default:
		return "", err.Error()
	}
}

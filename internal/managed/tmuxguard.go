package managed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// TmuxChoice is the tmux binary leo runs against a home's server, and why.
type TmuxChoice struct {
	// Binary is the tmux executable for every command on this server.
	Binary string
	// ServerVersion is what the running server reported ("" when none
	// runs, or it could not be asked).
	ServerVersion string
	// Pending: a server of another version than tmux_path runs, and
	// Binary is its matching copy <root>/<V>/tmux. The daemon logs
	// "tmux upgrade pending"; the CLI says nothing.
	Pending bool
	// Problem: the guard could not do its job (no copy matching the
	// server, or the server could not be asked); Binary fell back to
	// tmux_path. The daemon logs it as an error; `leo doctor` reports it.
	Problem string
}

// askTimeout bounds one version question to a server.
const askTimeout = 5 * time.Second

// Tmux picks the tmux binary for the server on socket (the home's -L
// name). Unmanaged: tmux on the resolver's PATH. Managed: never PATH, only
// tmux_path or, when a server of another version V runs, <root>/<V>/tmux
// (the tmux version guard of docs/managed-install.md). leo never kills a
// server to resolve a mismatch.
func (s State) Tmux(ctx context.Context, socket string, r binpath.Resolver) (TmuxChoice, error) {
	if !s.Managed() {
		bin, err := r.Lookup("tmux")
		if err != nil {
			return TmuxChoice{}, err
		}
		return TmuxChoice{Binary: bin}, nil
	}
	return chooseTmux(ctx, s.Marker, socket, askServerVersion), nil
}

// versionAsker asks the server on socket for its version through binary;
// an error wrapping tmux.ErrNoServer means none runs.
type versionAsker func(ctx context.Context, binary, socket string) (string, error)

// askServerVersion asks the running server itself (#{version}) rather
// than reading its executable's path: it works the same on macOS and
// Linux, needs no process table, and names the version tmux itself uses.
// tmux 3.x clients and servers share one protocol version, so any copy
// can ask.
func askServerVersion(ctx context.Context, binary, socket string) (string, error) {
	tm, err := tmux.New(tmux.Options{Socket: socket, Binary: binary, DisableControl: true, Timeout: askTimeout})
	if err != nil {
		return "", err
	}
	defer tm.Close()
	return tm.ServerVersion(ctx)
}

func chooseTmux(ctx context.Context, m Marker, socket string, ask versionAsker) TmuxChoice {
	c := guard(ctx, m, socket, ask)
	c.Problem = oneLine(c.Problem)
	return c
}

func guard(ctx context.Context, m Marker, socket string, ask versionAsker) TmuxChoice {
	fallback := TmuxChoice{Binary: m.TmuxPath}
	v, err := ask(ctx, m.TmuxPath, socket)
	if err != nil && !errors.Is(err, tmux.ErrNoServer) {
		// tmux_path itself could not ask (it may not run, or the server
		// may refuse a client that new): try the other pinned copies.
		for _, bin := range otherCopies(m) {
			if v2, err2 := ask(ctx, bin, socket); err2 == nil || errors.Is(err2, tmux.ErrNoServer) {
				v, err = v2, err2
				break
			}
		}
	}
	switch {
	case errors.Is(err, tmux.ErrNoServer):
		// No server: tmux_path starts the next one.
		return fallback
	case err != nil:
		fallback.Problem = fmt.Sprintf("cannot ask the tmux server on -L %s its version (%v); using tmux_path %s", socket, err, m.TmuxPath)
		return fallback
	}
	fallback.ServerVersion = v
	if v == m.TmuxVersion() {
		return fallback
	}
	if !validVersionDir(v) {
		fallback.Problem = fmt.Sprintf("the tmux server on -L %s reports the version %q, which names no copy under %s; using tmux_path %s (tmux %s): attaching may fail",
			socket, v, m.TmuxRoot(), m.TmuxPath, m.TmuxVersion())
		return fallback
	}
	match := filepath.Join(m.TmuxRoot(), v, "tmux")
	if !isExecutable(match) {
		fallback.Problem = fmt.Sprintf("the tmux server on -L %s runs tmux %s but %s does not exist; using tmux_path %s (tmux %s): attaching may fail",
			socket, v, match, m.TmuxPath, m.TmuxVersion())
		return fallback
	}
	return TmuxChoice{Binary: match, ServerVersion: v, Pending: true}
}

// otherCopies are the executable <root>/*/tmux other than tmux_path,
// newest name first.
func otherCopies(m Marker) []string {
	entries, err := os.ReadDir(m.TmuxRoot())
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if !validVersionDir(e.Name()) || e.Name() == m.TmuxVersion() {
			continue
		}
		if p := filepath.Join(m.TmuxRoot(), e.Name(), "tmux"); isExecutable(p) {
			out = append(out, p)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

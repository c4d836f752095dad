package cli

import (
	"context"
	"io"
	"os"

	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/managed"
)

// Managed is this home's managed-install marker (docs/managed-install.md).
// Every invocation reads it (the root command does, before any command
// runs); an invalid one prints its one warning per process on stderr and
// leo runs unmanaged. `leo doctor` repeats State.Warning(). A home that
// does not resolve is unmanaged (the command reports the home itself).
func (f *Factory) Managed() managed.State {
	h, err := f.Home()
	if err != nil {
		return managed.State{}
	}
	if f.managed != nil && f.managed.Path == h.MarkerPath() {
		return *f.managed
	}
	var stderr io.Writer // nil prints nothing (a Factory without streams)
	if f.IO != nil {
		stderr = f.IO.ErrOut
	}
	p := managed.Platform{GOOS: f.GOOS, Getenv: f.Getenv}
	var st managed.State
	if f.MarkerLoader != nil {
		st = f.MarkerLoader.Load(h, p, stderr)
	} else {
		st = managed.Load(h, p, stderr)
	}
	f.managed = &st
	return st
}

// Resolver finds the programs leo runs: the marker's PATH first when
// managed, then leo's own PATH (tmux excepted: see Tmux).
func (f *Factory) Resolver() binpath.Resolver {
	return f.Managed().Resolver(binpath.Resolver{Getenv: f.Getenv})
}

// LeoBinary is the leo binary leo records for hooks and the MCP bridge:
// the marker's self_path when managed, else this executable.
func (f *Factory) LeoBinary() string {
	own, _ := os.Executable()
	return f.Managed().LeoBinary(own)
}

// Tmux is the tmux binary for h's server: PATH's when unmanaged; tmux_path,
// or the running server's copy under the version guard, when managed. The
// CLI says nothing about a pending upgrade.
func (f *Factory) Tmux(ctx context.Context, h home.Home) (managed.TmuxChoice, error) {
	return f.Managed().Tmux(ctx, h.TmuxSocket(home.DefaultRoot(f.Getenv)), binpath.Resolver{Getenv: f.Getenv})
}

// describeManaged is status's and pair's view of h's marker (read again
// when h is not the invocation's home; the warning is printed once).
func (f *Factory) describeManaged(h home.Home) ManagedInfo {
	st := f.Managed()
	if st.Path != h.MarkerPath() {
		st = managed.Read(h, managed.Platform{GOOS: f.GOOS, Getenv: f.Getenv})
	}
	info := ManagedInfo{Managed: st.Managed()}
	if st.Status == managed.Invalid {
		info.Warning = st.Warning()
	}
	if st.Managed() {
		info.Manager, info.Label, info.PathFirst = st.Marker.Manager, st.Marker.LaunchdLabel, st.Marker.PATH()
	}
	return info
}

// Package daemon is leo's daemon: the one-per-home lock, the start-up order,
// and the socket API it serves while hosting the agent manager.
package daemon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/daemon/lockfile"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/tmux"
)

// Options configure Run.
type Options struct {
	// Home is the resolved leo home (home.Resolve).
	Home home.Home
	// Supervised: started by launchd/systemd. Logs go to state/service.log
	// (rotated) instead of stderr.
	Supervised bool
	// Version is reported by /health.
	Version string

	// Getenv reads leo's environment; nil means os.Getenv.
	Getenv func(string) string
	// Stderr receives the foreground log; nil means os.Stderr.
	Stderr io.Writer
	// Resolver finds claude and tmux; the zero value searches leo's PATH.
	Resolver binpath.Resolver
	// DefaultRoot is the default home (~/.leo), whose tmux socket is plain
	// "leo"; "" computes it from HOME.
	DefaultRoot string
	// LeoBinary is this leo executable (agents' hooks call it); "" means
	// os.Executable().
	LeoBinary string

	// FirstStart is the seam for the managed first start: called when the
	// default leo.yaml is missing, it may write one (see
	// spec/managed-install.md). nil — an unmanaged install — refuses to
	// start with NoConfigMessage. Never called for an explicit --config.
	FirstStart func(ctx context.Context, h home.Home, log *slog.Logger) error
	// NewAgents builds the agent manager; nil means the real one
	// (internal/agent). Tests pass fakes.
	NewAgents func(AgentDeps) (Agents, error)

	// ReadyWait is how long an API request arriving during boot restore
	// waits for it before answering not_ready (default 30s).
	ReadyWait time.Duration
	// ShutdownTimeout bounds the graceful shutdown (default 10s).
	ShutdownTimeout time.Duration
}

// AgentDeps is what the daemon hands the agent manager.
type AgentDeps struct {
	Home      home.Home
	Tmux      *tmux.Server
	Config    func() *config.Config
	Resolver  binpath.Resolver
	Log       *slog.Logger
	LeoBinary string
}

// Run runs the daemon until ctx is cancelled (SIGINT/SIGTERM in `leo
// service`), then shuts down gracefully. The order of the start-up steps is
// a contract: the lock comes before anything touches leo.sock, the log or
// tmux, so a second daemon can only ever fail, never disturb the first.
//
//  1. resolve the home (done by the caller; Options.Home)
//  2. take the exclusive flock on state/daemon.lock, then write our pid
//  3. open the log (supervised: state/service.log, rotated; else stderr)
//  4. load and validate leo.yaml (missing: refuse, or the managed seam)
//  5. find tmux, check it is >= 3.2, pick this home's socket name
//  6. remove a stale leo.sock (we hold the lock, so any is stale) and
//     listen, mode 0600
//  7. boot restore through the manager; /health says ready:false until done
//  8. serve until ctx is done; agents' tmux sessions outlive the daemon
func Run(ctx context.Context, opts Options) error {
	opts.defaults()
	h := opts.Home
	if h.Root == "" {
		return errors.New("daemon: no leo home")
	}
	// An explicit --config is never created; refuse before creating the
	// state directory beside a file that does not exist.
	if h.ExplicitConfig {
		ok, err := configExists(h.ConfigPath)
		if err != nil {
			return err
		}
		if !ok {
			return missingConfig(h)
		}
	}
	if err := h.EnsureState(); err != nil {
		return fmt.Errorf("create %s: %w", h.StateDir(), err)
	}

	// 2. One daemon per home.
	lock, err := lockfile.Acquire(h.LockPath(), h.Root)
	if err != nil {
		return err
	}
	defer lock.Release()

	// 3. The log.
	log, closeLog, err := openLog(opts)
	if err != nil {
		return err
	}
	defer closeLog()
	log.Info("leo daemon starting", "version", opts.Version, "pid", os.Getpid(), "home", h.Root, "supervised", opts.Supervised)

	d := &run{opts: opts, home: h, log: log}
	err = d.serve(ctx)
	switch {
	case err == nil:
		log.Info("leo daemon stopped")
	case opts.Supervised:
		// In the foreground the caller prints err; only the file needs it.
		log.Error("leo daemon stopped", "err", err)
	}
	return err
}

func (o *Options) defaults() {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.ReadyWait <= 0 {
		o.ReadyWait = 30 * time.Second
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 10 * time.Second
	}
	if o.NewAgents == nil {
		o.NewAgents = newAgentManager
	}
	if o.LeoBinary == "" {
		if exe, err := os.Executable(); err == nil {
			o.LeoBinary = exe
		}
	}
}

// openLog returns the daemon's logger and what closes it.
func openLog(opts Options) (*slog.Logger, func(), error) {
	if !opts.Supervised {
		return slog.New(slog.NewTextHandler(opts.Stderr, nil)), func() {}, nil
	}
	f, err := openRotatingFile(opts.Home.ServiceLogPath(), serviceLogMaxBytes, serviceLogKeep)
	if err != nil {
		return nil, nil, err
	}
	return slog.New(slog.NewTextHandler(f, nil)), func() { f.Close() }, nil
}

// run is one daemon run, after the lock and the log.
type run struct {
	opts Options
	home home.Home
	log  *slog.Logger
}

func (d *run) serve(ctx context.Context) error {
	h := d.home

	// 4. The config.
	cfg, err := d.startupConfig(ctx)
	if err != nil {
		return err
	}
	store := &configStore{path: h.ConfigPath, getenv: d.opts.Getenv, load: loadValid}
	store.cur.Store(cfg)
	for _, w := range warnings(cfg) {
		d.log.Warn("config", "warning", w)
	}

	// 5. tmux.
	tm, err := d.openTmux(ctx)
	if err != nil {
		return err
	}
	defer tm.Close()

	agents, err := d.opts.NewAgents(AgentDeps{
		Home:      h,
		Tmux:      tm,
		Config:    store.Get,
		Resolver:  d.opts.Resolver,
		Log:       d.log,
		LeoBinary: d.opts.LeoBinary,
	})
	if err != nil {
		return fmt.Errorf("start the agent manager: %w", err)
	}
	defer func() {
		if err := agents.Close(); err != nil {
			d.log.Warn("closing the agent manager", "err", err)
		}
	}()
	prepareHarnesses(ctx, cfg, d.opts.Getenv, d.log)
	store.changed = func() {
		prepareHarnesses(ctx, store.Get(), d.opts.Getenv, d.log)
		agents.ConfigChanged()
	}

	// 6. The socket.
	ln, err := listenSocket(h.SocketPath())
	if err != nil {
		return err
	}
	srv := &server{
		version:   d.opts.Version,
		homeRoot:  h.Root,
		pid:       os.Getpid(),
		resolver:  d.opts.Resolver,
		agents:    agents,
		reload:    store.Reload,
		log:       d.log.With("component", "api"),
		ready:     make(chan struct{}),
		stopping:  make(chan struct{}),
		readyWait: d.opts.ReadyWait,
	}
	hs := &http.Server{
		Handler:           srv.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	d.log.Info("listening", "socket", h.SocketPath(), "tmux_socket", tm.Socket())

	// 7. Boot restore, then ready.
	restoreStart := time.Now()
	if err := agents.Restore(ctx); err != nil && ctx.Err() == nil {
		// One agent that cannot come back must not keep the rest down.
		d.log.Error("boot restore", "err", err)
	}
	runCtx, stopRun := context.WithCancel(context.WithoutCancel(ctx))
	runDone := make(chan struct{})
	if ctx.Err() == nil {
		srv.markReady()
		d.log.Info("ready", "agents", len(agents.List()), "restore_took", time.Since(restoreStart).Round(time.Millisecond))
		go func() {
			defer close(runDone)
			agents.Run(runCtx)
		}()
	} else {
		close(runDone)
	}

	// 8. Serve until told to stop; SIGHUP reloads leo.yaml, like
	// `leo service reload`.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var failed error
serving:
	for {
		select {
		case <-hup:
			if res, err := store.Reload(ctx); err != nil {
				d.log.Error("reload on SIGHUP", "err", err)
			} else {
				d.log.Info("config reloaded on SIGHUP", "warnings", len(res.Warnings))
			}
		case <-ctx.Done():
			d.log.Info("shutting down", "reason", context.Cause(ctx))
			break serving
		case err := <-serveErr:
			failed = fmt.Errorf("socket server: %w", err)
			break serving
		}
	}
	// Stop taking requests first (Shutdown closes the listener, which
	// unlinks leo.sock while we still hold the lock), then supervision;
	// the deferred Close calls leave every agent's tmux session running.
	srv.stopServing()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.opts.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		d.log.Warn("socket server shutdown", "err", err)
		hs.Close()
	}
	stopRun()
	<-runDone
	return failed
}

// startupConfig loads leo.yaml; a missing default file goes through the
// managed first-start seam when there is one.
func (d *run) startupConfig(ctx context.Context) (*config.Config, error) {
	h := d.home
	ok, err := configExists(h.ConfigPath)
	if err != nil {
		return nil, err
	}
	if !ok {
		if h.ExplicitConfig || d.opts.FirstStart == nil {
			return nil, missingConfig(h)
		}
		if err := d.opts.FirstStart(ctx, h, d.log); err != nil {
			return nil, err
		}
	}
	c, err := loadValid(h.ConfigPath, d.opts.Getenv)
	if err != nil {
		e := asAPIError(err)
		return nil, api.Errorf(e.Code, "refusing to start: %s", e.Message)
	}
	return c, nil
}

// openTmux finds tmux, checks its version and names this home's server.
func (d *run) openTmux(ctx context.Context) (*tmux.Server, error) {
	bin, err := d.opts.Resolver.Lookup("tmux")
	if err != nil {
		return nil, fmt.Errorf("tmux not found on PATH (%s): leo needs tmux 3.2 or newer", d.opts.Resolver.SearchPath())
	}
	tm, err := tmux.New(tmux.Options{
		Socket: d.home.TmuxSocket(d.defaultRoot()),
		Binary: bin,
		PATH:   d.opts.Resolver.SearchPath(),
	})
	if err != nil {
		return nil, err
	}
	vctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tm.CheckVersion(vctx); err != nil {
		tm.Close()
		return nil, err
	}
	return tm, nil
}

// defaultRoot is ~/.leo, whose tmux server is the plain `-L leo`.
func (d *run) defaultRoot() string {
	if d.opts.DefaultRoot != "" {
		return d.opts.DefaultRoot
	}
	return home.DefaultRoot(d.opts.Getenv)
}

// maxSocketPath is the longest unix socket path every platform accepts
// (sun_path is 104 bytes on macOS, 108 on Linux, both NUL-terminated).
const maxSocketPath = 103

// listenSocket removes a stale leo.sock and listens on a fresh one, 0600.
// Only the lock holder calls it: any socket file there now is stale.
func listenSocket(path string) (net.Listener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("socket path %s is %d bytes, longer than the %d a unix socket allows; use a shorter LEO_HOME",
			path, len(path), maxSocketPath)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// The mode is the boundary: chmod after listen, whatever the umask was.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("chmod %s: %w", path, err)
	}
	return ln, nil
}

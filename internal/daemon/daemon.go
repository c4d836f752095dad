// Package daemon is leo's daemon: the one-per-home lock, the start-up order,
// and the socket API it serves while hosting the agent manager.
package daemon

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/config"
	"github.com/blackpaw-studio/leo/internal/events"
	"github.com/blackpaw-studio/leo/internal/home"
	"github.com/blackpaw-studio/leo/internal/lockfile"
	"github.com/blackpaw-studio/leo/internal/managed"
	"github.com/blackpaw-studio/leo/internal/notify"
	"github.com/blackpaw-studio/leo/internal/task"
	"github.com/blackpaw-studio/leo/internal/tmux"
	"github.com/blackpaw-studio/leo/internal/turnend"
	"github.com/blackpaw-studio/leo/internal/web"
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
	// docs/managed-install.md). nil — an unmanaged install — refuses to
	// start with NoConfigMessage; nil on a managed install means
	// managed.FirstStart. Never called for an explicit --config.
	FirstStart func(ctx context.Context, h home.Home, log *slog.Logger) error
	// Managed is the home's managed-install marker as the caller read it
	// (the CLI does, printing the warning of an invalid one); nil means
	// the daemon reads it. Valid: the marker's PATH leads Resolver,
	// LeoBinary is its self_path, FirstStart defaults to the managed first
	// start and tmux comes from its tmux_path or the version guard.
	Managed *managed.State
	// TurnEnds correlates agents' turn-end hooks with the persistent-task
	// firings waiting for them; nil means the daemon makes its own.
	TurnEnds *turnend.Hub
	// NewAgents builds the agent manager; nil means the real one
	// (internal/agent). Tests pass fakes.
	NewAgents func(AgentDeps) (Agents, error)

	// ReadyWait is how long an API request arriving during boot restore
	// waits for it before answering not_ready (default 30s).
	ReadyWait time.Duration
	// ShutdownTimeout bounds the graceful shutdown (default 10s).
	ShutdownTimeout time.Duration
	// DrainPoll is how often a drain looks at the agents' screens
	// (default 250ms).
	DrainPoll time.Duration
	// EventsHeartbeat is how often an idle event stream gets a comment
	// line (0: 15 s); tests shorten it.
	EventsHeartbeat time.Duration
	// OwnerCheck is how often the daemon checks that its lock file and
	// socket are still the ones it made (default 2s); see checkOwner.
	OwnerCheck time.Duration
}

// AgentDeps is what the daemon hands the agent manager.
type AgentDeps struct {
	Home      home.Home
	Tmux      *tmux.Server
	Config    func() *config.Config
	Resolver  binpath.Resolver
	Log       *slog.Logger
	LeoBinary string
	// SaveGuard is called before every write of the home's state: it
	// fails when this daemon no longer owns the home (its lock file was
	// removed and another daemon took the home), so the write is refused.
	SaveGuard func() error
	// Events is the daemon's event stream the manager publishes to.
	Events events.Publisher
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
	opts.applyManaged()
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
	log, logFile, closeLog, err := openLog(opts)
	if err != nil {
		return err
	}
	defer closeLog()
	log.Info("leo daemon starting", "version", opts.Version, "pid", os.Getpid(), "home", h.Root, "supervised", opts.Supervised)
	switch m := opts.Managed; {
	case m.Managed():
		log.Info("managed install", "manager", m.Marker.Manager, "launchd_label", m.Marker.LaunchdLabel, "self_path", m.Marker.SelfPath, "tmux_path", m.Marker.TmuxPath)
	case m.Status == managed.Invalid && opts.Supervised:
		// stderr had it already; in the foreground the log is stderr.
		log.Warn(m.Warning())
	}

	d := &run{opts: opts, home: h, log: log, lock: lock, logFile: logFile}
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
	if o.OwnerCheck <= 0 {
		o.OwnerCheck = 2 * time.Second
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

// applyManaged reads the marker unless the caller did, and makes a valid
// one's choices the daemon's.
func (o *Options) applyManaged() {
	if o.Managed == nil {
		st := managed.Load(o.Home, managed.Platform{Getenv: o.Getenv}, o.Stderr)
		o.Managed = &st
	}
	if !o.Managed.Managed() {
		return
	}
	o.Resolver = o.Managed.Resolver(o.Resolver)
	o.LeoBinary = o.Managed.Marker.SelfPath
	if o.FirstStart == nil {
		o.FirstStart = managed.FirstStart
	}
}

// openLog returns the daemon's logger, its file (nil in the foreground,
// where the log is stderr) and what closes it.
func openLog(opts Options) (*slog.Logger, *rotatingFile, func(), error) {
	if !opts.Supervised {
		return slog.New(slog.NewTextHandler(opts.Stderr, nil)), nil, func() {}, nil
	}
	f, err := openRotatingFile(opts.Home.ServiceLogPath(), serviceLogMaxBytes, serviceLogKeep)
	if err != nil {
		return nil, nil, nil, err
	}
	return slog.New(slog.NewTextHandler(f, nil)), f, func() { f.Close() }, nil
}

// run is one daemon run, after the lock and the log.
type run struct {
	opts Options
	home home.Home
	log  *slog.Logger
	lock *lockfile.Lock
	// logFile is state/service.log when supervised (nil otherwise).
	logFile *rotatingFile
	// tmuxGuard is the tmux version guard's problem, for /health.
	tmuxGuard string
}

func (d *run) serve(ctx context.Context) error {
	h := d.home

	// 4. The config.
	cfg, store, err := d.openConfig(ctx)
	if err != nil {
		return err
	}

	// 5. tmux.
	tm, err := d.openTmux(ctx)
	if err != nil {
		return err
	}
	defer tm.Close()

	turnEnds := d.opts.TurnEnds
	if turnEnds == nil {
		turnEnds = turnend.New(d.log.With("component", "turnend"))
	}
	// The event stream (docs/api.md), numbered from the start time so
	// that numbers keep increasing across restarts.
	bus := events.New(events.FirstSeq(time.Now()), 0, 0, nil)
	bus.Publish(api.Event{Type: api.EventDaemonStarting, Reason: "leo " + d.opts.Version + ", pid " + strconv.Itoa(os.Getpid())})
	agents, err := d.opts.NewAgents(AgentDeps{
		Home:      h,
		Tmux:      tm,
		Config:    store.Get,
		Resolver:  d.opts.Resolver,
		Log:       d.log,
		LeoBinary: d.opts.LeoBinary,
		SaveGuard: d.ensureOwner,
		Events:    bus,
	})
	if err != nil {
		return fmt.Errorf("start the agent manager: %w", err)
	}
	defer func() {
		if err := agents.Close(); err != nil {
			d.log.Warn("closing the agent manager", "err", err)
		}
	}()
	// The notifiers read the stream from before boot restore; each
	// event reads the running config, so a reload applies to the next.
	notifier := d.startNotifier(ctx, store, agents, bus)
	defer notifier.stop()
	persistent, err := d.persistentFirings(agents, turnEnds)
	if err != nil {
		return fmt.Errorf("start the task service: %w", err)
	}
	tasks, err := d.newTaskService(store, persistent, bus)
	if err != nil {
		return fmt.Errorf("start the task service: %w", err)
	}
	// webSync follows web: in the config once the web server exists (a
	// reload may turn it on, off, or move it).
	var webSync atomic.Pointer[func()]
	store.events = bus
	store.changed = func() {
		prepareHarnesses(ctx, store.Get(), d.bridged(store.Get(), h), d.opts.Getenv, d.log)
		agents.ConfigChanged()
		tasks.ConfigChanged()
		if f := webSync.Load(); f != nil {
			(*f)()
		}
	}

	// 6. The socket.
	sock, err := listenSocket(h.SocketPath())
	if err != nil {
		return err
	}
	l := &live{store: store, tm: tm, agents: agents, sock: sock, serveErr: make(chan error, 1), notifier: notifier.engine, events: bus}
	l.srv = d.newServer(l, tasks, persistent, turnEnds)
	if err := d.startServers(l); err != nil {
		return err
	}
	syncWeb := l.web.Sync
	webSync.Store(&syncWeb)
	l.web.Sync()
	// After Sync: it mints the token the bridge (and so the nudge) needs.
	prepareHarnesses(ctx, cfg, d.bridged(cfg, h), d.opts.Getenv, d.log)

	// 7. Boot restore, then ready.
	stopRun := d.restoreThenRun(ctx, l.srv, agents, tasks)

	// 8. Serve until told to stop. SIGHUP reloads leo.yaml, like `leo
	// service reload`; it stays caught until the shutdown is done (its
	// default action would end the daemon halfway).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	failed := d.serveUntilStopped(ctx, l, hup)
	d.shutdown(ctx, l)
	stopRun()
	return failed
}

// openConfig loads and validates leo.yaml (startupConfig) into the store
// every reader and reload goes through.
func (d *run) openConfig(ctx context.Context) (*config.Config, *configStore, error) {
	cfg, sum, err := d.startupConfig(ctx)
	if err != nil {
		return nil, nil, err
	}
	store := &configStore{path: d.home.ConfigPath, getenv: d.opts.Getenv, load: readValid, log: d.log}
	store.start(cfg, sum)
	for _, w := range warnings(cfg) {
		d.log.Warn("config", "warning", w)
	}
	return cfg, store, nil
}

// startServers starts the web server (not yet listening: Sync does) and
// serves the socket API on l.sock.
func (d *run) startServers(l *live) error {
	h := d.home
	routes := l.srv.routes()
	var err error
	l.web, err = web.New(web.Options{
		Home:    h,
		Config:  l.store.Get,
		API:     routes,
		Version: d.opts.Version,
		LogPath: h.ServiceLogPath(),
		Log:     d.log.With("component", "web"),
	})
	if err != nil {
		return fmt.Errorf("start the web server: %w", err)
	}
	l.srv.web = l.web.State
	l.hs = &http.Server{
		Handler:           routes,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(d.log.Handler(), slog.LevelWarn),
	}
	go serveOn(l.hs, l.sock.ln, l.serveErr)
	d.log.Info("listening", "socket", h.SocketPath(), "tmux_socket", l.tm.Socket())
	return nil
}

// live is what a daemon that listens runs: checked at every owner check,
// stopped at shutdown.
type live struct {
	store    *configStore
	tm       *tmux.Server
	agents   Agents
	srv      *server
	web      *web.Server
	hs       *http.Server
	sock     socket
	serveErr chan error
	notifier *notify.Engine
	events   *events.Bus
}

// newServer is the socket API's server over the daemon's parts.
func (d *run) newServer(l *live, tasks *task.Service, persistent *task.Persistent, turnEnds *turnend.Hub) *server {
	h := d.home
	return &server{
		version:  d.opts.Version,
		homeRoot: h.Root,
		pid:      os.Getpid(),
		started:  time.Now().UTC(),
		tmux:     l.tm.CheckedVersion().Raw,
		resolver: d.opts.Resolver,
		agents:   l.agents,
		tasks:    tasks,
		config:   l.store.Get,
		turnEnds: turnEnds,
		reload:   l.store.Reload,
		setEnabled: func(name string, enabled bool) error {
			return config.SetTaskEnabled(h.ConfigPath, name, enabled, config.WithGetenv(d.opts.Getenv))
		},
		log:       d.log.With("component", "api"),
		notifier:  l.notifier,
		events:    l.events,
		heartbeat: d.opts.EventsHeartbeat,
		drainer:   newDrainer(l.agents, persistentAwaiting(persistent), d.opts.DrainPoll, d.log.With("component", "drain")),
		ready:     make(chan struct{}),
		stopping:  make(chan struct{}),
		readyWait: d.opts.ReadyWait,
		problems: func() []string {
			out := d.problems(l.agents, l.tm)
			if p := l.store.Problem(); p != "" {
				out = append(out, p)
			}
			if persistent != nil && persistent.Problem != "" {
				out = append(out, persistent.Problem)
			}
			if l.notifier != nil {
				out = append(out, l.notifier.Problems()...)
			}
			return out
		},
	}
}

// runningNotifier is the notifier engine and what stops it.
type runningNotifier struct {
	engine *notify.Engine
	stop   func()
}

// startNotifier starts the notifier engine on bus (docs/notifications.md):
// an agent's events go to its template's (or persistent task's) notify:
// list, through the manager's record of it.
func (d *run) startNotifier(ctx context.Context, store *configStore, agents Agents, bus *events.Bus) runningNotifier {
	eng := notify.New(notify.Options{
		Config: store.Get,
		AgentScope: func(name string) (string, string, bool) {
			a, err := agents.Get(name)
			if err != nil {
				return "", "", false
			}
			return a.Template, a.Task, true
		},
		Log:       d.log.With("component", "notify"),
		Dir:       d.home.Root,
		UserAgent: "leo/" + d.opts.Version,
	})
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		eng.Run(rctx, bus)
	}()
	return runningNotifier{engine: eng, stop: func() {
		cancel()
		<-done
		eng.Close()
	}}
}

// restoreThenRun brings the recorded agents back (boot restore), then,
// unless ctx ended meanwhile, marks the daemon ready and runs supervision
// and the scheduler. The returned stop ends them and waits until they
// have; they outlive ctx until then, so shutdown can stop serving first.
func (d *run) restoreThenRun(ctx context.Context, srv *server, agents Agents, tasks *task.Service) (stop func()) {
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
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				tasks.Run(runCtx)
			}()
			agents.Run(runCtx)
			wg.Wait()
		}()
	} else {
		close(runDone)
	}
	return func() {
		stopRun()
		<-runDone
	}
}

// serveUntilStopped serves until ctx ends, the socket server fails or
// another daemon takes the home (the error says which of the last two).
// A signal on hup reloads leo.yaml, and so does an edit of the file
// (store.Watch, at each owner check).
func (d *run) serveUntilStopped(ctx context.Context, l *live, hup <-chan os.Signal) error {
	owner := time.NewTicker(d.opts.OwnerCheck)
	defer owner.Stop()
	tmuxReported := false
	published := map[string]bool{} // the problems already on the stream
	for {
		select {
		case <-owner.C:
			if err := d.checkOwner(l.hs, &l.sock, l.serveErr, l.agents); err != nil {
				return err
			}
			d.checkStateFiles(l.web)
			d.checkTmux(l.tm, &tmuxReported)
			l.web.Retry()
			l.store.Watch(ctx)
			publishProblems(l.events, l.srv.problems(), published)
		case <-hup:
			if res, err := l.store.Reload(ctx); err != nil {
				d.log.Error("reload on SIGHUP", "err", err)
			} else {
				d.log.Info("config reloaded on SIGHUP", "warnings", len(res.Warnings))
			}
		case <-ctx.Done():
			d.log.Info("shutting down", "reason", context.Cause(ctx))
			return nil
		case err := <-l.serveErr:
			return fmt.Errorf("socket server: %w", err)
		}
	}
}

// shutdown stops taking requests (Shutdown closes the listener; leo.sock
// is then removed if it is still the one we made). Supervision stops after
// it; the deferred Close calls leave every agent's tmux session running.
func (d *run) shutdown(ctx context.Context, l *live) {
	// Published before the streams end, so their readers hear it.
	l.events.Publish(api.Event{Type: api.EventDaemonStopping, Reason: "leo " + d.opts.Version + ", pid " + strconv.Itoa(os.Getpid())})
	l.srv.stopServing()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d.opts.ShutdownTimeout)
	defer cancel()
	if err := l.web.Close(sctx); err != nil {
		d.log.Warn("web server shutdown", "err", err)
	}
	if err := l.hs.Shutdown(sctx); err != nil {
		d.log.Warn("socket server shutdown", "err", err)
		l.hs.Close()
	}
	l.sock.remove()
}

// startupConfig loads leo.yaml; a missing default file goes through the
// managed first-start seam when there is one.
func (d *run) startupConfig(ctx context.Context) (*config.Config, [sha256.Size]byte, error) {
	h := d.home
	var none [sha256.Size]byte
	ok, err := configExists(h.ConfigPath)
	if err != nil {
		return nil, none, err
	}
	if !ok {
		if h.ExplicitConfig || d.opts.FirstStart == nil {
			return nil, none, missingConfig(h)
		}
		if err := d.opts.FirstStart(ctx, h, d.log); err != nil {
			return nil, none, err
		}
	}
	c, sum, err := readValid(h.ConfigPath, d.opts.Getenv)
	if err != nil {
		e := asAPIError(err)
		return nil, none, api.Errorf(e.Code, "refusing to start: %s", e.Message)
	}
	return c, sum, nil
}

// openTmux finds tmux, checks its version and names this home's server.
func (d *run) openTmux(ctx context.Context) (*tmux.Server, error) {
	socket := d.home.TmuxSocket(d.defaultRoot())
	choice, err := d.opts.Managed.Tmux(ctx, socket, d.opts.Resolver)
	if err != nil {
		return nil, fmt.Errorf("tmux not found on PATH (%s): leo needs tmux 3.2 or newer", d.opts.Resolver.SearchPath())
	}
	switch {
	case choice.Pending:
		d.log.Warn("tmux upgrade pending", "server_version", choice.ServerVersion, "tmux", choice.Binary, "tmux_path", d.opts.Managed.Marker.TmuxPath)
	case choice.Problem != "":
		d.tmuxGuard = choice.Problem
		d.log.Error("tmux version guard: " + choice.Problem)
	}
	tm, err := tmux.New(tmux.Options{
		Socket: socket,
		Binary: choice.Binary,
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
	// We hold the home's lock: a control client of this server still
	// running is one a killed daemon left, and it can wedge the server.
	d.clearStaleControlClients(tm)
	return tm, nil
}

func (d *run) clearStaleControlClients(tm *tmux.Server) {
	pids, err := tm.ClearStaleControlClients()
	if err != nil {
		d.log.Warn("could not look for stale tmux control clients", "err", err)
		return
	}
	if len(pids) > 0 {
		d.log.Warn("killed tmux control clients a previous daemon left running", "socket", tm.Socket(), "pids", fmt.Sprint(pids))
	}
}

// checkTmux logs, once per episode, a tmux server that does not answer,
// and clears stale control clients of it (the usual cause).
func (d *run) checkTmux(tm *tmux.Server, reported *bool) {
	p := tm.Problem()
	switch {
	case p != "" && !*reported:
		*reported = true
		d.log.Error("tmux server does not answer", "problem", p)
		d.clearStaleControlClients(tm)
	case p == "" && *reported:
		*reported = false
		d.log.Info("tmux server answers again", "socket", tm.Socket())
	}
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

// socket is the leo.sock this daemon made: the listener and the file it
// created, so only that file is ever removed.
type socket struct {
	path string
	ln   net.Listener
	fi   os.FileInfo
}

// ours reports whether path still names the socket file we made.
func (s *socket) ours() bool {
	fi, err := os.Lstat(s.path)
	return err == nil && os.SameFile(fi, s.fi)
}

// remove unlinks leo.sock only if it is still ours: another daemon's
// socket at the same path is never removed.
func (s *socket) remove() {
	if s.ours() {
		_ = os.Remove(s.path)
	}
}

// listenSocket removes a stale leo.sock and listens on a fresh one, 0600.
// Only the lock holder calls it: any socket file there now is stale.
func listenSocket(path string) (socket, error) {
	if len(path) > maxSocketPath {
		return socket{}, fmt.Errorf("socket path %s is %d bytes, longer than the %d a unix socket allows; use a shorter LEO_HOME",
			path, len(path), maxSocketPath)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return socket{}, fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return socket{}, fmt.Errorf("listen on %s: %w", path, err)
	}
	// Closing must not unlink by path: the file there by then may be
	// another daemon's (see socket.remove).
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	// The mode is the boundary: chmod after listen, whatever the umask was.
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		_ = os.Remove(path)
		return socket{}, fmt.Errorf("chmod %s: %w", path, err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		ln.Close()
		return socket{}, fmt.Errorf("stat %s: %w", path, err)
	}
	return socket{path: path, ln: ln, fi: fi}, nil
}

// publishProblems puts each problem /health reports on the stream once,
// when it is first met; one that went away may be published again when it
// comes back.
func publishProblems(bus *events.Bus, now []string, published map[string]bool) {
	if bus == nil {
		return
	}
	still := map[string]bool{}
	for _, p := range now {
		still[p] = true
		if !published[p] {
			bus.Publish(api.Event{Type: api.EventProblem, Reason: p})
		}
	}
	clear(published)
	maps.Copy(published, still)
}

// problems are what /health reports for an operator to act on: what the
// agent manager could not take as its own, and a tmux server that does not
// answer.
func (d *run) problems(agents Agents, tm *tmux.Server) []string {
	var out []string
	if p, ok := agents.(interface{ Problems() []string }); ok {
		out = append(out, p.Problems()...)
	}
	if p := tm.Problem(); p != "" {
		out = append(out, p)
	}
	if d.tmuxGuard != "" {
		out = append(out, d.tmuxGuard)
	}
	return out
}

// ensureOwner makes sure this daemon still owns the home: its lock file
// is the one it holds, or is taken again when it was removed (state/
// deleted while the daemon ran). It fails when another daemon holds the
// home now; no state may then be written.
func (d *run) ensureOwner() error {
	_, err := d.ensureOwnerRetaken()
	return err
}

func (d *run) ensureOwnerRetaken() (bool, error) {
	retaken, err := d.lock.Ensure()
	if err != nil {
		return false, fmt.Errorf("this daemon no longer owns %s: %w", d.home.Root, err)
	}
	if retaken {
		d.log.Warn("the daemon lock file was removed or replaced while the daemon ran; took the lock again", "path", d.home.LockPath())
	}
	return retaken, nil
}

// checkOwner runs every OwnerCheck: the lock (ensureOwner), then the
// socket. A leo.sock that is gone or not the file we made is listened on
// again (we hold the lock, so anything there is stale); the old listener
// is closed. An error means the daemon must stop: another one owns the
// home now.
func (d *run) checkOwner(hs *http.Server, sock *socket, serveErr chan<- error, agents Agents) error {
	retaken, err := d.ensureOwnerRetaken()
	if err != nil {
		d.log.Error("another leo daemon took this home while this one ran (was state/ removed?); stopping", "err", err)
		return err
	}
	if p, ok := agents.(interface{ Persist() error }); ok && retaken {
		// state/ was removed with the records in it: write them again
		// now, so a daemon killed next still finds its agents.
		if err := p.Persist(); err != nil {
			d.log.Error("writing the agent records again failed", "err", err)
		}
	}
	if sock.ours() {
		return nil
	}
	d.log.Warn("leo.sock was removed or replaced while the daemon ran; listening again", "socket", sock.path)
	fresh, err := listenSocket(sock.path)
	if err != nil {
		d.log.Error("could not listen again on leo.sock", "err", err)
		return nil // tried again at the next check
	}
	old := *sock
	*sock = fresh
	go serveOn(hs, fresh.ln, serveErr)
	old.ln.Close()
	return nil
}

// checkStateFiles runs with every owner check: the log and the API token
// are files under state/ that a person (or a clean-up) may delete while the
// daemon runs. The log is opened again where `leo service logs` looks for
// it; the token file is written again with the token in use, so browsers
// stay logged in and agents' MCP tools keep working (see web.RestoreToken).
func (d *run) checkStateFiles(webServer *web.Server) {
	if d.logFile != nil {
		if reopened, err := d.logFile.reopenIfGone(); err != nil {
			d.log.Error("could not open the service log again", "path", d.home.ServiceLogPath(), "err", err)
		} else if reopened {
			d.log.Warn("the service log was removed or replaced while the daemon ran; writing to a new one", "path", d.home.ServiceLogPath())
		}
	}
	webServer.RestoreToken()
}

// serveOn serves the socket API on ln until it is closed. A listener
// closed on purpose (replaced, or Shutdown) is no failure; anything else
// is reported once on serveErr.
func serveOn(hs *http.Server, ln net.Listener, serveErr chan<- error) {
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) || errors.Is(err, net.ErrClosed) {
		return
	}
	select {
	case serveErr <- err:
	default:
	}
}

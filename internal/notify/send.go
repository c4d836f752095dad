package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/config"
)

// Command is one run of a notifier's program.
type Command struct {
	Argv []string
	// Env is the whole environment, NAME=value (values may be secrets:
	// they go to the program through its environment, never its argv).
	Env   []string
	Dir   string
	Stdin []byte
	// Timeout is the deadline: then the program's process group is killed.
	Timeout time.Duration
}

// Runner runs a notifier's program and returns what it wrote (stdout and
// stderr together, bounded). It is the package's one exec seam.
type Runner func(ctx context.Context, clk clock.Clock, c Command) (output []byte, err error)

// maxOutput bounds what a command's output leo keeps; maxLoggedOutput
// (in characters) what of it goes to the log.
const (
	maxOutput       = 16 << 10
	maxLoggedOutput = 2000
)

// ErrDeadline is a command killed at its deadline.
var ErrDeadline = errors.New("deadline")

// Exec runs c.Argv directly (never through a shell) in its own process
// group, with c.Stdin on its stdin. At c.Timeout (by clk) or when ctx
// ends, the whole group is killed with SIGKILL: a notifier has nothing to
// save. Whatever the program started is killed with it when it ends.
func Exec(ctx context.Context, clk clock.Clock, c Command) ([]byte, error) {
	if len(c.Argv) == 0 {
		return nil, errors.New("no program")
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Env, cmd.Dir = c.Env, c.Dir
	cmd.Stdin = bytes.NewReader(c.Stdin)
	out := &boundedBuffer{max: maxOutput}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A child that left the group (or ignores its end) must not hold our
	// pipes open: after this, they are closed under it.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pgid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := clk.NewTimer(c.Timeout)
	defer timer.Stop()
	var err error
	killed := error(nil)
	select {
	case err = <-done:
	case <-timer.C():
		killed = ErrDeadline
	case <-ctx.Done():
		killed = ctx.Err()
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	if killed != nil {
		<-done
		return out.Bytes(), killed
	}
	return out.Bytes(), err
}

// boundedBuffer keeps the first max bytes written to it.
type boundedBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
	cut bool
}

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.max - b.buf.Len()
	if len(p) > room {
		b.cut = true
	}
	if room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Bytes is what was kept. When the output was cut, its last line (which
// may end inside a secret that could then not be hidden) is left out.
func (b *boundedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := bytes.Clone(b.buf.Bytes())
	if b.cut {
		out = out[:bytes.LastIndexByte(out, '\n')+1]
	}
	return out
}

// command runs n's program once with body on its stdin. Its environment
// is leo's, then LEO_NOTIFY_EVENT and LEO_NOTIFY_NOTIFIER, then n's env:.
// What it writes goes to the daemon's log, its env values hidden.
func (e *Engine) command(ctx context.Context, n config.ResolvedNotifier, event string, body []byte) error {
	err := e.runCommand(ctx, n, event, body)
	if err != nil {
		return errors.New(secretsOf(n).scrub(err.Error()))
	}
	return nil
}

func (e *Engine) runCommand(ctx context.Context, n config.ResolvedNotifier, event string, body []byte) error {
	env := append(e.opts.Environ(), "LEO_NOTIFY_EVENT="+event, "LEO_NOTIFY_NOTIFIER="+n.Name)
	for _, k := range n.EnvKeys {
		env = append(env, k+"="+n.Env[k])
	}
	out, err := e.opts.Run(ctx, e.clk, Command{Argv: n.Command, Env: env, Dir: e.opts.Dir, Stdin: body, Timeout: n.Timeout})
	hide := secretsOf(n)
	if text := strings.TrimSpace(string(out)); text != "" {
		e.log.Info("notifier output", "notifier", n.Name, "kind", api.NotifierCommand, "event", event, "output", clip(hide.scrub(text), maxLoggedOutput))
	}
	prog := filepath.Base(n.Command[0])
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrDeadline):
		return fmt.Errorf("%s ran longer than its timeout %s: its process group was killed", prog, n.Timeout)
	case ctx.Err() != nil:
		return fmt.Errorf("%s was stopped: the daemon is shutting down", prog)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		msg := fmt.Sprintf("%s exited with status %d", prog, exit.ExitCode())
		if exit.ExitCode() < 0 {
			msg = fmt.Sprintf("%s ended: %s", prog, exit.ProcessState.String())
		}
		if last := lastLine(string(out)); last != "" {
			msg += ": " + clip(hide.scrub(last), 200)
		}
		return errors.New(msg)
	}
	return fmt.Errorf("starting %s: %s", prog, hide.scrub(err.Error()))
}

// post sends body to n's webhook once, within n's timeout (by the
// engine's clock). 2xx is success; a redirect is not followed.
func (e *Engine) post(ctx context.Context, n config.ResolvedNotifier, body []byte) error {
	hide := secretsOf(n)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timer := e.clk.NewTimer(n.Timeout)
	defer timer.Stop()
	go func() {
		select {
		case <-timer.C():
			cancel(ErrDeadline)
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.Webhook, bytes.NewReader(body))
	if err != nil {
		return errors.New("the webhook URL cannot be used")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", e.opts.UserAgent)
	resp, err := e.http.Do(req)
	if err != nil {
		switch {
		case errors.Is(context.Cause(ctx), ErrDeadline):
			return fmt.Errorf("no answer within its timeout %s", n.Timeout)
		case ctx.Err() != nil:
			return errors.New("stopped: the daemon is shutting down")
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text carries the URL
		}
		return errors.New(hide.scrub(err.Error()))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return &statusError{code: resp.StatusCode, permanent: true, note: " (a redirect: leo follows none; put the final URL in leo.yaml)"}
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests:
		return &statusError{code: resp.StatusCode, permanent: true}
	}
	return &statusError{code: resp.StatusCode}
}

// statusError is a webhook's answer other than 2xx.
type statusError struct {
	code      int
	permanent bool // another try would get the same answer
	note      string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("the webhook answered %d %s%s", e.code, http.StatusText(e.code), e.note)
}

func isPermanent(err error) bool {
	var se *statusError
	return errors.As(err, &se) && se.permanent
}

// secrets are the texts no error or log line of a notifier may carry: its
// URL and the parts of it, and its env values.
type secrets []string

// minSecret is the shortest env value hidden inside a longer text
// (shorter ones would turn every digit of a message into ***).
const minSecret = 4

func secretsOf(n config.ResolvedNotifier) secrets {
	var s secrets
	add := func(v string) {
		if len(v) >= minSecret {
			s = append(s, v)
		}
	}
	if n.Webhook != "" {
		add(n.Webhook)
		if u, err := url.Parse(n.Webhook); err == nil {
			add(u.Redacted())
			add(u.Host)
			add(u.Hostname())
			add(u.User.String())
			if len(u.EscapedPath()) > 1 {
				add(u.EscapedPath())
				add(u.Path)
			}
			add(u.RawQuery)
			if p, ok := u.User.Password(); ok {
				add(p)
			}
		}
	}
	for _, v := range n.Env {
		add(v)
	}
	// Longest first, so a secret holding another is hidden whole.
	slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
	return s
}

func (s secrets) scrub(text string) string {
	for _, v := range s {
		text = strings.ReplaceAll(text, v, "***")
	}
	return text
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

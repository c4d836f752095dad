package realcli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

// Capture is one real TUI run by hand for the capture tools: a fresh home
// set up against the model server, a trusted workspace in it, and the TUI
// in session "a" of a tmux server of its own. Close ends all of it.
type Capture struct {
	Home, Workspace string
	// Env is the TUI's environment (the harness's dirs and model server
	// settings; PATH is bin, then links to the tools the CLIs run on).
	Env    map[string]string
	env    []string
	socket string
}

// NewCapture sets up harness h (its commands in bin) in a fresh home named
// after prefix, talking to the model server at modelURL.
func NewCapture(h, bin, modelURL, prefix string) (*Capture, error) {
	home, err := os.MkdirTemp("", prefix+"-")
	if err != nil {
		return nil, err
	}
	c := &Capture{Home: home, Workspace: filepath.Join(home, "ws"), socket: fmt.Sprintf("%s-%d", prefix, os.Getpid())}
	if err := c.setUp(h, bin, modelURL); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Capture) setUp(h, bin, modelURL string) error {
	if err := os.MkdirAll(c.Workspace, 0o700); err != nil {
		return err
	}
	if err := Setup(h, c.Home, modelURL); err != nil {
		return err
	}
	if err := Trust(h, c.Home, c.Workspace); err != nil {
		return err
	}
	// PATH is the CLIs' folder and links to the tools they run on (node,
	// git, rg…), never a system folder, where a user's own claude lives.
	tools := filepath.Join(c.Home, "tools")
	if err := os.MkdirAll(tools, 0o700); err != nil {
		return err
	}
	if err := hermetic.Link(tools, os.Getenv("PATH"), hermetic.Tools); err != nil {
		return err
	}
	c.Env = map[string]string{"PATH": bin + string(os.PathListSeparator) + tools, "TERM": "xterm-256color", "LANG": "C.UTF-8"}
	for k, v := range Dirs(c.Home) {
		c.Env[k] = v
	}
	hv, _ := Env(h, modelURL)
	for k, v := range hv {
		c.Env[k] = v
	}
	for k, v := range c.Env {
		c.env = append(c.env, k+"="+v)
	}
	sort.Strings(c.env)
	return nil
}

// Tmux runs one tmux command on the capture's own server, stdin (when not
// empty) on its standard input.
func (c *Capture) Tmux(stdin string, args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", c.socket, "-f", "/dev/null"}, args...)...)
	cmd.Env = append(c.env, "TMUX=")
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// Start runs argv in session "a", size w×h, in the workspace.
func (c *Capture) Start(w, h string, argv ...string) error {
	if o, err := c.Tmux("", append([]string{"new-session", "-d", "-s", "a", "-x", w, "-y", h, "-c", c.Workspace, "--"}, argv...)...); err != nil {
		return fmt.Errorf("new-session: %v %s", err, o)
	}
	return nil
}

// Screen is session a's screen as plain text.
func (c *Capture) Screen() string {
	s, _ := c.Tmux("", "capture-pane", "-p", "-J", "-t", "a")
	return s
}

// Close kills the TUI, its tmux server and whatever still runs under the
// home, and removes the home.
func (c *Capture) Close() {
	pid, _ := c.Tmux("", "display-message", "-p", "-t", "a", "#{pane_pid}")
	_, _ = c.Tmux("", "kill-server")
	var p int
	if _, err := fmt.Sscan(pid, &p); err == nil && p > 0 {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	KillUnder(c.Home)
	_ = os.RemoveAll(c.Home)
}

// Package home resolves the leo home and names every path under it, so no
// other package builds a state path by hand.
package home

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
)

// Home is one resolved leo home. Two homes never share a socket, lock, token
// or tmux socket name.
type Home struct {
	// Root is the home directory (~/.leo by default).
	Root string
	// ConfigPath is the leo.yaml in use.
	ConfigPath string
	// ExplicitConfig is true when --config named the file: leo never creates it.
	ExplicitConfig bool
}

// Resolve picks the home: an explicit --config file wins (its directory is
// the home), then LEO_HOME, then ~/.leo.
func Resolve(configFlag string, getenv func(string) string) (Home, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if configFlag != "" {
		p, err := Expand(configFlag, getenv)
		if err != nil {
			return Home{}, err
		}
		p, err = filepath.Abs(p)
		if err != nil {
			return Home{}, err
		}
		return Home{Root: filepath.Dir(p), ConfigPath: p, ExplicitConfig: true}, nil
	}
	root := getenv("LEO_HOME")
	if root == "" {
		userHome, err := userHomeDir(getenv)
		if err != nil {
			return Home{}, err
		}
		root = filepath.Join(userHome, ".leo")
	}
	root, err := Expand(root, getenv)
	if err != nil {
		return Home{}, err
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return Home{}, err
	}
	return Home{Root: root, ConfigPath: filepath.Join(root, "leo.yaml")}, nil
}

func userHomeDir(getenv func(string) string) (string, error) {
	if h := getenv("HOME"); h != "" {
		return h, nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("cannot find the home directory: set HOME or LEO_HOME")
	}
	return h, nil
}

// Expand replaces a leading ~ with the user's home directory.
func Expand(p string, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		h, err := userHomeDir(getenv)
		if err != nil {
			return "", err
		}
		return filepath.Join(h, strings.TrimPrefix(p, "~")), nil
	}
	return p, nil
}

// StateDir holds everything the daemon writes (0700).
func (h Home) StateDir() string { return filepath.Join(h.Root, "state") }

// Workspace is the default task workspace (prompt files live here).
func (h Home) Workspace() string { return filepath.Join(h.Root, "workspace") }

// AgentsDir is the default template workspace.
func (h Home) AgentsDir() string { return filepath.Join(h.Root, "agents") }

func (h Home) state(name string) string { return filepath.Join(h.StateDir(), name) }

func (h Home) LockPath() string        { return h.state("daemon.lock") }
func (h Home) SocketPath() string      { return h.state("leo.sock") }
func (h Home) TokenPath() string       { return h.state("api.token") }
func (h Home) WebSessionsPath() string { return h.state("web-sessions.json") }
func (h Home) AgentsPath() string      { return h.state("agents.json") }
func (h Home) TaskHistoryDir() string  { return h.state("task-history") }
func (h Home) TaskPendingPath() string { return h.state("task-pending.json") }
func (h Home) TaskRunningPath() string { return h.state("task-running.json") }
func (h Home) LogsDir() string         { return h.state("logs") }
func (h Home) ServiceLogPath() string  { return h.state("service.log") }
func (h Home) MarkerPath() string      { return h.state("managed.json") }

// SentDir holds, per agent, leo's record of the messages it delivered and
// who sent them (<agent>.jsonl): the sender a conversation view shows.
func (h Home) SentDir() string { return h.state("sent") }

// HooksDir holds files harnesses load to run leo's hooks (opencode's
// turn-end plugin).
func (h Home) HooksDir() string { return h.state("hooks") }

// TmuxSocket is the -L name of this home's tmux server: "leo" for the
// default home, "leo-<hash>" for any other, so isolated homes never collide.
func (h Home) TmuxSocket(defaultRoot string) string {
	if defaultRoot != "" && filepath.Clean(defaultRoot) == filepath.Clean(h.Root) {
		return "leo"
	}
	f := fnv.New32a()
	f.Write([]byte(h.Root))
	return fmt.Sprintf("leo-%08x", f.Sum32())
}

// DefaultRoot is the default home (~/.leo, ignoring LEO_HOME), the one whose
// tmux server is the plain "leo"; "" when HOME cannot be found.
func DefaultRoot(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	h, err := Resolve("", func(k string) string {
		if k == "LEO_HOME" {
			return ""
		}
		return getenv(k)
	})
	if err != nil {
		return ""
	}
	return h.Root
}

// EnsureState creates the home (0700) and its state dir (0700).
func (h Home) EnsureState() error {
	if err := os.MkdirAll(h.Root, 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(h.StateDir(), 0o700); err != nil {
		return err
	}
	return os.Chmod(h.StateDir(), 0o700)
}

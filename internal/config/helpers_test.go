package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// testHome is a user home in a temp dir with a leo home at <user>/.leo.
type testHome struct {
	User   string // HOME
	Leo    string // the leo home (dir of leo.yaml)
	Path   string // leo.yaml
	env    map[string]string
	getenv func(string) string
}

func newTestHome(t *testing.T) *testHome {
	t.Helper()
	user := t.TempDir()
	h := &testHome{User: user, Leo: filepath.Join(user, ".leo"), env: map[string]string{"HOME": user}}
	h.Path = filepath.Join(h.Leo, "leo.yaml")
	h.getenv = func(k string) string { return h.env[k] }
	if err := os.MkdirAll(h.Leo, 0o700); err != nil {
		t.Fatal(err)
	}
	return h
}

// file writes a file under the leo home (rel) with some content.
func (h *testHome) file(t *testing.T, rel, content string) string {
	t.Helper()
	p := filepath.Join(h.Leo, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func (h *testHome) parse(t *testing.T, yaml string) *Config {
	t.Helper()
	c, err := Parse([]byte(yaml), h.Path, WithGetenv(h.getenv))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, yaml)
	}
	return c
}

// parseTestYAML parses yaml in a fresh home.
func parseTestYAML(t *testing.T, yaml string) *Config {
	t.Helper()
	return newTestHome(t).parse(t, yaml)
}

func messages(fs []Finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.Message)
	}
	return out
}

func errorMessages(c *Config) []string {
	var out []string
	for _, f := range c.Findings() {
		if f.IsError() {
			out = append(out, f.Message)
		}
	}
	return out
}

// wantFinding fails unless some finding has exactly this message.
func wantFinding(t *testing.T, c *Config, want string) Finding {
	t.Helper()
	for _, f := range c.Findings() {
		if f.Message == want {
			return f
		}
	}
	t.Errorf("no finding\n  %s\ngot:\n  %s", want, strings.Join(messages(c.Findings()), "\n  "))
	return Finding{}
}

func wantClean(t *testing.T, c *Config) {
	t.Helper()
	if fs := c.Findings(); len(fs) > 0 {
		t.Errorf("want no findings, got:\n  %s", strings.Join(messages(fs), "\n  "))
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func contains(list []string, s string) bool { return slices.Contains(list, s) }

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

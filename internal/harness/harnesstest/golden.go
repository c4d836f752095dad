package harnesstest

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// The -update flag of every test binary that imports this package (such a
// package must not define its own -update; it gets this one).
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files with the current output")
	}
}

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// Golden compares got with the file at path (relative to the test's package
// directory). With -update it writes got there instead.
func Golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// RenderCommand prints a command one argument per line (quoted with
// strconv.Quote, so whitespace and newlines are visible), then its added env
// sorted by key and its dir. Every occurrence of a replacement's key is
// replaced by its value (e.g. a temp dir by "$ROOT"), so files are stable.
func RenderCommand(title string, cmd harness.Command, err error, replace map[string]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "== %s\n", title)
	if err != nil {
		fmt.Fprintf(&b, "error: %s\n", err)
		return stable(b.String(), replace)
	}
	b.WriteString("argv:\n")
	for _, a := range cmd.Argv {
		fmt.Fprintf(&b, "  %s\n", strconv.Quote(a))
	}
	b.WriteString("env:\n")
	for _, k := range slices.Sorted(maps.Keys(cmd.Env)) {
		fmt.Fprintf(&b, "  %s=%s\n", k, cmd.Env[k])
	}
	fmt.Fprintf(&b, "dir: %s\n", cmd.Dir)
	return stable(b.String(), replace)
}

// stable applies the replacements, longest key first, so a path and its
// parent never fight.
func stable(s string, replace map[string]string) string {
	keys := make([]string, 0, len(replace))
	for k := range replace {
		if k != "" {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		s = strings.ReplaceAll(s, k, replace[k])
	}
	return s
}

// GoldenScope is one resolved scope of a golden argv test: its launch spec
// and its harness_options as YAML decodes them.
type GoldenScope struct {
	Name string
	Spec harness.LaunchSpec
	Raw  map[string]any
}

// GoldenArgv decodes each scope's options with h, renders its interactive
// and headless commands (root shown as $ROOT) and compares them with
// testdata/<name>.golden. No value of a scope's env may reach either
// command.
func GoldenArgv(t *testing.T, h harness.Harness, root string, scopes []GoldenScope) {
	t.Helper()
	replace := map[string]string{root: "$ROOT"}
	for _, sc := range scopes {
		t.Run(sc.Name, func(t *testing.T) {
			opts, err := h.DecodeOptions(sc.Raw)
			if err != nil {
				t.Fatal(err)
			}
			spec := sc.Spec
			spec.Options = opts
			var out strings.Builder
			cmd, err := h.Interactive(spec)
			out.WriteString(RenderCommand("interactive", cmd, err, replace))
			cmd, err = h.Headless(spec)
			out.WriteString(RenderCommand("headless", cmd, err, replace))
			Golden(t, filepath.Join("testdata", sc.Name+".golden"), []byte(out.String()))
			for k, v := range spec.Env {
				if strings.Contains(out.String(), v) {
					t.Errorf("env %s value reached the command", k)
				}
			}
		})
	}
}

// GoldenBridge is the MCP bridge of the golden scopes: leo installed in
// /usr/local/bin, its home and URL the defaults.
func GoldenBridge() *harness.MCPBridge {
	return &harness.MCPBridge{
		Command: "/usr/local/bin/leo",
		Args:    []string{"mcp-server"},
		Env:     map[string]string{"LEO_HOME": "/home/u/.leo"},
		URL:     "http://127.0.0.1:8370",
	}
}

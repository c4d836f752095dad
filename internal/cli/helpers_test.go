package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// result is what one leo invocation printed and how it exited.
type result struct {
	stdout, stderr string
	code           ExitCode
	err            error
}

// testEnv is a sandbox for one CLI run: its own HOME, and the environment
// leo reads (LEO_HOME, ${VAR} values) held in a map, never the real one.
type testEnv struct {
	t    *testing.T
	dir  string // a temp dir; the home of "default home" tests is dir/home/.leo
	vars map[string]string
}

func newTestEnv(t *testing.T) *testEnv {
	t.Helper()
	dir := t.TempDir()
	return &testEnv{t: t, dir: dir, vars: map[string]string{"HOME": filepath.Join(dir, "home")}}
}

func (e *testEnv) getenv(k string) string { return e.vars[k] }

// run executes leo with args through Run, exactly as main does, on buffers.
func (e *testEnv) run(args ...string) result {
	e.t.Helper()
	io, _, out, errOut := TestStreams()
	f := NewFactory(io, e.getenv, "1.2.3-test")
	err := Run(context.Background(), args, f)
	return result{stdout: out.String(), stderr: errOut.String(), code: ExitCodeOf(err), err: err}
}

// runWith is run on a Factory that set changes first (a seam filled in).
func (e *testEnv) runWith(set func(*Factory), args ...string) result {
	e.t.Helper()
	io, _, out, errOut := TestStreams()
	f := NewFactory(io, e.getenv, "1.2.3-test")
	set(f)
	err := Run(context.Background(), args, f)
	return result{stdout: out.String(), stderr: errOut.String(), code: ExitCodeOf(err), err: err}
}

// writeConfig writes leo.yaml (and any extra files, relative to the config's
// directory) under dir/<name> and returns the config path.
func (e *testEnv) writeConfig(name, yaml string, files map[string]string) string {
	e.t.Helper()
	root := filepath.Join(e.dir, name)
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			e.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		e.t.Fatal(err)
	}
	path := filepath.Join(root, "leo.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// normalize replaces the sandbox's paths so golden files are stable.
func (e *testEnv) normalize(s string) string {
	if exe, err := os.Executable(); err == nil {
		s = strings.ReplaceAll(s, exe, "$LEO")
	}
	return strings.ReplaceAll(s, e.dir, "$TMP")
}

// golden compares got with testdata/<name>.golden (rewritten with -update).
//
// A *_json golden file holds the object indented, as a terminal shows it
// (readable diffs); the output, compact on a pipe, is indented to compare.
func golden(t *testing.T, name, got string) {
	t.Helper()
	if strings.HasSuffix(name, "_json") {
		var b bytes.Buffer
		if err := json.Indent(&b, []byte(strings.TrimSpace(got)), "", "  "); err != nil {
			t.Fatalf("%s: output is not JSON: %v\n%s", name, err, got)
		}
		got = b.String() + "\n"
	}
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test ./internal/cli -update to create it): %v", err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s (rerun with -update if intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// decodeOne parses stdout as exactly one JSON object and nothing else: the
// first half of the JSON rule.
func decodeOne(t *testing.T, stdout string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", err, stdout)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err == nil {
		t.Fatalf("stdout carries more than one JSON value:\n%s", stdout)
	}
	if rest := strings.TrimSpace(stdout[dec.InputOffset():]); rest != "" {
		t.Fatalf("stdout has text after the JSON object: %q", rest)
	}
	return obj
}

// keysOf returns an object's keys, sorted.
func keysOf(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

func assertKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := keysOf(m); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("%s: JSON fields %v, want exactly %v", what, got, want)
	}
}

// assertJSONFailure checks the failure half of the JSON rule: the object on
// stdout carries the code (and a message), stderr stays clean of it, and the
// exit status is the code's.
func assertJSONFailure(t *testing.T, r result, code string, exit ExitCode) map[string]any {
	t.Helper()
	if r.code != exit {
		t.Errorf("exit %d, want %d (stdout %q, stderr %q)", r.code, exit, r.stdout, r.stderr)
	}
	obj := decodeOne(t, r.stdout)
	if obj["error"] != code {
		t.Errorf(`"error" = %v, want %q (%s)`, obj["error"], code, r.stdout)
	}
	if msg, _ := obj["message"].(string); msg == "" {
		t.Errorf(`"message" missing or empty: %s`, r.stdout)
	}
	if strings.Contains(r.stderr, "{") {
		t.Errorf("the JSON failure leaked onto stderr: %q", r.stderr)
	}
	return obj
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

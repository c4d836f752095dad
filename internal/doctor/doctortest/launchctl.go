// Package doctortest is a fake launchctl for tests of `leo doctor` and of
// anything else that drives launchd through a program on Linux.
package doctortest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// script records every call and keeps the registered jobs as files: print
// answers 113 (launchctl's "could not find service") for a job that is not
// there, bootstrap registers the plist's label, bootout removes it (3
// when it is not there), and a file fail-<verb> makes that verb fail.
const script = `#!/bin/sh
d=%STATE%
echo "$*" >> "$d/calls"
verb=$1
if [ -e "$d/fail-$verb" ]; then echo "launchctl: $verb: Input/output error" >&2; exit 5; fi
case "$verb" in
print)
  label=${2##*/}
  if [ -e "$d/loaded/$label" ]; then echo "state = running"; exit 0; fi
  echo "Could not find service \"$label\" in domain" >&2; exit 113;;
bootout)
  label=${2##*/}
  if [ ! -e "$d/loaded/$label" ]; then echo "Boot-out failed: 3: No such process" >&2; exit 3; fi
  rm -f "$d/loaded/$label";;
bootstrap)
  if [ ! -e "$3" ]; then echo "Bootstrap failed: 5: Input/output error" >&2; exit 5; fi
  touch "$d/loaded/$(basename "$3" .plist)";;
esac
exit 0
`

// Launchctl is a fake launchctl program and its state.
type Launchctl struct {
	t *testing.T
	// Path is the program.
	Path  string
	state string
}

// New writes a fake launchctl under dir.
func New(t *testing.T, dir string) *Launchctl {
	t.Helper()
	l := &Launchctl{t: t, Path: filepath.Join(dir, "launchctl"), state: filepath.Join(dir, "launchctl.state")}
	if err := os.MkdirAll(filepath.Join(l.state, "loaded"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Path, []byte(strings.ReplaceAll(script, "%STATE%", l.state)), 0o700); err != nil {
		t.Fatal(err)
	}
	return l
}

func (l *Launchctl) touch(name string) {
	l.t.Helper()
	if err := os.WriteFile(filepath.Join(l.state, name), nil, 0o600); err != nil {
		l.t.Fatal(err)
	}
}

// Register marks label as registered (loaded).
func (l *Launchctl) Register(label string) { l.touch(filepath.Join("loaded", label)) }

// Registered reports whether label is registered.
func (l *Launchctl) Registered(label string) bool {
	_, err := os.Stat(filepath.Join(l.state, "loaded", label))
	return err == nil
}

// Fail makes every later call of verb fail (exit 5).
func (l *Launchctl) Fail(verb string) { l.touch("fail-" + verb) }

// Calls are the command lines run so far, in order.
func (l *Launchctl) Calls() []string {
	data, _ := os.ReadFile(filepath.Join(l.state, "calls"))
	s := strings.TrimSpace(string(data))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// Package handovertest is a fake launchctl program for tests of the
// launchd paths (the handover, the launchd backend) on any platform.
package handovertest

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// script stands in for launchctl: it appends every call to <dir>/calls;
// <dir>/fail-<verb> makes that verb fail with the exit code the file holds;
// print answers from <dir>/loaded-<label> (113 "could not find service"
// when it is absent; "pid = N" when the file holds N), bootout removes it (3 when it is absent), bootstrap
// creates it for the plist's label (5 when it exists), as launchd does.
const script = `#!/bin/sh
dir=$(dirname "$0")
echo "$*" >> "$dir/calls"
verb=$1
if [ -f "$dir/fail-$verb" ]; then
	echo "launchctl $verb: injected failure" >&2
	exit "$(cat "$dir/fail-$verb")"
fi
case "$verb" in
print)
	label=${2##*/}
	if [ -f "$dir/loaded-$label" ]; then
		pid=$(cat "$dir/loaded-$label")
		echo "$label = {"
		if [ -n "$pid" ]; then echo "	state = running"; echo "	pid = $pid"; else echo "	state = not running"; fi
		echo "}"
		exit 0
	fi
	echo "Could not find service \"$label\" in domain" >&2
	exit 113 ;;
bootout)
	label=${2##*/}
	if [ ! -f "$dir/loaded-$label" ]; then echo "Boot-out failed: 3: No such process" >&2; exit 3; fi
	rm -f "$dir/loaded-$label" ;;
bootstrap)
	label=$(basename "$3" .plist)
	if [ -f "$dir/loaded-$label" ]; then echo "Bootstrap failed: 5: Input/output error" >&2; exit 5; fi
	touch "$dir/loaded-$label" ;;
esac
exit 0
`

// Launchctl is an installed fake launchctl.
type Launchctl struct {
	t   testing.TB
	dir string
}

// New writes the fake into a temporary directory.
func New(t testing.TB) *Launchctl {
	t.Helper()
	l := &Launchctl{t: t, dir: t.TempDir()}
	if err := os.WriteFile(l.Path(), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return l
}

// Path is the program's absolute path.
func (l *Launchctl) Path() string { return filepath.Join(l.dir, "launchctl") }

// Fail makes every later call of verb exit with code.
func (l *Launchctl) Fail(verb string, code int) {
	l.t.Helper()
	if err := os.WriteFile(filepath.Join(l.dir, "fail-"+verb), []byte(strconv.Itoa(code)), 0o644); err != nil {
		l.t.Fatal(err)
	}
}

// SetLoaded registers the job label with the fake launchd.
func (l *Launchctl) SetLoaded(label string) {
	l.t.Helper()
	if err := os.WriteFile(filepath.Join(l.dir, "loaded-"+label), nil, 0o644); err != nil {
		l.t.Fatal(err)
	}
}

// SetRunning registers label with its process pid running, as print
// shows it.
func (l *Launchctl) SetRunning(label string, pid int) {
	l.t.Helper()
	if err := os.WriteFile(filepath.Join(l.dir, "loaded-"+label), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		l.t.Fatal(err)
	}
}

// Loaded reports whether label is registered.
func (l *Launchctl) Loaded(label string) bool {
	_, err := os.Stat(filepath.Join(l.dir, "loaded-"+label))
	return err == nil
}

// Calls are the argument lists of every call so far, one line each.
func (l *Launchctl) Calls() []string {
	l.t.Helper()
	data, err := os.ReadFile(filepath.Join(l.dir, "calls"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		l.t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

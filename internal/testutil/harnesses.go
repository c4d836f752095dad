package testutil

import (
	"fmt"
	"slices"

	"github.com/blackpaw-studio/leo/internal/harness"
	// all is the one place the adapters are wired in: whatever it
	// registers is what the tests run against.
	_ "github.com/blackpaw-studio/leo/internal/harness/all"
)

// Harnesses are the names of every registered adapter, sorted. Tests that
// prove a behaviour for each harness range over it, so a new adapter is
// covered the moment it is registered.
func Harnesses() []string { return harness.Names() }

// HarnessesWhere are the registered harnesses whose adapter passes does,
// sorted. A test that needs what an adapter does (ids it discovers, a
// workspace it prepares) picks the harnesses by that, not by name, so a new
// adapter that does it is covered too.
func HarnessesWhere(does func(harness.Harness) bool) []string {
	var out []string
	for _, h := range harness.All() {
		if does(h) {
			out = append(out, h.Name())
		}
	}
	return out
}

// FakeHarnessNames are the programs the fake harness impersonates: the
// binary of every registered adapter.
func FakeHarnessNames() []string {
	var out []string
	for _, h := range harness.All() {
		out = append(out, h.Binary())
	}
	return out
}

// PinsID reports whether leo chooses harness name's conversation id before
// the first launch (so the first launch carries it).
func PinsID(name string) bool { return adapter(name).Sessions().PinsID() }

// FreshArgs are the arguments after the program of a fresh interactive
// launch of harness name with no options.
func FreshArgs(name string) []string { return interactive(name, harness.LaunchSpec{})[1:] }

// ResumeArgs are the arguments with which harness name resumes conversation
// id, as its adapter writes them: what a resume launch adds to a fresh one.
func ResumeArgs(name, id string) []string {
	return inserted(interactive(name, harness.LaunchSpec{}), interactive(name, harness.LaunchSpec{SessionID: id, Resume: true}))
}

// PinArgs are the arguments with which a pinning harness starts a new
// conversation with id; nil for a harness that discovers its ids.
func PinArgs(name, id string) []string {
	if !PinsID(name) {
		return nil
	}
	return inserted(interactive(name, harness.LaunchSpec{}), interactive(name, harness.LaunchSpec{SessionID: id}))
}

// IsResume reports whether argv resumes some conversation of harness name.
func IsResume(name string, argv []string) bool {
	const marker = "\x00resume-id\x00"
	want := ResumeArgs(name, marker)
	for i := 0; i+len(want) <= len(argv); i++ {
		if slices.EqualFunc(argv[i:i+len(want)], want, func(a, w string) bool { return w == marker || a == w }) {
			return true
		}
	}
	return false
}

func adapter(name string) harness.Harness {
	h, ok := harness.Lookup(name)
	if !ok {
		panic(fmt.Sprintf("testutil: no harness %q registered (registered: %v)", name, harness.Names()))
	}
	return h
}

func interactive(name string, spec harness.LaunchSpec) []string {
	spec.Workspace = "/nonexistent/workspace"
	c, err := adapter(name).Interactive(spec)
	if err != nil || len(c.Argv) == 0 {
		panic(fmt.Sprintf("testutil: %s Interactive(%+v) = %q, %v", name, spec, c.Argv, err))
	}
	return c.Argv
}

// inserted is what b adds to a: the part of b between the longest prefix
// and the longest suffix the two share.
func inserted(a, b []string) []string {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return slices.Clone(b[p : len(b)-s])
}

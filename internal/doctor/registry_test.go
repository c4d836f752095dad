package doctor

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// fourth is a harness doctor has never heard of: codex in every respect
// but its name, its program and how it is installed. Registered for this
// test binary only, it shows that the harness checks are the registry's.
type fourth struct{ harness.Harness }

func (fourth) Name() string   { return "fourth" }
func (fourth) Binary() string { return "fourth-cli" }
func (fourth) Install() harness.Install {
	return harness.Install{Title: "Fourth", Command: "npm install -g fourth-cli"}
}

func init() {
	codex, ok := harness.Lookup("codex")
	if !ok {
		panic("no codex adapter registered")
	}
	harness.Register(fourth{codex})
}

// Every registered harness gets its check, in name order after the
// marker's, found by its own program name and installed as it says.
func TestHarnessChecksComeFromTheRegistry(t *testing.T) {
	w := newWorld(t, "linux")
	w.env.VersionTimeout = 5 * time.Second
	var names []string
	for _, c := range Checks(context.Background(), w.env) {
		if _, ok := harness.Lookup(c.Name); ok {
			names = append(names, c.Name)
		}
	}
	if want := harness.Names(); !slices.Equal(names, want) || !slices.Contains(names, "fourth") {
		t.Fatalf("harness checks %v, want %v (with fourth)", names, want)
	}

	w.env.Harnesses = map[string]bool{"fourth": true}
	got := mustCheck(t, Checks(context.Background(), w.env), "fourth")
	if got.Status != Fail || got.Message != "Fourth: not found" || got.Fix != "npm install -g fourth-cli" {
		t.Fatalf("fourth missing, used: %+v", got)
	}

	bin := filepath.Join(w.dir, "bin", "fourth-cli")
	w.script(bin, "#!/bin/sh\necho 'fourth 0.4.1'\n")
	got = mustCheck(t, Checks(context.Background(), w.env), "fourth")
	if got.Status != OK || got.Message != "Fourth: "+bin+" (fourth 0.4.1)" {
		t.Fatalf("fourth found: %+v", got)
	}
}

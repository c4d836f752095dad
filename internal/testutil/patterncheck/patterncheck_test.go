package patterncheck

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestStringsYieldsEveryStringOnceInOrder(t *testing.T) {
	got := slices.Collect(Strings([]string{"a", "b"}, 2))
	want := []string{"", "a", "aa", "ab", "b", "ba", "bb"}
	if !slices.Equal(got, want) {
		t.Fatalf("Strings(a,b; 2) = %q, want %q", got, want)
	}
	n := 0
	for range Strings([]string{"x", "y", "z"}, 3) {
		if n++; n == 5 {
			break // stopping early must not panic
		}
	}
}

// Agrees must catch a check that is wrong on one string only.
func TestAgreesCatchesADisagreement(t *testing.T) {
	rec := &recorder{TB: t}
	Agrees(rec, `^a+$`, func(s string) bool { return s != "" && strings.Trim(s, "a") == "" && s != "aaa" }, []string{"a", "b"}, 3)
	if len(rec.errors) != 1 || !strings.Contains(rec.errors[0], `"aaa"`) {
		t.Fatalf("errors %q, want one about \"aaa\"", rec.errors)
	}
	rec = &recorder{TB: t}
	Agrees(rec, `^a+$`, func(s string) bool { return s != "" && strings.Trim(s, "a") == "" }, []string{"a", "b"}, 3)
	if len(rec.errors) != 0 {
		t.Fatalf("a correct check was faulted: %q", rec.errors)
	}
}

// recorder keeps what Agrees reports instead of failing the test.
type recorder struct {
	testing.TB
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, a...))
}

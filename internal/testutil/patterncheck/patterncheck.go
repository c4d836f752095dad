// Package patterncheck pins a hand-written check to the regexp it replaces
// (leo avoids package-level regexps: every command would compile them at
// start-up). Over an alphabet of the characters that matter to the
// pattern, agreement on every short string is a proof, not a sample; a
// fuzz target covers the rest.
package patterncheck

import (
	"iter"
	"regexp"
	"testing"
)

// Strings yields every concatenation of 0 to n pieces of alphabet, shortest
// prefix first (pieces may be longer than a byte).
func Strings(alphabet []string, n int) iter.Seq[string] {
	return func(yield func(string) bool) {
		var walk func(prefix string, left int) bool
		walk = func(prefix string, left int) bool {
			if !yield(prefix) {
				return false
			}
			for i := 0; left > 0 && i < len(alphabet); i++ {
				if !walk(prefix+alphabet[i], left-1) {
					return false
				}
			}
			return true
		}
		walk("", n)
	}
}

// Agrees fails t for every string of Strings(alphabet, n) on which check
// and pattern disagree.
func Agrees(t testing.TB, pattern string, check func(string) bool, alphabet []string, n int) {
	t.Helper()
	re := regexp.MustCompile(pattern)
	bad := 0
	for s := range Strings(alphabet, n) {
		if got, want := check(s), re.MatchString(s); got != want {
			t.Errorf("%s on %q: the check says %v, the regexp %v", pattern, s, got, want)
			if bad++; bad == 20 {
				t.Fatalf("%s: stopping after %d disagreements", pattern, bad)
			}
		}
	}
}

// Fuzz runs f as a fuzz target that fails when check and pattern disagree;
// seeds start its corpus.
func Fuzz(f *testing.F, pattern string, check func(string) bool, seeds ...string) {
	for _, s := range seeds {
		f.Add(s)
	}
	re := regexp.MustCompile(pattern)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := check(s), re.MatchString(s); got != want {
			t.Fatalf("%s on %q: the check says %v, the regexp %v", pattern, s, got, want)
		}
	})
}

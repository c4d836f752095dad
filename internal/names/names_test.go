package names

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The hand-written name check is exactly the documented pattern.
func TestNameCheckIsThePattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	cases := []string{"", "a", "0", "-", "a-", "-a", "A", "aB", "a_b", "a.b", "a b", "a\n", "\na", "é",
		strings.Repeat("a", 63), strings.Repeat("a", 64), "a" + strings.Repeat("-", 62), "9-9", "leo-x"}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "az09-A_.\n é"
	for i := 0; i < 20000; i++ {
		b := make([]byte, rng.IntN(70))
		for j := range b {
			b[j] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := Valid(s), pattern.MatchString(s); got != want {
			t.Fatalf("%q: check says %v, the pattern %v", s, got, want)
		}
	}
}

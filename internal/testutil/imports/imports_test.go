package imports

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

func TestMain(m *testing.M) { hermetic.Main(m) }

// Deps agrees with the go tool's own graph for a package without
// platform-only files.
func TestDepsAgreesWithGoList(t *testing.T) {
	const pkg = Module + "/internal/client"
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var want []string
	for _, p := range strings.Fields(string(out)) {
		if p != pkg && Under(p, Module) {
			want = append(want, p)
		}
	}
	slices.Sort(want)
	if got := Deps(t, pkg); !slices.Equal(got, want) {
		t.Fatalf("Deps(%s) =\n%v\ngo list -deps:\n%v", pkg, got, want)
	}
}

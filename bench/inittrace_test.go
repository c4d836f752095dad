package bench

import (
	"bufio"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

// Start-up budgets: every leo command pays the initialisers of every
// package linked into the binary (README, CLI start-up). leo's own packages
// build nothing at init (regexps compile on first use, tables are built
// when needed); the whole binary's initialisers stay within a budget, so
// new code (web UI, MCP) cannot quietly add to every command's start.
//
// The official MCP SDK (leo mcp-server) costs about 128 KiB of it that no
// leo code can defer: github.com/google/jsonschema-go ~81 KiB, encoding/gob
// ~28 KiB (imported by the SDK itself), the SDK's own packages ~15 KiB.
// The budget was 128 KiB before it; the rest of the binary still has to
// fit in what is left.
const (
	leoPackageInitBytes = 4 << 10
	totalInitBytes      = 256 << 10
)

// TestStartupInitBudget runs `leo version` with GODEBUG=inittrace=1 and
// checks the bytes each package's initialiser allocates (exact, unlike the
// clock times beside them).
func TestStartupInitBudget(t *testing.T) {
	bin := leoBinary(t)
	cmd := exec.Command(bin, "version")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + hermetic.Dir(t), "GODEBUG=inittrace=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("leo version: %v\n%s", err, out)
	}
	total, n := 0, 0
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		// init <pkg> @0.1 ms, 0.02 ms clock, 1992 bytes, 43 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 11 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		bytes, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("unexpected inittrace line %q", sc.Text())
		}
		n++
		total += bytes
		if strings.HasPrefix(f[1], "github.com/blackpaw-studio/leo/") && bytes > leoPackageInitBytes {
			t.Errorf("%s allocates %d bytes at init (budget %d): build it on first use instead (sync.OnceValue)", f[1], bytes, leoPackageInitBytes)
		}
	}
	if n == 0 {
		t.Fatalf("no inittrace lines in:\n%s", out)
	}
	if total > totalInitBytes {
		t.Errorf("package initialisers allocate %d bytes in all (budget %d): every command pays this at start", total, totalInitBytes)
	}
	t.Logf("%d package initialisers, %d bytes", n, total)
}

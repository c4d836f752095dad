package bench

import (
	"bufio"
	"maps"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

// Start-up budgets: every leo command pays the initialisers of every
// package linked into the binary (docs/performance.md, CLI start-up). leo's own packages
// build nothing at init (regexps compile on first use, tables are built
// when needed); the whole binary's initialisers stay within a budget, so
// new code (web UI, MCP) cannot quietly add to every command's start.
//
// Go runs every linked package's initialiser, used or not, so what only
// `leo mcp-server` needs still runs at every start: the official MCP SDK
// costs about 124 KiB that no leo code can defer
// (github.com/google/jsonschema-go ~81 KiB, encoding/gob ~28 KiB, imported
// by the SDK itself, the SDK's own packages ~15 KiB). Those packages (the
// ones linked only through internal/mcp, found with go list) have a budget
// of their own, so it cannot grow unseen; everything else is held to the
// 128 KiB the whole binary had before the SDK. Leaving the SDK out of the
// binary is the only way below that (docs/performance.md, CLI start-up).
const (
	leoPackageInitBytes = 4 << 10
	totalInitBytes      = 128 << 10
	mcpOnlyInitBytes    = 128 << 10
)

// TestStartupInitBudget runs `leo version` with GODEBUG=inittrace=1 and
// checks the bytes each package's initialiser allocates (exact, unlike the
// clock times beside them).
func TestStartupInitBudget(t *testing.T) {
	bin := leoBinary(t)
	mcpOnly := mcpOnlyPackages(t)
	cmd := exec.Command(bin, "version")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + hermetic.Dir(t), "GODEBUG=inittrace=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("leo version: %v\n%s", err, out)
	}
	total, mcpTotal, n := 0, 0, 0
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
		if mcpOnly[f[1]] {
			mcpTotal += bytes
		} else {
			total += bytes
		}
		if strings.HasPrefix(f[1], "github.com/blackpaw-studio/leo/") && bytes > leoPackageInitBytes {
			t.Errorf("%s allocates %d bytes at init (budget %d): build it on first use instead (sync.OnceValue)", f[1], bytes, leoPackageInitBytes)
		}
	}
	if n == 0 {
		t.Fatalf("no inittrace lines in:\n%s", out)
	}
	if total > totalInitBytes {
		t.Errorf("package initialisers allocate %d bytes in all, the MCP server's own left out (budget %d): every command pays this at start", total, totalInitBytes)
	}
	if mcpTotal > mcpOnlyInitBytes {
		t.Errorf("the packages linked only for leo mcp-server allocate %d bytes at init (budget %d): every command pays this at start", mcpTotal, mcpOnlyInitBytes)
	}
	t.Logf("%d package initialisers, %d bytes: %d for the MCP server's own packages (%d of them), %d for the rest", n, total+mcpTotal, mcpTotal, len(mcpOnly), total)
}

// mcpOnlyPackages are the packages linked into leo only through the MCP
// server (internal/mcp and the SDK): those cmd/leo depends on that nothing
// else leo's CLI imports reaches.
func mcpOnlyPackages(t *testing.T) map[string]bool {
	const (
		leo    = "github.com/blackpaw-studio/leo/cmd/leo"
		cli    = "github.com/blackpaw-studio/leo/internal/cli"
		server = "github.com/blackpaw-studio/leo/internal/mcp"
	)
	roots := map[string]bool{}
	for _, p := range goList(t, "-f", "{{join .Imports \"\\n\"}}", leo, cli) {
		if p != cli && p != server && !strings.HasPrefix(p, "github.com/modelcontextprotocol/") {
			roots[p] = true
		}
	}
	rest := map[string]bool{leo: true, cli: true}
	for _, p := range goList(t, append([]string{"-deps"}, slices.Sorted(maps.Keys(roots))...)...) {
		rest[p] = true
	}
	only := map[string]bool{}
	for _, p := range goList(t, "-deps", leo) {
		if !rest[p] {
			only[p] = true
		}
	}
	if !only[server] {
		t.Fatalf("%s is not among the packages only the MCP server links: %v", server, slices.Sorted(maps.Keys(only)))
	}
	return only
}

func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command(goTool(), append([]string{"list"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return strings.Fields(string(out))
}

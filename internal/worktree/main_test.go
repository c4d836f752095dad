package worktree

import (
	"os"
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

// TestMain: only the test tools (git among them) are on PATH.
func TestMain(m *testing.M) { os.Exit(hermetic.Main(m)) }

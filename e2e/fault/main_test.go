package fault

import (
	"os"
	"testing"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

func TestMain(m *testing.M) {
	code := hermetic.Main(m)
	leoproc.Cleanup()
	os.Exit(code)
}

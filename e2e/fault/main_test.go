package fault

import (
	"os"
	"testing"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
)

func TestMain(m *testing.M) {
	code := m.Run()
	leoproc.Cleanup()
	os.Exit(code)
}

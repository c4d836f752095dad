package proc

import (
	"os"
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

// TestMain: no program of the machine's but the test tools is on PATH
// (hermetic.Main); the tests put their fakes in front.
func TestMain(m *testing.M) { os.Exit(hermetic.Main(m)) }

package pi

import (
	"os"
	"testing"

	"github.com/blackpaw-studio/leo/internal/testutil/hermetic"
)

func TestMain(m *testing.M) { os.Exit(hermetic.Main(m)) }

package leoproc

import (
	"fmt"
	"os"
	"testing"

	"github.com/blackpaw-studio/leo/internal/apitoken"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

// FreePort is testutil.FreePort.
func FreePort(tb testing.TB) int {
	tb.Helper()
	return testutil.FreePort(tb)
}

// AppendConfig adds text (top-level YAML sections) to the world's leo.yaml.
func (w *World) AppendConfig(text string) {
	w.TB.Helper()
	f, err := os.OpenFile(w.Home.ConfigPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		w.TB.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		w.TB.Fatal(err)
	}
}

// WebSection is a web: section serving (or, with enabled false, set up to
// serve) on port of 127.0.0.1.
func WebSection(port int, enabled bool) string {
	return fmt.Sprintf("web:\n  enabled: %t\n  bind: 127.0.0.1\n  port: %d\n", enabled, port)
}

// EnableWeb adds a web: section on a free port to leo.yaml and returns the
// base URL the daemon will serve.
func (w *World) EnableWeb() string {
	w.TB.Helper()
	port := FreePort(w.TB)
	w.AppendConfig(WebSection(port, true))
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

// Token is the API token the world's daemon minted.
func (w *World) Token() string {
	w.TB.Helper()
	tok, err := apitoken.Read(w.Home.TokenPath())
	if err != nil {
		w.TB.Fatalf("the API token: %v", err)
	}
	return tok
}

package browser_test

import (
	"strings"
	"testing"
)

// TestNoChromiumSkipsUnlessRequired: without chromium the browser tests
// skip, with a line naming what is missing; LEO_REQUIRE_CHROMIUM (set by
// .ci/run) makes it a failure.
func TestNoChromiumSkipsUnlessRequired(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	required, msg := noChromium(getenv)
	if required || !strings.Contains(msg, "no chromium on PATH") || !strings.Contains(msg, "apt-get install chromium") {
		t.Errorf("not required: %v %q", required, msg)
	}
	env["LEO_REQUIRE_CHROMIUM"] = "1"
	if required, msg = noChromium(getenv); !required || !strings.Contains(msg, "LEO_REQUIRE_CHROMIUM") {
		t.Errorf("required: %v %q", required, msg)
	}
}

package harnesstest

import (
	"testing"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// DecodeError is a harness_options map an adapter must refuse, and the
// exact text of the refusal.
type DecodeError struct {
	Raw  map[string]any
	Want string
}

// DecodeErrors checks that h.DecodeOptions refuses each case's map with
// exactly its text; cases are keyed by subtest name.
func DecodeErrors(t *testing.T, h harness.Harness, cases map[string]DecodeError) {
	t.Helper()
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := h.DecodeOptions(c.Raw)
			if err == nil || err.Error() != c.Want {
				t.Fatalf("got %v\nwant %s", err, c.Want)
			}
		})
	}
}

// Models checks that h.ValidateModel accepts every name in valid and
// refuses every name in invalid.
func Models(t *testing.T, h harness.Harness, valid, invalid []string) {
	t.Helper()
	for _, m := range valid {
		if err := h.ValidateModel(m); err != nil {
			t.Errorf("ValidateModel(%q) = %v", m, err)
		}
	}
	for _, m := range invalid {
		if err := h.ValidateModel(m); err == nil {
			t.Errorf("ValidateModel(%q) accepted", m)
		}
	}
}

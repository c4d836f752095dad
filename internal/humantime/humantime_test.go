package humantime

import (
	"strings"
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for got, want := range map[string]string{
		Ago(42 * time.Second):                        "42s",
		Ago(5*time.Minute + 20*time.Second):          "5m",
		Ago(3*time.Hour + 7*time.Minute):             "3h",
		Ago(52 * time.Hour):                          "2d",
		Rel(now.Add(-3*time.Minute), now):            "3m ago",
		Rel(now.Add(2*time.Hour), now):               "in 2h",
		Took(now, now.Add(83*time.Second)):           "1m23s",
		Took(now, now.Add(1500*time.Millisecond)):    "1.5s",
		Took(now, now.Add(1234567*time.Microsecond)): "1.2s",
		Took(now, time.Time{}):                       "-",
		Took(now, now.Add(-time.Second)):             "-",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	if s := Stamp(now); !strings.HasSuffix(s, " "+now.Local().Format("MST")) {
		t.Errorf("Stamp %q does not say its zone", s)
	}
}

package web

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/internal/clock"
	"github.com/blackpaw-studio/leo/internal/testutil"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFailedLoginsAreLoggedAndSlowed (issue 15 item 17): every failed
// login — a wrong token posted to /login or sent as a bearer token — is
// logged with the client's address and never the guess; after
// freeFailures in a row the answers wait (on the clock), doubling; the
// right token is answered at once all the while, and a login resets the
// count.
func TestFailedLoginsAreLoggedAndSlowed(t *testing.T) {
	var seen []string
	s := newTestSite(t, minimalYAML, fakeAPI(&seen))
	var logs syncBuffer
	s.srv.opts.Log = slog.New(slog.NewTextHandler(&logs, nil))
	fake := clock.NewFake(time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC))
	s.srv.logins.clk = fake

	const guess = "0123456789abcdef-not-the-token"
	wrongLogin := func() int {
		status, _, _ := s.do("POST", "/login", strings.NewReader(url.Values{"token": {guess}}.Encode()),
			map[string]string{"Content-Type": "application/x-www-form-urlencoded"})
		return status
	}
	wrongBearer := func() int {
		status, _, _ := s.do("GET", "/api/health", nil, map[string]string{"Authorization": "Bearer " + guess})
		return status
	}
	// The free ones answer with no timer involved.
	for i, f := range []func() int{wrongLogin, wrongBearer, wrongLogin} {
		if code := f(); code != http.StatusUnauthorized {
			t.Fatalf("failure %d = %d", i+1, code)
		}
	}
	if fake.Pending() != 0 {
		t.Fatal("a free failure waited on the clock")
	}
	// The next waits firstDelay, the one after twice that.
	for _, delay := range []time.Duration{firstDelay, 2 * firstDelay} {
		done := make(chan int, 1)
		go func() { done <- wrongBearer() }()
		testutil.WaitFor(t, 10*time.Second, func() bool { return fake.Pending() == 1 }, "the failed attempt waiting out its delay")
		// Meanwhile the right token is answered at once.
		if status, _, _ := s.do("GET", "/api/health", nil, s.bearer()); status != http.StatusOK {
			t.Fatalf("the right token during a delay = %d", status)
		}
		select {
		case code := <-done:
			t.Fatalf("a delayed failure answered %d before its delay", code)
		default:
		}
		fake.Advance(delay - time.Millisecond)
		select {
		case code := <-done:
			t.Fatalf("answered %d before %v", code, delay)
		case <-time.After(20 * time.Millisecond):
		}
		fake.Advance(time.Millisecond)
		select {
		case code := <-done:
			if code != http.StatusUnauthorized {
				t.Fatalf("delayed failure = %d", code)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the delayed failure never answered")
		}
	}
	// A login resets the client: its next failure is free again.
	s.login()
	if code := wrongLogin(); code != http.StatusUnauthorized || fake.Pending() != 0 {
		t.Fatalf("failure after a login = %d, pending timers %d", code, fake.Pending())
	}

	out := logs.String()
	if strings.Contains(out, guess) {
		t.Fatalf("the log holds the guess:\n%s", out)
	}
	if strings.Contains(out, s.token) {
		t.Fatal("the log holds the token")
	}
	lines := strings.Count(out, "failed login")
	if lines != 6 || !strings.Contains(out, "client=127.0.0.1") || !strings.Contains(out, `attempt="POST /login"`) ||
		!strings.Contains(out, `attempt="bearer token on GET /api/health"`) {
		t.Fatalf("%d failed-login lines, want 6 naming the client and the attempt:\n%s", lines, out)
	}
}

func TestBackoff(t *testing.T) {
	want := map[int]time.Duration{1: 0, 3: 0, 4: firstDelay, 5: 2 * firstDelay, 8: 16 * firstDelay, 9: maxDelay, 50: maxDelay}
	for n, d := range want {
		if got := backoff(n); got != d {
			t.Errorf("backoff(%d) = %v, want %v", n, got, d)
		}
	}
}

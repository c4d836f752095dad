package web

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
)

// senderRecorder is a socket handler that keeps the sender header of each
// send it is handed and answers it queued.
type senderRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (s *senderRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/send") {
		s.mu.Lock()
		s.seen = append(s.seen, r.Header.Get(api.SenderHeader))
		s.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"id":"m1","agent":"bob","queued":1,"delivery":"queued"}`))
}

func (s *senderRecorder) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.seen) == 0 {
		return "(none)"
	}
	return s.seen[len(s.seen)-1]
}

// The socket route learns who sent a message from the web server, never
// from the client: a token's client is "api" whatever header it sends,
// and the browser's form is "web".
func TestSendsAreMarkedWithTheirSurface(t *testing.T) {
	rec := &senderRecorder{}
	s := newTestSite(t, "", rec)
	headers := s.bearer()
	headers["Content-Type"] = "application/json"
	headers[api.SenderHeader] = api.SenderWeb // a client's claim
	status, _, body := s.do("POST", "/api/agent/bob/send", strings.NewReader(`{"message":"hi"}`), headers)
	if status != http.StatusOK || rec.last() != api.SenderAPI {
		t.Fatalf("API send: %d %s, sender %q; want api", status, body, rec.last())
	}
	s.login()
	if status, _, body := s.postForm("/web/agents/bob/send", url.Values{"message": {"hello"}}); status != http.StatusSeeOther || rec.last() != api.SenderWeb {
		t.Fatalf("browser send: %d %s, sender %q; want web", status, body, rec.last())
	}
}

package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/blackpaw-studio/leo/internal/statefile"
)

// sessionLifetime is how long a login lasts (logging out ends it sooner).
const sessionLifetime = 14 * 24 * time.Hour

// maxSessions bounds the store: logins beyond it end the oldest.
const maxSessions = 256

// sessions are the browser logins, kept in state/web-sessions.json (0600)
// so a daemon restart does not log everyone out. A session's cookie value
// is a random id; the file holds only HMAC(token, id), so it opens nothing
// by itself, and a new token ends every session at once. The file is
// written before memory changes: a login the disk did not take fails.
type sessions struct {
	path string
	log  *slog.Logger
	now  func() time.Time

	mu sync.Mutex
	m  map[string]time.Time // HMAC(token, id) → expiry
	// changed is closed (and replaced) when sessions end or the token
	// changes: open event streams look again whether theirs is live.
	changed chan struct{}
}

// changes is a channel closed at the next change (an end, a new token).
func (ss *sessions) changes() <-chan struct{} {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.changed
}

// notify tells those waiting on changes.
func (ss *sessions) notify() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.notifyLocked()
}

func (ss *sessions) notifyLocked() {
	close(ss.changed)
	ss.changed = make(chan struct{})
}

// sessionFile is the file's shape.
type sessionFile struct {
	Version  int                  `json:"version"`
	Sessions map[string]time.Time `json:"sessions"`
}

func loadSessions(path string, log *slog.Logger) *sessions {
	ss := &sessions{path: path, log: log, now: time.Now, m: map[string]time.Time{}, changed: make(chan struct{})}
	var f sessionFile
	found, err := statefile.ReadChecked(path, &f, func([]byte) error {
		if f.Version != 1 {
			return fmt.Errorf("version %d, this leo reads version 1", f.Version)
		}
		return nil
	})
	switch {
	case err != nil:
		// Kept aside (never taken as empty silently): everyone logs in again.
		log.Warn("web sessions file not understood; browsers must log in again", "err", err)
	case found:
		ss.m = f.Sessions
		if ss.m == nil {
			ss.m = map[string]time.Time{}
		}
	}
	return ss
}

// key is what the store keeps for a cookie value under token.
func sessionKey(token []byte, id string) string {
	m := hmac.New(sha256.New, token)
	m.Write([]byte("leo web session v2\x00" + id))
	return hex.EncodeToString(m.Sum(nil))
}

// create starts a session and returns its cookie value.
func (ss *sessions) create(token []byte) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	id := hex.EncodeToString(b[:])
	ss.mu.Lock()
	defer ss.mu.Unlock()
	now := ss.now()
	next := maps.Clone(ss.m)
	for k, exp := range next {
		if !exp.After(now) {
			delete(next, k)
		}
	}
	for len(next) >= maxSessions {
		oldest := ""
		for k, exp := range next {
			if oldest == "" || exp.Before(next[oldest]) {
				oldest = k
			}
		}
		delete(next, oldest)
	}
	next[sessionKey(token, id)] = now.Add(sessionLifetime)
	if err := ss.save(next); err != nil {
		return "", err
	}
	ended := len(next) <= len(ss.m) // an expired or the oldest session made room
	ss.m = next
	if ended {
		ss.notifyLocked()
	}
	return id, nil
}

// valid reports whether id is a live session under token.
func (ss *sessions) valid(token []byte, id string) bool {
	if id == "" {
		return false
	}
	k := sessionKey(token, id)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	exp, ok := ss.m[k]
	return ok && exp.After(ss.now())
}

// end ends a session (logout). Memory follows the disk; when the file
// cannot be written the session ends in memory anyway (a logout must not
// fail open), and the error says the file is stale.
func (ss *sessions) end(token []byte, id string) error {
	k := sessionKey(token, id)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if _, ok := ss.m[k]; !ok {
		return nil
	}
	next := maps.Clone(ss.m)
	delete(next, k)
	err := ss.save(next)
	ss.m = next
	ss.notifyLocked()
	if err != nil {
		return fmt.Errorf("the session ended here, but %s could not be written (it ends for good at the next login or restart that can write it): %w", ss.path, err)
	}
	return nil
}

func (ss *sessions) save(m map[string]time.Time) error {
	if err := statefile.WriteJSON(ss.path, sessionFile{Version: 1, Sessions: m}, 0o600); err != nil {
		return errors.Join(errors.New("cannot save the web sessions"), err)
	}
	return nil
}

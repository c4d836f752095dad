package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/apitoken"
)

// Who may do what:
//   - /api/*: Authorization: Bearer <state/api.token>, compared in
//     constant time; nothing else (no cookie) opens the API.
//   - /web/* pages: the session cookie a login with the token sets: a
//     random id the daemon keeps (sessions.go) for 14 days or until logout.
//     It is not the token and cannot be turned into it; a new token ends
//     every session.
//   - state-changing UI requests: the cookie plus that session's CSRF value
//     (an HMAC of the token and the session id, only ever rendered into a
//     logged-in page) in the form or the X-CSRF-Token header, on top of
//     SameSite=Strict and the guard's Origin pinning.
//   - /login, /static/*: open.

// sessionCookie is the UI's login cookie.
const sessionCookie = "leo_session"

// csrfField is the form field (and csrfHeader the htmx header) carrying
// the CSRF value.
const (
	csrfField  = "csrf"
	csrfHeader = "X-CSRF-Token"
)

// secret is the token in use.
type secret struct {
	token []byte
}

func newSecret(token string) *secret { return &secret{token: []byte(token)} }

// loadToken makes the token in state/api.token (minted when missing) the
// one in use. On failure no token is in use: the API and logins refuse.
func (s *Server) loadToken() error {
	tok, minted, err := apitoken.Ensure(s.opts.Home.TokenPath())
	if err != nil {
		if s.token.Swap(nil) != nil {
			s.sessions.notify()
		}
		return err
	}
	if minted {
		s.opts.Log.Info("minted the API token", "file", s.opts.Home.TokenPath())
	}
	if old := s.token.Swap(newSecret(tok)); old == nil || !equal(old.token, []byte(tok)) {
		s.sessions.notify() // a new token ends every session: their streams too
	}
	return nil
}

// RestoreToken writes the token in use back to state/api.token when the
// file is gone (state/ deleted while the daemon ran). It is the same
// token, not a new one: a new token would log every browser out and leave
// each running agent's MCP tools with a token that no longer works, for
// no gain (deleting the file revokes nothing: the token is still the one
// served). A file
// that is there (even a different token a person wrote) is left to the
// reload that reads it.
func (s *Server) RestoreToken() {
	path := s.opts.Home.TokenPath()
	if _, err := apitoken.Read(path); !errors.Is(err, apitoken.ErrNone) {
		return
	}
	sec := s.token.Load()
	if sec == nil {
		return // none in use (web disabled, or no usable file): Sync loads one
	}
	if err := apitoken.Restore(path, string(sec.token)); err != nil {
		s.opts.Log.Error("could not write the API token file again", "file", path, "err", err)
		return
	}
	s.opts.Log.Warn("the API token file was removed while the daemon ran; wrote the token in use to it again", "file", path)
}

func equal(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }

// bearerOK reports whether r carries the API token.
func (s *Server) bearerOK(r *http.Request) bool {
	sec := s.token.Load()
	if sec == nil {
		return false
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if ok && strings.EqualFold(scheme, "Bearer") && equal([]byte(strings.TrimSpace(tok)), sec.token) {
		markAuthorised(r)
		return true
	}
	return false
}

// session returns the live session r's cookie names, if any.
func (s *Server) session(r *http.Request) (string, bool) {
	sec := s.token.Load()
	c, err := r.Cookie(sessionCookie)
	if sec == nil || err != nil || !s.sessions.valid(sec.token, c.Value) {
		return "", false
	}
	markAuthorised(r)
	return c.Value, true
}

// loggedIn reports whether r carries a live session cookie.
func (s *Server) loggedIn(r *http.Request) bool {
	_, ok := s.session(r)
	return ok
}

// csrfFor is the CSRF value of session id.
func (s *Server) csrfFor(id string) string {
	sec := s.token.Load()
	if sec == nil || id == "" {
		return ""
	}
	m := hmac.New(sha256.New, sec.token)
	m.Write([]byte("leo web csrf v2\x00" + id))
	return hex.EncodeToString(m.Sum(nil))
}

// csrfValue is what a page for r puts in its forms: "" unless r is
// logged in, so the login page hands out nothing.
func (s *Server) csrfValue(r *http.Request) string {
	id, ok := s.session(r)
	if !ok {
		return ""
	}
	return s.csrfFor(id)
}

// csrfOK reports whether a state-changing UI request carries its
// session's CSRF value (form field or header).
func (s *Server) csrfOK(r *http.Request) bool {
	want := s.csrfValue(r)
	if want == "" {
		return false
	}
	v := r.Header.Get(csrfHeader)
	if v == "" {
		v = r.PostFormValue(csrfField)
	}
	return equal([]byte(v), []byte(want))
}

// requireLogin wraps a UI handler: no cookie → the login page (a 303 for
// a page, 401 for an htmx fragment); a state-changing method also needs
// the CSRF value (else 403).
func (s *Server) requireLogin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.loggedIn(r) {
			if r.Header.Get("HX-Request") != "" {
				w.Header().Set("HX-Redirect", "/login")
				http.Error(w, "log in first", http.StatusUnauthorized)
				return
			}
			http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && !s.csrfOK(r) {
			http.Error(w, "this form is stale or was posted from elsewhere: reload the page and try again", http.StatusForbidden)
			return
		}
		next(w, r)
	}
}

// login checks the posted token and sets the session cookie.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	sec := s.token.Load()
	given := strings.TrimSpace(r.PostFormValue("token"))
	if sec == nil || !equal([]byte(given), sec.token) {
		if sec != nil {
			s.loginFailed(r, "POST /login")
		}
		w.WriteHeader(http.StatusUnauthorized)
		s.render(w, r, "login", loginPage{Next: safeNext(r.PostFormValue("next")), Failed: true})
		return
	}
	markAuthorised(r)
	s.logins.succeeded(clientOf(r))
	id, err := s.sessions.create(sec.token)
	if err != nil {
		s.opts.Log.Error("web login", "err", err)
		http.Error(w, "leo could not record the login: "+err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookie,
		Value:    id,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   viaHTTPS(r),
		MaxAge:   int(sessionLifetime / time.Second),
	})
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// viaHTTPS reports whether the browser reached leo over https: directly,
// or through a proxy (web.allowed_hosts) that says so.
func viaHTTPS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// logout ends the session and clears the cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	if id, ok := s.session(r); ok {
		if err := s.sessions.end(s.token.Load().token, id); err != nil {
			s.opts.Log.Warn("web logout", "err", err)
		}
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a post-login redirect on this server: a path that
// parses with no scheme or host and starts with a single slash. A control
// character or backslash anywhere refuses it (browsers drop tabs and read
// \ as /, which would turn "/\t/evil" into //evil).
func safeNext(next string) string {
	for i := 0; i < len(next); i++ {
		if c := next[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return "/"
		}
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") {
		return "/"
	}
	return next
}

type loginPage struct {
	Next   string
	Failed bool
}

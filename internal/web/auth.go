package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/blackpaw-studio/leo/internal/apitoken"
)

// Who may do what:
//   - /api/*: Authorization: Bearer <state/api.token>, compared in
//     constant time; nothing else (no cookie) opens the API.
//   - /web/* pages: the session cookie a login with the token sets. It is
//     not the token: it is an HMAC of the token, so it opens the UI but
//     cannot be turned into an API token, and minting a new token logs
//     every browser out.
//   - state-changing UI requests: the cookie plus a CSRF value (a second
//     HMAC of the token) in the form or the X-CSRF-Token header, on top of
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

// secret is the token in use and the values derived from it.
type secret struct {
	token   []byte
	session string // the cookie's value
	csrf    string
}

func newSecret(token string) *secret {
	return &secret{
		token:   []byte(token),
		session: derive(token, "leo web session v1"),
		csrf:    derive(token, "leo web csrf v1"),
	}
}

func derive(token, purpose string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(purpose))
	return hex.EncodeToString(m.Sum(nil))
}

// loadToken makes the token in state/api.token (minted when missing) the
// one in use. On failure no token is in use: the API and logins refuse.
func (s *Server) loadToken() error {
	tok, minted, err := apitoken.Ensure(s.opts.Home.TokenPath())
	if err != nil {
		s.token.Store(nil)
		return err
	}
	if minted {
		s.opts.Log.Info("minted the API token", "file", s.opts.Home.TokenPath())
	}
	s.token.Store(newSecret(tok))
	return nil
}

func equal(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }

// bearerOK reports whether r carries the API token.
func (s *Server) bearerOK(r *http.Request) bool {
	sec := s.token.Load()
	if sec == nil {
		return false
	}
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && equal([]byte(strings.TrimSpace(tok)), sec.token)
}

// loggedIn reports whether r carries the session cookie.
func (s *Server) loggedIn(r *http.Request) bool {
	sec := s.token.Load()
	c, err := r.Cookie(sessionCookie)
	return sec != nil && err == nil && equal([]byte(c.Value), []byte(sec.session))
}

// csrfOK reports whether a state-changing UI request carries the CSRF
// value (form field or header).
func (s *Server) csrfOK(r *http.Request) bool {
	sec := s.token.Load()
	if sec == nil {
		return false
	}
	v := r.Header.Get(csrfHeader)
	if v == "" {
		v = r.PostFormValue(csrfField)
	}
	return equal([]byte(v), []byte(sec.csrf))
}

// csrfValue is what pages put in their forms.
func (s *Server) csrfValue() string {
	if sec := s.token.Load(); sec != nil {
		return sec.csrf
	}
	return ""
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
		w.WriteHeader(http.StatusUnauthorized)
		s.render(w, r, "login", loginPage{Next: safeNext(r.PostFormValue("next")), Failed: true})
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name:     sessionCookie,
		Value:    sec.session,
		Path:     "/",
		HttpOnly: true,
		SameSite: http.SameSiteStrictMode,
		Secure:   r.TLS != nil,
		MaxAge:   30 * 24 * 3600,
	})
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

// logout clears the cookie.
func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// safeNext keeps a post-login redirect on this server: a local absolute
// path, never //host or a scheme.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") || strings.ContainsAny(next, "\r\n") {
		return "/"
	}
	return next
}

type loginPage struct {
	Next   string
	Failed bool
}

package web

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/blackpaw-studio/leo/internal/api"
)

// contentSecurityPolicy allows only this server's own scripts, styles and
// fetches: no inline script, no framing, forms post only here.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// guard is the first thing every request meets. It refuses (403) a Host or
// Origin this server does not answer to — which is what stops DNS
// rebinding (a foreign name resolving to 127.0.0.1) and cross-site posts —
// caps the body, and sets the security headers on every answer.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: under no-referrer a browser sends
		// "Origin: null" with every form post, which the pinning below
		// must refuse. Nothing leaves for other sites either way.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !strings.HasPrefix(r.URL.Path, "/static/") {
			h.Set("Cache-Control", "no-store")
		}
		hosts := s.allowedHosts()
		if !hosts.allows(r.Host) {
			writeError(w, api.Errorf(api.CodeForbidden, "host %q is not served here: leo answers to loopback names on its port and to web.allowed_hosts", clip(r.Host)))
			return
		}
		for _, origin := range r.Header.Values("Origin") {
			if !hosts.allowsOrigin(origin) {
				writeError(w, api.Errorf(api.CodeForbidden, "origin %q may not call this server (cross-site requests are refused)", clip(origin)))
				return
			}
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, api.MaxRequestBody)
		}
		next.ServeHTTP(w, r)
	})
}

// hostRule is the set of Host values this server answers to.
type hostRule struct {
	port  string
	names []string // web.allowed_hosts, lowercased; "name" or "name:port"
}

func (s *Server) allowedHosts() hostRule {
	w := s.config().Web
	rule := hostRule{port: strconv.Itoa(w.PortNumber())}
	for _, n := range w.AllowedHosts {
		rule.names = append(rule.names, strings.ToLower(n))
	}
	return rule
}

// allows reports whether a Host header names this server: a loopback name
// (localhost, 127.0.0.0/8, ::1) on the configured port, or an entry of
// web.allowed_hosts — "name" matching that name with no port (a proxy on
// the default port) or on the configured port, "name:port" exactly.
func (h hostRule) allows(hostport string) bool {
	hostport = strings.ToLower(hostport)
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), ""
	}
	if host == "" {
		return false
	}
	if port == h.port && isLoopbackName(host) {
		return true
	}
	for _, n := range h.names {
		if n == hostport {
			return true
		}
		if n == host && (port == "" || port == h.port) {
			return true
		}
	}
	return false
}

// allowsOrigin reports whether an Origin header is this server's own: an
// http(s) origin whose host passes allows. "null" (a sandboxed frame, a
// file) is never ours.
func (h hostRule) allowsOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.User != nil {
		return false
	}
	return h.allows(u.Host)
}

func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// clip keeps a header value short and printable in an error message.
func clip(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}

// writeError answers an *api.Error as the socket does.
func writeError(w http.ResponseWriter, e *api.Error) {
	api.WriteJSON(w, api.HTTPStatus(e.Code), e)
}

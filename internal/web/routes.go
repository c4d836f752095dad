package web

import (
	"io/fs"
	"net/http"
	"strings"
)

// uiRoutes are the browser's routes. Pages (pages.go) and the config forms
// (config_forms.go) register theirs; every one of them is wrapped in
// requireLogin.
//
//	GET  /                 → /web/agents
//	GET  /login            the token form
//	POST /login            token → session cookie → next
//	POST /logout           clears the cookie
//	GET  /static/…         embedded assets (htmx, css, js)
func (s *Server) uiRoutes() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "static")
	files := http.FileServerFS(static)
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" || strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		w.Header().Set("Cache-Control", "max-age=3600")
		files.ServeHTTP(w, r)
	})))
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		s.render(w, r, "login", loginPage{Next: safeNext(r.URL.Query().Get("next"))})
	})
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("POST /logout", s.requireLogin(s.logout))
	mux.HandleFunc("GET /{$}", s.requireLogin(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/web/agents", http.StatusSeeOther)
	}))
	s.pageRoutes(mux, s.requireLogin)
	s.configRoutes(mux, s.requireLogin)
	return mux
}

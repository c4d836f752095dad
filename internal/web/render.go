package web

import (
	"bytes"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/blackpaw-studio/leo/internal/humantime"
)

// The UI's templates and static files are embedded: the binary serves the
// whole UI offline, with no CDN.
//
//go:embed templates static
var assets embed.FS

// pages are the parsed templates: each page is the layout plus the shared
// partials plus its own file (pages/<name>.html defines "title" and
// "content"); partials (partials/*.html) can also be rendered alone, as
// the fragments htmx swaps in.
type pages struct {
	base  *template.Template
	named map[string]*template.Template
}

func loadPages() (*pages, error) {
	base := template.New("").Funcs(funcs)
	if _, err := base.ParseFS(assets, "templates/layout.html", "templates/partials/*.html"); err != nil {
		return nil, fmt.Errorf("web templates: %w", err)
	}
	files, err := fs.Glob(assets, "templates/pages/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{base: base, named: map[string]*template.Template{}}
	for _, f := range files {
		t, err := template.Must(base.Clone()).ParseFS(assets, f)
		if err != nil {
			return nil, fmt.Errorf("web template %s: %w", f, err)
		}
		p.named[strings.TrimSuffix(path.Base(f), ".html")] = t
	}
	return p, nil
}

// funcs are the helpers templates may call.
var funcs = template.FuncMap{
	"hasPrefix": strings.HasPrefix,
	"since": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return ""
		}
		return humantime.Ago(time.Since(*t))
	},
	"when": func(t *time.Time) string {
		if t == nil || t.IsZero() {
			return ""
		}
		return humantime.Stamp(*t)
	},
}

// view is what every page template gets: .Data is the page's own.
type view struct {
	CSRF    string
	Flash   *flash
	Version string
	Path    string
	Data    any
}

// flash is a one-time message shown at the top of the next page.
type flash struct {
	Kind string // "ok" | "error"
	Text string
}

// render writes page inside the layout. A flash set by the previous
// request (setFlash before a redirect) is shown once and cleared.
func (s *Server) render(w http.ResponseWriter, r *http.Request, page string, data any) {
	s.renderFlash(w, r, page, data, s.takeFlash(w, r))
}

// renderFlash is render with the flash given here (a form re-rendered with
// its error, no redirect in between).
func (s *Server) renderFlash(w http.ResponseWriter, r *http.Request, page string, data any, f *flash) {
	t, ok := s.pages.named[page]
	if !ok {
		http.Error(w, "no page "+page, http.StatusInternalServerError)
		return
	}
	v := view{CSRF: s.csrfValue(r), Flash: f, Version: s.opts.Version, Path: r.URL.Path, Data: data}
	s.execute(w, t, "layout", v)
}

// partial writes one fragment (templates/partials) without the layout.
func (s *Server) partial(w http.ResponseWriter, name string, data any) {
	s.execute(w, s.pages.base, name, data)
}

// execute renders to memory first, so a template error is a clean 500 and
// never half a page.
func (s *Server) execute(w http.ResponseWriter, t *template.Template, name string, data any) {
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		s.opts.Log.Error("render", "template", name, "err", err)
		http.Error(w, "leo could not render this page; the daemon log has why", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

const flashCookie = "leo_flash"

// setFlash keeps a message for the next page (post → redirect → get).
func setFlash(w http.ResponseWriter, kind, text string) {
	if len(text) > 1500 {
		text = text[:1500] + "…"
	}
	http.SetCookie(w, &http.Cookie{
		Name: flashCookie, Value: base64.RawURLEncoding.EncodeToString([]byte(kind + "\n" + text)),
		Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: 60,
	})
}

func (s *Server) takeFlash(w http.ResponseWriter, r *http.Request) *flash {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return nil
	}
	http.SetCookie(w, &http.Cookie{Name: flashCookie, Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	raw, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil {
		return nil
	}
	kind, text, _ := strings.Cut(string(raw), "\n")
	if kind != "ok" {
		kind = "error"
	}
	return &flash{Kind: kind, Text: text}
}

package web

import "net/http"

// configRoutes registers the config forms (spec/harnesses.md "Web UI").
func (s *Server) configRoutes(mux *http.ServeMux, auth func(http.HandlerFunc) http.HandlerFunc) {
}

package web

import "net/http"

// pageRoutes registers the agents, tasks and service pages.
func (s *Server) pageRoutes(mux *http.ServeMux, auth func(http.HandlerFunc) http.HandlerFunc) {
}

package api

import "testing"

func TestHTTPPathsMapOntoSocketRoutesBothWays(t *testing.T) {
	cases := []struct{ http, socket string }{
		{"/api/health", "/health"},
		{"/api/history", "/history"},
		{"/api/config/reload", "/config/reload"},
		{"/api/agent/list", "/agents"},
		{"/api/agent/spawn", "/agents/spawn"},
		{"/api/agent/coder", "/agents/coder"},
		{"/api/agent/coder/stop", "/agents/coder/stop"},
		{"/api/agent/coder/logs", "/agents/coder/logs"},
		{"/api/task/list", "/tasks"},
		{"/api/task/brief/run", "/tasks/brief/run"},
		{"/api/task/brief/history", "/tasks/brief/history"},
		{"/api/template/list", "/templates"},
	}
	for _, c := range cases {
		if got, ok := SocketPath(c.http); !ok || got != c.socket {
			t.Errorf("SocketPath(%q) = %q, %v; want %q", c.http, got, ok, c.socket)
		}
		if got, ok := HTTPPath(c.socket); !ok || got != c.http {
			t.Errorf("HTTPPath(%q) = %q, %v; want %q", c.socket, got, ok, c.http)
		}
	}
}

// The routes for leo's own local processes are not reachable over HTTP.
func TestHTTPAPILeavesOutLocalOnlyRoutes(t *testing.T) {
	for _, p := range []string{"/api/drain", "/api/drain/resume", "/api/hooks/turn-end", "/api", "/api/", "/api/agent", "/api/agent/", "/api/agents", "/health", "/apix/health"} {
		if got, ok := SocketPath(p); ok {
			t.Errorf("SocketPath(%q) = %q; want not served", p, got)
		}
	}
	for _, p := range []string{"/drain", "/drain/resume", "/hooks/turn-end", "/agents/"} {
		if got, ok := HTTPPath(p); ok {
			t.Errorf("HTTPPath(%q) = %q; want not served", p, got)
		}
	}
}

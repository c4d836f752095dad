package api

import (
	"path"
	"strings"
)

// The HTTP API (web.port, /api/*) serves the very routes of the socket API
// under other paths: /api/<noun>/list is the listing of /<noun>s, and
// /api/<noun>/<rest> is /<noun>s/<rest>; /api/health and /api/history are
// /health and /history. One table, used in both directions (the web server
// maps an /api path onto the socket route it serves; the HTTP client maps a
// socket path onto the /api path it asks for), so the two never disagree.
//
// The socket routes left out (/drain, /hooks/turn-end) are for leo's own
// processes on this machine and are not reachable over the network.
const APIPrefix = "/api"

// apiNouns are the collections the HTTP API serves, by their socket prefix.
var apiNouns = []struct{ socket, api string }{
	{"/agents", "/agent"},
	{"/tasks", "/task"},
	{"/templates", "/template"},
}

// apiSingles are socket routes served as they are under /api.
var apiSingles = []string{"/health", "/history", "/config/reload", "/events"}

// apiEvents is the event stream's HTTP path, the one the contract names
// (/api/events serves it too).
const apiEvents = APIPrefix + "/v1/events"

// SocketPath maps an HTTP API path (/api/agent/list) onto the socket route
// it serves (/agents); ok is false for a path the HTTP API does not serve.
// GET /api/agent/list is always the listing: an agent named "list" is read
// from it (its other routes, /api/agent/list/stop…, are its own).
func SocketPath(apiPath string) (string, bool) {
	if apiPath == apiEvents {
		return "/events", true
	}
	rest, ok := strings.CutPrefix(apiPath, APIPrefix)
	if !ok {
		return "", false
	}
	for _, s := range apiSingles {
		if rest == s {
			return s, true
		}
	}
	for _, n := range apiNouns {
		tail, ok := strings.CutPrefix(rest, n.api+"/")
		if !ok {
			continue
		}
		if tail == "list" {
			return n.socket, true
		}
		if tail == "" {
			return "", false
		}
		return n.socket + "/" + tail, true
	}
	return "", false
}

// HTTPPath maps a socket route (/agents/x/stop) onto its HTTP API path
// (/api/agent/x/stop); ok is false for a route the HTTP API does not serve.
func HTTPPath(socketPath string) (string, bool) {
	if socketPath == "/events" {
		return apiEvents, true
	}
	for _, s := range apiSingles {
		if socketPath == s {
			return APIPrefix + s, true
		}
	}
	for _, n := range apiNouns {
		if socketPath == n.socket {
			return APIPrefix + n.api + "/list", true
		}
		if tail, ok := strings.CutPrefix(socketPath, n.socket+"/"); ok && tail != "" {
			return APIPrefix + n.api + "/" + tail, true
		}
	}
	return "", false
}

// IsCleanPath reports whether p is absolute with no empty, . or ..
// segment (a trailing slash aside): a path a router would not clean and
// redirect to another route. Both servers refuse the others.
func IsCleanPath(p string) bool {
	if p == "/" {
		return true
	}
	if !strings.HasPrefix(p, "/") {
		return false
	}
	trimmed := strings.TrimSuffix(p, "/")
	return path.Clean(trimmed) == trimmed
}

package client

import (
	"context"
	"net/http"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
)

// A client over a handler gets the handler's answers and its coded errors,
// exactly as over the socket.
func TestForHandlerServesCallsInProcess(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"version":"v-test","pid":42,"ready":true}`))
	})
	mux.HandleFunc("GET /agents/{name}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":"not_found","message":"no agent ` + r.PathValue("name") + `"}`))
	})
	c := ForHandler(mux)
	h, err := c.Health(context.Background())
	if err != nil || h.Version != "v-test" || h.PID != 42 || !h.Ready {
		t.Fatalf("Health = %+v, %v", h, err)
	}
	_, err = c.Get(context.Background(), "ghost")
	if !IsNotFound(err) || err.Error() != "no agent ghost" {
		t.Fatalf("Get(ghost) = %v; want not_found with the handler's message", err)
	}
	if _, err := c.Get(context.Background(), "Bad Name"); !api.HasCode(err, api.CodeInvalidArgs) {
		t.Fatalf("Get(bad name) = %v; want invalid_args before any request", err)
	}
}

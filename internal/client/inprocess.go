package client

import (
	"bytes"
	"io"
	"net/http"
)

// ForHandler returns a client that serves every call with h — the daemon's
// own socket routes — in this process, with no socket in between. The web
// UI reads and acts through it, so a page does exactly what the CLI's
// command would, through the same route.
func ForHandler(h http.Handler) *Client {
	return &Client{http: &http.Client{
		Transport:     handlerTransport{h},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// handlerTransport is an http.RoundTripper that calls a handler directly.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	rec := &recorder{header: http.Header{}}
	if req.Body == nil {
		req.Body = http.NoBody
	}
	t.h.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{
		StatusCode: rec.status,
		Status:     http.StatusText(rec.status),
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Header:     rec.header,
		Body:       io.NopCloser(&rec.body),
		Request:    req,
	}, nil
}

// recorder is the smallest http.ResponseWriter that keeps what was written.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}

// Command modelserver runs the test model server for manual runs of the
// real harness CLIs: it prints its URL, then one line per request, until
// interrupted.
//
//	go run ./internal/testutil/modelserver/cmd/modelserver -addr 127.0.0.1:8765
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/blackpaw-studio/leo/internal/testutil/modelserver"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback `address` to listen on")
	bodies := flag.String("bodies", "", "write each request body to `dir`/<n>.json")
	flag.Parse()
	s, err := modelserver.Listen(*addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer s.Close()
	fmt.Println(s.URL)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	seen := 0
	for {
		reqs, err := s.Wait(ctx, func(r []modelserver.Request) bool { return len(r) > seen })
		for _, r := range reqs[seen:] {
			side := ""
			if r.Side {
				side = " side(" + r.SideWhy + ")"
			}
			fmt.Printf("#%d %s %s %s %d stream=%v tools=%d%s user=%q reply=%q\n", r.Seq, r.Time.Format("15:04:05.000"),
				r.Method, r.Path, r.Status, r.Stream, r.Tools, side, clip(r.UserText), r.Reply)
			if *bodies != "" {
				_ = os.WriteFile(fmt.Sprintf("%s/%d.json", *bodies, r.Seq), r.Body, 0o600)
			}
		}
		seen = len(reqs)
		if err != nil {
			return
		}
	}
}

func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		return s[:60] + "…" + s[len(s)-60:]
	}
	return s
}

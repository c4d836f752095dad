package perf

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/blackpaw-studio/leo/e2e/leoproc"
	"github.com/blackpaw-studio/leo/internal/api"
	"github.com/blackpaw-studio/leo/internal/harness"
)

// BenchmarkSendReply: `leo agent send NAME MESSAGE --reply` against an idle
// fake TUI that answers in 1 ms, through the real daemon and the real
// binary — from the command's start until it printed the reply, which leo
// reads from the harness's own record — next to the floor measured in the
// same run on the same tmux server: a raw pane of the same fake, the
// message pasted, Enter sent (after codex's paste-burst window), and the
// reply polled for on the pane. Also the same send and wait through the
// Go client (no process start).
func BenchmarkSendReply(b *testing.B) {
	for _, h := range leoproc.Harnesses {
		b.Run(h, func(b *testing.B) {
			w := oneAgent(b, h, "")
			ctx := context.Background()
			// A first exchange: the conversation exists (and its id is
			// known) before anything is measured.
			if out, err := w.Client.SendAndWait(ctx, h, api.SendRequest{Message: "warm up", Wait: api.WaitReply, Timeout: "1m"}); err != nil || out.Reply == nil {
				b.Fatalf("warm-up: %+v, %v", out, err)
			}
			raw := startRawPane(b, w, h)
			adapter, _ := harness.Lookup(h)
			var enterDelay time.Duration
			if pt, ok := adapter.(harness.PasteTiming); ok {
				enterDelay = pt.EnterDelay()
			}

			var cli, client, floor time.Duration
			round := 0
			for b.Loop() {
				round++
				msg := fmt.Sprintf("reply bench %d", round)
				start := time.Now()
				out, err := w.Leo(ctx, "agent", "send", h, msg, "--reply", "--timeout", "1m")
				if err != nil || !strings.Contains(string(out), "echo: "+msg) {
					b.Fatalf("send --reply: %q, %v", out, err)
				}
				cli += time.Since(start)

				start = time.Now()
				o, err := w.Client.SendAndWait(ctx, h, api.SendRequest{Message: msg + " again", Wait: api.WaitReply, Timeout: "1m"})
				if err != nil || o.Reply == nil || !strings.Contains(o.Reply.Text, msg+" again") {
					b.Fatalf("client send and wait: %+v, %v", o, err)
				}
				client += time.Since(start)

				start = time.Now()
				rawExchange(b, w, raw, fmt.Sprintf("raw %d", round), enterDelay)
				floor += time.Since(start)
			}
			n := float64(round)
			b.ReportMetric(ms(cli)/n, "cli-reply-ms")
			b.ReportMetric(ms(client)/n, "client-reply-ms")
			b.ReportMetric(ms(floor)/n, "raw-ms")
			b.ReportMetric(float64(cli)/float64(floor), "cli/raw")
			b.Logf("%s: send --reply %.1f ms (through the Go client %.1f ms), raw paste-and-read floor %.1f ms (%.2f×)",
				h, ms(cli)/n, ms(client)/n, ms(floor)/n, float64(cli)/float64(floor))
		})
	}
}

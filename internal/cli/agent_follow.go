package cli

import (
	"context"
	"fmt"
	"strings"
	"time"
)

const (
	// followEvery is how often `leo agent logs -f` looks at the pane.
	followEvery = time.Second
	// followWindow is how many lines each look fetches (at least
	// --lines): more than a pane adds in a second, so no line is missed.
	followWindow = 500
)

// followLogs is `leo agent logs -f`: the last --lines lines, then, at
// every look, the lines of the pane that the previous look did not have.
// Each look is a capture of the same window (the last followWindow lines),
// and what is new is what a line diff against the previous look inserted:
// history that scrolled out of the window is not "new", and a line the
// TUI redrew in place is. It ends when ctx does (Ctrl-C: exit 0) or a
// look fails (the agent deleted, the daemon gone).
func followLogs(ctx context.Context, opts *AgentLogsOptions) error {
	window := max(opts.Lines, followWindow)
	every := opts.Every
	if every <= 0 {
		every = followEvery
	}
	l, err := opts.Client.Logs(ctx, opts.Name, window)
	if err != nil {
		return err
	}
	prev := paneLines(l.Text)
	if err := printLines(opts, prev[max(0, len(prev)-opts.Lines):]); err != nil {
		return err
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		l, err := opts.Client.Logs(ctx, opts.Name, window)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		cur := paneLines(l.Text)
		if err := printLines(opts, addedLines(prev, cur)); err != nil {
			return err
		}
		prev = cur
	}
}

func paneLines(text string) []string {
	text = strings.TrimRight(text, "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

func printLines(opts *AgentLogsOptions, lines []string) error {
	for _, line := range lines {
		if _, err := fmt.Fprintln(opts.IO.Out, line); err != nil {
			return err
		}
	}
	return nil
}

// addedLines are the lines of cur that a longest-common-subsequence diff
// against prev finds inserted, in order. Windows are a few hundred lines,
// so the plain quadratic table is cheap at one look a second.
func addedLines(prev, cur []string) []string {
	n, m := len(prev), len(cur)
	// lcs[i][j] is the LCS length of prev[i:] and cur[j:].
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if prev[i] == cur[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for j < m {
		switch {
		case i < n && prev[i] == cur[j]:
			i++
			j++
		case i < n && lcs[i+1][j] >= lcs[i][j+1]:
			i++ // dropped from prev (scrolled out, or redrawn)
		default:
			out = append(out, cur[j])
			j++
		}
	}
	return out
}

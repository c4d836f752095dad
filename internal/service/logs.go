package service

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Tail writes the last n lines of the log at path to w; with follow it
// then keeps writing what is appended until ctx is done, starting over
// from the top when the file is rotated (replaced or truncated). A missing
// file is an error without follow, and awaited with it.
func Tail(ctx context.Context, path string, n int, follow bool, w io.Writer, poll time.Duration) error {
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	f, err := os.Open(path)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrNotExist) && follow:
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("no daemon log at %s yet (the supervised daemon writes it)", path)
	default:
		return fmt.Errorf("read %s: %w", path, err)
	}
	var off int64
	if f != nil {
		if off, err = writeLastLines(f, n, w); err != nil {
			f.Close()
			return fmt.Errorf("read %s: %w", path, err)
		}
	}
	if !follow {
		f.Close()
		return nil
	}
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		// Rotation renames the file away: reopen when the path names
		// another file or the file shrank.
		fi, err := os.Stat(path)
		if err != nil {
			continue
		}
		if f == nil {
			if f, err = os.Open(path); err != nil {
				continue
			}
			off = 0
		} else if cur, err := f.Stat(); err != nil || !os.SameFile(cur, fi) || fi.Size() < off {
			// Finish the old file first: lines written before the rename.
			if _, err := io.Copy(w, io.NewSectionReader(f, off, 1<<62)); err != nil {
				return err
			}
			f.Close()
			if f, err = os.Open(path); err != nil {
				f = nil
				continue
			}
			off = 0
		}
		m, err := io.Copy(w, io.NewSectionReader(f, off, 1<<62))
		off += m
		if err != nil {
			return err
		}
	}
}

// writeLastLines writes the last n lines of f and returns the offset of
// its end. It reads the file backwards in blocks, so a huge log costs
// what the lines cost.
func writeLastLines(f *os.File, n int, w io.Writer) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	end := fi.Size()
	if n <= 0 {
		return end, nil
	}
	const block = 64 << 10
	start := end
	var buf []byte
	for start > 0 && bytes.Count(bytes.TrimSuffix(buf, []byte("\n")), []byte("\n")) < n {
		size := int64(block)
		if start < size {
			size = start
		}
		start -= size
		chunk := make([]byte, size)
		if _, err := f.ReadAt(chunk, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		buf = append(chunk, buf...)
	}
	lines := bytes.SplitAfter(buf, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.Write(l)
	}
	return end, bw.Flush()
}

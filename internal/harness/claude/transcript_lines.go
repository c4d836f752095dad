package claude

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/blackpaw-studio/leo/internal/harness"
)

// lineCursor is how far one transcript was read, in whole lines: what the
// witness's cache (witness_cache.go) and the conversation reader's
// (conversation.go) keep per file, so that each reads only what claude
// appended since. The file is never held: lines are read one by one.
type lineCursor struct {
	started  bool
	cut      bool // the line at offset began before it: skip it
	dev, ino uint64
	offset   int64  // bytes consumed: whole lines only
	mark     []byte // the markLen bytes before offset
}

// openTranscript opens path, its size and identity; ok is false (and err
// nil) when it does not exist.
func openTranscript(path string) (f *os.File, size int64, dev, ino uint64, ok bool, err error) {
	f, err = os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, 0, 0, false, nil
	}
	if err != nil {
		return nil, 0, 0, 0, false, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, 0, 0, false, err
	}
	dev, ino = harness.FileKey(info)
	return f, info.Size(), dev, ino, true, nil
}

// restart makes the cursor read f (dev, ino) from at on; a line that
// began before at is skipped.
func (c *lineCursor) restart(dev, ino uint64, at int64) {
	c.started, c.dev, c.ino, c.offset, c.mark, c.cut = true, dev, ino, at, nil, at > 0
}

// still reports whether the cursor may be continued: same file, not
// shorter, the bytes before the offset unchanged.
func (c *lineCursor) still(f *os.File, size int64, dev, ino uint64) bool {
	if !c.started || c.dev != dev || c.ino != ino || size < c.offset {
		return false
	}
	if len(c.mark) > 0 {
		b := make([]byte, len(c.mark))
		if _, err := f.ReadAt(b, c.offset-int64(len(b))); err != nil || !bytes.Equal(b, c.mark) {
			return false
		}
	}
	return true
}

// readLines reads the whole lines after the offset and calls line with
// each (without its newline) and the offset of its first byte. A line
// longer than maxLine bytes is read through but never held, and skipped;
// so is the line a restart cut. A last line without its newline yet is
// given to partial (when not nil) but not consumed: it is read again,
// whole, next time.
func (c *lineCursor) readLines(f *os.File, maxLine int, line func(start int64, b []byte), partial func(b []byte)) error {
	if _, err := f.Seek(c.offset, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var buf []byte
	n, tooLong := 0, false
	for {
		chunk, err := r.ReadSlice('\n')
		n += len(chunk)
		if !tooLong && len(buf)+len(chunk) <= maxLine {
			buf = append(buf, chunk...)
		} else {
			tooLong, buf = true, buf[:0]
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			bytesRead.Add(int64(n))
			if partial != nil && !c.cut && !tooLong && len(buf) > 0 {
				partial(buf)
			}
			break
		}
		if err != nil {
			return err
		}
		start := c.offset
		c.offset += int64(n)
		bytesRead.Add(int64(n))
		if c.cut {
			c.cut = false
		} else if !tooLong {
			line(start, bytes.TrimSuffix(buf, []byte("\n")))
		}
		buf, n, tooLong = buf[:0], 0, false
	}
	return c.finish(f)
}

// finish remembers the bytes before the offset, by which still tells a
// file rewritten in place.
func (c *lineCursor) finish(f *os.File) error {
	if c.offset > 0 {
		k := min(int64(markLen), c.offset)
		c.mark = make([]byte, k)
		if _, err := f.ReadAt(c.mark, c.offset-k); err != nil {
			c.started = false // read it again next time
			return err
		}
	}
	return nil
}

// Package statefile writes state files atomically (temp file in the same
// directory, fsync, rename) and reads them back tolerantly: unknown fields
// are ignored, and a corrupt file is moved aside and reported, never silently
// reset.
package statefile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/renameio/v2"
)

// Write replaces path with data atomically, with mode perm. The temp file
// is made beside path: the rename can never cross filesystems, and a write
// cut short by a crash leaves its temp where RemoveTemps finds it (left to
// itself renameio would use $TMPDIR when it can, probing with two extra
// files per write).
func Write(path string, data []byte, perm os.FileMode) error {
	return renameio.WriteFile(path, data, perm, renameio.WithTempDir(filepath.Dir(path)))
}

// RemoveTemps deletes the temp files that writes of path cut short by a
// crash left beside it: "." + base name + digits, renameio's naming. Only
// the sole writer of path may call it (the daemon holding the home's
// lock), or it could take the temp file of a write in progress.
func RemoveTemps(path string) (int, error) {
	dir, prefix := filepath.Dir(path), "."+filepath.Base(path)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
	n := 0
	for _, e := range entries {
		digits, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return n, err
		}
		n++
	}
	return n, nil
}

// WriteJSON marshals v (indented) and writes it atomically.
func WriteJSON(path string, v any, perm os.FileMode) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return Write(path, append(data, '\n'), perm)
}

// CorruptError reports a state file that did not parse; the file was moved
// to Aside so the next write cannot destroy what a person may want to read.
type CorruptError struct {
	Path  string
	Aside string
	Err   error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s is corrupt (%v); kept it as %s", e.Path, e.Err, e.Aside)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// ReadJSON reads path into v. A missing file leaves v untouched and returns
// (false, nil). A corrupt file is renamed to path.corrupt-<time> and a
// *CorruptError is returned.
func ReadJSON(path string, v any) (found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		aside := fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405.000000000"))
		if rerr := os.Rename(path, aside); rerr != nil {
			return true, fmt.Errorf("%s is corrupt (%v) and could not be kept aside: %w", path, err, rerr)
		}
		return true, &CorruptError{Path: path, Aside: aside, Err: err}
	}
	return true, nil
}

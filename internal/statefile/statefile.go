// Package statefile writes state files atomically (temp file in the same
// directory, fsync, rename) and reads them back: unknown fields are ignored,
// but a file that does not parse, or parses as something that is not ours
// (checked by the caller: shape, version), is moved aside and reported,
// never silently taken as empty.
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

// CorruptError reports a state file that leo could not take as its own:
// it did not parse, or it parsed but is not what this leo writes (wrong
// shape, a newer version). The file was moved to Aside so the next write
// cannot destroy what a person may want to read.
type CorruptError struct {
	Path  string
	Aside string
	Err   error
	// Foreign: the file parsed but is not ours (shape or version), as
	// opposed to not parsing at all.
	Foreign bool
}

func (e *CorruptError) Error() string {
	what := "is corrupt"
	if e.Foreign {
		what = "is not a state file this leo understands"
	}
	return fmt.Sprintf("%s %s (%v); kept it as %s", e.Path, what, e.Err, e.Aside)
}

func (e *CorruptError) Unwrap() error { return e.Err }

// ReadJSON reads path into v. A missing file leaves v untouched and returns
// (false, nil). A corrupt file is renamed to path.corrupt-<time> and a
// *CorruptError is returned.
func ReadJSON(path string, v any) (found bool, err error) {
	return ReadChecked(path, v, nil)
}

// ReadChecked is ReadJSON with a check of what was read: a file that parses
// but that check refuses (wrong shape, unknown version) is not ours. It is
// renamed to path.unknown-<time> and reported as a *CorruptError with
// Foreign set, exactly as a corrupt file is: never taken as empty.
func ReadChecked(path string, v any, check func(data []byte) error) (found bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	kind, foreign := "corrupt", false
	err = json.Unmarshal(data, v)
	if err == nil && check != nil {
		if err = check(data); err != nil {
			kind, foreign = "unknown", true
		}
	}
	if err != nil {
		aside, rerr := KeepAside(path, kind)
		if rerr != nil {
			return true, fmt.Errorf("%s cannot be read (%v) and could not be kept aside: %w", path, err, rerr)
		}
		return true, &CorruptError{Path: path, Aside: aside, Err: err, Foreign: foreign}
	}
	return true, nil
}

// KeepAside renames path to path.<kind>-<time> and returns the new name.
func KeepAside(path, kind string) (string, error) {
	aside := asideName(path, kind)
	if err := os.Rename(path, aside); err != nil {
		return "", err
	}
	return aside, nil
}

// CopyAside copies path to path.<kind>-<time> (0600), leaving path in
// place: for a file of which only a part was not understood, kept whole
// before the next write drops that part.
func CopyAside(path, kind string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	aside := asideName(path, kind)
	if err := Write(aside, data, 0o600); err != nil {
		return "", err
	}
	return aside, nil
}

func asideName(path, kind string) string {
	return fmt.Sprintf("%s.%s-%s", path, kind, time.Now().UTC().Format("20060102T150405.000000000"))
}

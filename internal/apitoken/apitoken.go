// Package apitoken reads and mints the bearer token of the HTTP API
// (state/api.token). Every reader — the web server, the MCP server, the
// bridge gate, `leo pair` — goes through Read, so a token file is usable
// for one exactly when it is usable for all. Errors name the file, never
// its content.
package apitoken

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/blackpaw-studio/leo/internal/statefile"
)

// MaxBytes bounds what is read of a token file: a token is a few dozen
// bytes; anything much larger is not one.
const MaxBytes = 4096

// ErrNone is Read's error for a token file that is missing or empty: no
// token, and nothing wrong.
var ErrNone = errors.New("no API token")

// Read returns the token in path, trimmed. A missing or empty file is
// ErrNone; an unreadable, oversized or non-printable one is an error that
// names the file.
func Read(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrNone
	}
	if err != nil {
		return "", fmt.Errorf("cannot read the API token %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return "", fmt.Errorf("cannot read the API token %s: %w", path, unwrapPath(err))
	}
	if len(raw) > MaxBytes {
		return "", fmt.Errorf("the API token %s is larger than %d bytes; it is not used", path, MaxBytes)
	}
	tok := strings.TrimSpace(string(raw))
	if tok == "" {
		return "", ErrNone
	}
	if !utf8.ValidString(tok) {
		return "", fmt.Errorf("the API token %s is not UTF-8 text; it is not used", path)
	}
	for _, r := range tok {
		if r <= ' ' || r == 0x7f {
			return "", fmt.Errorf("the API token %s holds spaces or control characters; it is not used", path)
		}
	}
	return tok, nil
}

// Ensure returns the token in path, minting one (32 random bytes, hex,
// mode 0600, written atomically) when the file is missing or empty. A file
// that exists but cannot be used is an error and is left as it is: a
// person may have put it there.
func Ensure(path string) (token string, minted bool, err error) {
	tok, err := Read(path)
	if err == nil {
		return tok, false, nil
	}
	if !errors.Is(err, ErrNone) {
		return "", false, err
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", false, fmt.Errorf("mint the API token: %w", err)
	}
	tok = hex.EncodeToString(b[:])
	if err := statefile.Write(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", false, fmt.Errorf("write the API token %s: %w", path, err)
	}
	return tok, true, nil
}

// Restore writes token to path (mode 0600, atomically) unless a usable
// token file is there: the daemon putting back the token it serves with
// after the file was deleted. A file that appeared meanwhile wins.
func Restore(path, token string) error {
	if _, err := Read(path); !errors.Is(err, ErrNone) {
		return nil
	}
	if err := statefile.Write(path, []byte(token+"\n"), 0o600); err != nil {
		return fmt.Errorf("write the API token %s: %w", path, err)
	}
	return nil
}

// unwrapPath drops the *fs.PathError wrapper, whose text repeats the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

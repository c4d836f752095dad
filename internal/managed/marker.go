// Package managed is leo's side of the managed-install contract with
// Leo.app (docs/managed-install.md): the marker state/managed.json, its
// validation, and what leo does differently while it is valid — binary
// lookups with the marker's PATH first, self_path as leo's own binary, the
// managed first start and the tmux version guard.
//
// Every check runs behind a Platform, so tests on Linux drive the macOS
// path by setting GOOS.
package managed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode"

	"github.com/blackpaw-studio/leo/internal/binpath"
	"github.com/blackpaw-studio/leo/internal/home"
)

// CLILabel is the launchd label of the CLI install's own LaunchAgent; a
// managed job may never use it.
const CLILabel = "com.blackpaw.leo"

// maxMarkerBytes bounds what is read: the marker is a few hundred bytes,
// and a hostile file (or a symlink to /dev/zero) must not eat memory.
const maxMarkerBytes = 1 << 20

// Platform is the seam between leo and the machine it runs on.
type Platform struct {
	// GOOS is the operating system; "" means runtime.GOOS.
	GOOS string
	// Getenv reads HOME for ~ expansion; nil means os.Getenv.
	Getenv func(string) string
}

func (p Platform) goos() string {
	if p.GOOS == "" {
		return runtime.GOOS
	}
	return p.GOOS
}

// Status is what the marker file amounts to.
type Status int

const (
	// Absent: no marker file. leo is unmanaged.
	Absent Status = iota
	// Invalid: a marker file exists and fails a check. leo behaves as
	// unmanaged, but it is never taken for Absent (handover refuses the
	// recovery path on it).
	Invalid
	// Valid: leo is managed.
	Valid
)

func (s Status) String() string {
	switch s {
	case Absent:
		return "absent"
	case Invalid:
		return "invalid"
	case Valid:
		return "valid"
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// Marker is a validated managed.json. Paths are absolute and clean, ~
// expanded.
type Marker struct {
	Version      int
	Manager      string
	BundleID     string
	LaunchdLabel string
	SelfPath     string
	TmuxPath     string
	// Env is the marker's env; values may be secrets and are never
	// logged or put in an error.
	Env map[string]string
}

// PATH is the marker's env.PATH ("" when it has none): searched first for
// every binary leo looks up, tmux excepted.
func (m Marker) PATH() string { return m.Env["PATH"] }

// TmuxRoot is <root> of tmux_path = <root>/<version>/tmux.
func (m Marker) TmuxRoot() string { return filepath.Dir(filepath.Dir(m.TmuxPath)) }

// TmuxVersion is <version> of tmux_path = <root>/<version>/tmux.
func (m Marker) TmuxVersion() string { return filepath.Base(filepath.Dir(m.TmuxPath)) }

// State is the outcome of reading the marker.
type State struct {
	Status Status
	// Path is the marker file's path.
	Path string
	// Marker is set when Status is Valid.
	Marker Marker
	// Problem says which check failed when Status is Invalid.
	Problem string
}

// Managed reports whether leo runs as a managed install.
func (s State) Managed() bool { return s.Status == Valid }

// Warning is the one line printed for an invalid marker (and repeated by
// `leo doctor`); "" unless Status is Invalid.
func (s State) Warning() string {
	if s.Status != Invalid {
		return ""
	}
	return oneLine(fmt.Sprintf("ignoring the managed-install marker %s: %s; leo runs unmanaged", s.Path, s.Problem))
}

// oneLine escapes control characters, so a hostile path or value in a
// message can never break its one line (or a terminal).
func oneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Read reads and validates h's marker. It prints nothing (see Load).
func Read(h home.Home, p Platform) State {
	path := h.MarkerPath()
	st := State{Path: path}
	data, err := readMarker(path)
	if errors.Is(err, fs.ErrNotExist) {
		st.Status = Absent
		return st
	}
	// The platform comes first: on Linux any marker is ignored, whatever
	// it holds, and the warning says why.
	if goos := p.goos(); goos != "darwin" {
		return invalid(st, "managed installs are macOS-only (this is "+goos+")")
	}
	if err != nil {
		return invalid(st, err.Error())
	}
	m, err := parse(data, p)
	if err != nil {
		return invalid(st, err.Error())
	}
	st.Status, st.Marker = Valid, m
	return st
}

func invalid(st State, problem string) State {
	st.Status, st.Problem = Invalid, problem
	return st
}

// readMarker reads the file, refusing what is not a regular file, is
// group- or world-writable, or is too large. A missing file answers
// fs.ErrNotExist.
func readMarker(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// A symlink to nothing is a marker that cannot be read, not
			// an absent one (handover's recovery path needs no marker).
			if _, lerr := os.Lstat(path); lerr == nil {
				return nil, errors.New("cannot read it: it is a symlink to a file that does not exist")
			}
			return nil, fs.ErrNotExist
		}
		return nil, fmt.Errorf("cannot read it: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("it is not a regular file (%s)", fi.Mode().Type())
	}
	// O_NONBLOCK: a FIFO swapped in after the Stat must not hang leo.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %v", err)
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %v", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("it is not a regular file (%s)", fi.Mode().Type())
	}
	// It names a binary that ends up in hooks agents execute.
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return nil, fmt.Errorf("it is group- or world-writable (mode %04o); chmod go-w %s", perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxMarkerBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read it: %v", err)
	}
	if len(data) > maxMarkerBytes {
		return nil, fmt.Errorf("it is larger than %d bytes", maxMarkerBytes)
	}
	return data, nil
}

// parse checks everything the file says. Keys match exactly (encoding/json
// would match "Version" to version): anything else is an unknown field,
// ignored.
func parse(data []byte, p Platform) (Marker, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return Marker{}, fmt.Errorf("not valid JSON: %v", err)
	}
	if fields == nil {
		return Marker{}, errors.New("not a JSON object")
	}
	var m Marker
	if err := field(fields, "version", &m.Version); err != nil {
		return m, err
	}
	if m.Version != 1 {
		if _, ok := fields["version"]; !ok {
			return m, errors.New("version: missing (want 1)")
		}
		return m, fmt.Errorf("version: %d is not supported (want 1)", m.Version)
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"manager", &m.Manager}, {"bundle_id", &m.BundleID}, {"launchd_label", &m.LaunchdLabel}, {"self_path", &m.SelfPath}, {"tmux_path", &m.TmuxPath}} {
		if err := field(fields, f.key, f.dst); err != nil {
			return m, err
		}
	}
	if err := ValidLabel(m.LaunchdLabel); err != nil {
		return m, fmt.Errorf("launchd_label: %w", err)
	}
	var err error
	if m.SelfPath, err = existingPath(p, "self_path", m.SelfPath); err != nil {
		return m, err
	}
	if m.TmuxPath, err = existingPath(p, "tmux_path", m.TmuxPath); err != nil {
		return m, err
	}
	if err := tmuxShape(m.TmuxPath); err != nil {
		return m, err
	}
	var env map[string]any
	if err := field(fields, "env", &env); err != nil {
		return m, err
	}
	if m.Env, err = checkEnv(env); err != nil {
		return m, err
	}
	return m, nil
}

// field decodes fields[key] into dst; absent or null leaves dst zero.
func field(fields map[string]json.RawMessage, key string, dst any) error {
	raw, ok := fields[key]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s: a JSON %s, want %s", key, te.Value, jsonKind(dst))
		}
		return fmt.Errorf("%s: %v", key, err)
	}
	return nil
}

func jsonKind(dst any) string {
	switch dst.(type) {
	case *int:
		return "the integer 1"
	case *string:
		return "a string"
	default:
		return "an object"
	}
}

// ValidLabel checks a launchd label for a managed job: reverse-DNS
// (two or more dot-separated parts of letters, digits and inner hyphens)
// and not the CLI install's own label. handover --to-app checks --label
// with it too.
func ValidLabel(label string) error {
	if label == "" {
		return errors.New("missing; want a reverse-DNS label such as studio.blackpaw.leo.daemon")
	}
	if len(label) > 255 {
		return fmt.Errorf("%d bytes long; a reverse-DNS label has at most 255", len(label))
	}
	parts := strings.Split(label, ".")
	if len(parts) < 2 {
		return fmt.Errorf("%q is not reverse-DNS (want e.g. studio.blackpaw.leo.daemon)", label)
	}
	for _, part := range parts {
		if !dnsPart(part) {
			return fmt.Errorf("%q is not reverse-DNS: each dot-separated part is 1-63 letters, digits or inner hyphens", label)
		}
	}
	if strings.EqualFold(label, CLILabel) {
		return fmt.Errorf("%q is the CLI install's own label; a managed job needs its own", label)
	}
	return nil
}

func dnsPart(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// existingPath expands ~, and checks the result is absolute and exists.
func existingPath(p Platform, key, v string) (string, error) {
	if v == "" {
		return "", fmt.Errorf("%s: missing", key)
	}
	if strings.ContainsRune(v, 0) {
		return "", fmt.Errorf("%s: contains a NUL byte", key)
	}
	exp, err := home.Expand(v, p.Getenv)
	if err != nil {
		return "", fmt.Errorf("%s: %v", key, err)
	}
	if !filepath.IsAbs(exp) {
		return "", fmt.Errorf("%s: %q is not absolute", key, v)
	}
	exp = filepath.Clean(exp)
	if _, err := os.Stat(exp); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: %s does not exist", key, exp)
		}
		return "", fmt.Errorf("%s: %v", key, err)
	}
	return exp, nil
}

// tmuxShape checks tmux_path is <root>/<version>/tmux: the version guard
// finds the copy matching a running server at <root>/<V>/tmux.
func tmuxShape(p string) error {
	ver := filepath.Base(filepath.Dir(p))
	root := filepath.Dir(filepath.Dir(p))
	if filepath.Base(p) != "tmux" || !validVersionDir(ver) || root == filepath.Dir(p) {
		return fmt.Errorf("tmux_path: %s is not shaped <root>/<version>/tmux", p)
	}
	return nil
}

// validVersionDir is a tmux version usable as one path component
// ("3.6a", "next-3.6"): it comes from the marker or from a running server.
func validVersionDir(v string) bool {
	if v == "" || v == "." || v == ".." || len(v) > 64 {
		return false
	}
	digit := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '.', c == '-', c == '_', c == '+':
		default:
			return false
		}
	}
	return digit || v == "master"
}

// checkEnv checks every entry; one bad entry invalidates the marker. Values
// never appear in the message.
func checkEnv(env map[string]any) (map[string]string, error) {
	out := make(map[string]string, len(env))
	// Sorted, so the same file always draws the same warning.
	for _, k := range slices.Sorted(maps.Keys(env)) {
		v := env[k]
		switch {
		case k == "":
			return nil, errors.New("env: an empty key")
		case strings.ContainsAny(k, "=\x00"):
			return nil, fmt.Errorf("env: key %q contains '=' or a NUL byte", k)
		}
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("env: the value of %q is not a string", k)
		}
		if strings.ContainsRune(s, 0) {
			return nil, fmt.Errorf("env: the value of %q contains a NUL byte", k)
		}
		out[k] = s
	}
	return out, nil
}

// Resolver returns r with the marker's env.PATH searched first when leo
// is managed (every binary lookup but tmux's; see Tmux), r as is otherwise.
func (s State) Resolver(r binpath.Resolver) binpath.Resolver {
	if !s.Managed() || s.Marker.PATH() == "" {
		return r
	}
	if r.PathFirst == "" {
		r.PathFirst = s.Marker.PATH()
	} else {
		r.PathFirst = s.Marker.PATH() + string(os.PathListSeparator) + r.PathFirst
	}
	return r
}

// LeoBinary is the leo binary leo records (hooks, MCP bridge): self_path
// when managed, else own.
func (s State) LeoBinary(own string) string {
	if s.Managed() {
		return s.Marker.SelfPath
	}
	return own
}

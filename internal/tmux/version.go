package tmux

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Version is a parsed `tmux -V`.
type Version struct {
	Major, Minor int
	// Suffix is what follows the number: "a" in 3.3a, "-rc" in 3.2-rc.
	Suffix string
	// Dev is set for development builds ("next-3.4", "master", "openbsd-7.5")
	// which are at least as new as their number says.
	Dev bool
	Raw string
}

func (v Version) String() string { return v.Raw }

// AtLeast reports whether v is major.minor or newer. Letter and -rc
// suffixes do not count against it: 3.2-rc and 3.2a both satisfy 3.2.
func (v Version) AtLeast(major, minor int) bool {
	if v.Major != major {
		return v.Major > major
	}
	return v.Minor >= minor
}

// MinMajor and MinMinor are the oldest tmux leo runs on (3.2: the control
// mode, format and paste features it relies on).
const MinMajor, MinMinor = 3, 2

// ParseVersion parses the output of `tmux -V`, e.g. "tmux 3.3a",
// "tmux next-3.4", "tmux 3.2-rc", "tmux master", "tmux openbsd-7.5".
func ParseVersion(out string) (Version, error) {
	raw := strings.TrimSpace(out)
	v := Version{Raw: raw}
	rest, ok := strings.CutPrefix(raw, "tmux ")
	if !ok {
		return v, fmt.Errorf("unrecognised tmux version %q", raw)
	}
	rest = strings.TrimSpace(rest)
	switch {
	case rest == "master":
		// A build from git without a number: newest there is.
		v.Dev, v.Major, v.Minor = true, 1<<30, 0
		return v, nil
	case strings.HasPrefix(rest, "openbsd-"):
		// OpenBSD's base tmux tracks tmux master; its number is OpenBSD's.
		v.Dev, v.Major, v.Minor = true, 1<<30, 0
		return v, nil
	case strings.HasPrefix(rest, "next-"):
		v.Dev = true
		rest = strings.TrimPrefix(rest, "next-")
	}
	major, tail, ok := strings.Cut(rest, ".")
	if !ok {
		return v, fmt.Errorf("unrecognised tmux version %q", raw)
	}
	n := 0
	for n < len(tail) && tail[n] >= '0' && tail[n] <= '9' {
		n++
	}
	if n == 0 || n > 4 || len(major) == 0 || len(major) > 4 {
		return v, fmt.Errorf("unrecognised tmux version %q", raw)
	}
	var err error
	if v.Major, err = strconv.Atoi(major); err != nil {
		return v, fmt.Errorf("unrecognised tmux version %q", raw)
	}
	v.Minor, _ = strconv.Atoi(tail[:n])
	v.Suffix = tail[n:]
	return v, nil
}

// CheckVersion runs `tmux -V` once per Server and fails unless the binary
// is tmux 3.2 or newer. The error names the version found and the binary.
func (s *Server) CheckVersion(ctx context.Context) error {
	s.versionMu.Lock()
	defer s.versionMu.Unlock()
	if s.versionOK {
		return nil
	}
	if s.versionErr != nil {
		return s.versionErr
	}
	out, err := s.execVersion(ctx)
	if err != nil {
		return fmt.Errorf("tmux -V (%s): %w", s.opts.Binary, err) // transient: retried next call
	}
	v, err := ParseVersion(out)
	if err != nil {
		s.versionErr = fmt.Errorf("%s: %w", s.opts.Binary, err)
		return s.versionErr
	}
	if !v.AtLeast(MinMajor, MinMinor) {
		s.versionErr = fmt.Errorf("%s at %s is too old: leo needs tmux %d.%d or newer", v.Raw, s.opts.Binary, MinMajor, MinMinor)
		return s.versionErr
	}
	s.versionOK = true
	s.checked = v
	return nil
}

// CheckedVersion is the version CheckVersion accepted (zero before it
// has): what leo reports without running tmux again.
func (s *Server) CheckedVersion() Version {
	s.versionMu.Lock()
	defer s.versionMu.Unlock()
	return s.checked
}

// Version returns the parsed version of the tmux binary.
func (s *Server) Version(ctx context.Context) (Version, error) {
	out, err := s.execVersion(ctx)
	if err != nil {
		return Version{}, fmt.Errorf("tmux -V (%s): %w", s.opts.Binary, err)
	}
	return ParseVersion(out)
}

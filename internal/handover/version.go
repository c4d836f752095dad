package handover

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// execVersion asks a leo binary for its version: `<path> version --json`,
// bounded, with an empty environment (it needs none, and the binary must
// not see a marker or a home).
func execVersion(ctx context.Context, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "version", "--json")
	cmd.Env = []string{}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, io.Discard
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s version --json: %w", path, err)
	}
	var v struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Version == "" {
		return "", fmt.Errorf("%s version --json did not print a version", path)
	}
	return v.Version, nil
}

// older reports whether release a is older than release b. Versions that
// are not releases (dev builds) compare as neither.
func older(a, b string) bool {
	va, oka := parseVersion(a)
	vb, okb := parseVersion(b)
	if !oka || !okb {
		return false
	}
	for i := range 3 {
		if va.n[i] != vb.n[i] {
			return va.n[i] < vb.n[i]
		}
	}
	// 1.2.3-rc1 comes before 1.2.3.
	switch {
	case va.pre != "" && vb.pre == "":
		return true
	case va.pre == "" || vb.pre == "":
		return false
	}
	return va.pre < vb.pre
}

type version struct {
	n   [3]int
	pre string
}

// parseVersion reads [v]MAJOR.MINOR.PATCH[-pre][+build].
func parseVersion(s string) (version, bool) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "v")
	s, _, _ = strings.Cut(s, "+")
	core, pre, _ := strings.Cut(s, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return version{}, false
	}
	var v version
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return version{}, false
		}
		v.n[i] = n
	}
	v.pre = pre
	return v, true
}

// Package worktree is leo's one seam to git: the worktrees agents and task
// runs get (one checkout and one branch each), what is in them that a
// removal would lose, and the marker that says leo made one. git runs with
// a deadline, never through a shell, with `--` before paths, and branch
// names and refs are checked before they reach its argv.
package worktree

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
)

// DefaultTimeout bounds one git command.
const DefaultTimeout = 30 * time.Second

// BranchPrefix starts every branch leo names itself.
const BranchPrefix = "leo/"

// MarkerFile is written into a worktree's own git dir (never its working
// tree, so it is no change git reports) by the leo that made it.
const MarkerFile = "leo-worktree.json"

// Git runs git. The zero value finds git on PATH and takes DefaultTimeout.
type Git struct {
	// Bin is the git program; "" looks "git" up on PATH.
	Bin string
	// Timeout bounds each command; <= 0 is DefaultTimeout.
	Timeout time.Duration
}

// Error is a git command that failed: its arguments (no secrets ride in a
// git argv here) and what it said.
type Error struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s: %s", strings.Join(e.Args, " "), clip(msg, 400))
}

func (e *Error) Unwrap() error { return e.Err }

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// run runs git in dir; stdout is returned.
func (g Git) run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	bin := g.Bin
	if bin == "" {
		p, err := exec.LookPath("git")
		if err != nil {
			return nil, fmt.Errorf("git is not installed (not on PATH): %w", err)
		}
		bin = p
	}
	d := g.Timeout
	if d <= 0 {
		d = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	// No prompt ever waits for a person, no pager, messages in English
	// (parsed nowhere, but quoted to users), no repository config from
	// the environment.
	cmd.Env = append(without(os.Environ(), "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"),
		"GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "LC_ALL=C")
	cmd.WaitDelay = time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (after %s)", ctx.Err(), d)
		}
		return out.Bytes(), &Error{Args: args, Stderr: errb.String(), Err: err}
	}
	return out.Bytes(), nil
}

// without drops keys from env: an inherited GIT_DIR would point every
// command at another repository.
func without(env []string, keys ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, x := range keys {
			if k == x {
				drop = true
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}

// Repo is the repository a directory is in.
type Repo struct {
	// Top is the top of the checkout dir is in (a real path).
	Top string
	// Sub is dir relative to Top ("" at the top).
	Sub string
	// CommonDir is the repository's common git dir (objects, refs),
	// shared by every worktree.
	CommonDir string
}

// ErrNotARepo is a directory that is not inside a git repository.
var ErrNotARepo = errors.New("not inside a git repository")

// Find is the repository dir is in. dir must exist.
func (g Git) Find(ctx context.Context, dir string) (Repo, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return Repo{}, err
	}
	out, err := g.run(ctx, real, "rev-parse", "--show-toplevel", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		var ge *Error
		if errors.As(err, &ge) && strings.Contains(ge.Stderr, "not a git repository") {
			return Repo{}, ErrNotARepo
		}
		return Repo{}, err
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] == "" {
		// A bare repository has no top; leo needs a checkout.
		return Repo{}, ErrNotARepo
	}
	top, err := filepath.EvalSymlinks(lines[0])
	if err != nil {
		return Repo{}, err
	}
	sub, err := filepath.Rel(top, real)
	if err != nil || sub == ".." || strings.HasPrefix(sub, ".."+string(filepath.Separator)) {
		return Repo{}, fmt.Errorf("%s is outside its checkout %s", real, top)
	}
	if sub == "." {
		sub = ""
	}
	common := lines[1]
	if r, err := filepath.EvalSymlinks(common); err == nil {
		common = r
	}
	return Repo{Top: top, Sub: sub, CommonDir: common}, nil
}

// CheckBranch is why name cannot be a new branch ("" when it can): git's
// check-ref-format rules for refs/heads/<name>, and nothing that starts
// with '-' (it would read as an option).
func CheckBranch(name string) string {
	switch {
	case name == "":
		return "a branch name is empty"
	case strings.HasPrefix(name, "-"):
		return fmt.Sprintf("branch %q starts with '-'", name)
	case len(name) > 200:
		return fmt.Sprintf("branch %q is longer than 200 characters", clip(name, 40))
	case name == "@", name == "HEAD":
		return fmt.Sprintf("branch %q is a name git reserves", name)
	case strings.HasSuffix(name, "/"), strings.HasPrefix(name, "/"), strings.Contains(name, "//"):
		return fmt.Sprintf("branch %q has an empty path component", name)
	case strings.HasSuffix(name, "."):
		return fmt.Sprintf("branch %q ends with '.'", name)
	case strings.Contains(name, ".."), strings.Contains(name, "@{"):
		return fmt.Sprintf("branch %q contains '..' or '@{'", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || r == ' ' || strings.ContainsRune(`~^:?*[\`, r) || unicode.IsSpace(r) {
			return fmt.Sprintf("branch %q contains %q (not allowed in a git branch name)", name, r)
		}
	}
	for _, c := range strings.Split(name, "/") {
		if strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".lock") {
			return fmt.Sprintf("branch %q has a component starting with '.' or ending with '.lock'", name)
		}
	}
	return ""
}

// CheckRef is why ref cannot name a base ("" when it can): anything git
// would read as an option, or a control character.
func CheckRef(ref string) string {
	switch {
	case ref == "":
		return "the base is empty"
	case strings.HasPrefix(ref, "-"):
		return fmt.Sprintf("base %q starts with '-'", ref)
	case len(ref) > 256:
		return fmt.Sprintf("base %q is longer than 256 characters", clip(ref, 40))
	}
	for _, r := range ref {
		if r < 0x20 || r == 0x7f || unicode.IsSpace(r) {
			return fmt.Sprintf("base %q contains %q", ref, r)
		}
	}
	return ""
}

// Base resolves what a new branch starts from: ref ("" for the
// repository's current HEAD). It returns the name to keep as the base (a
// branch name when HEAD is on one, else ref as given, or the commit) and
// the commit it is now.
func (g Git) Base(ctx context.Context, repo, ref string) (name, commit string, err error) {
	if ref == "" {
		if out, err := g.run(ctx, repo, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
			ref = strings.TrimSpace(string(out))
		} else {
			ref = "HEAD"
		}
	}
	if why := CheckRef(ref); why != "" {
		return "", "", errors.New(why)
	}
	out, err := g.run(ctx, repo, "rev-parse", "--verify", "--quiet", "--end-of-options", ref+"^{commit}")
	if err != nil {
		return "", "", fmt.Errorf("base %q is not a commit in %s", ref, repo)
	}
	commit = strings.TrimSpace(string(out))
	if ref == "HEAD" {
		ref = commit
	}
	return ref, commit, nil
}

// BranchExists reports whether refs/heads/<branch> exists.
func (g Git) BranchExists(ctx context.Context, repo, branch string) (bool, error) {
	_, err := g.run(ctx, repo, "show-ref", "--verify", "--quiet", "refs/heads/"+branch)
	if err == nil {
		return true, nil
	}
	var ge *Error
	var ee *exec.ExitError
	if errors.As(err, &ge) && errors.As(ge.Err, &ee) && ee.ExitCode() == 1 {
		return false, nil
	}
	return false, err
}

// Add makes a worktree at path on a new branch from commit; with commit
// "" it checks out the existing branch (a worktree made again for a
// branch that is kept).
func (g Git) Add(ctx context.Context, repo, path, branch, commit string) error {
	if why := CheckBranch(branch); why != "" {
		return errors.New(why)
	}
	if err := checkPath(path); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	args := []string{"worktree", "add", "--quiet"}
	if commit != "" {
		if why := CheckRef(commit); why != "" {
			return errors.New(why)
		}
		args = append(args, "-b", branch, "--", path, commit)
	} else {
		args = append(args, "--", path, branch)
	}
	_, err := g.run(ctx, repo, args...)
	return err
}

func checkPath(p string) error {
	if !filepath.IsAbs(p) {
		return fmt.Errorf("worktree path %q is not absolute", p)
	}
	if strings.ContainsAny(p, "\x00\n\r") {
		return fmt.Errorf("worktree path %q contains a control character", p)
	}
	return nil
}

// Status is what a removal of a worktree would lose.
type Status struct {
	// Changed are the paths with uncommitted changes (untracked files
	// too), as git status names them.
	Changed []string
	// Ahead are the branch's commits on neither the base nor any remote,
	// newest first, each "<short hash> <subject>".
	Ahead []string
}

// Clean: nothing would be lost.
func (s Status) Clean() bool { return len(s.Changed) == 0 && len(s.Ahead) == 0 }

// Inspect is what is in the worktree at path on branch that its base
// and the remotes do not have. Untracked files named in own (paths
// relative to the worktree: files leo itself wrote there) are left out.
func (g Git) Inspect(ctx context.Context, path, branch, base string, own ...string) (Status, error) {
	var st Status
	all, err := g.Changed(ctx, path)
	if err != nil {
		return st, err
	}
	var changed []string
	for _, f := range all {
		if !slices.Contains(own, f) {
			changed = append(changed, f)
		}
	}
	ahead, err := g.Ahead(ctx, path, branch, base)
	if err != nil {
		return st, err
	}
	st.Changed, st.Ahead = changed, ahead
	return st, nil
}

// Changed are the worktree's uncommitted changes (porcelain status,
// untracked files included, ignored ones not).
func (g Git) Changed(ctx context.Context, path string) ([]string, error) {
	out, err := g.run(ctx, path, "status", "--porcelain=v1", "-z", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	var files []string
	recs := strings.Split(string(out), "\x00")
	for i := 0; i < len(recs); i++ {
		r := recs[i]
		if len(r) < 4 {
			continue
		}
		files = append(files, r[3:])
		if r[0] == 'R' || r[0] == 'C' {
			i++ // the rename's source follows
		}
	}
	return files, nil
}

// Ahead are the commits on branch that are neither on base nor on any
// remote (`git rev-list <branch> --not <base> --remotes`).
func (g Git) Ahead(ctx context.Context, dir, branch, base string) ([]string, error) {
	if why := CheckBranch(branch); why != "" {
		return nil, errors.New(why)
	}
	args := []string{"log", "--format=%h %s", "refs/heads/" + branch, "--not"}
	if base != "" {
		if why := CheckRef(base); why != "" {
			return nil, errors.New(why)
		}
		args = append(args, base)
	}
	args = append(args, "--remotes", "--")
	out, err := g.run(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	var commits []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" {
			commits = append(commits, l)
		}
	}
	return commits, nil
}

// Remove removes the worktree at path; force discards what is in it.
func (g Git) Remove(ctx context.Context, repo, path string, force bool) error {
	if err := checkPath(path); err != nil {
		return err
	}
	args := []string{"worktree", "remove"}
	if force {
		args = append(args, "--force")
	}
	_, err := g.run(ctx, repo, append(args, "--", path)...)
	if err != nil {
		if _, serr := os.Stat(path); errors.Is(serr, os.ErrNotExist) {
			// Gone already (a person removed it): forget it in git too.
			_, perr := g.run(ctx, repo, "worktree", "prune")
			return perr
		}
	}
	return err
}

// Prune forgets worktrees whose directory is gone.
func (g Git) Prune(ctx context.Context, repo string) error {
	_, err := g.run(ctx, repo, "worktree", "prune")
	return err
}

// DeleteBranch deletes refs/heads/<branch>. The caller has decided that
// nothing on it would be lost (Ahead is empty) or was told to discard it.
func (g Git) DeleteBranch(ctx context.Context, repo, branch string) error {
	if why := CheckBranch(branch); why != "" {
		return errors.New(why)
	}
	_, err := g.run(ctx, repo, "branch", "-D", "--", branch)
	return err
}

// Marker says which leo made a worktree and for whom.
type Marker struct {
	// Home is the leo home that made it.
	Home string `json:"home"`
	// Agent, or Task and Run, is whom it was made for.
	Agent string `json:"agent,omitempty"`
	Task  string `json:"task,omitempty"`
	Run   string `json:"run,omitempty"`
	// Repo is the checkout it was made from; Branch and Base its branch
	// and what that started from.
	Repo   string    `json:"repo"`
	Branch string    `json:"branch"`
	Base   string    `json:"base,omitempty"`
	Made   time.Time `json:"made"`
	// Own are the files, relative to the worktree, that leo's launches
	// write into it (a harness's settings): not changes a person made, so
	// whoever inspects the worktree without its agent (leo doctor) does
	// not count them.
	Own []string `json:"own,omitempty"`
}

// GitDir is the worktree's own git dir, from its .git file.
func GitDir(path string) (string, error) {
	data, err := os.ReadFile(filepath.Join(path, ".git"))
	if err != nil {
		return "", err
	}
	d, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return "", fmt.Errorf("%s/.git is not a worktree's", path)
	}
	d = strings.TrimSpace(d)
	if !filepath.IsAbs(d) {
		d = filepath.Join(path, d)
	}
	return filepath.Clean(d), nil
}

// WriteMarker marks the worktree at path as leo's.
func WriteMarker(path string, m Marker) error {
	gd, err := GitDir(path)
	if err != nil {
		return err
	}
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(gd, MarkerFile), append(data, '\n'), 0o600)
}

// ReadMarker is the marker of the worktree at path; ok false when it has
// none (not leo's).
func ReadMarker(path string) (m Marker, ok bool) {
	gd, err := GitDir(path)
	if err != nil {
		return Marker{}, false
	}
	data, err := os.ReadFile(filepath.Join(gd, MarkerFile))
	if err != nil || json.Unmarshal(data, &m) != nil {
		return Marker{}, false
	}
	return m, true
}

// Found is one leo-made worktree under a root.
type Found struct {
	Path   string
	Marker Marker
}

// Scan lists the worktrees under root that the leo of home made: the
// directories of root (one level, and task runs' two levels) whose .git
// names a git dir holding a marker of that home.
func Scan(root, home string) []Found {
	var out []Found
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if m, ok := ReadMarker(p); ok {
				if m.Home == home {
					out = append(out, Found{Path: p, Marker: m})
				}
				continue
			}
			if depth < 2 {
				walk(p, depth+1)
			}
		}
	}
	walk(root, 0)
	return out
}

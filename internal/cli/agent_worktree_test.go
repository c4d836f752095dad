package cli

import (
	"bytes"
	"testing"

	"github.com/blackpaw-studio/leo/internal/api"
)

func TestBranchText(t *testing.T) {
	for _, c := range []struct {
		w    *api.Worktree
		want string
	}{
		{nil, "-"},
		{&api.Worktree{Branch: "leo/a"}, "leo/a"},
		{&api.Worktree{Branch: "leo/a", Dirty: true, Ahead: 3}, "leo/a* +3"},
	} {
		if got := branchText(c.w); got != c.want {
			t.Errorf("branchText(%+v) = %q, want %q", c.w, got, c.want)
		}
	}
}

// What a delete says of the worktree: removed, what --force discarded,
// and whether the branch went or stays and why.
func TestPrintWorktreeRemove(t *testing.T) {
	var b bytes.Buffer
	err := printWorktreeRemove(&b, &api.WorktreeRemove{Path: "/w/a", Branch: "leo/a", Removed: true,
		DiscardedFiles: []string{"x.go", "notes"}, BranchKept: "it has 1 commit(s) on neither main nor any remote: abc123 work"})
	if err != nil {
		t.Fatal(err)
	}
	want := "removed worktree /w/a\ndiscarded 2 uncommitted change(s): x.go, notes\nkept branch leo/a: it has 1 commit(s) on neither main nor any remote: abc123 work\n"
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	_ = printWorktreeRemove(&b, &api.WorktreeRemove{Path: "/w/a", Branch: "leo/a", BranchKept: "--keep-worktree"})
	if b.String() != "kept worktree /w/a and branch leo/a\n" {
		t.Fatalf("keep: %q", b.String())
	}
	b.Reset()
	_ = printWorktreeRemove(&b, &api.WorktreeRemove{Path: "/w/a", Branch: "leo/a", Removed: true, BranchDeleted: true})
	if b.String() != "removed worktree /w/a\ndeleted branch leo/a\n" {
		t.Fatalf("clean: %q", b.String())
	}
}

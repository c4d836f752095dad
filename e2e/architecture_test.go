package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestArchitectureMapIsTheTree: docs/architecture.md's package map names
// every Go package of the tree, once, and no package the tree lacks. A
// package added, removed or moved fails here until the map says so.
func TestArchitectureMapIsTheTree(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The map's rows: | `path/` | what lives there |
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9_/.-]+)/` \\|")
	var mapped []string
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		mapped = append(mapped, m[1])
	}
	tree := goPackages(t, root)
	seen := map[string]int{}
	for _, p := range mapped {
		seen[p]++
	}
	for _, p := range tree {
		if seen[p] == 0 {
			t.Errorf("package %s/ is not in docs/architecture.md's package map", p)
		}
	}
	for p, n := range seen {
		if !slices.Contains(tree, p) {
			t.Errorf("docs/architecture.md maps %s/, which is no package of the tree", p)
		}
		if n > 1 {
			t.Errorf("docs/architecture.md maps %s/ %d times", p, n)
		}
	}
	if len(tree) < 40 {
		t.Fatalf("found only %d packages under %s: %q", len(tree), root, tree)
	}
}

// goPackages lists the directories under root that hold Go files (a test
// file alone makes a package too), as slash paths; testdata and hidden
// folders are no packages.
func goPackages(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); rel != "." && !slices.Contains(out, rel) {
				out = append(out, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// TestCodeCitesOnlyThisRepository: no Go file points a reader at
// spec/… or reference/… pages, which live outside this repository; they
// cite docs/ here or say it in place.
func TestCodeCitesOnlyThisRepository(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	outside := regexp.MustCompile(`(^|[^/\w])(spec|reference)/[\w-]+\.md`)
	for _, dir := range goPackages(t, root) {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				if m := outside.FindString(line); m != "" {
					t.Errorf("%s:%d cites %s, outside this repository", f, i+1, strings.TrimSpace(m))
				}
			}
		}
	}
}

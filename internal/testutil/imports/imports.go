// Package imports reads which of leo's packages a package imports, from the
// source (go/parser, imports only), for tests that keep the layers apart: a
// package low in the picture must not reach up into one above it.
//
// It counts every non-test .go file of a package whatever its build
// constraints (a darwin-only import counts too), and only leo's own
// packages.
package imports

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Module is leo's module path.
const Module = "github.com/blackpaw-studio/leo"

// Direct lists the leo packages pkg's non-test files import, sorted. pkg is
// an import path ("github.com/blackpaw-studio/leo/internal/client").
func Direct(t testing.TB, pkg string) []string {
	t.Helper()
	root := moduleRoot(t)
	rel, ok := strings.CutPrefix(pkg, Module)
	if !ok {
		t.Fatalf("imports: %s is not in %s", pkg, Module)
	}
	dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(rel, "/")))
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("imports: no Go files in %s (%v)", dir, err)
	}
	seen := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatalf("imports: %v", err)
		}
		for _, spec := range af.Imports {
			p, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				t.Fatalf("imports: %s: %v", f, err)
			}
			if p == Module || strings.HasPrefix(p, Module+"/") {
				seen[p] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Deps lists every leo package pkg imports, directly or through another,
// sorted; pkg itself is not in it.
func Deps(t testing.TB, pkg string) []string {
	t.Helper()
	seen := map[string]bool{}
	var walk func(p string)
	walk = func(p string) {
		for _, d := range Direct(t, p) {
			if !seen[d] {
				seen[d] = true
				walk(d)
			}
		}
	}
	walk(pkg)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Under reports whether pkg is dir or a package below it ("…/internal/daemon"
// holds "…/internal/daemon/daemontest").
func Under(pkg, dir string) bool {
	return pkg == dir || strings.HasPrefix(pkg, dir+"/")
}

// moduleRoot is the directory of leo's go.mod, found upward from the test's
// working directory (its package's folder).
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(data), "module "+Module+"\n") {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatalf("imports: no go.mod of %s above the working directory", Module)
		}
		dir = up
	}
}

package config

import (
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// posIndex maps a dotted config path ("templates.foo.harness_options") to
// the line and column of its key in the file. It is built only when there
// is a finding to locate, so a clean config pays nothing for it.
type posIndex map[string][2]int

// positions parses the file again (the tree is not kept after Parse) and
// indexes its keys. Parse already succeeded on the same bytes.
func (c *Config) positions() posIndex {
	idx := posIndex{}
	file, _, _, err := parseYAML(c.data, c.Path)
	if err != nil || file == nil {
		return idx
	}
	for _, doc := range file.Docs {
		if doc != nil {
			idx.walk(doc.Body, "", 0)
		}
	}
	return idx
}

// maxPosDepth bounds the walk; leo's paths are at most a few keys deep.
const maxPosDepth = 8

func (idx posIndex) walk(n ast.Node, prefix string, depth int) {
	if n == nil || depth > maxPosDepth {
		return
	}
	switch v := n.(type) {
	case *ast.MappingNode:
		for _, mv := range v.Values {
			idx.pair(mv, prefix, depth)
		}
	case *ast.MappingValueNode:
		idx.pair(v, prefix, depth)
	case *ast.TagNode:
		idx.walk(v.Value, prefix, depth+1)
	case *ast.AnchorNode:
		idx.walk(v.Value, prefix, depth+1)
	}
}

func (idx posIndex) pair(mv *ast.MappingValueNode, prefix string, depth int) {
	if mv == nil || mv.Key == nil {
		return
	}
	tk := mv.Key.GetToken()
	if tk == nil || tk.Position == nil {
		return
	}
	key := tk.Value
	path := key
	if prefix != "" {
		path = prefix + "." + key
	}
	if _, seen := idx[path]; !seen {
		idx[path] = [2]int{tk.Position.Line, tk.Position.Column}
	}
	idx.walk(mv.Value, path, depth+1)
}

// lookup finds path, or the nearest enclosing key that exists.
func (idx posIndex) lookup(path string) (line, col int) {
	for path != "" {
		if p, ok := idx[path]; ok {
			return p[0], p[1]
		}
		i := strings.LastIndexByte(path, '.')
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return 0, 0
}

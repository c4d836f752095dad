package config

import (
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// posIndex maps a dotted config path ("templates.foo.harness_options") to
// the line and column of its key in the file. It is built only when there
// is a finding to locate, so a clean config pays nothing for it.
type posIndex map[string][2]int

// maxPosDepth bounds the walk; leo's paths are at most a few keys deep.
const maxPosDepth = 6

// positions parses the file again (the tree is not kept after Parse: the
// daemon holds its config for a long time) and indexes its keys.
func (c *Config) positions() posIndex {
	idx := posIndex{}
	root, err := parseFast(c.data)
	if err != nil || root == nil {
		return idx
	}
	idx.walk(root, "", 0)
	return idx
}

func (idx posIndex) walk(n *node, prefix string, depth int) {
	if depth > maxPosDepth {
		return
	}
	n = deref(n)
	if n == nil {
		return
	}
	keys := n.Content
	for i := 0; i+1 < len(keys) && n.Kind == yamlv3.MappingNode; i += 2 {
		k := keys[i]
		if isMergeKey(k) {
			continue
		}
		path := k.Value
		if prefix != "" {
			path = prefix + "." + k.Value
		}
		if _, seen := idx[path]; !seen {
			idx[path] = [2]int{k.Line, k.Column}
		}
		idx.walk(keys[i+1], path, depth+1)
	}
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

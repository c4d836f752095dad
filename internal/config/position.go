package config

import (
	"fmt"
	"strings"
)

// posIndex maps a dotted config path ("templates.foo.harness_options") to
// the line and column of its key in the file. It is built from the one
// parse of the file, so positions are exact at any size; the tree itself is
// not kept (the daemon holds its config for a long time).
type posIndex map[string][2]int

// maxPosDepth bounds the walk; leo's paths are at most a few keys deep.
const maxPosDepth = 6

// maxPosKeys bounds the index: aliases share subtrees, so a small file can
// name a huge tree.
const maxPosKeys = 200_000

func indexPositions(root *node) posIndex {
	idx := posIndex{}
	budget := maxPosKeys
	idx.walk(root, "", 0, &budget)
	return idx
}

func (idx posIndex) walk(n *node, prefix string, depth int, budget *int) {
	if depth > maxPosDepth || n == nil {
		return
	}
	if n.Kind == sequenceNode && prefix != "" {
		// List items are named by index: notify[0].webhook.
		for i, item := range n.Content {
			if *budget--; *budget < 0 {
				return
			}
			path := fmt.Sprintf("%s[%d]", prefix, i)
			if _, seen := idx[path]; !seen && item != nil {
				idx[path] = [2]int{item.Line, item.Column}
			}
			idx.walk(item, path, depth+1, budget)
		}
		return
	}
	keys := n.Content
	for i := 0; i+1 < len(keys) && n.Kind == mappingNode; i += 2 {
		if *budget--; *budget < 0 {
			return
		}
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
		idx.walk(keys[i+1], path, depth+1, budget)
	}
}

// lookup finds path, or the nearest enclosing key or list item that
// exists.
func (idx posIndex) lookup(path string) (line, col int) {
	for path != "" {
		if p, ok := idx[path]; ok {
			return p[0], p[1]
		}
		i := strings.LastIndexAny(path, ".[")
		if i <= 0 {
			break
		}
		path = path[:i]
	}
	return 0, 0
}

package config

import (
	"errors"
	"fmt"
	"math"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// leo.yaml is read with one YAML library, goccy/go-yaml, in one parse of the
// whole file: its syntax tree carries the exact line and column of every
// token, whatever the file's size. The tree is turned into the small node
// type below (aliases resolved, tags applied) that the decoder and the
// position index walk.

// nodeKind is the shape of a node.
type nodeKind int

const (
	scalarNode nodeKind = iota + 1
	mappingNode
	sequenceNode
)

// Tags of the nodes leo reads; a node with any other tag keeps the tag the
// user wrote (kindOf names it).
const (
	tagNull  = "!!null"
	tagBool  = "!!bool"
	tagStr   = "!!str"
	tagInt   = "!!int"
	tagFloat = "!!float"
	tagMap   = "!!map"
	tagSeq   = "!!seq"
	tagMerge = "!!merge"
)

// node is one YAML node. An alias is the very node its anchor names, so a
// tree may share subtrees (never cycles: an alias can only name an anchor
// that is complete before it).
type node struct {
	Kind nodeKind
	Tag  string
	// Value is a scalar's text as written (unquoted): env values keep it,
	// so ZIP: 01234 stays "01234".
	Value string
	// Typed is a scalar's value: nil, bool, string, int64, uint64 or float64.
	Typed any
	// Content holds a sequence's items, or a mapping's keys and values
	// alternately.
	Content      []*node
	Line, Column int
}

// parseYAML parses the one YAML document in data and returns its root (nil
// for an empty file). Syntax errors, a second document, duplicate keys and
// unknown aliases are *ParseErrors with the position.
func parseYAML(data []byte, path string) (root *node, err error) {
	// The YAML library is third-party code fed with user input; a panic in
	// it must become an error, never take the daemon down.
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, &ParseError{File: path, Msg: fmt.Sprintf("cannot parse YAML: %v", r)}
		}
	}()
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(path, err)
	}
	if len(file.Docs) > 1 {
		return nil, &ParseError{File: path, Line: docLine(file.Docs[1]), Column: 1,
			Msg: "more than one YAML document; leo.yaml holds exactly one"}
	}
	if len(file.Docs) == 0 || file.Docs[0].Body == nil {
		return nil, nil
	}
	b := &treeBuilder{path: path, anchors: map[string]*node{}}
	return b.build(file.Docs[0].Body, 0)
}

func docLine(doc *ast.DocumentNode) int {
	if doc == nil {
		return 0
	}
	if doc.Start != nil && doc.Start.Position != nil {
		return doc.Start.Position.Line
	}
	if tk := doc.GetToken(); tk != nil && tk.Position != nil {
		return tk.Position.Line
	}
	return 0
}

// yamlError turns a go-yaml error into a ParseError with the position.
func yamlError(path string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		pe := &ParseError{File: path, Msg: ye.GetMessage()}
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			pe.Line, pe.Column = tk.Position.Line, tk.Position.Column
		}
		return pe
	}
	return &ParseError{File: path, Msg: err.Error()}
}

// maxTreeDepth bounds the nesting the builder follows; leo.yaml is a few
// levels deep, and a hostile file must not exhaust the stack.
const maxTreeDepth = 1000

type treeBuilder struct {
	path    string
	anchors map[string]*node
}

func (b *treeBuilder) errorAt(tk *token.Token, format string, args ...any) error {
	pe := &ParseError{File: b.path, Msg: fmt.Sprintf(format, args...)}
	if tk != nil && tk.Position != nil {
		pe.Line, pe.Column = tk.Position.Line, tk.Position.Column
	}
	return pe
}

func (b *treeBuilder) scalar(tk *token.Token, tag string, typed any) *node {
	n := &node{Kind: scalarNode, Tag: tag, Typed: typed}
	if tk != nil {
		n.Value = tk.Value
		if tk.Position != nil {
			n.Line, n.Column = tk.Position.Line, tk.Position.Column
		}
	}
	return n
}

// build converts one syntax-tree node, in document order, so an alias sees
// exactly the anchors defined before it.
func (b *treeBuilder) build(an ast.Node, depth int) (*node, error) {
	if depth > maxTreeDepth {
		return nil, b.errorAt(an.GetToken(), "the document is nested too deeply")
	}
	switch n := an.(type) {
	case nil:
		return &node{Kind: scalarNode, Tag: tagNull}, nil
	case *ast.NullNode:
		return b.scalar(n.Token, tagNull, nil), nil
	case *ast.BoolNode:
		return b.scalar(n.Token, tagBool, n.Value), nil
	case *ast.IntegerNode:
		return b.scalar(n.Token, tagInt, n.Value), nil
	case *ast.FloatNode:
		return b.scalar(n.Token, tagFloat, n.Value), nil
	case *ast.InfinityNode:
		return b.scalar(n.Token, tagFloat, n.Value), nil
	case *ast.NanNode:
		return b.scalar(n.Token, tagFloat, math.NaN()), nil
	case *ast.StringNode:
		s := b.scalar(n.Token, tagStr, n.Value)
		s.Value = n.Value
		return s, nil
	case *ast.LiteralNode:
		s := b.scalar(n.Start, tagStr, "")
		if n.Value != nil {
			s.Value = n.Value.Value
		} else {
			s.Value = ""
		}
		s.Typed = s.Value
		return s, nil
	case *ast.MergeKeyNode:
		return b.scalar(n.Token, tagMerge, "<<"), nil
	case *ast.MappingKeyNode:
		return b.build(n.Value, depth+1)
	case *ast.MappingValueNode:
		m := &node{Kind: mappingNode, Tag: tagMap}
		if err := b.pair(m, n, depth); err != nil {
			return nil, err
		}
		m.Line, m.Column = m.Content[0].Line, m.Content[0].Column
		return m, nil
	case *ast.MappingNode:
		m := &node{Kind: mappingNode, Tag: tagMap, Content: make([]*node, 0, 2*len(n.Values))}
		for _, kv := range n.Values {
			if err := b.pair(m, kv, depth); err != nil {
				return nil, err
			}
		}
		if len(m.Content) > 0 && !n.IsFlowStyle {
			m.Line, m.Column = m.Content[0].Line, m.Content[0].Column
		} else if n.Start != nil && n.Start.Position != nil {
			m.Line, m.Column = n.Start.Position.Line, n.Start.Position.Column
		}
		return m, nil
	case *ast.SequenceNode:
		s := &node{Kind: sequenceNode, Tag: tagSeq, Content: make([]*node, 0, len(n.Values))}
		if n.Start != nil && n.Start.Position != nil {
			s.Line, s.Column = n.Start.Position.Line, n.Start.Position.Column
		}
		for _, v := range n.Values {
			item, err := b.build(v, depth+1)
			if err != nil {
				return nil, err
			}
			s.Content = append(s.Content, item)
		}
		return s, nil
	case *ast.AnchorNode:
		v, err := b.build(n.Value, depth+1)
		if err != nil {
			return nil, err
		}
		if n.Name != nil {
			b.anchors[n.Name.GetToken().Value] = v
		}
		return v, nil
	case *ast.AliasNode:
		name, at := "", n.Start
		if n.Value != nil {
			at = n.Value.GetToken()
			name = at.Value
		}
		v, ok := b.anchors[name]
		if !ok {
			return nil, b.errorAt(at, "could not find alias %q (no anchor &%s before it)", name, name)
		}
		return v, nil
	case *ast.TagNode:
		return b.tagged(n, depth)
	case *ast.CommentGroupNode, *ast.CommentNode:
		return &node{Kind: scalarNode, Tag: tagNull}, nil
	}
	return nil, b.errorAt(an.GetToken(), "unsupported YAML node (%s)", an.Type())
}

// pair appends one key and its value to the mapping m.
func (b *treeBuilder) pair(m *node, kv *ast.MappingValueNode, depth int) error {
	var k *node
	var err error
	if kv.Key == nil {
		k = &node{Kind: scalarNode, Tag: tagNull}
	} else if k, err = b.build(kv.Key, depth+1); err != nil {
		return err
	}
	v, err := b.build(kv.Value, depth+1)
	if err != nil {
		return err
	}
	m.Content = append(m.Content, k, v)
	return nil
}

// tagged applies an explicit tag: !!str turns any scalar into its text, the
// other core scalar tags must match what the value is, and any other tag is
// kept on the node for kindOf to name.
func (b *treeBuilder) tagged(n *ast.TagNode, depth int) (*node, error) {
	tag := ""
	if n.Start != nil {
		tag = n.Start.Value
	}
	inner, err := b.build(n.Value, depth+1)
	if err != nil {
		return nil, err
	}
	switch tag {
	case tagStr:
		if inner.Kind != scalarNode {
			return nil, b.errorAt(n.Start, "cannot read a %s as !!str", kindWord(inner))
		}
		out := *inner
		out.Tag, out.Typed = tagStr, inner.Value
		if inner.Tag == tagNull && n.Value == nil {
			out.Value, out.Typed = "", ""
		}
		return &out, nil
	case tagInt, tagFloat, tagBool, tagNull, tagMap, tagSeq:
		switch {
		case inner.Tag == tag:
			return inner, nil
		case tag == tagFloat && inner.Tag == tagInt: // !!float 2 is 2.0
			out := *inner
			out.Tag, out.Typed = tagFloat, toFloat(inner.Typed)
			return &out, nil
		}
		return nil, b.errorAt(n.Start, "cannot read %q as %s", inner.Value, tag)
	}
	out := *inner
	out.Tag = tag
	return &out, nil
}

func kindWord(n *node) string {
	switch n.Kind {
	case mappingNode:
		return "mapping"
	case sequenceNode:
		return "list"
	}
	return "scalar"
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case int:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// maxValueNodes bounds the generic value built from a subtree: aliases share
// nodes, so a small file can name a huge value ("billion laughs").
const maxValueNodes = 100_000

var errValueTooLarge = errors.New("the value expands to too many nodes (aliases nested too deeply?)")

// genericValue is a subtree as a generic Go value (map[string]any, []any and
// scalars), with merges applied the way entries applies them.
func genericValue(n *node) (any, error) {
	budget := maxValueNodes
	return valueOf(n, &budget, 0)
}

func valueOf(n *node, budget *int, depth int) (any, error) {
	*budget--
	if *budget < 0 || depth > maxTreeDepth {
		return nil, errValueTooLarge
	}
	if n == nil {
		return nil, nil
	}
	switch n.Kind {
	case mappingNode:
		fs := entries(n, 0)
		out := make(map[string]any, len(fs))
		for _, e := range fs {
			v, err := valueOf(e.val, budget, depth+1)
			if err != nil {
				return nil, err
			}
			out[e.key] = v
		}
		return out, nil
	case sequenceNode:
		out := make([]any, len(n.Content))
		for i, e := range n.Content {
			v, err := valueOf(e, budget, depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return n.Typed, nil
}

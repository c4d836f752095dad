package config

import (
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// ErrCannotEdit is wrapped by EditScope and SetTaskEnabled when the file's
// shape around the field is one leo does not rewrite (an alias, a mapping
// shared through an anchor, a flow mapping it cannot splice into): the
// user edits that part by hand.
var ErrCannotEdit = errors.New("leo cannot edit this part of the file; change it by hand")

// SetTaskEnabled sets tasks.<task>.enabled in the leo.yaml at path. It is
// a scope edit (EditScope): only that one value changes, the rest of the
// file (comments, order, quoting, spacing) stays byte for byte, and the
// result is validated and written atomically under Save's lock; on any
// error the file is left as it was. A task already in that state is not
// rewritten (an unset enabled already means true). An unknown task is an
// error wrapping ErrUnknownScope.
func SetTaskEnabled(path, task string, enabled bool, opts ...Option) error {
	opts = append(slices.Clone(opts), func(o *options) { o.create = false })
	return editScope(path, TaskScope(task), func(c *Config) ([]FieldChange, error) {
		if t := c.Tasks[task]; (t.Enabled == nil || *t.Enabled) == enabled {
			return nil, nil
		}
		return []FieldChange{SetField("enabled", enabled)}, nil
	}, opts...)
}

// parseAST parses data with goccy/go-yaml, turning a panic into an error
// (see parseYAML).
func parseAST(data []byte, path string) (file *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			file, err = nil, &ParseError{File: path, Msg: fmt.Sprintf("cannot parse YAML: %v", r)}
		}
	}()
	file, err = parser.ParseBytes(data, 0)
	if err != nil {
		return nil, yamlError(path, err)
	}
	return file, nil
}

func unwrapAnchor(n ast.Node) ast.Node {
	if a, ok := n.(*ast.AnchorNode); ok {
		return a.Value
	}
	return n
}

// lineStarts lists the byte offset where each line begins.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i, b := range data {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// byteOffset turns a token's line and column (counted in characters) into a
// byte offset in data.
func byteOffset(data []byte, lines []int, tk *token.Token) (int, bool) {
	if tk == nil || tk.Position == nil {
		return 0, false
	}
	line, col := tk.Position.Line, tk.Position.Column
	if line < 1 || line > len(lines) || col < 1 {
		return 0, false
	}
	off := lines[line-1]
	for i := 1; i < col; i++ {
		if off >= len(data) || data[off] == '\n' {
			return 0, false
		}
		_, size := utf8.DecodeRune(data[off:])
		off += size
	}
	if off > len(data) {
		return 0, false
	}
	return off, true
}

func splice(data []byte, from, to int, insert []byte) []byte {
	out := make([]byte, 0, len(data)-(to-from)+len(insert))
	out = append(out, data[:from]...)
	out = append(out, insert...)
	return append(out, data[to:]...)
}

package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// ErrCannotEdit is wrapped by SetTaskEnabled when the file's shape around
// the field is one leo does not rewrite (an alias, a tag, a value spread
// over several lines): the user edits that line by hand.
var ErrCannotEdit = errors.New("leo cannot edit this part of the file; change it by hand")

// SetTaskEnabled sets tasks.<task>.enabled in the leo.yaml at path. Only
// that one value changes: the rest of the file (comments, order, quoting,
// spacing) stays byte for byte, because the edit is a splice at the
// position the parser reports, not a re-encoding of the document. The
// result is validated like Save and written atomically under Save's lock;
// on any error the file is left as it was. A task already in that state is
// not rewritten (an unset enabled already means true). An unknown task is
// an error wrapping ErrUnknownScope.
func SetTaskEnabled(path, task string, enabled bool, opts ...Option) error {
	saveMu.Lock()
	defer saveMu.Unlock()

	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return err
	}
	before, err := Parse(data, abs, opts...)
	if err != nil {
		return err
	}
	t, ok := before.Tasks[task]
	if !ok {
		names := before.TaskNames()
		known := "no tasks are configured"
		if len(names) > 0 {
			known = "tasks: " + strings.Join(names, ", ")
		}
		return fmt.Errorf("tasks.%s: %w (%s)", task, ErrUnknownScope, known)
	}
	if (t.Enabled == nil || *t.Enabled) == enabled {
		return nil
	}
	edited, err := spliceTaskEnabled(data, abs, task, enabled)
	if err != nil {
		return err
	}
	after, err := Parse(edited, abs, opts...)
	if err != nil {
		return err
	}
	if err := checkOnlyEnabledChanged(before, after, task, enabled); err != nil {
		return err
	}
	if err := after.Validate(); err != nil {
		return err
	}
	return writeAtomic(abs, edited)
}

// checkOnlyEnabledChanged proves the splice did what it was meant to: the
// task now has the wanted state and no other task's state moved (a task
// whose mapping is an anchor other tasks merge would change them too).
func checkOnlyEnabledChanged(before, after *Config, task string, enabled bool) error {
	state := func(t *Task) bool { return t.Enabled == nil || *t.Enabled }
	if t, ok := after.Tasks[task]; !ok || state(t) != enabled {
		return fmt.Errorf("tasks.%s.enabled: %w", task, ErrCannotEdit)
	}
	if len(after.Tasks) != len(before.Tasks) {
		return fmt.Errorf("tasks.%s.enabled: %w", task, ErrCannotEdit)
	}
	for name, b := range before.Tasks {
		a, ok := after.Tasks[name]
		if !ok || name != task && state(a) != state(b) {
			return fmt.Errorf("tasks.%s.enabled: %w (the task's mapping is shared with tasks.%s)", task, ErrCannotEdit, name)
		}
	}
	return nil
}

// spliceTaskEnabled returns data with tasks.<task>.enabled set: the value
// replaced where the key exists, else a key added to the task's mapping.
// goccy/go-yaml miscounts the lines of a CRLF file (after a comment every
// token's line is one too many), so a file whose every line ends in CRLF
// is edited as LF and its line ends put back.
func spliceTaskEnabled(data []byte, path, task string, enabled bool) ([]byte, error) {
	crlf, lf := []byte("\r\n"), []byte("\n")
	if n := bytes.Count(data, lf); n == 0 || bytes.Count(data, crlf) != n {
		return spliceTaskEnabledLF(data, path, task, enabled)
	}
	out, err := spliceTaskEnabledLF(bytes.ReplaceAll(data, crlf, lf), path, task, enabled)
	if err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(out, lf, crlf), nil
}

func spliceTaskEnabledLF(data []byte, path, task string, enabled bool) ([]byte, error) {
	field := "tasks." + task + ".enabled"
	cannot := func(why string) error { return fmt.Errorf("%s: %w (%s)", field, ErrCannotEdit, why) }

	file, err := parseAST(data, path)
	if err != nil {
		return nil, err
	}
	if len(file.Docs) != 1 || file.Docs[0].Body == nil {
		return nil, cannot("no document")
	}
	tasks, ok := lookupKey(file.Docs[0].Body, "tasks")
	if !ok {
		return nil, cannot("no tasks: section")
	}
	taskNode, ok := lookupKey(tasks, task)
	if !ok {
		return nil, cannot("tasks." + task + " is not written in the tasks: section itself")
	}
	taskNode = unwrapAnchor(taskNode)
	lines := lineStarts(data)
	value := []byte(fmt.Sprint(enabled))

	if v, ok := lookupKey(taskNode, "enabled"); ok {
		return replaceValue(data, lines, v, value, cannot)
	}

	switch m := taskNode.(type) {
	case *ast.MappingNode:
		if m.IsFlowStyle {
			off, ok := byteOffset(data, lines, m.Start)
			if !ok || data[off] != '{' {
				return nil, cannot("cannot find the task's {")
			}
			insert := "enabled: " + string(value)
			if len(m.Values) > 0 {
				insert += ", "
			}
			return splice(data, off+1, off+1, []byte(insert)), nil
		}
		if len(m.Values) == 0 {
			return nil, cannot("empty mapping")
		}
		return insertKeyLine(data, lines, m.Values[0], value, cannot)
	case *ast.MappingValueNode:
		return insertKeyLine(data, lines, m, value, cannot)
	}
	return nil, cannot("tasks." + task + " is not a mapping written in place (an alias or a tag)")
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

// replaceValue puts value where the scalar v is written: a plain boolean
// or an explicit null is replaced token for token; an empty value
// (`enabled:` alone) gets value after its colon.
func replaceValue(data []byte, lines []int, v ast.Node, value []byte, cannot func(string) error) ([]byte, error) {
	if tag, ok := v.(*ast.TagNode); ok && tag.Start != nil && tag.Start.Value == tagBool {
		v = tag.Value
	}
	var tk *token.Token
	switch n := v.(type) {
	case *ast.BoolNode:
		tk = n.Token
	case *ast.NullNode:
		tk = n.Token
	default:
		return nil, cannot("its value is not true or false")
	}
	off, ok := byteOffset(data, lines, tk)
	if !ok {
		return nil, cannot("cannot locate its value")
	}
	if bytes.HasPrefix(data[off:], []byte(tk.Value)) && tk.Value != "" {
		return splice(data, off, off+len(tk.Value), value), nil
	}
	// An empty value: the parser places it just after the colon.
	if _, isNull := v.(*ast.NullNode); isNull && off > 0 && data[off-1] == ':' {
		return splice(data, off, off, append([]byte(" "), value...)), nil
	}
	return nil, cannot("cannot locate its value")
}

// insertKeyLine adds "enabled: <value>" as a line of its own just above the
// first key of a block mapping, indented like that key.
func insertKeyLine(data []byte, lines []int, first *ast.MappingValueNode, value []byte, cannot func(string) error) ([]byte, error) {
	if first.Key == nil {
		return nil, cannot("cannot locate the task's first key")
	}
	tk := first.Key.GetToken()
	off, ok := byteOffset(data, lines, tk)
	if !ok {
		return nil, cannot("cannot locate the task's first key")
	}
	start := lines[tk.Position.Line-1]
	indent := data[start:off]
	if len(indent) == 0 || len(bytes.Trim(indent, " ")) != 0 {
		return nil, cannot("the task's keys do not start their lines")
	}
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	line := string(indent) + "enabled: " + string(value) + nl
	return splice(data, start, start, []byte(line)), nil
}

// lookupKey finds key among a mapping's own entries (not merged ones).
func lookupKey(n ast.Node, key string) (ast.Node, bool) {
	n = unwrapAnchor(n)
	var pairs []*ast.MappingValueNode
	switch m := n.(type) {
	case *ast.MappingNode:
		pairs = m.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{m}
	default:
		return nil, false
	}
	for _, p := range pairs {
		if p.Key == nil {
			continue
		}
		if s, ok := p.Key.(*ast.StringNode); ok && s.Value == key {
			return p.Value, true
		}
	}
	return nil, false
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

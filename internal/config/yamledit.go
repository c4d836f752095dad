package config

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// scopeEditor turns a scope edit into splices of the file's text. It uses
// goccy/go-yaml's syntax tree for the keys (where each is, which node kind
// its value is) and the file's lines for the extent of an entry: an entry
// runs from its key's line to the last line indented deeper than the key.
// Values are found by reading the text after the key's colon, not from
// token columns. Whatever the splices produce is read back and checked by
// checkReadBack, so a misjudged shape is an ErrCannotEdit, never a damaged
// file.
type scopeEditor struct {
	data  []byte
	lines []int // byte offset of each line's start
	path  string
	field string // names the edit in errors ("templates.x.model")
	cur   *node  // the same document as a value tree: current values
	step  int    // the file's indentation step, for new nested blocks
	edits []textEdit
	seq   int
}

// textEdit replaces data[from:to] with text. Inserts at one offset are
// joined deepest mapping first (a nested mapping's new keys come before its
// parent's).
type textEdit struct {
	from, to int
	text     string
	depth    int
	seq      int
}

// mapping is one YAML mapping being edited.
type mapping struct {
	path   string // "templates.x.harness_options", for errors
	pairs  []*ast.MappingValueNode
	flow   bool
	brace  int // flow: offset of its '{'
	indent int // block: column of its keys (0-based)
	start  int // block: where its first key's line starts (new keys of a scope go there)
	end    int // block: just past its last line (new scopes and sections go there)
	cur    *node
	depth  int
}

// kv is one entry of a mapping written in a given order.
type kv struct {
	key string
	val any
}

func newScopeEditor(data []byte, path, field string, cur *node) (*scopeEditor, error) {
	ed := &scopeEditor{data: data, lines: lineStarts(data), path: path, field: field, cur: cur, step: 2}
	ed.step = ed.detectStep()
	return ed, nil
}

func (ed *scopeEditor) cannot(why string) error {
	return fmt.Errorf("%s: %w (%s)", ed.field, ErrCannotEdit, why)
}

// detectStep is the indentation of the first indented key line, so new
// nested blocks look like the rest of the file.
func (ed *scopeEditor) detectStep() int {
	for i := range ed.lines {
		t := ed.lineText(i)
		n := leadingSpaces(t)
		if n > 0 && n < len(t) && t[n] != '#' && t[n] != '-' && n <= 8 {
			return n
		}
	}
	return 2
}

func (ed *scopeEditor) lineText(i int) string {
	end := len(ed.data)
	if i+1 < len(ed.lines) {
		end = ed.lines[i+1] - 1
	}
	return string(ed.data[ed.lines[i]:end])
}

// lineEnd is the offset just past line i's newline (or the end of data).
func (ed *scopeEditor) lineEnd(i int) int {
	if i+1 < len(ed.lines) {
		return ed.lines[i+1]
	}
	return len(ed.data)
}

func leadingSpaces(s string) int {
	n := 0
	for n < len(s) && s[n] == ' ' {
		n++
	}
	return n
}

func isBlank(s string) bool { return strings.TrimRight(s, " \t\r") == "" }

func isComment(s string) bool {
	return strings.HasPrefix(strings.TrimLeft(s, " \t"), "#")
}

// apply edits scope in the document and returns the new text.
func (ed *scopeEditor) apply(scope ScopePath, changes []FieldChange) ([]byte, error) {
	file, err := parseAST(ed.data, ed.path)
	if err != nil {
		return nil, err
	}
	var body ast.Node
	switch len(file.Docs) {
	case 0:
	case 1:
		body = file.Docs[0].Body
	default:
		return nil, ed.cannot("more than one YAML document")
	}
	root := &mapping{path: "", end: len(ed.data), cur: ed.cur}
	if body != nil {
		if root, err = ed.mappingOf(body, "", ed.cur, 0); err != nil {
			return nil, err
		}
		if root.flow {
			return nil, ed.cannot("the top level is a flow mapping {…}")
		}
	}
	fresh := freshScope(changes)
	edit := func(m *mapping) error { return ed.applyChanges(m, changes, false) }
	if scope.Name == "" {
		err = ed.editChild(root, scope.Section, edit, fresh)
	} else {
		err = ed.editChild(root, scope.Section, func(sec *mapping) error {
			return ed.editChild(sec, scope.Name, edit, fresh)
		}, []kv{{scope.Name, fresh}})
	}
	if err != nil {
		return nil, err
	}
	return ed.result()
}

// freshScope is the content of a scope written anew: its set keys, in the
// order asked.
func freshScope(changes []FieldChange) []kv {
	out := []kv{}
	for _, ch := range changes {
		if ch.Value != nil {
			out = append(out, kv{ch.Key, ch.Value})
		}
	}
	return out
}

// mappingOf describes the mapping n (a value in the syntax tree) for
// editing; owner is its path, cur its node in the value tree.
func (ed *scopeEditor) mappingOf(n ast.Node, owner string, cur *node, depth int) (*mapping, error) {
	m := &mapping{path: owner, cur: cur, depth: depth}
	switch x := unwrapAnchor(n).(type) {
	case *ast.MappingNode:
		m.pairs, m.flow = x.Values, x.IsFlowStyle
		if m.flow {
			off, ok := byteOffset(ed.data, ed.lines, x.Start)
			if !ok || ed.data[off] != '{' {
				return nil, ed.cannot("cannot find the { of " + orTop(owner))
			}
			m.brace = off
			return m, nil
		}
	case *ast.MappingValueNode:
		m.pairs = []*ast.MappingValueNode{x}
	default:
		return nil, ed.cannot(orTop(owner) + " is not a mapping")
	}
	if len(m.pairs) == 0 {
		return nil, ed.cannot(orTop(owner) + " is an empty mapping")
	}
	for i, p := range m.pairs {
		l, err := ed.locate(p, false)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			m.indent, m.start = l.indent, l.lineStart
		} else if l.indent != m.indent {
			return nil, ed.cannot("the keys of " + orTop(owner) + " are not indented alike")
		}
		m.end = max(m.end, l.end)
	}
	return m, nil
}

func orTop(path string) string {
	if path == "" {
		return "the top level"
	}
	return path
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// own is the entry of key written in m itself (not merged in with <<).
func (m *mapping) own(key string) *ast.MappingValueNode {
	for _, p := range m.pairs {
		if s, ok := p.Key.(*ast.StringNode); ok && s.Value == key {
			return p
		}
	}
	return nil
}

// current is key's value as the document reads it (merges applied).
func (m *mapping) current(key string) (val any, node *node, has bool) {
	if m.cur == nil || m.cur.Kind != mappingNode {
		return nil, nil, false
	}
	for _, e := range entries(m.cur, 0) {
		if e.key == key {
			v, err := genericValue(e.val)
			if err != nil {
				return nil, e.val, true // compared as different: rewritten
			}
			return canonRead(v), e.val, true
		}
	}
	return nil, nil, false
}

// editChild runs edit on the mapping under key in m; when there is none
// (or it is empty), it writes key with fresh as its mapping.
func (ed *scopeEditor) editChild(m *mapping, key string, edit func(*mapping) error, fresh []kv) error {
	path := join(m.path, key)
	_, curNode, has := m.current(key)
	p := m.own(key)
	if p == nil {
		if has {
			return ed.cannot(path + " comes from a mapping merged in with <<")
		}
		return ed.set(m, nil, key, fresh, true)
	}
	switch v := unwrapAnchor(p.Value).(type) {
	case *ast.AliasNode, *ast.TagNode:
		return ed.cannot(path + " is not a mapping written in place (an alias or a tag)")
	case nil, *ast.NullNode:
		if len(fresh) == 0 {
			return nil
		}
		return ed.set(m, p, key, fresh, true)
	case *ast.MappingNode:
		if len(v.Values) == 0 {
			if len(fresh) == 0 {
				return nil
			}
			return ed.set(m, p, key, fresh, true)
		}
	case *ast.MappingValueNode:
	default:
		return ed.cannot(path + " is not a mapping")
	}
	child, err := ed.mappingOf(p.Value, path, curNode, m.depth+1)
	if err != nil {
		return err
	}
	return edit(child)
}

// applyChanges sets and removes keys of m. A value equal to the current one
// is left as written; harness_options written as a block is edited key by
// key (nested), so unchanged options keep their lines and comments.
func (ed *scopeEditor) applyChanges(m *mapping, changes []FieldChange, nested bool) error {
	for _, ch := range changes {
		path := join(m.path, ch.Key)
		cur, curNode, has := m.current(ch.Key)
		p := m.own(ch.Key)
		if ch.Value == nil {
			if p == nil {
				if has {
					return ed.cannot(path + " comes from a mapping merged in with <<; change it there")
				}
				continue
			}
			if err := ed.remove(m, p); err != nil {
				return err
			}
			continue
		}
		if has && reflect.DeepEqual(cur, ch.Value) {
			continue
		}
		if !nested && ch.Key == "harness_options" && p != nil && isBlockMapping(p.Value) {
			child, err := ed.mappingOf(p.Value, path, curNode, m.depth+1)
			if err != nil {
				return err
			}
			if err := ed.applyChanges(child, optionChanges(child, ch.Value.(map[string]any)), true); err != nil {
				return err
			}
			continue
		}
		if err := ed.set(m, p, ch.Key, ch.Value, false); err != nil {
			return err
		}
	}
	return nil
}

func isBlockMapping(n ast.Node) bool {
	switch x := unwrapAnchor(n).(type) {
	case *ast.MappingNode:
		return !x.IsFlowStyle && len(x.Values) > 0
	case *ast.MappingValueNode:
		return true
	}
	return false
}

// optionChanges turns a whole new harness_options map into key changes:
// keys no longer there are removed, the others set (in sorted order).
func optionChanges(m *mapping, want map[string]any) []FieldChange {
	var out []FieldChange
	for _, p := range m.pairs {
		if s, ok := p.Key.(*ast.StringNode); ok {
			if _, keep := want[s.Value]; !keep {
				out = append(out, RemoveField(s.Value))
			}
		}
	}
	if m.cur != nil {
		for _, e := range entries(m.cur, 0) {
			if _, keep := want[e.key]; !keep && m.own(e.key) == nil {
				out = append(out, RemoveField(e.key)) // merged in: refused
			}
		}
	}
	for _, k := range sortedKeys(want) {
		out = append(out, SetField(k, want[k]))
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// keyLoc is where an entry is written.
type keyLoc struct {
	key       int // offset of the key
	line      int // line index of the key
	lineStart int
	indent    int // block: column of the key
	colon     int // offset just past the key's colon
	end       int // block: offset just past the entry's last line
}

// locate finds an entry's key, its colon and (in a block mapping) the
// extent of the entry.
func (ed *scopeEditor) locate(p *ast.MappingValueNode, flow bool) (keyLoc, error) {
	var l keyLoc
	if p.Key == nil {
		return l, ed.cannot("an entry without a key")
	}
	if _, explicit := p.Key.(*ast.MappingKeyNode); explicit {
		return l, ed.cannot("an explicit ? key")
	}
	tk := p.Key.GetToken()
	off, ok := byteOffset(ed.data, ed.lines, tk)
	if !ok {
		return l, ed.cannot("cannot locate a key")
	}
	l.key, l.line = off, tk.Position.Line-1
	l.lineStart = ed.lines[l.line]
	colon, ok := keyColon(ed.data, off)
	if !ok {
		return l, ed.cannot("cannot find the colon after a key")
	}
	l.colon = colon
	if flow {
		return l, nil
	}
	if strings.Trim(string(ed.data[l.lineStart:off]), " ") != "" {
		return l, ed.cannot("a key that does not start its line")
	}
	l.indent = off - l.lineStart
	l.end = ed.entryEnd(l.line, l.indent)
	return l, nil
}

// keyColon returns the offset just past the colon ending the key at off.
func keyColon(data []byte, off int) (int, bool) {
	i := off
	if i < len(data) && (data[i] == '"' || data[i] == '\'') {
		end, ok := quotedEnd(data, i)
		if !ok {
			return 0, false
		}
		i = end
		for i < len(data) && (data[i] == ' ' || data[i] == '\t') {
			i++
		}
		if i < len(data) && data[i] == ':' {
			return i + 1, true
		}
		return 0, false
	}
	for ; i < len(data) && data[i] != '\n'; i++ {
		if data[i] == ':' && (i+1 == len(data) || strings.ContainsRune(" \t\r\n,}]", rune(data[i+1]))) {
			return i + 1, true
		}
	}
	return 0, false
}

// quotedEnd returns the offset just past the quoted scalar starting at
// off, if it closes on the same line.
func quotedEnd(data []byte, off int) (int, bool) {
	q := data[off]
	for i := off + 1; i < len(data) && data[i] != '\n'; i++ {
		switch {
		case q == '"' && data[i] == '\\':
			i++
		case data[i] == q && q == '\'' && i+1 < len(data) && data[i+1] == '\'':
			i++
		case data[i] == q:
			return i + 1, true
		}
	}
	return 0, false
}

// entryEnd is the offset just past the last line of the entry whose key is
// on line at indent: the lines after it that are indented deeper (blank
// lines between them included), or at the same indent when they are items
// of a block sequence (`key:` then `- item`).
func (ed *scopeEditor) entryEnd(line, indent int) int {
	last := line
	for i := line + 1; i < len(ed.lines); i++ {
		t := ed.lineText(i)
		if isBlank(t) {
			continue
		}
		n := leadingSpaces(t)
		if n < indent || n == indent && !isSeqItem(t[n:]) {
			break
		}
		last = i
	}
	return ed.lineEnd(last)
}

func isSeqItem(s string) bool {
	s = strings.TrimRight(s, "\r")
	return s == "-" || strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "-\t")
}

// inlineValue finds a value written on the key's own line after the colon
// in a block mapping: [from, to) is the value's text, and rest says
// whether anything but a comment follows it. empty reports a value left
// empty (`key:` alone, maybe with a comment).
func (ed *scopeEditor) inlineValue(l keyLoc) (from, to int, empty, ok bool) {
	lineEnd := ed.lineEnd(l.line)
	if lineEnd > 0 && lineEnd <= len(ed.data) && lineEnd > l.lineStart && ed.data[lineEnd-1] == '\n' {
		lineEnd--
	}
	for i := l.line + 1; i < len(ed.lines) && ed.lines[i] < l.end; i++ {
		if t := ed.lineText(i); !isBlank(t) && !isComment(t) {
			return 0, 0, false, false // the value goes on past its line
		}
	}
	i := l.colon
	for i < lineEnd && (ed.data[i] == ' ' || ed.data[i] == '\t') {
		i++
	}
	rest := string(ed.data[i:lineEnd])
	if isBlank(rest) || strings.HasPrefix(rest, "#") {
		return l.colon, l.colon, true, true
	}
	end, ok := scalarEnd(ed.data, i, lineEnd, false)
	if !ok {
		return 0, 0, false, false
	}
	after := strings.TrimLeft(string(ed.data[end:lineEnd]), " \t")
	if !isBlank(after) && !strings.HasPrefix(after, "#") {
		return 0, 0, false, false
	}
	return i, end, false, true
}

// scalarEnd returns where the scalar starting at off ends before limit, if
// it is a quoted or plain scalar that ends on its line.
func scalarEnd(data []byte, off, limit int, flow bool) (int, bool) {
	if off >= limit {
		return 0, false
	}
	switch data[off] {
	case '"', '\'':
		return quotedEnd(data, off)
	case '|', '>', '&', '*', '!', '[', '{', '%', '@', '`':
		return 0, false
	}
	i := off
	for ; i < limit; i++ {
		c := data[i]
		if c == '#' && i > off && (data[i-1] == ' ' || data[i-1] == '\t') {
			break
		}
		if flow && (c == ',' || c == '}' || c == ']') {
			break
		}
	}
	for i > off && (data[i-1] == ' ' || data[i-1] == '\t' || data[i-1] == '\r') {
		i--
	}
	return i, i > off
}

func isScalar(n ast.Node) bool {
	switch n.(type) {
	case *ast.StringNode, *ast.BoolNode, *ast.IntegerNode, *ast.FloatNode, *ast.NullNode,
		*ast.InfinityNode, *ast.NanNode:
		return true
	}
	return false
}

// set writes key: value in m, replacing p's value when the entry exists. A
// new key is a line above m's first key (as SetTaskEnabled always added
// enabled:), or after m's last line when atEnd (a new scope or section).
func (ed *scopeEditor) set(m *mapping, p *ast.MappingValueNode, key string, value any, atEnd bool) error {
	path := join(m.path, key)
	if m.flow {
		return ed.setFlow(m, p, key, value)
	}
	inline, isInline := renderInline(value, false)
	if p == nil {
		var b strings.Builder
		renderEntry(&b, yamlScalar(key), value, m.indent, ed.step, "")
		at := m.start
		if atEnd || len(m.pairs) == 0 {
			at = m.end
		}
		ed.insert(at, b.String(), m.depth)
		return nil
	}
	l, err := ed.locate(p, false)
	if err != nil {
		return err
	}
	if isScalar(p.Value) || p.Value == nil {
		if from, to, empty, ok := ed.inlineValue(l); ok {
			switch {
			case isInline && empty:
				ed.replace(from, to, " "+inline)
				return nil
			case isInline:
				ed.replace(from, to, inline)
				return nil
			case empty: // a block under a key left empty: after its line
				var b strings.Builder
				b.WriteByte('\n')
				renderBlock(&b, value, l.indent+ed.step, ed.step)
				lineEnd := ed.lineEnd(l.line)
				if lineEnd > 0 && ed.data[lineEnd-1] == '\n' {
					lineEnd--
				}
				ed.replace(lineEnd, lineEnd, strings.TrimSuffix(b.String(), "\n"))
				return nil
			}
		}
	}
	// Rewrite the entry: key as written, the new value, and a comment that
	// stood alone after the colon.
	comment := ""
	afterColon := strings.TrimLeft(string(ed.data[l.colon:ed.trimmedLineEnd(l.line)]), " \t")
	if strings.HasPrefix(afterColon, "#") {
		comment = strings.TrimRight(afterColon, " \t\r")
	}
	if l.end <= l.lineStart {
		return ed.cannot("cannot find the extent of " + path)
	}
	var b strings.Builder
	renderEntry(&b, string(ed.data[l.key:l.colon-1]), value, l.indent, ed.step, comment)
	ed.replace(l.lineStart, l.end, b.String())
	return nil
}

func (ed *scopeEditor) trimmedLineEnd(line int) int {
	e := ed.lineEnd(line)
	if e > ed.lines[line] && ed.data[e-1] == '\n' {
		e--
	}
	return e
}

// setFlow writes key: value in a flow mapping {…}: a scalar written there
// is replaced, a new key goes first; anything else is edited by hand.
func (ed *scopeEditor) setFlow(m *mapping, p *ast.MappingValueNode, key string, value any) error {
	path := join(m.path, key)
	text, _ := renderInline(value, true)
	if p == nil {
		insert := yamlScalar(key) + ": " + text
		if len(m.pairs) > 0 {
			insert += ", "
		}
		ed.insert(m.brace+1, insert, m.depth)
		return nil
	}
	l, err := ed.locate(p, true)
	if err != nil {
		return err
	}
	i := l.colon
	for i < len(ed.data) && (ed.data[i] == ' ' || ed.data[i] == '\t') {
		i++
	}
	if isScalar(p.Value) {
		end, ok := scalarEnd(ed.data, i, len(ed.data), true)
		if ok {
			j := end
			for j < len(ed.data) && (ed.data[j] == ' ' || ed.data[j] == '\t') {
				j++
			}
			if j < len(ed.data) && (ed.data[j] == ',' || ed.data[j] == '}' || ed.data[j] == '\n') {
				ed.replace(i, end, text)
				return nil
			}
		}
	}
	return ed.cannot(path + " is inside a flow mapping {…}; write it as a block or edit it by hand")
}

// remove cuts p's entry (its lines) out of m.
func (ed *scopeEditor) remove(m *mapping, p *ast.MappingValueNode) error {
	if m.flow {
		key := ""
		if s, ok := p.Key.(*ast.StringNode); ok {
			key = s.Value
		}
		return ed.cannot(join(m.path, key) + " is inside a flow mapping {…}; write it as a block or edit it by hand")
	}
	l, err := ed.locate(p, false)
	if err != nil {
		return err
	}
	ed.replace(l.lineStart, l.end, "")
	return nil
}

func (ed *scopeEditor) replace(from, to int, text string) {
	ed.seq++
	ed.edits = append(ed.edits, textEdit{from: from, to: to, text: text, seq: ed.seq})
}

func (ed *scopeEditor) insert(at int, text string, depth int) {
	if at > 0 && ed.data[at-1] != '\n' && strings.HasSuffix(text, "\n") {
		text = "\n" + text // after a last line without its newline
	}
	ed.seq++
	ed.edits = append(ed.edits, textEdit{from: at, to: at, text: text, depth: depth, seq: ed.seq})
}

// result applies the edits, last first so offsets stay valid.
func (ed *scopeEditor) result() ([]byte, error) {
	edits := slices.Clone(ed.edits)
	sort.SliceStable(edits, func(i, j int) bool {
		a, b := edits[i], edits[j]
		if a.from != b.from {
			return a.from > b.from
		}
		if (a.to == a.from) != (b.to == b.from) {
			return a.to != a.from // at one offset: a removal, then the inserts
		}
		// Inserts at one offset: the one applied last lands first, so apply
		// the shallowest mapping's first and each mapping's in reverse.
		if a.depth != b.depth {
			return a.depth < b.depth
		}
		return a.seq > b.seq
	})
	out := ed.data
	limit := len(ed.data)
	for _, e := range edits {
		if e.from > e.to || e.to > limit {
			return nil, ed.cannot("two changes touch the same lines")
		}
		out = splice(out, e.from, e.to, []byte(e.text))
		limit = e.from
	}
	return out, nil
}

// renderEntry writes one block-mapping entry at indent.
func renderEntry(b *strings.Builder, key string, v any, indent, step int, comment string) {
	b.WriteString(strings.Repeat(" ", indent))
	b.WriteString(key)
	b.WriteByte(':')
	if text, ok := renderInline(v, false); ok {
		b.WriteByte(' ')
		b.WriteString(text)
		if comment != "" {
			b.WriteString(" " + comment)
		}
		b.WriteByte('\n')
		return
	}
	if comment != "" {
		b.WriteString(" " + comment)
	}
	b.WriteByte('\n')
	renderBlock(b, v, indent+step, step)
}

// renderBlock writes a mapping's entries as lines at indent.
func renderBlock(b *strings.Builder, v any, indent, step int) {
	for _, e := range orderedEntries(v) {
		renderEntry(b, yamlScalar(e.key), e.val, indent, step, "")
	}
}

func orderedEntries(v any) []kv {
	switch x := v.(type) {
	case []kv:
		return x
	case map[string]any:
		out := make([]kv, 0, len(x))
		for _, k := range sortedKeys(x) {
			out = append(out, kv{k, x[k]})
		}
		return out
	}
	return nil
}

// renderInline writes v on one line: scalars, lists as [a, b], an empty
// mapping as {}; in flow context (or nested in a list) mappings too. ok is
// false for a non-empty mapping in block context.
func renderInline(v any, flow bool) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "null", true
	case bool:
		return strconv.FormatBool(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case uint64:
		return strconv.FormatUint(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case string:
		return yamlScalar(x), true
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i], _ = renderInline(e, true)
		}
		return "[" + strings.Join(parts, ", ") + "]", true
	}
	entries := orderedEntries(v)
	if len(entries) == 0 {
		return "{}", true
	}
	if !flow {
		return "", false
	}
	parts := make([]string, len(entries))
	for i, e := range entries {
		text, _ := renderInline(e.val, true)
		parts[i] = yamlScalar(e.key) + ": " + text
	}
	return "{" + strings.Join(parts, ", ") + "}", true
}

package api

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// No success shape of the API has a top-level "error" key: the JSON rule
// reserves it for a failure's code, so a client (or a script reading --json)
// tells success from failure by it. The shapes are found in the source, so
// a new one is covered without being listed: every struct type of this
// package that no other one holds as a field (those, like Delivery inside
// Agent.deliveries[], are never an answer's top level). Error itself is the
// failure shape.
func TestNoSuccessShapeHasATopLevelErrorKey(t *testing.T) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	structs := map[string]*ast.StructType{}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					structs[ts.Name.Name] = st
				}
			}
			return true
		})
	}
	if len(structs) < 5 {
		t.Fatalf("found only %d struct types; the walk is broken", len(structs))
	}
	// keys lists the top-level JSON keys of a struct, following embedded
	// structs of this package the way encoding/json promotes their fields.
	var keys func(name string, st *ast.StructType) []string
	keys = func(name string, st *ast.StructType) []string {
		var out []string
		for _, field := range st.Fields.List {
			tag := ""
			if field.Tag != nil {
				tag = reflect.StructTag(strings.Trim(field.Tag.Value, "`")).Get("json")
			}
			key, _, _ := strings.Cut(tag, ",")
			if key == "-" {
				continue
			}
			if len(field.Names) == 0 { // embedded
				if id, ok := field.Type.(*ast.Ident); ok && key == "" && structs[id.Name] != nil {
					out = append(out, keys(id.Name, structs[id.Name])...)
					continue
				}
			}
			for _, n := range field.Names {
				if !n.IsExported() {
					continue
				}
				k := key
				if k == "" {
					k = n.Name
				}
				out = append(out, k)
			}
		}
		return out
	}
	// nested: struct types some field holds (T, *T, []T, map[K]T).
	nested := map[string]bool{}
	for _, st := range structs {
		for _, field := range st.Fields.List {
			if len(field.Names) == 0 {
				continue // embedded: its keys are the holder's, checked there
			}
			ast.Inspect(field.Type, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && structs[id.Name] != nil {
					nested[id.Name] = true
				}
				return true
			})
		}
	}
	checked := 0
	for name, st := range structs {
		if name == "Error" || nested[name] {
			continue
		}
		checked++
		for _, k := range keys(name, st) {
			// encoding/json matches keys case-insensitively on decode.
			if strings.EqualFold(k, "error") {
				t.Errorf("api.%s has a top-level JSON key %q; the key \"error\" is a failure's code (use last_error or the like)", name, k)
			}
		}
	}
	for _, must := range []string{"Agent", "SendResult", "Health", "Logs", "ReloadResult"} {
		if structs[must] == nil || nested[must] {
			t.Errorf("api.%s was not checked as a top-level shape", must)
		}
	}
	t.Logf("checked %d top-level shapes", checked)
}

// The reason a stopped agent is stopped travels as last_error.
func TestLastErrorOnTheWire(t *testing.T) {
	for _, v := range []any{
		Agent{Name: "a", State: StateStopped, CreatedAt: time.Unix(0, 0).UTC(), LastError: "claude not found"},
	} {
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var obj map[string]any
		if err := json.Unmarshal(data, &obj); err != nil {
			t.Fatal(err)
		}
		if _, ok := obj["error"]; ok {
			t.Errorf("%T: %s has \"error\"", v, data)
		}
		if s, _ := obj["last_error"].(string); s == "" {
			t.Errorf("%T: %s lacks last_error", v, data)
		}
	}
}

func TestCheckJSONTextRefusesWhatTheDecoderWouldChange(t *testing.T) {
	for _, bad := range []string{
		"{\"message\":\"a\xffb\"}",
		`{"message":"a\udcffb"}`,
		`{"message":"a\ud83db"}`,
		`{"message":"\ud83d\u0041"}`,
		`{"message":"end\ud83d"}`,
	} {
		err := CheckJSONText("body", []byte(bad))
		if !HasCode(err, CodeInvalidArgs) {
			t.Errorf("%q: got %v, want invalid_args", bad, err)
		}
		// Each of these is what encoding/json turns into U+FFFD unasked.
		var v struct{ Message string }
		if json.Unmarshal([]byte(bad), &v) == nil && !strings.ContainsRune(v.Message, utf8.RuneError) {
			t.Errorf("%q decodes to %q without a replacement: the case is wrong", bad, v.Message)
		}
	}
	for _, good := range []string{
		`{"message":"thumbs 👍🏽 café"}`,
		`{"message":"\ud83d\udc4d and \u00e9"}`,
		`{"message":"a\\udcff is text"}`,
		`{"message":"\\\\", "id":"x"}`,
		`{"message":"\ufffd is a real character"}`,
	} {
		if err := CheckJSONText("body", []byte(good)); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	if err := CheckText("message", "a\xffb"); !HasCode(err, CodeInvalidArgs) || !strings.Contains(err.Error(), "0xff at byte 1") {
		t.Errorf("CheckText: %v", err)
	}
}

func TestCheckMessageID(t *testing.T) {
	for _, ok := range []string{"a", "0b9c1f0e-7d43-4c3e-9a55-3f5b8e2c4d11", "job.42:try_1"} {
		if err := CheckMessageID(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a b", "ü", "x/y", strings.Repeat("a", MaxMessageIDLen+1), "a\x00"} {
		if err := CheckMessageID(bad); !HasCode(err, CodeInvalidArgs) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestDescribeMessage(t *testing.T) {
	long := strings.Repeat("é", FirstLineRunes+10)
	for _, c := range []struct{ in, from, first string }{
		{"hello\nworld", "", "hello"},
		{"  \n\t\n  second  \nthird", "", "second"},
		{MessagePrefix + "agent a] hi there\nmore", "agent a", "hi there"},
		{MessagePrefix + "task nightly] \nreport ready", "task nightly", "report ready"},
		{MessagePrefix + "no closing bracket", "", MessagePrefix + "no closing bracket"},
		{"", "", ""},
		{long, "", string([]rune(long)[:FirstLineRunes-1]) + "…"},
	} {
		from, first := DescribeMessage(c.in)
		if from != c.from || first != c.first {
			t.Errorf("DescribeMessage(%q) = %q, %q; want %q, %q", c.in, from, first, c.from, c.first)
		}
	}
}

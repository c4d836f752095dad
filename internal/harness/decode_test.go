package harness

import (
	"errors"
	"reflect"
	"testing"
)

var testSchema = []OptionField{
	{Key: "mode", Type: OptionEnum, EnumValues: []string{"on", "off", "auto"}},
	{Key: "flag", Type: OptionBool},
	{Key: "name", Type: OptionString},
	{Key: "tools", Type: OptionStringList},
	{Key: "notes", Type: OptionText},
	{Key: "perm", Type: OptionYAMLMap},
}

var testRejected = map[string]string{"approval": "no approvals here"}

func TestDecodeStrictCanonicalTypes(t *testing.T) {
	raw := map[string]any{
		"mode":  "auto",
		"flag":  false,
		"name":  "leo",
		"tools": []any{"Read", "Edit"},
		"notes": "line one\nline two",
		"perm":  map[string]any{"bash": map[any]any{"git *": "allow", uint64(1): "x"}, "list": []any{map[any]any{"a": "b"}}},
	}
	got, err := DecodeStrict(testSchema, testRejected, raw)
	if err != nil {
		t.Fatalf("DecodeStrict: %v", err)
	}
	want := Options{
		"mode":  "auto",
		"flag":  false,
		"name":  "leo",
		"tools": []string{"Read", "Edit"},
		"notes": "line one\nline two",
		"perm": map[string]any{
			"bash": map[string]any{"git *": "allow", "1": "x"},
			"list": []any{map[string]any{"a": "b"}},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded\n got %#v\nwant %#v", got, want)
	}
	if v, set := got.Bool("flag"); v || !set {
		t.Fatalf("tri-state false must stay set: value=%v set=%v", v, set)
	}
}

func TestDecodeStrictNullIsUnset(t *testing.T) {
	got, err := DecodeStrict(testSchema, nil, map[string]any{"flag": nil, "tools": nil})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("null values must be unset, got %#v", got)
	}
	if _, set := got.Bool("flag"); set {
		t.Fatal("flag: null reported as set")
	}
}

func TestDecodeStrictErrorTexts(t *testing.T) {
	cases := []struct {
		name string
		raw  map[string]any
		want string
	}{
		{"unknown key lists valid keys sorted", map[string]any{"foo": 1},
			`unknown option "foo" (valid: flag, mode, name, notes, perm, tools)`},
		{"rejected key gives its reason", map[string]any{"approval": "never"},
			`option "approval" is not supported: no approvals here`},
		{"list of strings given a string", map[string]any{"tools": "Read"},
			`option "tools": expected a list of strings, got string`},
		{"list with a non-string", map[string]any{"tools": []any{"Read", uint64(3)}},
			`option "tools": expected a list of strings, got integer at index 1`},
		{"bool given a string", map[string]any{"flag": "yes"},
			`option "flag": expected a boolean, got string`},
		{"string given a number", map[string]any{"name": 1.5},
			`option "name": expected a string, got number`},
		{"text given a list", map[string]any{"notes": []any{"a"}},
			`option "notes": expected a string, got list`},
		{"enum given a bool", map[string]any{"mode": true},
			`option "mode": expected a string, got boolean`},
		{"invalid enum lists its values in schema order", map[string]any{"mode": "x"},
			`option "mode": invalid value "x" (valid: on, off, auto)`},
		{"map given a list", map[string]any{"perm": []any{"a"}},
			`option "perm": expected a map, got list`},
		{"map given an integer", map[string]any{"perm": int64(2)},
			`option "perm": expected a map, got integer`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeStrict(testSchema, testRejected, c.raw)
			if err == nil {
				t.Fatalf("no error; decoded %#v", got)
			}
			if err.Error() != c.want {
				t.Fatalf("error\n got %s\nwant %s", err, c.want)
			}
			if got != nil {
				t.Fatalf("options returned with an error: %#v", got)
			}
		})
	}
}

func TestDecodeStrictCollectsEveryErrorSortedByKey(t *testing.T) {
	raw := map[string]any{
		"zeta":     true,
		"mode":     "bogus",
		"approval": "never",
		"flag":     "no",
		"name":     "fine",
	}
	_, err := DecodeStrict(testSchema, testRejected, raw)
	want := `option "approval" is not supported: no approvals here; ` +
		`option "flag": expected a boolean, got string; ` +
		`option "mode": invalid value "bogus" (valid: on, off, auto); ` +
		`unknown option "zeta" (valid: flag, mode, name, notes, perm, tools)`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n got %v\nwant %s", err, want)
	}
	var list OptionErrors
	if !errors.As(err, &list) {
		t.Fatalf("error is %T, not OptionErrors", err)
	}
	var keys []string
	for _, e := range list {
		keys = append(keys, e.Key)
	}
	if !reflect.DeepEqual(keys, []string{"approval", "flag", "mode", "zeta"}) {
		t.Fatalf("keys %v", keys)
	}
	var one *OptionError
	if !errors.As(err, &one) || one.Key != "approval" {
		t.Fatalf("errors.As(*OptionError) = %v", one)
	}
}

func TestDecodeStrictEmptyMap(t *testing.T) {
	for _, raw := range []map[string]any{nil, {}} {
		got, err := DecodeStrict(testSchema, testRejected, raw)
		if err != nil || got == nil || len(got) != 0 {
			t.Fatalf("DecodeStrict(%v) = %#v, %v", raw, got, err)
		}
	}
}

func TestDecodeStrictDoesNotAliasInput(t *testing.T) {
	tools := []string{"Read"}
	got, err := DecodeStrict(testSchema, nil, map[string]any{"tools": tools})
	if err != nil {
		t.Fatal(err)
	}
	tools[0] = "changed"
	if got.Strings("tools")[0] != "Read" {
		t.Fatal("decoded list aliases the caller's slice")
	}
}

// BenchmarkDecodeStrict: config decodes one options map per scope, so a
// 2,000-scope leo.yaml pays this 2,000 times on every validate.
func BenchmarkDecodeStrict(b *testing.B) {
	raw := map[string]any{
		"mode":  "auto",
		"flag":  true,
		"name":  "leo",
		"tools": []any{"Read", "Edit", "Bash"},
		"perm":  map[string]any{"bash": "ask"},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeStrict(testSchema, testRejected, raw); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "µs/decode")
}

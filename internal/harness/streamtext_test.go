package harness

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClipTextCutsAtARuneBoundary(t *testing.T) {
	if got := ClipText("short", 10); got != "short" {
		t.Errorf("ClipText kept %q", got)
	}
	got := ClipText(strings.Repeat("é", 10), 8) // é is 2 bytes, … is 3
	if got != "éé…" || !utf8.ValidString(got) {
		t.Errorf("ClipText = %q", got)
	}
	if got := ClipText("abcdef", 2); got != "" {
		t.Errorf("ClipText below the ellipsis = %q", got)
	}
	s := ""
	for range 1000 {
		s = AppendClipped(s, "✓✓✓", 100)
	}
	if len(s) > 100 || !utf8.ValidString(s) || !strings.HasSuffix(s, "…") {
		t.Errorf("AppendClipped grew to %d bytes: %q", len(s), s)
	}
}

func TestWarningsAreBounded(t *testing.T) {
	var w Warnings
	if w.List() != nil {
		t.Fatal("no warnings should be nil")
	}
	w.Add("")
	for i := range 40 {
		w.Add(strings.Repeat("x", i*100)) // i=0 is empty: ignored
	}
	l := w.List()
	if len(l) != MaxWarnings || l[MaxWarnings-1] != "(24 more warnings)" || len(l[14]) > MaxWarningBytes {
		t.Errorf("List = %d entries, last %q", len(l), l[len(l)-1])
	}
}

func TestLenientFields(t *testing.T) {
	var v struct {
		C []Count  `json:"c"`
		N []Number `json:"n"`
		T []Text   `json:"t"`
		F []Flag   `json:"f"`
	}
	in := `{"c":[1,"2",3.9,-4,null,{},"x",1e300],"n":[0.5,"1.5",null,"x"],"t":["plain","esc\"aped\u00e9",null,{"a":1},7,"bad \ud800"],"f":[true,"true",1,false]}`
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if got := v.C; len(got) != 8 || got[0] != 1 || got[1] != 2 || got[2] != 3 || got[3] != 0 || got[4] != 0 || got[5] != 0 || got[6] != 0 || got[7] != 0 {
		t.Errorf("Count: %v", got)
	}
	if got := v.N; got[0] != (Number{0.5, true}) || got[1] != (Number{1.5, true}) || got[2].Set || got[3].Set {
		t.Errorf("Number: %v", got)
	}
	if got := v.T; got[0] != "plain" || got[1] != `esc"apedé` || got[2] != "" || got[3] != `{"a":1}` || got[4] != "7" || !utf8.ValidString(string(got[5])) {
		t.Errorf("Text: %q", got)
	}
	if got := v.F; !got[0] || got[1] || got[2] || got[3] {
		t.Errorf("Flag: %v", got)
	}
}

func TestMessageText(t *testing.T) {
	for in, want := range map[string]string{
		``:                           "",
		`"plain"`:                    "plain",
		`{"message":"m","type":"t"}`: "m",
		`{"name":"APIError","data":{"message":"d"}}`: "d",
		`{"name":"UnknownError"}`:                    "UnknownError",
		`{"type":"overloaded_error"}`:                "overloaded_error",
		`["a",{"message":"b"},3,["nested"]]`:         "a; b",
		`42`:                                         "",
		`{"message":{"deep":1}}`:                     `{"deep":1}`,
	} {
		if got := MessageText(json.RawMessage(in)); got != want {
			t.Errorf("MessageText(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestJSONObjectLine(t *testing.T) {
	for in, want := range map[string]bool{`{"a":1}`: true, " \t{": true, "": false, "[1]": false, "text {": false} {
		if got := JSONObjectLine([]byte(in)); got != want {
			t.Errorf("JSONObjectLine(%q) = %v", in, got)
		}
	}
}

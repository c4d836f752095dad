package opencode

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// decodePart reads what encoding/json reads, skipping the values leo does
// not keep: escapes and quotes inside strings, nesting, odd spacing; and
// what it cannot walk it leaves to encoding/json.
func TestDecodePartIsEncodingJSON(t *testing.T) {
	for _, data := range []string{
		`{"type":"text","text":"say \"hi\" \\ there\\\\","synthetic":false}`,
		`{"type":"tool","tool":"bash","callID":"c","state":{"status":"completed","input":{"command":"echo \"}\" ]","n":[1,{"a":"\\\""}]},"output":"` + strings.Repeat(`line \\ \" {[ `, 1000) + `","metadata":{"exit":0}}}`,
		` { "type" : "text" , "text" : "a\nb" , "time" : { "start" : 1 } } `,
		`{"text":"\u00e9t\u00e9","type":"text","synthetic":true}`,
		`{"type":"tool","state":{"input":null}}`,
		`{}`,
		`{"type":"text","text":"unterminated}`,
		`{"type":"text",}`,
		`["not","an","object"]`,
		`{"ty\u0070e":"text","text":"an escaped key"}`,
		`{"type":"text","text":"x"} trailing`,
		`{"Type":"text","TEXT":"upper case keys"}`,
	} {
		var want, got partData
		werr := json.Unmarshal([]byte(data), &want)
		gerr := decodePart(data, &got)
		if (werr == nil) != (gerr == nil) || (werr == nil && !reflect.DeepEqual(compactPart(got), compactPart(want))) {
			t.Errorf("%.80s:\n got %+v, %v\nwant %+v, %v", data, got, gerr, want, werr)
		}
	}
}

// compactPart is p with its tool input compacted (spacing aside, the same).
func compactPart(p partData) partData {
	p.State.Input = json.RawMessage(compactInput(p.State.Input))
	return p
}

package opencode

import (
	"fmt"
	"strings"
)

const (
	bigSession = "ses_big000000000000000000000"
	bigDir     = "/tmp/leo-big/ws"
	bigT0      = int64(1796172377502)
)

// bigConversation is a conversation as opencode 1.18.33 stores a turn
// with a tool (the capture's LEO-rec-002: a user message; an assistant
// step that ran bash, finish tool-calls; one that answered, finish stop),
// each tool's output outputBytes of text: turns of them make the store
// large, as a session that read big files does. The last turn runs: its
// answer has begun and not completed.
func bigConversation(turns, outputBytes int) []builtMessage {
	line := "drwxr-xr-x  2 leo leo  4096 Dec  2 18:17 some/directory/listed/by/the/tool\n"
	output := strings.Repeat(line, outputBytes/len(line)+1)[:outputBytes]
	var msgs []builtMessage
	at := bigT0
	for i := range turns {
		uid := fmt.Sprintf("msg_%05du", i)
		a1 := fmt.Sprintf("msg_%05da", i)
		a2 := fmt.Sprintf("msg_%05db", i)
		tokens := `{"total":1513,"input":1200,"output":13,"reasoning":0,"cache":{"write":100,"read":200}}`
		msgs = append(msgs,
			builtMessage{id: uid, at: at, data: fmt.Sprintf(`{"role":"user","time":{"created":%d},"agent":"build"}`, at),
				parts: []string{fmt.Sprintf(`{"type":"text","text":"list the tree, pass %d\nand tell me\n  what is there"}`, i)}},
			builtMessage{id: a1, at: at + 10, data: fmt.Sprintf(`{"parentID":%q,"role":"assistant","cost":0.0125,"tokens":%s,"time":{"created":%d,"completed":%d},"finish":"tool-calls"}`, uid, tokens, at+10, at+20),
				parts: []string{
					`{"type":"step-start"}`,
					fmt.Sprintf(`{"type":"tool","tool":"bash","callID":"call_%d","state":{"status":"completed","input":{"command":"ls -lR /","description":"list pass %d"},"output":%q,"title":"ls -lR /"}}`, i, i, output),
					`{"reason":"tool-calls","type":"step-finish","tokens":` + tokens + `,"cost":0.0125}`,
				}},
		)
		done := fmt.Sprintf(`"completed":%d},"finish":"stop"`, at+30)
		reply := fmt.Sprintf(`{"type":"text","text":"listed pass %d"}`, i)
		if i == turns-1 {
			done = `"completed":0            }` // running; as long as a completion, to be rewritten in place
			reply = fmt.Sprintf(`{"type":"text","text":"listing pass %d"}`, i)
		}
		msgs = append(msgs, builtMessage{id: a2, at: at + 20, data: fmt.Sprintf(`{"parentID":%q,"role":"assistant","cost":0.0125,"tokens":%s,"time":{"created":%d,%s}`, uid, tokens, at+20, done),
			parts: []string{`{"type":"step-start"}`, reply, `{"reason":"stop","type":"step-finish","tokens":` + tokens + `,"cost":0.0125}`}})
		at += 1000
	}
	return msgs
}

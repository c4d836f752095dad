package opencode

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// pluginDriver runs leo's plugin module under node as opencode does (its
// default export's event hook, called with each event in turn) against a
// fake client, with a command that holds every payload until the file
// "go" exists, then appends it as one line to "out": the hook must have
// returned for every event by then (it never waits for its command). It
// prints the lines once want of them came, and the session ids fetched.
const pluginDriver = `
import { LeoTurnEnd } from "./plugin.mjs";
import fs from "node:fs";
const [dir, want] = [process.argv[2], Number(process.argv[3])];
const fetched = [];
const client = { session: { messages: async ({ path }) => {
  fetched.push(path.id);
  if (path.id === "ses_broken") throw new Error("no");
  if (path.id === "ses_hung") return new Promise(() => {});
  return { data: [
    { info: { id: "m0", role: "user" }, parts: [{ type: "text", text: "old" }] },
    { info: { id: "m1", role: "user" }, parts: [{ type: "text", text: "do it" }, { type: "file", url: "data:..." }] },
    { info: { id: "m2", role: "assistant", parentID: "m1" }, parts: [{ type: "tool", state: { output: "big" } }, { type: "text", text: "done" }] },
  ] };
} } };
const hold = "const fs=require('fs');const [d]=process.argv.slice(1);const s=fs.readFileSync(0,'utf8');" +
  "const t=setInterval(()=>{if(fs.existsSync(d+'/go')){clearInterval(t);fs.appendFileSync(d+'/out',s+'\\n');}},20);";
const hooks = await LeoTurnEnd({ client }, { command: [process.execPath, "-e", hold, dir] });
const events = JSON.parse(fs.readFileSync(dir + "/events.json", "utf8"));
for (const event of events) await hooks.event({ event });
await hooks.event({ event: null });
await hooks.event({});
fs.writeFileSync(dir + "/go", "");
const deadline = Date.now() + 30000;
let lines = [];
while (Date.now() < deadline) {
  lines = fs.existsSync(dir + "/out") ? fs.readFileSync(dir + "/out", "utf8").split("\n").filter(Boolean) : [];
  if (lines.length >= want) break;
  await new Promise((r) => setTimeout(r, 20));
}
console.log(JSON.stringify({ payloads: lines.map((l) => JSON.parse(l)), fetched }));
process.exit(0);
`

// TestPluginSendsWhatAttentionNeeds runs turnend_plugin.js under node: each
// event attention needs reaches the command once, in order; opencode's
// repeats (busy at every step, idle twice after an error) and subagents'
// sessions are left out but for their prompts; a prompt carries no diff;
// only a turn's end fetches messages, and a fetch that fails or never
// answers holds nothing up.
func TestPluginSendsWhatAttentionNeeds(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH: the plugin's own test needs it (opencode runs it under bun)")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plugin.mjs"), turnEndPlugin, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "driver.mjs"), []byte(pluginDriver), 0o600); err != nil {
		t.Fatal(err)
	}
	st := func(id, typ string) map[string]any {
		return map[string]any{"type": "session.status", "properties": map[string]any{"sessionID": id, "status": map[string]any{"type": typ}}}
	}
	ev := func(typ string, props map[string]any) map[string]any {
		return map[string]any{"type": typ, "properties": props}
	}
	events := []map[string]any{
		ev("session.created", map[string]any{"info": map[string]any{"id": "ses_child", "parentID": "ses_root"}}),
		st("ses_root", "busy"), st("ses_root", "busy"), st("ses_child", "busy"), st("ses_root", "busy"),
		ev("message.part.updated", map[string]any{"part": map[string]any{"type": "text"}}),
		ev("permission.asked", map[string]any{"id": "per_1", "sessionID": "ses_child", "permission": "edit", "patterns": []any{"a.go"},
			"always": []any{"*"}, "metadata": map[string]any{"filepath": "/ws/a.go", "diff": strings.Repeat("+x\n", 10000)},
			"tool": map[string]any{"messageID": "m", "callID": "c"}}),
		ev("permission.replied", map[string]any{"sessionID": "ses_child", "requestID": "per_1", "reply": "once"}),
		{"type": "session.status", "properties": map[string]any{"sessionID": "ses_root", "status": map[string]any{
			"type": "retry", "attempt": 1, "message": "Too Many Requests", "next": 1796221233064,
			"action": map[string]any{"reason": "free_tier_limit", "title": "t", "message": "m", "link": "https://x"}}}},
		st("ses_root", "busy"),
		ev("session.idle", map[string]any{"sessionID": "ses_child"}),
		ev("session.error", map[string]any{"sessionID": "ses_root", "error": map[string]any{"name": "APIError", "data": map[string]any{"message": "boom"}}}),
		st("ses_root", "idle"),
		ev("session.idle", map[string]any{"sessionID": "ses_root"}),
		ev("session.idle", map[string]any{"sessionID": "ses_root"}),
		ev("question.asked", map[string]any{"id": "que_1", "sessionID": "ses_root", "questions": []any{map[string]any{
			"question": "Which?", "header": "H", "options": []any{map[string]any{"label": "a", "description": "the a"}}}}}),
		ev("question.rejected", map[string]any{"sessionID": "ses_root", "requestID": "que_1"}),
		ev("session.idle", map[string]any{"sessionID": "ses_broken"}),
		ev("session.idle", map[string]any{"sessionID": "ses_hung"}),
		ev("session.idle", map[string]any{"sessionID": "ses_root"}),
	}
	data, _ := json.Marshal(events)
	if err := os.WriteFile(filepath.Join(dir, "events.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	wantTypes := []string{
		"session.status busy", "permission.asked", "permission.replied", "session.status retry", "session.status busy",
		"session.error", "session.idle", "question.asked", "question.rejected", "session.idle", "session.idle", "session.idle",
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "driver.mjs"), dir, strconv.Itoa(len(wantTypes)))
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var res struct {
		Payloads []struct {
			Type       string          `json:"type"`
			Properties json.RawMessage `json:"properties"`
			Messages   []struct {
				Info  map[string]any   `json:"info"`
				Parts []map[string]any `json:"parts"`
			} `json:"messages"`
			Time int64 `json:"time"`
		} `json:"payloads"`
		Fetched []string `json:"fetched"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var got []string
	for _, p := range res.Payloads {
		var props struct {
			Status struct{ Type string } `json:"status"`
		}
		_ = json.Unmarshal(p.Properties, &props)
		got = append(got, strings.TrimSpace(p.Type+" "+props.Status.Type))
		if p.Time < 1700000000000 {
			t.Errorf("%s: time %d", p.Type, p.Time)
		}
	}
	if !reflect.DeepEqual(got, wantTypes) {
		t.Fatalf("sent %q\nwant %q", got, wantTypes)
	}
	p := res.Payloads
	if s := string(p[1].Properties); strings.Contains(s, "diff") || strings.Contains(s, "+x") || !strings.Contains(s, `"filepath":"/ws/a.go"`) || len(s) > 1000 {
		t.Errorf("permission.asked carries %s", s)
	}
	if s := string(p[3].Properties); strings.Contains(s, "link") || !strings.Contains(s, `"next":1796221233064`) || !strings.Contains(s, `"reason":"free_tier_limit"`) {
		t.Errorf("retry carries %s", s)
	}
	if s := string(p[7].Properties); strings.Contains(s, "the a") || !strings.Contains(s, `"label":"a"`) || !strings.Contains(s, `"custom":true`) {
		t.Errorf("question.asked carries %s", s)
	}
	// The turn's end: the last user message and after, text parts only.
	for _, i := range []int{5, 6} {
		m := p[i].Messages
		if len(m) != 2 || m[0].Info["role"] != "user" || len(m[0].Parts) != 1 || m[0].Parts[0]["text"] != "do it" ||
			len(m[1].Parts) != 1 || m[1].Parts[0]["text"] != "done" {
			t.Errorf("%s messages %+v", p[i].Type, m)
		}
	}
	if len(p[9].Messages) != 0 || len(p[10].Messages) != 0 {
		t.Errorf("a failed or hung fetch gave messages: %+v %+v", p[9].Messages, p[10].Messages)
	}
	if want := []string{"ses_root", "ses_root", "ses_broken", "ses_hung", "ses_root"}; !reflect.DeepEqual(res.Fetched, want) {
		t.Errorf("fetched %v, want %v (only turns' ends)", res.Fetched, want)
	}
	// What it sent reads as the signals attention needs.
	for _, pl := range res.Payloads {
		b, _ := json.Marshal(pl)
		if _, err := (Opencode{}).ParseSignal(b); err != nil {
			t.Errorf("%s: %v", pl.Type, err)
		}
	}
}

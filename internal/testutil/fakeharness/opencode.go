package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

type opencodeStore struct{ id string }

func (s *opencodeStore) submit(msg string) {
	first := s.id == ""
	s.id = opencodeTouch(s.id, cwd(), msg)
	if first {
		logEvent(map[string]any{"event": "session", "session_id": s.id})
	}
}

func (s *opencodeStore) reply(string) { opencodeTouch(s.id, cwd(), "") }

func runOpencode(args []string) int {
	p := parseArgs(args, opencodeFlags)
	pos := p.pos
	if len(pos) > 0 && pos[0] == "run" {
		return opencodeRun(p, pos[1:])
	}
	if len(pos) >= 2 && pos[0] == "session" && pos[1] == "list" {
		return opencodeSessionList(p)
	}
	if len(pos) > 0 && pos[0] != "" {
		// `opencode [project]`: the positional is the directory to open.
		if err := os.Chdir(pos[0]); err != nil {
			return fail(1, "Error: %v", err)
		}
	}
	st := &opencodeStore{}
	resumed := false
	if p.has("session") || p.has("continue") {
		if code, ok := exitOnResume(); ok {
			return code
		}
		if id := p.get("session"); id != "" {
			if _, ok := opencodeFind(id); !ok {
				return fail(1, "Error: session not found: %s", id)
			}
			st.id = id
		} else if list := opencodeList(); len(list) > 0 {
			st.id = list[0].ID
		}
		resumed = st.id != ""
	}
	model := p.getOr("model", "fake/model")
	logEvent(map[string]any{"event": "start", "session_id": st.id, "resumed": resumed, "cwd": cwd()})
	return newTUI(roleOpencode, model, st).run()
}

func opencodeSessionList(p parsedArgs) int {
	list := opencodeList()
	if n, err := strconv.Atoi(p.get("max-count")); err == nil && n >= 0 && n < len(list) {
		list = list[:n]
	}
	if p.get("format") == "json" {
		b, _ := json.MarshalIndent(list, "", "  ")
		fmt.Println(string(b))
		return 0
	}
	for _, s := range list {
		fmt.Printf("%s  %s  %s\n", s.ID, s.Title, time.UnixMilli(s.Updated).Format(time.RFC3339))
	}
	return 0
}

// opencodeRun is `opencode run --format json [--dir D] [-m M] [-s ID] MSG`.
func opencodeRun(p parsedArgs, pos []string) int {
	if d := p.get("dir"); d != "" {
		if err := os.Chdir(d); err != nil {
			return fail(1, "Error: %v", err)
		}
	}
	prompt := strings.Join(pos, " ")
	if prompt == "" {
		b, _ := io.ReadAll(os.Stdin)
		prompt = strings.TrimSpace(string(b))
	}
	if prompt == "" {
		return fail(1, "Error: You must provide a message or a command")
	}
	id := p.get("session")
	if id != "" {
		if code, ok := exitOnResume(); ok {
			return code
		}
		if _, ok := opencodeFind(id); !ok {
			return fail(1, "Error: session not found: %s", id)
		}
	}
	id = opencodeTouch(id, cwd(), prompt)
	jsonOut := p.get("format") == "json"
	out := json.NewEncoder(os.Stdout)
	out.SetEscapeHTML(false)
	ms := func() int64 { return time.Now().UnixMilli() }
	emit := func(kind string, part map[string]any) {
		if !jsonOut {
			return
		}
		ev := map[string]any{"type": kind, "timestamp": ms(), "sessionID": id}
		if part != nil {
			part["sessionID"] = id
			part["messageID"] = "msg_fake1"
			ev["part"] = part
		}
		_ = out.Encode(ev)
	}
	sc := scenario()
	if sc == "banner_noise" {
		fmt.Println("opencode (fake) warming up — not json")
	}
	emit("step_start", map[string]any{"id": "prt_1", "type": "step-start", "snapshot": "4b825dc"})
	if sc == "hang" {
		hangForever()
	}
	start := ms()
	time.Sleep(turnDuration())
	end := func(code int) int {
		logEvent(map[string]any{"event": "exit", "code": code, "scenario": sc})
		return code
	}
	errorEvent := func(msg string) {
		if !jsonOut {
			fmt.Fprintln(os.Stderr, "Error: "+msg)
			return
		}
		_ = out.Encode(map[string]any{"type": "error", "timestamp": ms(), "sessionID": id,
			"error": map[string]any{"name": "APIError", "data": map[string]any{"message": msg}}})
	}
	switch sc {
	case "turn_failed":
		errorEvent("provider returned 500 (fake)")
		return end(1)
	case "not_logged_in":
		errorEvent("No API key found for provider fake (not logged in)")
		return end(1)
	case "stream_error_exit0":
		errorEvent("stream error (fake)")
		return end(0)
	case "error_as_success":
		emit("text", map[string]any{"id": "prt_2", "type": "text", "text": "Error: provider returned 500 (fake)", "time": map[string]any{"start": start, "end": ms()}})
		emit("step_finish", map[string]any{"id": "prt_3", "type": "step-finish", "reason": "stop", "cost": 0, "tokens": map[string]any{"input": 0, "output": 0, "reasoning": 0, "cache": map[string]any{"read": 0, "write": 0}}})
		return end(0)
	}
	reply := "echo: " + prompt
	logLine(map[string]any{"message": prompt, "pid": os.Getpid()})
	if sc == "banner_noise" {
		emit("fake_unknown", map[string]any{"id": "prt_x", "type": "mystery"})
	}
	emit("text", map[string]any{"id": "prt_2", "type": "text", "text": reply, "time": map[string]any{"start": start, "end": ms()}})
	emit("step_finish", map[string]any{"id": "prt_3", "type": "step-finish", "reason": "stop", "cost": 0.0008, "tokens": map[string]any{"input": 1200, "output": 20, "reasoning": 0, "cache": map[string]any{"read": 0, "write": 0}}})
	opencodeTouch(id, cwd(), "")
	if !jsonOut {
		fmt.Println(reply)
	}
	return end(0)
}
